#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun collect --pid attaches to a multi-threaded service that runs
# before it and must run on after it: exact counts of the requests made
# while attached, Ctrl-C and -t detach and leave it serving, an untraced
# twin of the same binary keeps its speed, and SIGKILL of perun leaves the
# service running with nothing of perun's behind.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the service' '
	cc -g -O1 -pthread -o service "$FIXTURES/service.c"
'

# at the top level: the fifo's writer (fd 3) lives as long as the script,
# not one test's subshell
(cd "$TRASH" && rm -f in && mkfifo in)
cd "$TRASH" && { ./service <in >out 2>&1 & echo $! >service.pid; } && exec 3>in && cd - >/dev/null

test_expect_success 'attach: exact counts of the requests made while attached, Ctrl-C detaches' '
	wait_line out ready &&
	pid=$(cat service.pid) &&
	echo 50 >&3 && wait_line out "served 50 total 50" &&
	rm -f err &&
	{ "$PERUN" collect --pid "$pid" -o a.perf trace -s custom -f handle -f parse -f reply \
		2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	echo 1000 >&3 && wait_line out "served 1000 total 1050" &&
	echo 234 >&3 && wait_line out "served 234 total 1284" &&
	kill -INT "$(cat perun.pid)" &&
	status=0 && wait "$(cat perun.pid)" || status=$? &&
	cat err &&
	test "$status" = 0 &&
	grep "^perun: attached 6 of 6 probe points to process $pid" err &&
	grep "detached from process $pid after .* (interrupted)" err &&
	# one detach figure: the closing line and the profile say the same
	grep -E "^perun: attached 6 of 6 .*; detaching will take about [0-9.]+ ms;" err &&
	grep -E "^perun: detached from process $pid after [0-9.]+ s \(interrupted\); the detach took [0-9.]+ ms$" err &&
	! grep "^perun: detached [0-9]* probe points" err &&
	est=$(sed -n "s/.*detaching will take about \([0-9.]*\) ms.*/\1/p" err) &&
	took=$(sed -n "s/.*the detach took \([0-9.]*\) ms$/\1/p" err) &&
	say "detach: expected $est ms, took $took ms (a loaded machine)" &&
	python3 -c "import sys; assert abs(float(sys.argv[1]) * 1e3 - float(sys.argv[2])) < 1" \
		"$(profile_field a.perf header.attach.detach_s)" "$took" &&
	profile_counts a.perf >actual &&
	cat >expect <<-\EOF &&
	handle 1234
	parse 1234
	reply 1234
	EOF
	test_cmp expect actual &&
	test "$(profile_field a.perf header.attach.pid)" = "$pid" &&
	test "$(profile_field a.perf header.attach.ended_by)" = interrupt &&
	test "$(profile_field a.perf trace.complete)" = true &&
	test "$(profile_field a.perf trace.threads)" = 3 &&
	echo 7 >&3 && wait_line out "served 7 total 1291" &&
	kill -0 "$pid"
'

test_expect_success 'the threads are the service process'"'"'s own' '
	"$PERUN" show a.perf --format json --expand >a.json &&
	python3 - a.json "$(cat service.pid)" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	pid = int(sys.argv[2])
	threads = {r["thread"] for r in p["snapshots"][0]["resources"]}
	assert len(threads) == 3 and pid not in threads, threads
	for t in threads:
	    # a worker thread of the service: /proc/PID/task/TID
	    import os
	    assert os.path.isdir("/proc/%d/task/%d" % (pid, t)), t
	PY
'

test_expect_success 'an untraced twin of the same binary keeps its speed while one is traced' '
	./service --bench 2000000 >before &&
	rm -f err &&
	{ "$PERUN" collect --pid "$(cat service.pid)" -o b.perf trace -s custom -f handle \
		-f parse -f reply 2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	./service --bench 2000000 >during &&
	echo 100 >&3 && wait_line out "served 100 total 1391" &&
	kill -INT "$(cat perun.pid)" && wait "$(cat perun.pid)" &&
	b=$(sed -n "s/^bench 2000000 ns //p" before) &&
	d=$(sed -n "s/^bench 2000000 ns //p" during) &&
	ratio=$(python3 -c "print(round($d / $b, 2))") &&
	say "untraced twin: 2,000,000 calls in $b ns before, $d ns while the service was traced ($ratio x)" &&
	python3 -c "import sys; sys.exit(0 if $d < 3 * $b + 20e6 else 1)" &&
	test "$(profile_counts b.perf | sed -n "s/^handle //p")" = 100
'

test_expect_success '-t detaches after SECONDS and the service runs on' '
	"$PERUN" collect --pid "$(cat service.pid)" -o c.perf trace -s custom -f handle -t 1 \
		2>err &&
	grep "detached from process .* (-t reached)" err &&
	test "$(profile_field c.perf header.attach.ended_by)" = timeout &&
	echo 3 >&3 && wait_line out "served 3 total 1394"
'

test_expect_success 'SIGKILL of perun while attached: the service runs on, nothing is left' '
	rm -f err &&
	{ "$PERUN" collect --pid "$(cat service.pid)" -o d.perf trace -s custom -f handle \
		2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	kill -KILL "$(cat perun.pid)" &&
	! wait "$(cat perun.pid)" &&
	sleep 1 &&
	echo 5 >&3 && wait_line out "served 5 total 1399" &&
	kill -0 "$(cat service.pid)" &&
	! pgrep -f "perun-uprobes.*$TRASH" &&
	# no BPF program of perun is loaded any more: its links went with it
	! grep -l "perun_uprobe" /proc/[0-9]*/fdinfo/* 2>/dev/null | grep -v "^/proc/$$/" &&
	kill -0 "$(cat service.pid)"
'

test_expect_success '--max-overhead in attach mode: with --loader stapbpf, stapbpf attaches and says so when armed' '
	rm -f err &&
	{ "$PERUN" collect --pid "$(cat service.pid)" -o o.perf trace -s custom -f handle \
		--max-overhead 50 --no-calibrate --loader stapbpf 2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached 2 probe points to process .* (bpf runtime, stapbpf[:)]" &&
	echo 9 >&3 && wait_line out "served 9 total 1408" &&
	kill -INT "$(cat perun.pid)" && wait "$(cat perun.pid)" &&
	test "$(profile_counts o.perf)" = "handle 9" &&
	test "$(profile_field o.perf trace.optimization.max_overhead.max_overhead_pct)" = 50.0
'

test_expect_success 'the process exiting ends the trace, with exit 0' '
	rm -f err &&
	{ "$PERUN" collect --pid "$(cat service.pid)" -o e.perf trace -s custom -f handle \
		2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	echo 40 >&3 && wait_line out "served 40 total 1448" && echo quit >&3 &&
	wait "$(cat perun.pid)" &&
	wait_line out "bye total 1448" &&
	grep "detached from process .* (it exited)" err &&
	test "$(profile_field e.perf header.attach.ended_by)" = process-exit &&
	test "$(profile_counts e.perf | sed -n "s/^handle //p")" = 40 &&
	assert_nothing_left
'

test_expect_success 'bad pids are usage errors' '
	test_expect_code 2 "$PERUN" collect --pid 999999 trace -s custom -f handle 2>err &&
	grep "no such process" err &&
	test_expect_code 2 "$PERUN" collect --pid abc trace 2>err &&
	grep "wants a process id" err &&
	test_expect_code 2 "$PERUN" collect --pid 1 -c ./service trace 2>err &&
	grep "not with -c" err
'

exec 3>&-
test_done
