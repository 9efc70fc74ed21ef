#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun bisect reads the runs already registered for a revision (same
# job, this machine) and collects only the runs it lacks.  A first bisect
# over 8 commits collects 5 revisions, 3 runs each (its default); a second
# over the same range names the same commit and collects none: no progress
# line of a collect, no new profile registered.  Asking for 4 runs
# (--repeat 4) collects 1 more of each revision, not 4.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-bisect.sh"
require_live

# the number of profiles registered, over every commit
registered() {
	"$PERUN" log --short | sed -n "s/^[0-9a-f]*  \([0-9]*\) profiles*.*/\1/p" |
		awk "{ n += \$1 } END { print n + 0 }"
}

test_expect_success '8 commits; commit 6 makes work 10x slower' '
	bisect_repo 8 6 10 work <<-\EOF
	static const char *version = "v1";
	__attribute__((noinline)) unsigned long work(unsigned long x)
	{
		for (unsigned long i = 0; i < 20000UL * FACTOR; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		return x;
	}
	int main(void)
	{
		unsigned long x = 1;
		for (int i = 0; i < 20; i++)
			x = work(x);
		return version[0] == (char)x;
	}
	EOF
'

test_expect_success 'the first bisect collects 5 of 8 revisions' '
	cd repo &&
	"$PERUN" bisect HEAD~7 HEAD work >../out 2>../err && cat ../err &&
	bisect_shape ../out >../actual &&
	cat >../expect <<-EOF &&
	$(commit_of c1) ./app: registered 0@i 1@i 2@i
	$(commit_of c8) ./app: registered 0@i 1@i 2@i
	$(commit_of c4) ./app: registered 0@i 1@i 2@i
	$(commit_of c6) ./app: registered 0@i 1@i 2@i
	$(commit_of c5) ./app: registered 0@i 1@i 2@i
	$(cat "$TRASH/planted") is the first commit where work steps up: c6
	work: inclusive time per call N ns before, N ns after (+N %), as perun check compares them (p10 of each run'"'"'s calls, 3 and 3 runs, threshold 10 %)
	collected 5 of 8 revisions (15 runs)
	EOF
	test_cmp ../expect ../actual &&
	test "$(registered)" = 15
'

test_expect_success 'the same bisect again collects nothing: the registered runs are read' '
	cd repo &&
	command -v script >/dev/null || { echo "no script(1)"; exit 1; }
	script -qec "\"$PERUN\" bisect HEAD~7 HEAD work" /dev/null </dev/null | tr -d "\r" >../tty &&
	cat ../tty &&
	grep "^$(cat "$TRASH/planted") is the first commit where work steps up: c6$" ../tty &&
	grep "^collected 0 of 8 revisions (0 runs); the registered runs of 5 more reused$" ../tty &&
	test "$(grep -c "^perun bisect: [0-9a-f]*: 3 registered runs of the job reused$" ../tty)" = 5 &&
	! grep "^perun run: " ../tty &&
	test "$(registered)" = 15
'

test_expect_success 'with --repeat 4 each revision lacks 1 run: 1 more collected, not 4' '
	cd repo &&
	"$PERUN" bisect --repeat 4 HEAD~7 HEAD work >../out 2>../err && cat ../err &&
	bisect_shape ../out >../actual &&
	cat >../expect <<-EOF &&
	$(commit_of c1) ./app: registered 3@i
	$(commit_of c8) ./app: registered 3@i
	$(commit_of c4) ./app: registered 3@i
	$(commit_of c6) ./app: registered 3@i
	$(commit_of c5) ./app: registered 3@i
	$(cat "$TRASH/planted") is the first commit where work steps up: c6
	work: inclusive time per call N ns before, N ns after (+N %), as perun check compares them (p10 of each run'"'"'s calls, 4 and 4 runs, threshold 10 %)
	collected 5 of 8 revisions (5 runs)
	EOF
	test_cmp ../expect ../actual &&
	test "$(grep -c "^perun bisect: [0-9a-f]*: 3 registered runs of the job reused, 1 more to collect$" ../err)" = 5 &&
	test "$(registered)" = 20
'

assert_nothing_left

test_done
