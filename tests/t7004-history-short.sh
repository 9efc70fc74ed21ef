#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Steps in a short series, per machine: five commits whose third makes work
# 2.3x slower (medians near 32, 32, 72, 72, 72 us); perun history names the
# step on the median and on the p95, and perun report lists it under
# regressions.  Profiles of another machine stay out of the series (and are
# counted) unless --any-machine.  Profiles come from the parser alone (no
# tracing), with seeded noise.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-history.sh"

# prof SEED WORK_NS [HOST]: registers for HEAD a profile of main calling work
# 15 times, every call within +-3% of its level; HOST sets its machine region.
prof() { hist_prof "$1" 0.03 w "${3:-}" "$2"; }

test_expect_success 'five commits, the third 2.3x slower; a profile from elsewhere at each' '
	hist_plan /t/app work &&
	mkdir repo && cd repo && git init -q &&
	git config user.email t@example.com && git config user.name Tester &&
	"$PERUN" init >/dev/null &&
	commit c1 && prof 1 32300 here && prof 11 60000 there &&
	commit c2 && prof 2 31600 here && prof 12 60000 there &&
	commit c3 && prof 3 71700 here && prof 13 60000 there &&
	commit c4 && prof 4 72300 here && prof 14 60000 there &&
	commit c5 && prof 5 72200 here
'

test_expect_success 'history names the step at c3, on the median and the p95' '
	cd repo &&
	"$PERUN" history work >out 2>err &&
	c3=$(at 2) &&
	history_shape out >actual &&
	cat >expect <<-EOF &&
	5 commits with profiles of ./app w (collector trace)
	work: 1 step over 5 commits
	 step at $c3 T -> T (+PCT) c3
	 p95 step at $c3 T -> T (+PCT) c3
	 commit date calls median p95 subject
	 $(at 0) DATE 15.0 T T c5
	 $(at 1) DATE 15.0 T T c4
	* $c3 DATE 15.0 T T c3
	 $(at 3) DATE 15.0 T T c2
	 $(at 4) DATE 15.0 T T c1
	EOF
	test_cmp expect actual &&
	grep "^  step at $c3 3[12].* us -> 7[12].* us (+12[0-9]\.[0-9]%)  c3" out &&
	echo "perun history: warning: left out 4 profiles from another machine than here (x86_64, 2 x m, 8.0 GiB, Linux 6.1) (--any-machine counts them)" >expect &&
	test_cmp expect err
'

test_expect_success 'history --threshold 0.01 and --format json say the same' '
	cd repo &&
	"$PERUN" history work --threshold 0.01 --format json >j 2>/dev/null &&
	python3 - "$(git rev-parse HEAD~2)" <<-\PY
	import json, sys
	h = json.load(open("j"))
	assert h["machine"].startswith("here ") and h["skipped_other_machine"] == 4, h
	s = h["series"][0]
	assert [st["commit"] for st in s["steps"]] == [sys.argv[1]], s["steps"]
	assert [st["commit"] for st in s["p95_steps"]] == [sys.argv[1]], s["p95_steps"]
	assert 1.2 < s["steps"][0]["rel"] < 1.35, s["steps"]
	PY
'

test_expect_success 'report lists it under regressions' '
	cd repo &&
	"$PERUN" report -o site >out 2>err && cat out err &&
	python3 - "$(git rev-parse HEAD~2)" <<-\PY
	import json, re, sys
	page = open("site/index.html").read()
	# work, and main which calls it, each on the median and the p95
	assert "<h2>Regressions (4)</h2>" in page, re.findall("<h2>Regressions[^<]*</h2>", page)
	idx = json.load(open("site/index.json"))
	rg = idx["regressions"]
	assert sorted((r["function"], r["of"]) for r in rg) == [
	    ("main", "median"), ("main", "p95"), ("work", "median"), ("work", "p95")], rg
	assert all(r["commit"] == sys.argv[1] for r in rg), rg
	PY
'

test_expect_success '--any-machine pools every profile: no clean step then' '
	cd repo &&
	"$PERUN" history work --any-machine --format json >j 2>err &&
	! grep "left out" err &&
	python3 -c "
import json; h = json.load(open(\"j\"))
assert h[\"skipped_other_machine\"] == 0 and h[\"machine\"] == \"\", h
assert len(h[\"commits\"]) == 5 and h[\"commits\"][0][\"profiles\"] == 2, h[\"commits\"]
"
'

test_done
