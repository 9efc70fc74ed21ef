#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live stress: many short collects back to back on a busy host, none of them
# falsely "incomplete".  The machine is kept busy by nproc+1 busy loops
# (niced to 10, so that the collects still progress) and by the collects
# themselves, which run in parallel lanes.  Every collect must exit 0 with a
# complete profile whose counts equal the ones the program counts itself, and
# say nothing of a runtime that "stopped before its end marker": a loader slow
# to end on a busy host is not a lost trace.
#
# Knobs: PERUN_TEST_STRESS_COLLECTS (default 200) collects in all, spread over
# PERUN_TEST_STRESS_LANES (default 4) lanes running at once.
. "$SRCDIR/tests/lib.sh"
require_live
N=${PERUN_TEST_STRESS_COLLECTS:-200}
LANES=${PERUN_TEST_STRESS_LANES:-4}

# The busy loops: killed by the trap whatever way this script ends, and each
# also ends by itself once this shell is gone (even if it was SIGKILLed).
hogs=
stop_hogs() {
	[ -n "$hogs" ] && kill $hogs 2>/dev/null
	hogs=
}
trap 'stop_hogs; cleanup_trash' EXIT
trap 'exit 1' HUP INT TERM

test_expect_success 'build the fixture; one collect fills the module cache' '
	cc -g -O1 -pthread -o exact "$FIXTURES/exact.c" &&
	./exact 5 2 50 >self &&
	grep "calls fib=15 work=100 tiny=100" self &&
	"$PERUN" collect -c ./exact -a "5 2 50" -o first.perf trace \
		-s custom -f work -f tiny >first.out 2>first.err &&
	cat first.err
'
# which loader "auto" took here (perun's own where the kernel has uprobe_multi)
say "$(grep "^perun: tracing" "$TRASH/first.err")"

i=0
while [ $i -le "$(nproc)" ]; do
	nice -n 10 sh -c 'while kill -0 "$1" 2>/dev/null; do :; done' hog $$ &
	hogs="$hogs $!"
	i=$((i + 1))
done
say "$(echo $hogs | wc -w) busy loops (nice 10) on $(nproc) CPUs"

# One lane: collects $2, $2+LANES, ... below N, one after another.  Each
# leaves lane/I.{out,err,rc,perf}; the checks come after all have run.
lane() {
	i=$1
	while [ "$i" -lt "$N" ]; do
		rc=0
		"$PERUN" collect -c ./exact -a "5 2 50" -o run/$i.perf trace \
			-s custom -f work -f tiny >run/$i.out 2>run/$i.err || rc=$?
		echo $rc >run/$i.rc
		i=$((i + LANES))
	done
}

test_expect_success "$N short collects in $LANES lanes under load: every one exact and complete" '
	mkdir run &&
	start=$(date +%s) &&
	l=0 &&
	while [ $l -lt $LANES ]; do
		lane $l &
		l=$((l + 1))
	done &&
	wait &&
	end=$(date +%s) &&
	echo "ran $(ls run/*.rc | wc -l) collects in $LANES lanes in $((end - start)) s" >timing &&
	cat timing &&
	bad=0 &&
	i=0 &&
	while [ $i -lt $N ]; do
		why= &&
		rc=$(cat run/$i.rc) &&
		{ test "$rc" = 0 || why="$why exit $rc;"; } &&
		{ ! grep -q "end marker" run/$i.err || why="$why stopped before its end marker;"; } &&
		{ grep -q "calls fib=15 work=100 tiny=100" run/$i.out || why="$why the program did not run;"; } &&
		if [ -n "$why" ]; then
			echo "collect $i:$why" && sed "s/^/  $i: /" run/$i.err && bad=$((bad + 1))
		fi &&
		i=$((i + 1))
	done &&
	python3 - $N <<-\PY &&
	import json, os, sys
	n, bad = int(sys.argv[1]), 0
	for i in range(n):
	    f = "run/%d.perf" % i
	    if not os.path.exists(f):
	        print("collect %d: no profile" % i); bad += 1; continue
	    t = json.load(open(f))["trace"]
	    counts = {k: v["count"] for k, v in t["summary"].items()}
	    if counts != {"work": 100, "tiny": 100} or t["complete"] is not True:
	        print("collect %d: counts %s complete %s anomalies %s"
	              % (i, counts, t["complete"], t["anomalies"])); bad += 1
	print("%d of %d profiles exact and complete" % (n - bad, n))
	sys.exit(bad != 0)
	PY
	echo "$bad of $N collects failed the exit/stderr/program checks" &&
	test $bad = 0
'
stop_hogs
[ -f "$TRASH/timing" ] && say "$(cat "$TRASH/timing")"

test_expect_success 'nothing left behind' 'assert_nothing_left 1'

test_done
