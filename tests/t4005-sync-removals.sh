#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun rm travels: a profile removed on one host leaves a tombstone that
# push and fetch carry, so the next fetch removes it on the other host
# instead of bringing it back from there, and fsck lists the tombstones.
# No tracing: profiles come from the parser.
. "$SRCDIR/tests/lib.sh"
GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# mkprof FILE WORKLOAD
mkprof() {
	printf "s 3e8 0 100\nr\n0 1 200\n2 1 300\n3 1 400\n1 1 500\nq\n" >"$TRASH/raw" &&
	"$PERUN" __parse "$TRASH/plan" "$TRASH/raw" "$1.tmp" >/dev/null &&
	python3 - "$1.tmp" "$1" "$2" <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload=sys.argv[3])
	json.dump(p, open(sys.argv[2], "w"))
	PY
	rm "$1.tmp"
}

names() { "$PERUN" status --short | sed -n "s/^  [0-9]*@i   //p" | sort; }

test_expect_success 'two hosts share two profiles through a bare remote' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	git init -q --bare remote.git &&
	git init -q a && cd a && git config user.email a@example.com && git config user.name A &&
	echo one >f && git add f && git commit -q -m one &&
	git remote add origin ../remote.git && git push -q origin HEAD:refs/heads/main &&
	"$PERUN" init >/dev/null &&
	mkprof ../keep.perf keep && mkprof ../gone.perf gone &&
	"$PERUN" add -m HEAD ../keep.perf ../gone.perf >/dev/null && "$PERUN" push -q && cd .. &&
	git clone -q -b main remote.git b && cd b &&
	git config user.email b@example.com && git config user.name B &&
	"$PERUN" init >/dev/null && "$PERUN" fetch -q && names >../names.b && cd .. &&
	printf "gone.perf\nkeep.perf\n" >expect && test_cmp expect names.b
'

test_expect_success 'rm on one host, push: the other host.s fetch removes it too' '
	cd a && "$PERUN" rm gone.perf >out && cat out && "$PERUN" push -q &&
	cd ../b && "$PERUN" fetch >actual &&
	echo "fetched $(git --git-dir=../remote.git rev-parse refs/perun/profiles | cut -c1-7) from origin: 0 new objects, 0 new index entries, 1 entry removed (perun rm on another host)" >expect &&
	test_cmp expect actual &&
	names >../names.b && echo keep.perf >../expect && test_cmp ../expect ../names.b
'

test_expect_success 'a host that holds it and never saw the rm: its push does not bring it back' '
	git clone -q -b main remote.git d && cd d &&
	git config user.email d@example.com && git config user.name D && "$PERUN" init >/dev/null &&
	"$PERUN" add -m HEAD ../gone.perf >/dev/null && names >../names.d &&
	echo gone.perf >../expect && test_cmp ../expect ../names.d &&
	"$PERUN" push -q && names >../names.d &&
	echo keep.perf >../expect && test_cmp ../expect ../names.d &&
	cd ../a && "$PERUN" fetch -q && names >../names.a && test_cmp ../expect ../names.a
'

test_expect_success 'fsck lists the tombstones on both hosts and finds no problem' '
	cd a && "$PERUN" fsck >actual && short=$(git rev-parse HEAD | cut -c1-7) &&
	# the object of gone.perf, which fsck names first (its id holds the commit time)
	oid=$(sed -n "1s/^object \([0-9a-f]\{12\}\) (of .*/\1/p" actual) && test -n "$oid" &&
	cat >expect <<-EOF &&
	object $oid (of $short) is in no index: unregistered with perun rm; it is kept
	tombstones of $short: 1 entry removed with perun rm (push and fetch remove it on other hosts too): $oid
	checked 2 objects and 1 index in $(pwd)/.perun
	no problems found
	EOF
	test_cmp expect actual &&
	cd ../b && "$PERUN" fsck >actual &&
	sed "s|in .*/a/.perun$|in $(pwd)/.perun|" ../a/expect >expect &&
	test_cmp expect actual &&
	git --git-dir=../remote.git ls-tree -r --name-only refs/perun/profiles >actual &&
	grep "^removed/" actual >removed &&
	echo "removed/$(git rev-parse HEAD)" >expect &&
	test_cmp expect removed
'

# 200,000 ids: the tombstone merge and reads were quadratic (40,000 ids took
# 143 s to fetch, 36 s to fsck); sorted once they take well under a second
test_expect_success 'a remote tombstone file of 200,000 ids: fetch and fsck stay fast' '
	cd a && minor=$(git rev-parse HEAD) &&
	python3 - .perun/removed/$minor <<-\PY &&
	import hashlib, sys
	old = open(sys.argv[1]).read().split("\n")[1:]
	ids = {hashlib.sha1(b"%d" % i).hexdigest() for i in range(200000)} | {x for x in old if x}
	open(sys.argv[1], "w").write("perun-removed 1\n" + "".join(x + "\n" for x in sorted(ids)))
	PY
	"$PERUN" push -q && cd ../b &&
	timeout -s KILL 60 "$PERUN" fetch -q &&
	timeout -s KILL 60 "$PERUN" fsck >actual &&
	grep "tombstones of .*: 200001 entries removed" actual &&
	names >../names.b && echo keep.perf >../expect && test_cmp ../expect ../names.b
'

test_done
