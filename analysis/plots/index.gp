# index.gp — a sweep's or plan's metric against an axis (cluster size): one curve per
# series (a policy, a choice), its 95 % interval over the seeds as a band; a plan's
# answers (each choice's smallest passing size) as circles when `answers` names a file.
# data: one block per series: x mean low high. Extra: series (labels), xlabel, ylabel,
# ctitle, answers (a .dat of "x y label" or '').
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title ctitle."\n".subtitle
set xlabel xlabel
set ylabel ylabel
set key outside right top box opaque
set style fill transparent solid 0.18 noborder
n = words(series)
cmd = "plot for [i=1:n] data index (i-1) using 1:3:4 with filledcurves lc rgb col(i) notitle, "
cmd = cmd."for [i=1:n] data index (i-1) using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb col(i) title word(series, i)"
if (answers ne '') cmd = cmd.", answers using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#000000' title 'plan answer', answers using 1:2:3 with labels offset 0,1.6 notitle"
eval cmd
