#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: probes that used to attach silently to nothing.  Binaries without
# DWARF, a static binary, libc aliases, an IFUNC, C++ overloads, a path with
# spaces; "attached A of P probes"; exit 1 when nothing attached or a named
# function recorded no call.  Counts (--aggregate) are checked against the
# program's own count and against bpftrace on the same run.
. "$SRCDIR/tests/lib.sh"
require_live

N=40
# hard links for paths with spaces go under $TMPDIR: keep them in the trash
TMPDIR=$TRASH
export TMPDIR

# Count of one function in a profile, or 0.
count_of() {
	python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["trace"]["summary"]
print(s[sys.argv[2]]["count"] if sys.argv[2] in s else 0)
PY
}

# Runs bpftrace counting $2 (uprobe list) for processes named $1 while the
# command after them runs; the counts go to bt.out.
with_bpftrace() {
	comm=$1 probes=$2
	shift 2
	bpftrace -e "$probes /comm == \"$comm\"/ { @[probe] = count(); }" >bt.out 2>&1 &
	bt=$!
	for i in $(seq 150); do grep -q Attaching bt.out && break; sleep 0.1; done
	sleep 1
	"$@"
	rc=$?
	bpftrace_stop $bt
	cat bt.out
	return $rc
}

bt_count() { sed -n "s/^@\[uprobe:[^]]*:$1\]: //p" bt.out; }

# Nothing of this test's own runs is left: no process from $TRASH, no
# uprobe event on a file in $TRASH (other runs on the machine are not ours).
assert_own_nothing_left() {
	sleep 1
	if [ -n "$(procs_in_trash)" ]; then
		echo "target left:"; procs_in_trash; return 1
	fi
	for ev in /sys/kernel/tracing/uprobe_events /sys/kernel/debug/tracing/uprobe_events; do
		if [ -r "$ev" ] && grep -F "$TRASH/" "$ev"; then
			echo "uprobe events left in $ev"; return 1
		fi
	done
}

test_expect_success 'build the fixtures (no -g, static, C++)' '
	cc -O1 -o pnog "$FIXTURES/probes.c" -lm &&
	cc -O1 -static -o pstatic "$FIXTURES/probes.c" -lm &&
	c++ -g -O1 -o overloads "$FIXTURES/overloads.cc" &&
	c++ -O1 -o overloads-nog "$FIXTURES/overloads.cc" &&
	mkdir "my dir" && cp pnog "my dir/app" &&
	! readelf -S pnog | grep -q debug_info
'

test_expect_success 'no -g: -f work attaches through the symbol table, counts equal bpftrace' '
	with_bpftrace pnog "uprobe:$TRASH/pnog:work" \
		"$PERUN" collect -c ./pnog -a $N -o nog.perf trace -s custom -f work --aggregate \
		>out 2>err &&
	cat err &&
	grep "attached 2 of 2 probe points" err &&
	grep "probes done $N" out &&
	test "$(count_of nog.perf work)" = $N &&
	test "$(bt_count work)" = $N &&
	test "$(profile_field nog.perf collector_info.probes.attached)" = 2 &&
	test "$(profile_field nog.perf collector_info.probes.planned)" = 2 &&
	test "$(profile_field nog.perf collector_info.probes.failed)" = "[]"
'

test_expect_success 'no -g: the userspace strategy records its functions' '
	"$PERUN" collect -c ./pnog -a $N -o nogu.perf trace -s userspace --aggregate >out 2>err &&
	cat err &&
	grep "attached" err &&
	! grep "not attached" err &&
	test "$(count_of nogu.perf work)" = $N &&
	test "$(count_of nogu.perf main)" = 1
'

test_expect_success 'static binary: work, malloc and the IFUNC cos, counts equal bpftrace' '
	with_bpftrace pstatic "uprobe:$TRASH/pstatic:work,uprobe:$TRASH/pstatic:malloc" \
		"$PERUN" collect -c ./pstatic -a $N -o st.perf trace -s custom -f work -f malloc \
		-f cos --aggregate >out 2>err &&
	cat err &&
	grep "cos is an IFUNC: probing its implementations" err &&
	! grep "not attached" err &&
	test "$(count_of st.perf work)" = $N &&
	test "$(bt_count work)" = $N &&
	test "$(count_of st.perf malloc)" = "$(bt_count malloc)" &&
	python3 - st.perf $N <<-\PY
	import json, sys
	s = json.load(open(sys.argv[1]))["trace"]["summary"]
	cos = sum(v["count"] for k, v in s.items() if "cos" in k)
	assert cos == int(sys.argv[2]), s
	PY
'

# A static binary links libgcc's unwinder (_Unwind_ForcedUnwind) and
# glibc's landing pads (puts releases the stdio lock in one when a
# cancellation unwinds through it): a function whose returns cannot all be
# found (puts here) is counted at entry only, since a uretprobe would make
# that unwind skip the landing pad.
test_expect_success 'static binary: userspace with --include attaches everything it plans' '
	"$PERUN" collect -c ./pstatic -a 5 -o stu.perf trace -s userspace \
		--include "^(work|main|malloc|free|puts)$" --aggregate >out 2>err &&
	cat err &&
	grep "attached 9 of 9 probe points" err &&
	grep "pstatic unwinds its stack through landing pads (.*): 1 function counted at entry only" err &&
	test "$(count_of stu.perf work)" = 5 &&
	test "$(count_of stu.perf puts)" = 5
'

# bpftrace on libc counts every process on the machine unless it runs the
# command itself (-c): the fixture is deterministic, so an identical run
# under bpftrace gives the counts to compare with.
test_expect_success 'libc#malloc, libc#free, libc#puts, libm#sqrt (aliases), libm#cos (IFUNC)' '
	lc=$(ldd ./pnog | sed -n "s/.*libc.so.6 => \([^ ]*\).*/\1/p") &&
	lc=$(readlink -f "$lc") &&
	bpftrace -c "./pnog $N" -e "uprobe:$lc:malloc,uprobe:$lc:free,uprobe:$lc:puts /pid == cpid/ { @[probe] = count(); }" >bt.out 2>&1 &&
	cat bt.out &&
	"$PERUN" collect -c ./pnog -a $N -o libs.perf trace -s custom -f libc#malloc \
		-f libc#free -f libc#puts -f libm#sqrt -f libm#cos --aggregate >out 2>err &&
	cat err &&
	grep "attached 10 of 10 probe points" err &&
	grep "cos is an IFUNC: probing the implementation this CPU uses" err &&
	profile_counts libs.perf &&
	for f in malloc free puts; do
		test "$(count_of libs.perf $f)" = "$(bt_count $f)" || exit 1
	done &&
	test "$(count_of libs.perf free)" = $N &&
	test "$(count_of libs.perf puts)" = $N &&
	test "$(count_of libs.perf sqrt)" = $N &&
	test "$(count_of libs.perf cos)" = $N
'

test_expect_success 'a C++ name without parameters probes every overload' '
	"$PERUN" collect -c ./overloads -o ovl.perf trace -s custom -f Counter::bump \
		--aggregate >out 2>err &&
	cat err &&
	grep "names 3 functions" err &&
	grep "attached 6 of 6 probe points" err &&
	test "$(count_of ovl.perf "Counter::bump(int)")" = 100 &&
	test "$(count_of ovl.perf "Counter::bump(long)")" = 200 &&
	test "$(count_of ovl.perf "Counter::bump(double)")" = 300
'

test_expect_success 'one overload when named with its parameters; no -g C++ too' '
	"$PERUN" collect -c ./overloads -o ovl1.perf trace -q -s custom \
		-f "Counter::bump(long)" --aggregate &&
	profile_counts ovl1.perf >actual &&
	echo "Counter::bump(long) 200" >expect &&
	test_cmp expect actual &&
	"$PERUN" collect -c ./overloads-nog -o ovl2.perf trace -q -s custom -f Counter::bump \
		--aggregate &&
	profile_counts ovl2.perf >actual &&
	printf "%s\n" "Counter::bump(double) 300" "Counter::bump(int) 100" \
		"Counter::bump(long) 200" >expect &&
	test_cmp expect actual
'

test_expect_success 'exceptions: uretprobes (stapbpf) abort the target, perun says --entry-only' '
	"$PERUN" collect -c ./overloads -o ex1.perf trace -s custom -f middle --aggregate \
		--loader stapbpf >out 2>err || echo $? >rc &&
	cat err &&
	test "$(cat rc)" = 134 &&
	grep "uses C++ exceptions" err &&
	grep "trace with --entry-only" err
'

test_expect_success 'exceptions: perun loader probes return instructions, the target completes' '
	"$PERUN" collect -c ./overloads -o ex0.perf trace -s custom -f middle --aggregate \
		>out 2>err &&
	cat err out &&
	grep "caught 10" out &&
	test "$(count_of ex0.perf "middle(int)")" = 50 &&
	grep "^perun: 10 calls are counted without a duration: 10 unwound past" err
'

test_expect_success 'exceptions: --entry-only counts every call and the target completes' '
	"$PERUN" collect -c ./overloads -o ex2.perf trace -s custom -f middle -f thrower \
		--entry-only --aggregate >out 2>err &&
	cat err out &&
	grep "caught 10" out &&
	grep "attached 2 of 2 probe points" err &&
	test "$(count_of ex2.perf "middle(int)")" = 50 &&
	test "$(count_of ex2.perf "thrower(int)")" = 50 &&
	test "$(profile_field ex2.perf collector_info.params.entry_only)" = true
'

test_expect_success 'exceptions: userspace on stapbpf goes entry-only by itself and says so' '
	"$PERUN" collect -c ./overloads -o ex3.perf trace -s userspace --aggregate \
		--loader stapbpf >out 2>err &&
	cat err &&
	grep "caught 10" out &&
	grep "uses C++ exceptions: counting entries only" err &&
	test "$(count_of ex3.perf "middle(int)")" = 50
'

test_expect_success 'exceptions: userspace on perun'"'"'s loader times the calls that return' '
	"$PERUN" collect -c ./overloads -o ex4.perf trace -s userspace --aggregate >out 2>err &&
	cat err &&
	grep "caught 10" out &&
	! grep "counting entries only" err &&
	test "$(count_of ex4.perf "middle(int)")" = 50 &&
	test "$(profile_field ex4.perf collector_info.params.entry_only)" = false &&
	grep "^perun: 20 calls are counted without a duration: 20 unwound past" err
'

test_expect_success 'a path with spaces is traced' '
	"$PERUN" collect -c "./my dir/app" -a $N -o sp.perf trace -s custom -f work \
		--aggregate >out 2>err &&
	cat err &&
	grep "through the hard link" err &&
	grep "attached 2 of 2 probe points" err &&
	test "$(count_of sp.perf work)" = $N
'

test_expect_success 'nothing attached (-d nosuch.c:2): exit 1, and why' '
	"$PERUN" collect -c ./pnog -a 2 -o none.perf trace -s custom -d nosuch.c:2 >out 2>err &&
	exit 1 || echo $? >rc
	cat err &&
	test "$(cat rc)" = 1 &&
	grep "attached 0 of 1 probe points" err &&
	grep "nosuch.c:2 (.*): no code at that line" err &&
	grep "no probe attached" err &&
	test "$(profile_field none.perf collector_info.probes.attached)" = 0
'

test_expect_success 'a named function with no call: exit 1, and why' '
	"$PERUN" collect -c ./pnog -a 2 -o never.perf trace -s custom -f work -f never \
		--aggregate >out 2>err &&
	exit 1 || echo $? >rc
	cat err &&
	test "$(cat rc)" = 1 &&
	grep "attached 4 of 4 probe points" err &&
	grep "never (.*), named on the command line, recorded no call" err &&
	test "$(count_of never.perf work)" = 2
'

test_expect_success 'a named sampled function with no call: exit 1 (its first call is kept)' '
	test_expect_code 1 "$PERUN" collect -c ./pnog -a 2 -o nevers.perf trace -s custom \
		-f work#10 -f never#10 >out 2>err &&
	cat err &&
	grep "never (.*), named on the command line, recorded no call" err &&
	! grep "work (.*), named on the command line" err
'

test_expect_success 'two programs sharing a build-id keep their own function lists' '
	printf "int alpha(void){return 1;}\nint main(void){return alpha()-1;}\n" >a.c &&
	printf "int beta(void){return 2;}\nint main(void){return beta()-2;}\n" >b.c &&
	id=0x5005000000000000000000000000000000000001 &&
	cc -O0 -Wl,--build-id=$id -o one a.c &&
	cc -O0 -Wl,--build-id=$id -o two b.c &&
	"$PERUN" collect -c ./one trace -s custom -f alpha --script-only >/dev/null &&
	"$PERUN" collect -c ./two trace -s custom -f beta --script-only >/dev/null &&
	ls "$PERUN_CACHE_DIR"/targets/ | grep -c "^5005" >n &&
	test "$(cat n)" = 2
'

test_expect_success 'nothing left behind' 'assert_own_nothing_left'

test_done
