#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/durations.sh [PERUN [PERUN_BEFORE]]: is a calibrated median the
# function's own time?
#
# tests/fixtures/durations.c, built at -O0, -O1 and -O2, has tiny (return
# x + 1), spin5 and spin50 (busy-waits of 5 and 50 us on clock_gettime) and
# times untraced twins of them itself: the truth.  Each perun calibrates
# (its own cache) and collects the three functions; a row per optimization
# level, perun and function: the kind of probe its entry got (emulated or
# stepped out of line by the kernel, from the profile; "prologue" for a
# perun that placed it after the prologue, where -O0 code has a load that is
# stepped), the truth, the raw and the calibrated median, and the error.
# PERUN_BEFORE (optional): an older perun, for the before/after rows; its
# calibrated median is computed as the new one is (the median call minus the
# probe cost it subtracted: stepped_probe_ns where its summary says
# probe_stepped, else probe_ns), as it printed only calibrated_mean.
# Reference for tiny: uftrace's self average of the fixture built with -pg
# (when uftrace is installed), as the fixture's own loop timing is.
#
#   DUR_N  calls of each function (default 2000)
#
# Not part of make check.  Needs root and stapbpf.  Exit 2 if it cannot run.
# The numbers are times on this machine; its load average is printed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
BEFORE=${2:-}
N=${DUR_N:-2000}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
case $BEFORE in /* | "") ;; *) BEFORE=$(pwd)/$BEFORE ;; esac
for p in "$PERUN" $BEFORE; do
	[ -x "$p" ] || { echo "durations.sh: $p is not executable: build perun first" >&2; exit 2; }
done
command -v stap >/dev/null || { echo "durations.sh: no stap" >&2; exit 2; }
out=$(mktemp -d /tmp/perun-durations.XXXXXX)
trap 'rm -rf "$out"' EXIT
trap 'exit 1' INT TERM
cd "$out" || exit 2
for o in 0 1 2; do
	cc -g -O$o -o d$o "$here/tests/fixtures/durations.c" || exit 2
	if command -v uftrace >/dev/null; then
		cc -pg -g -O$o -o pg$o "$here/tests/fixtures/durations.c" || exit 2
		uftrace record -d ufdata$o -F tiny "./pg$o" "$N" >/dev/null 2>&1 &&
			uftrace report -d ufdata$o --avg-self -F tiny 2>/dev/null |
			awk '$NF == "tiny" { print $1 * ($2 == "us" ? 1000 : $2 == "ms" ? 1e6 : 1) }' >uf$o.txt
	fi
done
echo "# $(uname -r), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $N calls each; truth: the fixture's own timing of an untraced twin (tiny: uftrace -pg self avg in brackets)"
printf '%-3s %-7s %-7s %-9s %10s %10s %10s %9s\n' opt perun func probe truth_ns raw_med cal_med error
run() { # LABEL PERUN
	label=$1
	export PERUN_CACHE_DIR="$out/cache-$label"
	mkdir -p "$PERUN_CACHE_DIR" && chmod 700 "$PERUN_CACHE_DIR"
	"$2" calibrate --runtime bpf >"cal-$label.json" 2>/dev/null || { echo "$label: calibrate failed" >&2; return 1; }
	for o in 0 1 2; do
		"$2" collect -c "./d$o" -a "$N" -o "$label$o.perf" trace --runtime bpf -s custom \
			-f tiny -f spin5 -f spin50 >"self$o" 2>"err-$label$o" ||
			{ cat "err-$label$o" >&2; continue; }
		"$2" show "$label$o.perf" --format json --expand >"$label$o.json" 2>/dev/null
		python3 - "$label$o.json" "self$o" "cal-$label.json" "$label" "$o" "uf$o.txt" <<-\PY
		import json, os, statistics, sys
		p = json.load(open(sys.argv[1]))
		truth = {l.split()[0][6:-3]: float(l.split()[1]) for l in open(sys.argv[2])}
		cal = json.load(open(sys.argv[3]))
		uf = open(sys.argv[6]).read().strip() if os.path.exists(sys.argv[6]) else ""
		for f in ("tiny", "spin5", "spin50"):
		    s = p["trace"]["summary"][f]
		    raw = statistics.median(r["amount"] for r in p["snapshots"][0]["resources"]
		                            if r["uid"] == f)
		    if "calibrated_median" in s:
		        cm, kind = s["calibrated_median"], s.get("probe_entry", "?")
		    else:
		        stepped = s.get("probe_stepped", False)
		        cm = max(raw - (cal["stepped_probe_ns"] if stepped else cal["probe_ns"]), 0)
		        kind = "prologue" if sys.argv[5] == "0" else ("stepped" if stepped else "emulated")
		    t = truth[f]
		    tt = "%.1f" % t + (" [%.0f]" % float(uf) if f == "tiny" and uf else "")
		    err = "%+.0f%%" % (100 * (cm - t) / t) if f != "tiny" else "%+.0fns" % (cm - t)
		    print("-O%s %-7s %-7s %-9s %10s %10.0f %10.0f %9s"
		          % (sys.argv[5], sys.argv[4], f, kind, tt, raw, cm, err))
		PY
	done
	python3 -c "import json,sys; c=json.load(open(sys.argv[1])); print('#   %s: probe_ns %.0f, stepped_probe_ns %.0f, pair_ns %.0f' % (sys.argv[2], c['probe_ns'], c['stepped_probe_ns'], c['pair_ns']))" "cal-$label.json" "$label"
}
[ -n "$BEFORE" ] && run before "$BEFORE"
run after "$PERUN"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
