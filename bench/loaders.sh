#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/loaders.sh [PERUN]: the CPython case on both loaders of the bpf
# runtime.  perun collect -c /usr/bin/python3.11d (python3.11-dbg) running a
# sort of PB_N numbers (pure Python insertion into a list, then sorted(),
# fixed seed) with -s userspace, per
#
#   pipeline  none, -op basic, -op advanced (each in a fresh perun
#             repository: the first collect, no dynamic stats)
#   method    none; dynamic-probing (-oa probing-threshold 1000);
#             reattach (the same, -oa probing-reattach true); timed-sampling;
#             budget (--max-overhead 10)
#   loader    perun (perun-uprobes: uprobe_multi links) and stapbpf
#
# Columns: the collect's exit status (0 complete, 3 profile written but
# incomplete, 1/2 refused or failed: the last line of its stderr is kept in
# PB_OUT), wall seconds of the whole collect, probe points planned and
# attached (collector_info.probes), calls recorded (trace.calls), events
# lost, whether the profile says complete, the loader that ran (trace.loader)
# and PL/PLR (probe points attached / reached, --metrics).
#
# Environment:
#   PB_BINARY    the python (default /usr/bin/python3.11d)
#   PB_N         numbers sorted (default 3000)
#   PB_PIPELINES default "none basic advanced"
#   PB_METHODS   default "none dynamic-probing reattach timed-sampling budget"
#   PB_LOADERS   default "perun stapbpf"
#   PB_TIMEOUT   -t for each collect (default 1200 s)
#   PB_OUT       keep the work directory here (default: a temp dir, removed)
#
# stapbpf opens a perf-event uprobe per probe point and detaches them one by
# one (about 0.1 s each on Linux >= 6.13): its rows of thousands of probes
# take many minutes, and a plan past its open-file limit is refused.  Run as
# root from a built tree on a quiet machine: times taken while other jobs run
# are not results.  Not part of make check.  Exit 2 if it cannot run.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
BIN=${PB_BINARY:-/usr/bin/python3.11d}
N=${PB_N:-3000}
PIPELINES=${PB_PIPELINES:-"none basic advanced"}
METHODS=${PB_METHODS:-"none dynamic-probing reattach timed-sampling budget"}
LOADERS=${PB_LOADERS:-"perun stapbpf"}
TMO=${PB_TIMEOUT:-1200}
[ -x "$PERUN" ] || { echo "loaders.sh: $PERUN is not executable: build perun first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "loaders.sh: tracing needs root" >&2; exit 2; }
[ -x "$BIN" ] || { echo "loaders.sh: $BIN: not executable (apt-get install python3.11-dbg, or set PB_BINARY)" >&2; exit 2; }
command -v git >/dev/null || { echo "loaders.sh: git not found" >&2; exit 2; }
if [ -n "${PB_OUT:-}" ]; then
	BASE=$PB_OUT
	mkdir -p "$BASE" || exit 2
else
	BASE=$(mktemp -d /tmp/perun-loaders.XXXXXX)
	trap 'rm -rf "$BASE"' EXIT
fi
trap 'exit 1' INT TERM
say() { echo "loaders.sh: $*" >&2; }

cat >"$BASE/sort.py" <<EOF
import random

random.seed(42)
data = [random.randint(0, 1000000) for _ in range($N)]
out = []
for x in data:
    i = len(out)
    while i > 0 and out[i - 1] > x:
        i -= 1
    out.insert(i, x)
assert out == sorted(data)
print("sorted", len(out))
EOF

# the options of a pipeline and of a method
popts() { [ "$1" = none ] || echo "-op $1"; }
mopts() {
	case $1 in
	none) ;;
	dynamic-probing) echo "-on dynamic-probing -oa probing-threshold 1000" ;;
	reattach) echo "-on dynamic-probing -oa probing-threshold 1000 -oa probing-reattach true" ;;
	timed-sampling) echo "-on timed-sampling" ;;
	budget) echo "--max-overhead 10 --no-calibrate" ;;
	*) say "unknown method $1"; exit 2 ;;
	esac
}

: >"$BASE/rows.tsv"
for p in $PIPELINES; do
	for m in $METHODS; do
		for l in $LOADERS; do
			d="$BASE/$p-$m-$l"
			rm -rf "$d" && mkdir -p "$d" && cp "$BASE/sort.py" "$d/" &&
				git -C "$d" init -q && git -C "$d" add sort.py &&
				git -C "$d" -c user.name=bench -c user.email=bench@localhost commit -qm w &&
				(cd "$d" && "$PERUN" init >/dev/null) || { say "cannot make $d"; exit 1; }
			t0=$(date +%s.%N)
			# shellcheck disable=SC2046
			(cd "$d" && PERUN_CACHE_DIR="$d/cache" "$PERUN" collect -o "$d/p.perf" -c "$BIN" \
				-a sort.py trace -s userspace $(popts "$p") $(mopts "$m") --loader "$l" \
				-t "$TMO" --metrics --buffer-size 30000000 >"$d/out" 2>"$d/err")
			rc=$?
			t1=$(date +%s.%N)
			wall=$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')
			say "$p $m $l: exit $rc in $wall s"
			python3 - "$p" "$m" "$l" "$rc" "$wall" "$d" >>"$BASE/rows.tsv" <<'PY'
import json, os, sys
p, m, l, rc, wall, d = sys.argv[1:7]
row = [p, m, l, rc, wall]
try:
    j = json.load(open(os.path.join(d, "p.perf")))
    ci, tr = j["collector_info"], j["trace"]
    pr = ci.get("probes") or {}
    met = tr.get("metrics", {})
    row += [str(pr.get("planned", tr.get("probes", "-"))), str(pr.get("attached", "-")),
            str(tr.get("calls", "-")), str(tr.get("anomalies", {}).get("lost_events", "-")),
            str(tr.get("complete", "-")).lower(), tr.get("loader", "-"),
            "%s/%s" % (met.get("PL", "-"), met.get("PLR", "-"))]
except (OSError, ValueError, KeyError):
    last = [x for x in open(os.path.join(d, "err")).read().splitlines() if x.strip()]
    row += ["-"] * 7
    row[-1] = (last[-1] if last else "-").replace("|", "/")[:120]
print("\t".join(row))
PY
		done
	done
done
echo "# perun collect -c $BIN -a sort.py (N=$N) trace -s userspace ... (bpf runtime)"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(uname -r); $(nproc) CPUs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| pipeline | method | loader | exit | wall s | planned | attached | calls | lost | complete | trace.loader | PL/PLR |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
awk -F'\t' '{ printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n" }' "$BASE/rows.tsv"
