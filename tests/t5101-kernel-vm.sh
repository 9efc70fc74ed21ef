#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live, kernel runtime: perun's own driver runs staprun inside a QEMU guest
# that boots Debian's 6.1 kernel (tools/stap-vm.sh; this host cannot load
# modules).  The host is the build host: perun collect --compile-only -r
# RELEASE fills the module cache; the guest sees the host's files read-only
# and the cache read-write, and runs the host's perun with PERUN_STAP pointing
# nowhere, so every guest run is a cache hit that starts no stap.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vm.sh"
# The stock runtime copy too: the build fix only (stap 4.8's stock relay
# transport), against $RT_FIXED's build fix + transport fix.
RT_STOCK=$($VM runtime)
STOCK_CACHE="$TRASH/cache-stock"
STOCK_ENV="--env STOCK_RT=$RT_STOCK --env STOCK_CACHE=$STOCK_CACHE"

test_expect_success 'build the fixture' '
	cc -g -O1 -o fibn "$FIXTURES/fibn.c"
'

test_expect_success 'the build host fills the cache for the guest release (-r, --compile-only)' '
	"$PERUN" collect -c ./fibn trace -s custom -f fib --compile-only -r "$REL" >key 2>err &&
	cat err &&
	grep "kernel module in the cache (miss)" err &&
	read key rt rel <key && test "$rt" = kernel && test "$rel" = "$REL" &&
	test -s "$PERUN_CACHE_DIR/modules/$key/perun_$(echo $key | cut -c1-16).ko" &&
	PERUN_KRUNTIME_DIR="$RT_STOCK" PERUN_CACHE_DIR="$STOCK_CACHE" \
		"$PERUN" collect -c ./fibn trace -s custom -f fib --transport print --compile-only \
		-r "$REL" -q >/dev/null &&
	"$PERUN" collect -c ./fibn trace -s custom -f fib --transport print --compile-only \
		-r "$REL" -q >/dev/null &&
	again=$("$PERUN" collect -c ./fibn trace -s custom -f fib --compile-only -r "$REL" 2>err2) &&
	test "$again" = "$(cat key)" && grep "(hit)" err2
'

test_expect_success 'a module built from other runtime sources is rebuilt, not reused' '
	PERUN_KRUNTIME_DIR="$RT_STOCK" "$PERUN" collect -c ./fibn trace -s custom -f fib \
		--compile-only -r "$REL" -sc 2>err || true &&
	grep "not with -sc" err &&
	cp -a "$PERUN_CACHE_DIR" "$TRASH/cache-copy" &&
	PERUN_CACHE_DIR="$TRASH/cache-copy" PERUN_KRUNTIME_DIR="$RT_STOCK" "$PERUN" collect \
		-c ./fibn trace -s custom -f fib --compile-only -r "$REL" 2>err &&
	grep "(miss)" err
'

cat >"$TRASH/guest-counts.sh" <<'EOF'
set -u
echo "guest: $(uname -r)"
t0=$(date +%s.%N)
"$PERUN" collect -o fib.perf -c ./fibn -a 20 trace -s custom -f fib --runtime kernel >fib.out 2>fib.err
echo "fib_status=$?" >guest.status
t1=$(date +%s.%N)
echo "fib_seconds=$(echo "$t1 - $t0" | bc)" >>guest.status
"$PERUN" collect -o print.perf -c ./fibn -a 20 trace -s custom -f fib --runtime kernel \
	--transport print >print.out 2>print.err
echo "print_status=$?" >>guest.status
t1=$(date +%s.%N)
PERUN_KRUNTIME_DIR=$STOCK_RT PERUN_CACHE_DIR=$STOCK_CACHE \
	"$PERUN" collect -o stock.perf -c ./fibn -a 20 trace -s custom -f fib --runtime kernel \
	--transport print >stock.out 2>stock.err
echo "stock_status=$?" >>guest.status
echo "stock_seconds=$(echo "$(date +%s.%N) - $t1" | bc)" >>guest.status
EOF

test_expect_success 'in the guest: fib(20) traced exactly through staprun, a cache hit without stap' '
	in_guest guest-counts.sh $STOCK_ENV >guest.out 2>&1 || { cat guest.out; exit 1; }
	cat guest.out guest.status fib.err &&
	grep "^guest: $REL" guest.out &&
	grep "^fib_status=0" guest.status &&
	test "$(profile_field fib.perf collector_info.params.transport)" = record &&
	grep "with the kernel runtime (module cache: hit)" fib.err &&
	grep "fib(20) = 6765" fib.out &&
	test "$(profile_counts fib.perf)" = "fib 21891" &&
	test "$(profile_field fib.perf trace.calls)" = 21891 &&
	test "$(profile_field fib.perf trace.module_cache)" = hit &&
	test "$(profile_field fib.perf trace.runtime)" = kernel &&
	test "$(profile_field fib.perf trace.kernel_release)" = "$REL" &&
	profile_field fib.perf trace.kernel_runtime | grep "patched.*txfix" &&
	test "$(profile_field fib.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field fib.perf trace.anomalies.unmatched_exits)" = 0 &&
	test "$(profile_field fib.perf trace.anomalies.lost_events)" = 0 &&
	test "$(profile_field fib.perf trace.anomalies.missing_end)" = false
'

test_expect_success 'in the guest: --transport print is exact too on the patched runtime' '
	cat print.err &&
	grep "^print_status=0" guest.status &&
	test "$(profile_field print.perf collector_info.params.transport)" = print &&
	test "$(profile_counts print.perf)" = "fib 21891" &&
	test "$(profile_field print.perf trace.anomalies.lost_events)" = 0
'

test_expect_success 'in the guest: the stock 4.8 transport loses events and perun says so' '
	cat stock.err &&
	grep "^stock_status=" guest.status &&
	profile_field stock.perf trace.kernel_runtime | grep -v txfix &&
	calls=$(profile_field stock.perf trace.events) &&
	say "stock transport: $calls of 43782 events" &&
	test "$calls" -lt 43782 &&
	grep "the trace is incomplete" stock.err &&
	lost=$(profile_field stock.perf trace.anomalies.lost_events) &&
	errs=$(profile_field stock.perf trace.anomalies.transport_errors) &&
	test $((lost + errs)) -gt 0
'

cat >"$TRASH/guest-kill.sh" <<'EOF'
set -u
# left: our modules and processes still there (cheap checks: TCG is slow)
left() {
	echo "$(grep -cE "^(perun|stap)_" /proc/modules)$(ps -eo comm= | grep -cE "^(staprun|stapio|fibn)$")"
}
wait_gone() {
	for i in $(seq 60); do [ "$(left)" = 00 ] && return 0; sleep 0.5; done
	ps -eo pid,stat,comm | grep -E "stap|fibn"; grep -E "^(perun|stap)_" /proc/modules
	return 1
}
wait_loaded() {
	for i in $(seq 60); do grep -q "^perun_" /proc/modules && return 0; sleep 0.5; done
	return 1
}
# fib(32): 7 million calls, more than the test waits for; the same module
# 1. perun killed with SIGKILL while the target runs
"$PERUN" collect -o kill.perf -c ./fibn -a 32 trace -s custom -f fib --runtime kernel \
	>kill.out 2>kill.err &
p=$!
wait_loaded && echo "loaded=$(grep "^perun_" /proc/modules | cut -d" " -f1)"
sleep 1
kill -9 $p
wait $p
echo "perun_status=$?"
wait_gone && echo "kill_left=none"
# 2. the runtime (stapio) killed with SIGKILL: perun removes the module itself
"$PERUN" collect -o died.perf -c ./fibn -a 32 trace -s custom -f fib --runtime kernel \
	>died.out 2>died.err &
p=$!
wait_loaded && sleep 1 && kill -9 $(ps -eo pid=,comm= | awk '$2 == "stapio" { print $1 }')
wait $p
echo "died_status=$?"
wait_gone && echo "died_left=none"
true
EOF

test_expect_success 'in the guest: nothing is left after a SIGKILL of perun or of stapio' '
	in_guest guest-kill.sh $STOCK_ENV >kill.status 2>&1 || { cat kill.status; exit 1; }
	cat kill.status kill.err died.err &&
	grep "^loaded=perun_" kill.status &&
	grep "^perun_status=137" kill.status &&
	grep "^kill_left=none" kill.status &&
	grep "^died_status=1" kill.status &&
	grep "^died_left=none" kill.status &&
	test "$(profile_field died.perf trace.runtime_died)" = true
'

test_done
