# compare.gp — policy comparison as small multiples: one panel per question,
# each with its own axis and unit; bars are means, whiskers 95 % CIs.
# data: "label" then mean ci pairs: allocated% busy% useful% within_slo%
# worst_within_slo% p99_ms training_GPU-h/day ckpt_overhead% cost.
# Extra: costlabel, nruns, top1..top5, none (six words, 1: that panel has no figure in
# any run, e.g. SLO and p99 of runs without services).
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set style data histogram
set style histogram errorbars gap 1 lw 1.2
set style fill solid 0.8 border -1
set boxwidth 0.85
set xtics scale 0 rotate by -20 left
set key inside top right horizontal samplen 1 font ",9"
set multiplot layout 2,3 title "Policy comparison\n".subtitle
# The bars' x range is fixed (one group per run at 0, 1, ...): a panel whose figures are all
# missing (NaN) would leave gnuplot no x range. Such a panel says so in its middle and
# draws only the runs' names (points of size 0), not an empty plot gnuplot warns about.
set xrange [-0.5:nruns-0.5]
if (!exists("none")) none = "0 0 0 0 0 0"
empty(k) = word(none, k) eq "1"
nodata(k) = empty(k) ? "no data in these runs" : ""
blank = "set key off; plot data using 0:(0):xtic(1) with points ps 0 notitle; set key on"
set label 1 nodata(1) at graph 0.5, 0.5 center front
set title "Utilisation"
set ylabel "share of GPU-time (%)"
set yrange [0:119]
if (empty(1)) { eval blank } else {
    plot data using 2:3:xtic(1) lc rgb "#4477aa" title "allocated", \
         '' using 4:5 lc rgb "#66ccee" title "busy", \
         '' using 6:7 lc rgb "#228833" title "useful"
}
# Room above the bars (the key sits there), and an axis when every bar is 0:
# top1..top5 are the panels' largest bar + whisker (from tidesim plot).
top(m) = (m > 0 && m == m) ? 1.35 * m : 1
set label 1 nodata(2)
set title "Requests missing their SLO"
set ylabel "requests outside the SLO (% of arrivals)"
set yrange [0:top(top1)]
if (empty(2)) { eval blank } else {
    plot data using (100-$8):9:xtic(1) lc rgb "#ee6677" title "all services", \
         '' using (100-$10):11 lc rgb "#aa3377" title "worst service"
}
unset key
blank = "plot data using 0:(0):xtic(1) with points ps 0 notitle"
set yrange [0:top(top2)]
set label 1 nodata(3)
set title "p99 latency, worst service"
set ylabel "p99 latency (ms)"
if (empty(3)) { eval blank } else {
    plot data using 12:13:xtic(1) lc rgb "#ee6677" notitle
}
set yrange [0:top(top3)]
set label 1 nodata(4)
set title "Training work done per day"
set ylabel "training work (GPU-h per day)"
if (empty(4)) { eval blank } else {
    plot data using 14:15:xtic(1) lc rgb "#4477aa" notitle
}
set yrange [0:top(top4)]
set label 1 nodata(5)
set title "Checkpoint overhead"
set ylabel "checkpoint overhead (% of busy GPU-time)"
if (empty(5)) { eval blank } else {
    plot data using 16:17:xtic(1) lc rgb "#ccbb44" notitle
}
set yrange [0:top(top5)]
set label 1 nodata(6)
set title costlabel
set ylabel costlabel
if (empty(6)) { eval blank } else {
    plot data using 18:19:xtic(1) lc rgb "#aa3377" notitle
}
unset multiplot
