#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: what the processes a traced one starts are, and how they are traced.
# A thread is never a child process, however short it lives.  --follow
# traces every child from its first instruction: a forking server started
# before perun, attached with --pid P --follow, forks children that serve at
# once; each child's counts equal the program's own, traced_after_ns is 0.
# An untraced twin of the binary pays a trap per probed call meanwhile (its
# time before and during is printed).
. "$SRCDIR/tests/lib.sh"
require_live

# Per-process counts of a profile, "PID FUNCTION COUNT" lines, sorted by
# sort(1) as the expected lines are (pids past 9999 sort as text): each
# thread's calls under its process (trace.threads_by_process).
process_counts() {
	"$PERUN" show "$1" --format json --expand >"$1.json" || return 1
	python3 - "$1" "$1.json" <<-\PY | sort
	import json, sys
	t = json.load(open(sys.argv[1]))["trace"]
	proc_of = {th: int(p) for p, ts in t.get("threads_by_process", {}).items() for th in ts}
	n = {}
	for r in json.load(open(sys.argv[2]))["snapshots"][0]["resources"]:
	    k = (proc_of.get(r["thread"], r["thread"]), r["uid"])
	    n[k] = n.get(k, 0) + 1
	for (p, f), c in n.items():
	    print(p, f, c)
	PY
}

# The program's own counts from its "child PID served N" lines, as
# process_counts prints them for FUNCTIONS ($2...).
served_counts() {
	out=$1; shift
	sed -n "s/^child \([0-9]*\) served \([0-9]*\)$/\1 \2/p" "$out" |
	while read -r pid n; do
		for f in "$@"; do echo "$pid $f $n"; done
	done | sort
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

# at the top level: the fifo's writer (fd 3) lives as long as the script
(cd "$TRASH" && rm -f in && mkfifo in)
# appended to (O_APPEND), so that a test can empty it
cd "$TRASH" && { ./forksrv <in >>srv.out 2>&1 & echo $! >srv.pid; } && exec 3>in && cd - >/dev/null

test_expect_success '--pid P --follow: children forked at once, each exact from its first instruction' '
	wait_line srv.out "^ready" &&
	pid=$(cat srv.pid) &&
	rm -f err &&
	{ "$PERUN" collect --pid "$pid" --follow -o f.perf trace -s custom -f handle -f parse \
		-f respond 2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	echo "fork 6 2000" >&3 && wait_line srv.out "^forked 6" &&
	echo 7 >&3 && wait_line srv.out "^served 7" &&
	kill -INT "$(cat perun.pid)" &&
	status=0 && wait "$(cat perun.pid)" || status=$? &&
	cat err &&
	test "$status" = 0 &&
	grep "^perun: attached 6 of 6 probe points to process $pid .*; --follow: other processes of $TRASH/forksrv pay a trap per probed call" err &&
	grep "^perun: followed 6 child processes from their first instruction" err &&
	test "$(profile_field f.perf trace.complete)" = true &&
	process_counts f.perf >actual &&
	{ served_counts srv.out handle parse respond &&
	  for f in handle parse respond; do echo "$pid $f 7"; done; } | sort >expect &&
	test_cmp expect actual &&
	python3 - f.perf <<-\PY
	import json, sys
	kids = json.load(open(sys.argv[1]))["trace"]["children"]
	assert len(kids) == 6, kids
	for k in kids:
	    assert k["followed"] and k["traced_after_ns"] == 0, k
	PY
'

test_expect_success '--follow and exec: the same binary is traced from its first instruction, another program is not' '
	pid=$(cat srv.pid) &&
	rm -f err && : >srv.out &&
	{ "$PERUN" collect --pid "$pid" --follow -o e.perf trace -s custom -f handle \
		2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	echo "exec 2 300" >&3 && wait_line srv.out "^forked 2" &&
	echo "sh 1 40" >&3 && wait_line srv.out "^forked 1" &&
	kill -INT "$(cat perun.pid)" &&
	status=0 && wait "$(cat perun.pid)" || status=$? &&
	cat err &&
	test "$status" = 0 &&
	# the shell by its file (while it runs) or by the path it was
	# executed by (once it has executed forksrv): never forksrv
	grep -E "^perun: process [0-9]* executed (/usr/bin/dash|/bin/sh), which has no probed function: it is traced again if it executes a probed binary" err &&
	! grep "executed .*forksrv" err &&
	process_counts e.perf >actual &&
	served_counts srv.out handle >expect &&
	test_cmp expect actual &&
	python3 - e.perf <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1]))["trace"]
	assert t["complete"], t["complete"]
	assert len(t["children"]) == 3, t["children"]
	assert all(k["followed"] and k["traced_after_ns"] == 0 for k in t["children"])
	probed = sorted(e["probed"] for e in t["execs"])
	# two execs of forksrv, the shell, and the shell'"'"'s exec of forksrv
	assert probed == [False, True, True, True], t["execs"]
	PY
'

test_expect_success '--follow: the first 5 execs of unprobed programs are named, the rest only counted' '
	pid=$(cat srv.pid) &&
	rm -f err && : >srv.out &&
	{ "$PERUN" collect --pid "$pid" --follow -o s.perf trace -s custom -f handle \
		2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	echo "sh 8 10" >&3 && wait_line srv.out "^forked 8" &&
	for i in $(seq 100); do test "$(grep -c "^child [0-9]* served" srv.out)" = 8 && break; sleep 0.1; done &&
	kill -INT "$(cat perun.pid)" &&
	status=0 && wait "$(cat perun.pid)" || status=$? &&
	cat err &&
	test "$status" = 0 &&
	test "$(grep -c "which has no probed function" err)" = 5 &&
	test "$(grep -c "(further such execs are not named here; trace.execs lists each)$" err)" = 1 &&
	python3 - s.perf <<-\PY
	import json, sys
	execs = json.load(open(sys.argv[1]))["trace"]["execs"]
	# each child: the shell (no probed function), then its exec of forksrv
	assert sorted(e["probed"] for e in execs) == [False] * 8 + [True] * 8, execs
	PY
'

test_expect_success 'the cost of --follow: an untraced twin traps on the probes, and is not recorded' '
	pid=$(cat srv.pid) &&
	./forksrv --bench 200000 >before &&
	rm -f err && : >srv.out &&
	{ "$PERUN" collect --pid "$pid" --follow -o t.perf trace -s custom -f handle \
		2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	./forksrv --bench 200000 >during &&
	echo 3 >&3 && wait_line srv.out "^served 3" &&
	kill -INT "$(cat perun.pid)" && wait "$(cat perun.pid)" &&
	./forksrv --bench 200000 >after &&
	b=$(sed -n "s/^bench 200000 ns //p" before) &&
	d=$(sed -n "s/^bench 200000 ns //p" during) &&
	a=$(sed -n "s/^bench 200000 ns //p" after) &&
	echo "untraced twin under --follow: 200,000 calls of handle in $b ns before, $d ns during ($(python3 -c "print(round($d / $b, 1))") x), $a ns after ($(python3 -c "print(round($a / $b, 1))") x); per call during: $(python3 -c "print(round(($d - $b) / 200000))") ns more" >twin.txt &&
	# the twin paid: each call trapped (entry and return)
	python3 -c "import sys; sys.exit(0 if $d > $b + 200000 * 50 else 1)" &&
	# and was not recorded; the 3 calls of the service were
	process_counts t.perf >actual &&
	echo "$pid handle 3" >expect &&
	test_cmp expect actual || { cat err srv.out; exit 1; }
'

test_expect_success 'without --follow the probes stay bound to the process: the twin does not trap' '
	pid=$(cat srv.pid) &&
	./forksrv --bench 200000 >before &&
	rm -f err &&
	{ "$PERUN" collect --pid "$pid" -o p.perf trace -s custom -f handle \
		2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	! grep -- "--follow" err &&
	./forksrv --bench 200000 >during &&
	kill -INT "$(cat perun.pid)" && wait "$(cat perun.pid)" &&
	b=$(sed -n "s/^bench 200000 ns //p" before) &&
	d=$(sed -n "s/^bench 200000 ns //p" during) &&
	echo "untraced twin without --follow: 200,000 calls in $b ns before, $d ns during ($(python3 -c "print(round($d / $b, 1))") x)" >>twin.txt &&
	python3 -c "import sys; sys.exit(0 if $d < 3 * $b + 20e6 else 1)"
'

# the times of the twin, in the output of the test (on whatever load the host has)
sed 's/^/# /' "$TRASH/twin.txt" 2>/dev/null

test_expect_success 'a child that cannot join the traced set is named, and the collect exits 3' '
	cc -O1 -o fillset "$FIXTURES/fillset.c" &&
	pid=$(cat srv.pid) &&
	rm -f err && : >srv.out &&
	{ "$PERUN" collect --pid "$pid" --follow -o x.perf trace -s custom -f handle \
		2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	loader=$(pgrep -f "^[^ ]*perun-uprobes .*$TRASH") &&
	./fillset "$loader" >filled &&
	cat filled &&
	# a child that lives long enough for the loader to look at it
	echo "fork 1 200000" >&3 && wait_line srv.out "^forked 1" &&
	kill -INT "$(cat perun.pid)" &&
	status=0 && wait "$(cat perun.pid)" || status=$? &&
	cat err &&
	test "$status" = 3 &&
	child=$(sed -n "s/^child \([0-9]*\) served 200000$/\1/p" srv.out) &&
	grep "^perun: warning: --follow: process $child (started by $pid) could not join the traced set (65536 processes at most): its calls are not recorded" err &&
	grep "^perun: warning: the trace is incomplete: of the 1 child process --follow saw, 1 could not be traced and 0 were traced only from some time after their fork" err &&
	test "$(profile_field x.perf trace.complete)" = false &&
	test "$(profile_field x.perf trace.children)" = "[{\"pid\": $child, \"parent\": $pid, \"followed\": false}]"
'

test_expect_success 'the server runs on; nothing of perun is left' '
	echo quit >&3 && exec 3>&- &&
	wait_line srv.out "^bye" &&
	assert_nothing_left
'

test_done
