# make bench BENCH=cc's chart, drawn as the DCQCN paper draws its (Zhu et al. 2015,
# figures 13-14): per-flow throughput over time above, the bottleneck queue below, one
# column per algorithm, from the join/leave run cc_report.py picked (the median join).
# Usage: gnuplot -e "dir='OUT'; out='FILE.png'; rate='MBIT'" tests/bench/cc_chart.gp
# Data: dir/chart_ALGO_flows.dat (blocks per flow: ms, Mbit/s over 5 ms) and
#       dir/chart_ALGO_queue.dat (ms, KB: the largest depth in each 100 us slot).
set terminal pngcairo size 1500,800 font "sans,10"
set output out
algos = "none dcqcn window"
titles = "none DCQCN window"
if (!exists("rate")) rate = "?"
set multiplot layout 2,3 title sprintf("Congestion control: a flow joins a running one and leaves again (bottleneck %s Mbit/s)", rate)
set grid
set key bottom right opaque box
do for [i = 1:3] {
	a = word(algos, i)
	f = sprintf("%s/chart_%s_flows.dat", dir, a)
	set title word(titles, i)
	set xlabel "time (ms)"
	set ylabel "goodput per flow (Mbit/s, 5 ms window)"
	set yrange [0:*]
	if (system(sprintf("test -s %s && echo 1 || echo 0", f)) eq "1") {
		plot f index 0 using 1:2 with lines lw 1.5 title "flow 1 (S1)", \
		     f index 1 using 1:2 with lines lw 1.5 title "flow 2 (S2, joins and leaves)"
	} else {
		unset key
		set label 1 "no run" at graph 0.45, graph 0.5
		plot [0:1][0:1] -1 notitle
		unset label 1
		set key bottom right opaque box
	}
}
unset key
do for [i = 1:3] {
	a = word(algos, i)
	f = sprintf("%s/chart_%s_queue.dat", dir, a)
	set title word(titles, i) . ": bottleneck queue"
	set xlabel "time (ms)"
	set ylabel "queue depth (KB, max per 100 us)"
	set yrange [0:*]
	if (system(sprintf("test -s %s && echo 1 || echo 0", f)) eq "1") {
		plot f using 1:2 with impulses lc rgb "#4060a0" notitle
	} else {
		set label 1 "no run" at graph 0.45, graph 0.5
		plot [0:1][0:1] -1 notitle
		unset label 1
	}
}
unset multiplot
