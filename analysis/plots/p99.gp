# p99.gp — p99 latency per interval of every run's services on one chart (log
# axis: the tail shows), with each service's SLO target dashed.
# data: one block per series (time_h p99_ms). Extra: series (names), slos
# (SLO ms per series, -1: none or the same as an earlier series'), maxh, ylo and yhi (the
# smallest and largest p99 and SLO, NaN when none), npts (the fewest samples of a series).
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "p99 latency over time, with the SLO targets\n".subtitle
set xlabel "simulated time (h)"
set ylabel "p99 latency (ms, log scale)"
set logscale y
if (maxh > 0) set xrange [0:maxh]; else set xrange [0:1]
if (!exists("npts")) npts = 2
if (npts < 2) set style data linespoints; else set style data lines
# The y range is autoscaled unless the values (and targets) give none: none at all (no
# request served) is drawn on 1..1000 ms with a note, a single value v on v/2..2v.
if (!exists("ylo")) ylo = 1
if (!exists("yhi")) yhi = 2
if (!(yhi > 0)) {
    set yrange [1:1000]
    set label 1 "no request served in these runs" at graph 0.5, 0.5 center front
} else {
    if (!(yhi > ylo)) { set yrange [ylo/2:yhi*2] }
}
if (maxh > 48) set xtics 12; else set xtics 6
if (maxh < 12) set xtics autofreq
n = words(series)
slo(i) = real(word(slos, i))
plot for [i=1:n] data index (i-1) using 1:2 lw 2 lc rgb col(i) \
         title word(series, i).' p99', \
     for [i=1:n] (slo(i) > 0 ? slo(i) : NaN) with lines dt 2 lw 1.5 lc rgb "#000000" \
         title (slo(i) > 0 ? sprintf("SLO target %g ms", slo(i)) : "")
