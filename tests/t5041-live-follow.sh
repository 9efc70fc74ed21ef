#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: --follow traces the processes a traced one starts (a fork that
# serves, a child that execs the same binary), each from its first
# instruction (traced_after_ns 0 in the profile) and with its threads under
# its own pid; without it they are counted as untraced.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the service' '
	cc -g -O1 -pthread -o service "$FIXTURES/service.c" &&
	printf "10\nfork 500 200\nexec 300 200\n20\nquit\n" >cmds
'

test_expect_success '-c with --follow: the children'"'"'s calls are counted, each under its pid' '
	"$PERUN" collect -c ./service -o f.perf trace -s custom -f handle -f parse --follow \
		<cmds >out 2>err &&
	cat err &&
	grep "followed 2 child processes" err &&
	grep "exec served 300" out &&
	profile_counts f.perf >actual &&
	printf "handle 830\nparse 830\n" >expect &&
	test_cmp expect actual &&
	python3 - f.perf <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1]))["trace"]
	kids = t["children"]
	assert len(kids) == 2 and all(k["followed"] for k in kids), kids
	procs = t["threads_by_process"]
	# the service (3 worker threads) and its two children (one thread each)
	assert len(procs) == 3, procs
	for k in kids:
	    assert procs[str(k["pid"])] == [k["pid"]], (k, procs)
	    assert k["traced_after_ns"] == 0, k
	assert t["untraced_children"] == 0
	PY
'

test_expect_success 'without --follow the children are counted and named untraced' '
	"$PERUN" collect -c ./service -o g.perf trace -s custom -f handle <cmds >out 2>err &&
	grep "started 2 child processes; only its own process was traced (--follow" err &&
	test "$(profile_counts g.perf)" = "handle 30" &&
	test "$(profile_field g.perf trace.untraced_children)" = 2
'

test_expect_success '--pid with --follow: a running service'"'"'s children too' '
	rm -f in && mkfifo in &&
	{ ./service <in >out2 2>&1 & echo $! >service.pid; } &&
	exec 4>in &&
	rm -f err &&
	{ "$PERUN" collect --pid "$(cat service.pid)" --follow -o p.perf trace -s custom \
		-f handle 2>err & echo $! >perun.pid; } &&
	for i in $(seq 300); do grep -q "^perun: attached" err && break; sleep 0.1; done &&
	echo "fork 77 200" >&4 &&
	echo 5 >&4 &&
	echo quit >&4 && exec 4>&- &&
	wait "$(cat perun.pid)" &&
	cat err &&
	test "$(profile_counts p.perf)" = "handle 82" &&
	test "$(profile_field p.perf header.attach.ended_by)" = process-exit &&
	assert_nothing_left
'

test_expect_success '--follow with --loader stapbpf is a usage error' '
	test_expect_code 2 "$PERUN" collect -c ./service -o x.perf trace -s custom -f handle \
		--follow --loader stapbpf </dev/null 2>err &&
	grep "follow needs perun" err
'

test_done
