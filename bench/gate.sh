#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/gate.sh [PERUN]: what --one-module costs and saves, in one run.
#
#   - the gate's cost per hit: bench/loop.c calls f() N times; its own loop
#     time (loop_ns) traced with the ordinary script (-f f), with
#     --one-module and f selected (the same probe plus the __perun_sel
#     lookup), and with --one-module and f not selected (the uprobe still
#     traps; the handler only reads the gate).  Per hit: (traced - untraced)/N;
#     the ratio of the gated to the ungated script.
#   - the compile time saved: the first --one-module collect (stap compiles)
#     against the second with another -f set (a cache hit, no stap).
#
#   GATE_N     calls of f (default 200000)
#   GATE_RUNS  runs per row, the median is shown (default 3)
#
# Not part of make check.  Needs root and stapbpf.  Exit 2 if it cannot run.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
N=${GATE_N:-200000}
R=${GATE_RUNS:-3}
[ -x "$PERUN" ] || { echo "gate.sh: $PERUN is not executable: build perun first" >&2; exit 2; }
command -v stap >/dev/null || { echo "gate.sh: no stap" >&2; exit 2; }
out=$(mktemp -d /tmp/perun-gate.XXXXXX)
trap 'rm -rf "$out"' EXIT
trap 'exit 1' INT TERM
cd "$out" || exit 2
cc -O1 -g -o loop "$here/bench/loop.c" || exit 2
export PERUN_CACHE_DIR="$out/cache"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }

# loop_ns of R runs of: perun collect ... (its own options), median
traced() {
	i=0
	while [ $i -lt "$R" ]; do
		"$PERUN" collect -c ./loop -a "$N" -o "$out/p.perf" trace -q "$@" 2>/dev/null |
			awk '$1 == "loop_ns" { print $2 }'
		i=$((i + 1))
	done | median
}

# the compile, then the hit (main is in both modules: f and main probed)
t0=$(now)
"$PERUN" collect -c ./loop -a 1 -o "$out/p.perf" trace -q -s custom -f main --one-module \
	>/dev/null 2>&1 || { echo "gate.sh: the --one-module collect failed" >&2; exit 1; }
t1=$(now)
PERUN_STAP=/nonexistent/stap "$PERUN" collect -c ./loop -a 1 -o "$out/p.perf" trace -q -s custom \
	-f f --one-module >/dev/null 2>&1 || { echo "gate.sh: the cache hit failed" >&2; exit 1; }
t2=$(now)
"$PERUN" collect -c ./loop -a 1 -o "$out/p.perf" trace -q -s custom -f f >/dev/null 2>&1

untraced=$(i=0; while [ $i -lt "$R" ]; do ./loop "$N" | awk '$1 == "loop_ns" { print $2 }'; i=$((i + 1)); done | median)
plain=$(traced -s custom -f f)
gated=$(traced -s custom -f f --one-module)
unsel=$(traced -s custom -f main --one-module)

awk -v n="$N" -v u="$untraced" -v p="$plain" -v g="$gated" -v s="$unsel" \
    -v t0="$t0" -v t1="$t1" -v t2="$t2" 'BEGIN {
	c = t1 - t0; h = t2 - t1
	printf "calls of f: %d, median of the runs; untraced loop %.1f ms\n", n, u / 1e6
	printf "%-34s %12s %12s\n", "", "ns per hit", "vs ungated"
	printf "%-34s %12.1f %12.2f\n", "ungated script (-f f)", (p - u) / n, 1
	printf "%-34s %12.1f %12.2f\n", "--one-module, f selected", (g - u) / n, (g - u) / (p - u)
	printf "%-34s %12.1f %12.2f\n", "--one-module, f not selected", (s - u) / n, (s - u) / (p - u)
	printf "first --one-module collect (stap): %.2f s; next -f set (cache hit): %.2f s; saved %.2f s\n", c, h, c - h
}'
