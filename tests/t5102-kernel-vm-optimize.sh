#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live, kernel runtime: the run-optimize methods (dynamic probing, timed
# sampling) through staprun in the QEMU guest of t5101 (tools/stap-vm.sh).
# The host builds the modules (--compile-only -r RELEASE); the guest runs them
# from the cache without stap.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vm.sh"

DP="-s custom -f fib -on dynamic-probing -oa probing-threshold 1000"
RA="$DP -oa probing-reattach true -oa probing-reattach-ms 10"
TS="-s custom -f tiny -on timed-sampling -oa timed-sample-freq 20"

test_expect_success 'the build host compiles the gated modules for the guest release' '
	cc -g -O1 -o fibn "$FIXTURES/fibn.c" &&
	"$PERUN" collect -c ./fibn trace $RA --compile-only -r "$REL" 2>err &&
	cat err && grep "kernel module in the cache" err &&
	"$PERUN" collect -c ./fibn trace $DP --compile-only -r "$REL" 2>err &&
	cat err && grep "kernel module in the cache" err &&
	"$PERUN" collect -c ./fibn trace $TS --compile-only -r "$REL" 2>err &&
	cat err && grep "kernel module in the cache" err
'

cat >"$TRASH/guest-opt.sh" <<GUEST
set -u
"\$PERUN" collect -o dp.perf -c ./fibn -a 20 trace $DP --runtime kernel >dp.out 2>dp.err
echo "dp_status=\$?" >guest.status
"\$PERUN" collect -o ts.perf -c ./fibn -a "5 200000" trace $TS --runtime kernel >ts.out 2>ts.err
echo "ts_status=\$?" >>guest.status
"\$PERUN" collect -o ra.perf -c ./fibn -a 20 trace $RA --runtime kernel >ra.out 2>ra.err
echo "ra_status=\$?" >>guest.status
GUEST

test_expect_success 'in the guest: fib disarmed after 1000 of 21891 calls, tiny sampled in time' '
	in_guest guest-opt.sh >guest.out 2>&1 || { cat guest.out; exit 1; }
	cat guest.out guest.status dp.err ts.err &&
	grep "^dp_status=0" guest.status &&
	grep "module cache: hit" dp.err &&
	grep "fib(20) = 6765" dp.out &&
	test "$(profile_counts dp.perf)" = "fib 1000" &&
	test "$(profile_field dp.perf trace.summary.fib.disarmed_after)" = 1000 &&
	test "$(profile_field dp.perf trace.complete)" = true &&
	test "$(profile_field dp.perf trace.runtime)" = kernel &&
	test "$(profile_field dp.perf trace.optimization.dynamic_probing.disarm_by)" = unregister &&
	test "$(profile_field dp.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field dp.perf trace.anomalies.unmatched_exits)" = 0 &&
	grep "^ts_status=0" guest.status &&
	n=$(profile_counts ts.perf | sed -n "s/^tiny //p") &&
	say "kernel runtime, timed sampling at 20 Hz: tiny recorded $n of 200000" &&
	test "$n" -gt 0 && test "$n" -lt 200000 &&
	test "$(profile_field ts.perf trace.sampled)" = true &&
	test "$(profile_field ts.perf trace.complete)" = true
'

test_expect_success 'in the guest: reattach re-registers the conditional probe of the recursive fib' '
	cat ra.err &&
	grep "^ra_status=0" guest.status &&
	grep "fib(20) = 6765" ra.out &&
	dis=$(profile_field ra.perf trace.optimization.dynamic_probing.reattach.fib.disarmed) &&
	re=$(profile_field ra.perf trace.optimization.dynamic_probing.reattach.fib.rearmed) &&
	rec=$(profile_field ra.perf trace.optimization.dynamic_probing.reattach.fib.recorded) &&
	say "kernel runtime, reattach: fib disarmed $dis times, re-armed $re times, $rec of 21891 calls recorded" &&
	test "$re" -ge 1 &&
	test "$(profile_counts ra.perf)" = "fib $rec" &&
	test "$rec" -ge $((1000 * dis)) && test "$rec" -le $((1000 * dis + 1000)) &&
	test "$(profile_field ra.perf trace.optimization.dynamic_probing.disarm_by)" = unregister &&
	test "$(profile_field ra.perf trace.complete)" = true &&
	test "$(profile_field ra.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field ra.perf trace.anomalies.unmatched_exits)" = 0 &&
	test "$(profile_field ra.perf trace.anomalies.malformed_lines)" = 0
'

test_done
