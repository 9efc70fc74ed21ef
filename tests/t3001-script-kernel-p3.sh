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

# doctor's kernel rt sources check, its fix line included, with the trash
# and source directories as TRASH and SRCDIR
rt_sources() {
	awk '/kernel rt sources/ { f = 1; print; next } f && /^ / { print; next } { f = 0 }' "$1" |
		sed "s|$TRASH|TRASH|g; s|$SRCDIR|SRCDIR|g"
}
# the same check in doctor --json: "ok <true|false>: <detail>"
json_check() {
	python3 - "$1" "$2" <<'PY' | sed "s|$TRASH|TRASH|g; s|$SRCDIR|SRCDIR|g"
import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["check"] == sys.argv[2]:
        print("ok %s: %s" % (json.dumps(c["ok"]), c["detail"]))
PY
}

test_expect_success 'prepare-kernel-runtime.sh makes a stamped, patched copy; doctor reports it' '
	PERUN_KRUNTIME_DIR="$TRASH/krt" sh "$SRCDIR/tools/prepare-kernel-runtime.sh" 2>err &&
	cat err &&
	if ! stap -V 2>&1 | grep -q "version 4\.8/"; then
		grep "ships no runtime patches" err || exit 1; exit 0
	fi &&
	cat >expect <<-EOF &&
	prepare-kernel-runtime: prepared $TRASH/krt: systemtap 4.8${SQ}s runtime with 01-task-work-cancel-func 02-relay-txfix 03-uprobe-filter
	EOF
	test_cmp expect err &&
	sed -n "/^patches /p" krt/.perun-kruntime >actual &&
	echo "patches 01-task-work-cancel-func 02-relay-txfix 03-uprobe-filter" >expect &&
	test_cmp expect actual &&
	grep -q "stapiu_filter" krt/linux/uprobes-inode.c &&
	grep -q "task_work_cancel_func" krt/stp_task_work.c &&
	grep -q "_stp_exit_drain_ms" krt/transport/transport.c &&
	sh "$SRCDIR/tools/prepare-kernel-runtime.sh" --dest "$TRASH/krt" --check 2>err &&
	cat >expect <<-EOF &&
	prepare-kernel-runtime: ok: $TRASH/krt is systemtap 4.8${SQ}s runtime with 01-task-work-cancel-func 02-relay-txfix 03-uprobe-filter
	EOF
	test_cmp expect err &&
	{ PERUN_KRUNTIME_DIR="$TRASH/krt" "$PERUN" doctor >doc || :; } &&
	rt_sources doc >actual &&
	cat >expect <<-EOF &&
	ok   kernel rt sources  patched copy TRASH/krt: systemtap 4.8${SQ}s runtime with 01-task-work-cancel-func 02-relay-txfix 03-uprobe-filter; used with stap -R (stap 4.8)
	EOF
	test_cmp expect actual &&
	{ PERUN_KRUNTIME_DIR="$TRASH/krt" "$PERUN" doctor --json >doc.json || :; } &&
	json_check doc.json "kernel rt sources" >actual &&
	cat >expect <<-EOF &&
	ok true: patched copy TRASH/krt: systemtap 4.8${SQ}s runtime with 01-task-work-cancel-func 02-relay-txfix 03-uprobe-filter; used with stap -R (stap 4.8)
	EOF
	test_cmp expect actual &&
	sed -i "s/^file runtime.h .*/file runtime.h 1 1/" krt/.perun-kruntime &&
	{ PERUN_KRUNTIME_DIR="$TRASH/krt" "$PERUN" doctor >doc || :; } &&
	rt_sources doc >actual &&
	cat >expect <<-EOF &&
	warn kernel rt sources  stap 4.8, stock runtime: the patched copy in TRASH/krt is stale (systemtap changed since it was made): run sh SRCDIR/tools/prepare-kernel-runtime.sh; stap 4.8${SQ}s stock runtime cannot build modules for Linux 6.1.y past 6.1.103 (task_work_cancel) and loses per-event output at high rates
	                        fix: sh SRCDIR/tools/prepare-kernel-runtime.sh
	EOF
	test_cmp expect actual &&
	test_expect_code 1 sh "$SRCDIR/tools/prepare-kernel-runtime.sh" --dest "$TRASH/krt" --check 2>err &&
	cat >expect <<-EOF &&
	prepare-kernel-runtime: $TRASH/krt is not prepared for systemtap 4.8: run sh $SRCDIR/tools/prepare-kernel-runtime.sh
	EOF
	test_cmp expect err &&
	{ PERUN_KRUNTIME_DIR="$TRASH/none" "$PERUN" doctor >doc || :; } &&
	rt_sources doc >actual &&
	cat >expect <<-EOF &&
	warn kernel rt sources  stap 4.8, stock runtime: no patched copy in TRASH/none (sh SRCDIR/tools/prepare-kernel-runtime.sh makes one when this stap needs it); stap 4.8${SQ}s stock runtime cannot build modules for Linux 6.1.y past 6.1.103 (task_work_cancel) and loses per-event output at high rates
	                        fix: sh SRCDIR/tools/prepare-kernel-runtime.sh
	EOF
	test_cmp expect actual
'

test_expect_success 'cross-building options: usage errors' '
	test_expect_code 2 "$PERUN" collect -c ./counts trace -r 6.1.0-1-amd64 --runtime bpf 2>err &&
	test_expect_code 2 "$PERUN" collect -c ./counts trace --compile-only -sc 2>>err &&
	test_expect_code 2 "$PERUN" collect -c ./counts trace -r ../x 2>>err &&
	test_expect_code 2 "$PERUN" cache build --kernel 2>>err &&
	test_expect_code 2 "$PERUN" cache build -c ./counts 2>>err &&
	test_expect_code 2 "$PERUN" cache build -c ./counts trace --script-only >out 2>>err &&
	cat >expect <<-EOF &&
	perun collect: -r builds kernel modules: not with --runtime bpf
	usage: perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]
	   or: perun collect --pid PID [-o FILE] trace [options]
	perun collect: --compile-only fills the module cache: not with -sc
	usage: perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]
	   or: perun collect --pid PID [-o FILE] trace [options]
	perun collect: -r wants a kernel release like 6.1.0-56-amd64, not ${SQ}../x${SQ}
	usage: perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]
	   or: perun collect --pid PID [-o FILE] trace [options]
	perun cache build: --kernel needs a release (uname -r of the hosts that will run the module)
	perun cache build: give the collect arguments: -c CMD [...] trace [trace options]
	perun cache build: --script-only builds no module: use perun collect --script-only
	EOF
	test_cmp expect err &&
	! test -s out
'

test_expect_success 'a release without headers here: the build fails naming the package' '
	test_expect_code 1 "$PERUN" cache build --kernel 0.0.0-nosuch-amd64 -c ./counts trace \
		-s custom -f fib 2>err &&
	cat >expect <<-\EOF &&
	perun collect: cannot build the kernel module: no kernel build tree for 0.0.0-nosuch-amd64 (/lib/modules/0.0.0-nosuch-amd64/build): apt-get install linux-headers-0.0.0-nosuch-amd64
	EOF
	test_cmp expect err
'

test_done
