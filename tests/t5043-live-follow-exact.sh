#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: what the processes a traced one starts are, and how they are traced.
# A thread is never a child process, however short it lives.
. "$SRCDIR/tests/lib.sh"
require_live

# Waits up to 60 s for a line matching $2 in file $1.
wait_line() {
	for i in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no '$2' in $1:"; cat "$1"; return 1
}

test_expect_success 'build the forking server' '
	cc -g -O1 -pthread -o forksrv "$FIXTURES/forksrv.c"
'

test_expect_success 'threads, however short, are not child processes; forks are' '
	# 60 threads that each serve 5 requests and end at once, as a
	# thread-per-request server does, then 2 processes
	printf "threads 30 5\nthreads 30 5\nfork 2 3\nquit\n" >cmds &&
	"$PERUN" collect -c ./forksrv -o t.perf trace -s custom -f handle <cmds >out 2>err &&
	cat err &&
	test "$(profile_counts t.perf)" = "handle 300" &&
	grep "^perun: the command started 2 child processes; only its own process was traced" err &&
	! grep "tell a thread from a process" err &&
	test "$(profile_field t.perf trace.untraced_children)" = 2 &&
	python3 - t.perf out <<-\PY
	import json, re, sys
	t = json.load(open(sys.argv[1]))["trace"]
	forked = sorted(int(p) for p in re.findall(r"child (\d+) served", open(sys.argv[2]).read()))
	assert sorted(k["pid"] for k in t["children"]) == forked, (t["children"], forked)
	assert not any(k["followed"] for k in t["children"]), t["children"]
	procs = t["threads_by_process"]
	assert len(procs) == 1 and len(list(procs.values())[0]) == 60, procs
	PY
'

test_done
