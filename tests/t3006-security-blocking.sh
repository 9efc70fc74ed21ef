#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Security: perun runs as root and opens files a local user can write (her
# binary, the debuginfo its .gnu_debuglink names, a profile behind a link).
# None of them may hang perun: a FIFO, a device or a procfs file where a
# regular file is expected is refused (or skipped) at once with a message
# naming it, and a trace already running still ends with its profile.
. "$SRCDIR/tests/lib.sh"
require_live
chmod 755 "$TRASH"

# within SECONDS CMD...: runs CMD with a time limit; the exit status in rc
within() {
	secs=$1
	shift
	rc=0
	timeout -s KILL "$secs" "$@" >out 2>err || rc=$?
	cat out err
	test $rc != 137 || { echo "hung: $*"; return 1; }
}

test_expect_success 'a FIFO in place of the binary is refused, not opened' '
	mkfifo app && chmod 755 app &&
	within 20 "$PERUN" collect -c "$TRASH/app" -o x.perf trace -s custom -f leaf &&
	test $rc = 1 && grep "$TRASH/app is a FIFO, not a file" err && ! test -e x.perf &&
	within 20 "$PERUN" doctor "$TRASH/app" && grep "$TRASH/app is a FIFO, not a file" err
'

# a stripped copy of small whose .gnu_debuglink names $1 (any bytes, even
# a path through ..), written as objcopy writes the section
debuglinked() {
	cc -g -O0 -o "$2" "$FIXTURES/small.c" && strip --strip-all "$2" &&
	python3 - "$1" dl <<-\PY &&
	import sys, zlib
	name = sys.argv[1].encode() + b"\0"
	name += b"\0" * (-len(name) % 4)
	open(sys.argv[2], "wb").write(name + zlib.crc32(b"").to_bytes(4, "little"))
	PY
	objcopy --add-section .gnu_debuglink=dl --set-section-flags .gnu_debuglink=readonly "$2"
}

test_expect_success 'a .gnu_debuglink naming a FIFO beside the binary is skipped' '
	mkdir d1 && debuglinked app.debug d1/app && mkfifo d1/app.debug &&
	within 30 "$PERUN" doctor "$TRASH/d1/app" && test $rc = 0 &&
	grep "warning: $TRASH/d1/app.debug: not a regular file: no separate debuginfo" err &&
	within 30 "$PERUN" collect -c "$TRASH/d1/app" -o x.perf trace -s custom -f leaf &&
	test $rc = 1 && test $(grep -c "d1/app.debug: not a regular file" err) = 1 &&
	grep "no function symbols for ${SQ}leaf${SQ}" err
'

test_expect_success 'so is one named through ../ far from the binary' '
	mkdir -p d2/a/b fifos && mkfifo fifos/dbg &&
	debuglinked ../../../fifos/dbg d2/a/b/app &&
	within 30 "$PERUN" doctor "$TRASH/d2/a/b/app" && test $rc = 0 &&
	grep "warning: $TRASH/d2/a/b/../../../fifos/dbg: not a regular file" err
'

test_expect_success 'a debuglink naming a regular debuginfo file is still read' '
	mkdir d3 && cc -g -O0 -o d3/full "$FIXTURES/small.c" &&
	objcopy --only-keep-debug d3/full d3/app.debug && cp d3/full d3/app &&
	strip --strip-all d3/app && objcopy --add-gnu-debuglink=d3/app.debug d3/app &&
	within 60 "$PERUN" collect -c "$TRASH/d3/app" -o d3.perf trace -s custom -f leaf &&
	test $rc = 0 && test "$(profile_counts d3.perf)" = "leaf 10"
'

# 256 MiB of zeros in 40 KB of xz: elfutils decompressed it whole (2.1 GB of
# RSS for a 527 KB bomb) and then said "no debuginfo found"
test_expect_success 'an xz bomb as MiniDebugInfo: too large, not read, memory bounded' '
	cc -g -O0 -o bomb "$FIXTURES/small.c" && strip --strip-all bomb &&
	head -c 256M /dev/zero | xz -0 -T1 >bomb.xz &&
	objcopy --add-section .gnu_debugdata=bomb.xz bomb &&
	python3 - "$PERUN" doctor "$TRASH/bomb" >out 2>err <<-\PY &&
	import resource, subprocess, sys
	subprocess.run(sys.argv[1:], timeout=120)
	print("maxrss_mb", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
	PY
	cat out err &&
	grep "warning: $TRASH/bomb: its MiniDebugInfo (.gnu_debugdata) decompresses to more than 64 MiB: too large, not read" err &&
	grep "stripped, its MiniDebugInfo is too large to read (an xz bomb?), no other debuginfo found" out &&
	test "$(sed -n "s/^maxrss_mb //p" out)" -lt 200
'

test_expect_success 'perun show refuses a procfs file behind a .perf link' '
	ln -s /proc/kmsg x.perf &&
	within 10 "$PERUN" show x.perf && test $rc = 1 &&
	grep "x.perf is a file of procfs, not a regular file on disk" err &&
	ln -s /sys/kernel/notes y.perf && within 10 "$PERUN" show y.perf && test $rc = 1 &&
	grep "y.perf is a file of sysfs" err
'

test_expect_success '--pid: the binary replaced by a FIFO during the trace, perun ends with the profile' '
	cc -g -O0 -o forever "$FIXTURES/forever.c" &&
	{ ./forever & echo $! >forever.pid; } &&
	{ "$PERUN" collect --pid "$(cat forever.pid)" -o p.perf trace -s custom -f tick -t 3 \
		>pout 2>perr & echo $! >perun.pid; } &&
	for i in $(seq 300); do grep -q "attached" perr && break; sleep 0.1; done &&
	grep "attached 2 of 2 probe points" perr &&
	rm forever && mkfifo forever &&
	for i in $(seq 300); do kill -0 "$(cat perun.pid)" 2>/dev/null || break; sleep 0.1; done &&
	if kill -0 "$(cat perun.pid)" 2>/dev/null; then
		echo "perun hangs after the detach"; for p in $(cat perun.pid) $(pgrep -P "$(cat perun.pid)"); do echo "$p $(cat /proc/$p/wchan) $(tr "\0" " " </proc/$p/cmdline)"; ls -l /proc/$p/fd; done; kill -KILL "$(cat perun.pid)"; false
	fi &&
	cat perr && wait "$(cat perun.pid)" &&
	grep "detached from process .* (-t reached)" perr &&
	test "$(profile_field p.perf trace.summary.tick.count)" -gt 0 &&
	kill "$(cat forever.pid)" && rm forever forever.pid
'

test_expect_success 'nothing left behind' '
	{ ! test -f forever.pid || kill "$(cat forever.pid)" 2>/dev/null || :; } &&
	assert_nothing_left 0.5
'

test_done
