#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: no false alarm on a busy host.  One unchanged binary, six commits
# (only a text file changes), three runs each collected by perun run matrix
# with real SystemTap while another process keeps a core busy, so whole runs
# move as they do on a loaded machine.  run matrix collects in rounds (its
# default), one run of every commit a round, as asv interleaves them, each
# commit built once: a slow spell of the host then lands on runs of
# several commits, not on all the runs of one (a CI run once saw three
# back-to-back runs of one commit 66 % slower, a step no statistic over runs
# can tell from a real one).  perun check compares each commit with the one
# before (5 comparisons): none may report a degradation.  The rate measured
# and the machine's load are printed.
. "$SRCDIR/tests/lib.sh"
require_live

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

test_expect_success 'six commits of one binary, 3 runs each in rounds, a core kept busy' '
	mkdir repo && cd repo && git init -q &&
	git config user.email t@example.com && git config user.name Tester &&
	cp "$SRCDIR/tests/data/slowcallee.c" app.c && echo app >.gitignore &&
	git add app.c .gitignore && git commit -q -m c0 && "$PERUN" init >/dev/null &&
	cat >.perun/local.yml <<-\EOF &&
	vcs: {type: git, url: .}
	cmds: [./app]
	collectors:
	  - name: trace
	    params: {strategy: userspace}
	execute:
	  pre_run: ["cc -O1 -g -o app app.c"]
	repeat: 3
	EOF
	for c in 1 2 3 4 5 6; do
		echo $c >notes && git add notes && git commit -q -m "c$c" || exit 1
	done || exit 1
	hog_start &&
	"$PERUN" run matrix HEAD~6..HEAD >run.out 2>run.err || { hog_stop; cat run.err; exit 1; }
	hog_stop &&
	cat run.out &&
	test "$(grep -c "^perun run: round [123] of 3$" run.err)" = 3 &&
	test "$(grep -c " ./app: registered 0@i 1@i 2@i$" run.out)" = 6 &&
	test "$(git rev-list --count HEAD)" = 7
'

test_expect_success 'no degradation in 5 comparisons of consecutive commits' '
	cd repo &&
	alarms=0 &&
	for k in 5 4 3 2 1; do
		rc=0; "$PERUN" check HEAD~$k HEAD~$((k - 1)) >out.$k 2>&1 || rc=$?
		grep -q "^[0-9]* degradations\{0,1\}, " out.$k || { cat out.$k; exit 1; }
		grep -q " 3 runs -> 3 runs on " out.$k || { cat out.$k; exit 1; }
		if [ $rc = 1 ]; then alarms=$((alarms + 1)); cat out.$k; fi
		tail -n 1 out.$k
	done &&
	echo "$alarms of 5 comparisons (load average: $(cut -d" " -f1-3 /proc/loadavg))" \
		>"$TRASH/rate" &&
	test $alarms = 0
'
say "false alarms: $(cat "$TRASH/rate" 2>/dev/null)"

test_done
