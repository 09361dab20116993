# queue.gp — training jobs queued and running at the end of each interval.
# data: time_h, jobs_queued, jobs_running. Extra: maxh (last sample, h), ymax (largest
# count), npts (samples). One sample is drawn as points (steps need two), all zeros on 0..1.
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Training jobs queued and running over time\n".subtitle
set xlabel "simulated time (h)"
set ylabel "jobs"
if (!exists("maxh")) maxh = 0
if (!exists("ymax")) ymax = 1
if (!exists("npts")) npts = 2
if (ymax > 0) set yrange [0:*]; else set yrange [0:1]
if (maxh > 0) set xrange [0:maxh]; else set xrange [0:1]
if (npts < 2) set style data linespoints; else set style data steps
plot data using 1:2 lw 2 lc rgb "#ee6677" title "queued", \
     data using 1:3 lw 2 lc rgb "#4477aa" title "running"
