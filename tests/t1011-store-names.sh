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
	"$PERUN" show evil.perf >out && cat out && no_escape out &&
	grep "^\\\\x1b\]0;owned\\\\x07f\\\\x1b\[2J  *1 " out &&
	"$PERUN" diff evil.perf evil.perf >out && no_escape out &&
	grep "^\\\\x1b\]0;owned\\\\x07f\\\\x1b\[2J  *1  *1 " out &&
	"$PERUN" show evil.perf --format json | python3 -c "
import json, sys
p = json.load(sys.stdin)
assert \"\x1b]0;owned\x07f\x1b[2J\" in p[\"chunks\"][\"uids\"], p[\"chunks\"]"
'

test_expect_success 'a bare remote and a repository with three profiles' '
	git init -q --bare remote.git &&
	git init -q a && cd a && git config user.email a@example.com && git config user.name A &&
	echo one >f && git add f && git commit -q -m one &&
	git remote add origin ../remote.git && git push -q origin HEAD:refs/heads/main &&
	"$PERUN" init >/dev/null &&
	for w in w0 w1 w2; do mkprof ../$w.perf $w && "$PERUN" add -m HEAD ../$w.perf >/dev/null || return 1; done &&
	"$PERUN" status --short >out && cat out &&
	grep "^  0@i   w0.perf$" out && grep "^  2@i   w2.perf$" out
'

test_expect_success 'status escapes an entry name; fsck reports it as damaged' '
	cd a && idx=.perun/objects/$(git rev-parse HEAD | cut -c1-2)/$(git rev-parse HEAD | cut -c3-) &&
	cp $idx ../index.good &&
	rename_entry $idx 1 "${ESC}]2;x${BEL}w1.perf" &&
	"$PERUN" status >out && cat out && no_escape out &&
	grep "  1@i .*\\\\x1b\]2;x\\\\x07w1.perf$" out &&
	set +e; "$PERUN" fsck >out; rc=$?; set -e; cat out && no_escape out && test $rc = 1 &&
	grep "^index .......: 1@i has a damaged name, .\\\\x1b\]2;x\\\\x07w1.perf.: it holds a control character$" out &&
	grep "^1 problem" out
'

test_expect_success 'fsck --repair renames it, says so, and fsck then finds nothing' '
	cd a && "$PERUN" fsck --repair >out && cat out && no_escape out &&
	grep "^  1@i (damaged name .*) renamed app-recovered-[0-9a-f]\{7\}.perf$" out &&
	"$PERUN" fsck >out && cat out && grep "^no problems found$" out &&
	"$PERUN" status --short >out && grep "^  1@i   app-recovered-" out
'

test_expect_success 'after fsck --repair drops an entry, it says which N@i moved where' '
	cd a && idx=.perun/objects/$(git rev-parse HEAD | cut -c1-2)/$(git rev-parse HEAD | cut -c3-) &&
	rm -f $idx && cp ../index.good $idx &&
	obj=$("$PERUN" status | sed -n "s/^  0@i .*//p" >/dev/null; python3 - $idx <<-\PY
	import struct, sys
	b = open(sys.argv[1], "rb").read()
	print(b[16:36].hex())
	PY
	) &&
	mv .perun/objects/$(echo $obj | cut -c1-2)/$(echo $obj | cut -c3-) ../w0.object &&
	set +e; "$PERUN" fsck >out; rc=$?; set -e; cat out && test $rc = 1 &&
	grep "0@i (w0.perf) names a missing object" out &&
	"$PERUN" fsck --repair >out && cat out &&
	grep "^  0@i (w0.perf) dropped: its object is missing or damaged$" out &&
	grep "^  1@i (w1.perf) is now 0@i$" out && grep "^  2@i (w2.perf) is now 1@i$" out &&
	"$PERUN" fsck >out && grep "^no problems found$" out
'

test_expect_success 'a fetched index with an entry named with a / or an escape is refused' '
	cd a && idx=.perun/objects/$(git rev-parse HEAD | cut -c1-2)/$(git rev-parse HEAD | cut -c3-) &&
	rename_entry $idx 0 "../../etc/x.perf" && "$PERUN" push origin >out 2>&1; cat out &&
	cd .. && git clone -q -b main remote.git b && cd b &&
	git config user.email b@example.com && git config user.name B && "$PERUN" init >/dev/null &&
	set +e; "$PERUN" fetch origin >out 2>err; rc=$?; set -e; cat out err && test $rc = 1 &&
	grep "entry 0 is named .../../etc/x.perf.: it holds a ./.: an entry names a file, not a path (refused, nothing was stored)" err &&
	"$PERUN" status --short >out && grep "^0 profiles registered" out &&
	git --git-dir=../remote.git update-ref -d refs/perun/profiles &&
	cd ../a && rename_entry $idx 0 "${ESC}[2Jw.perf" && "$PERUN" push origin && cd ../b &&
	set +e; "$PERUN" fetch origin >out 2>err; rc=$?; set -e; cat out err && test $rc = 1 &&
	no_escape err && grep "entry 0 is named .\\\\x1b\[2Jw.perf.: it holds a control character" err
'

test_done
