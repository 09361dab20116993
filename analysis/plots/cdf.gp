# cdf.gp — latency CDF per service over the whole run (from the latency histogram).
# data: prefix; file data.i.'.dat' holds latency_ms (bucket upper bound), cumulative fraction.
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "Request latency CDF per service\n{/*0.8 ".subtitle."}"
set xlabel "latency (ms, log scale)"
set ylabel "share of requests served within (%)"
set logscale x
set yrange [0:100]
set key inside right bottom
n = words(services)
plot for [i=1:n] data.(i-1).'.dat' using 1:($2*100) with steps lw 2 lc i title word(services, i)
