#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: a nightly on a loaded machine names the planted commits.  10 commits
# of a program whose hot() and four steady functions each spin a loop (long
# enough for the probes' cost to be small beside it); c4 makes hot's loop
# 30 % longer, c7 twice as long again (15 % was not named reliably under
# the hog: see the commit message).  The loops keep their sum in a
# register: a volatile on the stack ran each function at one of three
# speeds (6 % apart) drawn anew in every run, by where ASLR put the stack,
# which 3 runs a side cannot average out.  perun run matrix collects all
# 10, 5 runs each in rounds (with 3, bisect or check missed a planted
# commit in 3 of 8 runs here; with 5, in none of 12), with real SystemTap,
# while a CPU hog runs for 40 s from its start (on this VM the matrix
# takes about 25 s, so the hog loads all of it; a slower host runs its
# last rounds unloaded).  Then
# perun bisect over all 10 names c4, and from c4 on names c7, collecting
# nothing again; perun check between each commit and its parent flags c4
# and c7 and nothing else (9 comparisons); perun history and perun report
# find median steps at c4 and c7 only (each run weighed by how well its own
# functions agree, t7005 holds one such matrix's numbers).
. "$SRCDIR/tests/lib.sh"
# the run-speed control was tuned with every return probed on its
# instructions, as before perun chose per function
export PERUN_RETURNS=instructions
. "$SRCDIR/tests/lib-bisect.sh"
require_live

# how long the hog runs from the start of the matrix, in seconds
HOG=${PERUN_TEST_HOG:-40}

test_expect_success '10 commits: hot +30 % at c4, x2 at c7; run matrix, a CPU hog through part of it' '
	bisect_repo 10 "4 7" "1.3 2.6" hot a b c d <<-\EOF &&
	static const char *version = "v1";
	#define LOOP(n) { unsigned long x = 0; for (unsigned long i = 0; i < (n); i++) { x += i; __asm__ volatile("" : "+r"(x)); } return x; }
	__attribute__((noinline)) unsigned long hot(void) LOOP((unsigned long)(1000000 * FACTOR))
	__attribute__((noinline)) unsigned long a(void) LOOP(1000000)
	__attribute__((noinline)) unsigned long b(void) LOOP(1000000)
	__attribute__((noinline)) unsigned long c(void) LOOP(1000000)
	__attribute__((noinline)) unsigned long d(void) LOOP(1000000)
	int main(void)
	{
		unsigned long s = 0;
		for (int i = 0; i < 30; i++)
			s += hot() + a() + b() + c() + d();
		return version[0] == (char)s;
	}
	EOF
	echo "repeat: 5" >>.perun/local.yml &&
	hog_start "$HOG" &&
	"$PERUN" run matrix HEAD~9 HEAD~9..HEAD >../run.out 2>../run.err || { cat ../run.err; exit 1; }
	hog_stop &&
	test "$(grep -c "^perun run: round [12345] of 5$" ../run.err)" = 5 &&
	test "$(grep -c " ./app: registered 0@i 1@i 2@i 3@i 4@i$" ../run.out)" = 10 &&
	echo "load average after the matrix: $(cut -d" " -f1-3 /proc/loadavg)"
'

test_expect_success 'history and the report name c4 and c7, and nothing else' '
	cd repo &&
	"$PERUN" history hot >../h.txt && cat ../h.txt &&
	"$PERUN" history --all --format json >../h.json &&
	"$PERUN" report -o ../site >/dev/null &&
	python3 - ../h.json ../site/index.json "$(cat ../planted.4)" "$(cat ../planted.7)" <<-\PY
	import json, sys
	h = json.load(open(sys.argv[1]))
	site = json.load(open(sys.argv[2]))
	want = {("hot", sys.argv[3]), ("hot", sys.argv[4])}
	got = {(s["function"], x["commit"]) for s in h["series"] for x in s["steps"]}
	assert got == want, ("history", got)
	got = {(x["function"], x["commit"]) for x in site["regressions"] if x["of"] == "median"}
	assert got == want, ("report", got)
	PY
'

test_expect_success 'bisect names c4 over all 10, c7 from c4 on; nothing collected again' '
	cd repo &&
	"$PERUN" bisect -q HEAD~9 HEAD hot >../b1 2>&1 && cat ../b1 &&
	grep "^$(cat ../planted.4) is the first commit where hot steps up: c4$" ../b1 &&
	"$PERUN" bisect -q HEAD~6 HEAD hot >../b2 2>&1 && cat ../b2 &&
	grep "^$(cat ../planted.7) is the first commit where hot steps up: c7$" ../b2 &&
	! grep "./app: registered" ../b1 ../b2 &&
	grep "^collected 0 of 10 revisions (0 runs)" ../b1
'

test_expect_success 'check between neighbours flags c4 and c7 and nothing else' '
	cd repo &&
	for k in 8 7 6 5 4 3 2 1 0; do
		rc=0; "$PERUN" check HEAD~$((k + 1)) HEAD~$k >../c.$k 2>&1 || rc=$?
		grep -q " 5 runs -> 5 runs on " ../c.$k || { cat ../c.$k; exit 1; }
		if [ $rc = 1 ]; then git log -1 --format=%s HEAD~$k; fi
	done >../flagged &&
	printf "c4\nc7\n" >../expect &&
	test_cmp ../expect ../flagged
'

test_done
