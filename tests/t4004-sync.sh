#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun push / perun fetch: two clones of one bare remote register different
# profiles for the same commit and push at the same time; both end with
# both profiles, and the remote holds every object.  A damaged object on the
# remote is refused by fetch, and nothing of that fetch is stored.  Profiles
# come from the parser alone (no tracing).
. "$SRCDIR/tests/lib.sh"
# a full unwind for LSan, so that libgit2's leak in a push that races with
# another (see tests/lsan-libgit2.supp) is known by its frames
LSAN_OPTIONS="$LSAN_OPTIONS:fast_unwind_on_malloc=0"

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# mkprof FILE WORKLOAD: a valid profile with that workload.
mkprof() {
	python3 - "$TRASH/base.perf" "$1" "$2" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"]["workload"] = sys.argv[3]
	json.dump(p, open(sys.argv[2], "w"))
	PY
}

# The sorted workloads of the profiles registered for HEAD.
workloads() {
	n=$("$PERUN" status | sed -n "s/^\([0-9]*\) profiles\{0,1\} registered for.*/\1/p")
	i=0
	while [ "$i" -lt "${n:-0}" ]; do
		"$PERUN" show "$i@i" --format json |
			python3 -c "import json,sys; print(json.load(sys.stdin)['header']['workload'])"
		i=$((i + 1))
	done | sort
}

test_expect_success 'a profile from the parser alone' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	printf "s 3e8 0 100\nr\n0 1 200\n2 1 300\n3 1 400\n1 1 500\nq\n" >raw &&
	"$PERUN" __parse plan raw parsed.perf >/dev/null &&
	python3 -c "
import json
p = json.load(open(\"parsed.perf\"))
p[\"header\"].update(units={\"mixed(time delta)\": \"ns\"}, cmd=\"./app\", args=\"\", workload=\"\")
json.dump(p, open(\"base.perf\", \"w\"))"
'

test_expect_success 'a bare remote and two clones of it, each a perun repository' '
	git init -q --bare remote.git &&
	git init -q a && cd a && git config user.email a@example.com && git config user.name A &&
	echo one >f && git add f && git commit -q -m one &&
	git remote add origin ../remote.git && git push -q origin HEAD:refs/heads/main &&
	"$PERUN" init >/dev/null && cd .. &&
	git clone -q -b main remote.git b && cd b &&
	git config user.email b@example.com && git config user.name B &&
	"$PERUN" init >/dev/null &&
	test "$(git rev-parse HEAD)" = "$(git -C ../a rev-parse HEAD)"
'

test_expect_success 'push and fetch say what they are and refuse bad arguments' '
	cd a &&
	"$PERUN" push --help | head -n 1 >actual &&
	"$PERUN" fetch --help | head -n 1 >>actual &&
	cat >expect <<-\EOF &&
	usage: perun push [REMOTE] [-q]
	usage: perun fetch [REMOTE] [-q]
	EOF
	test_cmp expect actual &&
	test_expect_code 2 "$PERUN" push a b 2>err &&
	head -n 2 err >actual &&
	cat >expect <<-EOF &&
	perun push: unexpected argument ${SQ}b${SQ}
	usage: perun push [REMOTE] [-q]
	EOF
	test_cmp expect actual &&
	test_expect_code 1 "$PERUN" fetch nosuchremote 2>err &&
	cat >expect <<-EOF &&
	vcs: ${SQ}nosuchremote${SQ} is neither a remote of this repository nor a URL or path: add it with ${SQ}git remote add nosuchremote URL${SQ}, or give its URL
	EOF
	test_cmp expect err &&
	"$PERUN" fetch >out &&
	echo "origin has no perun profiles yet" >expect &&
	test_cmp expect out
'

test_expect_success 'each clone registers a different profile for the same commit' '
	(cd a && mkprof ../pa.perf from-a && "$PERUN" add -m HEAD ../pa.perf >/dev/null) &&
	(cd b && mkprof ../pb.perf from-b && "$PERUN" add -m HEAD ../pb.perf >/dev/null) &&
	(cd a && workloads >../wa) && echo from-a >expect && test_cmp expect wa
'

test_expect_success 'both push at the same time; then each fetches and sees both' '
	(set +e; cd a; "$PERUN" push >../push-a.out 2>&1; echo $? >../push-a.rc) &
	(set +e; cd b; "$PERUN" push >../push-b.out 2>&1; echo $? >../push-b.rc) &
	wait &&
	cat push-a.out push-b.out &&
	test "$(cat push-a.rc)" = 0 && test "$(cat push-b.rc)" = 0 &&
	(cd a && "$PERUN" fetch && workloads >../wa) &&
	mkdir b/sub && (cd b/sub && "$PERUN" fetch) && (cd b && workloads >../wb) &&
	printf "from-a\nfrom-b\n" >expect &&
	test_cmp expect wa && test_cmp expect wb &&
	(cd a && "$PERUN" fsck) && (cd b && "$PERUN" fsck)
'

test_expect_success 'five rounds of simultaneous pushes lose nothing' '
	r=1 &&
	while [ $r -le 5 ]; do
		(cd a && mkprof ../pa$r.perf a$r && "$PERUN" add -m HEAD ../pa$r.perf >/dev/null) &&
		(cd b && mkprof ../pb$r.perf b$r && "$PERUN" add -m HEAD ../pb$r.perf >/dev/null) &&
		{ (set +e; cd a; "$PERUN" push -q; echo $? >../rc-a) &
		  (set +e; cd b; "$PERUN" push -q; echo $? >../rc-b) & wait; } &&
		test "$(cat rc-a)" = 0 && test "$(cat rc-b)" = 0 &&
		r=$((r + 1)) || { cat rc-a rc-b; exit 1; }
	done &&
	(cd a && "$PERUN" fetch -q && workloads >../wa) &&
	(cd b && "$PERUN" fetch -q && workloads >../wb) &&
	{ echo from-a; echo from-b; for r in 1 2 3 4 5; do echo a$r; echo b$r; done; } | sort >expect &&
	test_cmp expect wa && test_cmp expect wb &&
	# the remote tree: 12 objects, one index and the tags of the 12
	# registrations (added/MINOR), each exactly once
	git --git-dir=remote.git ls-tree -r refs/perun/profiles >tree &&
	test "$(wc -l <tree)" = 14 &&
	test "$(cut -f2 tree | sort -u | wc -l)" = 14 &&
	git --git-dir=remote.git show refs/perun/profiles:added/$(cd a && git rev-parse HEAD) >tags &&
	test "$(sed 1d tags | cut -d" " -f1 | sort -u | wc -l)" = 12
'

test_expect_success 'a third clone fetches by path and gets all twelve' '
	git clone -q -b main remote.git c && cd c && "$PERUN" init >/dev/null &&
	mkdir sub && (cd sub && "$PERUN" fetch ../../remote.git >../out) && cat out &&
	tip=$(git --git-dir="$TRASH/remote.git" rev-parse --short=7 refs/perun/profiles) &&
	echo "fetched $tip from $TRASH/remote.git: 12 new objects, 12 new index entries" >expect &&
	test_cmp expect out &&
	"$PERUN" status | sed -n "/ registered for /p" >actual &&
	echo "12 profiles registered for $(git rev-parse --short=7 HEAD):" >expect &&
	test_cmp expect actual &&
	"$PERUN" fetch "$TRASH/remote.git" >out &&
	echo "fetched $tip from $TRASH/remote.git: 0 new objects, 0 new index entries" >expect &&
	test_cmp expect out
'

# A network remote: git daemon on the loopback; the server refuses a push
# whose old value is stale, and the loser fetches, merges and retries.
daemon_stop() {
	if [ -s "$TRASH/daemon.pid" ]; then kill "$(cat "$TRASH/daemon.pid")" 2>/dev/null; fi
	cleanup_trash
}
trap daemon_stop EXIT
if git daemon -h 2>&1 | grep -q -- "--base-path"; then
test_expect_success 'over git:// (git daemon): simultaneous pushes retry, nothing lost' '
	port= && for try in 1 2 3 4 5; do
		p=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000)) &&
		if git daemon --base-path="$TRASH" --export-all --enable=receive-pack \
			--listen=127.0.0.1 --port=$p --reuseaddr --detach \
			--pid-file="$TRASH/daemon.pid" 2>/dev/null; then
			sleep 1 && git ls-remote "git://127.0.0.1:$p/remote.git" >/dev/null 2>&1 &&
			port=$p && break
			kill "$(cat "$TRASH/daemon.pid")" 2>/dev/null; : >"$TRASH/daemon.pid"
		fi
	done && test -n "$port" &&
	(cd a && git remote add net "git://127.0.0.1:$port/remote.git") &&
	(cd b && git remote add net "git://127.0.0.1:$port/remote.git") &&
	: >attempts && r=1 &&
	while [ $r -le 3 ]; do
		(cd a && mkprof ../na$r.perf na$r && "$PERUN" add -m HEAD ../na$r.perf >/dev/null) &&
		(cd b && mkprof ../nb$r.perf nb$r && "$PERUN" add -m HEAD ../nb$r.perf >/dev/null) &&
		{ (set +e; cd a; "$PERUN" push net >>../attempts 2>&1; echo $? >../rc-a) &
		  (set +e; cd b; "$PERUN" push net >>../attempts 2>&1; echo $? >../rc-b) & wait; } &&
		test "$(cat rc-a)" = 0 && test "$(cat rc-b)" = 0 &&
		r=$((r + 1)) || { cat rc-a rc-b; exit 1; }
	done &&
	cat attempts &&
	(cd a && "$PERUN" fetch -q net && workloads >../wa) &&
	(cd b && "$PERUN" fetch -q net && workloads >../wb) &&
	{ echo from-a; echo from-b; for r in 1 2 3 4 5; do echo a$r; echo b$r; done;
	  for r in 1 2 3; do echo na$r; echo nb$r; done; } | sort >expect &&
	test_cmp expect wa && test_cmp expect wb &&
	test "$(git --git-dir=remote.git ls-tree -r refs/perun/profiles | wc -l)" = 20
'
fi

test_expect_success 'a damaged local object is not pushed' '
	git clone -q -b main remote.git e && cd e && "$PERUN" init >/dev/null &&
	# a profile object, not an index (pidx): the order find lists them in
	# is up to the file system
	"$PERUN" fetch -q && obj=$(find .perun/objects -type f | while read -r f; do
		[ "$(head -c 4 "$f")" = pidx ] || { echo "$f"; break; }
	done) &&
	test -n "$obj" && chmod u+w "$obj" && printf "garbage" >"$obj" &&
	before=$(git --git-dir=../remote.git rev-parse refs/perun/profiles) &&
	test_expect_code 1 "$PERUN" push 2>err &&
	# garbage reads as a damaged object, and the fix is named
	hex=$(basename "$(dirname "$obj")")$(basename "$obj") &&
	cat >expect <<-EOF &&
	sync: object $hex ($TRASH/e/$obj): not valid zlib data (corrupted): nothing was pushed; run ${SQ}perun fsck --repair${SQ} first
	EOF
	test_cmp expect err &&
	test "$(git --git-dir=../remote.git rev-parse refs/perun/profiles)" = "$before"
'

test_expect_success 'a damaged object on the remote: fetch refuses it and stores nothing' '
	export GIT_DIR="$TRASH/remote.git" GIT_INDEX_FILE="$TRASH/corrupt.index" &&
	tip=$(git rev-parse refs/perun/profiles) &&
	git read-tree "$tip" &&
	# a profile object under another name (an index under another name would
	# be an index of another version, not damage): the first blob not "pidx"
	some=$(git ls-tree -r "$tip" objects | cut -f1 | cut -d" " -f3 | while read -r b; do
		[ "$(git cat-file blob "$b" | head -c 4)" = pidx ] || { echo "$b"; break; }
	done) &&
	test -n "$some" &&
	bad=0123456789abcdef0123456789abcdef01234567 &&
	git update-index --add --cacheinfo "100644,$some,objects/01/${bad#01}" &&
	git commit-tree "$(git write-tree)" -p "$tip" -m damaged >commit &&
	git update-ref refs/perun/profiles "$(cat commit)" &&
	unset GIT_DIR GIT_INDEX_FILE &&
	mkdir d && cd d && git init -q && git config user.email d@example.com &&
	git config user.name D && echo x >f && git add f && git commit -q -m x &&
	"$PERUN" init >/dev/null &&
	test_expect_code 1 "$PERUN" fetch "$TRASH/remote.git" 2>err &&
	# the hash of the content under the wrong name: a profile object of this run
	sed "s/content hashes to [0-9a-f]\{40\}/content hashes to HASH/" err >actual &&
	cat >expect <<-EOF &&
	sync: object $bad fetched from $TRASH/remote.git: content hashes to HASH (corrupted) (refused, nothing was stored): push it again from a host whose copy ${SQ}perun fsck${SQ} finds intact
	EOF
	test_cmp expect actual &&
	test -z "$(find .perun/objects -type f)" &&
	cd ../a && test_expect_code 1 "$PERUN" push 2>err &&
	sed "s/content hashes to [0-9a-f]\{40\}/content hashes to HASH/" err >actual &&
	cat >expect <<-EOF &&
	sync: object $bad fetched from origin: content hashes to HASH (corrupted) (refused, nothing was stored): push it again from a host whose copy ${SQ}perun fsck${SQ} finds intact
	sync: nothing was pushed to origin
	EOF
	test_cmp expect actual
'

test_expect_success 'a push to a clone with a work tree says what to do instead' '
	git clone -q -b main remote.git wt && (cd wt && "$PERUN" init >/dev/null) &&
	cd a && test_expect_code 1 "$PERUN" push "$TRASH/wt" 2>err &&
	cat >expect <<-EOF &&
	vcs: $TRASH/wt: a repository with a work tree, which perun cannot push into: push to a bare repository (git clone --bare), or run ${SQ}perun fetch $TRASH/a${SQ} there
	EOF
	test_cmp expect err
'

test_done
