# quota.gp — GPUs of quota held per queue over time (kueue or kai with manifests).
# data: time_h, then per queue: admitted_gpus borrowed_gpus; nq queues named in `names`
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Quota held per queue over time (dashed: borrowed)\n".subtitle
set xlabel "simulated time (h)"
set ylabel "GPUs"
set yrange [0:*]
set autoscale xfixmax
plot for [i=1:nq] data using 1:(column(2*i)) with steps lw 2 lc rgb col(i) title word(names, i), \
     for [i=1:nq] data using 1:(column(2*i+1)) with steps lw 1 dt 2 lc rgb col(i) notitle
