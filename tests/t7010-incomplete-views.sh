#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# An incomplete profile (events lost, a probe not attached) says so wherever
# it is shown, with the loss per function: show in every format (the table's
# first lines; stderr where stdout is JSON, folded stacks or SVG), diff,
# check, history and report.  A complete profile shows no such line.
# Profiles come from the parser alone (no tracing); the loss is written into
# the trace region as collect writes it.
. "$SRCDIR/tests/lib.sh"

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# prof SEED [lossy]: a profile of main calling work 15 times (~1000 ns) in
# p.perf; lossy: 40 events of work and 6 of main lost in the recorder's
# buffer, one of 4 probes not attached.
prof() {
	python3 - "$1" <<-\PY >"$TRASH/raw" &&
	import random, sys
	rnd = random.Random(int(sys.argv[1]))
	print("s 3e8 0 100"); print("r")
	t = 0x100
	print("0 1 %x" % t)
	for i in range(15):
	    t += 10; print("2 1 %x" % t)
	    t += int(1000 * rnd.uniform(0.9, 1.1)); print("3 1 %x" % t)
	t += 10; print("1 1 %x" % t); print("q")
	PY
	"$PERUN" __parse "$TRASH/plan" "$TRASH/raw" "$TRASH/p.tmp" >/dev/null &&
	python3 - "$TRASH/p.tmp" "$TRASH/p.perf" "${2:-}" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload="w")
	lossy = sys.argv[3] == "lossy"
	p["collector_info"]["probes"] = {"planned": 4, "attached": 3 if lossy else 4,
	    "failed": ["helper (/bin/app): its entry probe was not attached"] if lossy else []}
	p["trace"] = {"complete": not lossy, "anomalies": {
	    "lost_events": 46 if lossy else 0, "lost_in_buffer": 46 if lossy else 0,
	    "lost_in_transport": 0, "missing_records": 0,
	    "lost_by_function": {"work": 40, "main": 6} if lossy else {},
	    "unfinished_by_function": {}, "missing_end": False}}
	json.dump(p, open(sys.argv[2], "w"))
	PY
}

commit() { echo "$1" >>f && git add f && git commit -q -m "$1"; }

cat >"$TRASH/expect.header" <<\EOF
incomplete profile: 46 events lost (46 in the recorder's full buffer), 1 of 4 probe points not attached; the calls and times shown miss what was lost
  work: 40 events lost
  main: 6 events lost
  not attached: helper (/bin/app): its entry probe was not attached
EOF

test_expect_success 'a repository: c1 complete, c2 lossy, c3 complete' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	mkdir repo && cd repo && git init -q -b main && git config user.email t@example.com &&
	git config user.name T && "$PERUN" init >/dev/null &&
	commit c1 && prof 1 && cp ../p.perf ../c1.perf && "$PERUN" add -m HEAD ../p.perf >/dev/null &&
	commit c2 && prof 2 lossy && cp ../p.perf ../c2.perf &&
	"$PERUN" add -m HEAD ../p.perf >/dev/null && git rev-parse HEAD >../c2 &&
	commit c3 && prof 3 && "$PERUN" add -m HEAD ../p.perf >/dev/null
'

test_expect_success 'show: the table begins with the loss, per function' '
	"$PERUN" show c2.perf >actual &&
	{ cat "$TRASH/expect.header" && cat <<-\EOF; } >expect &&
	function                                      calls          total         mean       median          p95            max   excl%
	main                                              1          15272      15272.0        15272        15272          15272    1.0%
	work                                             15          15112       1007.5         1021         1090           1091   99.0%
	2 functions; amounts in ns
	total: outermost calls of a recursion only
	EOF
	test_cmp expect actual
'

test_expect_success 'show of a complete profile: no such line' '
	"$PERUN" show c1.perf >actual &&
	cat >expect <<-\EOF &&
	function                                      calls          total         mean       median          p95            max   excl%
	main                                              1          15050      15050.0        15050        15050          15050    1.1%
	work                                             15          14890        992.7          989         1068           1069   98.9%
	2 functions; amounts in ns
	total: outermost calls of a recursion only
	EOF
	test_cmp expect actual
'

test_expect_success 'show --format json, folded, flamegraph: stdout stays the format, stderr says it' '
	for f in json folded flamegraph; do
		"$PERUN" show c2.perf --format $f >out.$f 2>err.$f &&
		sed "s/^perun show: //" err.$f >actual && test_cmp "$TRASH/expect.header" actual || return 1
	done &&
	python3 -c "import json; json.load(open(\"out.json\"))" &&
	"$PERUN" show c1.perf --format folded >complete.folded 2>err && test ! -s err &&
	test "$(cut -d" " -f1 out.folded)" = "$(cut -d" " -f1 complete.folded)" &&
	grep "an incomplete profile (events lost or probes not attached)" out.flamegraph
'

test_expect_success 'diff: the lossy side says so before the table' '
	"$PERUN" diff c1.perf c2.perf >actual &&
	{ printf "A: c1.perf\nB: c2.perf\n" && sed "s/^/B: /" "$TRASH/expect.header" &&
	  cat <<-\EOF; } >expect &&
	function  calls A  calls B  median A  median B     p95 A     p95 B  excl A  excl B   ratio
	work           15       15     989ns    1.02us    1.07us    1.09us   98.9%   99.0%   1.03x
	main            1        1    15.1us    15.3us    15.1us    15.3us    1.1%    1.0%   1.01x
	EOF
	test_cmp expect actual &&
	"$PERUN" diff c1.perf c2.perf --format json >j 2>err &&
	python3 -c "import json; assert \"incomplete profile: 46 events lost\" in json.load(open(\"j\"))[\"b_incomplete\"]" &&
	sed "s/^B: //" err >actual && test_cmp "$TRASH/expect.header" actual
'

test_expect_success 'check: the pair says which profile is incomplete' '
	"$PERUN" check c1.perf c2.perf >actual &&
	{ echo "c1.perf -> c2.perf: trace ./app w" && sed "s/^/  target: /" "$TRASH/expect.header" &&
	  cat <<-\EOF; } >expect &&
	  1 run -> 1 run; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	  decided by the runs alone: fewer than 3 functions with self times above the probe cost in every run form no in-run control
	0 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual &&
	"$PERUN" check c2.perf c1.perf >actual &&
	{ echo "c2.perf -> c1.perf: trace ./app w" && sed "s/^/  baseline: /" "$TRASH/expect.header" &&
	  cat <<-\EOF; } >expect &&
	  1 run -> 1 run; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	  decided by the runs alone: fewer than 3 functions with self times above the probe cost in every run form no in-run control
	0 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'history: the lossy commit is marked, its loss listed' '
	cd repo && c2=$(cut -c1-7 ../c2) &&
	"$PERUN" history work >out &&
	# the profile'"'"'s object id (its origin holds the commit time) as OBJ, dates as DATE
	sed -e "s/^! $c2 [0-9a-f]\{7\}:/! $c2 OBJ:/" -e "s/[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]/DATE/" out >actual &&
	{ echo "3 commits with profiles of ./app w (collector trace)" &&
	  sed "s/^/! $c2 OBJ: /" "$TRASH/expect.header" &&
	  cat <<-EOF; } >expect &&
	work: 0 steps over 3 commits
	  commit   date             calls      median         p95  subject
	  $(git rev-parse HEAD | cut -c1-7)  DATE        15.0      995 ns     1.08 us  c3
	! $c2  DATE        15.0     1.02 us     1.09 us  c2
	  $(git rev-parse HEAD~2 | cut -c1-7)  DATE        15.0      989 ns     1.07 us  c1
	EOF
	test_cmp expect actual &&
	"$PERUN" history work --format json >j &&
	python3 - "$(cat ../c2)" <<-\PY
	import json, sys
	h = json.load(open("j"))
	inc = {c["sha"]: c.get("incomplete") for c in h["commits"]}
	assert "work: 40 events lost" in inc.pop(sys.argv[1])
	assert set(inc.values()) == {None}, inc
	PY
'

test_expect_success 'report: a notice, and the loss at its commit' '
	cd repo && "$PERUN" report -o ../site >/dev/null &&
	sed -n "/<p class=\"incomplete\">/p" ../site/index.html >actual &&
	# what the commit lost, each line named by the profile object
	sed -n "/<pre class=\"incomplete\">/,/<\/pre>/p" ../site/index.html |
		sed -e "s/.*<pre class=\"incomplete\">//" -e "s/^[0-9a-f]\{7\}:/OBJ:/" >>actual &&
	cat >expect <<-EOF &&
	<p class="incomplete">1 commit with incomplete profiles (events lost or probes not attached): their numbers miss those calls; what each lost is under Commits.</p>
	OBJ: incomplete profile: 46 events lost (46 in the recorder&#39;s full buffer), 1 of 4 probe points not attached; the calls and times shown miss what was lost
	OBJ:   work: 40 events lost
	OBJ:   main: 6 events lost
	OBJ:   not attached: helper (/bin/app): its entry probe was not attached
	</pre></td></tr>
	EOF
	test_cmp expect actual
'

test_done
