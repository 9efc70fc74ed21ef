#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The store end to end in a temporary git repository: init, collect (real
# trace), add, status, log, show, rm; revision expressions; bad input.  An
# independent reader in Python's standard library (struct, zlib, hashlib)
# parses what perun wrote: proof of the byte layout of seeds/000.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'init refuses a directory outside git, --init-vcs makes one' '
	mkdir nogit && cd nogit && GIT_CEILING_DIRECTORIES="$TRASH" && export GIT_CEILING_DIRECTORIES &&
	test_expect_code 1 "$PERUN" init 2>err &&
	cat >expect <<-EOF &&
	perun: $TRASH/nogit is not in a git work tree: run ${SQ}git init${SQ} or ${SQ}perun init --init-vcs${SQ}
	EOF
	test_cmp expect err &&
	"$PERUN" init --init-vcs &&
	test -d .git && test -d .perun/objects && test -d .perun/jobs &&
	test -d .perun/logs && test -d .perun/stats &&
	python3 - .perun/local.yml "$(pwd)" <<-\PY &&
	import sys
	text = open(sys.argv[1]).read()
	# libyaml output: a block mapping with vcs.type, vcs.url and empty job lists
	assert "vcs:\n  type: git\n  url: " + sys.argv[2] in text, text
	for k in ("cmds", "args", "workloads", "collectors", "postprocessors"):
	    assert "\n%s: []" % k in text, (k, text)
	PY
	"$PERUN" init &&
	printf "vcs:\n  type: svn\n" >.perun/local.yml &&
	test_expect_code 1 "$PERUN" status 2>err &&
	printf "vcs: [unclosed\n" >.perun/local.yml &&
	test_expect_code 1 "$PERUN" status 2>>err &&
	cat >expect <<-EOF &&
	perun: $TRASH/nogit/.perun/local.yml: vcs type ${SQ}svn${SQ} is not supported (git is)
	perun: $TRASH/nogit/.perun/local.yml:2: did not find expected ${SQ},${SQ} or ${SQ}]${SQ}
	EOF
	test_cmp expect err
'

test_expect_success 'a repository with two commits' '
	mkdir repo && cd repo &&
	git init -q && git config user.email t@example.com && git config user.name Tester &&
	echo one >f && git add f && git commit -q -m "first commit" &&
	"$PERUN" init >/dev/null
'

test_expect_success 'init leaves the tree clean: .perun/ is excluded in this clone' '
	cd repo &&
	git status --porcelain --untracked-files=all >../status &&
	! test -s ../status &&
	"$PERUN" init >/dev/null &&
	grep -c "^/\.perun/$" .git/info/exclude >../n &&
	echo 1 >../expect && test_cmp ../expect ../n
'

test_expect_success 'collect into jobs, add, and the jobs file is gone' '
	cd repo &&
	"$PERUN" collect -c ../counts trace -q -s custom -f fib -f work &&
	test "$(ls .perun/jobs | wc -l)" = 1 &&
	"$PERUN" status >st && cat st && grep "1 pending profile:" st && grep "0@p" st &&
	"$PERUN" add 0@p >out && cat out && grep "registered .* as 0@i" out &&
	test "$(ls .perun/jobs | wc -l)" = 0 &&
	"$PERUN" status >st && grep "1 profile registered for" st && grep "0@i" st
'

test_expect_success 'an independent reader parses the index and the object' '
	cd repo &&
	python3 - "$(git rev-parse HEAD)" <<-\PY
	import hashlib, json, struct, sys, zlib, os
	head = sys.argv[1]
	idx = open(os.path.join(".perun/objects", head[:2], head[2:]), "rb").read()
	assert idx[:4] == b"pidx", idx[:4]
	version, count = struct.unpack("<II", idx[4:12])
	assert version == 1 and count == 1, (version, count)
	assert hashlib.sha1(idx[:-20]).digest() == idx[-20:], "checksum"
	off = 12
	t, = struct.unpack("<I", idx[off:off + 4]); oid = idx[off + 4:off + 24].hex()
	end = idx.index(b"\0", off + 24); path = idx[off + 24:end].decode()
	assert end + 1 == len(idx) - 20 and path.endswith(".perf"), path
	raw = zlib.decompress(open(os.path.join(".perun/objects", oid[:2], oid[2:]), "rb").read())
	assert hashlib.sha1(raw).hexdigest() == oid, "object id"
	header, body = raw.split(b"\0", 1)
	kind, typ, size = header.decode().split(" ")
	assert kind == "profile" and typ == "mixed" and int(size) == len(body), header
	prof = json.loads(body)
	assert prof["origin"] == head, "origin is kept (perun fsck re-indexes by it)"
	counts = prof["trace"]["summary"]
	assert counts["fib"]["count"] == 1983 and counts["work"]["count"] == 300, counts
	print("independent reader ok", oid, path, t)
	PY
'

test_expect_success 'show in every format, by N@i and by name' '
	cd repo &&
	"$PERUN" show 0@i --format json >j && python3 -c "import json; json.load(open(\"j\"))" &&
	"$PERUN" show 0@i --format summary >s && cat s &&
	grep "^fib  *1983 " s && grep "^work  *300 " s &&
	"$PERUN" show 0@i --format folded >f && head f &&
	grep "^fib;fib;fib " f &&
	python3 - f <<-\PY
	import sys
	# every folded line is stack SPACE integer, frames joined by ;
	lines = open(sys.argv[1]).read().splitlines()
	assert lines and all(l.rsplit(" ", 1)[1].isdigit() for l in lines)
	PY
	name=$("$PERUN" status --short | sed -n "s/^ *0@i *//p") &&
	echo "by name: $name" &&
	"$PERUN" show "$name" --format summary >s2 &&
	test_cmp s s2
'

test_expect_success 'a second commit; revision expressions; log' '
	cd repo &&
	echo two >>f && git commit -q -am "second commit" &&
	"$PERUN" collect -c ../counts -o second.perf trace -q -s custom -f first &&
	"$PERUN" add second.perf --keep-profile && test -e second.perf &&
	"$PERUN" log --short >log && cat log &&
	test "$(wc -l <log)" = 2 &&
	grep "1 profile \[mixed\]  second commit" log && grep "1 profile \[mixed\]  first commit" log &&
	"$PERUN" show 0@i -m HEAD~1 --format summary | grep "^fib " &&
	"$PERUN" show 0@i -m "$(git rev-parse --short HEAD~1)" --format summary | grep "^fib " &&
	git tag v1 HEAD~1 && "$PERUN" show 0@i -m v1 --format summary | grep "^work " &&
	"$PERUN" log -n 1 >l1 && grep -c "^minor " l1 | grep -q 1
'

test_expect_success 'bad input: non-JSON, wrong regions, origin mismatch, duplicate' '
	cd repo &&
	echo "not json" >bad.perf &&
	test_expect_code 1 "$PERUN" add bad.perf 2>err &&
	echo "{\"header\": {}}" >bad2.perf &&
	test_expect_code 1 "$PERUN" add bad2.perf 2>>err &&
	"$PERUN" show ./second.perf --format json --expand >second-calls.perf &&
	python3 -c "import json; p=json.load(open(\"second-calls.perf\")); p[\"snapshots\"][0][\"resources\"][0][\"amount\"]=\"x\"; json.dump(p, open(\"bad3.perf\",\"w\"))" &&
	test_expect_code 1 "$PERUN" add bad3.perf -m HEAD 2>>err &&
	test_expect_code 1 "$PERUN" add second.perf -m HEAD~1 2>>err &&
	test_expect_code 1 "$PERUN" add second.perf 2>>err &&
	head=$(git rev-parse --short=7 HEAD) && prev=$(git rev-parse --short=7 HEAD~1) &&
	cat >expect <<-EOF &&
	profile: bad.perf: not a JSON profile: null expected at byte 1
	profile: bad2.perf: header.type is missing
	profile: bad3.perf: snapshots[0].resources[0].amount must be double, not string
	perun: second.perf was collected at $head, not $prev: check that commit out, or give -m $head
	perun: second.perf: the same profile is already registered for $head as 0@i (second.perf)
	EOF
	test_cmp expect err
'

test_expect_success 'flipped bytes in an object and in an index are reported' '
	cd repo &&
	idx=.perun/objects/$(git rev-parse HEAD | cut -c1-2)/$(git rev-parse HEAD | cut -c3-) &&
	cp "$idx" idx.bak &&
	printf "\377" | dd of="$idx" bs=1 seek=14 conv=notrunc 2>/dev/null &&
	test_expect_code 1 "$PERUN" status 2>err &&
	cat >expect <<-EOF &&
	store: $TRASH/repo/$idx: index checksum mismatch (corrupted): run ${SQ}perun fsck --repair${SQ} to re-index its profiles (the damaged file is kept aside)
	EOF
	test_cmp expect err &&
	cp idx.bak "$idx" &&
	oid=$(python3 -c "import sys; d=open(sys.argv[1],\"rb\").read(); print(d[16:36].hex())" "$idx") &&
	obj=.perun/objects/$(echo $oid | cut -c1-2)/$(echo $oid | cut -c3-) &&
	chmod u+w "$obj" && cp "$obj" obj.bak &&
	printf "\377\377" | dd of="$obj" bs=1 seek=20 conv=notrunc 2>/dev/null &&
	test_expect_code 1 "$PERUN" show 0@i 2>err &&
	cat >expect <<-EOF &&
	store: object $oid ($TRASH/repo/$obj): not valid zlib data (corrupted)
	perun: profile 0@i (second.perf, object $(echo $oid | cut -c1-12)) cannot be used: run ${SQ}perun fsck${SQ} to check the store (it names what is damaged and what to restore), or unregister it with ${SQ}perun rm 0@i${SQ}
	EOF
	test_cmp expect err &&
	cp obj.bak "$obj"
'

test_expect_success 'a missing object is reported with the way out' '
	cd repo &&
	idx=.perun/objects/$(git rev-parse HEAD | cut -c1-2)/$(git rev-parse HEAD | cut -c3-) &&
	oid=$(python3 -c "import sys; d=open(sys.argv[1],\"rb\").read(); print(d[16:36].hex())" "$idx") &&
	obj=.perun/objects/$(echo $oid | cut -c1-2)/$(echo $oid | cut -c3-) &&
	mv "$obj" obj.away &&
	test_expect_code 1 "$PERUN" show 0@i 2>err &&
	cat >expect <<-EOF &&
	store: object $oid ($TRASH/repo/$obj): No such file or directory
	perun: profile 0@i (second.perf, object $(echo $oid | cut -c1-12)) cannot be used: run ${SQ}perun fsck${SQ} to check the store (it names what is damaged and what to restore), or unregister it with ${SQ}perun rm 0@i${SQ}
	EOF
	test_cmp expect err &&
	"$PERUN" status >st 2>&1 &&
	sed "s/^\(  Tester <t@example.com>, \).*/\1DATE/" st >actual &&
	head=$(git rev-parse --short=7 HEAD) &&
	cat expect >expect.status &&
	cat >>expect.status <<-EOF &&
	On major version master (minor $head)
	  Tester <t@example.com>, DATE
	  second commit

	0 pending profiles

	1 profile registered for $head:
	  0@i   (corrupted object) second.perf
	EOF
	test_cmp expect.status actual &&
	mv obj.away "$obj" && "$PERUN" show 0@i --format summary >/dev/null
'

test_expect_success 'a read-only store (full disk) fails cleanly and loses nothing' '
	cd repo &&
	"$PERUN" collect -c ../counts trace -q -s custom -f leaf &&
	before=$(find .perun/objects -type f | wc -l) &&
	mount --bind .perun/objects .perun/objects &&
	mount -o remount,ro,bind .perun/objects &&
	rc=0 && { "$PERUN" add 0@p 2>err || rc=$?; } &&
	umount .perun/objects &&
	test $rc = 1 &&
	# the call and the object directory it failed in depend on the object id
	sed "s|^fs: [a-z]* $TRASH/repo/.perun/objects/[^:]*:|fs: CALL OBJECTS/PATH:|" err >actual &&
	echo "fs: CALL OBJECTS/PATH: Read-only file system" >expect &&
	test_cmp expect actual &&
	test "$(ls .perun/jobs | wc -l)" = 1 &&
	test "$(find .perun/objects -type f | wc -l)" = "$before" &&
	! find .perun -name "*.tmp*" | grep . &&
	"$PERUN" add 0@p && test "$(ls .perun/jobs | wc -l)" = 0
'

test_expect_success 'twenty perun add at once lose no entry' '
	cd repo &&
	for i in $(seq 20); do
		python3 -c "import json,sys; p=json.load(open(\"second.perf\")); p[\"header\"][\"workload\"]=sys.argv[1]; json.dump(p, open(\"par%s.perf\" % sys.argv[1],\"w\"))" $i
	done &&
	before=$("$PERUN" status --short | grep -c "@i") &&
	for i in $(seq 20); do "$PERUN" add par$i.perf >/dev/null & done; wait &&
	after=$("$PERUN" status --short | grep -c "@i") &&
	echo "$before -> $after" && test $after = $((before + 20))
'

test_expect_success 'rm removes index entries, objects stay; rm --pending' '
	cd repo &&
	n=$("$PERUN" status --short | grep -c "@i") &&
	objs=$(find .perun/objects -type f | wc -l) &&
	"$PERUN" rm 0@i && test $("$PERUN" status --short | grep -c "@i") = $((n - 1)) &&
	test "$(find .perun/objects -type f | wc -l)" = "$objs" &&
	"$PERUN" collect -c ../counts trace -q -s custom -f first &&
	"$PERUN" rm --pending && test "$(ls .perun/jobs | wc -l)" = 0
'

test_expect_success 'collect -o: a missing directory or a directory as FILE is refused before anything runs' '
	mkdir oout && cd oout && mkdir adir &&
	for o in nodir/out.perf adir adir/; do
		test_expect_code 2 "$PERUN" collect -c ../forever -o $o trace -s custom -f tick -t 5 2>err &&
		cat err && ! grep "perun: tracing" err || exit 1
	done &&
	test_expect_code 2 "$PERUN" collect -c ../forever -o adir trace -s custom -f tick -t 5 2>err &&
	test_expect_code 2 "$PERUN" collect -c ../forever -o nodir/out.perf trace -s custom -f tick -t 5 2>>err &&
	cat >expect <<-\EOF &&
	perun: -o adir is a directory: give a file name, such as -o adir/profile.perf
	perun: -o nodir/out.perf: directory nodir does not exist: create it first (mkdir -p nodir)
	EOF
	test_cmp expect err &&
	test ! -e nodir && test -z "$(ls adir)" && test -z "$(procs_in_trash)"
'

test_expect_success 'collect -o: when FILE cannot be written at the end the profile is kept in a rescue file' '
	mkdir rescue && cd rescue &&
	"$PERUN" collect -c ../forever -o warm.perf trace -q -s custom -f tick -t 1 &&
	mkdir gone &&
	{ "$PERUN" collect -c ../forever -o gone/out.perf trace -q -s custom -f tick -t 6 2>err & } &&
	wait_for_target && rmdir gone &&
	test_expect_code 1 wait $! &&
	cat err &&
	f=$(ls out-rescue-*.perf) &&
	sed "s/out.perf.tmp[A-Za-z0-9]*:/out.perf.tmpXXXXXX:/" err >actual &&
	cat >expect <<-EOF &&
	fs: mkstemp gone/out.perf.tmpXXXXXX: No such file or directory
	perun: cannot write gone/out.perf: writing the profile to ./$f instead
	perun: the profile is in ./$f, not where it was asked for
	EOF
	test_cmp expect actual &&
	n=$(profile_counts "$f" | sed -n "s/^tick //p") && echo "tick $n" && test "$n" -gt 0 &&
	! ls -a | grep -e "\.tmp" -e "\.new-"
'

test_expect_success 'collect never replaces a profile of the same default name' '
	mkdir same && cd same &&
	now=$(date +%s) &&
	for i in $(seq 0 60); do
		echo precious >"forever-trace-$(date -d @$((now + i)) +%Y-%m-%d-%H-%M-%S).perf"
	done &&
	"$PERUN" collect -c ../forever trace -q -s custom -f tick -t 1 &&
	test "$(cat *.perf | grep -c precious)" = 61 &&
	f=$(ls forever-trace-*-2.perf) && echo "$f" &&
	test "$(profile_field "$f" header.cmd)" = ../forever &&
	! ls -a | grep -e "\.tmp" -e "\.new-"
'

test_done
