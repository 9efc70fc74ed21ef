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
	git init -q && git config user.email t@example.com && git config user.name Tester &&
	echo one >f && git add f && git commit -q -m first &&
	"$PERUN" init >/dev/null && mkprof ../good.perf &&
	"$PERUN" show ../good.perf >out && grep "^work  *10 " out
'

test_expect_success 'a FIFO given as a profile is refused at once by show and postprocessby' '
	mkfifo fifo.perf &&
	rejected "$PERUN" show fifo.perf && grep "fifo.perf is a FIFO, not a file" err &&
	rejected "$PERUN" show ./fifo.perf && grep "fifo.perf is a FIFO, not a file" err &&
	rejected "$PERUN" postprocessby fifo.perf regressogram &&
	grep "fifo.perf is a FIFO, not a file" err &&
	rejected "$PERUN" diff good.perf fifo.perf && grep "fifo.perf is a FIFO, not a file" err &&
	rejected "$PERUN" check good.perf fifo.perf && grep "fifo.perf is a FIFO, not a file" err
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
			grep -F "$f:$reason" err || { echo "perun $cmd: another reason"; return 1; }
		done
	done <reasons
'

test_expect_success 'add refuses them and registers nothing; status says they are unusable' '
	cd repo &&
	while IFS=: read -r f reason; do
		cp ../$f .perun/jobs/app-trace-2026-01-01-00-00-00-${f%.perf}.perf &&
		rejected "$PERUN" add app-trace-2026-01-01-00-00-00-${f%.perf}.perf &&
		grep -F ".perf:$reason" err || return 1
	done <../reasons &&
	"$PERUN" status >st 2>err && cat st err &&
	grep "0 profiles registered" st && test "$(grep -c "(unreadable)" st)" = 5 &&
	rm .perun/jobs/*
'

test_expect_success 'a whole .perf name names only that file, part of a name only from a part start' '
	cd repo && mkprof ../good2.perf &&
	cp ../good2.perf .perun/jobs/killapp-trace-2026-01-01-00-00-00-7.perf &&
	rejected "$PERUN" show app-trace-2026-01-01-00-00-00-7.perf &&
	grep "profile .app-trace-2026-01-01-00-00-00-7.perf. not found" err &&
	rejected "$PERUN" add app-trace &&
	grep "profile .app-trace. not found" err &&
	test -f .perun/jobs/killapp-trace-2026-01-01-00-00-00-7.perf &&
	"$PERUN" show killapp-trace-2026-01-01-00-00-00-7.perf >/dev/null &&
	"$PERUN" show killapp >/dev/null && "$PERUN" show trace-2026-01-01 >/dev/null
'

test_done
