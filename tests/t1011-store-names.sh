#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Names perun prints that someone else wrote: function names in a profile
# (show, diff) and index entry names (status, fsck, a fetch from a remote)
# reach the terminal with their control characters escaped (\xNN); a
# fetched entry name with a '/' or a control character is refused; fsck
# reports a damaged entry name, and --repair says what became of every N@i
# whose number changed.  No tracing: profiles come from the parser.
. "$SRCDIR/tests/lib.sh"
GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES
ESC=$(printf '\033')
BEL=$(printf '\007')

# mkprof FILE WORKLOAD: main calling a function named by a hostile plan
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

# rename_entry INDEX_FILE K NAME: rewrites entry K's name, checksum right
rename_entry() {
	chmod u+w "$1" && python3 - "$@" <<-\PY
	import hashlib, struct, sys
	path, k, name = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode("utf-8", "surrogateescape")
	b = open(path, "rb").read()[:-20]
	n, = struct.unpack("<I", b[8:12])
	off, out = 12, b[:12]
	for i in range(n):
	    end = b.index(b"\0", off + 24)
	    out += b[off:off + 24] + (name if i == k else b[off + 24:end]) + b"\0"
	    off = end + 1
	open(path, "wb").write(out + hashlib.sha1(out).digest())
	PY
}

# no_escape FILE: the file holds no ESC, BEL or other C0 byte but newline
no_escape() {
	! LC_ALL=C grep -q "[$(printf '\001-\011\013-\037\177')]" "$1"
}

test_expect_success 'a profile whose function name holds escape sequences' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\t${ESC}]0;owned${BEL}f${ESC}[2J\t\t\t\n" >plan &&
	mkprof evil.perf w0 && grep -F "\\u001b]0;owned\\u0007f\\u001b[2J" evil.perf
'

test_expect_success 'show and diff print the name with its control characters escaped' '
	"$PERUN" show evil.perf >actual && no_escape actual &&
	cat >expect <<-\EOF &&
	function                                      calls          total         mean       median          p95            max   excl%
	main                                              1            768        768.0          768          768            768   66.7%
	\x1b]0;owned\x07f\x1b[2J                          1            256        256.0          256          256            256   33.3%
	2 functions; amounts in ns
	total: outermost calls of a recursion only
	EOF
	test_cmp expect actual &&
	"$PERUN" diff evil.perf evil.perf >actual && no_escape actual &&
	cat >expect <<-\EOF &&
	A: evil.perf
	B: evil.perf
	function         calls A  calls B  median A  median B     p95 A     p95 B  excl A  excl B   ratio
	\x1b]0;owned\x07f\x1b[2J        1        1     256ns     256ns     256ns     256ns   33.3%   33.3%   1.00x
	main                   1        1     768ns     768ns     768ns     768ns   66.7%   66.7%   1.00x
	EOF
	test_cmp expect actual &&
	"$PERUN" show evil.perf --format json | python3 -c "
import json, sys
p = json.load(sys.stdin)
assert \"\x1b]0;owned\x07f\x1b[2J\" in p[\"chunks\"][\"uids\"], p[\"chunks\"]"
'

# index_of: the index file of HEAD
index_of() {
	echo ".perun/objects/$(git rev-parse HEAD | cut -c1-2)/$(git rev-parse HEAD | cut -c3-)"
}
# the times of the commit and of the profiles, which status prints, as DATE
nodate() {
	sed "s/[0-9]\{4\}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]/DATE/" "$@"
}

test_expect_success 'a bare remote and a repository with three profiles' '
	git init -q --bare remote.git &&
	git init -q a && cd a && git symbolic-ref HEAD refs/heads/master &&
	git config user.email a@example.com && git config user.name A &&
	echo one >f && git add f && git commit -q -m one &&
	git remote add origin ../remote.git && git push -q origin HEAD:refs/heads/main &&
	"$PERUN" init >/dev/null &&
	for w in w0 w1 w2; do mkprof ../$w.perf $w && "$PERUN" add -m HEAD ../$w.perf >/dev/null || return 1; done &&
	short=$(git rev-parse HEAD | cut -c1-7) &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	0 pending profiles

	3 profiles registered for $short:
	  0@i   w0.perf
	  1@i   w1.perf
	  2@i   w2.perf
	EOF
	test_cmp expect actual
'

test_expect_success 'status escapes an entry name; fsck reports it as damaged' '
	cd a && idx=$(index_of) && short=$(git rev-parse HEAD | cut -c1-7) && perun=$(pwd)/.perun &&
	cp $idx ../index.good &&
	rename_entry $idx 1 "${ESC}]2;x${BEL}w1.perf" &&
	"$PERUN" status >out && no_escape out &&
	nodate out >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)
	  A <a@example.com>, DATE
	  one

	0 pending profiles

	3 profiles registered for $short:
	  0@i   mixed   trace    ./app w0  DATE  w0.perf
	  1@i   mixed   trace    ./app w1  DATE  \x1b]2;x\x07w1.perf
	  2@i   mixed   trace    ./app w2  DATE  w2.perf
	EOF
	test_cmp expect actual &&
	test_expect_code 1 "$PERUN" fsck >actual && no_escape actual &&
	cat >expect <<-EOF &&
	index $short: 1@i has a damaged name, ${SQ}\x1b]2;x\x07w1.perf${SQ}: it holds a control character
	checked 3 objects and 1 index in $perun
	1 problem: ${SQ}perun fsck --repair${SQ} moves damaged files to $perun/damaged and rebuilds the indexes (nothing is deleted)
	EOF
	test_cmp expect actual
'

# the name --repair gives an entry holds the object id, which holds the commit time
test_expect_success 'fsck --repair renames it, says so, and fsck then finds nothing' '
	cd a && head=$(git rev-parse HEAD) && short=$(git rev-parse HEAD | cut -c1-7) && perun=$(pwd)/.perun &&
	"$PERUN" fsck --repair >out && no_escape out &&
	sed "s/app-recovered-[0-9a-f]\{7\}\.perf$/app-recovered-OID.perf/" out >actual &&
	cat >expect <<-EOF &&
	index $short: 1@i has a damaged name, ${SQ}\x1b]2;x\x07w1.perf${SQ}: it holds a control character
	checked 3 objects and 1 index in $perun
	repaired index $short: 3 entries kept, 0 re-indexed from objects, 0 dropped (their objects are missing or damaged); the old index is in $perun/damaged/index-$head
	  1@i (damaged name ${SQ}\x1b]2;x\x07w1.perf${SQ}) renamed app-recovered-OID.perf
	repaired: run ${SQ}perun fsck${SQ} again to check
	EOF
	test_cmp expect actual &&
	"$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	checked 3 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual &&
	"$PERUN" status --short >out &&
	sed "s/app-recovered-[0-9a-f]\{7\}\.perf$/app-recovered-OID.perf/" out >actual &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	0 pending profiles

	3 profiles registered for $short:
	  0@i   w0.perf
	  1@i   app-recovered-OID.perf
	  2@i   w2.perf
	EOF
	test_cmp expect actual
'

test_expect_success 'after fsck --repair drops an entry, it says which N@i moved where' '
	cd a && idx=$(index_of) && head=$(git rev-parse HEAD) && short=$(git rev-parse HEAD | cut -c1-7) &&
	perun=$(pwd)/.perun &&
	rm -f $idx && cp ../index.good $idx &&
	obj=$(python3 - $idx <<-\PY
	import struct, sys
	b = open(sys.argv[1], "rb").read()
	print(b[16:36].hex())
	PY
	) &&
	mv .perun/objects/$(echo $obj | cut -c1-2)/$(echo $obj | cut -c3-) ../w0.object &&
	test_expect_code 1 "$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	index $short: 0@i (w0.perf) names a missing object $(echo $obj | cut -c1-12)
	checked 2 objects and 1 index in $perun
	1 problem: ${SQ}perun fsck --repair${SQ} moves damaged files to $perun/damaged and rebuilds the indexes (nothing is deleted)
	EOF
	test_cmp expect actual &&
	"$PERUN" fsck --repair >actual &&
	cat >expect <<-EOF &&
	index $short: 0@i (w0.perf) names a missing object $(echo $obj | cut -c1-12)
	checked 2 objects and 1 index in $perun
	repaired index $short: 2 entries kept, 0 re-indexed from objects, 1 dropped (their objects are missing or damaged); the old index is in $perun/damaged/index-$head.2
	  0@i (w0.perf) dropped: its object is missing or damaged
	  1@i (w1.perf) is now 0@i
	  2@i (w2.perf) is now 1@i
	repaired: run ${SQ}perun fsck${SQ} again to check
	EOF
	test_cmp expect actual &&
	"$PERUN" fsck >actual &&
	cat >expect <<-EOF &&
	checked 2 objects and 1 index in $perun
	no problems found
	EOF
	test_cmp expect actual
'

test_expect_success 'a fetched index with an entry named with a / or an escape is refused' '
	cd a && idx=$(index_of) && head=$(git rev-parse HEAD) && short=$(git rev-parse HEAD | cut -c1-7) &&
	rename_entry $idx 0 "../../etc/x.perf" && "$PERUN" push origin >out 2>&1; cat out &&
	cd .. && git clone -q -b main remote.git b && cd b &&
	git config user.email b@example.com && git config user.name B && "$PERUN" init >/dev/null &&
	test_expect_code 1 "$PERUN" fetch origin >out 2>err &&
	echo "sync: index $head fetched from origin: entry 0 is named ${SQ}../../etc/x.perf${SQ}: it holds a ${SQ}/${SQ}: an entry names a file, not a path (refused, nothing was stored): is origin${SQ}s refs/perun/profiles written by perun push?" >expect &&
	test_cmp expect err &&
	"$PERUN" status --short >actual &&
	cat >expect <<-EOF &&
	On major version main (minor $short)

	0 pending profiles

	0 profiles registered for $short
	EOF
	test_cmp expect actual &&
	git --git-dir=../remote.git update-ref -d refs/perun/profiles &&
	cd ../a && rename_entry $idx 0 "${ESC}[2Jw.perf" && "$PERUN" push origin && cd ../b &&
	test_expect_code 1 "$PERUN" fetch origin >out 2>err &&
	no_escape err &&
	printf "%s\n" "sync: index $head fetched from origin: entry 0 is named ${SQ}\\x1b[2Jw.perf${SQ}: it holds a control character (refused, nothing was stored): is origin${SQ}s refs/perun/profiles written by perun push?" >expect &&
	test_cmp expect err
'

test_done
