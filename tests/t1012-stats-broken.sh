#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: only a run that ended as it should leaves dynamic stats (.perun/stats,
# what the optimizations read next time).  A run stopped by Ctrl-C, by its
# timeout, or whose runtime was killed (SIGKILL) stores none and says so,
# and the killed runtime's message agrees with the count it printed.
. "$SRCDIR/tests/lib.sh"
require_live
GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

stats_files() { find .perun/stats -type f -name "*.stats" | sort; }

test_expect_success 'a repository and the fixtures' '
	build_fixtures &&
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T && echo 1 >f && git add f && git commit -q -m one &&
	"$PERUN" init >/dev/null
'

test_expect_success 'a run that ends as it should stores stats' '
	cd repo && "$PERUN" collect -c ../counts trace -s custom -f fib 2>err && cat err &&
	grep "^perun: stats: .perun/stats/" err && test "$(stats_files | wc -l)" = 1 &&
	stats_files >../stats.before
'

test_expect_success 'Ctrl-C: no stats, and it says why' '
	cd repo &&
	{ "$PERUN" collect -c ../forever trace -s custom -f tick 2>err & } &&
	pid=$! && wait_for_target && sleep 1.5 && kill -INT $pid &&
	test_expect_code 130 wait $pid && cat err &&
	grep "^perun: stats: none stored: the run was interrupted, so its counts are not the command.s$" err &&
	stats_files | test_cmp ../stats.before - &&
	assert_nothing_left 1
'

test_expect_success 'a timeout: no stats' '
	cd repo && "$PERUN" collect -c ../forever trace -s custom -f tick -t 1 2>err && cat err &&
	grep "^perun: stats: none stored: the run was stopped at its timeout" err &&
	stats_files | test_cmp ../stats.before - &&
	assert_nothing_left 1
'

for loader in stapbpf perun; do
test_expect_success "the runtime killed (SIGKILL): no stats, a message that matches the count ($loader)" '
	cd repo &&
	{ "$PERUN" collect -c ../forever trace -s custom -f tick --loader '$loader' 2>err & } &&
	pid=$! && wait_for_target && sleep 1 &&
	if test '$loader' = stapbpf
	then
		rt=$(pgrep -f "stapbpf -x $(procs_in_trash) ")
	else
		rt=$(pgrep -f "perun-uprobes .*-x $(procs_in_trash) ")
	fi &&
	test -n "$rt" || { kill $pid; echo "no runtime process found"; exit 1; }
	kill -9 $rt &&
	test_expect_code 1 wait $pid && cat err &&
	grep "^perun: stats: none stored: the run was cut short by the runtime.s end" err &&
	stats_files | test_cmp ../stats.before - &&
	n=$(sed -n "s/^perun: \([0-9]*\) calls\{0,1\} of .*/\1/p" err) && echo "printed $n calls" &&
	if [ "$n" = 0 ]; then
		grep "the profile holds no call: what was traced was lost with the runtime$" err
	else
		grep "the profile holds the $n calls\{0,1\} traced before$" err
	fi &&
	! grep "holds what was traced before" err &&
	assert_nothing_left 1
'
done

test_done
