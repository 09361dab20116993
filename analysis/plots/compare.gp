# compare.gp — policy comparison: GPU-time allocated, busy and requests within SLO
# per results file, with 95 % confidence-interval whiskers (0 for single runs).
# data: "label" alloc ci busy ci within_slo ci
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Policy comparison (mean, 95 % CI whiskers)\n{/*0.8 ".subtitle."}"
set ylabel "share (%)"
set yrange [0:110]
set style data histogram
set style histogram errorbars gap 2 lw 1.5
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics scale 0
set bmargin 5
plot data using 2:3:xtic(1) lc rgb "#4477aa" title "GPU-time allocated", \
     '' using 4:5 lc rgb "#66ccee" title "GPU-time busy", \
     '' using 6:7 lc rgb "#228833" title "requests within SLO"
