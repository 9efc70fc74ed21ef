#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Calls counted without a duration (their return never seen: a longjmp or
# exception past them, a return the runtime could not probe; or faster than
# --min-duration) are in every count and marked wherever a profile is shown:
# show's and diff's calls columns count them with a "*" and a line says how
# many each function has; check says so for each side.  A function whose
# calls all lack a duration keeps its row.  Profiles come from the parser
# alone (no tracing), their trace region written as collect writes it.
. "$SRCDIR/tests/lib.sh"

# prof OUT [untimed]: main calling work 15 times (1000 ns each) in OUT;
# untimed: 5 more calls of work and 3 of leaf have no duration, and 7 of
# work were faster than --min-duration.
prof() {
	python3 - <<-\PY >"$TRASH/raw" &&
	print("s 3e8 0 100"); print("r")
	t = 0x100
	print("0 1 %x" % t)
	for i in range(15):
	    t += 10; print("2 1 %x" % t)
	    t += 1000; print("3 1 %x" % t)
	t += 10; print("1 1 %x" % t); print("q")
	PY
	"$PERUN" __parse "$TRASH/plan" "$TRASH/raw" "$TRASH/p.tmp" >/dev/null &&
	python3 - "$TRASH/p.tmp" "$1" "${2:-}" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload="w")
	s = {"main": {"count": 1}, "work": {"count": 15}}
	if sys.argv[3] == "untimed":
	    s["work"].update(count=27, no_duration=5, below_min_duration=7)
	    s["leaf"] = {"count": 3, "no_duration": 3}
	p["trace"] = {"complete": True, "summary": s}
	json.dump(p, open(sys.argv[2], "w"))
	PY
}

test_expect_success 'two profiles: a.perf all timed, b.perf with calls without a duration' '
	printf "perun-plan 1\t3\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n2\tfunc\t1\t1020\t0\t/bin/app\tleaf\t\t\t\n" >plan &&
	prof a.perf && prof b.perf untimed
'

test_expect_success 'show: the calls count them, marked, and a line per function says so' '
	"$PERUN" show b.perf >actual &&
	cat >expect <<-\EOF &&
	function                                      calls          total         mean       median          p95            max   excl%
	main                                              1          15160      15160.0        15160        15160          15160    1.1%
	work                                            27*          15000       1000.0         1000         1000           1000   98.9%
	leaf                                             3*              0          0.0            0            0              0    0.0%
	3 functions; amounts in ns
	total: outermost calls of a recursion only
	* work: 5 of its calls have no duration (no return seen), counted but not timed
	* work: 7 of its calls were faster than --min-duration, counted but not kept
	* leaf: 3 of its calls have no duration (no return seen), counted but not timed
	EOF
	test_cmp expect actual &&
	"$PERUN" show a.perf >actual &&
	! grep "[*]" actual
'

test_expect_success 'diff: the calls columns count them, marked, each side says which' '
	"$PERUN" diff a.perf b.perf >actual &&
	cat >expect <<-\EOF &&
	A: a.perf
	B: b.perf
	B: * calls without a duration (no return seen; counted, not timed): work 5 of 27, leaf 3 of 3
	B: * calls faster than --min-duration (counted, not kept): work 7 of 27
	function  calls A  calls B  median A  median B     p95 A     p95 B  excl A  excl B   ratio
	main            1        1    15.2us    15.2us    15.2us    15.2us    1.1%    1.1%   1.00x
	work           15      27*       1us       1us       1us       1us   98.9%   98.9%   1.00x
	EOF
	test_cmp expect actual &&
	"$PERUN" diff a.perf b.perf --format json >j &&
	python3 - <<-\PY
	import json
	f = {r["function"]: r for r in json.load(open("j"))["functions"]}
	assert f["work"]["b"]["calls"] == 27 and f["work"]["b"]["no_duration"] == 5, f["work"]
	assert f["work"]["b"]["below_min_duration"] == 7 and "no_duration" not in f["work"]["a"]
	PY
'

test_expect_success 'check: the side with calls without a duration says so' '
	"$PERUN" check a.perf b.perf >actual &&
	cat >expect <<-\EOF &&
	a.perf -> b.perf: trace ./app w
	  target: * calls without a duration (no return seen; counted, not timed): work 5 of 27, leaf 3 of 3
	  target: * calls faster than --min-duration (counted, not kept): work 7 of 27
	  1 run -> 1 run; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	  decided by the runs alone: fewer than 3 functions with self times above the probe cost in every run form no in-run control
	0 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_done
