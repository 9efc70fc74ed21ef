#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: --one-module compiles one module per binary with every function
# gated by a selection map; a second collect with another -f set, the
# userspace strategy, or diff-tracing's selection hits the module cache and
# runs no stap (PERUN_STAP points nowhere), and counts exactly.
. "$SRCDIR/tests/lib.sh"
require_live

# tests/fixtures/difftrace.c with N=100: main loops old_name 100 times.
test_expect_success 'build the fixture' '
	cc -g -O1 -o app "$FIXTURES/difftrace.c"
'

test_expect_success 'first collect: the module is compiled, the -f set counted exactly' '
	"$PERUN" collect -c ./app -a 100 -o one.perf trace -s custom -f changed -f untouched \
		--one-module 2>err >out &&
	cat err &&
	grep "(module cache: miss)" err &&
	profile_counts one.perf >actual &&
	printf "changed 200\nuntouched 100\n" >expect &&
	test_cmp expect actual &&
	test "$(profile_field one.perf trace.complete)" = true
'

test_expect_success 'another -f set: a cache hit without stap, counted exactly' '
	PERUN_STAP=/nonexistent/stap "$PERUN" collect -c ./app -a 100 -o two.perf \
		trace -s custom -f twice -f tweaked -f main --one-module 2>err >out &&
	cat err &&
	grep "(module cache: hit)" err &&
	profile_counts two.perf >actual &&
	printf "main 1\ntweaked 100\ntwice 100\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'every function (-s userspace): the same module' '
	PERUN_STAP=/nonexistent/stap "$PERUN" collect -c ./app -a 100 -o all.perf \
		trace -s userspace --one-module 2>err >out &&
	cat err &&
	grep "(module cache: hit)" err &&
	profile_counts all.perf >actual &&
	printf "changed 200\nmain 1\nold_name 100\ntweaked 100\ntwice 100\nuntouched 100\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'a -f function never called is still an error with --one-module' '
	! PERUN_STAP=/nonexistent/stap "$PERUN" collect -c ./app -a 0 -o zero.perf \
		trace -s custom -f changed --one-module 2>err >out &&
	cat err &&
	grep "(module cache: hit)" err &&
	grep "changed" err
'

test_expect_success 'sampling is refused with the fix named' '
	! "$PERUN" collect -c ./app -a 1 trace -s custom -f changed#10 --one-module 2>err &&
	grep "one-module selects whole probes: changed is sampled (1 in 10), which is code in the script; collect it without --one-module" err
'

test_expect_success 'the kernel runtime reads its selection from procfs (t5104 runs it)' '
	"$PERUN" collect -c ./app -a 1 trace -s custom -f changed --runtime kernel \
		--one-module --script-only >s.stp 2>err &&
	grep "^probe procfs(\"perun_sel\").write {" s.stp &&
	grep "__perun_sel\[strtol(\$value, 10)\] = 1" s.stp
'

test_done
