#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Where perun writes beside what it did not write: report -o DIR never
# replaces a page of the user's own, aggregate creates nothing through a
# link inside .perun/aggregates, and a foreign entry in the cache's targets/
# is set aside with a warning (kept, never read) instead of failing every
# command that analyses a binary.  No tracing.
. "$SRCDIR/tests/lib.sh"
GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# mkprof FILE: main calling work 10 times
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
	python3 - "$1.tmp" "$1" <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload="")
	json.dump(p, open(sys.argv[2], "w"))
	PY
	rm "$1.tmp"
}

test_expect_success 'a repository with a registered profile' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T && echo 1 >f && git add f && git commit -q -m one &&
	"$PERUN" init >/dev/null && mkprof ../p.perf && "$PERUN" add -m HEAD ../p.perf >/dev/null
'

test_expect_success 'report -o DIR holding a page of the user.s own replaces nothing' '
	cd repo && mkdir ../mine && echo "<p>my page</p>" >../mine/index.html &&
	echo "{\"mine\":1}" >../mine/index.json &&
	test_expect_code 1 "$PERUN" report -o ../mine >out 2>err &&
	! test -s out &&
	# the first of the two files perun finds, in readdir order
	sed "s/: it holds index\.\(html\|json\), /: it holds index.FILE, /" err >actual &&
	echo "report: refusing to write the report into $TRASH/mine: it holds index.FILE, and perun did not write a report there (no .perun-report): give a new or empty directory" >expect &&
	test_cmp expect actual &&
	test "$(cat ../mine/index.html)" = "<p>my page</p>" &&
	test "$(cat ../mine/index.json)" = "{\"mine\":1}" &&
	test "$(ls -A ../mine | sort | tr "\n" " ")" = "index.html index.json "
'

test_expect_success 'report -o a new or empty DIR writes; again into it replaces and says so' '
	cd repo && mkdir ../empty &&
	"$PERUN" report -o ../empty >actual &&
	echo "wrote ../empty/index.html: 2 functions over 1 commit, 0 aggregated releases" >expect &&
	test_cmp expect actual &&
	test -f ../empty/.perun-report && test -f ../empty/index.json &&
	"$PERUN" report -o ../new >actual &&
	echo "wrote ../new/index.html: 2 functions over 1 commit, 0 aggregated releases" >expect &&
	test_cmp expect actual &&
	"$PERUN" report -o ../new >actual &&
	echo "wrote ../new/index.html: 2 functions over 1 commit, 0 aggregated releases (replacing the report perun wrote there)" >expect &&
	test_cmp expect actual
'

test_expect_success 'aggregate: a link inside .perun/aggregates gets nothing created behind it' '
	cd repo && mkdir -m 700 ../victim && mkdir -p .perun/aggregates &&
	ln -s "$TRASH/victim" .perun/aggregates/r &&
	aggs=$(pwd)/.perun/aggregates &&
	test_expect_code 1 "$PERUN" aggregate --release r --shard h 0@i >out 2>err &&
	echo "fs: $aggs/r/aggregate: $aggs/r is a symbolic link (owned by uid $(id -u)): perun follows no links in the paths it trusts; give the real path or remove the link; remove it or give another --dir" >expect &&
	test_cmp expect err &&
	test -z "$(ls -A ../victim)" &&
	rm .perun/aggregates/r && mkdir -m 700 .perun/aggregates/s && ln -s "$TRASH/victim" .perun/aggregates/s/aggregate &&
	test_expect_code 1 "$PERUN" aggregate --release s --shard h 0@i >out 2>err &&
	echo "fs: $aggs/s/aggregate: $aggs/s/aggregate is a symbolic link (owned by uid $(id -u)): perun follows no links in the paths it trusts; give the real path or remove the link; remove it or give another --dir" >expect &&
	test_cmp expect err &&
	test -z "$(ls -A ../victim)"
'

# what callgraph says of the files perun did not write in targets/, sorted
# (they come in readdir order)
targets_ignored() {
	t="$PERUN_CACHE_DIR/targets" &&
	sort <<-EOF
	cache: warning: ignoring $t/link: a symbolic link, so not an analysis perun wrote; perun leaves it alone (remove it if nobody needs it)
	cache: warning: ignoring $t/notes.txt: not a name perun writes, so not an analysis perun wrote; perun leaves it alone (remove it if nobody needs it)
	cache: warning: ignoring $t/somedir: a directory, so not an analysis perun wrote; perun leaves it alone (remove it if nobody needs it)
	EOF
}

test_expect_success 'a file and a directory perun did not write in targets/ are set aside, kept' '
	cc -g -O0 -o small "$FIXTURES/small.c" &&
	"$PERUN" callgraph ./small | grep -v "^cache:" >expect &&
	mkdir "$PERUN_CACHE_DIR/targets/somedir" && echo note >"$PERUN_CACHE_DIR/targets/notes.txt" &&
	ln -s /etc/passwd "$PERUN_CACHE_DIR/targets/link" &&
	"$PERUN" callgraph ./small >out 2>err && grep -v "^cache:" out >actual &&
	test_cmp expect actual &&
	targets_ignored >expect.err &&
	sort err >actual &&
	test_cmp expect.err actual &&
	test -d "$PERUN_CACHE_DIR/targets/somedir" && test "$(cat "$PERUN_CACHE_DIR/targets/notes.txt")" = note &&
	test -L "$PERUN_CACHE_DIR/targets/link"
'

test_expect_success 'an analysis-named file of another user in targets/ is not read and not replaced' '
	[ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 || { echo "needs root and nobody: skipped"; exit 0; }
	f=$(ls "$PERUN_CACHE_DIR"/targets/*.tsv) && rm "$f" && echo forged >"$f" && chown nobody "$f" &&
	"$PERUN" callgraph ./small >out 2>err && grep -v "^cache:" out >actual &&
	test_cmp expect actual &&
	{ targets_ignored &&
	  echo "cache: warning: ignoring $f: not owned by you, so not an analysis perun wrote; perun leaves it alone (remove it if nobody needs it)"; } |
		sort >expect.err &&
	sort err >actual &&
	test_cmp expect.err actual &&
	test "$(cat "$f")" = forged
'

test_done
