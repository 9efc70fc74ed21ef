#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun benchmark of the transports: per-call cost and recorded/total of a tiny
# function called 20k, 200k and 1M times, in one run, against baselines:
# untraced, a bare uprobe+uretprobe that does nothing (bpftrace, empty
# actions: the trap alone), bare counting (stapbpf and bpftrace count()),
# perun per event (record on perun's loader, print through stapbpf), perun
# --aggregate (in the kernel on perun's loader, and in stapbpf's script),
# and uftrace (Debian's package, -pg build) as the user-space anchor.  The
# last columns are each cost as a ratio to the bare uprobe's and to bare
# stapbpf counting's.  The target times
# its own loop (bench/loop.c), so costs are measured inside the process.
# Run as root, on an otherwise idle machine; usage: bench/transport.sh [PERUN]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out="$src/bench/out/transport"
mkdir -p "$out"
cd "$out"
say() { printf 'bench: %s\n' "$*" >&2; }
PERUN=${1:-$src/perun}
command -v uftrace >/dev/null 2>&1 || {
	say "installing uftrace"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q uftrace >/dev/null
}
cc -O1 -g -o loop "$src/bench/loop.c"
cc -O1 -g -pg -o loop-pg "$src/bench/loop.c"
shim=$(ls "$src"/perun-memlock-shim.so "$src"/bench/out/build/perun-memlock-shim.so 2>/dev/null | head -1)
cat > bare.stp <<STP
global calls, returns
probe process("$out/loop").function("f").call { if (pid() == target()) calls++ }
probe process("$out/loop").function("f").return { if (pid() == target()) returns++ }
probe end { printf("bare %d %d\n", calls, returns) }
STP
stap --runtime=bpf -p4 -m bare bare.stp >/dev/null 2>&1
export PERUN_CACHE_DIR="$out/cache"
ns() { sed -n 's/^loop_ns \([0-9]*\).*/\1/p' "$1" | tail -1; }
count() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['trace']['summary'].get('f', {'count': 0})['count'])" "$1" 2>/dev/null || echo 0; }
: > rows
for n in 20000 200000 1000000; do
	buf=$((2 * n + 1000))
	say "$n calls"
	./loop $n > u.out; echo "untraced $n $(ns u.out) $n" >> rows
	LD_PRELOAD=$shim stapbpf -c "./loop $n" bare.bo > b.out 2>&1 || true
	echo "stapbpf-count $n $(ns b.out) $(sed -n 's/^bare \([0-9]*\) .*/\1/p' b.out)" >> rows
	bpftrace -e "uprobe:$out/loop:f { } uretprobe:$out/loop:f { }" -c "./loop $n" > bu.out 2>&1 || true
	echo "bare-uprobe $n $(ns bu.out) $n" >> rows
	bpftrace -e "uprobe:$out/loop:f { @c = count(); } uretprobe:$out/loop:f { @r = count(); }" \
		-c "./loop $n" > bt.out 2>&1 || true
	echo "bpftrace-count $n $(ns bt.out) $(sed -n 's/^@c: //p' bt.out)" >> rows
	"$PERUN" collect -c ./loop -a $n -o rec.perf trace -q -s custom -f f --buffer-size $buf > r.out 2>r.err || true
	echo "perun-record $n $(ns r.out) $(count rec.perf)" >> rows
	"$PERUN" collect -c ./loop -a $n -o print.perf trace -q -s custom -f f --transport print > p.out 2>p.err || true
	echo "perun-print $n $(ns p.out) $(count print.perf)" >> rows
	"$PERUN" collect -c ./loop -a $n -o agg.perf trace -q -s custom -f f --aggregate > a.out 2>a.err || true
	echo "perun-aggregate $n $(ns a.out) $(count agg.perf)" >> rows
	"$PERUN" collect -c ./loop -a $n -o aggs.perf trace -q -s custom -f f --aggregate --loader stapbpf > as.out 2>as.err || true
	echo "perun-agg-stapbpf $n $(ns as.out) $(count aggs.perf)" >> rows
	rm -rf uftrace.data
	uftrace record -F f ./loop-pg $n > uf.out 2>&1 || true
	ufn=$(uftrace report -F f 2>/dev/null | awk '$NF == "f" {print $(NF-1)}' | tr -d , | head -1)
	echo "uftrace $n $(ns uf.out) ${ufn:-0}" >> rows
done
python3 - rows <<'PY'
import sys
# a run whose target printed no loop time (its runtime died and perun
# stopped it) has t = "-"
rows = []
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) == 3:
        f = [f[0], f[1], "-", f[2]]
    if len(f) == 2:
        f = [f[0], f[1], "-", "0"]
    rows.append(f)
base = {int(r[1]): int(r[2]) for r in rows if r[0] == "untraced"}
cost = {}
print(f"{'what':<18} {'calls':>8} {'ns/call':>9} {'recorded':>10}  {'/bare uprobe':>12} {'/stapbpf count':>14}")
for what, n, t, rec in rows:
    n, t = int(n), (0 if t == "-" else int(t))
    c = (t - base[n]) / n if what != "untraced" and t else 0.0
    cost[(what, n)] = c
for what, n, t, rec in rows:
    n = int(n)
    c = cost[(what, n)]
    u = cost.get(("bare-uprobe", n), 0)
    b = cost.get(("stapbpf-count", n), 0)
    to_u = f"{c / u:.2f}x" if u > 0 and c > 0 and what not in ("untraced", "uftrace") else ""
    to_b = f"{c / b:.2f}x" if b > 0 and c > 0 and what.startswith("perun") else ""
    shown = f"{c:>9.0f}" if c else f"{'died':>9}" if what != "untraced" else f"{0:>9}"
    print(f"{what:<18} {n:>8} {shown} {rec:>10}/{n:<8} {to_u:>12} {to_b:>14}")
PY
