#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Data safety of the store, without tracing: profiles come from the parser
# alone (perun __parse on a two-function stream) with their fields set by
# Python.  add/rm resolve every argument first; a path names exactly that
# file; a bare name must be unambiguous; perun fsck finds and repairs
# damaged indexes and objects and deletes nothing; the smaller cases of
# store (no commit yet, nested work trees, -m HEAD, rm N@p, log -n, plurals).
. "$SRCDIR/tests/lib.sh"

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# mkprof FILE [ORIGIN] [WORKLOAD] [CMD]: a valid profile.
mkprof() {
	python3 - "$TRASH/base.perf" "$@" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	out = sys.argv[2]
	origin = sys.argv[3] if len(sys.argv) > 3 else ""
	p["header"]["workload"] = sys.argv[4] if len(sys.argv) > 4 else ""
	p["header"]["cmd"] = sys.argv[5] if len(sys.argv) > 5 else "./app"
	if origin:
	    p["origin"] = origin
	json.dump(p, open(out, "w"))
	PY
}

# The workload of what "perun show SPEC" shows.
workload_of() {
	"$PERUN" show "$@" --format json | python3 -c "import json,sys; print(json.load(sys.stdin)['header']['workload'])"
}

# The branch is master whatever init.defaultBranch says: status names it.
newrepo() {
	mkdir "$1" && cd "$1" &&
	git init -q && git symbolic-ref HEAD refs/heads/master &&
	git config user.email t@example.com && git config user.name Tester &&
	"$PERUN" init >/dev/null
}

commit() {
	echo "$1" >>f && git add f && git commit -q -m "$1"
}

# abbrev REV|OID N: its first N hex digits, as perun prints them
abbrev() {
	git rev-parse "$1" | cut -c1-"$2"
}

# perun status with the commit date of the minor version as DATE
status_nodate() {
	"$PERUN" status "$@" >status.raw &&
	nodate status.raw
}
nodate() {
	sed "s/^\(  .* <.*>, \)[0-9]*-[0-9]*-[0-9]* [0-9]*:[0-9]*:[0-9]*$/\1DATE/" "$@"
}

# "registered ... (object OID)": the object id hides the origin's commit time
hide_object() {
	sed "s/ (object [0-9a-f]\{12\})$/ (object OID)/" "$@"
}

test_expect_success 'a profile from the parser alone' '
	printf "perun-plan 2\t2\n0\tfunc\t1\t1000\t0\t0\t0\t0\t/bin/app\tmain\t\t\t\t\n1\tfunc\t1\t1010\t0\t0\t0\t0\t/bin/app\twork\t\t\t\t\n" >plan &&
	printf "s 3e8 0 100\nr\n0 1 200\n2 1 300\n3 1 400\n1 1 500\nq\n" >raw &&
	"$PERUN" __parse plan raw parsed.perf >/dev/null &&
	python3 -c "
import json
p = json.load(open(\"parsed.perf\"))
p[\"header\"].update(units={\"mixed(time delta)\": \"ns\"}, cmd=\"./app\", args=\"\", workload=\"\")
json.dump(p, open(\"base.perf\", \"w\"))" &&
	mkprof plain.perf && "$PERUN" show plain.perf --format summary >actual &&
	cat >summary.expect <<-\EOF &&
	function                                      calls          total         mean       median          p95            max   excl%
	main                                              1            768        768.0          768          768            768   66.7%
	work                                              1            256        256.0          256          256            256   33.3%
	2 functions; amounts in ns
	total: outermost calls of a recursion only
	EOF
	test_cmp summary.expect actual
'

test_expect_success 'show: a profile file is shown outside any repository' '
	mkdir outside && cd outside &&
	cp ../base.perf app.perf &&
	"$PERUN" show app.perf --format summary >actual &&
	test_cmp ../summary.expect actual &&
	"$PERUN" show ../base.perf --format folded >actual &&
	cat >expect <<-\EOF &&
	main 512
	main;work 256
	EOF
	test_cmp expect actual &&
	! "$PERUN" show missing.perf 2>err &&
	echo "profile: missing.perf: No such file or directory" >expect &&
	test_cmp expect err &&
	! "$PERUN" show 0@i 2>err &&
	echo "perun: not a perun repository (no .perun here or above): run ${SQ}perun init${SQ}" >expect &&
	test_cmp expect err
'

test_expect_success 'status, show, rm and log before the first commit' '
	newrepo fresh &&
	"$PERUN" status >actual &&
	cat >expect <<-EOF &&
	On major version master: no commits yet (commit once, then ${SQ}perun add${SQ} registers profiles for it)

	0 pending profiles
	EOF
	test_cmp expect actual &&
	mkprof .perun/jobs/a.perf && mkprof .perun/jobs/b.perf "" b &&
	touch -d "2020-01-01 00:00:01" .perun/jobs/a.perf &&
	touch -d "2020-01-01 00:00:02" .perun/jobs/b.perf &&
	"$PERUN" status >actual &&
	cat >expect <<-EOF &&
	On major version master: no commits yet (commit once, then ${SQ}perun add${SQ} registers profiles for it)

	2 pending profiles:
	  0@p   mixed   trace    ./app  2020-01-01 00:00:01  a.perf
	  1@p   mixed   trace    ./app b  2020-01-01 00:00:02  b.perf
	EOF
	test_cmp expect actual &&
	! "$PERUN" add 0@p 2>err &&
	echo "perun: no commits yet: profiles are registered for a commit; commit once, then ${SQ}perun add${SQ} (pending profiles wait in .perun/jobs)" >expect &&
	test_cmp expect err &&
	test "$(workload_of 1@p)" = b &&
	"$PERUN" rm 0@p >actual &&
	echo "removed pending profile a.perf" >expect &&
	test_cmp expect actual &&
	test ! -e .perun/jobs/a.perf && test -e .perun/jobs/b.perf &&
	"$PERUN" status >actual &&
	cat >expect <<-EOF &&
	On major version master: no commits yet (commit once, then ${SQ}perun add${SQ} registers profiles for it)

	1 pending profile:
	  0@p   mixed   trace    ./app b  2020-01-01 00:00:02  b.perf
	EOF
	test_cmp expect actual &&
	"$PERUN" log >actual &&
	echo "no commits yet: nothing to walk" >expect &&
	test_cmp expect actual
'

test_expect_success 'add 0@p 1@p 2@p registers exactly the profiles those numbers named' '
	newrepo adds && commit one && head=$(git rev-parse HEAD) && short=$(abbrev HEAD 7) &&
	for w in w0 w1 w2 w3; do
		mkprof .perun/jobs/$w.perf "$head" $w &&
		touch -d "2020-01-01 00:00:0${w#w}" .perun/jobs/$w.perf || exit 1
	done &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	4 pending profiles:
	  0@p   w0.perf
	  1@p   w1.perf
	  2@p   w2.perf
	  3@p   w3.perf

	0 profiles registered for $short
	EOF
	test_cmp expect actual &&
	"$PERUN" add 0@p 1@p 2@p >out && cat out &&
	test "$(workload_of 0@i)" = w0 && test "$(workload_of 1@i)" = w1 &&
	test "$(workload_of 2@i)" = w2 &&
	test "$(ls .perun/jobs)" = w3.perf &&
	status_nodate >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)
	  Tester <t@example.com>, DATE
	  one

	1 pending profile:
	  0@p   mixed   trace    ./app w3  2020-01-01 00:00:03  w3.perf

	3 profiles registered for $short:
	  0@i   mixed   trace    ./app w0  2020-01-01 00:00:00  w0.perf
	  1@i   mixed   trace    ./app w1  2020-01-01 00:00:01  w1.perf
	  2@i   mixed   trace    ./app w2  2020-01-01 00:00:02  w2.perf
	EOF
	test_cmp expect actual
'

test_expect_success 'rm 1@i 0@i removes both; rm of a file outside .perun/jobs deletes nothing' '
	cd adds && short=$(abbrev HEAD 7) &&
	"$PERUN" rm 1@i 0@i >actual &&
	cat >expect <<-EOF &&
	removed w1.perf from $short
	removed w0.perf from $short
	EOF
	test_cmp expect actual &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	1 pending profile:
	  0@p   w3.perf

	1 profile registered for $short:
	  0@i   w2.perf
	EOF
	test_cmp expect actual && test "$(workload_of 0@i)" = w2 &&
	mkprof here.perf "$(git rev-parse HEAD)" &&
	! "$PERUN" rm ./here.perf 2>err &&
	echo "perun: ./here.perf is not registered for $short and not a pending profile (perun rm deletes no file outside .perun/jobs)" >expect &&
	test_cmp expect err &&
	test -e here.perf &&
	"$PERUN" rm w3.perf >actual &&
	echo "removed pending profile w3.perf" >expect &&
	test_cmp expect actual && test ! -e .perun/jobs/w3.perf
'

test_expect_success 'a path names exactly that file, never another program of the same name' '
	newrepo paths && commit one && head=$(git rev-parse HEAD) &&
	mkdir a b && mkprof a/app.perf "$head" first ./first && mkprof b/app.perf "$head" second ./second &&
	"$PERUN" add a/app.perf --keep-profile >/dev/null &&
	test "$(workload_of b/app.perf)" = second &&
	test "$(workload_of ./a/app.perf)" = first &&
	"$PERUN" add b/app.perf >out && hide_object out >actual &&
	echo "registered app.perf for $(abbrev HEAD 7) as 1@i (object OID)" >expect &&
	test_cmp expect actual &&
	test "$(workload_of 1@i)" = second &&
	! "$PERUN" show nothere/app.perf 2>err &&
	echo "profile: nothere/app.perf: No such file or directory" >expect &&
	test_cmp expect err
'

test_expect_success 'a bare name that names several profiles is refused with the candidates' '
	cd paths &&
	! "$PERUN" show app.perf 2>err &&
	echo "perun: ${SQ}app.perf${SQ} is ambiguous: it names 0@i, 1@i; give one of these" >expect &&
	test_cmp expect err &&
	mkprof .perun/jobs/run-x.perf "$(git rev-parse HEAD)" &&
	mkprof .perun/jobs/run-y.perf "$(git rev-parse HEAD)" &&
	! "$PERUN" show run- 2>err &&
	echo "perun: ${SQ}run-${SQ} matches several pending profiles: 0@p (run-x.perf), 1@p (run-y.perf); give N@p or more of the name" >expect &&
	test_cmp expect err &&
	"$PERUN" show run-y --format summary >/dev/null &&
	mkprof solo.perf "$(git rev-parse HEAD)" only && "$PERUN" add solo.perf --keep-profile >/dev/null &&
	! "$PERUN" show solo.perf 2>err &&
	echo "perun: ${SQ}solo.perf${SQ} is ambiguous: it names 2@i, ./solo.perf; give one of these" >expect &&
	test_cmp expect err &&
	test "$(workload_of ./solo.perf)" = only && test "$(workload_of 2@i)" = only
'

test_expect_success '-m HEAD is explicit: a profile without origin can be added with it' '
	cd paths &&
	mkprof noorigin.perf "" none &&
	! "$PERUN" add noorigin.perf 2>err &&
	echo "perun: noorigin.perf has no origin: collect it inside the repository, or say which minor version it belongs to with -m REV" >expect &&
	test_cmp expect err &&
	"$PERUN" add noorigin.perf -m HEAD >out && hide_object out >actual &&
	echo "registered noorigin.perf for $(abbrev HEAD 7) as 3@i (object OID)" >expect &&
	test_cmp expect actual &&
	"$PERUN" show 3@i -m HEAD --format json >shown.perf &&
	profile_field shown.perf origin >actual &&
	git rev-parse HEAD >expect &&
	test_cmp expect actual
'

test_expect_success 'log -n wants a number; counts say 1 profile, 2 profiles' '
	cd adds && commit two &&
	test_expect_code 2 "$PERUN" log -n abc 2>err &&
	echo "perun log: -n wants a count of minor versions, not ${SQ}abc${SQ}" >expect &&
	sed -n 1p err >actual &&
	test_cmp expect actual &&
	test_expect_code 2 "$PERUN" log -n 2x 2>/dev/null &&
	test_expect_code 2 "$PERUN" log -n 2>/dev/null &&
	"$PERUN" log -n 0 >l0 && ! test -s l0 &&
	"$PERUN" log --short -n 2 >actual &&
	cat >expect <<-EOF &&
	$(abbrev HEAD 7)  0 profiles  two
	$(abbrev HEAD^ 7)  1 profile [mixed]  one
	EOF
	test_cmp expect actual
'

test_expect_success 'a nested git work tree does not use the .perun of the outer one' '
	newrepo outer && commit one && outer=$(pwd) &&
	mkdir inner && cd inner && git init -q && git symbolic-ref HEAD refs/heads/master &&
	git config user.email t@example.com && git config user.name Tester && commit inner &&
	! "$PERUN" status 2>err &&
	echo "perun: not a perun repository: $(pwd) is a git work tree of its own, nested in the one of $outer/.perun: run ${SQ}perun init${SQ} here, or work from the outer tree" >expect &&
	test_cmp expect err &&
	"$PERUN" init >actual &&
	echo "perun repository in $(pwd)/.perun" >expect &&
	test_cmp expect actual &&
	status_nodate >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $(abbrev HEAD 7))
	  Tester <t@example.com>, DATE
	  inner

	0 pending profiles

	0 profiles registered for $(abbrev HEAD 7)
	EOF
	test_cmp expect actual &&
	mkprof .perun/jobs/n.perf "$(git rev-parse HEAD)" && "$PERUN" add 0@p >/dev/null &&
	cd .. && status_nodate >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $(abbrev HEAD 7))
	  Tester <t@example.com>, DATE
	  one

	0 pending profiles

	0 profiles registered for $(abbrev HEAD 7)
	EOF
	test_cmp expect actual
'

# idx_path REV: the index file of a minor version
idx_path() {
	h=$(git rev-parse "$1") && echo ".perun/objects/$(echo $h | cut -c1-2)/$(echo $h | cut -c3-)"
}

# The ids of the objects in .perun/objects, sorted (index files are named by
# commits, not listed)
object_ids() {
	find .perun/objects -type f | sed "s|^\.perun/objects/||; s|/||" |
	grep -vx "$(git rev-parse HEAD)" | sort
}

# obj_path OID: the file of an object
obj_path() {
	echo ".perun/objects/$(echo $1 | cut -c1-2)/$(echo $1 | cut -c3-)"
}

test_expect_success 'fsck: a sound store' '
	newrepo fsck && commit one && head=$(git rev-parse HEAD) &&
	for w in a b c; do mkprof .perun/jobs/$w.perf "$head" $w; done &&
	"$PERUN" add 0@p 1@p 2@p >/dev/null &&
	"$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	checked 3 objects and 1 index in $(pwd)/.perun
	no problems found
	EOF
	test_cmp expect actual
'

test_expect_success 'fsck: a damaged index is reported, and --repair makes its profiles reachable' '
	cd fsck && idx=$(idx_path HEAD) && cp "$idx" ../idx.good &&
	head=$(git rev-parse HEAD) && short=$(abbrev HEAD 7) && perun=$(pwd)/.perun &&
	printf "\377" | dd of="$idx" bs=1 seek=14 conv=notrunc 2>/dev/null &&
	! "$PERUN" status >st 2>err &&
	echo "store: $(pwd)/$idx: index checksum mismatch (corrupted): run ${SQ}perun fsck --repair${SQ} to re-index its profiles (the damaged file is kept aside)" >expect &&
	test_cmp expect err &&
	nodate st >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)
	  Tester <t@example.com>, DATE
	  one

	0 pending profiles

	the index of $short is damaged: ${SQ}perun fsck${SQ} says how, ${SQ}perun fsck --repair${SQ} rebuilds it
	EOF
	test_cmp expect actual &&
	test_expect_code 1 "$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	damaged index $short ($head): checksum mismatch; 3 entries still readable
	checked 3 objects and 1 index in $perun
	1 problem: ${SQ}perun fsck --repair${SQ} moves damaged files to $perun/damaged and rebuilds the indexes (nothing is deleted)
	EOF
	test_cmp expect actual &&
	! cmp -s "$idx" ../idx.good &&
	"$PERUN" fsck --repair >actual &&
	cat >expect <<-EOF &&
	damaged index $short ($head): checksum mismatch; 3 entries still readable
	checked 3 objects and 1 index in $perun
	repaired index $short: 3 entries kept, 0 re-indexed from objects, 0 dropped (their objects are missing or damaged); the old index is in $perun/damaged/index-$head
	repaired: run ${SQ}perun fsck${SQ} again to check
	EOF
	test_cmp expect actual &&
	! cmp -s .perun/damaged/index-$head "$idx" &&
	! cmp -s .perun/damaged/index-$head ../idx.good &&
	"$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	checked 3 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	0 pending profiles

	3 profiles registered for $short:
	  0@i   a.perf
	  1@i   b.perf
	  2@i   c.perf
	EOF
	test_cmp expect actual &&
	test "$(workload_of 2@i)" = c
'

test_expect_success 'fsck --repair: a lost index is rebuilt from the objects, which record their minor' '
	cd fsck && idx=$(idx_path HEAD) && mv "$idx" ../idx.lost &&
	short=$(abbrev HEAD 7) && perun=$(pwd)/.perun &&
	object_ids >oids && test_line_count = 3 oids &&
	o1=$(sed -n 1p oids) && o2=$(sed -n 2p oids) && o3=$(sed -n 3p oids) &&
	test_expect_code 1 "$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	object $(abbrev $o1 12) belongs to $short, whose index is missing
	object $(abbrev $o2 12) belongs to $short, whose index is missing
	object $(abbrev $o3 12) belongs to $short, whose index is missing
	checked 3 objects and 0 indexes in $perun
	3 problems: ${SQ}perun fsck --repair${SQ} moves damaged files to $perun/damaged and rebuilds the indexes (nothing is deleted)
	EOF
	test_cmp expect actual &&
	"$PERUN" fsck --repair >actual &&
	cat >expect <<-EOF &&
	object $(abbrev $o1 12) belongs to $short, whose index is missing
	object $(abbrev $o2 12) belongs to $short, whose index is missing
	object $(abbrev $o3 12) belongs to $short, whose index is missing
	checked 3 objects and 0 indexes in $perun
	repaired index $short: 0 entries kept, 3 re-indexed from objects, 0 dropped (their objects are missing or damaged)
	  app-recovered-$(abbrev $o1 7).perf (object $(abbrev $o1 12)) re-indexed as 0@i
	  app-recovered-$(abbrev $o2 7).perf (object $(abbrev $o2 12)) re-indexed as 1@i
	  app-recovered-$(abbrev $o3 7).perf (object $(abbrev $o3 12)) re-indexed as 2@i
	repaired: run ${SQ}perun fsck${SQ} again to check
	EOF
	test_cmp expect actual &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	0 pending profiles

	3 profiles registered for $short:
	  0@i   app-recovered-$(abbrev $o1 7).perf
	  1@i   app-recovered-$(abbrev $o2 7).perf
	  2@i   app-recovered-$(abbrev $o3 7).perf
	EOF
	test_cmp expect actual &&
	for i in 0 1 2; do workload_of $i@i || exit 1; done >workloads &&
	sort workloads >actual && printf "a\nb\nc\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'fsck --repair: a damaged object is moved aside, its entry dropped, nothing deleted' '
	cd fsck && idx=$(idx_path HEAD) &&
	head=$(git rev-parse HEAD) && short=$(abbrev HEAD 7) && perun=$(pwd)/.perun &&
	object_ids >oids && o2=$(sed -n 2p oids) && o3=$(sed -n 3p oids) &&
	oid=$(python3 -c "import sys; d=open(sys.argv[1],\"rb\").read(); print(d[16:36].hex())" "$idx") &&
	test $oid = $(sed -n 1p oids) &&
	obj=$(obj_path $oid) &&
	chmod u+w "$obj" && cp "$obj" ../obj.before &&
	printf "\377\377" | dd of="$obj" bs=1 seek=20 conv=notrunc 2>/dev/null && cp "$obj" ../obj.damaged &&
	files=$(find .perun/objects .perun/damaged -type f | wc -l) &&
	! "$PERUN" show 0@i 2>err &&
	cat >expect <<-EOF &&
	store: object $oid ($perun/objects/$(echo $oid | cut -c1-2)/$(echo $oid | cut -c3-)): not valid zlib data (corrupted)
	perun: profile 0@i (app-recovered-$(abbrev $oid 7).perf, object $(abbrev $oid 12)) cannot be used: run ${SQ}perun fsck${SQ} to check the store (it names what is damaged and what to restore), or unregister it with ${SQ}perun rm 0@i${SQ}
	EOF
	test_cmp expect err &&
	test_expect_code 1 "$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	damaged object $oid ($(pwd)/$obj): not valid zlib data (corrupted)
	index $short: 0@i (app-recovered-$(abbrev $oid 7).perf) names a damaged object $(abbrev $oid 12)
	checked 3 objects and 1 index in $perun
	2 problems: ${SQ}perun fsck --repair${SQ} moves damaged files to $perun/damaged and rebuilds the indexes (nothing is deleted)
	EOF
	test_cmp expect actual &&
	"$PERUN" fsck --repair >actual &&
	cat >expect <<-EOF &&
	damaged object $oid ($(pwd)/$obj): not valid zlib data (corrupted)
	index $short: 0@i (app-recovered-$(abbrev $oid 7).perf) names a damaged object $(abbrev $oid 12)
	checked 3 objects and 1 index in $perun
	moved damaged object $(abbrev $oid 12) to $perun/damaged/object-$oid
	repaired index $short: 2 entries kept, 0 re-indexed from objects, 1 dropped (their objects are missing or damaged); the old index is in $perun/damaged/index-$head.2
	  0@i (app-recovered-$(abbrev $oid 7).perf) dropped: its object is missing or damaged
	  1@i (app-recovered-$(abbrev $o2 7).perf) is now 0@i
	  2@i (app-recovered-$(abbrev $o3 7).perf) is now 1@i
	repaired: run ${SQ}perun fsck${SQ} again to check
	EOF
	test_cmp expect actual &&
	cmp .perun/damaged/object-$oid ../obj.damaged &&
	test "$(find .perun/objects .perun/damaged -type f | wc -l)" = $((files + 1)) &&
	"$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	checked 2 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	0 pending profiles

	2 profiles registered for $short:
	  0@i   app-recovered-$(abbrev $o2 7).perf
	  1@i   app-recovered-$(abbrev $o3 7).perf
	EOF
	test_cmp expect actual
'

test_expect_success 'fsck: an unregistered object is kept and not re-indexed' '
	cd fsck && short=$(abbrev HEAD 7) && perun=$(pwd)/.perun &&
	object_ids >oids && o2=$(sed -n 1p oids) && o3=$(sed -n 2p oids) &&
	"$PERUN" rm 0@i >/dev/null &&
	"$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	object $(abbrev $o2 12) (of $short) is in no index: unregistered with perun rm; it is kept
	tombstones of $short: 1 entry removed with perun rm (push and fetch remove it on other hosts too): $(abbrev $o2 12)
	checked 2 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual &&
	"$PERUN" fsck --repair >/dev/null &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	0 pending profiles

	1 profile registered for $short:
	  0@i   app-recovered-$(abbrev $o3 7).perf
	EOF
	test_cmp expect actual
'

# fsck reports objects in the order of their ids, and the ids of the objects
# of a commit change with its time: the reports of objects are compared sorted
test_expect_success 'fsck: an object without origin (an older perun) is reported and kept' '
	cd fsck && short=$(abbrev HEAD 7) && perun=$(pwd)/.perun &&
	o2=$(object_ids | sed -n 1p) &&
	oid=$(python3 -c "
import hashlib, json, os, zlib
p = json.load(open(\"../base.perf\"))
body = json.dumps(p, separators=(\",\", \":\")).encode()
raw = b\"profile mixed %d\0\" % len(body) + body
oid = hashlib.sha1(raw).hexdigest()
os.makedirs(\".perun/objects/\" + oid[:2], exist_ok=True)
open(\".perun/objects/%s/%s\" % (oid[:2], oid[2:]), \"wb\").write(zlib.compress(raw))
print(oid)") &&
	"$PERUN" fsck >out && sort out >actual &&
	sort >expect <<-EOF &&
	object $(abbrev $oid 12) is in no index and records no minor version (stored by an older perun): it is kept
	object $(abbrev $o2 12) (of $short) is in no index: unregistered with perun rm; it is kept
	tombstones of $short: 1 entry removed with perun rm (push and fetch remove it on other hosts too): $(abbrev $o2 12)
	checked 3 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual &&
	tail -n 2 out >actual &&
	cat >expect <<-EOF &&
	checked 3 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual &&
	"$PERUN" fsck --repair >/dev/null && test -e $(obj_path $oid) &&
	echo $oid >../older.oid
'

test_expect_success 'fsck: temp files and strange files are reported and left alone; usage' '
	cd fsck && short=$(abbrev HEAD 7) && perun=$(pwd)/.perun &&
	old=$(cat ../older.oid) && o2=$(object_ids | grep -vx $old | sed -n 1p) &&
	mkdir -p .perun/objects/ab && echo x >.perun/objects/ab/notes.txt &&
	echo y >.perun/objects/ab/cdef.tmpXYZ &&
	"$PERUN" fsck >out && sort out >actual &&
	sort >expect <<-EOF &&
	leftover temp file $perun/objects/ab/cdef.tmpXYZ (an interrupted write; safe to remove)
	unknown file $perun/objects/ab/notes.txt left alone (not named by a SHA-1)
	object $(abbrev $old 12) is in no index and records no minor version (stored by an older perun): it is kept
	object $(abbrev $o2 12) (of $short) is in no index: unregistered with perun rm; it is kept
	tombstones of $short: 1 entry removed with perun rm (push and fetch remove it on other hosts too): $(abbrev $o2 12)
	checked 3 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual &&
	tail -n 2 out >actual &&
	cat >expect <<-EOF &&
	checked 3 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual &&
	test -e .perun/objects/ab/notes.txt &&
	test_expect_code 2 "$PERUN" fsck --frob 2>err &&
	cat >expect <<-EOF &&
	perun fsck: unknown option ${SQ}--frob${SQ}
	usage: perun fsck [--repair]
	EOF
	test_cmp expect err
'

test_expect_success 'man pages: perun-rm(1) and perun-fsck(1) exist and name every option' '
	"$PERUN" help | grep "^   fsck " &&
	for c in rm fsck; do
		man="$SRCDIR/man/perun-$c.1" &&
		grep "^\.TH PERUN-$(echo $c | tr a-z A-Z) 1" "$man" &&
		"$PERUN" $c --help | grep "usage: perun $c" &&
		for opt in $("$PERUN" $c --help | grep -o -- "--[a-z][a-z-]*" | sort -u); do
			grep -qF -- "$(printf "%s" "$opt" | sed "s/-/\\\\-/g")" "$man" ||
				{ echo "$opt missing from $man"; exit 1; }
		done || exit 1
	done &&
	grep -F "perun\\-fsck" "$SRCDIR/man/perun.1" && grep -F "perun\\-rm" "$SRCDIR/man/perun.1"
'

test_done
