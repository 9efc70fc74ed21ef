#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: the overhead budget (--max-overhead PCT).  The script estimates what
# the recorded calls cost (the calibrated cost per call, a default when the
# host is not calibrated) per 20 ms window and disarms the hottest probes
# while it passes PCT % of the window; the profile, stderr and perun show say
# which were disarmed, after how many calls and when, and the counts of the
# others stay exact (the fixture counts its own calls).
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixture' '
	cc -g -O1 -o budget "$FIXTURES/optimize.c" &&
	./budget 200000 >self &&
	grep "calls f=200000 g=10 h=2000" self
'

test_expect_success 'a 10% budget disarms the hot f only; g and h stay exact' '
	"$PERUN" collect -c ./budget -a 200000 -o b.perf trace -s custom -f f -f g -f h \
		--max-overhead 10 --loader stapbpf 2>err >out &&
	cat err &&
	grep "calls f=200000 g=10 h=2000" out &&
	grep "is not calibrated, so the budget assumes 2000 ns per recorded call; run .perun calibrate --loader stapbpf. once" err &&
	grep "the overhead budget (10 %) disarmed 1 probe, so their counts are partial: f after [0-9]* calls at [0-9.]* s$" err &&
	n=$(profile_counts b.perf | sed -n "s/^f //p") &&
	say "f recorded $n of 200000 calls before the budget disarmed it" &&
	test "$n" -gt 0 && test "$n" -lt 200000 &&
	test "$(profile_field b.perf trace.summary.f.disarmed_after)" = "$n" &&
	test "$(profile_field b.perf trace.summary.f.disarmed_by)" = max-overhead &&
	test "$(profile_field b.perf trace.summary.f.partial)" = true &&
	test "$(profile_field b.perf trace.optimization.max_overhead.disarmed.f.recorded)" = "$n" &&
	test "$(profile_field b.perf trace.optimization.max_overhead.disarmed.f.calls)" = 200000 &&
	after=$(profile_field b.perf trace.optimization.max_overhead.disarmed.f.calls_after) &&
	test $((n + after)) = 200000 &&
	grep "the disarmed probes saw $after later calls, and each still trapped" err &&
	at=$(profile_field b.perf trace.optimization.max_overhead.disarmed.f.at_s) &&
	test "$(profile_field b.perf trace.summary.f.disarmed_at_s)" = "$at" &&
	test "$(profile_field b.perf trace.optimization.max_overhead.calibrated)" = false &&
	test "$(profile_field b.perf trace.optimization.max_overhead.disarm_by)" = handler-gate &&
	test "$(profile_field b.perf trace.optimization.max_overhead.call_ns)" = 2000 &&
	test "$(profile_field b.perf trace.optimization.max_overhead.window_ms)" = 20 &&
	over=$(profile_field b.perf trace.optimization.max_overhead.windows_over) &&
	test "$over" -ge 1 &&
	profile_counts b.perf | grep -v "^f " >actual &&
	printf "g 10\nh 2000\n" >expect &&
	test_cmp expect actual &&
	! profile_field b.perf trace.summary.h.partial 2>/dev/null &&
	test "$(profile_field b.perf trace.complete)" = true &&
	test "$(profile_field b.perf trace.sampled)" = true &&
	"$PERUN" show b.perf --format summary >sum &&
	grep "^~ f: disarmed after $n calls, [0-9.]* s into the trace (the overhead budget): the later ones were not recorded$" sum
'

test_expect_success 'a budget the run stays under disarms nothing: every call, not sampled' '
	"$PERUN" collect -c ./budget -a 20000 -o wide.perf trace -s custom -f f -f g -f h \
		--max-overhead 1000 --loader stapbpf 2>err >out &&
	cat err &&
	! grep "disarmed" err &&
	printf "f 20000\ng 10\nh 200\n" >expect &&
	profile_counts wide.perf >actual &&
	test_cmp expect actual &&
	test "$(profile_field wide.perf trace.optimization.max_overhead.disarmed)" = "{}" &&
	test "$(profile_field wide.perf trace.optimization.max_overhead.windows_over)" = 0 &&
	! profile_field wide.perf trace.summary.f.partial 2>/dev/null
'

test_expect_success 'with --calibrate the budget uses the measured cost per call' '
	"$PERUN" collect -c ./budget -a 200000 -o cal.perf trace -s custom -f f -f h \
		--max-overhead 10 --loader stapbpf --calibrate 2>err >out &&
	cat err &&
	! grep "is not calibrated" err &&
	test "$(profile_field cal.perf trace.optimization.max_overhead.calibrated)" = true &&
	pair=$(profile_field cal.perf collector_info.params.calibration.pair_ns) &&
	ns=$(profile_field cal.perf trace.optimization.max_overhead.call_ns) &&
	say "calibrated: $pair ns per recorded call, the budget counts $ns" &&
	test "$ns" = "$(python3 -c "print(int($pair / 100 + 0.5) * 100)")" &&
	grep "disarmed 1 probe.*: f after" err &&
	test "$(profile_counts cal.perf | sed -n "s/^h //p")" = 2000
'

test_expect_success 'the script carries the budget and each probe its cost' '
	"$PERUN" collect -c ./budget -o x.perf trace -s custom -f f -f g --max-overhead 2.5 --no-calibrate \
		--script-only >s.stp 2>err &&
	grep "^// overhead budget (--max-overhead 2.5)" s.stp &&
	grep "__perun_bcost > 487805" s.stp &&
	grep -c "__perun_budget(0, 2000)" s.stp &&
	grep -c "__perun_budget(1, 2000)" s.stp
'

test_expect_success 'bad budgets are usage errors; --aggregate is refused' '
	for v in 0 -5 abc 10x 20000 ""; do
		rc=0 && "$PERUN" collect -c ./budget trace -s custom -f f \
			--max-overhead "$v" 2>err || rc=$? &&
		test $rc = 2 && grep "max-overhead wants a percentage" err || return 1
	done &&
	rc=0 && "$PERUN" collect -c ./budget trace -s custom -f f \
		--max-overhead 5 --aggregate 2>err || rc=$? &&
	test $rc = 1 && grep "not with --aggregate" err &&
	"$PERUN" collect -c ./budget -a 10 -o pct.perf trace -s custom -f f --max-overhead 5% 2>err &&
	test "$(profile_field pct.perf trace.optimization.max_overhead.max_overhead_pct)" = 5.0
'

test_expect_success 'nothing is left behind' '
	assert_nothing_left
'

test_done
