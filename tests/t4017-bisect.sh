#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun bisect finds the commit that made a function 3x slower among 16
# commits, collecting about log2(16) + 2 revisions (not 16), 3 runs each,
# through the same runner as perun run matrix (temporary work trees, pre_run,
# registered profiles); the commit it names is the one perun check flags at
# its default threshold between that commit and its parent, and check flags
# nothing between the commits before; without FUNCTION it picks the function
# check flags; a function that did not change is not flagged (exit 1).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-bisect.sh"
require_live

test_expect_success '16 commits; commit 11 makes work 3x slower, steady stays' '
	bisect_repo 16 11 3 work steady <<-\EOF
	static const char *version = "v1";
	static unsigned long spin(unsigned long n, unsigned long x)
	{
		for (unsigned long i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		return x;
	}
	__attribute__((noinline)) unsigned long work(unsigned long x) { return spin(50000UL * FACTOR, x); }
	__attribute__((noinline)) unsigned long steady(unsigned long x) { return spin(50000UL, x); }
	int main(void)
	{
		unsigned long x = 1;
		for (int i = 0; i < 30; i++)
			x = work(x) + steady(x);
		return version[0] == (char)x;
	}
	EOF
'

test_expect_success 'bisect names commit 11 after collecting 6 revisions of 16' '
	cd repo &&
	"$PERUN" bisect HEAD~15 HEAD work >../out 2>../err && cat ../out ../err &&
	bisect_shape ../out >../actual &&
	cat >../expect <<-EOF &&
	$(commit_of c1) ./app: registered 0@i 1@i 2@i
	$(commit_of c16) ./app: registered 0@i 1@i 2@i
	$(commit_of c8) ./app: registered 0@i 1@i 2@i
	$(commit_of c12) ./app: registered 0@i 1@i 2@i
	$(commit_of c10) ./app: registered 0@i 1@i 2@i
	$(commit_of c11) ./app: registered 0@i 1@i 2@i
	$(cat "$TRASH/planted") is the first commit where work steps up: c11
	work: inclusive time per call N ns before, N ns after (+N %), as perun check compares them (p10 of each run'"'"'s calls, 3 and 3 runs, threshold 10 %)
	collected 6 of 16 revisions (18 runs)
	EOF
	test_cmp ../expect ../actual &&
	# the ends were collected in rounds: round 1 of 3 .. round 3 of 3
	test "$(grep -c "^perun run: round [123] of 3$" ../err)" = 3 &&
	# the profiles of what it collected are registered: 6 revisions, 3 each
	"$PERUN" log --short >../actual &&
	cat >../expect <<-EOF &&
	$(commit_of c16)  3 profiles [mixed]  c16
	$(commit_of c15)  0 profiles  c15
	$(commit_of c14)  0 profiles  c14
	$(commit_of c13)  0 profiles  c13
	$(commit_of c12)  3 profiles [mixed]  c12
	$(commit_of c11)  3 profiles [mixed]  c11
	$(commit_of c10)  3 profiles [mixed]  c10
	$(commit_of c9)  0 profiles  c9
	$(commit_of c8)  3 profiles [mixed]  c8
	$(commit_of c7)  0 profiles  c7
	$(commit_of c6)  0 profiles  c6
	$(commit_of c5)  0 profiles  c5
	$(commit_of c4)  0 profiles  c4
	$(commit_of c3)  0 profiles  c3
	$(commit_of c2)  0 profiles  c2
	$(commit_of c1)  3 profiles [mixed]  c1
	EOF
	test_cmp ../expect ../actual
'

test_expect_success 'the step it reports is about 3x, from the profiles' '
	cd repo &&
	sed -n "s/^work: inclusive time per call \([0-9]*\) ns before, \([0-9]*\) ns after.*/\1 \2/p" ../out >../nums &&
	read before after <../nums &&
	test $((after * 10 / before)) -ge 20
'

# check_verdict REV: perun check's verdict on work from REV^ to REV
check_verdict() {
	"$PERUN" check --format json "$1^" "$1" |
		python3 -c "
import json, sys
r = json.load(sys.stdin)
v = [f[\"change\"] for j in r[\"jobs\"] for f in j[\"changes\"]
     if f[\"function\"] == \"work\" and f[\"time\"] == \"inclusive\"]
print(v[0] if v else \"none\")"
}

test_expect_success 'perun check flags the commit bisect named, and not the one before' '
	cd repo &&
	test "$(check_verdict "$(cat "$TRASH/planted")")" = degradation &&
	test "$(check_verdict "$(commit_of c10)")" != degradation
'

test_expect_success 'without FUNCTION: the function that got slower, work' '
	cd repo &&
	"$PERUN" bisect HEAD~15 HEAD >../out 2>../err && cat ../out ../err &&
	bisect_shape ../out >../actual &&
	cat >../expect <<-EOF &&
	$(cat "$TRASH/planted") is the first commit where work steps up: c11
	work: inclusive time per call N ns before, N ns after (+N %), as perun check compares them (p10 of each run'"'"'s calls, 3 and 3 runs, threshold 10 %)
	collected 0 of 16 revisions (0 runs); the registered runs of 6 more reused
	EOF
	test_cmp ../expect ../actual
'

test_expect_success 'a function that did not change is not flagged: exit 1, said' '
	cd repo &&
	test_expect_code 1 "$PERUN" bisect HEAD~15 HEAD steady >../out 2>../err &&
	cat ../err &&
	grep "^perun bisect: perun check does not flag steady as slower from $(commit_of c1) to $(commit_of c16): [a-z-]*, inclusive [0-9]* ns, then [0-9]* ns (.* %; threshold 10 %)" ../err &&
	! test -s ../out
'

test_expect_success 'nothing is left behind' '
	ls -A "$PERUN_CACHE_DIR/worktrees" >left && cat left &&
	test "$(grep -vc "\.lock$" left)" = 0 &&
	test "$(ls -A repo/.perun/jobs | wc -l)" = 0 &&
	test -z "$(git -C repo status --porcelain | grep -v "^?? .perun/")"
'

assert_nothing_left

test_done
