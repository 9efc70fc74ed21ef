#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Tracing a running service at scale: perun's own loader (uprobe_multi links
# bound to the process, a ring buffer) side by side with stapbpf (through
# perun --loader stapbpf) and bpftrace, in one run.
#
#   A. attach and detach time for 100, 1,000 and 2,716 probe points (a
#      generated program of N/2 functions, entry and return probes), and
#      every function of python3.11d; stapbpf and bpftrace up to
#      OTHERS_MAX points (default 1000: they take ~0.1 s per point to detach)
#   B. the slowdown of an untraced twin of the traced binary
#   C. a trace of a service at a steady rate for DURATION seconds (default
#      600): events, lost events, peak memory of perun and of its loader,
#      and the ring buffer (the kernel memory, fixed)
#   D. the thesis' CPython case: perun collect -c python3.11d -w sort.py
#      trace -s userspace -op basic, end to end
#   E. new processes of a traced binary: the start-up of `python3.11d -c
#      pass` alone, and while perun's loader holds every function of another
#      python3.11d (22,640 points; with stapbpf each new process spent
#      seconds in the kernel getting breakpoints it filters out)
#
#   sh bench/attach.sh [RESULTS_FILE]
#   DURATION=60 OTHERS_MAX=100 sh bench/attach.sh     a shorter run
#   SECTIONS="C" sh bench/attach.sh FILE               only the steady trace
#
# Times are wall clock on this machine; say how busy it was (uptime is
# printed).  Needs root, stap, bpftrace, python3.11-dbg.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/bench/results/attach-$(date +%Y-%m-%d).txt}
DURATION=${DURATION:-600}
OTHERS_MAX=${OTHERS_MAX:-1000}
SECTIONS=${SECTIONS:-A B C D E}
section() { case " $SECTIONS " in *" $1 "*) return 0;; esac; return 1; }
work=$(mktemp -d /tmp/perun-bench-attach.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
. "$src/bench/build.sh"
bench_build "$src" "$work"
export PERUN_CACHE_DIR="$work/cache"
cd "$work"
exec 3>&1
say() { echo "$*" | tee -a "$out" >&3; }
: >"$out"
say "# bench/attach.sh $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs"
say "# load: $(uptime | sed 's/.*load average/load average/')"

# A program of $1 functions benchfn_0... that calls each once every 10 ms
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
print(" usleep(10000); } }")
PY
	cc -O1 -g -o "prog$1" "prog$1.c"
}

# Waits up to 600 s for a line matching $2 in $1.
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 6000 ] || return 1; sleep 0.1
	done
}

now() { date +%s.%N; }

# perun collect --pid on process $1 with trace options $2...: prints
# "ATTACH_MS DETACH_MS" from what perun says
perun_attach() {
	p=$1; shift
	rm -f pa.err
	"$PERUN" collect --pid "$p" -o pa.perf trace -s userspace "$@" 2>pa.err &
	pp=$!
	wait_for pa.err "^perun: attached" || { cat pa.err >&2; return 1; }
	sleep 1
	kill -INT $pp; wait $pp || true
	a=$(sed -n 's/^perun: attached .* in \([0-9]*\) ms.*/\1/p' pa.err)
	d=$(sed -n 's/^perun: detached .* in \([0-9]*\) ms/\1/p' pa.err)
	echo "$a $d"
}

# stapbpf through perun on process $1: "ARM_S DETACH_S" (arm: stapbpf's start
# to its probes armed, from the profile; detach: Ctrl-C to perun's end)
stapbpf_attach() {
	p=$1; shift
	rm -f sa.err
	# the first run compiles the module into the cache; the second is measured
	"$PERUN" collect --pid "$p" -o sa.perf trace -s userspace --loader stapbpf -t 1 "$@" \
		2>/dev/null || true
	"$PERUN" collect --pid "$p" -o sa.perf trace -s userspace --loader stapbpf "$@" 2>sa.err &
	pp=$!
	wait_for sa.err "attached\|tracing" || return 1
	# armed: the raw stream said r (perun prints nothing until the end)
	while ! grep -q "^r$" "$TMPDIR"/perun-collect-*/trace.raw 2>/dev/null; do
		kill -0 $pp 2>/dev/null || { cat sa.err >&2; return 1; }
		sleep 0.1
	done
	sleep 1
	t0=$(now); kill -INT $pp; wait $pp || true; t1=$(now)
	arm=$(python3 -c "import json; print(round(json.load(open('sa.perf'))['trace']['timing']['arm_s'], 2))")
	echo "$arm $(python3 -c "print(round($t1 - $t0, 2))")"
}

# bpftrace -p on process $1 binary $2: "ATTACH_S DETACH_S"
bpftrace_attach() {
	rm -f bt.out
	t0=$(now)
	# bpftrace loads one program per probe point, and refuses more than 512
	# probes or programs by default
	BPFTRACE_MAX_PROBES=100000 BPFTRACE_MAX_BPF_PROGS=100000 bpftrace -p "$1" -e "BEGIN { printf(\"armed\\n\"); } uprobe:$2:benchfn_* { @[probe] = count(); } uretprobe:$2:benchfn_* { @r[probe] = count(); }" >bt.out 2>&1 &
	bp=$!
	while ! grep -q armed bt.out 2>/dev/null; do
		kill -0 $bp 2>/dev/null || { cat bt.out >&2; return 1; }
		sleep 0.1
	done
	t1=$(now)
	sleep 1
	kill -INT $bp; wait $bp || true; t2=$(now)
	python3 -c "print(round($t1 - $t0, 2), round($t2 - $t1 - 1, 2))"
}

export TMPDIR="$work/tmp"; mkdir -p "$TMPDIR"
if section A; then
say ""
say "## A. attach and detach (perun: its own numbers; others: wall clock)"
say "| probe points | perun attach ms | perun detach ms | stapbpf arm s | stapbpf detach s | bpftrace attach s | bpftrace detach s |"
say "|---|---|---|---|---|---|---|"
for n in 100 1000 2716; do
	f=$((n / 2))
	gen $f
	"./prog$f" & pid=$!
	sleep 0.3
	r=$(perun_attach $pid --include '^benchfn_' || echo "- -")
	pa=${r% *} pd=${r#* }
	sa=- sd=- ba=- bd=-
	if [ "$n" -le "$OTHERS_MAX" ]; then
		r=$(stapbpf_attach $pid --include '^benchfn_' || echo "- -")
		sa=${r% *} sd=${r#* }
		r=$(bpftrace_attach $pid "$work/prog$f" || echo "- -")
		ba=${r% *} bd=${r#* }
	fi
	kill $pid; wait $pid 2>/dev/null || true
	say "| $n | $pa | $pd | $sa | $sd | $ba | $bd |"
done
if [ -x /usr/bin/python3.11d ]; then
	python3.11d -c 'import time; time.sleep(3600)' & pid=$!
	sleep 1
	r=$(perun_attach $pid || echo "- -")
	pts=$(sed -n 's/^perun: attached \([0-9]*\) of .*/\1/p' pa.err)
	say "| $pts (every function of python3.11d) | ${r% *} | ${r#* } | - | - | - | - |"
	kill $pid; wait $pid 2>/dev/null || true
fi

fi

cc -O1 -g -pthread -o service "$src/tests/fixtures/service.c"
mkfifo in; ./service <in >sout & spid=$!; exec 4>in
twin() { ./service --bench 2000000 | sed -n 's/^bench 2000000 ns //p'; }

if section B; then
say ""
say "## B. an untraced twin of the traced binary (2,000,000 calls, its own clock)"
base=$(twin)
rm -f pa.err
"$PERUN" collect --pid $spid -o b1.perf trace -s custom -f handle -f parse -f reply 2>pa.err & pp=$!
wait_for pa.err "^perun: attached"
own=$(twin)
kill -INT $pp; wait $pp || true
"$PERUN" collect --pid $spid -o b2.perf trace -s custom -f handle -f parse -f reply --loader stapbpf -t 1 2>/dev/null || true
rm -f sa.err
"$PERUN" collect --pid $spid -o b2.perf trace -s custom -f handle -f parse -f reply --loader stapbpf 2>sa.err & pp=$!
while ! grep -q "^r$" "$TMPDIR"/perun-collect-*/trace.raw 2>/dev/null; do
	kill -0 $pp 2>/dev/null || break
	sleep 0.1
done
stb=$(twin)
kill -INT $pp; wait $pp || true
say "| twin alone | with perun's loader attached to its sibling | with stapbpf attached |"
say "|---|---|---|"
say "| $base ns | $own ns ($(python3 -c "print(round($own / $base, 2))")x) | $stb ns ($(python3 -c "print(round($stb / $base, 1))")x) |"

fi

if section C; then
say ""
say "## C. $DURATION s of a service at a steady rate (perun's loader)"
rm -f pa.err
"$PERUN" collect --pid $spid -o c.perf trace -s custom -f handle -f parse -f reply 2>pa.err & pp=$!
wait_for pa.err "^perun: attached"
lp=$(pgrep -f "perun-uprobes .*$work" | head -1)
hwm() { v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null); echo "${v:-0}"; }
end=$(( $(date +%s) + DURATION )); sent=0; mp=0; ml=0
while [ "$(date +%s)" -lt "$end" ]; do
	echo 2000 >&4; sent=$((sent + 2000))
	sleep 0.1
	v=$(hwm $pp); [ "$v" -gt "$mp" ] && mp=$v
	v=$(hwm "$lp"); [ "$v" -gt "$ml" ] && ml=$v
done
echo 0 >&4; sleep 1
kill -INT $pp; wait $pp || true
python3 - c.perf "$sent" "$mp" "$ml" "$DURATION" <<'PY' | tee -a "$out"
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
sent, mp, ml, dur = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
print("| requests sent | handle calls recorded | events | lost | peak RSS perun | peak RSS loader | kernel ring |")
print("|---|---|---|---|---|---|---|")
print("| %d in %.0f s | %d | %d | %d | %.1f MiB | %.1f MiB | 32 MiB (fixed) |" % (
    sent, dur, t["summary"]["handle"]["count"], t["events"], t["anomalies"]["lost_events"],
    mp / 1024, ml / 1024))
PY
fi
echo quit >&4; exec 4>&-; wait $spid || true

if section D; then
say ""
say "## D. perun collect -c python3.11d -w sort.py trace -s userspace -op basic"
cat >sort.py <<'PY'
import random
random.seed(42)
def qsort(a):
    if len(a) <= 1:
        return a
    p = a[len(a) // 2]
    return qsort([x for x in a if x < p]) + [x for x in a if x == p] + qsort([x for x in a if x > p])
print(len(qsort([random.randint(0, 100000) for _ in range(3000)])))
PY
if [ -x /usr/bin/python3.11d ]; then
	t0=$(now); rc=0
	"$PERUN" collect -c /usr/bin/python3.11d -w sort.py -o d.perf trace -s userspace -op basic \
		>/dev/null 2>d.err || rc=$?
	t1=$(now)
	python3 - d.perf "$rc" "$(python3 -c "print(round($t1 - $t0, 1))")" <<'PY' | tee -a "$out"
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
print("| exit | wall s | probe points | events | lost | complete |")
print("|---|---|---|---|---|---|")
print("| %s | %s | %d | %d | %d | %s |" % (sys.argv[2], sys.argv[3], t["probes"], t["events"],
      t["anomalies"]["lost_events"], t["complete"]))
PY
fi
fi
if section E && [ -x /usr/bin/python3.11d ]; then
say ""
say "## E. new processes of the binary while perun is attached to one (python3.11d -c pass, wall ms, median of 9)"
startup() {
	for i in 1 2 3 4 5 6 7 8 9; do
		t0=$(now); /usr/bin/python3.11d -c pass; t1=$(now)
		python3 -c "print(round(($t1 - $t0) * 1000, 1))"
	done | sort -n | sed -n 5p
}
alone=$(startup)
python3.11d -c 'import time; time.sleep(3600)' & pid=$!
sleep 1
rm -f pa.err
"$PERUN" collect --pid $pid -o e.perf trace -s userspace 2>pa.err & pp=$!
wait_for pa.err "^perun: attached"
pts=$(sed -n 's/^perun: attached \([0-9]*\) of .*/\1/p' pa.err)
during=$(startup)
kill -INT $pp; wait $pp || true
kill $pid; wait $pid 2>/dev/null || true
say "| probe points on the traced python3.11d | a new python3.11d alone | while attached |"
say "|---|---|---|"
say "| $pts | $alone ms | $during ms ($(python3 -c "print(round($during / $alone, 2))")x) |"
fi
say ""
say "# load at the end: $(uptime | sed 's/.*load average/load average/')"
