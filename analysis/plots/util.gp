# util.gp — GPUs by use over the time of day, stacked (% of the cluster's GPUs),
# with the share of GPU-time the SMs were busy as a line.
# data: hour_of_day, cumulative shares (one column per use, ncum columns, last = 100), busy %
# Extra variables: ncum (stacked columns), labels (their names, space separated), step_h.
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "GPU utilisation by time of day, stacked by use\n{/*0.8 ".subtitle."}"
set xlabel "time of day (h)"
set ylabel "share of the cluster's GPUs (%)"
set yrange [0:105]
set xrange [*:*]
set style fill solid 0.85 border -1
colors = "#4477aa #66ccee #ee6677 #ccbb44 #aa3377 #228833 #bbbbbb"
plot for [i=ncum:1:-1] data using 1:(column(i+1)) with filledcurves x1 \
         lc rgb (i == ncum ? "#dddddd" : word(colors, i)) title word(labels, i), \
     data using 1:(column(ncum+2)) with linespoints lw 2 pt 7 ps 0.6 lc rgb "#000000" \
         title "busy (SMs active)"
