#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/budget.sh [PERUN]: does --max-overhead keep the overhead it promises?
#
# tests/fixtures/optimize.c calls f() N times (each spins ~2 us) and h() every
# 100th; it prints its own loop time (loop_ns).  Rows: untraced; traced with
# every call recorded; traced with --max-overhead PCT for several PCT.  Per
# row: loop time (median of BUDGET_RUNS), the overhead it shows against the
# untraced run, and the calls of f recorded before the budget disarmed it.
# The budget's estimate counts recorded calls only: a disarmed probe's
# uprobe still traps on the bpf runtime, which the overhead column shows.
#
#   BUDGET_N     calls of f (default 500000)
#   BUDGET_RUNS  runs per row (default 3)
#
# Not part of make check.  Needs root and stapbpf.  Exit 2 if it cannot run.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
N=${BUDGET_N:-500000}
R=${BUDGET_RUNS:-3}
[ -x "$PERUN" ] || { echo "budget.sh: $PERUN is not executable: build perun first" >&2; exit 2; }
command -v stap >/dev/null || { echo "budget.sh: no stap" >&2; exit 2; }
out=$(mktemp -d /tmp/perun-budget.XXXXXX)
trap 'rm -rf "$out"' EXIT
trap 'exit 1' INT TERM
cd "$out" || exit 2
cc -O1 -g -o budget "$here/tests/fixtures/optimize.c" || exit 2
export PERUN_CACHE_DIR="$out/cache"
# the host's calibration, if perun calibrate ran, into this cache
for c in "${XDG_CACHE_HOME:-$HOME/.cache}"/perun/calibration-*.json; do
	[ -f "$c" ] && mkdir -p cache && cp "$c" cache/
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# "LOOP_NS F_RECORDED" median over R runs of perun collect with options $@
traced() {
	i=0
	while [ $i -lt "$R" ]; do
		"$PERUN" collect -c ./budget -a "$N" -o "$out/p.perf" trace -q \
			-s custom -f f -f h "$@" 2>/dev/null | awk '$1 == "loop_ns" { print $2 }'
		i=$((i + 1))
	done | median
}
recorded() {
	python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"trace\"][\"summary\"][\"f\"][\"count\"])" "$out/p.perf" 2>/dev/null || echo "?"
}

"$PERUN" collect -c ./budget -a 1000 -o "$out/p.perf" trace -q -s custom -f f -f h \
	>/dev/null 2>&1 || { echo "budget.sh: a traced run failed" >&2; exit 1; }
cal=$(ls cache/calibration-bpf-*.json 2>/dev/null | head -1)
untraced=$(i=0; while [ $i -lt "$R" ]; do ./budget "$N" | awk '$1 == "loop_ns" { print $2 }'; i=$((i + 1)); done | median)
echo "# bench/budget.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) cpus, N=$N, median of $R"
echo "# calibration: ${cal:+$(cat "$cal")}${cal:-none (the budget assumes 2000 ns per call)}"
printf "%-22s %14s %10s %14s\n" "run" "loop ms" "overhead" "f recorded"
printf "%-22s %14.1f %9s%% %14s\n" "untraced" "$(echo "$untraced" | awk '{ print $1 / 1e6 }')" "0" "-"
row() {
	name=$1; shift
	t=$(traced "$@")
	rec=$(recorded)
	printf "%-22s %14.1f %9.0f%% %14s\n" "$name" "$(echo "$t" | awk '{ print $1 / 1e6 }')" \
		"$(awk -v t="$t" -v u="$untraced" 'BEGIN { print (t - u) * 100 / u }')" "$rec"
}
row "every call"
for pct in 50 20 10 5; do
	row "--max-overhead $pct" --max-overhead "$pct"
done
