#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# history on a loaded nightly: the per-run levels of t7023's 10 commits (hot
# +28 % at c4, twice that at c7; a, b, c and d unchanged), 3 runs each, as a
# CPU hog through part of the matrix left them.  A run at full speed has its
# five loops alike; a run at half speed (the hog on the sibling
# hyperthread) slows them apart by where their code lies: a and c about
# 0.72 of the run's typical, b, d and hot about 1.27, so that hot reads
# 1.3x its level there.  Most runs are of that kind.  history names c4 and
# c7 for hot and nothing for the others (and the report lists them): each run weighs by how well its
# own functions agree (analysis/runscale.h), so the runs at full speed set
# the points where there are some.  Without the weights it named c7 only.
# Profiles come from the parser alone (no tracing).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-history.sh"

# commit and runs: "SUBJECT hot a b c d" per run, in us
runs() {
	cat <<-\EOF
	c1 289 289 289 289 289
	c1 869 455 799 486 816
	c1 843 453 852 404 880
	c2 289 289 289 289 289
	c2 739 416 705 424 693
	c2 835 401 821 402 854
	c3 289 288 289 289 289
	c3 670 474 683 424 723
	c3 734 411 720 410 746
	c4 370 289 289 289 289
	c4 1013 423 742 502 741
	c4 1032 460 806 411 807
	c5 370 288 288 288 288
	c5 942 374 753 481 716
	c5 918 405 636 406 632
	c6 371 289 289 289 289
	c6 1104 486 785 449 811
	c6 375 292 292 292 292
	c7 1997 503 721 466 737
	c7 2103 409 806 494 708
	c7 730 292 291 291 291
	c8 723 289 289 289 289
	c8 1942 402 712 485 836
	c8 2046 404 806 485 798
	c9 1961 383 771 463 668
	c9 2285 487 866 498 848
	c9 749 299 299 298 299
	c10 1979 490 706 459 793
	c10 2070 416 787 423 699
	c10 2075 464 732 505 765
	EOF
}

test_expect_success '10 commits of 3 runs each, most at half speed, hot +28% at c4 and x2 at c7' '
	hist_plan /t/app hot a b c d &&
	mkdir repo && cd repo && git init -q &&
	git config user.email t@example.com && git config user.name Tester &&
	"$PERUN" init >/dev/null &&
	seed=0 && last= &&
	runs >../runs &&
	while read s h a b c d; do
		if [ "$s" != "$last" ]; then commit "$s" || exit 1; last=$s; fi
		seed=$((seed + 1)) &&
		hist_prof $seed 0.002 w vm ${h}000 ${a}000 ${b}000 ${c}000 ${d}000 || exit 1
	done <../runs &&
	test "$(git rev-list --count HEAD)" = 10
'

test_expect_success 'history names c4 and c7 for hot, and nothing for a, b, c, d' '
	cd repo &&
	"$PERUN" history hot >out 2>err && cat out &&
	test "$(grep -c "^  step at " out)" = 2 &&
	grep "^  step at $(git rev-parse --short=7 HEAD~6) .*(+2[0-9]\.[0-9]%)  c4$" out &&
	grep "^  step at $(git rev-parse --short=7 HEAD~3) .*(+[89][0-9]\.[0-9]%)  c7$" out &&
	for f in a b c d; do
		"$PERUN" history $f >out.$f 2>&1 &&
		grep "^$f: 0 steps over 10 commits$" out.$f || { cat out.$f; exit 1; }
	done
'

test_expect_success 'json says how many runs weighed less; the report lists c4 and c7' '
	cd repo &&
	"$PERUN" history hot --format json >j &&
	"$PERUN" report -o site >/dev/null &&
	python3 - j site/index.json "$(git rev-parse HEAD~6)" "$(git rev-parse HEAD~3)" <<-\PY
	import json, sys
	site = json.load(open(sys.argv[2]))
	got = {(x["function"], x["commit"]) for x in site["regressions"]
	       if x["of"] == "median" and x["function"] != "main"}
	assert got == {("hot", sys.argv[3]), ("hot", sys.argv[4])}, got
	j = json.load(open(sys.argv[1]))
	assert j["control"] == 6, j["control"]  # main, hot, a, b, c, d
	assert 10 <= j["runs_weighed"] <= 30, j["runs_weighed"]
	s = j["series"][0]
	assert len(s["normalised_noise"]) == 10
	PY
'

test_done
