#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: names as users write them and as perun prints them.  A template
# instance named without return type or parameters (-f 'accum<long>'), every
# instance (-f accum) and a mangled name trace exactly what the program counts
# itself; two methods of a class template whose long names differ only in
# their middle get rows that read differently in show's table (and whole
# names in JSON); SystemTap's raw debuginfo warnings about a binary without
# DWARF do not reach the user (stapbpf loader: stap runs); a static threaded program gets no setjmp/longjmp
# warning, a static program that calls longjmp does.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixtures' '
	c++ -g -O1 -o tpl "$FIXTURES/templates.cc" &&
	./tpl >own &&
	cat own
'

test_expect_success '-f accum<long>: the instance, as many calls as it counted' '
	"$PERUN" collect -c ./tpl -o l.perf trace -q -s custom -f "accum<long>" >/dev/null &&
	profile_counts l.perf >actual &&
	echo "long accum<long>(long const*, int) $(sed -n "s/^accum<long> //p" own)" >expect &&
	test_cmp expect actual
'

test_expect_success '-f accum: every instance; the mangled name: one' '
	"$PERUN" collect -c ./tpl -o all.perf trace -q -s custom -f accum >/dev/null &&
	profile_counts all.perf >actual &&
	cat >expect <<-EOF &&
	int accum<int>(int const*, int) $(sed -n "s/^accum<int> //p" own)
	long accum<long>(long const*, int) $(sed -n "s/^accum<long> //p" own)
	EOF
	test_cmp expect actual &&
	m=$(nm tpl | sed -n "s/.* \(_Z5accumIiE.*\)$/\1/p") && test -n "$m" &&
	"$PERUN" collect -c ./tpl -o m.perf trace -q -s custom -f "$m" >/dev/null &&
	test "$(profile_counts m.perf)" = "int accum<int>(int const*, int) 30"
'

test_expect_success 'long names that differ in the middle read differently' '
	"$PERUN" collect -c ./tpl -o r.perf trace -q -s custom -f ns::Registry::lookup \
		>/dev/null &&
	"$PERUN" show r.perf --format summary >table &&
	cat table &&
	test "$(grep -c "\.\.\." table)" = 2 &&
	grep "\.\.\." table | sed "s/  *[0-9][0-9.%]*//g" | sort -u >names &&
	test "$(wc -l <names)" = 2 &&
	grep "^ns::Registry<ns::a_rather_long_policy_name_for_allocation_strategies, i\.\.\..* 5 " table &&
	grep "^ns::Registry<ns::a_rather_long_policy_name_for_allocation_strategies, l\.\.\..* 7 " table &&
	profile_counts r.perf | sed "s/.* //" | sort -n | tr "\n" " " >counts &&
	test "$(cat counts)" = "5 7 " &&
	profile_counts r.perf | grep -v "\.\.\." | grep "::lookup(int const&, .*) const 5$" &&
	profile_counts r.perf | grep -v "\.\.\." | grep "::lookup(long const&, .*) const 7$"
'

test_expect_success 'no raw SystemTap debuginfo warning for a binary without DWARF' '
	cc -O1 -o nodwarf "$FIXTURES/stripped.c" &&
	"$PERUN" collect -c ./nodwarf -a 10 -o nd.perf trace -s custom -f work \
		--loader stapbpf >out 2>err &&
	cat err &&
	! grep -i "debuginfo\|WARNING" err &&
	test "$(profile_counts nd.perf)" = "work 1" &&
	profile_field nd.perf trace.stap_messages >msgs &&
	grep "debuginfo" msgs
'

test_expect_success 'static programs: setjmp/longjmp named only when called' '
	printf "#include <pthread.h>\nstatic void *t(void *a) { return a; }\nint main(void) { pthread_t x; pthread_create(&x, 0, t, 0); return pthread_join(x, 0); }\n" >th.c &&
	printf "#include <setjmp.h>\njmp_buf b;\n__attribute__((noinline)) void f(void) { longjmp(b, 1); }\nint main(void) { if (!setjmp(b)) f(); return 0; }\n" >j.c &&
	if cc -O1 -static -pthread -o sthreads th.c && cc -O1 -static -o sjumps j.c; then
		"$PERUN" collect -c ./sthreads -o st.perf trace -s custom -f main >out 2>err &&
		cat err && ! grep -i "setjmp\|longjmp\|warning" err &&
		test "$(profile_counts st.perf)" = "main 1" &&
		"$PERUN" collect -c ./sjumps -o sj.perf trace -s custom -f main --loader stapbpf >out 2>err &&
		cat err && grep "uses setjmp/longjmp" err
	else
		say "no static libc: skipped"
	fi
'

test_expect_success 'nothing left running' 'assert_nothing_left'

test_done
