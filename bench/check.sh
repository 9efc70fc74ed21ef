#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/check.sh [PERUN]: how often perun check cries wolf, and how often it
# sees a real slowdown, against the runs per side and the slowdown's size,
# for check's method (runs: Welch's t over the logs of a statistic of each
# run) and asv's (mann-whitney: the rank test over the same statistics), each
# with the run's median call and its p10 (check's default), in one table.
#
# tests/data/slowcallee.c is built at 100 % (unchanged), 102 %, 105 %, 110 %
# and 300 % of spin's work under slowpart; every variant is collected
# CHECK_POOL times with real SystemTap, the variants taking turns so that the
# machine's drift falls on all alike.  Each comparison then draws R runs of
# the baseline pool and R runs of a variant's pool (two disjoint draws of the
# baseline pool for the false alarms), CHECK_TRIALS times per cell, and asks
# perun check --threshold 0.01 (so that the small slowdowns count).
#   false alarm: any degradation between two draws of the unchanged program
#   detected:    main;slowpart;spin's self time a degradation
#
#   CHECK_POOL    runs per variant (default 20; 2 x 10 are needed for R = 10)
#   CHECK_TRIALS  comparisons per cell (default 20)
#   CHECK_POOL_DIR  a directory to collect into and keep (default: a
#                 temporary one, removed); when it already holds the pools
#                 (pool100/0.perf ...), they are compared again, not
#                 collected
#
# Not part of make check.  Needs root and stapbpf.  Prints the load average
# before and after: on a busy machine the table measures the machine too.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
POOL=${CHECK_POOL:-20}
TRIALS=${CHECK_TRIALS:-20}
[ -x "$PERUN" ] || { echo "check.sh: $PERUN is not executable: build perun first" >&2; exit 2; }
command -v stap >/dev/null || { echo "check.sh: no stap" >&2; exit 2; }
if [ -n "${CHECK_POOL_DIR:-}" ]; then
	out=$CHECK_POOL_DIR
	mkdir -p "$out" || exit 2
else
	out=$(mktemp -d /tmp/perun-bench-check.XXXXXX)
	trap 'rm -rf "$out"' EXIT
fi
trap 'exit 1' INT TERM
cd "$out" || exit 2
export PERUN_CACHE_DIR="$out/cache"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cpus)"
if [ -f pool300/$((POOL - 1)).perf ]; then
	echo "comparing the pools collected before in $out"
else
	# the probes' cost, so that check compares calibrated times
	"$PERUN" calibrate >/dev/null || { echo "check.sh: perun calibrate failed" >&2; exit 1; }
	for pct in 100 102 105 110 300; do
		sed "s/spin(SLOW \* 400000)/spin(400000 * $pct \/ 100)/" "$here/tests/data/slowcallee.c" >v$pct.c &&
			cc -O1 -g -o v$pct v$pct.c || exit 2
		mkdir -p pool$pct
	done
	i=0
	while [ $i -lt "$POOL" ]; do
		for pct in 100 102 105 110 300; do
			cp v$pct app &&
				nice -n -19 "$PERUN" collect -c ./app -o pool$pct/$i.perf trace -s userspace \
					>/dev/null 2>>collect.err ||
				{ echo "check.sh: collect failed, see below" >&2; tail -5 collect.err >&2; exit 1; }
		done
		i=$((i + 1))
	done
	echo "collected $POOL runs of each variant; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

python3 - "$PERUN" "$POOL" "$TRIALS" <<-\PY
	import json, random, subprocess, sys
	perun, pool, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	rnd = random.Random(1)
	runs = {p: ["pool%d/%d.perf" % (p, i) for i in range(pool)] for p in (100, 102, 105, 110, 300)}

	def check(method, stat, base, target):
	    r = subprocess.run([perun, "check", ",".join(base), ",".join(target), "--threshold",
	                        "0.01", "--method", method, "--statistic", stat, "--format", "json"],
	                       capture_output=True, text=True)
	    if r.returncode not in (0, 1) or not r.stdout:
	        sys.exit("perun check failed: " + r.stderr)
	    return json.loads(r.stdout)

	def degraded(j, context=None):
	    for job in j["jobs"]:
	        for c in job["changes"]:
	            if c["change"] == "degradation" and (context is None or
	                    (c["context"] == context and c["time"] == "self")):
	                return True
	    return False

	print("%-13s %-9s %7s  %-11s %8s %8s %8s %8s" % ("method", "statistic", "repeats",
	      "false alarm", "+2%", "+5%", "+10%", "x3"))
	for method, stat in (("runs", "median"), ("runs", "p10"), ("mann-whitney", "median"),
	                     ("mann-whitney", "p10")):
	    for r in (1, 3, 5, 10):
	        if 2 * r > pool:
	            continue
	        fa = 0
	        for _ in range(trials):
	            s = rnd.sample(runs[100], 2 * r)
	            fa += degraded(check(method, stat, s[:r], s[r:]))
	        cells = []
	        for p in (102, 105, 110, 300):
	            hit = 0
	            for _ in range(trials):
	                hit += degraded(check(method, stat, rnd.sample(runs[100], r),
	                                      rnd.sample(runs[p], r)),
	                                "main;slowpart;spin")
	            cells.append("%d/%d" % (hit, trials))
	        print("%-13s %-9s %7d  %-11s %8s %8s %8s %8s" % (method, stat, r, "%d/%d" % (fa, trials),
	              *cells))
	PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
