#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun show of a profile collected with --follow, which holds several
# processes: merged by default (and saying how many), one process with
# --pid, a table per process with --per-process.  The counts are the
# program's own: the parent serves 4 requests, each of its 2 children 3.
. "$SRCDIR/tests/lib.sh"
require_live

# The table rows cut to function and calls (times vary), the pids named:
# P the traced process, C1 and C2 its children in the order they were forked.
norm() {
	sed -E -e 's/^([a-z]+) +([0-9]+) .*/\1 \2/' -e '/^function /s/ +calls .*/ calls/' \
		-e "s/\<$P\>/P/g" -e "s/\<$C1\>/C1/g" -e "s/\<$C2\>/C2/g" "$@"
}

test_expect_success 'collect a forking server with --follow' '
	cc -g -O1 -pthread -o forksrv "$FIXTURES/forksrv.c" &&
	printf "4\nfork 2 3\nquit\n" >cmds &&
	"$PERUN" collect --follow -o f.perf -c ./forksrv trace -s custom -f handle -f parse \
		<cmds >out 2>err || { cat err; false; }
'

P=$(sed -n "s/^ready \([0-9]*\)$/\1/p" "$TRASH/out")
C1=$(sed -n "s/^child \([0-9]*\) served 3$/\1/p" "$TRASH/out" | sort -n | sed -n 1p)
C2=$(sed -n "s/^child \([0-9]*\) served 3$/\1/p" "$TRASH/out" | sort -n | sed -n 2p)

test_expect_success 'the program saw its processes as the profile records them' '
	test -n "$P" && test -n "$C1" && test -n "$C2" &&
	python3 - f.perf "$P $C1 $C2" <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1]))["trace"]
	assert sorted(int(p) for p in t["threads_by_process"]) == sorted(int(x) for x in sys.argv[2].split()), t
	PY
'

test_expect_success 'show merges the processes and says how many' '
	"$PERUN" show f.perf >actual && norm actual >merged &&
	cat >expect <<-EOF &&
	3 processes merged (P, C1, C2): --per-process shows a table for each, --pid PID one of them
	function calls
	handle 10
	parse 10
	2 functions; amounts in ns
	total: outermost calls of a recursion only
	EOF
	test_cmp expect merged
'

test_expect_success 'show --per-process: a table per process, headed by its pid and command' '
	"$PERUN" show --per-process f.perf >actual && norm actual >tables &&
	cat >expect <<-EOF &&
	process P: ./forksrv
	function calls
	handle 4
	parse 4
	2 functions; amounts in ns
	total: outermost calls of a recursion only

	process C1: ./forksrv (forked by P)
	function calls
	handle 3
	parse 3
	2 functions; amounts in ns
	total: outermost calls of a recursion only

	process C2: ./forksrv (forked by P)
	function calls
	handle 3
	parse 3
	2 functions; amounts in ns
	total: outermost calls of a recursion only
	EOF
	test_cmp expect tables
'

test_expect_success 'show --pid: one process, in the table and in folded stacks' '
	"$PERUN" show --pid "$C2" f.perf >actual && norm actual >one &&
	sed -n "/^process C2/,\$p" expect >expect.c2 &&
	test_cmp expect.c2 one &&
	"$PERUN" show --pid "$P" --format folded f.perf | sed "s/ [0-9]*$//" | sort >folded &&
	printf "handle\nhandle;parse\n" >expect.folded &&
	test_cmp expect.folded folded &&
	"$PERUN" show --pid "$P" --format folded f.perf | awk "{ n += \$2 } END { print (n > 0) }" >pos &&
	echo 1 >expect.pos && test_cmp expect.pos pos
'

test_expect_success 'show --pid of a process not in it, or of a profile of one process: a clear error' '
	test_expect_code 1 "$PERUN" show --pid 1 f.perf 2>err &&
	norm err >actual &&
	echo "perun show: process 1 is not in f.perf: it holds P, C1, C2" >expect &&
	test_cmp expect actual &&
	test_expect_code 2 "$PERUN" show --per-process --format folded f.perf 2>err &&
	echo "perun show: --per-process goes with --format summary, not --pid" >expect &&
	test_cmp expect err &&
	test_expect_code 2 "$PERUN" show --pid 0 f.perf 2>err &&
	echo "perun show: --pid wants a process id, not 0" >expect &&
	test_cmp expect err &&
	python3 - f.perf g.perf <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	del p["trace"]["threads_by_process"]
	json.dump(p, open(sys.argv[2], "w"))
	PY
	test_expect_code 1 "$PERUN" show --pid "$P" g.perf 2>err &&
	echo "perun show: g.perf records no processes (trace.threads_by_process): it was not collected by perun${SQ}s loader; --pid and --per-process need them" >expect &&
	test_cmp expect err &&
	"$PERUN" show g.perf >actual && ! grep "processes merged" actual
'

test_done
