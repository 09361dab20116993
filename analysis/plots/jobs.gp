# jobs.gp — job timeline: one row per training job (submission order). A thin
# grey line from submission to the job's end is the time it waited; on it the
# segments it held cards, coloured by phase; a cross marks each preemption.
# data blocks: 0 job submit_h until_h; 1 job start_h end_h kind (1 restore,
# 2 run, 3 checkpoint, 4 checkpoint in a preemption's grace); 2 job preempted_h.
# Extra variables: njobs, npre, lw (segment line width), endh (the run's end, h).
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Training job timeline: waits, runs, checkpoints, preemptions and restores\n".subtitle
set xlabel "simulated time (h)"
set ylabel "job (submission order)"
set yrange [-1:njobs]
set xrange [0:(endh > 0 ? endh : 1)]
set key outside right top box opaque
is(k, v) = (column(4) == k ? v : NaN)
plot data index 0 using 2:1:($3-$2):(0) with vectors nohead lw 1 lc rgb "#c8c8c8" \
         title "waiting (queued)", \
     data index 1 using 2:(is(2, $1)):($3-$2):(0) with vectors nohead lw lw lc rgb "#4477aa" \
         title "running", \
     data index 1 using 2:(is(3, $1)):($3-$2):(0) with vectors nohead lw lw lc rgb "#ccbb44" \
         title "checkpoint", \
     data index 1 using 2:(is(4, $1)):($3-$2):(0) with vectors nohead lw lw lc rgb "#ee6677" \
         title "checkpoint, preemption grace", \
     data index 1 using 2:(is(1, $1)):($3-$2):(0) with vectors nohead lw lw lc rgb "#aa3377" \
         title "restore", \
     data index 2 using 2:1 with points pt 2 ps 1.2 lw 2 lc rgb "#cc0000" \
         title sprintf("preempted (%d)", npre)
