# p99.gp — p99 latency per interval and service, with each service's SLO target.
# data: prefix; file data.i.'.dat' (i = 0.. in the order of `services`) holds
# time_h, p99_ms, slo_ms. Extra variable: services (names, space separated).
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set title "p99 latency over time, with the SLO target\n{/*0.8 ".subtitle."}"
set xlabel "simulated time (h)"
set ylabel "p99 latency (ms)"
set yrange [0:*]
n = words(services)
plot for [i=1:n] data.(i-1).'.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.6 \
         lc i title word(services, i).' p99', \
     for [i=1:n] data.(i-1).'.dat' using 1:3 with lines dt 2 lw 2 lc i \
         title word(services, i).' SLO'
