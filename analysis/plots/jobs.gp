# jobs.gp — job timeline: one row per training job, queueing (grey) and running
# (coloured by final state) spans.
# data: job, submit_h, start_h, end_h, state (0 queued 1 running 2 done 3 rejected), gpus
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Training job timeline\n{/*0.8 ".subtitle."}"
set xlabel "simulated time (h)"
set ylabel "job (submission order)"
set yrange [-1:*]
set style arrow 1 nohead lw 4 lc rgb "#bbbbbb"
plot data using 2:1:($3-$2):(0) with vectors arrowstyle 1 title "queueing", \
     data using 3:($5==2 ? $1 : NaN):($4-$3):(0) with vectors nohead lw 4 lc rgb "#228833" title "ran, done", \
     data using 3:($5==1 ? $1 : NaN):($4-$3):(0) with vectors nohead lw 4 lc rgb "#4477aa" title "running at the end"
