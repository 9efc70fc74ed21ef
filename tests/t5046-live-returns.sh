#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: returns at any depth.  The kernel keeps at most 64 uretprobes
# pending per thread; perun's loader probes a function's return
# instructions instead and pairs them with its entries by stack pointer, so
# a recursion 300 deep has every call timed, and a C++ exception thrown
# through traced frames neither aborts the program (a uretprobe's replaced
# return address would) nor leaves a call uncounted.  bpftrace counts the
# same run's entries; the program times its outermost calls itself.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build a recursion 300 deep, 40 times, timing itself' '
	cat >walk.c <<-\EOF &&
	#include <stdio.h>
	#include <time.h>
	__attribute__((noinline)) int leaf(int x) { return x + 1; }
	__attribute__((noinline)) int walk(int d)
	{
		int s = leaf(d);
		if (d > 1)
			s += walk(d - 1);
		return s;
	}
	static long long ns(void)
	{
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		return t.tv_sec * 1000000000LL + t.tv_nsec;
	}
	int main(void)
	{
		long long took[40];
		int s = 0;
		for (int i = 0; i < 40; i++) {
			long long t0 = ns();
			s += walk(300);
			took[i] = ns() - t0;
		}
		printf("walk 12000 leaf 12000 sum %d\n", s);
		for (int i = 0; i < 40; i++)
			printf("took %lld\n", took[i]);
		return 0;
	}
	EOF
	cc -g -O0 -o walk walk.c &&
	./walk | grep "walk 12000 leaf 12000"
'

test_expect_success 'every call counted, as bpftrace counts them, and every one timed' '
	# its own pid, so that SIGINT reaches bpftrace and not a subshell
	sh -c "echo \$\$ >bt.pid && exec bpftrace -e \"uprobe:$TRASH/walk:walk,uprobe:$TRASH/walk:leaf { @[probe] = count(); }\"" \
		>bt.out 2>&1 &
	for i in $(seq 100); do test -s bt.pid && break; sleep 0.1; done &&
	bt=$(cat bt.pid) &&
	for i in $(seq 100); do grep -q Attaching bt.out && break; sleep 0.1; done &&
	sleep 1 &&
	"$PERUN" collect -c ./walk -o w.perf trace -s custom -f walk -f leaf 2>err >out ||
		{ kill -INT $bt; cat err; exit 1; }
	bpftrace_stop $bt &&
	cat err bt.out &&
	grep "walk 12000 leaf 12000" out &&
	profile_counts w.perf >actual &&
	printf "leaf 12000\nwalk 12000\n" >expect &&
	test_cmp expect actual &&
	for f in walk leaf; do
		want=$(sed -n "s/^@\[uprobe:.*:$f\]: //p" bt.out) &&
		echo "$f bpftrace=$want" &&
		test "$want" = 12000 || exit 1
	done &&
	test "$(profile_field w.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field w.perf trace.anomalies.unmatched_exits)" = 0 &&
	test "$(profile_field w.perf trace.max_depth)" = 301 &&
	test "$(profile_field w.perf trace.complete)" = true &&
	! grep "no_duration" w.perf &&
	! grep "without a duration" err
'

# The program reads CLOCK_MONOTONIC before and after each walk(300); the
# probes read the same clock inside that interval (the entry probe after
# the first read, the last return probe before the second), so perun's
# inclusive time is never longer, and shorter by two probe hits plus a
# clock read: 0.5 to 10 us each on these machines.  The median gap over the
# 40 calls must stay under 100 us, against walks of about a millisecond or
# more with their 1200 probe hits; a preempted call can widen one gap, not
# the median.
test_expect_success 'the outermost calls take what the program measured itself' '
	"$PERUN" show w.perf --format json --expand >w.json &&
	python3 - w.json out <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	outer = sorted((r for r in p["snapshots"][0]["resources"]
	                if r["uid"] == "walk" and r["depth"] == 0), key=lambda r: r["timestamp"])
	took = [int(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("took ")]
	assert len(outer) == 40 == len(took), (len(outer), len(took))
	gaps = sorted(t - r["amount"] for r, t in zip(outer, took))
	print("gaps ns: min %d median %d max %d; walk %d ns" % (gaps[0], gaps[20], gaps[-1],
	      sorted(took)[20]))
	assert gaps[0] >= 0, gaps
	assert gaps[20] < 100000, gaps
	deep = [r for r in p["snapshots"][0]["resources"] if r["uid"] == "walk"]
	assert max(r["depth"] for r in deep) == 299, max(r["depth"] for r in deep)
	PY
'

# A function whose return instructions cannot all be known (a jump through
# a pointer, a jump to a PLT stub) is seen by its uretprobe; when it jumps
# to a traced function, that one is entered at the same stack pointer and
# returns for both; so is an empty function, whose ret is its first
# instruction, where the entry probe sits.  No call is unwound there: every
# one is timed.
test_expect_success 'tail calls out of uretprobe functions, an empty function: every call timed' '
	cc -g -O2 -o tailcall "$SRCDIR/tests/fixtures/tailcall.c" &&
	objdump -d --no-show-raw-insn tailcall >tc.dis &&
	grep -A1 "<dispatch>:" tc.dis | grep "jmp  *\*" &&
	grep -A1 "<drop>:" tc.dis | grep "jmp .*<free@plt>" &&
	grep -A1 "<empty>:" tc.dis | grep "ret" &&
	sh -c "echo \$\$ >bt2.pid && exec bpftrace -e \"uprobe:$TRASH/tailcall:dispatch,uprobe:$TRASH/tailcall:work,uprobe:$TRASH/tailcall:drop,uprobe:$TRASH/tailcall:empty { @[probe] = count(); }\"" \
		>bt2.out 2>&1 &
	for i in $(seq 100); do test -s bt2.pid && break; sleep 0.1; done &&
	bt=$(cat bt2.pid) &&
	for i in $(seq 100); do grep -q Attaching bt2.out && break; sleep 0.1; done &&
	sleep 1 &&
	"$PERUN" collect -c ./tailcall -o tc.perf trace -s custom -f dispatch -f work -f drop -f empty \
		2>err >out || { kill -INT $bt; cat err; exit 1; }
	bpftrace_stop $bt &&
	cat err bt2.out &&
	grep "dispatch 1000 work 1000 drop 1000 empty 1000" out &&
	for f in dispatch work drop empty; do
		want=$(sed -n "s/^@\[uprobe:.*:$f\]: //p" bt2.out) &&
		echo "$f bpftrace=$want" &&
		test "$want" = 1000 || exit 1
	done &&
	profile_counts tc.perf >actual &&
	printf "dispatch 1000\ndrop 1000\nempty 1000\nwork 1000\n" >expect &&
	test_cmp expect actual &&
	test "$(profile_field tc.perf trace.anomalies.unwound)" = 0 &&
	test "$(profile_field tc.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field tc.perf trace.anomalies.unmatched_exits)" = 0 &&
	test "$(profile_field tc.perf trace.complete)" = true &&
	! grep "no_duration" tc.perf &&
	! grep "never returned" err
'

test_expect_success 'build a C++ program that throws through traced frames' '
	cat >throw.cc <<-\EOF &&
	#include <cstdio>
	#include <stdexcept>
	__attribute__((noinline)) int thrower(int d)
	{
		if (d == 0)
			throw std::runtime_error("bottom");
		return thrower(d - 1) + 1;
	}
	__attribute__((noinline)) int catcher(int i)
	{
		try {
			return thrower(5);
		} catch (const std::exception &) {
			return i;
		}
	}
	__attribute__((noinline)) int plain(int x) { return x * 2; }
	int main()
	{
		int s = 0;
		for (int i = 0; i < 100; i++)
			s += catcher(i) + plain(i);
		std::printf("caught 100 sum %d\n", s);
		return 0;
	}
	EOF
	c++ -g -O0 -o throw throw.cc &&
	./throw | grep "caught 100"
'

test_expect_success 'an exception through traced frames: no abort, every call counted' '
	"$PERUN" collect -c ./throw -o t.perf trace -s custom -f thrower -f catcher -f plain \
		2>err >out &&
	cat err &&
	grep "caught 100 sum" out &&
	profile_counts t.perf >actual &&
	printf "catcher 100\nplain 100\nthrower 600\n" >expect &&
	test_cmp expect actual &&
	test "$(profile_field t.perf trace.summary.thrower.no_duration)" = 600 &&
	test "$(profile_field t.perf trace.anomalies.unwound)" = 600 &&
	test "$(profile_field t.perf trace.anomalies.missed_returns)" = 0 &&
	test "$(profile_field t.perf trace.complete)" = true &&
	python3 - t.perf <<-\PY
	import json, sys
	s = json.load(open(sys.argv[1]))["trace"]["summary"]
	assert "no_duration" not in s["catcher"] and "no_duration" not in s["plain"], s
	PY
	grep "600 of them never returned: a longjmp or C++ exception went past them" err
'

test_expect_success 'build a threaded C program whose threads end in pthread_exit under traced frames' '
	cat >pexit.c <<-\EOF &&
	#include <pthread.h>
	#include <stdio.h>
	static volatile int cleaned;
	static void cleanup(void *a) { (void)a; cleaned++; }
	/* never returns: no return instruction */
	__attribute__((noinline)) void leaf_exit(int i) { pthread_exit((void *)(long)(i + 7)); }
	/* returns when i < 0, never here */
	__attribute__((noinline)) void middle(int i)
	{
		if (i < 0)
			return;
		leaf_exit(i);
	}
	static void *worker(void *a)
	{
		pthread_cleanup_push(cleanup, NULL);
		middle((int)(long)a);
		pthread_cleanup_pop(0);
		return NULL;
	}
	int main(void)
	{
		long i, ok = 0;
		for (i = 0; i < 50; i++) {
			pthread_t t;
			void *r;
			pthread_create(&t, NULL, worker, (void *)i);
			pthread_join(t, &r);
			ok += (long)r == i + 7;
		}
		printf("joined %ld cleaned %d\n", ok, cleaned);
		return 0;
	}
	EOF
	cc -g -O1 -pthread -o pexit pexit.c &&
	cc -g -O1 -pthread -fexceptions -o pexit-eh pexit.c &&
	! readelf -S pexit | grep -q gcc_except_table &&
	readelf -S pexit-eh | grep -q gcc_except_table &&
	./pexit | grep "^joined 50 cleaned 50$" &&
	./pexit-eh | grep "^joined 50 cleaned 50$"
'

# A forced unwind (pthread_exit) stops at a uretprobe as at the stack's
# end, and glibc then runs the handlers and ends the thread as it would:
# only landing pads above it are skipped, and a binary without
# .gcc_except_table has none.  So such a binary keeps its uretprobes.  One
# with landing pads (-fexceptions) has its returns on their instructions,
# and a function without one (leaf_exit never returns) is counted at entry
# only: a uretprobe there made the threads skip their cleanup handlers.
test_expect_success 'pthread_exit through uretprobes without landing pads: the threads end as untraced' '
	"$PERUN" collect -c ./pexit -o px.perf trace -s custom -f worker -f middle -f leaf_exit \
		2>err >out &&
	cat err out &&
	grep "^joined 50 cleaned 50$" out &&
	grep "^perun: attached 6 of 6 probe points$" err &&
	profile_counts px.perf >actual &&
	printf "leaf_exit 50\nmiddle 50\nworker 50\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'pthread_exit through landing pads: returns on instructions, a function without one at entry only' '
	"$PERUN" collect -c ./pexit-eh -o pe.perf trace -s custom -f worker -f middle -f leaf_exit \
		2>err >out &&
	cat err out &&
	grep "^joined 50 cleaned 50$" out &&
	grep "^perun: attached 5 of 5 probe points (returns: 0 by uretprobe, 2 on their return instructions" err &&
	grep "unwinds its stack through landing pads (.*): 1 function counted at entry only" err &&
	profile_counts pe.perf >actual &&
	printf "leaf_exit 50\nmiddle 50\nworker 50\n" >expect &&
	test_cmp expect actual
'

test_done
