#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/methods.sh [PERUN]: the optimization methods' table, like the thesis'
# Appendix B (seeds/003, 8.1 metrics): perun collect of /usr/bin/python3.11d
# running a recursive quicksort of 10,000 numbers (pure Python, fixed seed),
# for real with the bpf runtime (perun's loader, or stapbpf with
# PB_LOADER=stapbpf), per optimization setting:
#
#   userspace  -s userspace, no optimization (11,324 functions: on stapbpf
#              past the probe limit of a 20,000 open-file host, so perun
#              refuses it; the row then gives its exit status and message)
#   cg:match   -on cg-shaping -oa cg-mode match (call graph matching only)
#   basic, advanced, full   -op NAME; each collected twice in a fresh perun
#              repository: the first run has no dynamic stats (the thesis'
#              p:d:*), the second uses the first's (p:*); both are rows
#   probing, reattach, timed, budget   -op basic with one run-time method
#              (Table A.2): dynamic probing after 1000 calls (reattach: with
#              -oa probing-reattach true), timed sampling at 20 Hz, the
#              overhead budget --max-overhead 5; one collect each (not in the
#              default PB_ROWS)
#
# Columns (per function unless said):
#   PL    probes attached: functions (probe points, from
#         collector_info.probes.attached; entry + return per function)
#   PLR   functions the trace reached (>= 1 record; plan entries, so a
#         static function in several files counts per copy)
#   RDV   bytes of the raw stream perun parsed (trace.raw_bytes)
#   PS    the profile as stored: its zlib object in .perun/objects
#         (perun add), and the JSON file collect wrote
#   PT    wall seconds of the whole perun collect (call graph, compile,
#         attach, run, detach, parse, write): cold = empty module and
#         analysis cache, warm = the same collect again on that cache
#   start seconds from perun's start until the command runs (call graph,
#         pre-optimize, script, module compile or cache hit, attach): the
#         part of PT a warm cache saves
#   PRT   the command's own run time under the probes
#   FC    functions perun postprocessby regression-analysis models with a
#         best R^2 > 0.5 (of the functions it models, those with >= 3 calls)
#   lost  events lost (the recorder's buffer, transport); 0 = exact
#
# Environment:
#   PB_BINARY  the python (default /usr/bin/python3.11d; python3.11-dbg is
#              installed when missing and we are root)
#   PB_BUFFER  --buffer-size (default 30000000: the no-stats pipelines
#              record ~12M events here; ~70 bytes of kernel memory each)
#   PB_WARM    1 (default): also time each reported run again on a warm
#              cache; 0: cold only (halves the time)
#   PB_ROWS    rows to run (default "userspace basic advanced full cg:match")
#   PB_OUT     keep the work directory here (default: a temp dir, removed)
#   PB_LOADER  --loader for every collect: auto (default: perun's own loader
#              where the kernel has uprobe_multi links), perun or stapbpf;
#              the loader that ran is the table's loader column
#
# Slow: stapbpf detaches probes one by one and the kernel waits about
# 60-130 ms per probe point, so a row of 1,400 functions spends minutes
# after the command ends; the whole table takes about an hour (more with
# PB_WARM=1).  perun's loader attaches and detaches in milliseconds, but
# times each return exactly at any depth: where the call graph shows a
# cycle (most of CPython) on the return instructions, a single step each,
# and most of CPython's small functions begin with an instruction the
# kernel steps too, so a row of the loader spends minutes in the run.  Run as root from a built tree: bash bench/methods.sh.
# Not part of make check.  Exit 2 if it cannot run.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
BIN=${PB_BINARY:-/usr/bin/python3.11d}
BUF=${PB_BUFFER:-30000000}
WARM=${PB_WARM:-1}
ROWS=${PB_ROWS:-"userspace basic advanced full cg:match"}
LOADER=${PB_LOADER:-auto}
[ -x "$PERUN" ] || { echo "methods.sh: $PERUN is not executable: build perun first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "methods.sh: tracing needs root" >&2; exit 2; }
if ! [ -e "$BIN" ] && [ "$BIN" = /usr/bin/python3.11d ]; then
	echo "methods.sh: installing python3.11-dbg for $BIN" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		python3.11-dbg >/dev/null || exit 2
fi
[ -x "$BIN" ] || { echo "methods.sh: $BIN: not executable (set PB_BINARY)" >&2; exit 2; }
command -v git >/dev/null || { echo "methods.sh: git not found" >&2; exit 2; }
if [ -n "${PB_OUT:-}" ]; then
	BASE=$PB_OUT
	mkdir -p "$BASE" || exit 2
else
	BASE=$(mktemp -d /tmp/perun-methods.XXXXXX)
	trap 'rm -rf "$BASE"' EXIT
fi
trap 'exit 1' INT TERM

now() { date +%s.%N; }
say() { echo "methods.sh: $*" >&2; }

# the workload: a recursive quicksort of 10,000 numbers, seed 42
cat >"$BASE/quicksort.py" <<'EOF'
import random
import sys

sys.setrecursionlimit(10000)


def quicksort(a, lo, hi):
    if lo >= hi:
        return
    p = a[(lo + hi) // 2]
    i, j = lo, hi
    while i <= j:
        while a[i] < p:
            i += 1
        while a[j] > p:
            j -= 1
        if i <= j:
            a[i], a[j] = a[j], a[i]
            i += 1
            j -= 1
    quicksort(a, lo, j)
    quicksort(a, i, hi)


random.seed(42)
data = [random.randint(0, 1000000) for _ in range(10000)]
quicksort(data, 0, len(data) - 1)
assert data == sorted(data)
print("sorted", len(data))
EOF

# repo DIR: a git work tree with the workload and a perun repository, so
# each row's dynamic stats are its own
repo() {
	mkdir -p "$1" && cp "$BASE/quicksort.py" "$1/" &&
		git -C "$1" init -q && git -C "$1" add quicksort.py &&
		git -C "$1" -c user.name=bench -c user.email=bench@localhost commit -qm workload &&
		(cd "$1" && "$PERUN" init >/dev/null)
}

# collect DIR CACHE OUT LOG [options]: one timed perun collect; sets $pt, $rc
collect() {
	dir=$1 cache=$2 out=$3 log=$4
	shift 4
	t0=$(now)
	(cd "$dir" && PERUN_CACHE_DIR=$cache "$PERUN" collect -o "$out" -c "$BIN" \
		-a quicksort.py trace --buffer-size "$BUF" --loader "$LOADER" "$@" --metrics \
		>"$log.out" 2>"$log")
	rc=$?
	t1=$(now)
	pt=$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')
	say "$(basename "$log" .log): exit $rc in $pt s"
}

# measure NAME DIR PROFILE PT_COLD PT_WARM RC LOG: one table row into rows.tsv
measure() {
	mname=$1 mdir=$2 prof=$3 mptc=$4 mptw=$5 mrc=$6 mlog=$7
	obj=- fc=-
	if (cd "$mdir" && "$PERUN" add --keep-profile "$prof" >"$mlog.add" 2>&1); then
		obj=$(find "$mdir/.perun/objects" -type f -newer "$prof" -printf '%s\n' | sort -n | tail -1)
	fi
	if "$PERUN" postprocessby "$prof" regression-analysis -o "$prof.ra" >/dev/null 2>"$mlog.ra"; then
		fc=ok
	fi
	python3 - "$mname" "$prof" "$mptc" "$mptw" "$mrc" "${obj:--}" "$fc" >>"$BASE/rows.tsv" <<'EOF'
import json, os, sys
name, prof, ptc, ptw, rc, obj, fc = sys.argv[1:8]
d = json.load(open(prof))
ci, tr = d["collector_info"], d["trace"]
pr = ci.get("probes") or {}
att = pr.get("attached", tr.get("probes", 0))
met = tr.get("metrics", {})
an = tr.get("anomalies", {})
po = ci["params"].get("optimization", {}) or {}
pre = po.get("pre_optimize") or {}
fcs = "-"
if fc == "ok":
    best = {}
    for m in json.load(open(prof + ".ra"))["snapshots"][0].get("models", []):
        r2 = m.get("r_square") or 0.0
        if m["uid"] not in best or r2 > best[m["uid"]][0]:
            best[m["uid"]] = (r2, m["model"])
    ok = [v[1] for v in best.values() if v[0] > 0.5]
    kinds = ["constant", "linear", "logarithmic", "quadratic", "power", "exponential"]
    fcs = "%d [%s] u %d" % (len(ok), ", ".join(str(ok.count(k)) for k in kinds),
                            len(best) - len(ok))
print("\t".join(str(x) for x in [
    name, tr.get("loader", "-"), rc,
    "%d (%d)" % (att // 2, att),
    "%d" % (met.get("PLR", 0) // 2),
    "%.2f" % (tr.get("raw_bytes", 0) / 1e6),
    "%s / %.2f" % ("%.2f" % (int(obj) / 1e6) if obj != "-" else "-", os.path.getsize(prof) / 1e6),
    ptc, ptw,
    "%.1f" % tr.get("timing", {}).get("startup_s", 0),
    "%.1f" % (tr.get("target", {}).get("run_time_ns", 0) / 1e9),
    fcs,
    an.get("lost_events", "?"),
    "%s->%s" % (pre.get("probes_before", "-"), pre.get("probes_after", "-")),
]))
EOF
}

# refused NAME RC LOG: a row for a collect that wrote no profile
refused() {
	msg=$(grep -v '^perun: runtime' "$3" | tail -1)
	printf '%s\t%s\t%s\t-\t-\t-\t-\t%s\t-\t-\t-\t-\t-\t%s\n' "$1" "$LOADER" "$2" "$pt" "$msg" \
		>>"$BASE/rows.tsv"
}

# row NAME PIPELINE_RUNS [options]: runs (1 or 2) collects in a fresh
# repository, the reported one cold and, with PB_WARM, warm
row() {
	name=$1 runs=$2
	shift 2
	d="$BASE/$(echo "$name" | tr ':' '-')"
	rm -rf "$d" && repo "$d" || { say "cannot make $d"; exit 1; }
	i=1
	while [ $i -le "$runs" ]; do
		label=$name
		[ "$runs" = 2 ] && label="$name #$i"
		rm -rf "$d/cache"
		[ $i = 2 ] && [ "$WARM" = 1 ] && cp -a "$d/.perun" "$d/perun-before"
		collect "$d" "$d/cache" "$d/run$i.perf" "$d/run$i.log" "$@"
		ptc=$pt rcc=$rc ptw=-
		if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
			refused "$label" "$rc" "$d/run$i.log"
			return
		fi
		if [ "$WARM" = 1 ] && [ $i = "$runs" ]; then
			# the same collect on the warm cache: the same stats, so the
			# same plan and module
			if [ $i = 2 ]; then
				rm -rf "$d/.perun" && cp -a "$d/perun-before" "$d/.perun"
			fi
			collect "$d" "$d/cache" "$d/warm.perf" "$d/warm.log" "$@"
			ptw=$pt
			grep -q "module cache: hit" "$d/warm.log" || ptw="$pt(miss)"
		fi
		measure "$label" "$d" "$d/run$i.perf" "$ptc" "$ptw" "$rcc" "$d/run$i.log"
		i=$((i + 1))
	done
}

san=release
readelf -d "$PERUN" 2>/dev/null | grep -q "libasan" && san="sanitizer build (slow)"
echo "# perun collect -c $BIN -a quicksort.py trace ... (bpf runtime, --buffer-size $BUF)"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(uname -r); $(nproc) CPUs; $(free -g | awk '/Mem:/ { print $2 " GB" }');" \
	"open files $(ulimit -Hn); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# perun: $PERUN ($san); stap $(stap -V 2>&1 | sed -n "1s/.*version \([^ )]*\).*/\1/p")"
: >"$BASE/rows.tsv"
for r in $ROWS; do
	case $r in
	userspace) row userspace 1 -s userspace ;;
	cg:match) row cg:match 1 -s userspace -on cg-shaping -oa cg-mode match ;;
	basic | advanced | full) row "$r" 2 -s userspace -op "$r" ;;
	probing) row "$r" 1 -s userspace -op basic -on dynamic-probing -oa probing-threshold 1000 ;;
	reattach) row "$r" 1 -s userspace -op basic -on dynamic-probing -oa probing-threshold 1000 \
		-oa probing-reattach true ;;
	timed) row "$r" 1 -s userspace -op basic -on timed-sampling -oa timed-sample-freq 20 ;;
	budget) row "$r" 1 -s userspace -op basic --max-overhead 5 ;;
	*) say "unknown row $r"; exit 2 ;;
	esac
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# #1: first collect, no dynamic stats; #2: the second collect, with the first's stats"
echo
echo "| row | loader | exit | PL fn (points) | PLR fn | RDV MB | PS MB zlib / JSON | PT s cold | PT s warm | start s | PRT s | FC R²>0.5 [c, l, lg, q, p, e] u | lost | plan fn before->after |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
awk -F'\t' '{ printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n" }' "$BASE/rows.tsv"
