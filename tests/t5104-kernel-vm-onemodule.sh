#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live, kernel runtime: --one-module in the QEMU guest (tests/lib-vm.sh).
# The host compiles one module for every function of the fixture
# (--compile-only -r RELEASE); in the guest, two collects with different -f
# sets run that same module from the cache without stap: the driver writes
# each selection into the module's /proc/systemtap/MODULE/perun_sel before
# the command starts, and the counts are exact.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vm.sh"

test_expect_success 'the build host compiles one module for every function' '
	cc -g -O1 -o app "$FIXTURES/difftrace.c" &&
	"$PERUN" collect -c ./app trace -s custom -f changed --one-module \
		--compile-only -r "$REL" >key1 2>err &&
	cat err && grep "kernel module in the cache (miss)" err &&
	"$PERUN" collect -c ./app trace -s custom -f twice -f main --one-module \
		--compile-only -r "$REL" >key2 2>err &&
	cat err && grep "kernel module in the cache (hit)" err &&
	test "$(cut -d" " -f1 key1)" = "$(cut -d" " -f1 key2)" &&
	"$PERUN" collect -c ./app trace -s custom -f changed --one-module \
		--script-only -r "$REL" >s.stp &&
	grep "probe procfs(\"perun_sel\").write" s.stp
'

cat >"$TRASH/guest-one.sh" <<GUEST
set -u
"\$PERUN" collect -o one.perf -c ./app -a 100 trace -s custom -f changed -f untouched \
	--one-module --runtime kernel >one.out 2>one.err
echo "one_status=\$?" >guest.status
"\$PERUN" collect -o two.perf -c ./app -a 100 trace -s custom -f twice -f main \
	--one-module --runtime kernel >two.out 2>two.err
echo "two_status=\$?" >>guest.status
GUEST

test_expect_success 'in the guest: two selections, one module, no stap, exact counts' '
	in_guest guest-one.sh >guest.out 2>&1 || { cat guest.out; exit 1; }
	cat guest.out guest.status one.err two.err &&
	grep "^one_status=0" guest.status &&
	grep "^two_status=0" guest.status &&
	grep "module cache: hit" one.err &&
	grep "module cache: hit" two.err &&
	profile_counts one.perf >actual &&
	printf "changed 200\nuntouched 100\n" >expect &&
	test_cmp expect actual &&
	profile_counts two.perf >actual &&
	printf "main 1\ntwice 100\n" >expect &&
	test_cmp expect actual &&
	test "$(profile_field two.perf trace.runtime)" = kernel &&
	test "$(profile_field two.perf trace.complete)" = true
'

test_done
