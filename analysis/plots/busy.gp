# busy.gp — utilisation over time, every run on one chart: GPU-time busy
# (solid) and allocated (dashed) per interval, mean of each file's replications.
# data: one block per run (time_h busy% allocated%). Extra: runs (labels), maxh, ylab,
# npts (the fewest samples of a run: one is drawn as points, a line needs two).
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "GPU utilisation over time, busy and allocated\n".subtitle
set xlabel "simulated time (h)"
# ylab: the pools chart (one line per node pool) gives "share of each pool's ...".
if (!exists("ylab")) ylab = "share of the cluster's GPU-time (%)"
set ylabel ylab
set yrange [0:105]
if (!exists("npts")) npts = 2
if (maxh > 0) set xrange [0:maxh]; else set xrange [0:1]
if (npts < 2) set style data linespoints; else set style data lines
if (maxh > 48) set xtics 12; else set xtics 6
if (maxh < 12) set xtics autofreq
n = words(runs)
plot for [i=1:n] data index (i-1) using 1:2 lw 2 lc rgb col(i) \
         title word(runs, i).' busy', \
     for [i=1:n] data index (i-1) using 1:3 lw 1.5 dt 2 lc rgb col(i) \
         title word(runs, i).' allocated'
