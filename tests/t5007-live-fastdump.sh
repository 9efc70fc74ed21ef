#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun reads the bpf recorder's map itself, in batches, once the
# command has ended and before stapbpf's end probe (which reads one entry
# per bpf() call).  The counts are exact either way, nothing is read twice,
# and PERUN_NO_FAST_READ=1 leaves the dump to the end probe.  The recorder
# is stapbpf's (perun's own loader streams instead), so these ask for it.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixtures' '
	cc -g -O1 -o loop "$SRCDIR/bench/loop.c" &&
	cc -g -O1 -pthread -o exact "$FIXTURES/exact.c"
'

check_exact() {
	test "$(profile_field "$1" trace.complete)" = true &&
	test "$(profile_field "$1" trace.anomalies.duplicates)" = 0 &&
	test "$(profile_field "$1" trace.anomalies.lost_events)" = 0 &&
	test "$(profile_field "$1" trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field "$1" trace.recorder_read)" = "$2"
}

test_expect_success '200k calls: read in batches, every call once' '
	"$PERUN" collect -c ./loop -a 200000 -o fast.perf trace --loader stapbpf -vt -s custom -f f 2>err >out &&
	cat err &&
	grep "calls 200000" out &&
	profile_counts fast.perf >actual &&
	echo "f 200000" >expect &&
	test_cmp expect actual &&
	check_exact fast.perf batch &&
	test "$(grep -c "^v " fast.perf.raw)" = 400000 &&
	! grep -i warning err
'

test_expect_success 'PERUN_NO_FAST_READ=1: the end probe dumps, same counts' '
	PERUN_NO_FAST_READ=1 "$PERUN" collect -c ./loop -a 200000 -o slow.perf trace --loader stapbpf \
		-s custom -f f 2>err >out &&
	cat err &&
	profile_counts slow.perf >actual &&
	test_cmp expect actual &&
	check_exact slow.perf end-probe
'

test_expect_success 'threads, and a --buffer-size equal to a map of stap: still batches' '
	"$PERUN" collect -c ./exact -a "15 4 3000" -o thr.perf trace --loader stapbpf -s custom \
		-f fib -f work -f tiny --buffer-size 65536 2>err >out &&
	cat err &&
	grep "calls fib=1973 work=12000 tiny=12000" out &&
	profile_counts thr.perf >actual &&
	printf "fib 1973\ntiny 12000\nwork 12000\n" >expect &&
	test_cmp expect actual &&
	check_exact thr.perf batch &&
	test "$(profile_field thr.perf trace.threads)" = 5 &&
	test "$(profile_field thr.perf collector_info.params.buffer_size)" = 65536
'

test_expect_success 'a full buffer read in batches: the loss stays exact' '
	set +e
	"$PERUN" collect -c ./loop -a 5000 -o full.perf trace --loader stapbpf -s custom -f f \
		--buffer-size 3000 2>err
	rc=$?
	set -e
	cat err &&
	test $rc = 3 &&
	test "$(profile_field full.perf trace.recorder_read)" = batch &&
	test "$(profile_field full.perf trace.anomalies.lost_in_buffer)" = 7000 &&
	test "$(profile_field full.perf trace.anomalies.missing_records)" = 0
'

test_done
