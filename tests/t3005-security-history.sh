#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Attacks by a local user (nobody) on the commands that keep results over
# time: perun aggregate --expire-before / --dir, perun report -o DIR and
# perun fetch.  Each test states what must hold.
. "$SRCDIR/tests/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (the attacker is nobody)"
id nobody >/dev/null 2>&1 || skip_all "needs the user nobody"
as_nobody() { setpriv --reuid nobody --regid nogroup --clear-groups "$@"; }
chmod 755 "$TRASH"
GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# mkprof FILE CALLS DURATION_NS: main calling work CALLS times (as t7001)
mkprof() {
	python3 - "$@" <<-\PY >"$TRASH/raw.$$"
	import sys
	n, d = int(sys.argv[2]), int(sys.argv[3])
	print("s 3e8 0 100"); print("r")
	t = 0x100
	print("0 1 %x" % t)
	for i in range(n):
	    t += 10; print("2 1 %x" % t); t += d; print("3 1 %x" % t)
	t += 10; print("1 1 %x" % t); print("q")
	PY
	"$PERUN" __parse "$TRASH/plan" "$TRASH/raw.$$" "$1.tmp" >/dev/null &&
	python3 - "$1.tmp" "$1" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload="")
	json.dump(p, open(sys.argv[2], "w"))
	PY
}

test_expect_success 'profiles and an aggregate of an old time box' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	mkprof old.perf 10 1000 && touch -d "2020-01-01 10:30:00 UTC" old.perf &&
	"$PERUN" aggregate --dir agg --release r --shard h old.perf >out && cat out &&
	test -f agg/r/aggregate/report.1577836800.h
'

# a FIFO named like a report: agg_is_aggregate_path (store/aggregate-dir.c) must not block
test_expect_success 'history: a FIFO among the reports does not hang --expire-before' '
	mkfifo agg/r/aggregate/report.5.h &&
	rc=0 && { timeout 10 "$PERUN" aggregate --dir agg --expire-before 2000-01-01 >out 2>err || rc=$?; } &&
	cat out err && test $rc != 124 &&
	test -p agg/r/aggregate/report.5.h && rm agg/r/aggregate/report.5.h
'

# src/cmd/aggregate.c:283-305: judged by content alone, no owner check
test_expect_success 'history: --expire-before leaves another user.s aggregate alone' '
	mkdir -m 1777 shared && as_nobody mkdir -p shared/r/aggregate &&
	as_nobody cp agg/r/aggregate/report.1577836800.h shared/r/aggregate/ &&
	{ "$PERUN" aggregate --dir shared --expire-before 2020-01-02 >out 2>err || :; } &&
	cat out err &&
	test -f shared/r/aggregate/report.1577836800.h
'

# src/cmd/aggregate.c:73 write_agg: fs_mkdir_p + fs_write_atomic, DIR never checked
test_expect_success 'history: --dir through another user.s symbolic link is refused' '
	mkdir -m 700 rootonly && as_nobody ln -s "$TRASH/rootonly" shared/agg2 &&
	{ "$PERUN" aggregate --dir shared/agg2 --release r --shard h old.perf >out 2>err || :; } &&
	cat out err &&
	! ls -A rootonly | grep .
'

# src/report/site.c:393 site_write: fs_mkdir_p(DIR/graphs/flame) follows links;
# write_text renames over whatever file has the name in the linked directory
test_expect_success 'history: report -o DIR whose graphs is a link replaces nothing behind it' '
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T && echo 1 >f && git add f && git commit -q -m one &&
	"$PERUN" init >/dev/null && "$PERUN" add -m HEAD ../old.perf >/dev/null &&
	mkdir -m 700 ../victim && echo mine >../victim/work.json && echo mine >../victim/main.json &&
	mkdir ../site && ln -s "$TRASH/victim" ../site/graphs &&
	{ "$PERUN" report -o ../site >out 2>err || :; } &&
	cat out err &&
	test "$(cat ../victim/work.json)" = mine && test "$(cat ../victim/main.json)" = mine &&
	! test -d ../victim/flame
'

# src/store/store.c:197-203 (history) store_check_object_bytes inflates a
# fetched object without a limit before its hash is checked;
# src/store/sync.c:91 keeps a copy of every fetched file in memory
test_expect_success 'history: fetch refuses a zlib bomb from the remote without inflating it' '
	git init -q --bare remote.git &&
	python3 -c "import sys, zlib; sys.stdout.buffer.write(zlib.compress(bytes(1 << 30), 9))" >bomb &&
	blob=$(git --git-dir=remote.git hash-object -w bomb) &&
	inner=$(printf "100644 blob %s\t%s\n" $blob 23456789012345678901234567890123456789 |
		git --git-dir=remote.git mktree) &&
	mid=$(printf "040000 tree %s\t01\n" $inner | git --git-dir=remote.git mktree) &&
	top=$(printf "040000 tree %s\tobjects\n" $mid | git --git-dir=remote.git mktree) &&
	c=$(echo bomb | GIT_AUTHOR_NAME=n GIT_AUTHOR_EMAIL=n@x GIT_COMMITTER_NAME=n \
		GIT_COMMITTER_EMAIL=n@x git --git-dir=remote.git commit-tree $top) &&
	git --git-dir=remote.git update-ref refs/perun/profiles $c &&
	cd repo && rc=0 &&
	{ /usr/bin/time -f "maxrss %M" -o ../rss timeout 60 "$PERUN" fetch "$TRASH/remote.git" >out 2>err ||
		rc=$?; } &&
	cat out err ../rss && test $rc = 1 &&
	test "$(sed -n "s/^maxrss //p" ../rss)" -lt 400000
'

test_done
