#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: a recursion deeper than the kernel's 64 pending return probes per
# thread (python3.11d's quicksort goes 340 calls deep).  On stapbpf the calls
# entered past the limit get no return probe: perun must not pair an outer
# call's exit with a deeper call's entry, must count them all the same, and
# must say why those calls have no duration, exiting 3.  perun's loader
# probes a recursive function's return instructions instead (main, on no
# cycle, keeps its cheaper uretprobe): every call has its duration.
. "$SRCDIR/tests/lib.sh"
require_live

check_nesting() {
	python3 - "$1" "$2" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	recs = sorted((r for r in p["snapshots"][0]["resources"] if r["uid"] == "rec"),
	              key=lambda r: r["depth"])
	n = int(sys.argv[2])
	assert [r["depth"] for r in recs] == list(range(1, n + 1)), [r["depth"] for r in recs]
	for outer, inner in zip(recs, recs[1:]):
	    assert inner["caller-id"] == outer["call-id"], (outer, inner)
	    assert outer["timestamp"] <= inner["timestamp"], (outer, inner)
	    assert inner["timestamp"] + inner["amount"] <= outer["timestamp"] + outer["amount"], (outer, inner)
	PY
}

test_expect_success 'build the fixture' '
	cc -g -O0 -o deeprec "$FIXTURES/deeprec.c"
'

test_expect_success 'stapbpf, rec 101 calls deep: all counted, 38 past the limit untimed' '
	test_expect_code 3 "$PERUN" collect -c ./deeprec -o d.perf trace -s userspace \
		--loader stapbpf 2>err >out &&
	cat err &&
	grep "deeprec 100" out &&
	profile_counts d.perf >actual &&
	cat >expect <<-\EOF &&
	main 1
	rec 101
	EOF
	test_cmp expect actual &&
	test "$(profile_field d.perf trace.summary.rec.no_duration)" = 38 &&
	test "$(profile_field d.perf trace.anomalies.beyond_return_limit)" = 38 &&
	test "$(profile_field d.perf trace.anomalies.unmatched_entries)" = 38 &&
	test "$(profile_field d.perf trace.complete)" = false &&
	grep "38 of them returned unseen: the kernel keeps at most 64 return probes" err &&
	grep "the trace is incomplete: 38 calls returned unseen" err &&
	! grep "never returned" err
'

test_expect_success 'each paired rec holds the deeper ones: they nest' '
	"$PERUN" show d.perf --format json --expand >d.json &&
	check_nesting d.json 63
'

test_expect_success 'perun'"'"'s loader: all 101 timed, at any depth, nested' '
	"$PERUN" collect -c ./deeprec -o l.perf trace -s userspace --loader perun 2>err >out &&
	cat err &&
	grep "deeprec 100" out &&
	profile_counts l.perf >actual &&
	cat >expect <<-\EOF &&
	main 1
	rec 101
	EOF
	test_cmp expect actual &&
	test "$(profile_field l.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field l.perf trace.complete)" = true &&
	! grep "no_duration" l.perf &&
	test "$(profile_field l.perf trace.summary.rec.probe_return)" = instructions &&
	test "$(profile_field l.perf trace.summary.main.probe_return)" = uretprobe &&
	"$PERUN" show l.perf --format json --expand >l.json &&
	check_nesting l.json 101
'

test_expect_success 'a recursion through qsort'"'"'s callback, which the call graph cannot see: every call timed' '
	cc -g -O1 -o cbrec "$FIXTURES/cbrec.c" &&
	"$PERUN" collect -c ./cbrec -o cb.perf trace -s custom -f visit -f cmp --loader perun \
		2>err >out &&
	cat err &&
	grep "visit 1000 cmp 1000" out &&
	profile_counts cb.perf >actual &&
	cat >expect <<-\EOF &&
	cmp 1000
	visit 1000
	EOF
	test_cmp expect actual &&
	test "$(profile_field cb.perf trace.complete)" = true &&
	! grep "no_duration" cb.perf &&
	test "$(profile_field cb.perf trace.summary.visit.probe_return)" = instructions &&
	test "$(profile_field cb.perf trace.summary.cmp.probe_return)" = instructions
'

test_expect_success 'a chain of 70 functions, no cycle: 64 uretprobes, the 7 below on their instructions, all timed' '
	{
		echo "#include <stdio.h>" &&
		echo "__attribute__((noinline)) int c69(int x) { __asm__ volatile(\"\"); return x; }" &&
		for i in $(seq 68 -1 0); do
			echo "__attribute__((noinline)) int c$i(int x) { __asm__ volatile(\"\"); return c$((i + 1))(x) + 1; }" ||
			return 1
		done &&
		echo "int main(void) { int i, s = 0; for (i = 0; i < 10; i++) s += c0(i); printf(\"%d%c\", s, 10); return 0; }"
	} >chain.c &&
	cc -g -O1 -o chain chain.c &&
	"$PERUN" collect -c ./chain -o ch.perf trace -s userspace --loader perun 2>err >out &&
	cat err &&
	grep "^735\$" out &&
	test "$(profile_field ch.perf trace.complete)" = true &&
	! grep "no_duration" ch.perf &&
	python3 - ch.perf >kinds <<-\PY &&
	import json, sys
	s = json.load(open(sys.argv[1]))["trace"]["summary"]
	for k in sorted(s, key=lambda k: (k != "main", int(k[1:]) if k != "main" else 0)):
	    print(k, s[k]["count"], s[k].get("probe_return"))
	PY
	{
		echo "main 1 uretprobe" &&
		for i in $(seq 0 62); do echo "c$i 10 uretprobe" || return 1; done &&
		for i in $(seq 63 69); do echo "c$i 10 instructions" || return 1; done
	} >expect &&
	test_cmp expect kinds
'

# A forced unwind (pthread_exit) stops at a uretprobe as at the stack's end
# and glibc ends the thread as it would; only landing pads above it would
# be skipped, so a binary with none keeps its uretprobes, and one built
# with -fexceptions has its returns on their instructions (t5046 shows
# the handlers of both run).
test_expect_success 'a thread that calls pthread_exit: uretprobes without landing pads, instructions with them' '
	cat >pexit.c <<-\EOF &&
	#include <pthread.h>
	#include <stdio.h>
	__attribute__((noinline)) void inner(int x) { if (x > 5) pthread_exit(0); }
	__attribute__((noinline)) void outer(int x) { inner(x); }
	static int cleaned;
	static void note(void *a) { (void)a; cleaned++; }
	static void *run(void *a)
	{
		pthread_cleanup_push(note, 0);
		for (int i = 0; i < 10; i++)
			outer(i);
		pthread_cleanup_pop(0);
		return a;
	}
	int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_join(t, 0); printf("joined %d\n", cleaned); return 0; }
	EOF
	cc -g -O1 -pthread -o pexit pexit.c &&
	cc -g -O1 -pthread -fexceptions -o pexit-eh pexit.c &&
	! readelf -S pexit | grep -q gcc_except_table &&
	readelf -S pexit-eh | grep -q gcc_except_table &&
	for b in pexit pexit-eh; do
		"$PERUN" collect -c ./$b -o $b.perf trace -s custom -f inner -f outer --loader perun \
			2>err >out &&
		cat err &&
		grep "^joined 1$" out &&
		profile_counts $b.perf >actual &&
		printf "inner 7\nouter 7\n" >expect &&
		test_cmp expect actual || return 1
	done &&
	test "$(profile_field pexit.perf trace.summary.inner.probe_return)" = uretprobe &&
	test "$(profile_field pexit.perf trace.summary.outer.probe_return)" = uretprobe &&
	test "$(profile_field pexit-eh.perf trace.summary.inner.probe_return)" = instructions &&
	test "$(profile_field pexit-eh.perf trace.summary.outer.probe_return)" = instructions
'

test_done
