#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/callgraph.sh [PERUN]: how long 'perun callgraph' takes on a large
# binary (the goal: <= 2 s cold for /usr/bin/python3.11d, 11,324
# functions), cold (an empty cache: the function list, DWARF call sites,
# every function's CFG, then the cache written) and warm (both read back).
#
#   CG_BINARY   the binary (default /usr/bin/python3.11d; python3.11-dbg is
#               installed when it is missing and we are root)
#   CG_RUNS     runs per row (default 5); the table gives min and median
#
# Measure a release build (./configure without --enable-sanitizers): the
# sanitizers alone make it several times slower; the header says which.
# Not part of make check.  Exit 2 if it cannot run.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
BIN=${CG_BINARY:-/usr/bin/python3.11d}
N=${CG_RUNS:-5}
[ -x "$PERUN" ] || { echo "callgraph.sh: $PERUN is not executable: build perun first" >&2; exit 2; }
if ! [ -e "$BIN" ] && [ "$BIN" = /usr/bin/python3.11d ] && [ "$(id -u)" = 0 ]; then
	echo "callgraph.sh: installing python3.11-dbg for $BIN" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		python3.11-dbg >/dev/null || exit 2
fi
[ -r "$BIN" ] || { echo "callgraph.sh: $BIN: not readable (set CG_BINARY)" >&2; exit 2; }
BASE=$(mktemp -d /tmp/perun-cgbench.XXXXXX)
trap 'rm -rf "$BASE"' EXIT
trap 'exit 1' INT TERM

now() { date +%s.%N; }

# row NAME COLD(1|0) [perun options]: N timed runs, min and median seconds
row() {
	name=$1 cold=$2
	shift 2
	: >"$BASE/times"
	i=0
	while [ $i -lt "$N" ]; do
		[ "$cold" = 1 ] && rm -rf "$BASE/cache"
		t0=$(now)
		PERUN_CACHE_DIR=$BASE/cache "$PERUN" callgraph "$BIN" "$@" >"$BASE/out" ||
			{ echo "callgraph.sh: perun callgraph failed" >&2; exit 1; }
		t1=$(now)
		echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$BASE/times"
		i=$((i + 1))
	done
	sort -n "$BASE/times" | awk -v name="$name" '
		{ v[NR] = $1 }
		END { printf "%-34s %8.3f %8.3f\n", name, v[1], v[int((NR + 1) / 2)] }'
}

san=release
readelf -d "$PERUN" 2>/dev/null | grep -q "libasan" && san="sanitizer build (slow)"
PERUN_CACHE_DIR=$BASE/cache "$PERUN" callgraph "$BIN" --format json >"$BASE/g.json" || exit 1
summary=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("%d functions, %d imports, %d edges, %d reachable from %s, depth %d, %d DWARF call sites" % (
    d["functions"], d["imports"], d["edges"], d["reachable"], d["root"], d["depth"], d["dwarf_sites"]))
' "$BASE/g.json")
echo "# perun callgraph $BIN ($(du -k "$BIN" | cut -f1) KB)"
echo "# $summary"
echo "# perun: $PERUN ($san); $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $N runs per row, wall seconds, output to a file"
printf "%-34s %8s %8s\n" "row" "min" "median"
row "cold (empty cache), text" 1
row "cold, --no-dwarf" 1 --no-dwarf
row "cold, --format json" 1 --format json
row "warm (cached), text" 0
row "warm, --format json" 0 --format json
row "--no-cache (nothing read/written)" 0 --no-cache
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
