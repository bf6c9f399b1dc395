# Batch-latency distributions of the critical-stall benchmark (bench/pinbench.c).
# Usage: gnuplot -e "dir='out'" stall.gp   -> stall.png
if (!exists("dir")) dir = 'out'
set terminal pngcairo size 1200,560 font "sans,10"
set output 'stall.png'
set multiplot layout 1,2 title "Latency of 1000-allocation batches while a thread holds a 1 MB array critical for H ms"
set logscale x
set logscale y
set xrange [1:*]
set xtics ("50%%" 2, "90%%" 10, "99%%" 100, "99.9%%" 1000, "99.99%%" 10000, "99.999%%" 100000)
set xlabel "percentile"
set ylabel "batch latency (ms)"
set grid
set key top left
set yrange [0.005:1000]
do for [m in "pin gclocker"] {
    set title (m eq "pin" ? "pin mode (JEP 423 region pinning)" : "GCLocker mode (critical sections block GC)")
    plot for [h in "0 1 10 100"] sprintf("%s/stall_%s_%s.dat", dir, m, h) using 2:3 with lines lw 2 title sprintf("H = %s ms", h)
}
unset multiplot
