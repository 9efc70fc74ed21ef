#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun run matrix over three revisions of a repository with a C
# program and a Makefile.  local.yml's execute.pre_run builds each revision
# in a temporary work tree; each job is collected --repeat times and its
# profiles are registered for the revision, with the exact call counts the
# program counts itself; the user's checkout (dirty on purpose) is not
# touched and no temporary work tree is left; a revision whose binary did not
# change hits the module cache (stapbpf's loader, which runs a compiled
# module; perun's own loader needs none).
. "$SRCDIR/tests/lib.sh"
require_live

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES
# the program appends the number of its calls of work here, run by run
COUNTS="$TRASH/counts.txt"
export COUNTS

# short id of a revision of the repository
rev() { git -C "$TRASH/repo" rev-parse --short=7 "$1"; }

# "origin module_cache count-of-work count-of-main" of profile $1 at revision $2
profile_line() {
	"$PERUN" show -m "$2" "$1" --format json | python3 -c '
import json, sys
p = json.load(sys.stdin)
s = p["trace"]["summary"]
print(p["origin"][:7], p["trace"]["module_cache"], s["work"]["count"], s["main"]["count"])'
}

# every file of the checkout but .git and .perun, with its content's hash
snapshot() {
	(cd "$TRASH/repo" && find . -path ./.git -prune -o -path ./.perun -prune -o -type f -print |
		sort | xargs sha1sum)
}

test_expect_success 'a repository of three revisions: 5 calls, 7 calls, a README' '
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T &&
	cat >app.c <<-\EOF &&
	#include <stdio.h>
	#include <stdlib.h>
	#ifndef N
	#define N 5
	#endif
	static unsigned long calls;
	__attribute__((noinline)) unsigned long work(unsigned long x)
	{
		calls++;
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		return x;
	}
	int main(void)
	{
		unsigned long x = 1;
		const char *f = getenv("COUNTS");
		FILE *o;
		for (int i = 0; i < N; i++)
			x = work(x);
		if (f && (o = fopen(f, "a"))) {
			fprintf(o, "%lu\n", calls);
			fclose(o);
		}
		return x == 0;
	}
	EOF
	printf "app: app.c\n\tcc -g -O1 -o app app.c\n" >Makefile &&
	echo app >.gitignore && git add . && git commit -q -m five &&
	sed -i "s/define N 5/define N 7/" app.c && git commit -q -am seven &&
	echo "read me" >README && git add README && git commit -q -m readme &&
	"$PERUN" init >/dev/null &&
	cat >.perun/local.yml <<-\EOF
	vcs: {type: git, url: .}
	cmds: [./app]
	args: []
	workloads: []
	collectors:
	  - name: trace
	    params:
	      strategy: custom
	      func: [work, main]
	      loader: stapbpf
	postprocessors: []
	execute:
	  pre_run:
	    - make
	repeat: 1
	EOF
'

test_expect_success 'the checkout is made dirty on purpose: it must stay so' '
	cd repo &&
	sed -i "s/define N 7/define N 99/" app.c && echo mine >untracked.txt &&
	git status --porcelain >"$TRASH/status.before" && snapshot >"$TRASH/files.before" &&
	test -s "$TRASH/status.before"
'

test_expect_success 'run matrix --repeat 2 over HEAD~2 and HEAD~2..HEAD: three revisions' '
	cd repo && : >"$COUNTS" &&
	"$PERUN" run matrix --repeat 2 HEAD~2 HEAD~2..HEAD >../out 2>../err &&
	cat >../expect <<-EOF &&
	$(rev HEAD~2) ./app: registered 0@i 1@i
	$(rev HEAD~1) ./app: registered 0@i 1@i
	$(rev HEAD) ./app: registered 0@i 1@i
	EOF
	test_cmp ../expect ../out &&
	# piped: no progress lines, the rounds only, and nothing went wrong
	printf "perun run: round 1 of 2\nperun run: round 2 of 2\n" >../expect &&
	test_cmp ../expect ../err
'

test_expect_success 'each profile has its revision as origin and the exact call counts' '
	cd repo &&
	for r in HEAD~2 HEAD~1 HEAD; do
		for i in 0 1; do profile_line $i@i $r || exit 1; done
	done | cut -d" " -f1,3,4 >../actual &&
	cat >../expect <<-EOF &&
	$(rev HEAD~2) 5 1
	$(rev HEAD~2) 5 1
	$(rev HEAD~1) 7 1
	$(rev HEAD~1) 7 1
	$(rev HEAD) 7 1
	$(rev HEAD) 7 1
	EOF
	test_cmp ../expect ../actual &&
	# what the program counted itself, run by run: in rounds, one run of
	# each revision a round
	printf "5\n7\n7\n5\n7\n7\n" >../expect && test_cmp ../expect "$COUNTS"
'

test_expect_success 'the module cache: a new binary compiles, an unchanged one hits' '
	cd repo &&
	for r in HEAD~2 HEAD~1 HEAD; do profile_line 0@i $r | cut -d" " -f2 || exit 1; done >../actual &&
	printf "miss\nmiss\nhit\n" >../expect && test_cmp ../expect ../actual &&
	profile_line 1@i HEAD~2 | grep " hit "
'

test_expect_success 'the checkout is untouched: status, files, HEAD and no build in it' '
	cd repo &&
	git status --porcelain >../status.after && test_cmp "$TRASH/status.before" ../status.after &&
	snapshot >../files.after && test_cmp "$TRASH/files.before" ../files.after &&
	test "$(git rev-parse HEAD)" = "$(git rev-parse master 2>/dev/null || git rev-parse main)" &&
	! test -e app && grep "define N 99" app.c
'

test_expect_success 'no temporary work tree, log or profile file is left' '
	ls -A "$PERUN_CACHE_DIR/worktrees" >left && cat left &&
	test "$(grep -vc "\.lock$" left)" = 0 &&
	test "$(ls -A "$TMPDIR" | grep -c perun-run)" = 0 &&
	test "$(ls -A repo/.perun/jobs | wc -l)" = 0
'

test_expect_success 'without a revision: the work tree as it is, for HEAD' '
	cd repo && git stash -q && : >"$COUNTS" &&
	make -s >/dev/null && "$PERUN" run matrix >../out 2>../err &&
	echo "$(rev HEAD) ./app: registered 2@i" >../expect && test_cmp ../expect ../out &&
	test "$(profile_line 2@i HEAD | cut -d" " -f3)" = 7 && test "$(cat "$COUNTS")" = 7 &&
	rm app && git stash pop -q
'

test_expect_success 'run job: the job on the command line, the trace options after trace' '
	cd repo && : >"$COUNTS" &&
	"$PERUN" run job -c ./app HEAD~1 trace -s custom -f work >../out 2>../err &&
	echo "$(rev HEAD~1) ./app: registered 2@i" >../expect && test_cmp ../expect ../out &&
	"$PERUN" show -m HEAD~1 2@i --format json | python3 -c "
import json, sys
p = json.load(sys.stdin)
assert sorted(p[\"trace\"][\"summary\"]) == [\"work\"], p[\"trace\"][\"summary\"]
assert p[\"trace\"][\"summary\"][\"work\"][\"count\"] == 7
" && test "$(cat "$COUNTS")" = 7
'

test_expect_success 'on a terminal: progress lines name the revision, the build and each run' '
	command -v script >/dev/null || { echo "no script(1): skipped"; exit 0; }
	cd repo &&
	script -qec "\"$PERUN\" run matrix --repeat 2 HEAD~1" /dev/null </dev/null | tr -d "\r" >../tty &&
	cat ../tty &&
	r=$(rev HEAD~1) &&
	cat >../expect <<-EOF &&
	perun run: [1/1] $r
	perun run: [1/1] $r: make
	perun run: [1/1] $r: job 1/1 ./app, run 1/2
	perun run: [1/1] $r: job 1/1 ./app, run 2/2
	$r ./app: registered 3@i 4@i
	EOF
	test_cmp ../expect ../tty
'

test_expect_success '--no-interleave-rounds: each revision'"'"'s runs back to back' '
	cd repo && : >"$COUNTS" &&
	"$PERUN" run matrix --no-interleave-rounds --repeat 2 HEAD~2 HEAD~1 >../out 2>../err &&
	test_cmp /dev/null ../err &&
	printf "5\n5\n7\n7\n" >../expect && test_cmp ../expect "$COUNTS" &&
	: >"$COUNTS" &&
	sed -i "s/^repeat: 1/repeat: 2\ninterleave_rounds: false/" .perun/local.yml &&
	"$PERUN" run matrix -q HEAD~2 HEAD~1 >../out 2>../err &&
	test_cmp /dev/null ../err &&
	test_cmp ../expect "$COUNTS" &&
	: >"$COUNTS" &&
	"$PERUN" run matrix --interleave-rounds HEAD~2 HEAD~1 >../out 2>../err &&
	printf "5\n7\n5\n7\n" >../expect && test_cmp ../expect "$COUNTS" &&
	sed -i "/^interleave_rounds/d; s/^repeat: 2/repeat: 1/" .perun/local.yml &&
	ls -A "$PERUN_CACHE_DIR/worktrees" >../left && cat ../left &&
	test "$(grep -vc "\.lock$" ../left)" = 0
'

assert_nothing_left

test_done
