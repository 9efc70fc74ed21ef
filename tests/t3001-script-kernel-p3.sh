#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
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

test_expect_success 'timed sampling and dynamic probing: the gated script elaborates for the kernel runtime' '
	"$PERUN" collect -c ./counts trace -s userspace -f fib#3 --runtime kernel --script-only \
		-on timed-sampling -on dynamic-probing -oa probing-threshold 10 >o.stp &&
	grep -q "__perun_armed(" o.stp && grep -q "__perun_dormant == 0" o.stp &&
	stap -p3 -I "$SRCDIR/tapsets" o.stp >/dev/null 2>err || { cat err; exit 1; }
'

test_expect_success 'a source line probe (-d) elaborates on both runtimes' '
	"$PERUN" collect -c ./counts trace -s custom -d counts.c:38 --script-only >d.stp &&
	grep "statement(\"\*@counts.c:38\")" d.stp &&
	stap -p3 -I "$SRCDIR/tapsets" d.stp >/dev/null 2>err || { cat err; exit 1; }
'

test_expect_success 'prepare-kernel-runtime.sh makes a stamped, patched copy; doctor reports it' '
	PERUN_KRUNTIME_DIR="$TRASH/krt" sh "$SRCDIR/tools/prepare-kernel-runtime.sh" 2>err &&
	cat err &&
	if ! stap -V 2>&1 | grep -q "version 4\.8/"; then
		grep "ships no runtime patches" err || exit 1; exit 0
	fi &&
	grep "^patches 01-task-work-cancel-func 02-relay-txfix 03-uprobe-filter$" krt/.perun-kruntime &&
	grep -q "stapiu_filter" krt/linux/uprobes-inode.c &&
	grep -q "task_work_cancel_func" krt/stp_task_work.c &&
	grep -q "_stp_exit_drain_ms" krt/transport/transport.c &&
	sh "$SRCDIR/tools/prepare-kernel-runtime.sh" --dest "$TRASH/krt" --check 2>err &&
	grep "ok:" err &&
	{ PERUN_KRUNTIME_DIR="$TRASH/krt" "$PERUN" doctor >doc || :; } &&
	grep "kernel rt sources  patched copy $TRASH/krt: systemtap 4.8" doc &&
	PERUN_KRUNTIME_DIR="$TRASH/krt" "$PERUN" doctor --json | grep "kernel rt sources" &&
	sed -i "s/^file runtime.h .*/file runtime.h 1 1/" krt/.perun-kruntime &&
	{ PERUN_KRUNTIME_DIR="$TRASH/krt" "$PERUN" doctor >doc || :; } &&
	grep "kernel rt sources  stap 4.8, stock runtime: the patched copy in $TRASH/krt is stale" doc &&
	! sh "$SRCDIR/tools/prepare-kernel-runtime.sh" --dest "$TRASH/krt" --check 2>/dev/null &&
	{ PERUN_KRUNTIME_DIR="$TRASH/none" "$PERUN" doctor >doc || :; } &&
	grep "warn kernel rt sources  stap 4.8, stock runtime: no patched copy" doc &&
	grep "fix: sh .*prepare-kernel-runtime.sh" doc
'

test_expect_success 'cross-building options: usage errors' '
	test_expect_code() { want=$1; shift; "$@"; test $? = "$want"; } &&
	test_expect_code 2 "$PERUN" collect -c ./counts trace -r 6.1.0-1-amd64 --runtime bpf 2>err &&
	grep "not with --runtime bpf" err &&
	test_expect_code 2 "$PERUN" collect -c ./counts trace --compile-only -sc 2>err &&
	grep "not with -sc" err &&
	test_expect_code 2 "$PERUN" collect -c ./counts trace -r ../x 2>err &&
	test_expect_code 2 "$PERUN" cache build --kernel 2>err &&
	test_expect_code 2 "$PERUN" cache build -c ./counts 2>err &&
	grep "give the collect arguments" err &&
	test_expect_code 2 "$PERUN" cache build -c ./counts trace --script-only >out 2>err &&
	cat >expect <<-\EOF &&
	perun cache build: --script-only builds no module: use perun collect --script-only
	EOF
	test_cmp expect err &&
	! test -s out
'

test_expect_success 'a release without headers here: the build fails naming the package' '
	test_must_fail() { if "$@"; then return 1; fi; } &&
	test_must_fail "$PERUN" cache build --kernel 0.0.0-nosuch-amd64 -c ./counts trace \
		-s custom -f fib 2>err &&
	grep "no kernel build tree for 0.0.0-nosuch-amd64.*apt-get install linux-headers-0.0.0-nosuch-amd64" err
'

test_done
