# p99.gp — p99 latency per interval of every run's services on one chart (log
# axis: the tail shows), with each service's SLO target dashed.
# data: one block per series (time_h p99_ms). Extra: series (names), slos
# (SLO ms per series, -1: none or the same as an earlier series'), maxh.
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "p99 latency over time, with the SLO targets\n".subtitle
set xlabel "simulated time (h)"
set ylabel "p99 latency (ms, log scale)"
set logscale y
set xrange [0:maxh]
if (maxh > 48) set xtics 12; else set xtics 6
n = words(series)
slo(i) = real(word(slos, i))
plot for [i=1:n] data index (i-1) using 1:2 with lines lw 2 lc rgb col(i) \
         title word(series, i).' p99', \
     for [i=1:n] (slo(i) > 0 ? slo(i) : NaN) with lines dt 2 lw 1.5 lc rgb "#000000" \
         title (slo(i) > 0 ? sprintf("SLO target %g ms", slo(i)) : "")
