#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live, kernel runtime: the overhead budget (--max-overhead) through staprun
# in the QEMU guest of t5101 (tools/stap-vm.sh), where SystemTap's own answer
# to overhead is its overload abort (perun's modules turn that off).  A
# disarmed probe is a conditional probe turned false, which stap unregisters.  The
# host builds the module (--compile-only -r RELEASE); the guest runs it from
# the cache without stap.  --no-calibrate on both sides: the budget's cost
# per call is in the script, and neither has a kernel-runtime calibration.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vm.sh"

# 1 %: a TCG guest runs few calls per 20 ms window, and a 10 % budget was
# sometimes never passed there (f then recorded every call)
B="-s custom -f f -f g -f h --max-overhead 1 --no-calibrate"

test_expect_success 'the build host compiles the budgeted module for the guest release' '
	cc -g -O1 -o budget "$FIXTURES/optimize.c" &&
	"$PERUN" collect -c ./budget trace $B --compile-only -r "$REL" 2>err &&
	cat err && grep "kernel module in the cache" err
'

cat >"$TRASH/guest-budget.sh" <<GUEST
set -u
"\$PERUN" collect -o b.perf -c ./budget -a 50000 trace $B --runtime kernel >b.out 2>b.err
echo "b_status=\$?" >guest.status
GUEST

test_expect_success 'in the guest: f disarmed by the budget, g and h exact' '
	in_guest guest-budget.sh >guest.out 2>&1 || { cat guest.out; exit 1; }
	cat guest.out guest.status b.err &&
	grep "^b_status=0" guest.status &&
	grep "module cache: hit" b.err &&
	grep "calls f=50000 g=10 h=500" b.out &&
	grep "the overhead budget (1 %) disarmed 1 probe, so their counts are partial: f after" b.err &&
	n=$(profile_counts b.perf | sed -n "s/^f //p") &&
	say "kernel runtime: f recorded $n of 50000 calls before the budget disarmed it" &&
	test "$n" -gt 0 && test "$n" -lt 50000 &&
	test "$(profile_field b.perf trace.summary.f.disarmed_after)" = "$n" &&
	test "$(profile_field b.perf trace.optimization.max_overhead.disarmed.f.recorded)" = "$n" &&
	test "$(profile_field b.perf trace.optimization.max_overhead.disarm_by)" = unregister &&
	! profile_field b.perf trace.optimization.max_overhead.disarmed.f.calls 2>/dev/null &&
	! grep "still trapped" b.err &&
	profile_counts b.perf | grep -v "^f " >actual &&
	printf "g 10\nh 500\n" >expect &&
	test_cmp expect actual &&
	test "$(profile_field b.perf trace.complete)" = true &&
	test "$(profile_field b.perf trace.runtime)" = kernel
'

test_done
