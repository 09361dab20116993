# util.gp — GPU-time by use over the time of day, stacked (% of the cluster's
# GPU-time), with the share of GPU-time the SMs were busy as a line.
# data: hour_of_day, cumulative shares (ncum columns: the use states, idle
# (allocated), free; the last reaches 100), busy %.
# Extra variables: ncum, lab1..labN (names), colors, step_h.
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "GPU-time by use over the time of day\n".subtitle
set xlabel "time of day (h)"
set ylabel "share of the cluster's GPU-time (%)"
set yrange [0:105]
set xrange [0:24]
set xtics 0,3,24
set style fill solid 0.85 border -1
plot for [i=ncum:1:-1] data using 1:(column(i+1)) with filledcurves x1 \
         lc rgb word(colors, i) title value(sprintf('lab%d', i)), \
     data using 1:(column(ncum+2)) with lines lw 2.5 lc rgb "#000000" \
         title "busy (SMs active)"
