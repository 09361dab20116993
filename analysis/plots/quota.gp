# quota.gp — GPUs of quota held per queue over time (kueue or kai with manifests).
# data: time_h, then per queue: admitted_gpus borrowed_gpus; nq queues named in `names`.
# Extra: maxh, ymax, npts as in queue.gp (one sample: points; all zeros: 0..1).
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Quota held per queue over time (dashed: borrowed)\n".subtitle
set xlabel "simulated time (h)"
set ylabel "GPUs"
if (!exists("maxh")) maxh = 0
if (!exists("ymax")) ymax = 1
if (!exists("npts")) npts = 2
if (ymax > 0) set yrange [0:*]; else set yrange [0:1]
if (maxh > 0) set xrange [0:maxh]; else set xrange [0:1]
if (npts < 2) set style data linespoints; else set style data steps
plot for [i=1:nq] data using 1:(column(2*i)) lw 2 lc rgb col(i) title word(names, i), \
     for [i=1:nq] data using 1:(column(2*i+1)) lw 1 dt 2 lc rgb col(i) notitle
