#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun bisect names the commit perun check flags.  8 commits; c3
# makes work 30 % slower (a step below bisect's old 20 %-on-medians
# heuristic's reach on a busy host, and the size of a real regression), c6
# 3x slower.  bisect over all 8 names c3, the first step, and check at its
# default threshold flags c3 against its parent; from c3 on, bisect names
# c6.  Every revision bisect collected has 3 runs (its default), the ones it
# reused got none more, unless check could not tell two revisions apart on
# a busy host: then bisect collects 3 more of each, and says so (a CI host
# once had c1 -> c5 undecided, and bisect, taking that for "no step",
# named c6).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-bisect.sh"
require_live

# check_change A B: perun check's verdict on work's inclusive time, A to B
check_change() {
	"$PERUN" check --format json "$1" "$2" |
		python3 -c "
import json, sys
r = json.load(sys.stdin)
v = [f[\"change\"] for j in r[\"jobs\"] for f in j[\"changes\"]
     if f[\"function\"] == \"work\" and f[\"time\"] == \"inclusive\"]
print(v[0] if v else \"none\")"
}

test_expect_success '8 commits; c3 makes work 30 % slower, c6 3x' '
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T &&
	cat >app.c <<-\EOF &&
	static const char *version = "v1";
	static unsigned long spin(unsigned long n, unsigned long x)
	{
		for (unsigned long i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		return x;
	}
	__attribute__((noinline)) unsigned long work(unsigned long x) { return spin(5000UL * FACTOR, x); }
	int main(void)
	{
		unsigned long x = 1;
		for (int i = 0; i < 30; i++)
			x = work(x);
		return version[0] == (char)x;
	}
	EOF
	echo 10 >factor &&
	printf "app: app.c factor\n\tcc -g -O1 -DFACTOR=\$\$(cat factor) -o app app.c\n" >Makefile &&
	echo app >.gitignore && git add . && git commit -q -m c1 &&
	for i in 2 3 4 5 6 7 8; do
		sed -i "s/\"v[0-9]*\"/\"v$i\"/" app.c &&
		case $i in 3) echo 13 >factor ;; 6) echo 39 >factor ;; esac &&
		git commit -q -am "c$i" || exit 1
	done &&
	"$PERUN" init >/dev/null &&
	cat >.perun/local.yml <<-EOF
	vcs: {type: git, url: .}
	cmds: [./app]
	collectors:
	  - name: trace
	    params: {strategy: custom, func: [work]}
	execute:
	  pre_run: [make]
	EOF
'

test_expect_success 'bisect over all 8 names c3; check flags c3 against c2' '
	cd repo &&
	"$PERUN" bisect -q HEAD~7 HEAD work >../out 2>../err && cat ../out ../err &&
	grep "^$(git rev-parse HEAD~5) is the first commit where work steps up: c3$" ../out &&
	test "$(check_change HEAD~6 HEAD~5)" = degradation
'

test_expect_success 'each revision collected has 3 runs (6 or 9 where check could not tell); the others none' '
	cd repo &&
	"$PERUN" log --short | sed -n "s/^[0-9a-f]*  \([0-9]*\) profiles*.*  \(c[0-9]\)$/\2 \1/p" |
		sort >../actual && cat ../actual &&
	! grep -v " [0369]$" ../actual &&
	n=$(grep -vc " 0$" ../actual) && test "$n" -ge 4 && test "$n" -le 6 &&
	runs=$(awk "{ s += \$2 } END { print s }" ../actual) &&
	grep "^collected $n of 8 revisions ($runs runs)$" ../out &&
	if grep -q "check cannot tell" ../err; then
		grep "^perun bisect: [0-9a-f]\{7\} -> [0-9a-f]\{7\}: check cannot tell whether work steps up (+[0-9.]* %, .*): [69] runs of each$" ../err
	else
		test "$runs" = $((n * 3))
	fi
'

test_expect_success 'from c3 on, bisect names c6; c3 and c8 are not collected again' '
	cd repo &&
	"$PERUN" bisect HEAD~5 HEAD work >../out 2>../err && cat ../out ../err &&
	grep "^$(git rev-parse HEAD~2) is the first commit where work steps up: c6$" ../out &&
	test "$(check_change HEAD~3 HEAD~2)" = degradation &&
	grep "; the registered runs of [1-9] more reused$" ../out &&
	if ! grep -q "check cannot tell" ../err; then
		! grep "$(git rev-parse --short=7 HEAD~5) ./app: registered" ../out &&
		! grep "$(git rev-parse --short=7 HEAD) ./app: registered" ../out
	fi
'

test_expect_success 'nothing is left behind' '
	ls -A "$PERUN_CACHE_DIR/worktrees" >left && cat left &&
	test "$(grep -vc "\.lock$" left)" = 0 &&
	test -z "$(git -C repo status --porcelain | grep -v "^?? .perun/")"
'

assert_nothing_left

test_done
