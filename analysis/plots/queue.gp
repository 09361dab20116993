# queue.gp — training jobs queued and running at the end of each interval.
# data: time_h, jobs_queued, jobs_running
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Training jobs queued and running over time\n".subtitle
set xlabel "simulated time (h)"
set ylabel "jobs"
set yrange [0:*]
set autoscale xfixmax
plot data using 1:2 with steps lw 2 lc rgb "#ee6677" title "queued", \
     data using 1:3 with steps lw 2 lc rgb "#4477aa" title "running"
