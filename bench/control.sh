#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/control.sh [PERUN]: what perun check's in-run control buys, against
# the run-level comparison (--no-control), with 1, 3 and 5 runs a side, on
# the machine as it is and with a CPU hog running ("loaded").
#
# tests/data/slowcallee.c is built with slowpart's spin at 100 % (unchanged),
# 110 %, 115 %, 120 %, 150 %, 200 % and 285 % of steady's; every variant is
# collected CONTROL_POOL times with real SystemTap, the variants taking turns,
# once as the machine is and once while a busy loop keeps a CPU busy (the
# hog starts and stops every CONTROL_HOG_EVERY rounds, so that the loaded
# pool holds runs of both kinds, as a nightly on a shared host does).  Each
# comparison then draws R runs of the baseline pool and R runs of a
# variant's (two disjoint draws of the baseline pool for the false alarms),
# CONTROL_TRIALS times per cell, and asks perun check at its defaults
# (threshold 10 %, confidence 99 %), with and without --no-control.
#   false alarm: any degradation between two draws of the unchanged program
#   caught:      main;slowpart;spin's self time a degradation
#   smallest:    the smallest slowdown caught in at least 9 of 10 trials
#
#   CONTROL_POOL       runs per variant and machine state (default 10: 2 x 5)
#   CONTROL_TRIALS     comparisons per cell (default 20)
#   CONTROL_HOG_EVERY  rounds between the hog's starts and stops (default 2)
#   CONTROL_POOL_DIR   a directory to collect into and keep (default: a
#                      temporary one, removed); pools already there are
#                      compared again, not collected
#
# Not part of make check.  Needs root and stapbpf.  Prints the load average
# before and after: the table counts outcomes, not times, but a busy machine
# is part of what it measures.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
POOL=${CONTROL_POOL:-10}
TRIALS=${CONTROL_TRIALS:-20}
EVERY=${CONTROL_HOG_EVERY:-2}
VARIANTS="100 110 115 120 150 200 285"
[ -x "$PERUN" ] || { echo "control.sh: $PERUN is not executable: build perun first" >&2; exit 2; }
command -v stap >/dev/null || { echo "control.sh: no stap" >&2; exit 2; }
hog=
stop_hog() { [ -z "$hog" ] || kill "$hog" 2>/dev/null; hog=; }
if [ -n "${CONTROL_POOL_DIR:-}" ]; then
	out=$CONTROL_POOL_DIR
	mkdir -p "$out" || exit 2
	trap 'stop_hog' EXIT
else
	out=$(mktemp -d /tmp/perun-bench-control.XXXXXX)
	trap 'stop_hog; rm -rf "$out"' EXIT
fi
trap 'exit 1' INT TERM
cd "$out" || exit 2
export PERUN_CACHE_DIR="$out/cache"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cpus)"
for pct in $VARIANTS; do
	[ -x v$pct ] && continue
	sed "s/spin(SLOW \* 400000)/spin(400000UL * $pct \/ 100)/" "$here/tests/data/slowcallee.c" \
		>v$pct.c && cc -O1 -g -o v$pct v$pct.c || exit 2
done
for state in as-is loaded; do
	if [ -f "$state/285/$((POOL - 1)).perf" ]; then
		echo "$state: comparing the pool collected before in $out"
		continue
	fi
	i=0
	while [ $i -lt "$POOL" ]; do
		if [ $state = loaded ] && [ $((i / EVERY % 2)) = 0 ]; then
			[ -n "$hog" ] || { sh -c 'while :; do :; done' & hog=$!; }
		else
			stop_hog
		fi
		for pct in $VARIANTS; do
			mkdir -p $state/$pct && cp v$pct app &&
				"$PERUN" collect -c ./app -o $state/$pct/$i.perf trace -s userspace \
					>/dev/null 2>>collect.err ||
				{ echo "control.sh: collect failed, see below" >&2; tail -5 collect.err >&2; exit 1; }
		done
		i=$((i + 1))
	done
	stop_hog
	echo "$state: collected $POOL runs of each variant; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
done

python3 - "$PERUN" "$POOL" "$TRIALS" $VARIANTS <<-\PY
	import json, random, subprocess, sys
	perun, pool, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	variants = [int(v) for v in sys.argv[4:]]
	rnd = random.Random(1)

	def check(control, base, target):
	    cmd = [perun, "check", ",".join(base), ",".join(target), "--format", "json"]
	    if not control:
	        cmd.append("--no-control")
	    r = subprocess.run(cmd, capture_output=True, text=True)
	    if r.returncode not in (0, 1) or not r.stdout:
	        sys.exit("perun check failed: " + r.stderr)
	    return json.loads(r.stdout)

	def degraded(j, context=None):
	    return any(c["change"] == "degradation" and (context is None or
	               (c["context"] == context and c["time"] == "self"))
	               for job in j["jobs"] for c in job["changes"])

	slow = [v for v in variants if v != 100]
	print("%-7s %-16s %4s  %-11s %s  %s" % ("machine", "method", "runs", "false alarm",
	      " ".join("%6s" % ("+%d%%" % (v - 100)) for v in slow), "smallest caught"))
	for state in ("as-is", "loaded"):
	    runs = {v: ["%s/%d/%d.perf" % (state, v, i) for i in range(pool)] for v in variants}
	    for control, name in ((False, "run-level"), (True, "in-run control")):
	        for r in (1, 3, 5):
	            if 2 * r > pool:
	                continue
	            fa = 0
	            for _ in range(trials):
	                s = rnd.sample(runs[100], 2 * r)
	                fa += degraded(check(control, s[:r], s[r:]))
	            cells, smallest = [], "none"
	            for v in slow:
	                hit = sum(degraded(check(control, rnd.sample(runs[100], r),
	                                         rnd.sample(runs[v], r)), "main;slowpart;spin")
	                          for _ in range(trials))
	                cells.append("%d/%d" % (hit, trials))
	                if smallest == "none" and 10 * hit >= 9 * trials:
	                    smallest = "+%d%%" % (v - 100)
	            print("%-7s %-16s %4d  %-11s %s  %s" % (state, name, r, "%d/%d" % (fa, trials),
	                  " ".join("%6s" % c for c in cells), smallest))
	PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
