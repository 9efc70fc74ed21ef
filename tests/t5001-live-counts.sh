#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: real SystemTap (bpf runtime) on fixtures whose call counts are known,
# cross-checked against bpftrace on the same run.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'collect counts every call exactly' '
	"$PERUN" collect -c ./counts -o counts.perf trace -s userspace -f libcountlib#lib_add \
		2>err >out &&
	cat err &&
	grep "runtime bpf" err &&
	grep "counts done" out &&
	profile_counts counts.perf >actual &&
	cat >expect <<-\EOF &&
	counts:phase 4
	counts:tick 300
	fib 1983
	first 1
	leaf 300
	lib_add 300
	main 1
	thread_main 3
	work 300
	EOF
	test_cmp expect actual
'

test_expect_success 'the profile has no anomalies and says its units' '
	test "$(profile_field counts.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field counts.perf trace.anomalies.unmatched_exits)" = 0 &&
	test "$(profile_field counts.perf trace.anomalies.malformed_lines)" = 0 &&
	test "$(profile_field counts.perf trace.anomalies.lost_events)" = 0 &&
	test "$(profile_field counts.perf header.units)" = "{\"mixed(time delta)\": \"ns\"}" &&
	test "$(profile_field counts.perf collector_info.name)" = trace &&
	test "$(profile_field counts.perf trace.threads)" = 4
'

test_expect_success 'every call: inclusive >= exclusive, callers contain callees' '
	"$PERUN" show counts.perf --format json --expand >counts.json &&
	python3 - counts.json <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	res = p["snapshots"][0]["resources"]
	byid = {r["call-id"]: r for r in res}
	assert len(res) == 1983 + 300 * 3 + 1 + 1 + 3 + 4 + 300, len(res)
	for r in res:
	    assert r["amount"] >= r["exclusive"] >= 0, r
	    if r["caller-id"] >= 0:
	        c = byid[r["caller-id"]]
	        assert c["thread"] == r["thread"], (c, r)
	        assert c["timestamp"] <= r["timestamp"], (c, r)
	        assert r["timestamp"] + r["amount"] <= c["timestamp"] + c["amount"], (c, r)
	        assert c["uid"] == r["caller"] and r["depth"] == c["depth"] + 1
	# fib recursion: depth of the deepest fib is 15 below the first one
	fibs = [r for r in res if r["uid"] == "fib"]
	assert max(r["depth"] for r in fibs) - min(r["depth"] for r in fibs) == 14
	# the threads called work through a pointer, 100 calls each
	from collections import Counter
	t = Counter(r["thread"] for r in res if r["uid"] == "work")
	assert sorted(t.values()) == [100, 100, 100], t
	print("ok", len(res))
	PY
'

test_expect_success 'counts equal bpftrace counts on the same run' '
	bpftrace -e "uprobe:$TRASH/counts:fib,uprobe:$TRASH/counts:work,uprobe:$TRASH/counts:leaf,uprobe:$TRASH/libcountlib.so:lib_add { @[probe] = count(); }" >bt.out 2>&1 &
	bt=$! &&
	for i in $(seq 100); do grep -q Attaching bt.out && break; sleep 0.1; done &&
	sleep 1 &&
	"$PERUN" collect -c ./counts -o bt.perf trace -q -s custom -f fib -f work -f leaf -f libcountlib#lib_add ||
		{ kill -INT $bt; exit 1; }
	bpftrace_stop $bt &&
	cat bt.out &&
	for f in fib work leaf lib_add; do
		want=$(sed -n "s/^@\[uprobe:.*:$f\]: //p" bt.out) &&
		got=$(profile_counts bt.perf | sed -n "s/^$f //p") &&
		echo "$f perun=$got bpftrace=$want" &&
		test -n "$want" && test "$got" = "$want" || exit 1
	done
'

test_expect_success 'sampling N records one call in N per thread' '
	"$PERUN" collect -c ./counts -o sampled.perf trace -q -s custom -f fib#10 -f work#7 &&
	profile_counts sampled.perf >actual &&
	printf "fib 199\nwork 45\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'global sampling and the u_sampled strategy' '
	"$PERUN" collect -c ./counts -o us.perf trace -q -s u_sampled --no-usdt &&
	profile_counts us.perf >actual &&
	grep "^fib 100$" actual &&
	grep "^work 15$" actual &&
	"$PERUN" collect -c ./counts -o g.perf trace -q -s custom -g 3 -f fib &&
	test "$(profile_counts g.perf)" = "fib 661"
'

test_expect_success 'USDT pairs have durations, points have none' '
	"$PERUN" collect -c ./counts -o usdt.perf trace -q -s custom -u phase -u tick &&
	profile_counts usdt.perf >actual &&
	printf "counts:phase 4\ncounts:tick 300\n" >expect &&
	test_cmp expect actual &&
	"$PERUN" show usdt.perf --format json --expand >usdt.json &&
	python3 - usdt.json <<-\PY
	import json, sys
	res = json.load(open(sys.argv[1]))["snapshots"][0]["resources"]
	assert all(r["subtype"] == "point" and r["amount"] == 0 for r in res if r["uid"] == "counts:tick")
	assert all(r["subtype"] == "time delta" and r["amount"] > 0 for r in res if r["uid"] == "counts:phase")
	PY
'

test_expect_success 'C++ methods are probed and named demangled' '
	"$PERUN" collect -c ./cppmethod -o cpp.perf trace -q -s custom -f Counter::bump -f "twice(double)" &&
	profile_counts cpp.perf >actual &&
	printf "Counter::bump(int) 250\ntwice(double) 1\n" >expect &&
	test_cmp expect actual &&
	"$PERUN" collect -c ./cppmethod -o cppall.perf trace -q -s userspace &&
	profile_counts cppall.perf >all &&
	grep "^twice(int) 1$" all &&
	grep "^Counter::get() const 1$" all
'

test_expect_success '--include and --exclude filter by PCRE2' '
	"$PERUN" collect -c ./counts -o inc.perf trace -q -s userspace --no-usdt --include "^(fib|wo)" --exclude "^work$" &&
	test "$(profile_counts inc.perf)" = "fib 1983"
'

test_expect_success '--aggregate: the script counts, the stream carries summaries only' '
	"$PERUN" collect -c ./counts -o agg.perf trace -q -s userspace -f libcountlib#lib_add --aggregate &&
	profile_counts agg.perf >actual &&
	profile_counts counts.perf >expect &&
	test_cmp expect actual &&
	"$PERUN" show counts.perf --format json --expand >counts.json &&
	python3 - agg.perf counts.json <<-\PY
	import json, sys
	agg, full = (json.load(open(f)) for f in sys.argv[1:])
	res = agg["snapshots"][0]["resources"]
	assert all(r["subtype"] == "time summary" for r in res)
	# one resource per function and thread: work ran on three threads
	assert sorted(r["count"] for r in res if r["uid"] == "work") == [100, 100, 100]
	for r in res:
	    if r["uid"].startswith("counts:tick"):
	        continue
	    assert sum(r["log2_hist"]) == r["count"], r
	    assert r["min"] <= r["amount"] / r["count"] <= r["max"], r
	# no per-event output: a few hundred bytes instead of tens of kilobytes
	assert agg["trace"]["raw_bytes"] * 10 < full["trace"]["raw_bytes"], (agg["trace"]["raw_bytes"], full["trace"]["raw_bytes"])
	PY
'

test_expect_success 'the raw stream: under 28 bytes per event recorded, 14 printed' '
	bpe=$(profile_field counts.perf trace.bytes_per_event) &&
	echo "record: bytes/event $bpe" &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 28 else 1)" "$bpe" &&
	# printing through stapbpf loses events (exit 3), or kills its reader
	# (exit 1): bytes per event are measured over what arrived
	{ "$PERUN" collect -c ./counts -o print.perf trace -q -s custom -f fib --transport print ||
	  test $? = 3 -o $? = 1; } &&
	test "$(profile_field print.perf collector_info.params.transport)" = print &&
	bpe=$(profile_field print.perf trace.bytes_per_event) &&
	echo "print: bytes/event $bpe" &&
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 14 else 1)" "$bpe"
'

test_done
