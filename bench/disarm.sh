#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun benchmark of dynamic probing: does disarming a probe lower
# the overhead, on each runtime?  bench/loop.c calls a tiny f() N times and
# times its own loop (loop_ns), so the cost is measured inside the traced
# process.  Rows, per runtime:
#   untraced        the loop alone
#   bare            a hand-written counting script on f's call and return
#                   (stapbpf on the host, a staprun module in the guest)
#   recorded        perun -f f, every call recorded
#   disarm          perun -f f -on dynamic-probing -oa probing-threshold 1000:
#                   f is disarmed after 1000 calls, N - 1000 calls run disarmed
#   reattach        the same with -oa probing-reattach true (first re-arm after
#                   1 ms, doubling)
#   disarm-handler  disarm with the gate in the handler's body instead of the
#                   probe condition (PERUN_PROBING_COND=0): what probe ... if ()
#                   saves (kernel: stap unregisters the probe; bpf: stapbpf
#                   tests the condition first in the handler)
# cost/call = (loop_ns - untraced) / N.  The machine is shared (other jobs,
# CI), so each row is the best (lowest) of REPS runs.
#   bpf:    on this host, with real stapbpf.
#   kernel: in the QEMU guest (tools/stap-vm.sh; TCG, 1 vCPU), modules built on
#           the host; ICOUNT=1 (the default) runs QEMU with -icount shift=0, so
#           the guest clock counts instructions (1 ns = 1 instruction) and only
#           ratios within the guest mean anything.
# Usage: bench/disarm.sh [PERUN]  (REPS=5, N=200000, KN=50000 guest calls,
# RUNTIMES="bpf kernel").  Root; the guest prepared (bash tools/stap-vm.sh prepare).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out="$src/bench/out/disarm"
mkdir -p "$out"
cd "$out"
say() { printf 'bench: %s\n' "$*" >&2; }
if [ $# -gt 0 ]; then
	PERUN=$1
else
	say "building an optimized perun (-O2, no sanitizers) in $out/build"
	. "$src/bench/build.sh"
	bench_build "$src" "$out" || exit 1
fi
export PERUN_DATADIR="$src"
[ -f "$out/build/perun-memlock-shim.so" ] && export PERUN_LIBDIR="$out/build"
REPS=${REPS:-5}
N=${N:-200000}
KN=${KN:-50000}
RUNTIMES=${RUNTIMES:-"bpf kernel"}
ICOUNT=${ICOUNT:-1}
export PERUN_CACHE_DIR="$out/cache"
DP="-on dynamic-probing -oa probing-threshold 1000"
RA="$DP -oa probing-reattach true -oa probing-reattach-ms 1"

cc -O1 -g -o loop "$src/bench/loop.c"
cat > bare.stp <<STP
global calls, returns
probe process("$out/loop").function("f").call { if (pid() == target()) calls++ }
probe process("$out/loop").function("f").return { if (pid() == target()) returns++ }
probe end { printf("bare %d %d\n", calls, returns) }
STP

# the rows of one runtime, written by the guest or the host: WHAT N NS COUNT
cat > rows.sh <<'EOF'
ns() { sed -n 's/^loop_ns \([0-9]*\).*/\1/p' "$1" | tail -1; }
count() {
	python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['trace']['summary'].get('f', {'count': 0})['count'])" "$1" 2>/dev/null || echo 0
}
perun() {	# NAME N OPTIONS...
	name=$1 n=$2
	shift 2
	"$PERUN" collect -c ./loop -a "$n" -o "$name.perf" trace -q -s custom -f f \
		--runtime "$RT" --buffer-size $((2 * n + 1000)) "$@" >"$name.out" 2>"$name.err" || true
	echo "$name $n $(ns "$name.out") $(count "$name.perf")"
}
rows() {	# N
	for rep in $(seq "$REPS"); do
		./loop "$1" >u.out; echo "untraced $1 $(ns u.out) $1"
		bare "$1"
		perun recorded "$1"
		# shellcheck disable=SC2086
		perun disarm "$1" $DP
		# shellcheck disable=SC2086
		perun reattach "$1" $RA
		export PERUN_PROBING_COND=0
		# shellcheck disable=SC2086
		perun disarm-handler "$1" $DP
		unset PERUN_PROBING_COND
	done
}
EOF

table() {	# ROWS TITLE CLOCK
	python3 - "$@" <<'PY'
import sys
rows, title, clock = sys.argv[1:4]
best = {}
for l in open(rows):
    f = l.split()
    if len(f) < 4 or not f[2].isdigit():
        continue
    k = f[0]
    t, c = int(f[2]), int(f[3])
    if k not in best or t < best[k][0]:
        best[k] = (t, c, int(f[1]))
n = best["untraced"][2]
base = best["untraced"][0]
cost = {k: (v[0] - base) / n for k, v in best.items()}
print(f"# {title}")
print(f"# clock: {clock}; f called {n} times; best of the runs")
print(f"# cost/call = (loop time - untraced) / calls, every call, recorded or not;")
print(f"# per disarmed = (cost/call x calls - recorded x recorded's cost/call) / unrecorded calls")
print(f"{'what':<16} {'cost/call':>10} {'recorded':>9} {'vs recorded':>12} {'vs bare':>8} {'per disarmed':>13}")
for k in ["untraced", "bare", "recorded", "disarm", "reattach", "disarm-handler"]:
    if k not in best:
        continue
    vr = f"{cost[k] / cost['recorded']:.2f}x" if k != "untraced" and cost.get("recorded", 0) > 0 else ""
    vb = f"{cost[k] / cost['bare']:.2f}x" if k != "untraced" and cost.get("bare", 0) > 0 else ""
    dis = ""
    if k != "untraced" and best[k][1] < n and "recorded" in cost:
        dis = f"{(cost[k] * n - best[k][1] * cost['recorded']) / (n - best[k][1]):.0f}"
    print(f"{k:<16} {cost[k] if k != 'untraced' else 0:>10.0f} {best[k][1]:>9} {vr:>12} {vb:>8} {dis:>13}")
PY
}

if echo "$RUNTIMES" | grep -qw bpf; then
	command -v stapbpf >/dev/null || { say "no stapbpf"; exit 1; }
	shim=${PERUN_LIBDIR:-$src}/perun-memlock-shim.so
	stap --runtime=bpf -p4 -m bare bare.stp >/dev/null 2>&1
	say "bpf: $REPS x $N calls on the host"
	(
		RT=bpf
		bare() {
			LD_PRELOAD=$shim stapbpf -c "./loop $1" bare.bo >b.out 2>&1 || true
			echo "bare $1 $(ns b.out) $(sed -n 's/^bare \([0-9]*\) .*/\1/p' b.out)"
		}
		. ./rows.sh
		rows "$N"
	) >rows-bpf
	table rows-bpf "bpf runtime (stapbpf $(stap -V 2>&1 | sed -n 's/.*(version \([^/]*\).*/\1/p;q')) on the host, $(uname -r)" \
		"wall-clock ns" | tee table-bpf
fi

if echo "$RUNTIMES" | grep -qw kernel; then
	VM="bash $src/tools/stap-vm.sh"
	REL=$($VM release) || { say "the QEMU guest is not prepared: bash tools/stap-vm.sh prepare"; exit 1; }
	KRT=$($VM runtime --txfix)
	export PERUN_KRUNTIME_DIR="$KRT"
	say "kernel: building the modules for $REL on the host"
	$VM stap --txfix -p4 -m bare bare.stp >/dev/null
	for opts in "" "$DP" "$RA"; do
		# shellcheck disable=SC2086
		"$PERUN" collect -c ./loop trace -q -s custom -f f --buffer-size $((2 * KN + 1000)) \
			$opts --compile-only -r "$REL" >/dev/null
	done
	# shellcheck disable=SC2086
	PERUN_PROBING_COND=0 "$PERUN" collect -c ./loop trace -q -s custom -f f \
		--buffer-size $((2 * KN + 1000)) $DP --compile-only -r "$REL" >/dev/null
	cat > guest.sh <<EOF
set -u
cd "$out"
PERUN="$PERUN" RT=kernel REPS=$REPS DP="$DP" RA="$RA"
bare() {
	staprun -c "./loop \$1" bare.ko >b.out 2>b.err
	echo "bare \$1 \$(ns b.out) \$(sed -n 's/^bare \([0-9]*\) .*/\1/p' b.out)"
}
. ./rows.sh
rows $KN
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
	say "kernel: $REPS x $KN calls in the guest"
	$VM run --rw "$out" --cwd "$out" --timeout 3000 \
		--env PERUN_CACHE_DIR="$PERUN_CACHE_DIR" --env PERUN_KRUNTIME_DIR="$KRT" \
		--env PERUN_DATADIR="$src" --env PERUN_LIBDIR="${PERUN_LIBDIR:-$src}" \
		--env PERUN_STAP=/nonexistent -- /bin/bash "$out/guest.sh" >rows-kernel 2>guest.err || {
		say "the guest run failed:"; cat guest.err >&2; exit 1; }
	table rows-kernel "kernel runtime (staprun, stap 4.8, $REL) in the QEMU guest (TCG, 1 vCPU)" \
		"$clock" | tee table-kernel
fi
