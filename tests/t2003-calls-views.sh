#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun show's views of the calls one by one: the tree per thread, the
# callers and callees of a function, Chrome trace-event JSON and latency
# distributions, with their filters.  The profile comes from the parser alone
# (perun __parse, no tracing) on a stream whose every call and time is known:
# main calls work (which calls leaf twice), a point, and fib, which calls
# itself twice; a second thread calls work, which calls leaf once.
. "$SRCDIR/tests/lib.sh"

mkplan() {
	printf "perun-plan 2\t5\n" &&
	printf "0\tfunc\t1\t1000\t0\t0\t0\t0\t/bin/app\tmain\t\t\t\t\n" &&
	printf "1\tfunc\t1\t1010\t0\t0\t0\t0\t/bin/app\twork\t\t\t\t\n" &&
	printf "2\tfunc\t1\t1020\t0\t0\t0\t0\t/bin/app\tleaf\t\t\t\t\n" &&
	printf "3\tfunc\t1\t1030\t0\t0\t0\t0\t/bin/app\tfib\t\t\t\t\n" &&
	printf "4\tusdt-point\t1\t1040\t0\t0\t0\t0\t/bin/app\tapp:tick\t\t\t\t\n"
}

# CODE (probe * 2 + exit) TID-offset TS (hex ns; the begin marker is at 0)
mkraw() {
	cat <<-\EOF
	s 3e8 0 0
	r
	0 0 64
	2 0 c8
	4 0 12c
	2 1 12c
	4 1 15e
	5 1 17c
	5 0 190
	3 1 190
	4 0 1f4
	5 0 2bc
	3 0 384
	8 0 3e8
	6 0 44c
	6 0 4b0
	7 0 514
	6 0 578
	7 0 5dc
	7 0 640
	1 0 7d0
	q
	EOF
}

test_expect_success 'the profile, in both forms' '
	mkplan >plan && mkraw >raw &&
	"$PERUN" __parse plan raw c.perf >/dev/null &&
	"$PERUN" __parse plan raw p.perf --per-call >/dev/null
'

test_expect_success 'tree: every call per thread, nested, with entry, duration and self time' '
	"$PERUN" show c.perf --format tree >actual &&
	cat >expect <<-\EOF &&
	# the calls per thread in entry order, nested by caller; times in ns,
	# ENTRY since the trace began, SELF without the recorded callees

	# thread 1000: 8 calls
	#      ENTRY   DURATION       SELF  FUNCTION
	         100       1900        700  main
	         200        700        400    work
	         300        100        100      leaf
	         500        200        200      leaf
	        1000      point      point    app:tick
	        1100        500        300    fib
	        1200        100        100      fib
	        1400        100        100      fib

	# thread 1001: 2 calls
	#      ENTRY   DURATION       SELF  FUNCTION
	         300        100         70  work
	         350         30         30    leaf
	EOF
	test_cmp expect actual &&
	"$PERUN" show p.perf --format tree >actual.p &&
	test_cmp expect actual.p
'

test_expect_success 'tree filters: a function (and what it calls), depth, thread, duration' '
	"$PERUN" show c.perf fib --format tree | sed 1,3d >actual &&
	cat >expect <<-\EOF &&
	# thread 1000: 3 calls
	#      ENTRY   DURATION       SELF  FUNCTION
	        1100        500        300  fib
	        1200        100        100    fib
	        1400        100        100    fib
	EOF
	test_cmp expect actual &&
	"$PERUN" show c.perf --format tree --include work --include fib --depth 1 --thread 1000 |
		sed 1,3d >actual &&
	cat >expect <<-\EOF &&
	# thread 1000: 2 calls
	#      ENTRY   DURATION       SELF  FUNCTION
	         200        700        400  work
	        1100        500        300  fib
	EOF
	test_cmp expect actual &&
	"$PERUN" show c.perf --format tree --min-duration 150ns | sed 1,3d >actual &&
	cat >expect <<-\EOF &&
	# thread 1000: 4 calls
	#      ENTRY   DURATION       SELF  FUNCTION
	         100       1900        700  main
	         200        700        400    work
	         500        200        200      leaf
	        1100        500        300    fib
	EOF
	test_cmp expect actual &&
	"$PERUN" show c.perf --format tree --thread 7 | sed 1,3d >actual &&
	echo "# no calls match" >expect &&
	test_cmp expect actual
'

test_expect_success 'graph: the callers and callees of a function, with counts and times' '
	"$PERUN" show c.perf fib --format graph >actual &&
	cat >expect <<-\EOF &&
	# fib: 3 calls, 500 ns in total (outermost calls of a recursion), 500 ns self
	# TOTAL and SELF: ns in the calls of fib from each caller, and in each callee${SQ}s calls from fib

	#      CALLS      TOTAL       SELF  CALLERS
	           1        500        300  main
	           2        200        200  fib

	#      CALLS      TOTAL       SELF  CALLEES
	           2        200        200  fib
	EOF
	sed "s/\${SQ}/$SQ/" expect >expect.q &&
	test_cmp expect.q actual &&
	"$PERUN" show p.perf --format graph --include work >actual &&
	cat >expect <<-\EOF &&
	# work: 2 calls, 800 ns in total (outermost calls of a recursion), 470 ns self
	# TOTAL and SELF: ns in the calls of work from each caller, and in each callee${SQ}s calls from work

	#      CALLS      TOTAL       SELF  CALLERS
	           1        700        400  main
	           1        100         70  (no caller)

	#      CALLS      TOTAL       SELF  CALLEES
	           3        330        330  leaf
	EOF
	sed "s/\${SQ}/$SQ/" expect >expect.q &&
	test_cmp expect.q actual &&
	test_expect_code 1 "$PERUN" show c.perf nosuch --format graph 2>err &&
	grep "c.perf: no calls of .nosuch." err
'

test_expect_success 'chrome: one complete event per call, per process and thread' '
	"$PERUN" show c.perf --format chrome >actual &&
	cat >expect <<-\EOF &&
	{"displayTimeUnit":"ns","otherData":{"profile":"c.perf","command":"c.perf"},
	"traceEvents":[
	{"name":"process_name","ph":"M","pid":1000,"tid":1000,"args":{"name":"c.perf (pid 1000)"}},
	{"name":"thread_name","ph":"M","pid":1000,"tid":1000,"args":{"name":"thread 1000"}},
	{"name":"thread_name","ph":"M","pid":1000,"tid":1001,"args":{"name":"thread 1001"}},
	{"name":"main","cat":"function","ph":"X","ts":0.100,"dur":1.900,"pid":1000,"tid":1000},
	{"name":"work","cat":"function","ph":"X","ts":0.200,"dur":0.700,"pid":1000,"tid":1000},
	{"name":"leaf","cat":"function","ph":"X","ts":0.300,"dur":0.100,"pid":1000,"tid":1000},
	{"name":"leaf","cat":"function","ph":"X","ts":0.500,"dur":0.200,"pid":1000,"tid":1000},
	{"name":"app:tick","cat":"point","ph":"i","ts":1.000,"s":"t","pid":1000,"tid":1000},
	{"name":"fib","cat":"function","ph":"X","ts":1.100,"dur":0.500,"pid":1000,"tid":1000},
	{"name":"fib","cat":"function","ph":"X","ts":1.200,"dur":0.100,"pid":1000,"tid":1000},
	{"name":"fib","cat":"function","ph":"X","ts":1.400,"dur":0.100,"pid":1000,"tid":1000},
	{"name":"work","cat":"function","ph":"X","ts":0.300,"dur":0.100,"pid":1000,"tid":1001},
	{"name":"leaf","cat":"function","ph":"X","ts":0.350,"dur":0.030,"pid":1000,"tid":1001}
	]}
	EOF
	test_cmp expect actual &&
	python3 -c "import json; json.load(open(\"actual\"))" &&
	"$PERUN" show p.perf --format chrome -o p.json &&
	sed "s/p.perf/c.perf/g" p.json >p.json.c && test_cmp expect p.json.c
'

test_expect_success 'chrome -o: never through a symbolic link; a name in JSON escaped' '
	echo precious >precious && ln -s precious link.json &&
	test_expect_code 1 "$PERUN" show c.perf --format chrome -o link.json 2>err &&
	grep "link.json: not a regular file of ours" err &&
	test "$(cat precious)" = precious &&
	sed "s/\"leaf\"/\"a\\\\\"b\\\\\\\\c\"/g" p.perf >q.perf &&
	"$PERUN" show q.perf --format chrome >q.json &&
	python3 -c "
import json
d = json.load(open(\"q.json\"))
n = [e[\"name\"] for e in d[\"traceEvents\"] if e[\"ph\"] == \"X\"]
assert n.count(\"a\\\"b\\\\c\") == 3, n
"
'

test_expect_success 'hist: quantiles and a log2 histogram per function from the exact calls' '
	"$PERUN" show c.perf --format hist >actual &&
	cat >expect <<-\EOF &&
	# latency per function in ns: quantiles of the exact calls, linear between the closest ranks (FROM calls)
	function      calls          p50          p90          p99        p99.9          max  from
	main              1       1900.0       1900.0       1900.0       1900.0       1900.0  calls
	work              2        400.0        640.0        694.0        699.4        700.0  calls
	fib               3        100.0        420.0        492.0        499.2        500.0  calls
	leaf              3        100.0        180.0        198.0        199.8        200.0  calls

	main: 1 call, log2 buckets of ns
	          1024 .. 2047                  1 ########################################

	work: 2 calls, log2 buckets of ns
	            64 .. 127                   1 ########################################
	           128 .. 255                   0
	           256 .. 511                   0
	           512 .. 1023                  1 ########################################

	fib: 3 calls, log2 buckets of ns
	            64 .. 127                   2 ########################################
	           128 .. 255                   0
	           256 .. 511                   1 ####################

	leaf: 3 calls, log2 buckets of ns
	            16 .. 31                    1 ########################################
	            32 .. 63                    0
	            64 .. 127                   1 ########################################
	           128 .. 255                   1 ########################################
	EOF
	test_cmp expect actual &&
	"$PERUN" show p.perf --format hist >actual.p && test_cmp expect actual.p &&
	"$PERUN" show p.perf --format hist --include leaf --thread 1000 | sed -n 3p >actual &&
	echo "leaf              2        150.0        190.0        199.0        199.9        200.0  calls" >expect &&
	test_cmp expect actual
'

test_expect_success 'hist of an --aggregate profile: from its log2 histograms, and says so' '
	python3 - p.perf agg.perf <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["snapshots"][0]["resources"] = [{"amount": 2800, "uid": "work", "type": "mixed",
	    "subtype": "time summary", "thread": 1000, "count": 10, "min": 70, "max": 600,
	    "log2_hist": [0, 0, 0, 0, 0, 0, 4, 5, 0, 1]}]
	json.dump(p, open(sys.argv[2], "w"))
	PY
	"$PERUN" show agg.perf --format hist >actual &&
	cat >expect <<-\EOF &&
	# latency per function in ns: quantiles of the stored log2 histograms, interpolated within a bucket (FROM log2)
	function      calls          p50          p90          p99        p99.9          max  from
	work             10        153.6        256.0        600.0        600.0        600.0  log2

	work: 10 calls, log2 buckets of ns
	            64 .. 127                   4 ################################
	           128 .. 255                   5 ########################################
	           256 .. 511                   0
	           512 .. 1023                  1 ########
	EOF
	test_cmp expect actual &&
	test_expect_code 1 "$PERUN" show agg.perf --format tree >out 2>err &&
	grep "agg.perf: snapshots\[0\].resources\[0\]: not a per-call record" err
'

test_expect_success 'diff --format hist: the quantiles of A and B side by side' '
	"$PERUN" diff c.perf agg.perf --format hist >actual &&
	cat >expect <<-\EOF &&
	# latency per function in ns, quantiles of A: the exact calls; of B: the stored log2 histograms
	function  calls A  calls B      p50 A      p50 B      p90 A      p90 B      p99 A      p99 B    p99.9 A    p99.9 B   p99 B/A
	main            1        -     1900.0          -     1900.0          -     1900.0          -     1900.0          -         -
	work            2       10      400.0      153.6      640.0      256.0      694.0      600.0      699.4      600.0     0.86x
	fib             3        -      100.0          -      420.0          -      492.0          -      499.2          -         -
	leaf            3        -      100.0          -      180.0          -      198.0          -      199.8          -         -
	EOF
	test_cmp expect actual
'

test_expect_success 'usage errors: exit 2, saying what goes with what' '
	test_expect_code 2 "$PERUN" show c.perf --format graph 2>err &&
	grep "graph wants a function" err &&
	test_expect_code 2 "$PERUN" show c.perf --depth 2 2>err &&
	grep "go with --format tree, graph, chrome or hist" err &&
	test_expect_code 2 "$PERUN" show c.perf --format tree -o x.json 2>err &&
	grep "\-o goes with --format chrome" err && ! test -e x.json &&
	test_expect_code 2 "$PERUN" show c.perf --format tree --min-duration 5parsecs 2>err &&
	grep "min-duration wants a time" err &&
	test_expect_code 2 "$PERUN" show c.perf --format tree --thread -1 2>err &&
	grep "thread wants a thread id" err &&
	test_expect_code 2 "$PERUN" show c.perf --format tree --depth 0 2>err &&
	grep "depth wants a number" err &&
	test_expect_code 2 "$PERUN" show c.perf main --format summary 2>err &&
	grep "one profile at a time" err
'

test_done
