#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Tracing a running service at scale on SystemTap's kernel runtime: attach
# and detach time of perun collect --pid for 100, 1,000 and 2,716 probe
# points (bench/attach.sh section A's generated programs: N/2 functions,
# entry and return probes), in the QEMU guest (tools/stap-vm.sh; this host
# cannot load modules).
#
#   build  on the host, as a build host serving a fleet: perun collect -c
#          PROG --compile-only -r RELEASE --transport print (an attach on the
#          kernel runtime prints) fills the module cache; each build is timed
#          and time-boxed (COMPILE_MAX seconds, default 1800)
#   guest  per size, one guest boot: the program runs, perun collect --pid
#          attaches (a cache hit, no stap in the guest), waits 2 s, and gets
#          Ctrl-C; REPS attaches per size (default 2)
#
# Per attach: perun's "attached ... in N ms" (staprun's start to the probes
# armed: module load, uprobe registration, the first timer), the wall time
# from perun's start to that line (perun's own preparation too), the detach
# (SIGINT to staprun's end: the end probe, the uprobes unregistered, the
# module unloaded; header.attach.detach_s) and the wall time from Ctrl-C to
# perun's exit (the profile written too), and the detach perun expected.
#
#   sh bench/kernel-attach.sh [RESULTS_FILE]
#   PHASES=build sh bench/kernel-attach.sh     only the host builds
#   PHASES=guest SIZES="100 1000" sh bench/kernel-attach.sh FILE
#
# The programs call each function once a second (bench/attach.sh: every 10
# ms): at ~10 us per uprobe hit under TCG, 2,716 probes every 10 ms would
# keep the guest's one vCPU busy and time the hits, not the attach.
# Times are wall clock on a shared host; the file says how busy it was.
# Needs root, stap, and 'bash tools/stap-vm.sh prepare' done.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
res=${1:-$src/bench/results/kernel-attach-$(date +%Y-%m-%d).txt}
case $res in /*) ;; *) res=$(pwd)/$res ;; esac
SIZES=${SIZES:-"100 1000 2716"}
REPS=${REPS:-2}
PHASES=${PHASES:-"build guest"}
COMPILE_MAX=${COMPILE_MAX:-1800}
phase() { case " $PHASES " in *" $1 "*) return 0;; esac; return 1; }
out="$src/bench/out/kernel-attach"
mkdir -p "$out"
cd "$out"
say() { echo "$*" | tee -a "$res"; }
note() { printf 'bench: %s\n' "$*" >&2; }
VM="bash $src/tools/stap-vm.sh"
REL=$($VM release) || { note "the QEMU guest is not prepared: bash tools/stap-vm.sh prepare"; exit 1; }
RT=$($VM runtime --txfix)
export PERUN_CACHE_DIR="$out/cache" PERUN_KRUNTIME_DIR="$RT"
. "$src/bench/build.sh"
if phase build || [ ! -x "$out/build/perun" ]; then
	note "building an optimized perun (-O2, no sanitizers) in $out/build"
	bench_build "$src" "$out" || exit 1
fi
PERUN="$out/build/perun"
export PERUN_DATADIR="$src" PERUN_LIBDIR="$out/build"

# A program of $1 functions benchfn_0... that calls each once a second
gen() {
	python3 - "$1" >"prog$1.c" <<'PY'
import sys
n = int(sys.argv[1])
print("#include <unistd.h>")
for i in range(n):
    print("__attribute__((noinline)) int benchfn_%d(int x) { return x + %d; }" % (i, i))
print("int main(void) { volatile int s = 0; for (;;) {")
for i in range(n):
    print(" s += benchfn_%d(s);" % i)
print(" sleep(1); } }")
PY
	cc -O1 -g -o "prog$1" "prog$1.c"
}

machine() {
	ci="no CI run (the load is other jobs on the shared host)"
	[ -f /tmp/ci-run.log ] && ! grep -q '^rc=' /tmp/ci-run.log && ci="a CI run going on"
	echo "load: $(uptime | sed 's/.*load average/load average/'); $ci"
}

if phase build; then
	: >builds
	say "# bench/kernel-attach.sh build $(date -u '+%Y-%m-%d %H:%M UTC'), host $(uname -r), $(nproc) CPUs, modules for $REL"
	say "# $(machine)"
	for n in $SIZES; do
		f=$((n / 2))
		gen $f
		t0=$(date +%s.%N)
		rc=0
		timeout "$COMPILE_MAX" "$PERUN" collect -c "./prog$f" trace -s userspace \
			--include '^benchfn_' --transport print --compile-only -r "$REL" \
			>"key$n" 2>"build$n.err" || rc=$?
		t1=$(date +%s.%N)
		ko=$(find "$PERUN_CACHE_DIR/modules/$(cut -d' ' -f1 "key$n" 2>/dev/null)" -name '*.ko' \
			2>/dev/null | head -n1)
		kb=$([ -n "$ko" ] && echo $(($(stat -c %s "$ko") / 1024)) || echo -)
		secs=$(python3 -c "print(round($t1 - $t0, 1))")
		echo "$n $secs $rc $kb" >>builds
		say "# build $n probe points: $secs s, exit $rc$([ "$rc" = 124 ] && echo " (time box of $COMPILE_MAX s reached)"), module $kb KiB; $(machine)"
	done
fi

if phase guest; then
	say ""
	say "# bench/kernel-attach.sh guest $(date -u '+%Y-%m-%d %H:%M UTC'), guest $REL (QEMU TCG, 1 vCPU, 1 GiB), host $(uname -r), $(nproc) CPUs"
	say "# $(machine)"
	say "| probe points | module build s | attach ms (staprun start to armed) | perun start to \"attached\" s | detach s (SIGINT to staprun end) | Ctrl-C to perun exit s | expected detach s | exit | cache hit |"
	say "|---|---|---|---|---|---|---|---|---|"
	for n in $SIZES; do
		f=$((n / 2))
		build=$(awk -v n="$n" '$1 == n { print $2 ($3 == 0 ? "" : " (exit " $3 ")") }' builds 2>/dev/null)
		[ -x "prog$f" ] || gen $f
		cat >"guest$n.sh" <<EOF
set -u
cd "$out"
mkdir -p /run/tmp
export TMPDIR=/run/tmp
./prog$f & pid=\$!
sleep 1
for rep in \$(seq $REPS); do
	rm -f a.err
	t0=\$(date +%s.%N)
	"$PERUN" collect --pid \$pid -o a$n.perf trace -s userspace --include '^benchfn_' \\
		--runtime kernel 2>a.err &
	pp=\$!
	until grep -q "^perun: attached" a.err 2>/dev/null; do
		kill -0 \$pp 2>/dev/null || break
		sleep 0.05
	done
	t1=\$(date +%s.%N)
	sleep 2
	t2=\$(date +%s.%N)
	kill -INT \$pp
	wait \$pp
	rc=\$?
	t3=\$(date +%s.%N)
	cp a.err a$n-\$rep.err
	am=\$(sed -n 's/^perun: attached .* in \([0-9]*\) ms.*/\1/p' a.err)
	est=\$(sed -n 's/.*detaching will take about \([0-9.]*\) s.*/\1/p' a.err)
	ds=\$(python3 -c "import json; print(round(json.load(open('a$n.perf'))['header']['attach']['detach_s'], 2))" 2>/dev/null)
	hit=\$(grep -c "module cache: hit" a.err)
	echo "row $n \$rep \${am:--} \$(python3 -c "print(round(\$t1 - \$t0, 2))") \${ds:--} \$(python3 -c "print(round(\$t3 - \$t2, 2))") \${est:--} \$rc \$hit"
done
kill \$pid
EOF
		t0=$(date +%s)
		$VM run --rw "$out" --cwd "$out" --timeout 1800 \
			--env PERUN_CACHE_DIR="$PERUN_CACHE_DIR" --env PERUN_KRUNTIME_DIR="$RT" \
			--env PERUN_DATADIR="$src" --env PERUN_LIBDIR="$out/build" \
			--env PERUN_STAP=/nonexistent -- /bin/bash "$out/guest$n.sh" >"rows$n" \
			2>"guest$n.err" || note "guest run for $n failed (exit $?): see $out/guest$n.err"
		note "guest run for $n probe points: $(( $(date +%s) - t0 )) s"
		while read -r _ _ rep am ws ds wd est rc hit; do
			say "| $n | ${build:--} | $am | $ws | $ds | $wd | $est | $rc | $([ "$hit" = 1 ] && echo yes || echo no) |"
		done <<EOF
$(grep '^row ' "rows$n" || true)
EOF
		grep -q '^row ' "rows$n" || say "| $n | ${build:--} | - | - | - | - | - | failed | - |"
	done
	say "# $(machine) (at the end)"
fi
