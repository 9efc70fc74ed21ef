#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: timed sampling and the overhead budget (--max-overhead) on perun's
# own loader and on stapbpf, on the same program (tests/fixtures/optimize.c
# counts its own calls), asserting what does not depend on the machine's
# speed: a budget far below one window's calls disarms the hot f on both
# loaders (perun's removes it from the kernel) and keeps g, called only
# before the first window ended, exact; timed sampling with a 200 ms period
# records g's 10 calls (made at once, in the first gather window), part of
# f's, and flips about once per period of the run.  After perun calibrate, a
# budget finds the cost of the loader that runs.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixture' '
	cc -g -O1 -o optimize "$FIXTURES/optimize.c" &&
	./optimize 1000 | grep "calls f=1000 g=10 h=10"
'

# budget LOADER: ./optimize 20000 with a budget of 0.01 % (2 us of a 20 ms
# window: two recorded calls pass it), f and g probed.
budget() {
	"$PERUN" collect -c ./optimize -a 20000 -o b-$1.perf trace -s custom -f f -f g \
		--max-overhead 0.01 --loader $1 >b-$1.out 2>b-$1.err || { cat b-$1.err; return 1; }
	cat b-$1.err &&
	grep "calls f=20000 g=10" b-$1.out &&
	n=$(profile_counts b-$1.perf | sed -n "s/^f //p") &&
	say "$1: f recorded $n of 20000 calls before the budget disarmed it" &&
	test "$n" -gt 0 && test "$n" -lt 20000 &&
	g=$(profile_counts b-$1.perf | sed -n "s/^g //p") &&
	# g is exact unless a window ended inside its burst of 10 (a loaded
	# machine preempting it): then it is marked disarmed like f
	if test "$g" = 10; then
		! profile_field b-$1.perf trace.summary.g.partial 2>/dev/null
	else
		test "$(profile_field b-$1.perf trace.summary.g.disarmed_by)" = max-overhead
	fi &&
	test "$(profile_field b-$1.perf trace.summary.f.partial)" = true &&
	test "$(profile_field b-$1.perf trace.summary.f.disarmed_after)" = "$n" &&
	test "$(profile_field b-$1.perf trace.summary.f.disarmed_by)" = max-overhead &&
	M=trace.optimization.max_overhead &&
	test "$(profile_field b-$1.perf $M.disarmed.f.recorded)" = "$n" &&
	test "$(profile_field b-$1.perf $M.windows_over)" -ge 1 &&
	test "$(profile_field b-$1.perf trace.complete)" = true &&
	test "$(profile_field b-$1.perf trace.sampled)" = true &&
	grep "^perun: the overhead budget (0.01 %) disarmed [12] probes\{0,1\}, so their counts are partial: f after $n calls at [0-9.]* s" b-$1.err
}

test_expect_success 'the budget on perun'"'"'s loader: f disarmed and removed from the kernel, g exact' '
	budget perun &&
	test "$(profile_field b-perun.perf trace.loader)" = perun-uprobes &&
	! grep "stapbpf runs this trace" b-perun.err &&
	test "$(profile_field b-perun.perf trace.optimization.max_overhead.disarm_by)" = remove &&
	grep "^perun: removed [12] disarmed probes\{0,1\} from the kernel (put back 0 times)$" b-perun.err &&
	! grep "still trapped" b-perun.err &&
	! profile_field b-perun.perf trace.optimization.max_overhead.disarmed.f.calls_after 2>/dev/null
'

test_expect_success 'the budget on stapbpf: the same marks; every later call still trapped' '
	budget stapbpf &&
	test "$(profile_field b-stapbpf.perf trace.optimization.max_overhead.disarm_by)" = handler-gate &&
	n=$(profile_field b-stapbpf.perf trace.summary.f.count) &&
	after=$(profile_field b-stapbpf.perf trace.optimization.max_overhead.disarmed.f.calls_after) &&
	test $((n + after)) = 20000
'

# timed LOADER: ./optimize 150000 with a 200 ms period; the shell's wall
# time around the collect bounds the flips from above, the program's own
# loop time from below.
timed() {
	t0=$(date +%s%N) &&
	"$PERUN" collect -c ./optimize -a 150000 -o t-$1.perf trace -s custom -f f -f g \
		-on timed-sampling -oa timed-sample-freq 5 --loader $1 >t-$1.out 2>t-$1.err ||
		{ cat t-$1.err; return 1; }
	t1=$(date +%s%N) &&
	cat t-$1.err &&
	grep "calls f=150000 g=10" t-$1.out &&
	loop=$(sed -n "s/^loop_ns //p" t-$1.out) &&
	flips=$(profile_field t-$1.perf trace.optimization.timed_sampling.flips) &&
	n=$(profile_counts t-$1.perf | sed -n "s/^f //p") &&
	say "$1: f recorded $n of 150000 calls; $flips flips in a run of $((loop / 1000000)) ms (collect $(((t1 - t0) / 1000000)) ms)" &&
	test "$flips" -ge $((loop / 200000000 - 1)) &&
	test "$flips" -le $(((t1 - t0) / 200000000 + 1)) &&
	test "$n" -gt 0 && test "$n" -lt 150000 &&
	test "$(profile_counts t-$1.perf | sed -n "s/^g //p")" = 10 &&
	test "$(profile_field t-$1.perf trace.optimization.timed_sampling.period_ms)" = 200 &&
	test "$(profile_field t-$1.perf trace.summary.f.sampled_by)" = timed-sampling &&
	test "$(profile_field t-$1.perf trace.summary.f.partial)" = true &&
	test "$(profile_field t-$1.perf trace.complete)" = true &&
	test "$(profile_field t-$1.perf trace.sampled)" = true &&
	test "$(profile_field t-$1.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field t-$1.perf trace.anomalies.unmatched_exits)" = 0 &&
	grep "^perun: the trace is sampled: timed sampling recorded calls only in its gather windows (200 ms on, 200 ms off)$" t-$1.err
}

test_expect_success 'timed sampling on perun'"'"'s loader: gather windows only, dormant probes removed' '
	timed perun &&
	test "$(profile_field t-perun.perf trace.loader)" = perun-uprobes &&
	grep "^perun: removed [0-9]* disarmed probes\{0,1\} from the kernel" t-perun.err
'

test_expect_success 'timed sampling on stapbpf: the same marks' '
	timed stapbpf &&
	test "$(profile_field t-stapbpf.perf trace.loader)" = stapbpf
'

test_expect_success 'after perun calibrate, --max-overhead finds the cost of the loader that runs' '
	"$PERUN" calibrate --calls 20000 -q 2>cal.err || { cat cal.err; false; } &&
	"$PERUN" collect -c ./optimize -a 2000 -o c.perf trace -s custom -f f -f g \
		--max-overhead 1000 >c.out 2>c.err || { cat c.err; false; } &&
	cat c.err &&
	! grep "not calibrated" c.err &&
	test "$(profile_field c.perf trace.loader)" = perun-uprobes &&
	test "$(profile_field c.perf trace.optimization.max_overhead.calibrated)" = true
'

test_done
