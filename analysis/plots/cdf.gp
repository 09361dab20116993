# cdf.gp — latency distribution of every run's services: the share of requests
# slower than x (1 - CDF) on log-log axes, so p99 (1 %) and p99.9 (0.1 %) are
# read off directly; SLO targets as vertical dashed lines.
# data: one block per series (latency_ms share_slower). Extra: series, slos, xlo and xhi
# (the smallest and largest latency drawn, with the SLOs; NaN when none): none (no request,
# or all in one histogram bin) is drawn on 1..1000 ms with a note, a single value v on v/2..2v.
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Request latency distribution (tail), log axes\n".subtitle
set xlabel "latency (ms, log scale)"
set ylabel "share of requests slower (%, log scale)"
set logscale xy
if (!exists("xlo")) xlo = 1
if (!exists("xhi")) xhi = 2
if (!(xhi > 0)) {
    set xrange [1:1000]
    set label 1 "no latency tail to draw in these runs" at graph 0.5, 0.5 center front
} else {
    if (!(xhi > xlo)) { set xrange [xlo/2:xhi*2] }
}
set yrange [0.001:100]
set ytics ("100" 100, "10" 10, "1 (p99)" 1, "0.1 (p99.9)" 0.1, "0.01" 0.01, "0.001" 0.001)
n = words(series)
slo(i) = real(word(slos, i))
do for [i=1:n] {
    if (slo(i) > 0) {
        set arrow from slo(i), graph 0 to slo(i), graph 1 nohead dt 2 lw 1.2 lc rgb "#000000"
        set label sprintf(" SLO %g ms", slo(i)) at slo(i), graph 0.97 left font ",9"
    }
}
plot for [i=1:n] data index (i-1) using 1:($2*100) with steps lw 2 lc rgb col(i) \
         title word(series, i)
