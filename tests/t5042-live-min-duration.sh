#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: --min-duration keeps only the calls at least that slow (uftrace's -t),
# counting the faster ones per function, so a latency hunt on a live service
# keeps a small profile.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build a program with fast and slow calls' '
	cat >mixed.c <<-\EOF &&
	#include <stdio.h>
	#include <time.h>
	__attribute__((noinline)) int fast(int x) { return x + 1; }
	__attribute__((noinline)) void slow(void)
	{
		struct timespec t = { 0, 3000000 };
		nanosleep(&t, NULL);
	}
	int main(void)
	{
		int s = 0;
		for (int i = 0; i < 1000; i++) {
			s += fast(i);
			if (i % 100 == 0)
				slow();
		}
		printf("fast 1000 slow 10 %d\n", s);
		return 0;
	}
	EOF
	cc -g -O1 -o mixed mixed.c
'

test_expect_success 'calls under 1ms are counted, not kept; slower ones kept whole' '
	"$PERUN" collect -c ./mixed -o m.perf trace -s custom -f fast -f slow --min-duration 1ms \
		>out 2>err &&
	cat err &&
	grep "fast 1000 slow 10" out &&
	grep "min-duration: kept the calls of 1000000 ns or more" err &&
	test "$(profile_field m.perf trace.min_duration_ns)" = 1000000 &&
	test "$(profile_field m.perf trace.complete)" = true &&
	python3 - m.perf <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1]))["trace"]
	s = t["summary"]
	assert s["slow"]["count"] == 10 and s["slow"]["min"] >= 1000000, s["slow"]
	# every call counted; a fast call preempted for a millisecond is kept
	below = s["fast"]["below_min_duration"]
	assert s["fast"]["count"] == 1000 and below > 800, s["fast"]
	assert t["below_min_duration"] == below, t["below_min_duration"]
	PY
'

test_expect_success 'the faster calls of a function that has slow ones too are counted with it' '
	"$PERUN" collect -c ./mixed -o n.perf trace -s custom -f main -f slow -f fast \
		--min-duration 100us 2>err &&
	python3 - n.perf <<-\PY
	import json, sys
	s = json.load(open(sys.argv[1]))["trace"]["summary"]
	assert s["slow"]["count"] == 10 and "below_min_duration" not in s["slow"], s["slow"]
	assert s["main"]["count"] == 1, s["main"]
	assert s["fast"]["count"] == 1000, s
	PY
'

test_expect_success 'show keeps a row for a function whose calls were all faster' '
	"$PERUN" collect -c ./mixed -o f.perf trace -s custom -f fast --min-duration 1s 2>err &&
	grep "perun: 1000 calls of 1 function" err &&
	test "$(profile_field f.perf trace.summary.fast.count)" = 1000 &&
	test "$(profile_field f.perf trace.summary.fast.below_min_duration)" = 1000 &&
	"$PERUN" show f.perf >show &&
	cat show &&
	grep "^fast  *1000\*  *0 " show &&
	grep "^\* fast: 1000 of its calls were faster than --min-duration, counted but not kept$" show
'

test_expect_success 'it says where it cannot apply: calls seen at entry only' '
	"$PERUN" collect -c ./mixed -o e.perf trace -s custom -f fast -f slow --entry-only \
		--min-duration 1ms 2>err &&
	cat err &&
	grep "min-duration cannot apply to the 2 functions probed at entry only" err &&
	test "$(profile_field e.perf trace.summary.fast.count)" = 1000 &&
	test "$(profile_field e.perf trace.summary.slow.count)" = 10
'

test_expect_success 'bad times are usage errors' '
	test_expect_code 2 "$PERUN" collect -c ./mixed trace --min-duration 10xs 2>err &&
	grep "wants a time like 10us" err &&
	test_expect_code 2 "$PERUN" collect -c ./mixed trace --min-duration -5ms 2>err
'

test_done
