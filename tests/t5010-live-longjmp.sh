#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: a target that longjmps out of traced functions.  A longjmp skips
# the return of every frame it jumps past, so their return probes never
# fire (the kernel drops the stale return instances; the program runs on).
# perun marks targets that import setjmp/longjmp: the userspace strategy
# counts entries only for them, a custom trace with return probes says so
# up front, and the calls that never returned are named per function on
# stderr and in the profile (anomalies.unfinished_by_function): the summary's
# count is the program's own count, no_duration says how many have no time.
. "$SRCDIR/tests/lib.sh"
require_live

N=1000
J=$(( (N + 1) / 2 ))	# jumper(i) jumps for even i

count_of() {
	python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["trace"]["summary"]
print(s[sys.argv[2]]["count"] if sys.argv[2] in s else 0)
PY
}

unfinished_of() {
	python3 - "$1" "$2" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))["trace"]["anomalies"]["unfinished_by_function"]
print(u.get(sys.argv[2], 0))
PY
}

test_expect_success 'build the fixture' '
	cc -g -O1 -o jumps "$FIXTURES/jumps.c" &&
	./jumps $N >out &&
	grep "jumped $J of $N" out
'

test_expect_success 'userspace on stapbpf counts entries only for a longjmp target: exact counts' '
	"$PERUN" collect -c ./jumps -a $N -o j1.perf trace -s userspace --loader stapbpf \
		>out 2>err &&
	cat err &&
	grep "jumped $J of $N" out &&
	grep "uses setjmp/longjmp: counting entries only" err &&
	test "$(count_of j1.perf outer)" = $N &&
	test "$(count_of j1.perf inner)" = $N &&
	test "$(count_of j1.perf jumper)" = $N &&
	test "$(profile_field j1.perf trace.anomalies.unmatched_entries)" = 0
'

test_expect_success 'userspace on perun'"'"'s loader: every call counted, the jumped-over ones without a duration' '
	"$PERUN" collect -c ./jumps -a $N -o j0.perf trace -s userspace >out 2>err &&
	cat err &&
	grep "jumped $J of $N" out &&
	! grep "counting entries only" err &&
	test "$(count_of j0.perf outer)" = $N &&
	test "$(count_of j0.perf inner)" = $N &&
	test "$(count_of j0.perf jumper)" = $N &&
	test "$(unfinished_of j0.perf outer)" = 0 &&
	test "$(profile_field j0.perf trace.summary.inner.no_duration)" = $J &&
	test "$(profile_field j0.perf trace.summary.jumper.no_duration)" = $J &&
	test "$(profile_field j0.perf trace.anomalies.unwound)" = $(( 2 * J )) &&
	test "$(profile_field j0.perf trace.complete)" = true
'

test_expect_success 'return probes: every call counted, the jumped-over ones without a duration' '
	"$PERUN" collect -c ./jumps -a $N -o j2.perf trace -s custom -f outer -f inner \
		-f jumper >out 2>err &&
	cat err &&
	! grep "a call it jumps out of has no return" err &&
	grep "$(( 2 * J )) calls are counted without a duration" err | grep "inner $J" |
		grep "jumper $J" &&
	grep "$(( 2 * J )) of them never returned: a longjmp or C++ exception went past them" err &&
	test "$(count_of j2.perf outer)" = $N &&
	test "$(unfinished_of j2.perf outer)" = 0 &&
	test "$(count_of j2.perf inner)" = $N &&
	test "$(count_of j2.perf jumper)" = $N &&
	test "$(profile_field j2.perf trace.summary.inner.no_duration)" = $J &&
	test "$(profile_field j2.perf trace.summary.jumper.no_duration)" = $J &&
	test "$(unfinished_of j2.perf jumper)" = $J &&
	test "$(profile_field j2.perf trace.anomalies.unmatched_entries)" = $(( 2 * J )) &&
	test "$(profile_field j2.perf trace.anomalies.unwound)" = $(( 2 * J )) &&
	test "$(profile_field j2.perf trace.complete)" = true
'

test_expect_success '--entry-only with named functions: exact counts' '
	"$PERUN" collect -c ./jumps -a $N -o j3.perf trace -s custom -f inner -f jumper \
		--entry-only >out 2>err &&
	cat err &&
	test "$(count_of j3.perf inner)" = $N &&
	test "$(count_of j3.perf jumper)" = $N &&
	! grep "never returned" err
'

test_expect_success 'build a longjmp past several frames of a recursion' '
	cat >deepjump.c <<-\EOF &&
	#include <setjmp.h>
	#include <stdio.h>
	static jmp_buf env;
	__attribute__((noinline)) int down(int d)
	{
		if (d == 0)
			longjmp(env, 1);
		return down(d - 1) + 1;
	}
	__attribute__((noinline)) int after(int x) { return x + 1; }
	__attribute__((noinline)) int top(int i)
	{
		if (setjmp(env))
			return after(i);
		return down(8);
	}
	int main(void)
	{
		int s = 0;
		for (int i = 0; i < 100; i++)
			s += top(i);
		printf("jumped 100 sum %d\n", s);
		return 0;
	}
	EOF
	cc -g -O0 -o deepjump deepjump.c &&
	./deepjump | grep "jumped 100"
'

test_expect_success 'perun'"'"'s loader: the frames jumped past counted without a duration, the rest timed' '
	"$PERUN" collect -c ./deepjump -o d.perf trace -s custom -f top -f down -f after \
		--loader perun >out 2>err &&
	cat err &&
	grep "jumped 100" out &&
	test "$(count_of d.perf top)" = 100 &&
	test "$(count_of d.perf after)" = 100 &&
	test "$(count_of d.perf down)" = 900 &&
	test "$(profile_field d.perf trace.summary.down.no_duration)" = 900 &&
	test "$(unfinished_of d.perf top)" = 0 &&
	test "$(unfinished_of d.perf after)" = 0 &&
	test "$(profile_field d.perf trace.anomalies.unwound)" = 900 &&
	test "$(profile_field d.perf trace.anomalies.missed_returns)" = 0 &&
	test "$(profile_field d.perf trace.complete)" = true &&
	grep "900 of them never returned: a longjmp or C++ exception went past them" err &&
	"$PERUN" show d.perf --format json --expand >d.json &&
	python3 - d.json <<-\PY
	import json
	rs = json.load(open("d.json"))["snapshots"][0]["resources"]
	ids = {r["call-id"]: r for r in rs}
	tops = [r for r in rs if r["uid"] == "top"]
	assert len(tops) == 100 and all(r["depth"] == 0 for r in tops), tops[:3]
	for r in rs:
	    if r["uid"] == "after":
	        # called by top after the jump: nested in it, inside its time
	        t = ids[r["caller-id"]]
	        assert t["uid"] == "top" and r["depth"] == 1, (r, t)
	        assert t["timestamp"] <= r["timestamp"] and \
	            r["timestamp"] + r["amount"] <= t["timestamp"] + t["amount"], (r, t)
	PY
'

test_expect_success 'a program without setjmp/longjmp is not marked' '
	cc -g -O1 -o small "$FIXTURES/small.c" &&
	"$PERUN" collect -c ./small trace -s userspace --script-only >script.stp 2>err &&
	! grep "setjmp" err &&
	grep "\.return" script.stp
'

test_done
