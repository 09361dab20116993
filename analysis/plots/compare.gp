# compare.gp — policy comparison as small multiples: one panel per question,
# each with its own axis and unit; bars are means, whiskers 95 % CIs.
# data: "label" then mean ci pairs: allocated% busy% useful% within_slo%
# worst_within_slo% p99_ms training_GPU-h/day ckpt_overhead% cost.
# Extra: costlabel, nruns, top1..top5.
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set style data histogram
set style histogram errorbars gap 1 lw 1.2
set style fill solid 0.8 border -1
set boxwidth 0.85
set xtics scale 0 rotate by -20 left
set key inside top right horizontal samplen 1 font ",9"
set multiplot layout 2,3 title "Policy comparison\n".subtitle
set title "Utilisation"
set ylabel "share of GPU-time (%)"
set yrange [0:119]
plot data using 2:3:xtic(1) lc rgb "#4477aa" title "allocated", \
     '' using 4:5 lc rgb "#66ccee" title "busy", \
     '' using 6:7 lc rgb "#228833" title "useful"
# Room above the bars (the key sits there), and an axis when every bar is 0:
# top1..top5 are the panels' largest bar + whisker (from tidesim plot).
top(m) = (m > 0 && m == m) ? 1.35 * m : 1
set title "Requests missing their SLO"
set ylabel "requests outside the SLO (% of arrivals)"
set yrange [0:top(top1)]
plot data using (100-$8):9:xtic(1) lc rgb "#ee6677" title "all services", \
     '' using (100-$10):11 lc rgb "#aa3377" title "worst service"
unset key
set yrange [0:top(top2)]
set title "p99 latency, worst service"
set ylabel "p99 latency (ms)"
plot data using 12:13:xtic(1) lc rgb "#ee6677" notitle
set yrange [0:top(top3)]
set title "Training work done per day"
set ylabel "training work (GPU-h per day)"
plot data using 14:15:xtic(1) lc rgb "#4477aa" notitle
set yrange [0:top(top4)]
set title "Checkpoint overhead"
set ylabel "checkpoint overhead (% of busy GPU-time)"
plot data using 16:17:xtic(1) lc rgb "#ccbb44" notitle
set yrange [0:top(top5)]
set title costlabel
set ylabel costlabel
plot data using 18:19:xtic(1) lc rgb "#aa3377" notitle
unset multiplot
