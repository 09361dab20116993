# flavors.gp — GPUs of quota held per queue on each GPU flavor over time (kueue
# manifests with several ResourceFlavors): one panel per flavor, one colour per queue.
# data: time_h, then per flavor, per queue: admitted_gpus borrowed_gpus.
# Extra: nq queues named in `names`, nf flavors named in `flavors`; maxh, ymax, npts as in
# queue.gp (one sample: points; all zeros: 0..1; the x range fixed: a panel may be all NaN).
if (!exists("scripts")) scripts = "."
load scripts.'/common.gp'
set multiplot layout nf,1 title "Quota held per queue and GPU flavor over time (dashed: borrowed)\n".subtitle
set xlabel "simulated time (h)"
set ylabel "GPUs"
if (!exists("maxh")) maxh = 0
if (!exists("ymax")) ymax = 1
if (!exists("npts")) npts = 2
if (ymax > 0) set yrange [0:*]; else set yrange [0:1]
if (maxh > 0) set xrange [0:maxh]; else set xrange [0:1]
if (npts < 2) set style data linespoints; else set style data steps
# Column of queue i's admitted GPUs on flavor f (borrowed: the next one).
adm(f, i) = 2 + 2 * ((f - 1) * nq + (i - 1))
do for [f=1:nf] {
    set title "flavor ".word(flavors, f)
    plot for [i=1:nq] data using 1:(column(adm(f, i))) lw 2 lc rgb col(i) \
             title word(names, i), \
         for [i=1:nq] data using 1:(column(adm(f, i) + 1)) lw 1 dt 2 lc rgb col(i) \
             notitle
}
unset multiplot
