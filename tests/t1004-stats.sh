#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun stats: dynamic statistics computed after collect, stored per minor
# version and named by command, arguments and workload (seeds/003 6.2.2,
# 7.1.2, Table A.3).  The numbers are checked against the profile's own calls,
# read independently in Python; nothing perun did not write is deleted.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'a repository; collect writes stats beside the profile' '
	mkdir repo && cd repo &&
	git init -q && git config user.email t@example.com && git config user.name Tester &&
	echo one >f && git add f && git commit -q -m "first commit" &&
	"$PERUN" init >/dev/null &&
	"$PERUN" collect -c ../counts -o ../c1.perf trace -s custom -f fib -f leaf 2>err &&
	cat err &&
	head=$(git rev-parse HEAD) &&
	ls .perun/stats/$head/ >files && cat files &&
	test "$(wc -l <files)" = 1 && grep "^counts-[0-9a-f]\{16\}\.stats$" files &&
	grep "stats: .perun/stats/$head/counts-" err
'

test_expect_success 'the stats agree with the calls of the profile' '
	cd repo &&
	"$PERUN" show ../c1.perf --format json --expand >../c1.json &&
	python3 - ../c1.json .perun/stats/$(git rev-parse HEAD)/counts-*.stats <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
	assert s["perun-stats"] == 1 and s["cmd"].endswith("counts") and s["collector"] == "trace", s
	def q(v, f):
	    pos = f * (len(v) - 1); lo = int(pos)
	    return v[lo] + (v[lo + 1] - v[lo]) * (pos - lo) if lo + 1 < len(v) else v[lo]
	for fn in ("fib", "leaf"):
	    a = sorted(r["amount"] for r in p["snapshots"][0]["resources"] if r["uid"] == fn)
	    f = s["functions"][fn]
	    assert f["sampled_count"] == f["count"] == len(a) and f["sample"] == 1, f
	    assert f["count"] == {"fib": 1983, "leaf": 300}[fn], f
	    assert f["min"] == a[0] and f["max"] == a[-1] and abs(f["total"] - sum(a)) < 1e-6, f
	    assert abs(f["median"] - q(a, .5)) < 1e-6 and abs(f["Q1"] - q(a, .25)) < 1e-6, f
	    assert abs(f["IQR"] - (q(a, .75) - q(a, .25))) < 1e-6, f
	PY
'

test_expect_success 'sampling: recorded calls, and every call counted by the loader' '
	cd repo &&
	"$PERUN" collect -c ../counts -a x -o ../c2.perf trace -s custom -f fib#10 2>err &&
	cat err &&
	f=$(grep -o "counts-[0-9a-f]*\.stats" err) && test -n "$f" &&
	test "$(ls .perun/stats/*/ | grep -c stats)" = 2 &&
	python3 - .perun/stats/$(git rev-parse HEAD)/$f <<-\PY
	import json, sys
	f = json.load(open(sys.argv[1]))["functions"]["fib"]
	assert f["sample"] == 10, f
	n = f["sampled_count"]
	# fib runs 1983 times in one thread: one in ten recorded, and the
	# loader counted them all (seeds/003 7.1.2 guesses n + (n - 1) * 9
	# where the runtime counts none: stap)
	assert f["count"] == 1983, f
	assert 190 <= n <= 210, f
	PY
'

test_expect_success 'list-versions, list-files, show, --format json' '
	cd repo &&
	"$PERUN" stats list-versions >out && cat out &&
	grep "$(git rev-parse HEAD | cut -c1-12) | 2 files  first commit" out &&
	grep "^1 minor version" out &&
	"$PERUN" stats list-files >out && cat out &&
	test "$(grep -c "| counts-" out)" = 2 && grep "^2 files" out &&
	"$PERUN" stats list-files --format json >out.json &&
	python3 -c "import json,sys; a=json.load(open(\"out.json\")); assert len(a)==2 and all(e[\"perun\"] for e in a), a" &&
	name=$(ls .perun/stats/*/ | grep stats | head -1) &&
	"$PERUN" stats show "$name" >out && cat out && grep "^fib " out
'

test_expect_success 'stats of an older version are found from a newer one' '
	cd repo &&
	old=$(git rev-parse HEAD) &&
	echo two >f && git commit -q -am "second commit" &&
	"$PERUN" stats list-versions >out && grep "$(echo $old | cut -c1-12)" out &&
	"$PERUN" stats list-files -N 1 >out && grep "| counts-" out &&
	"$PERUN" stats list-files -m HEAD~1 -i >out && grep "$(echo $old | cut -c1-12)" out
'

test_expect_success 'compute from a profile: its origin, or the version given' '
	cd repo &&
	"$PERUN" stats compute ../c1.perf >out && cat out &&
	grep ".perun/stats/$(git rev-parse HEAD~1)/counts-" out && test -f "$(cat out)" &&
	"$PERUN" stats compute ../c1.perf -m HEAD >out && cat out &&
	grep ".perun/stats/$(git rev-parse HEAD)/counts-" out && test -f "$(cat out)"
'

test_expect_success 'clean and delete leave what perun did not write' '
	cd repo &&
	head=$(git rev-parse HEAD) &&
	echo mine >.perun/stats/$head/notes.txt &&
	echo "{}" >.perun/stats/$head/fake-0000000000000000.stats &&
	mkdir .perun/stats/custom-dir && mkdir .perun/stats/0000000000000000000000000000000000000000 &&
	"$PERUN" stats clean >out && cat out &&
	grep "not perun.s, left alone: .*notes.txt" out &&
	grep "not perun.s, left alone: .*custom-dir" out &&
	test -d .perun/stats/custom-dir && ! test -d .perun/stats/0000000000000000000000000000000000000000 &&
	"$PERUN" stats delete file fake-0000000000000000.stats >out && cat out &&
	grep "left alone" out && test -f .perun/stats/$head/fake-0000000000000000.stats &&
	"$PERUN" stats delete minor HEAD >out && cat out && grep "deleted 1 stats file" out &&
	test -f .perun/stats/$head/notes.txt &&
	"$PERUN" stats delete all >out && cat out && grep "deleted 2 stats files" out &&
	test -d .perun/stats/custom-dir && test -f .perun/stats/$head/notes.txt &&
	"$PERUN" stats list-files >out && cat out && ! grep "| counts-" out
'

test_expect_success 'a stats directory that is a symlink is refused' '
	cd repo &&
	mv .perun/stats .perun/stats.real && mkdir elsewhere && ln -s "$(pwd)/elsewhere" .perun/stats &&
	! "$PERUN" stats list-files 2>err && cat err && grep "stats" err &&
	rm .perun/stats && mv .perun/stats.real .perun/stats
'

test_expect_success 'usage errors exit 2' '
	cd repo &&
	{ "$PERUN" stats 2>/dev/null; test $? = 2; } &&
	{ "$PERUN" stats frobnicate 2>/dev/null; test $? = 2; } &&
	{ "$PERUN" stats delete 2>/dev/null; test $? = 2; } &&
	{ "$PERUN" stats list-files --top=-1 2>/dev/null; test $? = 2; } &&
	"$PERUN" stats --help | grep "list-files"
'

test_done
