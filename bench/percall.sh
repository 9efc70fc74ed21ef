#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/percall.sh: what one traced call costs the traced process, for each
# way perun's loader can trace it, against bpftrace in the same run.
# bench/loop.c calls f() N times (spinning SPIN ns each) and prints its own
# loop time (loop_ns); cost per call = (loop_ns - untraced) / N, the median
# of R runs per row, the rows taking turns run by run (so a busy spell
# falls on all of them alike):
#
#   untraced     the loop alone
#   bpftrace     bpftrace counting f's calls and returns (uprobe + uretprobe)
#   record       perun -f f: every call recorded (entry and return events in
#                the ring buffer, timestamped); f is on no cycle of the call
#                graph, so its return is a uretprobe
#   record-insn  the same of g, which can recurse (it does not here): its
#                returns are probed on their instructions, each stepped out
#                of line, which times returns at any depth
#   aggregate    perun -f f --aggregate: count, total, min, max and log2
#                histogram kept in the kernel
#   sampled      perun -f f#10: one call in 10 recorded; the others still
#                trap and pass the gate
#   disarmed     perun -f f -on dynamic-probing -oa probing-threshold 1000:
#                f recorded 1000 times, then removed from the kernel (its
#                link made again without it): N - 1000 calls run with no probe
#
# Builds an optimized perun (bench/build.sh: -O2, no sanitizers) under
# bench/out/percall.  Root, bpftrace, a kernel with uprobe_multi (6.6+).
# Environment: PC_N (default 200000), PC_SPIN (default 0), PC_RUNS (5).
# Not part of make check: times taken while other jobs run are not results.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
out="$src/bench/out/percall"
N=${PC_N:-200000}
SPIN=${PC_SPIN:-0}
R=${PC_RUNS:-5}
command -v bpftrace >/dev/null || { echo "percall.sh: no bpftrace" >&2; exit 2; }
mkdir -p "$out" && cd "$out" || exit 2
. "$src/bench/build.sh"
bench_build "$src" "$out" >/dev/null || exit 2
export PERUN_DATADIR="$src" PERUN_LIBDIR="$out/build"
export PERUN_CACHE_DIR="$out/cache"
cc -O1 -g -o loop "$src/bench/loop.c" || exit 2

ROWS="untraced bpftrace record record-insn aggregate sampled disarmed"

# one run of row $1: its loop_ns on stdout
run_row() {
	case $1 in
	untraced) ./loop "$N" "$SPIN" ;;
	bpftrace)
		bpftrace -e "uprobe:$out/loop:f { @c = count(); } uretprobe:$out/loop:f { @r = count(); }" \
			-c "./loop $N $SPIN" 2>/dev/null ;;
	record) "$PERUN" collect -c ./loop -a "$N $SPIN" -o r.perf trace -q -s custom -f f ;;
	record-insn)
		"$PERUN" collect -c ./loop -a "$N $SPIN rec" -o i.perf trace -q -s custom -f g ;;
	aggregate)
		"$PERUN" collect -c ./loop -a "$N $SPIN" -o a.perf trace -q -s custom -f f --aggregate ;;
	sampled) "$PERUN" collect -c ./loop -a "$N $SPIN" -o s.perf trace -q -s custom -f "f#10" ;;
	disarmed)
		"$PERUN" collect -c ./loop -a "$N $SPIN" -o d.perf trace -q -s custom -f f \
			-on dynamic-probing -oa probing-threshold 1000 ;;
	esac 2>/dev/null | sed -n "s/^loop_ns \([0-9]*\).*/\1/p"
}

for row in $ROWS; do : >"$row.ns"; done
i=0
while [ $i -lt "$R" ]; do
	for row in $ROWS; do
		run_row "$row" >>"$row.ns"
	done
	i=$((i + 1))
done
# what each perun row recorded, to show it traced what it says
python3 - "$N" "$R" $ROWS <<'PY'
import json, os, statistics, sys
n, runs, rows = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
ns = {}
for r in rows:
    v = [int(x) for x in open(r + ".ns").read().split()]
    ns[r] = statistics.median(v) if v else float("nan")
u = ns["untraced"]
def rec(f, fn="f"):
    try:
        s = json.load(open(f))["trace"]["summary"][fn]
        return "%d recorded" % s["count"] + (", sampled 1/%d" % s["sampled"] if s.get("sampled") else "") \
            + (", partial" if s.get("partial") else "") \
            + (", return: %s" % s["probe_return"] if s.get("probe_return") else "")
    except Exception as e:
        return "?"
notes = {"record": rec("r.perf"), "record-insn": rec("i.perf", "g"), "aggregate": rec("a.perf"), "sampled": rec("s.perf"),
         "disarmed": rec("d.perf"), "bpftrace": "count only", "untraced": "%.0f ns a loop" % u}
load = open("/proc/loadavg").read().split()[:3]
print("# bench/percall.sh: %d calls of f (spin %s ns), median of %d runs per row, rows in turns;"
      " load average %s" % (n, os.environ.get("PC_SPIN", "0"), runs, " ".join(load)))
print("%-11s %12s %14s %10s  %s" % ("row", "loop_ns", "ns per call", "x bpftrace", "what it did"))
bt = (ns["bpftrace"] - u) / n
for r in rows:
    pc = (ns[r] - u) / n
    print("%-11s %12.0f %14.1f %10s  %s" % (r, ns[r], pc,
          "" if r == "untraced" else "%.2f" % (pc / bt), notes.get(r, "")))
PY
