#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun benchmark of the kernel runtime: per-call cost of a tiny
# function called 20k and 200k times under SystemTap's kernel runtime, in the
# QEMU guest (tools/stap-vm.sh; this host cannot load modules), against a
# bare counting module (a hand-written call+return count) in the same boot.
# Rows: untraced, bare-module, perun --transport print, perun --transport
# record, perun --aggregate.  The modules are built on the host (stap -r
# RELEASE -R the patched runtime, as perun's --compile-only does for fleets);
# the guest runs them from the shared cache with PERUN_STAP pointing nowhere.
# The target times its own loop (bench/loop.c), so the cost is measured
# inside the traced process; every ratio is within one guest boot.
# Two clocks: ICOUNT=1 (the default) boots QEMU with -icount shift=0, so the
# guest's clock advances one ns per guest instruction: costs are then guest
# instructions per call, the same to 0.1 % from run to run whatever else the
# host runs (this machine is shared: wall-clock TCG costs vary 3x between
# identical runs).  ICOUNT=0 measures wall-clock time in the TCG guest.
# Run as root after 'bash tools/stap-vm.sh prepare'.
# Usage: bench/kernel.sh [PERUN]   (REPS=3 runs of each row per size)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out="$src/bench/out/kernel"
mkdir -p "$out"
cd "$out"
say() { printf 'bench: %s\n' "$*" >&2; }
if [ $# -gt 0 ]; then
	PERUN=$1
else
	# as bench/run.sh: an optimized perun (-O2, no sanitizers); on the guest's
	# one vCPU, perun's own reading competes with the traced program
	say "building an optimized perun (-O2, no sanitizers) in $out/build"
	. "$src/bench/build.sh"
	bench_build "$src" "$out" || exit 1
fi
export PERUN_DATADIR="$src" PERUN_LIBDIR="$out/build"
REPS=${REPS:-3}
ICOUNT=${ICOUNT:-1}
SIZES=${SIZES:-"20000 200000"}
VM="bash $src/tools/stap-vm.sh"
REL=$($VM release) || { say "the QEMU guest is not prepared: bash tools/stap-vm.sh prepare"; exit 1; }
RT=$($VM runtime --txfix)
# the record transport keeps every event of the largest run (2 per call)
BUF=$((2 * 200000 + 1000))
export PERUN_CACHE_DIR="$out/cache" PERUN_KRUNTIME_DIR="$RT"

cc -O1 -g -o loop "$src/bench/loop.c"
cat > bare.stp <<STP
global calls, returns
probe process("$out/loop").function("f").call { if (pid() == target()) calls++ }
probe process("$out/loop").function("f").return { if (pid() == target()) returns++ }
probe end { printf("bare %d %d\n", calls, returns) }
STP
say "building the modules for $REL on the host"
$VM stap --txfix -p4 -m bare bare.stp >/dev/null
for mode in "--transport print" "--transport record" "--aggregate"; do
	# shellcheck disable=SC2086
	"$PERUN" collect -c ./loop trace -q -s custom -f f $mode --buffer-size $BUF \
		--compile-only -r "$REL" >/dev/null
done

cat > guest.sh <<EOF
set -u
cd "$out"
ns() { sed -n 's/^loop_ns \([0-9]*\).*/\1/p' "\$1" | tail -1; }
count() {
	python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['trace']['summary'].get('f', {'count': 0})['count'])" "\$1" 2>/dev/null || echo 0
}
perun() {
	"$PERUN" collect -c ./loop -a \$1 -o \$2.perf trace -q -s custom -f f --runtime kernel \\
		--buffer-size $BUF \$3 >\$2.out 2>\$2.err
	rc=\$?
	echo "\$2 \$1 \$(ns \$2.out) \$(count \$2.perf) \$rc"
}
echo "guest \$(uname -r)" >&2
for rep in \$(seq $REPS); do
	for n in $SIZES; do
		./loop \$n >u.out; echo "untraced \$n \$(ns u.out) \$n"
		staprun -c "./loop \$n" bare.ko >b.out 2>b.err
		echo "bare-module \$n \$(ns b.out) \$(sed -n 's/^bare \([0-9]*\) .*/\1/p' b.out)"
		perun \$n perun-print "--transport print"
		perun \$n perun-record "--transport record"
		perun \$n perun-aggregate --aggregate
	done
done
EOF
if [ "$ICOUNT" = 1 ]; then
	printf '#!/bin/sh\nexec %s "$@" -icount shift=0\n' "${STAP_VM_QEMU:-qemu-system-x86_64}" \
		>qemu-icount
	chmod +x qemu-icount
	export STAP_VM_QEMU="$out/qemu-icount"
	clock="guest instructions (QEMU -icount shift=0: 1 ns = 1 instruction)"
else
	clock="wall-clock ns in the TCG guest (noisy on a shared host)"
fi
say "running $REPS x ($SIZES) in the guest; clock: $clock"
t0=$(date +%s)
$VM run --rw "$out" --cwd "$out" --timeout 1800 \
	--env PERUN_CACHE_DIR="$PERUN_CACHE_DIR" --env PERUN_KRUNTIME_DIR="$RT" \
	--env PERUN_DATADIR="$src" --env PERUN_LIBDIR="$out/build" \
	--env PERUN_STAP=/nonexistent -- /bin/bash "$out/guest.sh" >rows 2>guest.err || {
	say "the guest run failed:"; cat guest.err >&2; exit 1; }
say "guest run: $(( $(date +%s) - t0 )) s"
python3 - rows "$REL" "$clock" <<'PY'
import statistics, sys
runs = {}
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) < 4 or not f[2].isdigit():
        continue
    runs.setdefault((f[0], int(f[1])), []).append((int(f[2]), int(f[3])))
order = ["untraced", "bare-module", "perun-print", "perun-record", "perun-aggregate"]
sizes = sorted({n for _, n in runs})
print(f"# kernel runtime {sys.argv[2]} in the QEMU guest (TCG, 1 vCPU), one boot")
print(f"# clock: {sys.argv[3]}")
print(f"# cost/call = (loop time - untraced) / calls: median of the runs (min-max)")
print(f"{'what':<16} {'calls':>7} {'cost/call':>9} {'range':>15} {'recorded':>15}  ratio to bare module")
for n in sizes:
    base = statistics.median(t for t, _ in runs[("untraced", n)])
    cost = {}
    for what in order:
        r = runs.get((what, n))
        if not r:
            continue
        c = [(t - base) / n for t, _ in r]
        cost[what] = (statistics.median(c), min(c), max(c), min(k for _, k in r))
    for what in order:
        if what not in cost:
            continue
        med, lo, hi, rec = cost[what]
        bare = cost.get("bare-module", (0,))[0]
        ratio = f"{med / bare:.2f}x" if what.startswith("perun") and bare > 0 else ""
        rng = f"{lo:.0f}-{hi:.0f}" if what != "untraced" else ""
        print(f"{what:<16} {n:>7} {med if what != 'untraced' else 0:>9.0f} {rng:>15} "
              f"{rec:>7}/{n:<7}  {ratio}")
PY
