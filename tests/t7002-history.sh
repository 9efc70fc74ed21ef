#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun history: per-function series (median, p95, calls) over the
# first-parent history, and asv's step detection naming the commit where a
# planted 3x slowdown starts; a steady function shows no step; a merged
# branch's own commits and profiles of another workload stay out.  Profiles
# come from the parser alone (no tracing), with seeded noise.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-history.sh"

# prof SEED WORK_NS [WORKLOAD]: registers for HEAD a profile of main calling
# work and steady (500 ns) 15 times each, every call within +-10% of its level.
prof() { hist_prof "$1" 0.1 "${3:-w}" "" "$2" 500; }

test_expect_success 'a repository: 12 first-parent commits, work 3x slower from c7' '
	hist_plan /bin/app work steady &&
	mkdir repo && cd repo && git init -q -b main && git config user.email t@example.com &&
	git config user.name T && "$PERUN" init >/dev/null &&
	for i in 1 2 3 4 5 6; do commit c$i && prof $i 1000; done &&
	prof 100 1000 && prof 101 90000 other &&
	commit c7 && prof 7 3000 && git rev-parse HEAD >../c7 &&
	git checkout -q -b side && echo s1 >g && git add g && git commit -q -m s1 && prof 50 100000 && git rev-parse HEAD >../s1 &&
	git checkout -q main && commit c8 && prof 8 3000 &&
	git merge -q --no-ff -m "c9 merge side" side && prof 9 3000 &&
	for i in 10 11 12; do commit c$i && prof $i 3000; done &&
	commit "c13 no profile" &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version main (minor $(at 0))

	0 pending profiles

	0 profiles registered for $(at 0)
	EOF
	test_cmp expect actual
'

test_expect_success 'history of work names c7 as the start of a +200% step' '
	cd repo &&
	"$PERUN" history work >out &&
	c7=$(cut -c1-7 ../c7) && test $c7 = $(at 6) &&
	history_shape out >actual &&
	cat >expect <<-EOF &&
	12 commits with profiles of ./app w (collector trace)
	work: 1 step over 12 commits
	 step at $c7 T -> T (+PCT) c7
	 p95 step at $c7 T -> T (+PCT) c7
	 commit date calls median p95 subject
	 $(at 1) DATE 15.0 T T c12
	 $(at 2) DATE 15.0 T T c11
	 $(at 3) DATE 15.0 T T c10
	 $(at 4) DATE 15.0 T T c9 merge side
	 $(at 5) DATE 15.0 T T c8
	* $c7 DATE 15.0 T T c7
	 $(at 7) DATE 15.0 T T c6
	 $(at 8) DATE 15.0 T T c5
	 $(at 9) DATE 15.0 T T c4
	 $(at 10) DATE 15.0 T T c3
	 $(at 11) DATE 15.0 T T c2
	 $(at 12) DATE 15.0 T T c1
	EOF
	test_cmp expect actual &&
	grep "^  step at $c7 .* -> .* (+[12][0-9][0-9]\.[0-9]%)  c7$" out
'

test_expect_success 'the steady function has no step; --all lists every function' '
	cd repo &&
	"$PERUN" history --all >out &&
	history_shape out >actual &&
	cat >expect <<-EOF &&
	12 commits with profiles of ./app w (collector trace)
	main: 1 step over 12 commits
	 step at $(at 6) T -> T (+PCT) c7
	 p95 step at $(at 6) T -> T (+PCT) c7
	steady: 0 steps over 12 commits
	work: 1 step over 12 commits
	 step at $(at 6) T -> T (+PCT) c7
	 p95 step at $(at 6) T -> T (+PCT) c7
	EOF
	test_cmp expect actual
'

test_expect_success 'json: the series, pooled profiles, and the step commit' '
	cd repo &&
	"$PERUN" history work --format json >j &&
	python3 - "$(cat ../c7)" <<-\PY
	import json, sys
	h = json.load(open("j"))
	assert h["workload"] == "w" and h["cmd"] == "./app", h
	shas = [c["sha"] for c in h["commits"]]
	assert len(shas) == 12 and shas[6] == sys.argv[1], shas
	assert [c["profiles"] for c in h["commits"]][5] == 2, "c6 pools its two profiles"
	(s,) = h["series"]
	assert s["function"] == "work" and s["calls"] == [15.0] * 12, s["calls"]
	assert all(900 <= m <= 1100 for m in s["median"][:6]), s["median"]
	assert all(2700 <= m <= 3300 for m in s["median"][6:]), s["median"]
	assert all(p >= m for p, m in zip(s["p95"], s["median"]))
	(st,) = s["steps"]
	assert st["commit"] == sys.argv[1] and st["index"] == 6 and 1.7 < st["rel"] < 2.3, st
	print("ok")
	PY
'

test_expect_success '-n limits the walk; a filter picks another series' '
	cd repo &&
	"$PERUN" history work -n 4 >out &&
	history_shape out >actual &&
	cat >expect <<-EOF &&
	3 commits with profiles of ./app w (collector trace)
	work: 0 steps over 3 commits
	 commit date calls median p95 subject
	 $(at 1) DATE 15.0 T T c12
	 $(at 2) DATE 15.0 T T c11
	 $(at 3) DATE 15.0 T T c10
	EOF
	test_cmp expect actual &&
	"$PERUN" history work --workload other >out &&
	history_shape out >actual &&
	cat >expect <<-EOF &&
	1 commit with profiles of ./app other (collector trace)
	work: 0 steps over 1 commit
	 commit date calls median p95 subject
	 $(at 7) DATE 15.0 T T c6
	EOF
	test_cmp expect actual
'

test_expect_success 'errors: no such function, no profiles, usage' '
	cd repo &&
	! "$PERUN" history nosuch 2>err &&
	echo "perun history: no profile in this history has calls of ${SQ}nosuch${SQ}: see ${SQ}perun history --all${SQ}" >expect &&
	test_cmp expect err &&
	! "$PERUN" history work --workload none 2>err &&
	echo "perun history: no commit among the last 100 first parents of HEAD has matching profiles: register some with ${SQ}perun add${SQ}" >expect &&
	test_cmp expect err &&
	test_expect_code 2 "$PERUN" history 2>err &&
	test_expect_code 2 "$PERUN" history work --all 2>/dev/null &&
	"$PERUN" history --help | grep "usage: perun history"
'

test_done
