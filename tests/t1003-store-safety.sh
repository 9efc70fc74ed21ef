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

newrepo() {
	mkdir "$1" && cd "$1" &&
	git init -q && git config user.email t@example.com && git config user.name Tester &&
	"$PERUN" init >/dev/null
}

commit() {
	echo "$1" >>f && git add f && git commit -q -m "$1"
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
	mkprof plain.perf && "$PERUN" show plain.perf --format summary | grep "^work "
'

test_expect_success 'show: a profile file is shown outside any repository' '
	mkdir outside && cd outside &&
	cp ../base.perf app.perf &&
	"$PERUN" show app.perf --format summary >s && grep "^main  *1 " s &&
	grep "^2 functions" s &&
	"$PERUN" show ../base.perf --format folded | grep "^main;work " &&
	! "$PERUN" show missing.perf 2>err && grep "missing.perf: No such file" err &&
	! "$PERUN" show 0@i 2>err && grep "not a perun repository" err
'

test_expect_success 'status, show, rm and log before the first commit' '
	newrepo fresh &&
	"$PERUN" status >st && cat st && grep "no commits yet" st && grep "^0 pending profiles$" st &&
	mkprof .perun/jobs/a.perf && mkprof .perun/jobs/b.perf "" b &&
	touch -d "2020-01-01 00:00:01" .perun/jobs/a.perf &&
	"$PERUN" status >st && grep "^2 pending profiles:" st &&
	! "$PERUN" add 0@p 2>err && grep "no commits yet: .*commit once" err &&
	test "$(workload_of 1@p)" = b &&
	"$PERUN" rm 0@p >out && grep "removed pending profile a.perf" out &&
	test ! -e .perun/jobs/a.perf && test -e .perun/jobs/b.perf &&
	"$PERUN" status >st && grep "^1 pending profile:$" st &&
	"$PERUN" log >log && grep "no commits yet" log
'

test_expect_success 'add 0@p 1@p 2@p registers exactly the profiles those numbers named' '
	newrepo adds && commit one && head=$(git rev-parse HEAD) &&
	for w in w0 w1 w2 w3; do
		mkprof .perun/jobs/$w.perf "$head" $w &&
		touch -d "2020-01-01 00:00:0${w#w}" .perun/jobs/$w.perf || exit 1
	done &&
	"$PERUN" status --short | grep "^  3@p   w3.perf" &&
	"$PERUN" add 0@p 1@p 2@p >out && cat out &&
	test "$(workload_of 0@i)" = w0 && test "$(workload_of 1@i)" = w1 &&
	test "$(workload_of 2@i)" = w2 &&
	test "$(ls .perun/jobs)" = w3.perf &&
	"$PERUN" status >st && grep "^3 profiles registered for" st && grep "^1 pending profile:$" st
'

test_expect_success 'rm 1@i 0@i removes both; rm of a file outside .perun/jobs deletes nothing' '
	cd adds &&
	"$PERUN" rm 1@i 0@i >out && cat out &&
	test "$("$PERUN" status --short | grep -c "@i")" = 1 && test "$(workload_of 0@i)" = w2 &&
	mkprof here.perf "$(git rev-parse HEAD)" &&
	! "$PERUN" rm ./here.perf 2>err && cat err && grep "deletes no file outside .perun/jobs" err &&
	test -e here.perf &&
	"$PERUN" rm w3.perf >out && grep "removed pending profile w3.perf" out && test ! -e .perun/jobs/w3.perf
'

test_expect_success 'a path names exactly that file, never another program of the same name' '
	newrepo paths && commit one && head=$(git rev-parse HEAD) &&
	mkdir a b && mkprof a/app.perf "$head" first ./first && mkprof b/app.perf "$head" second ./second &&
	"$PERUN" add a/app.perf --keep-profile >/dev/null &&
	test "$(workload_of b/app.perf)" = second &&
	test "$(workload_of ./a/app.perf)" = first &&
	"$PERUN" add b/app.perf >out && grep "registered app.perf .* as 1@i" out &&
	test "$(workload_of 1@i)" = second &&
	! "$PERUN" show nothere/app.perf 2>err && grep "No such file" err
'

test_expect_success 'a bare name that names several profiles is refused with the candidates' '
	cd paths &&
	! "$PERUN" show app.perf 2>err && cat err && grep "ambiguous: it names 0@i, 1@i" err &&
	mkprof .perun/jobs/run-x.perf "$(git rev-parse HEAD)" &&
	mkprof .perun/jobs/run-y.perf "$(git rev-parse HEAD)" &&
	! "$PERUN" show run- 2>err && cat err && grep "several pending profiles: 0@p (run-x.perf), 1@p (run-y.perf)" err &&
	"$PERUN" show run-y --format summary >/dev/null &&
	mkprof solo.perf "$(git rev-parse HEAD)" only && "$PERUN" add solo.perf --keep-profile >/dev/null &&
	! "$PERUN" show solo.perf 2>err && grep "ambiguous: it names 2@i, ./solo.perf" err &&
	test "$(workload_of ./solo.perf)" = only && test "$(workload_of 2@i)" = only
'

test_expect_success '-m HEAD is explicit: a profile without origin can be added with it' '
	cd paths &&
	mkprof noorigin.perf "" none &&
	! "$PERUN" add noorigin.perf 2>err && grep "has no origin" err &&
	"$PERUN" add noorigin.perf -m HEAD >out && grep "registered noorigin.perf" out &&
	"$PERUN" show 3@i -m HEAD --format json | grep "\"origin\":\"$(git rev-parse HEAD)\""
'

test_expect_success 'log -n wants a number; counts say 1 profile, 2 profiles' '
	cd adds && commit two &&
	set +e; "$PERUN" log -n abc 2>err; rc=$?; set -e; test $rc = 2 && grep "not .abc." err &&
	set +e; "$PERUN" log -n 2x 2>/dev/null; rc=$?; set -e; test $rc = 2 &&
	set +e; "$PERUN" log -n 2>/dev/null; rc=$?; set -e; test $rc = 2 &&
	"$PERUN" log -n 0 >l0 && ! test -s l0 &&
	"$PERUN" log --short -n 2 >log && cat log && test "$(wc -l <log)" = 2 &&
	grep " 0 profiles  two$" log && grep " 1 profile \[mixed\]  one$" log
'

test_expect_success 'a nested git work tree does not use the .perun of the outer one' '
	newrepo outer && commit one &&
	mkdir inner && cd inner && git init -q && git config user.email t@example.com &&
	git config user.name Tester && commit inner &&
	! "$PERUN" status 2>err && cat err && grep "nested in the one of" err && grep "perun init" err &&
	"$PERUN" init >out && grep "$(pwd)/.perun" out &&
	"$PERUN" status >st && grep "minor $(git rev-parse --short=7 HEAD)" st &&
	mkprof .perun/jobs/n.perf "$(git rev-parse HEAD)" && "$PERUN" add 0@p >/dev/null &&
	cd .. && "$PERUN" status >st && grep "minor $(git rev-parse --short=7 HEAD)" st &&
	grep "^0 profiles registered" st
'

# idx_path REV: the index file of a minor version
idx_path() {
	h=$(git rev-parse "$1") && echo ".perun/objects/$(echo $h | cut -c1-2)/$(echo $h | cut -c3-)"
}

test_expect_success 'fsck: a sound store' '
	newrepo fsck && commit one && head=$(git rev-parse HEAD) &&
	for w in a b c; do mkprof .perun/jobs/$w.perf "$head" $w; done &&
	"$PERUN" add 0@p 1@p 2@p >/dev/null &&
	"$PERUN" fsck >out && cat out && grep "checked 3 objects and 1 index" out &&
	grep "no problems found" out
'

test_expect_success 'fsck: a damaged index is reported, and --repair makes its profiles reachable' '
	cd fsck && idx=$(idx_path HEAD) && cp "$idx" ../idx.good &&
	printf "\377" | dd of="$idx" bs=1 seek=14 conv=notrunc 2>/dev/null &&
	! "$PERUN" status >st 2>err && grep "checksum mismatch" err && grep "perun fsck --repair" err &&
	grep "^0 pending profiles" st && grep "index of .* is damaged" st &&
	set +e; "$PERUN" fsck >out; rc=$?; set -e; cat out && test $rc = 1 &&
	grep "damaged index $(git rev-parse --short=7 HEAD)" out && grep "1 problem:" out &&
	! cmp -s "$idx" ../idx.good &&
	"$PERUN" fsck --repair >out && cat out &&
	grep "repaired index .*3 entries kept" out &&
	! cmp -s .perun/damaged/index-$(git rev-parse HEAD) "$idx" &&
	! cmp -s .perun/damaged/index-$(git rev-parse HEAD) ../idx.good &&
	"$PERUN" fsck | grep "no problems found" &&
	"$PERUN" status --short >st && cat st && test "$(grep -c "@i" st)" = 3 &&
	test "$(workload_of 2@i)" = c
'

test_expect_success 'fsck --repair: a lost index is rebuilt from the objects, which record their minor' '
	cd fsck && idx=$(idx_path HEAD) && mv "$idx" ../idx.lost &&
	set +e; "$PERUN" fsck >out; rc=$?; set -e; cat out && test $rc = 1 &&
	test "$(grep -c "whose index is missing" out)" = 3 &&
	"$PERUN" fsck --repair >out && cat out && grep "3 re-indexed from objects" out &&
	"$PERUN" status --short >st && cat st && test "$(grep -c "app-recovered-.*\.perf" st)" = 3 &&
	for i in 0 1 2; do workload_of $i@i; done | sort | tr "\n" " " | grep "^a b c $"
'

test_expect_success 'fsck --repair: a damaged object is moved aside, its entry dropped, nothing deleted' '
	cd fsck && idx=$(idx_path HEAD) &&
	oid=$(python3 -c "import sys; d=open(sys.argv[1],\"rb\").read(); print(d[16:36].hex())" "$idx") &&
	obj=.perun/objects/$(echo $oid | cut -c1-2)/$(echo $oid | cut -c3-) &&
	chmod u+w "$obj" && cp "$obj" ../obj.before &&
	printf "\377\377" | dd of="$obj" bs=1 seek=20 conv=notrunc 2>/dev/null && cp "$obj" ../obj.damaged &&
	files=$(find .perun/objects .perun/damaged -type f | wc -l) &&
	! "$PERUN" show 0@i 2>err && grep "perun fsck" err &&
	set +e; "$PERUN" fsck >out; rc=$?; set -e; cat out && test $rc = 1 &&
	grep "damaged object $oid" out && grep "0@i .* names a damaged object" out &&
	"$PERUN" fsck --repair >out && cat out &&
	grep "moved damaged object" out && grep "2 entries kept, 0 re-indexed from objects, 1 dropped" out &&
	cmp .perun/damaged/object-$oid ../obj.damaged &&
	test "$(find .perun/objects .perun/damaged -type f | wc -l)" = $((files + 1)) &&
	"$PERUN" fsck | grep "no problems found" &&
	test "$("$PERUN" status --short | grep -c "@i")" = 2
'

test_expect_success 'fsck: an unregistered object is kept and not re-indexed' '
	cd fsck && "$PERUN" rm 0@i >/dev/null &&
	"$PERUN" fsck >out && cat out && grep "unregistered with perun rm; it is kept" out &&
	grep "no problems found" out &&
	"$PERUN" fsck --repair >/dev/null && test "$("$PERUN" status --short | grep -c "@i")" = 1
'

test_expect_success 'fsck: an object without origin (an older perun) is reported and kept' '
	cd fsck &&
	oid=$(python3 -c "
import hashlib, json, os, zlib
p = json.load(open(\"../base.perf\"))
body = json.dumps(p, separators=(\",\", \":\")).encode()
raw = b\"profile mixed %d\0\" % len(body) + body
oid = hashlib.sha1(raw).hexdigest()
os.makedirs(\".perun/objects/\" + oid[:2], exist_ok=True)
open(\".perun/objects/%s/%s\" % (oid[:2], oid[2:]), \"wb\").write(zlib.compress(raw))
print(oid)") &&
	"$PERUN" fsck >out && cat out && grep "object $(echo $oid | cut -c1-12) is in no index and records no minor version" out &&
	grep "no problems found" out &&
	"$PERUN" fsck --repair >/dev/null && test -e .perun/objects/$(echo $oid | cut -c1-2)/$(echo $oid | cut -c3-)
'

test_expect_success 'fsck: temp files and strange files are reported and left alone; usage' '
	cd fsck && mkdir -p .perun/objects/ab && echo x >.perun/objects/ab/notes.txt &&
	echo y >.perun/objects/ab/cdef.tmpXYZ &&
	"$PERUN" fsck >out && cat out && grep "unknown file .*notes.txt left alone" out &&
	grep "leftover temp file" out && test -e .perun/objects/ab/notes.txt &&
	set +e; "$PERUN" fsck --frob 2>err; rc=$?; set -e; test $rc = 2 && grep "usage: perun fsck" err
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
