#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: two static functions of one name (in two objects) are one function
# in the profile, and its summary counts the calls of both, not the last
# one's alone (python3.11d has hundreds of such names).
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixture from two objects' '
	cc -g -O1 -DPART=1 -c -o one.o "$FIXTURES/samename.c" &&
	cc -g -O1 -DPART=2 -c -o two.o "$FIXTURES/samename.c" &&
	cc -o samename one.o two.o &&
	test "$(nm samename | grep -c " t helper$")" = 2
'

test_expect_success 'the summary of helper holds the calls of both copies' '
	"$PERUN" collect -c ./samename -o s.perf trace -s userspace 2>err >out &&
	cat err &&
	grep "samename 54" out &&
	profile_counts s.perf >actual &&
	cat >expect <<-\EOF &&
	helper 8
	main 1
	part_one 1
	EOF
	test_cmp expect actual
'

test_expect_success 'the profile resources agree with the summary' '
	"$PERUN" show s.perf --format json --expand >s.json &&
	python3 - s.json <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	res = p["snapshots"][0]["resources"]
	n = sum(1 for r in res if r["uid"] == "helper")
	assert n == 8, n
	s = p["trace"]["summary"]["helper"]
	assert s["min"] <= s["mean"] <= s["max"], s
	assert sum(s["log2_hist"]) == 8, s
	PY
'

test_done
