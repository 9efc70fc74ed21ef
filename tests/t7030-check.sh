#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun check, diff and postprocessby on a git repository whose profiles are
# generated without tracing (tests/data/gen-calls.py writes raw streams,
# perun __parse turns them into profiles): commits c1 and c2 have three runs
# each with the same timings up to noise, c2b has no profiles, and c3 makes
# one function (work) three times slower.
. "$SRCDIR/tests/lib.sh"

GEN="$SRCDIR/tests/data/gen-calls.py"

# profile_at SEED SLOW [WORKLOAD]: a profile (one run) registered for HEAD
profile_at() {
	python3 "$GEN" raw plan raw "$1" "$2" &&
	"$PERUN" __parse plan raw prof.perf >/dev/null &&
	python3 "$GEN" header prof.perf ./app "${3:-input.txt}" &&
	"$PERUN" add prof.perf -m HEAD >/dev/null &&
	rm -f plan raw prof.perf
}

# runs_at SEED SLOW: three runs, seeds SEED, SEED+1, SEED+2
runs_at() {
	profile_at "$1" "$2" && profile_at $(($1 + 1)) "$2" && profile_at $(($1 + 2)) "$2"
}

# check's text output without the numbers' noise: each change (+12.3%, with
# its confidence interval when there is one) as CHANGE, each time pair
# (925 ns -> 2.75 us) as TIME, the runs' shift as a whole (the in-run
# control's) as SHIFT and its spread as SD, and runs of spaces as one
check_shape() {
	sed -e "s/[-+][0-9.]*% \(\[[^]]*\]\|-\)/CHANGE/" \
		-e "s/[0-9.]* [num]*s -> [0-9.]* [num]*s/TIME/" -e "s/   */ /g" \
		-e "s/ran [-+][0-9.]*% as a whole/ran SHIFT as a whole/" \
		-e "s/spread of the control [0-9.]*%/spread of the control SD/" "$@"
}
# short REV: the 7-digit commit id check prints
short() { git rev-parse "$1" | cut -c1-7; }

test_expect_success 'a repository: c1, c2 alike, c2b without profiles, c3 with work 3x slower' '
	mkdir repo && cd repo &&
	git init -q && git symbolic-ref HEAD refs/heads/master && git config user.email t@example.com && git config user.name Tester &&
	"$PERUN" init >/dev/null &&
	echo 1 >f && git add f && git commit -q -m c1 && runs_at 1 1 &&
	echo 2 >f && git commit -q -am c2 && runs_at 11 1 &&
	echo 3 >f && git commit -q -am c2b &&
	echo 4 >f && git commit -q -am c3 && runs_at 21 3 &&
	profile_at 4 1 other-input &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $(short HEAD))

	0 pending profiles

	4 profiles registered for $(short HEAD):
	  0@i   prof.perf
	  1@i   prof.perf
	  2@i   prof.perf
	  3@i   prof.perf
	EOF
	test_cmp expect actual
'

test_expect_success 'check at HEAD flags work and its caller, against c2, and exits 1' '
	cd repo &&
	test_expect_code 1 "$PERUN" check >out 2>err &&
	! test -s err &&
	check_shape out >actual &&
	cat >expect <<-EOF &&
	$(short HEAD~2):0@i,... -> $(short HEAD):0@i,...: trace ./app input.txt
	 3 runs -> 3 runs; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	 decided by the in-run control: the speed of each run, from the self times of its 3 functions, taken out (the target runs ran SHIFT as a whole)
	 degradation self CHANGE TIME 3/3 runs main;work
	 degradation inclusive CHANGE TIME 3/3 runs main;work
	 degradation inclusive CHANGE TIME 3/3 runs main (callee main;work)
	3 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'check --format json parses and says the same' '
	cd repo &&
	test_expect_code 1 "$PERUN" check --format json >j &&
	python3 - "$(git rev-parse HEAD~2)" "$(git rev-parse HEAD)" <<-\PY
	import json, sys
	r = json.load(open("j"))
	assert r["baseline"] == sys.argv[1] and r["target"] == sys.argv[2], r
	assert r["degradations"] == 3 and r["optimizations"] == 0, r
	assert r["method"] == "runs" and r["threshold"] == 0.1, r
	assert len(r["jobs"]) == 1, "other-input has no baseline: not paired"
	assert r["unpaired"] == 1, r
	j = r["jobs"][0]
	assert j["workload"] == "input.txt" and j["cmd"] == "./app", j
	assert len(j["baseline_runs"]) == 3 and len(j["target_runs"]) == 3, j
	d = [(c["context"], c["time"]) for c in j["changes"] if c["change"] == "degradation"]
	assert sorted(d) == [("main", "inclusive"), ("main;work", "inclusive"),
	                     ("main;work", "self")], d
	w = [c for c in j["changes"] if c["context"] == "main;work" and c["time"] == "self"][0]
	assert 2.8 < w["ratio"] < 3.2 and w["ci"][0] > 2.5 and w["ci"][1] < 3.5, w
	assert w["p"] < 0.001 and w["effect"] > 5 and w["runs"] == [3, 3], w
	assert w["calls"] == [200, 200] and 900 < w["baseline"] < 1100, w
	h = [c for c in j["changes"] if c["context"] == "main;helper" and c["time"] == "self"][0]
	assert h["change"] == "no-change" and 0.9 < h["ratio"] < 1.1, h
	print("ok", w["ratio"], w["ci"])
	PY
'

test_expect_success 'check of two alike versions: no degradation, exit 0' '
	cd repo &&
	"$PERUN" check HEAD~3 HEAD~2 >out &&
	check_shape out >actual &&
	cat >expect <<-EOF &&
	$(short HEAD~3):0@i,... -> $(short HEAD~2):0@i,...: trace ./app input.txt
	 3 runs -> 3 runs; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	 decided by the in-run control: the speed of each run, from the self times of its 3 functions, taken out (the target runs ran SHIFT as a whole)
	0 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual &&
	"$PERUN" check HEAD~3 HEAD~2 --all >out &&
	check_shape out | sort >actual &&
	sort >expect <<-EOF &&
	$(short HEAD~3):0@i,... -> $(short HEAD~2):0@i,...: trace ./app input.txt
	 3 runs -> 3 runs; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	 decided by the in-run control: the speed of each run, from the self times of its 3 functions, taken out (the target runs ran SHIFT as a whole)
	 no-change self CHANGE TIME 3/3 runs main;helper
	 no-change inclusive CHANGE TIME 3/3 runs main;helper
	 no-change inclusive CHANGE TIME 3/3 runs main
	 no-change self CHANGE TIME 3/3 runs main;work
	 no-change inclusive CHANGE TIME 3/3 runs main;work
	 no-change self CHANGE TIME 3/3 runs main
	0 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'check the other way round: optimizations, exit 0' '
	cd repo &&
	"$PERUN" check HEAD HEAD~2 >out &&
	check_shape out >actual &&
	cat >expect <<-EOF &&
	$(short HEAD):0@i,... -> $(short HEAD~2):0@i,...: trace ./app input.txt
	 3 runs -> 3 runs; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	 decided by the in-run control: the speed of each run, from the self times of its 3 functions, taken out (the target runs ran SHIFT as a whole)
	 optimization self CHANGE TIME 3/3 runs main;work
	 optimization inclusive CHANGE TIME 3/3 runs main;work
	 optimization inclusive CHANGE TIME 3/3 runs main
	0 degradations, 3 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'check of two files: one run a side decides by the in-run control; --threshold' '
	cd repo &&
	"$PERUN" show 0@i -m HEAD~2 --format json >base.perf &&
	"$PERUN" show 0@i --format json >target.perf &&
	test_expect_code 1 "$PERUN" check base.perf target.perf >out &&
	check_shape out >actual &&
	cat >expect <<-\EOF &&
	base.perf -> target.perf: trace ./app input.txt
	 1 run -> 1 run; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	 decided by the in-run control: the speed of each run, from the self times of its 3 functions, taken out (the target runs ran SHIFT as a whole; one run a side, spread of the control SD)
	 degradation self CHANGE TIME 1/1 runs main;work
	 degradation inclusive CHANGE TIME 1/1 runs main;work
	 undecided inclusive CHANGE TIME 1/1 runs main (too few calls in a run for one run a side to tell a change from the host'"'"'s stalls: collect with repeats)
	2 degradations, 0 optimizations, 1 undecided
	EOF
	test_cmp expect actual &&
	"$PERUN" check base.perf target.perf --no-control >out &&
	check_shape out >actual &&
	cat >expect <<-\EOF &&
	base.perf -> target.perf: trace ./app input.txt
	 1 run -> 1 run; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	 decided by the runs alone (--no-control)
	 undecided self CHANGE TIME 1/1 runs main;work (fewer than 2 runs on a side: collect with repeats)
	 undecided inclusive CHANGE TIME 1/1 runs main;work (fewer than 2 runs on a side: collect with repeats)
	 undecided inclusive CHANGE TIME 1/1 runs main (fewer than 2 runs on a side: collect with repeats)
	0 degradations, 0 optimizations, 3 undecided
	EOF
	test_cmp expect actual &&
	grep "^  undecided  *self  *+[0-9.]*% - .* main;work  (fewer" out &&
	"$PERUN" check HEAD~2 HEAD --threshold 2.5 >out &&
	check_shape out >actual &&
	cat >expect <<-EOF &&
	$(short HEAD~2):0@i,... -> $(short HEAD):0@i,...: trace ./app input.txt
	 3 runs -> 3 runs; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	 decided by the in-run control: the speed of each run, from the self times of its 3 functions, taken out (the target runs ran SHIFT as a whole)
	0 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'the per-call and compact forms read alike (profile_each_resource)' '
	cd repo &&
	"$PERUN" show 0@i -m HEAD~2 --format json --expand >base-pc.perf &&
	"$PERUN" show 0@i --format json --expand >target-pc.perf &&
	grep -q "\"calls\":\[" target.perf && ! grep -q "\"calls\":\[" target-pc.perf &&
	test_expect_code 1 "$PERUN" check base.perf target.perf --format json >compact.json &&
	test_expect_code 1 "$PERUN" check base-pc.perf target-pc.perf --format json >pc.json &&
	python3 - <<-\PY &&
	import json
	a, b = json.load(open("compact.json")), json.load(open("pc.json"))
	ca, cb = a["jobs"][0]["changes"], b["jobs"][0]["changes"]
	assert ca == cb and len(ca) == 6, (ca, cb)
	PY
	"$PERUN" diff base.perf target.perf | tail -n +3 >d1 &&
	"$PERUN" diff base-pc.perf target-pc.perf | tail -n +3 >d2 && test_cmp d1 d2
'

test_expect_success 'check reads --aggregate summaries from their histograms, and says so' '
	python3 - <<-\PY &&
	import json
	def prof(path, bucket):
	    res = [{"amount": 100 * 2 ** bucket, "uid": "g", "type": "mixed",
	            "subtype": "time summary", "thread": 1, "count": 100,
	            "min": 2 ** bucket, "max": 2 ** (bucket + 1),
	            "log2_hist": [0] * bucket + [100]}]
	    p = {"header": {"type": "mixed", "units": {"mixed(time delta)": "ns"}, "cmd": "x"},
	         "collector_info": {"name": "trace"}, "postprocessors": [],
	         "snapshots": [{"resources": res}]}
	    json.dump(p, open(path, "w"))
	prof("agg1.perf", 10)
	prof("agg2.perf", 12)
	PY
	"$PERUN" check agg1.perf agg2.perf >actual &&
	cat >expect <<-\EOF &&
	agg1.perf -> agg2.perf: trace x
	  1 run -> 1 run; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	  (call times read from --aggregate log2 histograms: small changes go unseen)
	  decided by the runs alone: histograms carry no in-run control
	  undecided    inclusive  +299.8% -                    1.45 us -> 5.79 us     1/1 runs  g  (fewer than 2 runs on a side: collect with repeats)
	0 degradations, 0 optimizations, 1 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'check --method best-model-order-equality: linear to quadratic degrades' '
	python3 - <<-\PY &&
	import json
	def prof(path, forms):
	    ms = [{"uid": "f", "model": k, "r_square": r2, "method": "full",
	           "coeffs": [{"name": "b0", "value": 1}, {"name": "b1", "value": 1}],
	           "x_interval_start": 0, "x_interval_end": 9} for k, r2 in forms]
	    res = [{"amount": 10, "uid": "f", "type": "mixed", "subtype": "time delta"}]
	    p = {"header": {"type": "mixed", "units": {"mixed(time delta)": "ns"}, "cmd": "x"},
	         "collector_info": {"name": "trace"},
	         "postprocessors": [{"name": "regression_analysis", "params": {}}],
	         "snapshots": [{"resources": res, "models": ms}]}
	    json.dump(p, open(path, "w"))
	prof("m1.perf", [("linear", 0.9), ("quadratic", 0.8)])
	prof("m2.perf", [("linear", 0.7), ("quadratic", 0.95)])
	PY
	test_expect_code 1 "$PERUN" check m1.perf m2.perf --method best-model-order-equality >actual &&
	cat >expect <<-\EOF &&
	m1.perf -> m2.perf: trace x
	  1 run -> 1 run; best-model-order-equality over the fitted models, per function
	  degradation  inclusive linear -> quadratic (r2 0.900 -> 0.950)  f
	1 degradation, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual &&
	"$PERUN" check m2.perf m1.perf --method best-model-order-equality >actual &&
	cat >expect <<-\EOF &&
	m2.perf -> m1.perf: trace x
	  1 run -> 1 run; best-model-order-equality over the fitted models, per function
	  optimization inclusive quadratic -> linear (r2 0.950 -> 0.900)  f
	0 degradations, 1 optimization, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'check: usage and failures' '
	cd repo &&
	set +e
	"$PERUN" check --format xml 2>err; rc1=$?
	"$PERUN" check --threshold -1 2>>err; rc2=$?
	"$PERUN" check a b c 2>>err; rc3=$?
	"$PERUN" check HEAD~1 2>err4; rc4=$?
	"$PERUN" check --method t-test 2>>err; rc5=$?
	set -e
	cat err err4 &&
	test $rc1 = 2 && test $rc2 = 2 && test $rc3 = 2 && test $rc4 = 1 && test $rc5 = 2 &&
	echo "perun check: no run of $(git rev-parse HEAD~1) has the collector, command, arguments and workload (and machine) of one of $(git rev-parse HEAD)" >expect &&
	test_cmp expect err4
'

test_expect_success 'diff: work first, the ratio near 3' '
	cd repo &&
	"$PERUN" diff HEAD~2:0@i 0@i >out && cat out &&
	sed -n 3p out >actual &&
	echo "function  calls A  calls B  median A  median B     p95 A     p95 B  excl A  excl B   ratio" >expect &&
	test_cmp expect actual &&
	sed -n 4p out | grep -E "^work +200 +200 .* (2\.[7-9][0-9]|3\.[0-3][0-9])x$" &&
	sed -n 6p out | grep -E "^helper +200 +200 .* (0\.9[0-9]|1\.0[0-9])x$" &&
	"$PERUN" diff HEAD~2:0@i 0@i --format json >j &&
	python3 -c "
import json; r = json.load(open(\"j\"))
f = r[\"functions\"]
assert f[0][\"function\"] == \"work\" and 2.7 < f[0][\"ratio\"] < 3.3, f[0]
assert abs(sum(x[\"b\"][\"exclusive_share\"] for x in f) - 1) < 1e-9, f
"
'

test_expect_success 'diff --format flamegraph: work red, the rest near white' '
	cd repo &&
	"$PERUN" diff HEAD~2:0@i 0@i --format flamegraph >d.svg &&
	python3 - d.svg <<-\PY
	import re, sys, xml.dom.minidom
	svg = open(sys.argv[1]).read()
	xml.dom.minidom.parseString(svg)  # well-formed
	frames = re.findall(r"<title>([^ <]+) \(.*?</title><rect [^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)", svg)
	col = {}
	for name, r, g, b in frames:
	    col.setdefault(name, []).append((int(r), int(g), int(b)))
	assert "work" in col and "helper" in col, col.keys()
	# the share of work grew: red (blue channel well below red)
	assert all(r == 255 and b < 200 for r, g, b in col["work"]), col["work"]
	# helper kept its time while work tripled: its share shrank (bluish)
	assert all(b == 255 for r, g, b in col["helper"]), col["helper"]
	print(len(frames), "frames")
	PY
'

test_expect_success 'diff: usage' '
	cd repo &&
	test_expect_code 2 "$PERUN" diff 0@i 2>err &&
	test_expect_code 2 "$PERUN" diff 0@i 1@i --format xml 2>>err
'

test_expect_success 'postprocessby regression-analysis: models region and postprocessors as seed 001' '
	cd repo &&
	"$PERUN" postprocessby 0@i regression-analysis >out && cat out &&
	job=$(ls .perun/jobs/*regression-analysis.perf) &&
	python3 - "$job" "$(git rev-parse HEAD)" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	assert p["origin"] == sys.argv[2], "the new profile belongs to the same minor version"
	pp = p["postprocessors"][-1]
	assert pp["name"] == "regression_analysis", pp
	assert pp["params"]["method"] == "full" and pp["params"]["x"] == "call-order", pp
	assert pp["params"]["models"] == ["constant", "linear", "logarithmic", "quadratic",
	                                  "power", "exponential"], pp
	ms = p["snapshots"][0]["models"]
	work = {m["model"]: m for m in ms if m["uid"] == "work"}
	assert sorted(work) == sorted(pp["params"]["models"]), work.keys()
	c = work["constant"]
	assert [x["name"] for x in c["coeffs"]] == ["b0", "b1"] and c["coeffs"][1]["value"] == 0
	assert 2800 < c["coeffs"][0]["value"] < 3200, c
	for m in ms:
	    assert set(m) >= {"uid", "model", "method", "r_square", "coeffs",
	                      "x_interval_start", "x_interval_end"}, m
	assert work["linear"]["x_interval_start"] == 0 and work["linear"]["x_interval_end"] == 199
	assert work["logarithmic"]["x_interval_start"] == 1, "x = 0 left out of ln x"
	print("ok", len(ms), "models")
	PY
	"$PERUN" add 0@p >/dev/null && "$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $(short HEAD))

	0 pending profiles

	5 profiles registered for $(short HEAD):
	  0@i   prof.perf
	  1@i   prof.perf
	  2@i   prof.perf
	  3@i   prof.perf
	  4@i   $(short HEAD)-0-i-regression-analysis.perf
	EOF
	test_cmp expect actual &&
	test_expect_code 1 "$PERUN" check HEAD~2 HEAD >out &&
	check_shape out >actual &&
	cat >expect <<-EOF &&
	$(short HEAD~2):0@i,... -> $(short HEAD):0@i,...: trace ./app input.txt
	 3 runs -> 3 runs; per-call p10 of each run, raw times (a run has no calibration), ratio of geometric means (Welch t), 99% confidence
	 decided by the in-run control: the speed of each run, from the self times of its 3 functions, taken out (the target runs ran SHIFT as a whole)
	 degradation self CHANGE TIME 3/3 runs main;work
	 degradation inclusive CHANGE TIME 3/3 runs main;work
	 degradation inclusive CHANGE TIME 3/3 runs main (callee main;work)
	3 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'postprocessby regressogram and moving-average with -o' '
	cd repo &&
	"$PERUN" postprocessby 0@i regressogram --bins 4 -o rg.perf &&
	"$PERUN" postprocessby rg.perf moving-average --kind smm --window 5 --right-aligned -o ma.perf &&
	python3 - <<-\PY
	import json
	p = json.load(open("ma.perf"))
	names = [x["name"] for x in p["postprocessors"]]
	assert names == ["regressogram", "moving_average"], names
	assert p["postprocessors"][1]["params"] == {"x": "call-order", "kind": "smm",
	        "window": 5, "centered": False}, p["postprocessors"][1]
	ms = p["snapshots"][0]["models"]
	rg = [m for m in ms if m["model"] == "regressogram" and m["uid"] == "work"][0]
	assert rg["bins"] == 4 and len(rg["bucket_stats"]) == 4, rg
	assert all(2800 < v < 3200 for v in rg["bucket_stats"]), rg
	ma = [m for m in ms if m["model"] == "moving_average" and m["uid"] == "helper"][0]
	assert ma["method"] == "smm" and ma["window_width"] == 5 and len(ma["bucket_stats"]) == 200
	PY
'

test_expect_success 'postprocessby: usage and failures' '
	cd repo &&
	set +e
	"$PERUN" postprocessby 0@i 2>err; rc1=$?
	"$PERUN" postprocessby 0@i kernel-regression 2>>err; rc2=$?
	"$PERUN" postprocessby 0@i regression-analysis --models cubic 2>>err; rc3=$?
	"$PERUN" postprocessby 0@i regressogram --bins 0 2>>err; rc4=$?
	"$PERUN" postprocessby 0@i regressogram --x nothing -o x.perf 2>err5; rc5=$?
	set -e
	cat err err5 &&
	test $rc1 = 2 && test $rc2 = 2 && test $rc3 = 2 && test $rc4 = 2 && test $rc5 = 1 &&
	# the usage, after which the help follows, then the other three errors
	{ head -n 1 err && tail -n 3 err; } >actual &&
	cat >expect <<-EOF &&
	usage: perun postprocessby PROFILE METHOD [options] [-o PATH]
	perun postprocessby: unknown method ${SQ}kernel-regression${SQ}: regression-analysis, regressogram or moving-average
	perun postprocessby: unknown model ${SQ}cubic${SQ}: constant, linear, logarithmic, quadratic, power or exponential
	perun postprocessby: --bins wants a number from 1 to 1000000, not ${SQ}0${SQ}
	EOF
	test_cmp expect actual &&
	echo "postprocess: $(short HEAD):0@i: no call has a numeric ${SQ}nothing${SQ} to fit against: name another field (perun show PROFILE --format json shows the resources)" >expect &&
	test_cmp expect err5 &&
	! test -e x.perf
'

test_done
