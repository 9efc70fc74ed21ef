#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun check --method with Perun's methods on profiles generated without
# tracing (tests/data/gen-calls.py): three baseline runs, three runs of the
# same code, three runs where work is three times slower; postprocessby
# regression-analysis fits their models.  Each method finds work's
# degradation (helper unchanged), and none finds one between the two alike
# sides.
. "$SRCDIR/tests/lib.sh"

GEN="$SRCDIR/tests/data/gen-calls.py"

# run_of NAME SEED SLOW: NAME.perf (the calls) and NAME-m.perf (with models)
run_of() {
	python3 "$GEN" raw plan raw "$2" "$3" &&
	"$PERUN" __parse plan raw "$1.perf" >/dev/null &&
	python3 "$GEN" header "$1.perf" ./app input.txt &&
	"$PERUN" postprocessby "$1.perf" regression-analysis -o "$1-m.perf" >/dev/null &&
	rm -f plan raw
}

# check's text output without the numbers' noise of generated runs: the
# change as CHANGE, r_square as R, the times as TIME, the shape of the
# difference of models (which each method finds its own way) as SHAPE, and
# runs of spaces as one
check_shape() {
	sed -e "s/[-+][0-9.]*%/CHANGE/" -e "s/r_square [0-9.e+-]*/r_square R/" \
		-e "s/[0-9][0-9.e+]* [num]*s -> [0-9][0-9.e+]* [num]*s/TIME/" \
		-e "s/ runs  \([a-z]*\)  (\(constant\|linear\|logarithmic\|quadratic\|power\|exponential\))/ runs  \1  (SHAPE)/" -e "s/   */ /g" "$@"
}

BASE=b1-m.perf,b2-m.perf,b3-m.perf
SAME=s1-m.perf,s2-m.perf,s3-m.perf
SLOW=t1-m.perf,t2-m.perf,t3-m.perf

test_expect_success 'nine runs: baseline, the same code, work 3x slower; models fitted' '
	run_of b1 1 1 && run_of b2 2 1 && run_of b3 3 1 &&
	run_of s1 11 1 && run_of s2 12 1 && run_of s3 13 1 &&
	run_of t1 21 3 && run_of t2 22 3 && run_of t3 23 3 &&
	test -s t3-m.perf
'

for m in linear-regression polynomial-regression fast-check; do
	test_expect_success "$m: work degraded 3x, helper not; exit 1" '
		test_expect_code 1 "$PERUN" check $BASE $SLOW --method '$m' >out &&
		check_shape out >actual &&
		cat >expect <<-\EOF &&
		b1-m.perf,... -> t1-m.perf,...: trace ./app input.txt
		 3 runs -> 3 runs; '$m' over the fitted models, per function
		 degradation inclusive CHANGE quadratic -> quadratic r_square R TIME 3/3 runs work (SHAPE)
		 undecided inclusive CHANGE quadratic -> quadratic r_square R TIME 3/3 runs helper (SHAPE) (maybe a degradation: the models differ, by less than the threshold)
		1 degradation, 0 optimizations, 1 undecided
		EOF
		test_cmp expect actual &&
		grep "^  degradation  *inclusive  *+[12][0-9][0-9]\.[0-9]% .* 3/3 runs  work" out
	'
	test_expect_success "$m: the same code twice: no degradation, exit 0" '
		"$PERUN" check $BASE $SAME --method '$m' >out &&
		check_shape out >actual &&
		cat >expect <<-\EOF &&
		b1-m.perf,... -> s1-m.perf,...: trace ./app input.txt
		 3 runs -> 3 runs; '$m' over the fitted models, per function
		 undecided inclusive CHANGE quadratic -> quadratic r_square R TIME 3/3 runs helper (SHAPE) (maybe a degradation: the models differ, by less than the threshold)
		 undecided inclusive CHANGE quadratic -> quadratic r_square R TIME 3/3 runs work (SHAPE) (maybe a degradation: the models differ, by less than the threshold)
		0 degradations, 0 optimizations, 2 undecided
		EOF
		test_cmp expect actual
	'
done

test_expect_success 'local-statistics: call-order models of flat calls fit too poorly (r^2 < 0.15): undecided' '
	"$PERUN" check $BASE $SLOW --method local-statistics >out &&
	check_shape out >actual &&
	cat >expect <<-\EOF &&
	b1-m.perf,... -> t1-m.perf,...: trace ./app input.txt
	 3 runs -> 3 runs; local-statistics over the fitted models, per function
	 undecided inclusive - quadratic -> quadratic r_square R - -> - 3/3 runs helper (the models fit too poorly to compare (r^2 below 0.15))
	 undecided inclusive - quadratic -> quadratic r_square R - -> - 3/3 runs work (the models fit too poorly to compare (r^2 below 0.15))
	0 degradations, 0 optimizations, 2 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'local-statistics on models that fit: a degradation, and none between alike sides' '
	python3 - <<-\PY &&
	import json
	def prof(path, b0, b1):
	    ms = [{"uid": "f", "model": k, "r_square": r2, "method": "full",
	           "x_interval_start": 0, "x_interval_end": 100,
	           "coeffs": [{"name": "b0", "value": b0}, {"name": "b1", "value": b1 if k == "linear" else 0}]}
	          for k, r2 in (("linear", 0.9), ("constant", 0.0))]
	    json.dump({"header": {"type": "mixed", "cmd": "./f", "args": "", "workload": "",
	                          "units": {"mixed(time delta)": "ns"}},
	               "collector_info": {"name": "trace"}, "postprocessors": [],
	               "snapshots": [{"resources": [], "models": ms}]}, open(path, "w"))
	prof("l1.perf", 100, 10)
	prof("l2.perf", 300, 30)
	prof("l3.perf", 101, 10.1)
	PY
	test_expect_code 1 "$PERUN" check l1.perf l2.perf --method local-statistics >actual &&
	cat >expect <<-\EOF &&
	l1.perf -> l2.perf: trace ./f
	  1 run -> 1 run; local-statistics over the fitted models, per function
	  degradation  inclusive  +200.0% linear -> linear           r_square 0.9         600 ns -> 1.8 us       1/1 runs  f  (changed in some intervals)
	1 degradation, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual &&
	"$PERUN" check l1.perf l3.perf --method local-statistics --all >actual &&
	cat >expect <<-\EOF &&
	l1.perf -> l3.perf: trace ./f
	  1 run -> 1 run; local-statistics over the fitted models, per function
	  no-change    inclusive    +1.0% linear -> linear           r_square 0.9         600 ns -> 606 ns       1/1 runs  f
	0 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'exclusive-time-outliers (no models needed): work severe, nothing between alike sides' '
	test_expect_code 1 "$PERUN" check b1.perf,b2.perf,b3.perf t1.perf,t2.perf,t3.perf \
		--method exclusive-time-outliers --all >out &&
	check_shape out >actual &&
	cat >expect <<-\EOF &&
	b1.perf,... -> t1.perf,...: trace ./app input.txt
	 3 runs -> 3 runs; exclusive-time-outliers: total exclusive time of a run, per function
	 degradation self CHANGE TIME 3/3 runs work (severe)
	 no-change self CHANGE TIME 3/3 runs helper
	 no-change self CHANGE TIME 3/3 runs main
	1 degradation, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual &&
	grep "^  degradation  *self  *+19[0-9]\.[0-9]% .* work  (severe)" out &&
	"$PERUN" check b1.perf,b2.perf,b3.perf s1.perf,s2.perf,s3.perf \
		--method exclusive-time-outliers >actual &&
	cat >expect <<-\EOF &&
	b1.perf,... -> s1.perf,...: trace ./app input.txt
	  3 runs -> 3 runs; exclusive-time-outliers: total exclusive time of a run, per function
	0 degradations, 0 optimizations, 0 undecided
	EOF
	test_cmp expect actual
'

test_expect_success 'json and junit carry the forms, the shape and Perun'\''s confidence' '
	set +e
	"$PERUN" check $BASE $SLOW --method fast-check --format json >j
	"$PERUN" check $BASE $SLOW --method fast-check --format junit >x
	set -e
	python3 - <<-\PY
	import json, xml.etree.ElementTree as ET
	r = json.load(open("j"))
	assert r["method"] == "fast-check" and r["threshold"] == 0.25, r
	w = [c for c in r["jobs"][0]["changes"] if c["function"] == "work"][0]
	assert w["change"] == "degradation" and 2.8 < w["ratio"] < 3.2, w
	assert len(w["models"]) == 2 and w["shape"], w
	assert w["confidence"]["kind"] == "r_square", w
	t = ET.parse("x").getroot()
	assert t.get("failures") == "1", t.attrib
	f = t.find(".//testcase[@name=\"work\"]/failure")
	assert "models" in f.get("message") and "threshold 25%" in f.get("message"), f.attrib
	print("ok")
	PY
'

test_expect_success 'a model method on profiles without models says how to fit them' '
	test_expect_code 1 "$PERUN" check b1.perf t1.perf --method fast-check 2>err &&
	echo "perun check: fast-check needs the models of a function on both sides, and no function has them: fit them with ${SQ}perun postprocessby PROFILE regression-analysis${SQ} (or postprocessors in .perun/local.yml)" >expect &&
	test_cmp expect err &&
	test_expect_code 2 "$PERUN" check b1.perf t1.perf --method average-amount-threshold 2>err &&
	head -n 2 err >actual &&
	cat >expect <<-EOF &&
	perun check: unknown method ${SQ}average-amount-threshold${SQ}: runs, mann-whitney, best-model-order-equality, linear-regression, polynomial-regression, fast-check, local-statistics or exclusive-time-outliers
	usage: perun check [BASELINE] [TARGET] [--threshold R] [--confidence C]
	EOF
	test_cmp expect actual
'

test_done
