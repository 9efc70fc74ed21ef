#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun bisect reads the runs already registered for a revision (same
# job, this machine) instead of collecting it again.  A first bisect over 8
# commits collects 5 revisions; a second over the same range names the same
# commit and collects none: no progress line of a collect, no new profile
# registered.  Asking for more runs (--repeat 2) than are registered
# collects again.
. "$SRCDIR/tests/lib.sh"
require_live

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# the number of profiles registered, over every commit
registered() {
	"$PERUN" log --short | sed -n "s/^[0-9a-f]*  \([0-9]*\) profiles*.*/\1/p" |
		awk "{ n += \$1 } END { print n + 0 }"
}

test_expect_success '8 commits; commit 6 makes work 10x slower' '
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T &&
	cat >app.c <<-\EOF &&
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
	echo 1 >factor &&
	printf "app: app.c factor\n\tcc -g -O1 -DFACTOR=\$\$(cat factor) -o app app.c\n" >Makefile &&
	echo app >.gitignore && git add . && git commit -q -m c1 &&
	for i in $(seq 2 8); do
		sed -i "s/\"v[0-9]*\"/\"v$i\"/" app.c &&
		if [ $i = 6 ]; then echo 10 >factor; fi &&
		git commit -q -am c$i || exit 1
	done &&
	git rev-parse HEAD~2 >"$TRASH/planted" && test "$(git log -1 --format=%s HEAD~2)" = c6 &&
	"$PERUN" init >/dev/null &&
	cat >.perun/local.yml <<-\EOF
	vcs: {type: git, url: .}
	cmds: [./app]
	collectors:
	  - name: trace
	    params: {strategy: custom, func: [work]}
	execute:
	  pre_run: [make]
	EOF
'

test_expect_success 'the first bisect collects 5 of 8 revisions' '
	cd repo &&
	"$PERUN" bisect HEAD~7 HEAD work >../out 2>../err && cat ../out ../err &&
	grep "^$(cat "$TRASH/planted") is the first commit where work steps up: c6$" ../out &&
	grep "^collected 5 of 8 revisions$" ../out &&
	test "$(registered)" = 5
'

test_expect_success 'the same bisect again collects nothing: the registered runs are read' '
	cd repo &&
	command -v script >/dev/null || { echo "no script(1)"; exit 1; }
	script -qec "\"$PERUN\" bisect HEAD~7 HEAD work" /dev/null </dev/null | tr -d "\r" >../tty &&
	cat ../tty &&
	grep "^$(cat "$TRASH/planted") is the first commit where work steps up: c6$" ../tty &&
	grep "^collected 0 of 8 revisions; the registered runs of 5 more reused$" ../tty &&
	test "$(grep -c "^perun bisect: [0-9a-f]*: 1 registered run of the job reused$" ../tty)" = 5 &&
	! grep "^perun run: " ../tty &&
	test "$(registered)" = 5
'

test_expect_success 'with --repeat 2 one registered run is too few: collected again' '
	cd repo &&
	"$PERUN" bisect --repeat 2 HEAD~7 HEAD work >../out 2>../err && cat ../out ../err &&
	grep "^$(cat "$TRASH/planted") is the first commit where work steps up: c6$" ../out &&
	grep "^collected 5 of 8 revisions$" ../out &&
	test "$(registered)" = 15
'

assert_nothing_left

test_done
