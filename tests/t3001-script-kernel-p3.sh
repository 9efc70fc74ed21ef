#!/bin/sh
# The same generated plan must be valid for the kernel runtime too: stap
# elaborates it through pass 3 here, with the running kernel's (stub) build
# tree.  Pass 4 and real runs of kernel modules are in t5101, which builds for
# a Debian 6.1 guest with perun's patched runtime (tools/stap-vm.sh).
. "$SRCDIR/tests/lib.sh"
command -v stap >/dev/null 2>&1 || skip_all "needs stap"
[ "$(id -u)" = 0 ] || skip_all "needs root"

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'userspace + sampling + USDT + a library: stap -p3, kernel runtime' '
	"$PERUN" collect -c ./counts trace -s userspace -f libcountlib#lib_add#5 -f fib#3 \
		--runtime kernel --script-only >k.stp &&
	stap -p3 -I "$SRCDIR/tapsets" k.stp >p3.out 2>p3.err || { cat p3.err; exit 1; } &&
	grep -q "uprobe" p3.out
'

test_expect_success 'the same script compiles for the bpf runtime (stap -p4)' '
	stap --runtime=bpf -p4 -m perun_t3001 -I "$SRCDIR/tapsets" k.stp >/dev/null 2>p4.err ||
		{ cat p4.err; exit 1; }
	test -s perun_t3001.bo
'

test_expect_success 'a source line probe (-d) elaborates on both runtimes' '
	"$PERUN" collect -c ./counts trace -s custom -d counts.c:38 --script-only >d.stp &&
	grep "statement(\"\*@counts.c:38\")" d.stp &&
	stap -p3 -I "$SRCDIR/tapsets" d.stp >/dev/null 2>err || { cat err; exit 1; }
'

test_done
