#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun rm travels: a profile removed on one host leaves tombstones that
# push and fetch carry, so the next fetch removes it on the other host
# instead of bringing it back from there, and fsck lists the tombstones.
# They name the registrations (the tags of the adds) the removal saw: an
# add it did not see, on this host later or on another meanwhile, wins.
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

test_expect_success 'a host that never saw the rm adds it: its add survives the rm' '
	git clone -q -b main remote.git d && cd d &&
	git config user.email d@example.com && git config user.name D && "$PERUN" init >/dev/null &&
	"$PERUN" add -m HEAD ../gone.perf >/dev/null &&
	"$PERUN" push -q && names >../names.d &&
	printf "gone.perf\nkeep.perf\n" >../expect && test_cmp ../expect ../names.d &&
	cd ../a && "$PERUN" fetch -q && names >../names.a && test_cmp ../expect ../names.a
'

test_expect_success 'rm by mistake, add again, push: the other host has it again' '
	cd a && "$PERUN" rm gone.perf >/dev/null && "$PERUN" push -q &&
	(cd ../b && "$PERUN" fetch -q && names >../names.b) &&
	echo keep.perf >../expect && test_cmp ../expect ../names.b &&
	"$PERUN" add -m HEAD ../gone.perf >/dev/null && "$PERUN" push -q &&
	cd ../b && "$PERUN" fetch >actual &&
	echo "fetched $(git --git-dir=../remote.git rev-parse refs/perun/profiles | cut -c1-7) from origin: 0 new objects, 1 new index entry" >expect &&
	test_cmp expect actual &&
	names >../names.b && printf "gone.perf\nkeep.perf\n" >../expect &&
	test_cmp ../expect ../names.b &&
	# and the next push and fetch leave it registered
	"$PERUN" push -q && (cd ../a && "$PERUN" fetch -q && names >../names.a) &&
	"$PERUN" fetch -q && names >../names.b &&
	test_cmp ../expect ../names.a && test_cmp ../expect ../names.b
'

test_expect_success 'rm on one host of a profile the other re-added meanwhile: the re-add survives' '
	(cd a && "$PERUN" rm gone.perf >/dev/null && "$PERUN" add -m HEAD ../gone.perf >/dev/null) &&
	(cd b && "$PERUN" rm gone.perf >/dev/null && "$PERUN" push -q) &&
	(cd a && "$PERUN" push -q && names >../names.a) &&
	(cd b && "$PERUN" fetch -q && names >../names.b) &&
	printf "gone.perf\nkeep.perf\n" >expect &&
	test_cmp expect names.a && test_cmp expect names.b &&
	# three registrations of gone.perf were removed, one lives
	minor=$(cd a && git rev-parse HEAD) &&
	git --git-dir=remote.git show refs/perun/profiles:removed/$minor >removed &&
	git --git-dir=remote.git show refs/perun/profiles:added/$minor >added &&
	test "$(sed -n 1p removed)" = "perun-removed 2" &&
	test "$(sed -n 1p added)" = "perun-added 1" &&
	test "$(sed 1d removed | wc -l)" = 3 && test "$(sed 1d added | wc -l)" = 5 &&
	! grep -v "^[0-9a-f]\{40\} [0-9a-f]\{16\}$" removed added | grep -v ":perun-"
'

test_expect_success 'a plain rm still travels to every host' '
	cd b && "$PERUN" rm gone.perf >/dev/null && "$PERUN" push -q &&
	(cd ../a && "$PERUN" fetch -q && names >../names.a) &&
	(cd ../d && "$PERUN" fetch -q && names >../names.d) &&
	echo keep.perf >../expect && test_cmp ../expect ../names.a && test_cmp ../expect ../names.d
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
	grep -v "^objects/" actual >tags &&
	printf "added/%s\nremoved/%s\n" $(git rev-parse HEAD) $(git rev-parse HEAD) >expect &&
	test_cmp expect tags
'

test_expect_success 'fsck: a damaged tag or tombstone line is a problem, named by its line' '
	cd a && minor=$(git rev-parse HEAD) && cp .perun/added/$minor added.ok &&
	cp .perun/removed/$minor removed.ok &&
	sed "2s/ .*/ 0000000000000000/" added.ok >.perun/added/$minor &&
	sed "3s/ .*/ xyz/" removed.ok >.perun/removed/$minor &&
	test_expect_code 1 "$PERUN" fsck >actual &&
	grep "^damaged" actual >damaged &&
	cat >expect <<-EOF &&
	damaged added tags of $(echo $minor | cut -c1-7) ($(pwd)/.perun/added/$minor): line 2 is not an object id and a tag of 16 hex digits, not zeros
	damaged tombstones of $(echo $minor | cut -c1-7) ($(pwd)/.perun/removed/$minor): line 3 is not an object id, alone or with a tag of 16 hex digits
	EOF
	test_cmp expect damaged &&
	test_expect_code 1 "$PERUN" push -q 2>err && grep "nothing was pushed" err &&
	cp added.ok .perun/added/$minor && cp removed.ok .perun/removed/$minor &&
	"$PERUN" fsck >/dev/null
'

# Data of a perun from before tags: index entries without tags and
# "perun-removed 1" files of ids alone.  Such a tombstone removes what a host
# holds of its ids when the host first sees it; an add after that wins.
test_expect_success 'an old tombstone of an id alone keeps its meaning where first seen; a later add wins' '
	cd a && echo two >f && git commit -q -am two && git push -q origin HEAD:main &&
	minor=$(git rev-parse HEAD) &&
	mkprof ../old.perf old && mkprof ../other.perf other &&
	"$PERUN" add -m HEAD ../old.perf ../other.perf >/dev/null &&
	# written before tags: no added/ file
	rm .perun/added/$minor && "$PERUN" push -q &&
	(cd ../b && git pull -q origin main && "$PERUN" fetch -q && names >../names.b) &&
	printf "old.perf\nother.perf\n" >../expect && test_cmp ../expect ../names.b &&
	"$PERUN" rm old.perf >/dev/null && oid=$(sed -n "2s/ .*//p" .perun/removed/$minor) &&
	printf "perun-removed 1\n%s\n" $oid >.perun/removed/$minor && "$PERUN" push -q &&
	cd ../b && "$PERUN" fetch -q && names >../names.b &&
	echo other.perf >../expect && test_cmp ../expect ../names.b &&
	"$PERUN" add -m HEAD ../old.perf >/dev/null && "$PERUN" push -q &&
	(cd ../a && "$PERUN" fetch -q && names >../names.a) &&
	printf "old.perf\nother.perf\n" >../expect && test_cmp ../expect ../names.a &&
	sed -n 2p .perun/removed/$minor >line && echo $oid >expect && test_cmp expect line
'

# 200,000 ids: the tombstone merge and reads were quadratic (40,000 ids took
# 143 s to fetch, 36 s to fsck); sorted once they take well under a second
test_expect_success 'a remote tombstone file of 200,000 ids: fetch and fsck stay fast' '
	cd a && minor=$(git rev-parse HEAD) &&
	python3 - .perun/removed/$minor <<-\PY &&
	import hashlib, sys
	old = open(sys.argv[1]).read().split("\n")[1:]
	ids = {hashlib.sha1(b"%d" % i).hexdigest() for i in range(200000)} | {x for x in old if x}
	open(sys.argv[1], "w").write("perun-removed 2\n" + "".join(x + "\n" for x in sorted(ids)))
	PY
	"$PERUN" push -q && cd ../b &&
	timeout -s KILL 60 "$PERUN" fetch -q &&
	timeout -s KILL 60 "$PERUN" fsck >actual &&
	grep "tombstones of .*: 200001 entries removed" actual &&
	names >../names.b && printf "old.perf\nother.perf\n" >../expect &&
	test_cmp ../expect ../names.b
'

test_done
