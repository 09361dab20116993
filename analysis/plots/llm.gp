# llm.gp — LLM services over time: time to first token and time per output token (p50 thin,
# p99 thick, targets dashed) and KV-cache occupancy, one colour per service of every run.
# data: one block per series (time_h ttft_p50 ttft_p99 tpot_p50 tpot_p99 kv_pct tokens_s).
# Extra: series (names), ttft_slos, tpot_slos (ms per series, -1: none), maxh.
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
n = words(series)
tslo(i) = real(word(ttft_slos, i))
pslo(i) = real(word(tpot_slos, i))
set multiplot layout 3,1 title "LLM serving over time\n".subtitle
set xrange [0:maxh]
if (maxh > 48) set xtics 12; else set xtics 6
set ylabel "TTFT (ms, log)"
set logscale y
set format x ""
plot for [i=1:n] data index (i-1) using 1:3 with lines lw 2 lc rgb col(i) title word(series, i).' p99', \
     for [i=1:n] data index (i-1) using 1:2 with lines lw 1 lc rgb col(i) notitle, \
     for [i=1:n] (tslo(i) > 0 ? tslo(i) : NaN) with lines dt 2 lw 1.5 lc rgb "#000000" \
         title (tslo(i) > 0 ? sprintf("TTFT target %g ms", tslo(i)) : "")
set ylabel "TPOT (ms)"
unset logscale y
plot for [i=1:n] data index (i-1) using 1:5 with lines lw 2 lc rgb col(i) title word(series, i).' p99', \
     for [i=1:n] data index (i-1) using 1:4 with lines lw 1 lc rgb col(i) notitle, \
     for [i=1:n] (pslo(i) > 0 ? pslo(i) : NaN) with lines dt 2 lw 1.5 lc rgb "#000000" \
         title (pslo(i) > 0 ? sprintf("TPOT target %g ms", pslo(i)) : "")
set ylabel "KV cache used (%)"
set format x "%g"
set xlabel "simulated time (h)"
set yrange [0:100]
plot for [i=1:n] data index (i-1) using 1:6 with lines lw 2 lc rgb col(i) title word(series, i)
unset multiplot
