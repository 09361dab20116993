# daily.gp — per-day bars: GPU-time busy per simulated day for every run, the
# mean over replications with 95 % CI whiskers (0 for a single run).
# data: "day N" then per run: busy% ci. Extra: runs (labels), ndays (rows: the x range
# is fixed, one group per day at 0, 1, ...; a day without figures leaves no gap in it).
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "GPU-time busy per day (mean, 95 % CI whiskers)\n".subtitle
set ylabel "GPU-time busy (% of the cluster's)"
set xlabel "simulated day"
set yrange [0:110]
set style data histogram
set style histogram errorbars gap 2 lw 1.5
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics scale 0
if (exists("ndays") && ndays > 0) set xrange [-0.5:ndays-0.5]
n = words(runs)
plot for [i=1:n] data using (column(2*i)):(column(2*i+1)):xtic(1) lc rgb col(i) \
         title word(runs, i)
