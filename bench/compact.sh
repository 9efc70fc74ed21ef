#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The compact profile form against the per-call form, on generated
# streams of 1M and 4M events (bench/gen-raw.c: 4 threads, 200 functions,
# calls three deep), in one run:
#   - bytes per call as JSON and stored (zlib's compress(), as the store
#     does, seeds/000), against Perun's own columnar format for the same
#     calls as measured once: 28.7 B per call as JSON, 5.65 stored;
#   - raw -> profile (perun __parse) MB/s and M events/s, peak RSS;
#   - reading: perun show --format summary of each form (time, peak RSS);
#   - converting: show --format json --expand / --compact.
# Builds an optimized perun (no sanitizers) under bench/out/compact.  Run on
# an otherwise idle machine; prints one table.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out="$src/bench/out/compact"
mkdir -p "$out/build"
cd "$out"
say() { printf 'bench: %s\n' "$*" >&2; }

say "building an optimized perun (-O2, no sanitizers) in $out/build"
. "$src/bench/build.sh"
bench_build "$src" "$out" || exit 1
export PERUN_DATADIR="$src" PERUN_LIBDIR="$out/build" PERUN_CACHE_DIR="$out/cache"
cc -O2 -o gen-raw "$src/bench/gen-raw.c"

RUNS=${RUNS:-3}
SCALE=${SCALE:-1}	# SCALE=100 for a quick check of the script itself
rm -f parse-*.runs
for n in 1m 4m; do
	case $n in 1m) events=$((1000000 / SCALE)) ;; 4m) events=$((4000000 / SCALE)) ;; esac
	say "$n: generating $events events"
	./gen-raw $events bench.plan > raw$n
	for form in compact per-call; do
		opt=; [ $form = per-call ] && opt=--per-call
		say "$n: __parse, $form form, best of $RUNS"
		i=0
		while [ $i -lt "$RUNS" ]; do
			# shellcheck disable=SC2086
			"$PERUN" __parse bench.plan raw$n $form-$n.json $opt >> parse-$form-$n.runs
			i=$((i + 1))
		done
	done
	say "$n: __parse --aggregate (the parser and summaries, nothing per call), best of $RUNS"
	i=0
	while [ $i -lt "$RUNS" ]; do
		"$PERUN" __parse bench.plan raw$n agg-$n.json --aggregate >> parse-agg-$n.runs
		i=$((i + 1))
	done
	# one of each kept for reading and converting
	for form in compact per-call; do
		/usr/bin/time -f '%e %M' -o show-$form-$n.time \
			"$PERUN" show ./$form-$n.json --format summary > summary-$form-$n.txt
	done
	cmp summary-compact-$n.txt summary-per-call-$n.txt
	/usr/bin/time -f '%e %M' -o expand-$n.time \
		"$PERUN" show ./compact-$n.json --format json --expand > expanded-$n.json
	cmp expanded-$n.json per-call-$n.json
	/usr/bin/time -f '%e %M' -o compact-$n.time \
		"$PERUN" show ./per-call-$n.json --format json --compact > recompacted-$n.json
	cmp recompacted-$n.json compact-$n.json
	rm -f expanded-$n.json recompacted-$n.json
done

# a real traced program: fib(22) recursion (57,313 calls) and 100,000 calls
# of a tiny function, traced by stapbpf (compiles once into $out/cache)
cc -g -O1 -o fibn "$src/tests/fixtures/fibn.c"
rm -f real.json real-per-call.json
if [ "${LIVE:-1}" = 0 ]; then
	say "real program: skipped (LIVE=0)"
elif "$PERUN" collect -c ./fibn -a "22 100000" -o real.json trace -q -s userspace >/dev/null 2>real.err &&
	"$PERUN" show ./real.json --format json --expand > real-per-call.json; then
	say "real program traced"
else
	say "real program: collect failed, see $out/real.err"
fi

python3 - <<'PY'
import json, zlib
PERUN_JSON, PERUN_STORED = 28.7, 5.65   # Perun's columnar format, same calls, measured once
rows = []
def runs(f):
    return [json.loads(l) for l in open(f)]
def best(rs):
    return min(rs, key=lambda r: r["seconds"])
for n in ("1m", "4m"):
    for form in ("compact", "per-call"):
        rs = runs(f"parse-{form}-{n}.runs")
        b = best(rs)
        body = open(f"{form}-{n}.json", "rb").read()
        stored = len(zlib.compress(b"profile mixed %d\0" % len(body) + body))
        calls = b["calls"] + 0.0
        rss = max(r["max_rss_kb"] for r in rs) / 1024
        st, sr = open(f"show-{form}-{n}.time").read().split()
        rows.append((f"{n} {form}", f"{len(body) / calls:.2f}", f"{stored / calls:.3f}",
                     f"{b['bytes'] / b['seconds'] / 1e6:.0f}", f"{b['events'] / b['seconds'] / 1e6:.2f}",
                     f"{rss:.1f}", f"{float(st):.2f} s / {int(sr) / 1024:.0f} MiB"))
    b = best(runs(f"parse-agg-{n}.runs"))
    rows.append((f"{n} parser alone", "", "", f"{b['bytes'] / b['seconds'] / 1e6:.0f}",
                 f"{b['events'] / b['seconds'] / 1e6:.2f}", "", "__parse --aggregate: no per-call output"))
    e = open(f"expand-{n}.time").read().split()
    c = open(f"compact-{n}.time").read().split()
    rows.append((f"{n} convert", "", "", "", "", "",
                 f"expand {float(e[0]):.2f} s / {int(e[1]) / 1024:.0f} MiB; compact {float(c[0]):.2f} s / {int(c[1]) / 1024:.0f} MiB"))
try:
    for form, f in (("compact", "real.json"), ("per-call", "real-per-call.json")):
        body = open(f, "rb").read()
        calls = sum(b["n"] for b in json.load(open("real.json"))["snapshots"][0]["calls"])
        stored = len(zlib.compress(b"profile mixed %d\0" % len(body) + body))
        rows.append((f"fibn {form}", f"{len(body) / calls:.2f}", f"{stored / calls:.3f}", "", "", "",
                     f"real program, {calls} calls (live, stapbpf)"))
except (OSError, ValueError, KeyError) as e:
    rows.append(("fibn", "", "", "", "", "", f"not measured: {e}"))
rows.append(("Perun (columnar)", f"{PERUN_JSON}", f"{PERUN_STORED}", "4.3", "", "", ""))
head = ("profile", "JSON B/call", "stored B/call", "parse MB/s", "M events/s", "peak RSS MiB", "show summary: time / peak RSS")
w = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
for r in [head] + rows:
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
c4 = [r for r in rows if r[0] == "4m compact"][0]
p4 = [r for r in rows if r[0] == "4m per-call"][0]
print()
print(f"goals at 4M: stored <= 1/4 of Perun's ({PERUN_STORED / 4:.2f}): {c4[2]}; JSON <= Perun's ({PERUN_JSON}): {c4[1]};"
      f" parse >= 300 MB/s: {c4[3]}")
print(f"columns + zlib vs zlib of the per-call form: {float(p4[2]) / float(c4[2]):.1f}x smaller stored")
PY
