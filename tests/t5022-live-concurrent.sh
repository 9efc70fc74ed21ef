#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: concurrent collects do not disturb one another.  Each one's probes
# are found attached (the stapbpf loader's are read back from the shared
# uprobe_events list, which others change meanwhile) and each one exits 0
# with the counts the fixture counts itself, for both bpf loaders.  Twenty at
# once: the review that found one of 20 exiting 3 ("runtime stopped before
# its end marker") with exact counts ran that many.
. "$SRCDIR/tests/lib.sh"
require_live
N=${PERUN_TEST_CONCURRENT:-20}

test_expect_success 'build the fixture; one collect fills the module cache' '
	cc -g -O1 -pthread -o exact "$FIXTURES/exact.c" &&
	./exact 10 2 100 >self &&
	grep "calls fib=177 work=200 tiny=200" self &&
	"$PERUN" collect -c ./exact -a "10 2 100" -o first.perf trace -q \
		-s custom -f fib -f work -f tiny --loader stapbpf
'

for loader in stapbpf perun; do
test_expect_success "$N concurrent collects: each exits 0 with exact counts ($loader)" '
	mkdir '$loader' && i=0 &&
	while [ $i -lt $N ]; do
		{ "$PERUN" collect -c ./exact -a "10 2 100" -o '$loader'/$i.perf trace -q \
			-s custom -f fib -f work -f tiny --loader '$loader' >'$loader'/$i.out 2>'$loader'/$i.err
		  echo $? >'$loader'/$i.rc; } &
		i=$((i + 1))
	done &&
	wait &&
	cat '$loader'/*.err &&
	for i in $(seq 0 $((N - 1))); do
		test "$(cat '$loader'/$i.rc)" = 0 &&
		grep "calls fib=177 work=200 tiny=200" '$loader'/$i.out || {
			echo "collect $i of $N ('$loader'): exit $(cat '$loader'/$i.rc)"; return 1; }
	done &&
	python3 - '$loader'/*.perf <<-\PY
	import json, sys
	for f in sys.argv[1:]:
	    t = json.load(open(f))["trace"]
	    counts = {k: v["count"] for k, v in t["summary"].items()}
	    assert counts == {"fib": 177, "work": 200, "tiny": 200}, (f, counts)
	    assert t["complete"] is True, (f, t["anomalies"])
	print(len(sys.argv) - 1, "profiles exact and complete")
	PY
'
done

test_done
