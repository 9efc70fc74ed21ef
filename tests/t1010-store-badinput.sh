#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Bad profiles and bad names given to every reader: a FIFO never hangs one,
# one validation (src/profile/profile.c profile_validate) refuses the same
# profile in show, add, diff, postprocessby and check with the same message,
# and a whole .perf name names only that file.  No tracing: profiles come
# from the parser (perun __parse).
. "$SRCDIR/tests/lib.sh"
GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# mkprof FILE: main calling work 10 times, as perun collect writes it
mkprof() {
	python3 - <<-\PY >"$TRASH/raw" &&
	print("s 3e8 0 100"); print("r")
	t = 0x100
	print("0 1 %x" % t)
	for i in range(10):
	    t += 10; print("2 1 %x" % t); t += 1000; print("3 1 %x" % t)
	t += 10; print("1 1 %x" % t); print("q")
	PY
	"$PERUN" __parse "$TRASH/plan" "$TRASH/raw" "$1.tmp" >/dev/null &&
	python3 - "$1.tmp" "$1" "$(git rev-parse HEAD 2>/dev/null)" <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload="")
	if sys.argv[3]:
	    p["origin"] = sys.argv[3]
	json.dump(p, open(sys.argv[2], "w"))
	PY
	rm "$1.tmp"
}

# rejected CMD...: exit 1 within 10 s, stderr in err
rejected() {
	set +e
	timeout 10 "$@" >out 2>err
	rc=$?
	set -e
	cat out err
	test $rc = 1
}

test_expect_success 'a repository and a good profile' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	mkdir repo && cd repo &&
	git init -q && git symbolic-ref HEAD refs/heads/master &&
	git config user.email t@example.com && git config user.name Tester &&
	echo one >f && git add f && git commit -q -m first &&
	"$PERUN" init >/dev/null && mkprof ../good.perf &&
	"$PERUN" show ../good.perf >actual &&
	cat >expect <<-\EOF &&
	function                                      calls          total         mean       median          p95            max   excl%
	main                                              1          10110      10110.0        10110        10110          10110    1.1%
	work                                             10          10000       1000.0         1000         1000           1000   98.9%
	2 functions; amounts in ns
	total: outermost calls of a recursion only
	EOF
	test_cmp expect actual
'

test_expect_success 'a FIFO given as a profile is refused at once by show and postprocessby' '
	mkfifo fifo.perf &&
	echo "fs: fifo.perf is a FIFO, not a file: give the path of a regular file" >expect &&
	rejected "$PERUN" show fifo.perf && test_cmp expect err &&
	rejected "$PERUN" postprocessby fifo.perf regressogram && test_cmp expect err &&
	rejected "$PERUN" diff good.perf fifo.perf && test_cmp expect err &&
	rejected "$PERUN" check good.perf fifo.perf && test_cmp expect err &&
	echo "fs: ./fifo.perf is a FIFO, not a file: give the path of a regular file" >expect &&
	rejected "$PERUN" show ./fifo.perf && test_cmp expect err
'

test_expect_success 'bad profiles: negative amounts, calls that are not a list, no snapshot' '
	python3 - good.perf <<-\PY
	import json, sys
	def bad(name, change):
	    p = json.load(open(sys.argv[1]))
	    change(p)
	    json.dump(p, open(name, "w"))
	def neg(p):
	    c = p["snapshots"][0]["calls"][0]
	    c["amount"] = -5 if isinstance(c["amount"], int) else [-5] + c["amount"][1:]
	def negres(p):
	    p["snapshots"][0]["calls"] = []
	    p["snapshots"][0]["resources"] = [{"amount": -7, "uid": "main", "type": "mixed"}]
	def strres(p):
	    p["snapshots"][0]["calls"] = []
	    p["snapshots"][0]["resources"] = [{"amount": 5, "count": "x", "uid": "main", "type": "mixed"}]
	bad("neg.perf", neg)
	bad("negres.perf", negres)
	bad("strres.perf", strres)
	bad("zzz.perf", lambda p: p["snapshots"][0].update(calls="zzz"))
	bad("empty.perf", lambda p: p.update(snapshots=[]))
	PY
'

cat >reasons <<\EOF
neg.perf: snapshots[0].calls[0], call 0: amount -5 and callee 0 must be 0 <= callee <= amount: amounts are never negative
negres.perf: snapshots[0].resources[0].amount is -7: amounts and counts are never negative
strres.perf: snapshots[0].resources[0].count must be a number, not string
zzz.perf: snapshots[0].calls must be array, not string
empty.perf: snapshots is empty: a profile holds at least one snapshot
EOF
mv reasons "$TRASH/reasons"

test_expect_success 'every reader refuses each bad profile with the same reason' '
	while IFS=: read -r f reason; do
		for cmd in "show $f" "show $f --format json" "diff good.perf $f" "diff $f good.perf" \
			"postprocessby $f regressogram" "check good.perf $f" "aggregate --dir agg --release r --shard h $f"; do
			rejected "$PERUN" $cmd || { echo "perun $cmd: not refused"; return 1; }
			printf "profile: %s:%s\n" "$f" "$reason" >expect &&
			test_cmp expect err || { echo "perun $cmd: another reason"; return 1; }
		done
	done <reasons
'

test_expect_success 'add refuses them and registers nothing; status says they are unusable' '
	cd repo &&
	i=0 && : >expect.err &&
	while IFS=: read -r f reason; do
		job=.perun/jobs/app-trace-2026-01-01-00-00-00-${f%.perf}.perf &&
		cp ../$f $job && i=$((i + 1)) && touch -d "2020-01-01 00:00:0$i" $job &&
		rejected "$PERUN" add app-trace-2026-01-01-00-00-00-${f%.perf}.perf &&
		printf "profile: %s:%s\n" "$(pwd)/$job" "$reason" >expect &&
		test_cmp expect err &&
		cat expect >>expect.err || return 1
	done <../reasons &&
	"$PERUN" status --short >actual 2>err &&
	short=$(git rev-parse HEAD | cut -c1-7) &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	5 pending profiles:
	  0@p   (unreadable) app-trace-2026-01-01-00-00-00-neg.perf
	  1@p   (unreadable) app-trace-2026-01-01-00-00-00-negres.perf
	  2@p   (unreadable) app-trace-2026-01-01-00-00-00-strres.perf
	  3@p   (unreadable) app-trace-2026-01-01-00-00-00-zzz.perf
	  4@p   (unreadable) app-trace-2026-01-01-00-00-00-empty.perf

	0 profiles registered for $short
	EOF
	test_cmp expect actual &&
	test_cmp expect.err err &&
	rm .perun/jobs/*
'

test_expect_success 'a whole .perf name names only that file, part of a name only from a part start' '
	cd repo && mkprof ../good2.perf &&
	cp ../good2.perf .perun/jobs/killapp-trace-2026-01-01-00-00-00-7.perf &&
	short=$(git rev-parse HEAD | cut -c1-7) &&
	rejected "$PERUN" show app-trace-2026-01-01-00-00-00-7.perf &&
	echo "perun: profile ${SQ}app-trace-2026-01-01-00-00-00-7.perf${SQ} not found: not N@i/N@p, not registered for $short, not a file, not in .perun/jobs" >expect &&
	test_cmp expect err &&
	rejected "$PERUN" add app-trace &&
	echo "perun: profile ${SQ}app-trace${SQ} not found: not N@i/N@p, not registered for $short, not a file, not in .perun/jobs" >expect &&
	test_cmp expect err &&
	test -f .perun/jobs/killapp-trace-2026-01-01-00-00-00-7.perf &&
	"$PERUN" show killapp-trace-2026-01-01-00-00-00-7.perf >/dev/null &&
	"$PERUN" show killapp >/dev/null && "$PERUN" show trace-2026-01-01 >/dev/null
'

test_done
