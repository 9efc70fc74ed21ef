#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun run matrix when things fail.  A revision whose pre_run build
# fails is named with the failing command and the end of its output, its
# jobs are not run, and the other revisions still run and register; a job
# whose collect fails is named with its revision and job; the exit status is
# 1 and no temporary work tree is left.  Usage and local.yml errors come
# before anything runs.
. "$SRCDIR/tests/lib.sh"
require_live

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

rev() { git -C "$TRASH/repo" rev-parse --short=7 "$1"; }

# code CMD...: runs CMD with its stdout in ../out and stderr in ../err, and
# prints its exit status
code() { rc=0; "$@" >../out 2>../err || rc=$?; echo $rc; }

# local.yml with the given cmds line, trace params and pre_run line
local_yml() {
	cat >.perun/local.yml <<-EOF
	vcs: {type: git, url: .}
	cmds: $1
	collectors:
	  - name: trace
	    params: $2
	execute:
	  pre_run: [make]
	EOF
}

test_expect_success 'three revisions; the middle one does not compile' '
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T &&
	printf "__attribute__((noinline)) int work(int x) { return x + 1; }\nint main(void) { return work(0) - 1; }\n" >app.c &&
	printf "app: app.c\n\tcc -g -O0 -o app app.c\n" >Makefile &&
	echo app >.gitignore && git add . && git commit -q -m good &&
	echo "this is not C" >>app.c && git commit -q -am broken &&
	git revert --no-edit HEAD >/dev/null && git log --oneline &&
	"$PERUN" init >/dev/null &&
	local_yml "[./app]" "{strategy: custom, func: [work]}"
'

test_expect_success 'the failed build is named; the other revisions are registered' '
	cd repo &&
	test "$(code "$PERUN" run matrix HEAD~2 HEAD~1 HEAD)" = 1 && cat ../out ../err &&
	cat >../expect <<-EOF &&
	$(rev HEAD~2) ./app: registered 0@i
	$(rev HEAD) ./app: registered 0@i
	EOF
	test_cmp ../expect ../out &&
	grep "^perun run: $(rev HEAD~1): pre_run .make. failed (exit 2): the jobs of this revision were not run" ../err &&
	grep "    .*this is not C\|    .*error" ../err &&
	grep "^perun run: 1 of 3 revisions had a failure (named above); 2 profiles registered" ../err &&
	"$PERUN" log --short >../log && cat ../log &&
	grep "^$(rev HEAD~1)  0 profiles" ../log
'

test_expect_success 'a failing collect names the revision and the job; the rest still runs' '
	cd repo &&
	local_yml "[./missing, ./app]" "{strategy: custom, func: [work]}" &&
	test "$(code "$PERUN" run matrix HEAD)" = 1 && cat ../out ../err &&
	grep "^perun run: $(rev HEAD): job 1 (./missing): ./missing: no such file in " ../err &&
	echo "$(rev HEAD) ./app: registered 1@i" >../expect && test_cmp ../expect ../out
'

test_expect_success 'nothing is left behind: work tree, logs, pending profiles' '
	ls -A "$PERUN_CACHE_DIR/worktrees" >left && cat left &&
	test "$(grep -vc "\.lock$" left)" = 0 &&
	test "$(ls -A "$TMPDIR" | grep -c perun-run)" = 0 &&
	test "$(ls -A repo/.perun/jobs | wc -l)" = 0 &&
	test -z "$(git -C repo status --porcelain | grep -v "^?? .perun/")"
'

test_expect_success 'a signal during the build stops it, the run, and removes the work tree' '
	cd repo
	printf "vcs: {type: git, url: .}\ncmds: [./app]\ncollectors: [{name: trace}]\nexecute: {pre_run: [\"sleep 60.123\"]}\n" >.perun/local.yml
	"$PERUN" run matrix HEAD >../out 2>../err &
	pid=$! &&
	for i in $(seq 100); do
		ls "$PERUN_CACHE_DIR/worktrees" | grep -qv "\.lock$" && break; sleep 0.1
	done &&
	ls "$PERUN_CACHE_DIR/worktrees" | grep -v "\.lock$" &&
	sleep 0.5 && kill -TERM $pid &&
	rc=0 && { wait $pid || rc=$?; } &&
	cat ../err && test $rc = 143 &&
	grep "interrupted at revision 1 of 1" ../err &&
	test "$(ls "$PERUN_CACHE_DIR/worktrees" | grep -vc "\.lock$")" = 0 &&
	# the build was stopped too, not left running
	sleep 0.2 && ! ps -eo args | grep -x "sleep 60.123"
'

test_expect_success 'usage errors exit 2 before anything runs' '
	cd repo &&
	for args in "" "frob" "matrix --repeat 0" "matrix --repeat x" "matrix --bogus" "job HEAD"; do
		test "$(code "$PERUN" run $args)" = 2 || { echo "perun run $args: not 2"; exit 1; }
		test -s ../err && ! test -s ../out || exit 1
	done &&
	test "$(code "$PERUN" run job -c ./app HEAD trace -s bogus)" = 2 &&
	grep "unknown strategy .bogus." ../err &&
	test "$(code "$PERUN" bisect HEAD)" = 2 && grep "give GOOD and BAD" ../err &&
	test "$(code "$PERUN" bisect --threshold -5 HEAD~1 HEAD)" = 2 &&
	grep "threshold wants a percentage" ../err &&
	test "$(ls -A .perun/jobs | wc -l)" = 0
'

test_expect_success 'local.yml errors name the key and the fix, exit 1' '
	cd repo &&
	local_yml "[./app]" "{strategy: bogus}" &&
	test "$(code "$PERUN" run matrix HEAD)" = 1 && cat ../err &&
	grep "unknown strategy .bogus." ../err &&
	grep "collector 1 (trace): a param is refused" ../err &&
	local_yml "{a: b}" "{}" &&
	test "$(code "$PERUN" run matrix HEAD)" = 1 && grep "cmds is a list of strings" ../err &&
	printf "vcs: {type: git, url: .}\ncmds: [./app]\ncollectors: [{name: memory}]\n" >.perun/local.yml &&
	test "$(code "$PERUN" run matrix HEAD)" = 1 &&
	grep "collector 1 is .memory.: perun has the trace collector only" ../err &&
	printf "vcs: {type: git, url: .}\ncollectors: [{name: trace}]\n" >.perun/local.yml &&
	test "$(code "$PERUN" run matrix HEAD)" = 1 && grep "local.yml has no cmds" ../err &&
	printf "vcs: {type: git, url: .}\ncmds: [./app]\ncollectors: [{name: trace}]\nrepeat: lots\n" >.perun/local.yml &&
	test "$(code "$PERUN" run matrix HEAD)" = 1 && grep "local.yml:4: repeat is a number of runs" ../err
'

test_expect_success 'a signal during the rounds removes the work tree and every parked one' '
	cd repo &&
	echo 1 >slow && git add slow && git commit -q -m slow &&
	printf "vcs: {type: git, url: .}\ncmds: [./app]\ncollectors: [{name: trace}]\nexecute: {pre_run: [make, \"test ! -e slow || sleep 60.456\"]}\n" >.perun/local.yml ||
		exit 1
	"$PERUN" run matrix HEAD~1 HEAD >../out 2>../err &
	pid=$! &&
	for i in $(seq 300); do
		ls "$PERUN_CACHE_DIR/worktrees" | grep -q "\.r1$" &&
		ps -eo args | grep -qx "sleep 60.456" && break; sleep 0.1
	done &&
	ls "$PERUN_CACHE_DIR/worktrees" | grep -v "\.lock$" >../trees && cat ../trees &&
	test "$(wc -l <../trees)" = 2 && grep -q "\.r1$" ../trees &&
	kill -TERM $pid &&
	rc=0 && { wait $pid || rc=$?; } &&
	cat ../err && test $rc = 143 &&
	grep "interrupted at revision 2 of 2" ../err &&
	test "$(ls "$PERUN_CACHE_DIR/worktrees" | grep -vc "\.lock$")" = 0 &&
	sleep 0.2 && ! ps -eo args | grep -x "sleep 60.456" &&
	git reset -q --hard HEAD~1
'

assert_nothing_left

test_done
