#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: --aggregate on perun's own loader keeps the count, total, min, max
# and log2 histogram per thread and function in the kernel, pairing entries
# and returns by stack pointer.  One fixture whose counts are known
# (fixtures/aggcalls.c), traced by the loader, by stapbpf's script
# (--loader stapbpf) and counted by bpftrace: the same counts from all
# three, and durations that match what the fixture does.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixture' '
	cc -g -O1 -pthread -o aggcalls "$FIXTURES/aggcalls.c" &&
	printf "leaf 600\nnap 4\nrec 620\nwork 600\n" >expect
'

test_expect_success 'the loader aggregates in the kernel and says so' '
	"$PERUN" collect -c ./aggcalls -o loader.perf trace -s custom -f work -f leaf -f rec \
		-f nap --aggregate >out 2>err &&
	cat err &&
	grep "^perun: tracing 8 probe points with the bpf runtime (perun.s loader: uprobe_multi links, summaries kept in the kernel; no module)$" err &&
	test "$(profile_field loader.perf trace.loader)" = perun-uprobes &&
	profile_counts loader.perf >actual &&
	test_cmp expect actual
'

test_expect_success 'stapbpf (--loader stapbpf) counts the same, and the profile says which ran' '
	"$PERUN" collect -c ./aggcalls -o stap.perf trace -q -s custom -f work -f leaf -f rec \
		-f nap --aggregate --loader stapbpf &&
	test "$(profile_field stap.perf trace.loader)" = stapbpf &&
	test "$(profile_field stap.perf trace.loader_reason)" = "--loader stapbpf" &&
	profile_counts stap.perf >actual &&
	test_cmp expect actual
'

test_expect_success 'bpftrace counts the same on the same run' '
	bpftrace -e "uprobe:$TRASH/aggcalls:work,uprobe:$TRASH/aggcalls:leaf,uprobe:$TRASH/aggcalls:rec,uprobe:$TRASH/aggcalls:nap { @[probe] = count(); }" >bt.out 2>&1 &
	bt=$! &&
	for i in $(seq 100); do grep -q Attaching bt.out && break; sleep 0.1; done &&
	sleep 1 &&
	"$PERUN" collect -c ./aggcalls -o bt.perf trace -q -s custom -f work -f leaf -f rec -f nap \
		--aggregate || { kill -INT $bt; exit 1; }
	bpftrace_stop $bt &&
	cat bt.out &&
	sed -n "s/^@\[uprobe:.*:\([a-z]*\)\]: \([0-9]*\)$/\1 \2/p" bt.out | sort >bt.counts &&
	test_cmp expect bt.counts &&
	profile_counts bt.perf >actual &&
	test_cmp bt.counts actual
'

test_expect_success 'durations: every call timed, nap near its 3 ms, one summary per thread' '
	python3 - loader.perf stap.perf <<-\PY
	import json, sys
	for f in sys.argv[1:]:
	    p = json.load(open(f))
	    res = p["snapshots"][0]["resources"]
	    assert all(r["subtype"] == "time summary" for r in res), f
	    for r in res:
	        assert sum(r["log2_hist"]) == r["count"], (f, r)
	        assert 0 < r["min"] <= r["amount"] / r["count"] <= r["max"], (f, r)
	    nap = [r for r in res if r["uid"] == "nap"]
	    assert len(nap) == 1 and nap[0]["count"] == 4, (f, nap)
	    # nanosleep(3 ms): at least 3 ms, and not a second even on a busy host
	    assert 3e6 <= nap[0]["min"] and nap[0]["max"] < 1e9, (f, nap)
	    work = sorted(r["count"] for r in res if r["uid"] == "work")
	    assert work == [200, 200, 200], (f, work)
	    # rec 30 deep: the outermost call contains the 30 inside it
	    rec = [r for r in res if r["uid"] == "rec"][0]
	    assert rec["max"] > 2 * rec["min"], (f, rec)
	    print(f, "ok")
	PY
'

test_expect_success 'calls left by longjmp are counted, without a duration, and said' '
	"$PERUN" collect -c ./aggcalls -a jump -o jump.perf trace -s custom -f escape -f rec \
		--aggregate >out 2>err &&
	cat err &&
	profile_counts jump.perf >actual &&
	printf "escape 20\nrec 620\n" >expect.jump &&
	test_cmp expect.jump actual &&
	grep "^perun: 20 calls are counted without a duration: 16 unwound past (longjmp, an exception) or without a return probe (the kernel keeps at most 64 pending per thread), 4 still open when their thread or the trace ended, 0 entered deeper than 128 traced frames, 0 in threads beyond the 4096 that get a shadow stack at once, 0 USDT pairs begun with 16 of theirs open or beyond the 16384 kept open$" err &&
	python3 - jump.perf <<-\PY
	import json, sys
	res = json.load(open(sys.argv[1]))["snapshots"][0]["resources"]
	esc = [r for r in res if r["uid"] == "escape"][0]
	assert esc["count"] == 20 and sum(esc["log2_hist"]) == 0 and esc["amount"] == 0, esc
	PY
'

test_expect_success 'a USDT begin/end pair is aggregated on the loader as on stapbpf' '
	build_fixtures &&
	"$PERUN" collect -c ./counts -o usdt-l.perf trace -s custom -u phase -u tick -f fib \
		--aggregate >out 2>err &&
	cat err &&
	grep "summaries kept in the kernel" err &&
	test "$(profile_field usdt-l.perf trace.loader)" = perun-uprobes &&
	"$PERUN" collect -c ./counts -o usdt-s.perf trace -q -s custom -u phase -u tick -f fib \
		--aggregate --loader stapbpf &&
	test "$(profile_field usdt-s.perf trace.loader)" = stapbpf &&
	printf "counts:phase 4\ncounts:tick 300\nfib 1983\n" >expect.usdt &&
	profile_counts usdt-l.perf >actual.l &&
	test_cmp expect.usdt actual.l &&
	profile_counts usdt-s.perf >actual.s &&
	test_cmp expect.usdt actual.s &&
	python3 - usdt-l.perf usdt-s.perf <<-\PY
	import json, sys
	for f in sys.argv[1:]:
	    s = json.load(open(f))["trace"]["summary"]
	    ph, fib, tick = s["counts:phase"], s["fib"], s["counts:tick"]
	    # every phase timed: the pair is begin to end, around fib(0..3)
	    assert sum(ph["log2_hist"]) == 4 and ph.get("no_duration", 0) == 0, (f, ph)
	    assert 0 < ph["min"] <= ph["max"], (f, ph)
	    # phase 3 holds fib(3): its 5 calls, each at least the shortest fib
	    assert ph["max"] >= fib["min"], (f, ph, fib)
	    assert sum(tick.get("log2_hist", [])) == 0, (f, tick)
	    print(f, "ok", ph["min"], ph["max"])
	PY
'

test_done
