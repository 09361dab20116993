# llm.gp — LLM services over time: time to first token and time per output token (p50 thin,
# p99 thick, targets dashed) and KV-cache occupancy, one colour per service of every run.
# data: one block per series (time_h ttft_p50 ttft_p99 tpot_p50 tpot_p99 kv_pct tokens_s).
# Extra: series (names), ttft_slos, tpot_slos (ms per series, -1: none), maxh, npts (the
# fewest samples of a series: one is drawn as points), tlo thi and plo phi (smallest and
# largest TTFT and TPOT with their targets, NaN when none: that panel on 1..1000 ms with a
# note; a single value v on v/2..2v).
if (!exists("npts")) npts = 2
if (!exists("tlo")) tlo = 1
if (!exists("thi")) thi = 2
if (!exists("plo")) plo = 1
if (!exists("phi")) phi = 2
# The y range of a panel of values in lo..hi (see above).
nodata = "set label 1 'no request served in these runs' at graph 0.5, 0.5 center front"
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
n = words(series)
tslo(i) = real(word(ttft_slos, i))
pslo(i) = real(word(tpot_slos, i))
set multiplot layout 3,1 title "LLM serving over time\n".subtitle
if (maxh > 0) set xrange [0:maxh]; else set xrange [0:1]
if (npts < 2) set style data linespoints; else set style data lines
if (maxh > 48) set xtics 12; else set xtics 6
if (maxh < 12) set xtics autofreq
set ylabel "TTFT (ms, log)"
set logscale y
set format x ""
if (!(thi > 0)) {
    set yrange [1:1000]
    eval nodata
} else {
    if (!(thi > tlo)) { set yrange [tlo/2:thi*2] }
}
plot for [i=1:n] data index (i-1) using 1:3 lw 2 lc rgb col(i) title word(series, i).' p99', \
     for [i=1:n] data index (i-1) using 1:2 lw 1 lc rgb col(i) notitle, \
     for [i=1:n] (tslo(i) > 0 ? tslo(i) : NaN) with lines dt 2 lw 1.5 lc rgb "#000000" \
         title (tslo(i) > 0 ? sprintf("TTFT target %g ms", tslo(i)) : "")
set ylabel "TPOT (ms)"
unset logscale y
unset label 1
set autoscale y
if (!(phi > 0)) {
    set yrange [0:100]
    eval nodata
} else {
    if (!(phi > plo)) { set yrange [plo/2:phi*2] }
}
plot for [i=1:n] data index (i-1) using 1:5 lw 2 lc rgb col(i) title word(series, i).' p99', \
     for [i=1:n] data index (i-1) using 1:4 lw 1 lc rgb col(i) notitle, \
     for [i=1:n] (pslo(i) > 0 ? pslo(i) : NaN) with lines dt 2 lw 1.5 lc rgb "#000000" \
         title (pslo(i) > 0 ? sprintf("TPOT target %g ms", pslo(i)) : "")
set ylabel "KV cache used (%)"
set format x "%g"
set xlabel "simulated time (h)"
unset label 1
set yrange [0:100]
plot for [i=1:n] data index (i-1) using 1:6 lw 2 lc rgb col(i) title word(series, i)
unset multiplot
