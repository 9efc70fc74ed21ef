#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun collect --pid of a process in another mount namespace (a
# container's): the path its /proc/PID/exe names is, in perun's own
# namespace, another file (here a decoy built otherwise).  perun reads and
# probes the file the process runs, through /proc/PID/root, says so, and
# counts exactly what the program says it served.
. "$SRCDIR/tests/lib.sh"
require_live
command -v unshare >/dev/null || skip_all "unshare (util-linux) not found"

test_expect_success 'build the service and a decoy of the same path' '
	cc -g -O1 -pthread -o real "$FIXTURES/service.c" &&
	cc -g -O0 -pthread -o app "$FIXTURES/service.c" &&
	! cmp -s real app
'

# the service runs "$TRASH/app", which its own namespace binds to real
(cd "$TRASH" && rm -f in && mkfifo in)
cd "$TRASH" && {
	unshare -m --propagation private sh -c \
		"mount --bind '$TRASH/real' '$TRASH/app' && exec '$TRASH/app'" <in >out 2>&1 &
	echo $! >unshare.pid
} && exec 3>in && cd - >/dev/null

test_expect_success 'the process runs the real binary under the decoy'"'"'s path' '
	wait_line out ready &&
	pid=$(pgrep -f "^$TRASH/app\$") && echo "$pid" >service.pid &&
	test "$(readlink /proc/$pid/exe)" = "$TRASH/app" &&
	test "$(stat -L -c %i /proc/$pid/exe)" = "$(stat -c %i real)" &&
	test "$(stat -L -c %i /proc/$pid/exe)" != "$(stat -c %i app)"
'

test_expect_success 'attach: the file the process runs is probed, exact counts, said how' '
	pid=$(cat service.pid) &&
	{ "$PERUN" collect --pid "$pid" -o a.perf trace -s custom -f handle -f parse 2>err &
	  echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	echo 300 >&3 && wait_line out "served 300 total 300" &&
	kill -INT "$(cat perun.pid)" &&
	status=0 && wait "$(cat perun.pid)" || status=$? &&
	cat err &&
	test "$status" = 0 &&
	grep "^perun: process $pid runs $TRASH/app of another mount namespace" err &&
	grep "probed as /proc/$pid/root$TRASH/app$" err &&
	profile_counts a.perf >actual &&
	cat >expect <<-\EOF &&
	handle 300
	parse 300
	EOF
	test_cmp expect actual
'

exec 3>&-
kill "$(cat "$TRASH/service.pid" 2>/dev/null)" 2>/dev/null
wait 2>/dev/null
test_done
