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

# f (50000 calls) passes the budget first.  On a TCG guest of a loaded host,
# h (500 calls) sometimes passes it too; then it must be named with its count,
# which is below 500 and equals its disarmed_after.  Every probe not named in
# the message is exact.
test_expect_success 'in the guest: f disarmed by the budget first, the rest exact or named' '
	in_guest guest-budget.sh >guest.out 2>&1 || { cat guest.out; exit 1; }
	cat guest.out guest.status b.err &&
	grep "^b_status=0" guest.status &&
	grep "module cache: hit" b.err &&
	grep "calls f=50000 g=10 h=500" b.out &&
	grep "the overhead budget (1 %) disarmed [12] probes\{0,1\}, so their counts are partial: f after" b.err &&
	n=$(profile_counts b.perf | sed -n "s/^f //p") &&
	say "kernel runtime: f recorded $n of 50000 calls before the budget disarmed it" &&
	test "$n" -gt 0 && test "$n" -lt 50000 &&
	test "$(profile_field b.perf trace.summary.f.disarmed_after)" = "$n" &&
	test "$(profile_field b.perf trace.optimization.max_overhead.disarmed.f.recorded)" = "$n" &&
	test "$(profile_field b.perf trace.optimization.max_overhead.disarm_by)" = unregister &&
	! profile_field b.perf trace.optimization.max_overhead.disarmed.f.calls 2>/dev/null &&
	! grep "still trapped" b.err &&
	printf "g 10\nh 500\n" >full &&
	profile_counts b.perf | grep -v "^f " >actual &&
	while read fn c; do
		want=$(sed -n "s/^$fn //p" full) &&
		if grep "disarmed.*partial:.* $fn after $c calls" b.err >/dev/null; then
			say "kernel runtime: $fn also disarmed, after $c of $want calls" &&
			test "$c" -lt "$want" &&
			test "$(profile_field b.perf trace.summary.$fn.disarmed_after)" = "$c" || exit 1
		else
			test "$c" = "$want" || { echo "$fn: $c calls, not disarmed, want $want"; exit 1; }
		fi
	done <actual &&
	test "$(wc -l <actual)" = 2 &&
	test "$(profile_field b.perf trace.complete)" = true &&
	test "$(profile_field b.perf trace.runtime)" = kernel
'

test_done
