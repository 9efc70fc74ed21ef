#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Security of stats, callgraph and postprocessby: a
# hostile local user (nobody, through setpriv) and damaged files attack root's
# perun.  Nothing perun did not write may be deleted, read as its own or
# written through; every refusal names the path and the fix.
. "$SRCDIR/tests/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (the attacker is nobody)"
command -v setpriv >/dev/null 2>&1 || skip_all "needs setpriv (util-linux)"
id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null 2>&1 ||
	skip_all "needs the user nobody and the group nogroup"

NOBODY=$(id -u nobody)
as_nobody() { setpriv --reuid nobody --regid nogroup --clear-groups "$@"; }
chmod 755 "$TRASH"

# refused CMD...: runs it, wants exit 1, keeps stderr in err
refused() {
	set +e
	"$@" >out 2>err
	rc=$?
	set -e
	cat out err
	test $rc = 1
}

# a stats file as perun writes it: stats_file PATH FUNCTION COUNT
stats_file() {
	printf '{"perun-stats":1,"cmd":"/bin/%s","args":"","workload":"","collector":"trace","functions":{"%s":{"sampled_count":%s,"sample":1,"count":%s}}}' \
		"$2" "$2" "$3" "$3" >"$1"
	chmod 644 "$1"
}

# --- perun stats --------------------------------------------------------------

# stats_dir: where the stats of HEAD are, as perun names it
stats_dir() { echo "$(pwd)/.perun/stats/$(git rev-parse HEAD)"; }
# minor12: HEAD as perun stats names it
minor12() { git rev-parse HEAD | cut -c1-12; }

test_expect_success 'a repository with stats of two commands' '
	mkdir repo && cd repo &&
	git init -q && git config user.email t@example.com && git config user.name Tester &&
	echo one >f && git add f && git commit -q -m first &&
	echo two >f && git commit -q -a -m second &&
	"$PERUN" init >/dev/null && head=$(git rev-parse HEAD) &&
	mkdir -p .perun/stats/$head && chmod 700 .perun/stats/$head &&
	stats_file .perun/stats/$head/a-0000000000000000.stats fa 1 &&
	stats_file .perun/stats/$head/b-0000000000000000.stats fb 2 &&
	"$PERUN" stats show a-0000000000000000.stats >actual &&
	cat >expect <<-EOF &&
	stats of /bin/fa (minor $(minor12))
	function                                   recorded sample  est.calls        total        avg     median         Q1         Q3        max
	fa                                                1      1          1            0        0.0        0.0        0.0        0.0          0
	EOF
	test_cmp expect actual
'

test_expect_success 'stats show refuses names with / or .. and leading dots' '
	cd repo && head=$(git rev-parse HEAD) &&
	stats_file ../outside.stats fo 3 &&
	for n in ../../../outside.stats "$head/../$head/a-0000000000000000.stats" .hidden.stats; do
		refused "$PERUN" stats show "$n" || return 1
		echo "perun stats: no stats file $n in minor version $(minor12) (perun stats list-files)" >expect &&
		test_cmp expect err || return 1
	done
'

test_expect_success 'stats delete file with / or .. deletes nothing' '
	cd repo && head=$(git rev-parse HEAD) &&
	echo "deleted 0 stats files" >expect &&
	"$PERUN" stats delete file ../../../outside.stats -m . >actual &&
	test_cmp expect actual &&
	"$PERUN" stats delete file "../$head/a-0000000000000000.stats" >actual &&
	test_cmp expect actual &&
	test -f ../outside.stats && test -f .perun/stats/$head/a-0000000000000000.stats
'

test_expect_success 'a symbolic link to a stats file outside is not perun.s: left by clean and delete' '
	cd repo && head=$(git rev-parse HEAD) && dir=$(stats_dir) &&
	ln -s "$TRASH/outside.stats" .perun/stats/$head/l-0000000000000000.stats &&
	"$PERUN" stats clean >actual &&
	cat >expect <<-EOF &&
	not perun${SQ}s, left alone: $dir/l-0000000000000000.stats
	removed 0 empty minor-version directories; 1 file perun did not write left in place
	EOF
	test_cmp expect actual &&
	"$PERUN" stats delete file l-0000000000000000.stats >actual &&
	cat >expect <<-EOF &&
	not written by perun, left alone: $dir/l-0000000000000000.stats
	deleted 0 stats files
	EOF
	test_cmp expect actual &&
	test -f ../outside.stats && test -L .perun/stats/$head/l-0000000000000000.stats &&
	refused "$PERUN" stats show l-0000000000000000.stats &&
	echo "fs: refusing $dir/l-0000000000000000.stats: a symbolic link where perun expects its own file: remove it" >expect &&
	test_cmp expect err &&
	rm .perun/stats/$head/l-0000000000000000.stats
'

test_expect_success 'a minor directory that is a symbolic link: nothing behind it deleted' '
	cd repo && first=$(git rev-parse HEAD~1) &&
	mkdir -m 700 ../elsewhere && stats_file ../elsewhere/e-0000000000000000.stats fe 4 &&
	ln -s "$TRASH/elsewhere" .perun/stats/$first &&
	"$PERUN" stats delete minor HEAD~1 >actual &&
	cat >expect <<-EOF &&
	not perun${SQ}s, left alone: $(pwd)/.perun/stats/$first (a symbolic link, not a directory, or writable by others)
	deleted 0 stats files
	EOF
	test_cmp expect actual &&
	"$PERUN" stats delete all >actual &&
	cat >expect <<-EOF &&
	not perun${SQ}s, left alone: $(pwd)/.perun/stats/$first (a symbolic link, not a directory, or writable by others)
	deleted 2 stats files
	EOF
	test_cmp expect actual &&
	"$PERUN" stats clean >actual &&
	cat >expect <<-EOF &&
	not perun${SQ}s, left alone: $(pwd)/.perun/stats/$first
	removed 0 empty minor-version directories; 1 file perun did not write left in place
	EOF
	test_cmp expect actual &&
	test -f ../elsewhere/e-0000000000000000.stats && test -L .perun/stats/$first &&
	rm .perun/stats/$first && head=$(git rev-parse HEAD) && mkdir -m 700 .perun/stats/$head &&
	stats_file .perun/stats/$head/a-0000000000000000.stats fa 1 &&
	stats_file .perun/stats/$head/b-0000000000000000.stats fb 2
'

# list-files lists a directory in the order of readdir: compared sorted
test_expect_success 'a FIFO stats file: show, list-files, clean and delete do not block' '
	cd repo && head=$(git rev-parse HEAD) && dir=$(stats_dir) &&
	mkfifo -m 600 .perun/stats/$head/p-0000000000000000.stats &&
	timeout 10 "$PERUN" stats list-files >out && sort out >actual &&
	sort >expect <<-EOF &&
	minor $(minor12) second
	       137 B | a-0000000000000000.stats
	         0 B | p-0000000000000000.stats  (not perun${SQ}s)
	       137 B | b-0000000000000000.stats
	3 files, 274 B in all
	EOF
	test_cmp expect actual &&
	test_expect_code 1 timeout 10 "$PERUN" stats show p-0000000000000000.stats 2>err &&
	echo "fs: refusing $dir/p-0000000000000000.stats: not a regular file: remove it" >expect &&
	test_cmp expect err &&
	timeout 10 "$PERUN" stats delete file p-0000000000000000.stats >actual &&
	cat >expect <<-EOF &&
	not written by perun, left alone: $dir/p-0000000000000000.stats
	deleted 0 stats files
	EOF
	test_cmp expect actual &&
	test -p .perun/stats/$head/p-0000000000000000.stats &&
	rm .perun/stats/$head/p-0000000000000000.stats
'

test_expect_success 'a huge stats file is refused, not read into memory' '
	cd repo && head=$(git rev-parse HEAD) &&
	truncate -s 3G .perun/stats/$head/h-0000000000000000.stats &&
	test_expect_code 1 timeout 20 "$PERUN" stats show h-0000000000000000.stats 2>err &&
	echo "stats: refusing $(stats_dir)/h-0000000000000000.stats: 3221225472 bytes, too large for a stats file (at most 67108864): inspect it and remove it" >expect &&
	test_cmp expect err &&
	timeout 20 "$PERUN" stats delete all -k >out && cat out &&
	test -f .perun/stats/$head/h-0000000000000000.stats &&
	rm .perun/stats/$head/h-0000000000000000.stats
'

test_expect_success 'a minor directory another user owns: its files are not trusted nor deleted' '
	cd repo && head=$(git rev-parse HEAD) && dir=$(stats_dir) &&
	stats_file .perun/stats/$head/a-0000000000000000.stats fa 1 &&
	stats_file .perun/stats/$head/b-0000000000000000.stats fb 2 &&
	chmod 755 . .perun .perun/stats && chown nobody .perun/stats/$head &&
	as_nobody mv .perun/stats/$head/a-0000000000000000.stats .perun/stats/$head/x &&
	as_nobody mv .perun/stats/$head/b-0000000000000000.stats .perun/stats/$head/a-0000000000000000.stats &&
	refused "$PERUN" stats show a-0000000000000000.stats &&
	echo "fs: $dir is owned by uid $NOBODY, not you (uid 0): perun only trusts its own files here; inspect it, then remove it or run ${SQ}chmod go-w${SQ} on it" >expect &&
	test_cmp expect err &&
	cat >expect.delete <<-EOF &&
	not perun${SQ}s, left alone: $dir (a symbolic link, not a directory, or writable by others)
	deleted 0 stats files
	EOF
	"$PERUN" stats delete all >actual && test_cmp expect.delete actual &&
	"$PERUN" stats clean >actual &&
	cat >expect <<-EOF &&
	not perun${SQ}s, left alone: $dir
	removed 0 empty minor-version directories; 1 file perun did not write left in place
	EOF
	test_cmp expect actual &&
	"$PERUN" stats list-files >actual &&
	echo "0 files, 0 B in all" >expect &&
	test_cmp expect actual &&
	test -f .perun/stats/$head/a-0000000000000000.stats && test -f .perun/stats/$head/x &&
	chown root .perun/stats/$head && chmod 777 .perun/stats/$head &&
	refused "$PERUN" stats show a-0000000000000000.stats &&
	echo "fs: $dir is writable by group or others (mode 0777): run ${SQ}chmod go-w $dir${SQ}; inspect it, then remove it or run ${SQ}chmod go-w${SQ} on it" >expect &&
	test_cmp expect err &&
	"$PERUN" stats delete all >actual && test_cmp expect.delete actual &&
	test -f .perun/stats/$head/a-0000000000000000.stats &&
	chmod 700 .perun/stats/$head &&
	"$PERUN" stats show a-0000000000000000.stats >actual &&
	cat >expect <<-EOF &&
	stats of /bin/fb (minor $(minor12))
	function                                   recorded sample  est.calls        total        avg     median         Q1         Q3        max
	fb                                                2      1          2            0        0.0        0.0        0.0        0.0          0
	EOF
	test_cmp expect actual
'

# --- perun callgraph and its cache -----------------------------------------------

# forge_cg FILE WHAT: damages a record of a call-graph cache file and gives it
# the right checksum, so that only the record checks can catch it
forge_cg() {
	python3 - "$1" "$2" <<-\PY
	import struct, sys, zlib
	path, what = sys.argv[1], sys.argv[2]
	b = bytearray(open(path, "rb").read())
	(nnodes, nfuncs, nedges, nblocks, nsucc, strsize) = struct.unpack_from("<6I", b, 20)
	edges = 80 + nnodes * 48
	if what == "edge":
	    struct.pack_into("<I", b, edges + 4, 0xffffffff)
	elif what == "block":
	    struct.pack_into("<I", b, 80 + 16, 0x7fffffff)
	elif what == "succ":
	    blocks = edges + nedges * 16
	    struct.pack_into("<II", b, blocks + 16, 0, 0xffffff)
	elif what == "count":
	    struct.pack_into("<I", b, 20, 0x10000000)
	elif what == "string":
	    b[-1] = ord("x")
	struct.pack_into("<I", b, 72, zlib.crc32(bytes(b[80:])) & 0xffffffff)
	open(path, "wb").write(bytes(b))
	PY
}

test_expect_success 'callgraph: a cache entry with forged records and a right checksum is rebuilt' '
	cc -g -O1 -fno-optimize-sibling-calls -o cg "$FIXTURES/cgraph.c" &&
	"$PERUN" callgraph cg --format json >g.json &&
	"$PERUN" callgraph cg --format json >again.json &&
	grep "\"from_cache\":true" again.json && grep -v from_cache g.json >a &&
	cg=$(ls "$PERUN_CACHE_DIR"/targets/*.cg) && cp "$cg" good.cg &&
	for what in edge:bad.record block:bad.record succ:bad.record count:wrong.size \
		string:bad.record; do
		cp good.cg "$cg" && forge_cg "$cg" ${what%:*} &&
		"$PERUN" callgraph cg --format json >fixed.json 2>err || return 1
		echo "callgraph: warning: $cg: damaged call-graph cache entry ($(echo ${what#*:} | tr . " ")): rebuilding it" >expect &&
		test_cmp expect err || return 1
		grep "\"from_cache\":false" fixed.json || return 1
		grep -v from_cache fixed.json >b && test_cmp a b || return 1
	done &&
	: >"$cg" && "$PERUN" callgraph cg --format json >fixed.json 2>err &&
	echo "callgraph: warning: $cg: damaged call-graph cache entry (truncated): rebuilding it" >expect &&
	test_cmp expect err &&
	grep -v from_cache fixed.json >b && test_cmp a b
'

test_expect_success 'callgraph: a cache entry another user owns or can write is set aside, kept' '
	cg=$(ls "$PERUN_CACHE_DIR"/targets/*.cg) && cp "$cg" entry &&
	chown nobody "$cg" && "$PERUN" callgraph cg --format json >out 2>err &&
	echo "cache: warning: ignoring $cg: not owned by you, so not an analysis perun wrote; perun leaves it alone (remove it if nobody needs it)" >expect &&
	test_cmp expect err &&
	grep -v from_cache out >b && test_cmp a b &&
	cmp entry "$cg" && test "$(stat -c %u "$cg")" = $NOBODY &&
	chown root "$cg" && chmod 666 "$cg" && "$PERUN" callgraph cg >out 2>err &&
	echo "cache: warning: ignoring $cg: writable by group or others, so not an analysis perun wrote; perun leaves it alone (remove it if nobody needs it)" >expect &&
	test_cmp expect err &&
	test "$(stat -c %a "$cg")" = 666 && cmp entry "$cg" &&
	rm "$cg" && mkfifo -m 600 "$cg" &&
	timeout 10 "$PERUN" callgraph cg >out 2>err &&
	echo "cache: warning: ignoring $cg: not a regular file, so not an analysis perun wrote; perun leaves it alone (remove it if nobody needs it)" >expect &&
	test_cmp expect err && test -p "$cg" && rm "$cg" &&
	"$PERUN" callgraph cg --format json >fixed.json && grep -v from_cache fixed.json >b &&
	test_cmp a b
'

test_expect_success 'callgraph: a symbolic link for the cache or its targets directory is refused' '
	mkdir -m 1777 shared && mkdir -m 700 realcache &&
	as_nobody ln -s "$TRASH/realcache" shared/cache &&
	PERUN_CACHE_DIR="$TRASH/shared/cache" refused "$PERUN" callgraph cg &&
	echo "fs: $TRASH/shared/cache: $TRASH/shared/cache is a symbolic link (owned by uid $NOBODY): perun follows no links in the paths it trusts; give the real path or remove the link; set PERUN_CACHE_DIR to a directory that only you (or root) can write, or collect with --stap-cache-off" >expect &&
	test_cmp expect err &&
	! test -e realcache/targets &&
	mkdir -m 700 c2 c2/modules nobodys && chown nobody nobodys &&
	ln -s "$TRASH/nobodys" c2/targets &&
	PERUN_CACHE_DIR="$TRASH/c2" refused "$PERUN" callgraph cg &&
	echo "fs: $TRASH/c2/targets: $TRASH/c2/targets is a symbolic link (owned by uid 0): perun follows no links in the paths it trusts; give the real path or remove the link; set PERUN_CACHE_DIR to a directory that only you (or root) can write, or collect with --stap-cache-off" >expect &&
	test_cmp expect err && ! ls nobodys | grep .
'

# --- perun postprocessby -o ----------------------------------------------------

# a small trace profile: 20 calls of work
{
	printf '{"origin":"","header":{"type":"mixed","cmd":"x","args":"","workload":"","units":{"mixed(time delta)":"us"}},'
	printf '"collector_info":{"name":"trace","params":{}},"postprocessors":[],"resource_type_map":{},"snapshots":[{"resources":['
	i=0; while [ $i -lt 20 ]; do
		[ $i = 0 ] || printf ,
		printf '{"uid":"work","amount":%d,"call-order":%d,"type":"mixed","subtype":"time delta"}' $((100 + i)) $i
		i=$((i + 1))
	done
	echo ']}]}'
} >"$TRASH/p.perf"

# is_result FILE: a profile root wrote with the regressogram models
is_result() {
	test -f "$1" && ! test -L "$1" && test "$(stat -c %u "$1")" = 0 &&
	grep -q '"name":"regressogram"' "$1"
}

test_expect_success 'postprocessby -o onto an existing file or a link: neither is written through' '
	echo mine >victim && chmod 644 victim &&
	"$PERUN" postprocessby p.perf regressogram -o victim >actual &&
	echo "p.perf: 1 models of 1 functions by regressogram written to victim-2" >expect &&
	test_cmp expect actual &&
	test "$(cat victim)" = mine && is_result victim-2 &&
	mkdir -m 1777 pub &&
	as_nobody ln -s "$TRASH/victim" pub/out.perf &&
	as_nobody ln -s "$TRASH/created-by-root" pub/dangling.perf &&
	"$PERUN" postprocessby p.perf regressogram -o pub/out.perf >actual &&
	echo "p.perf: 1 models of 1 functions by regressogram written to pub/out-2.perf" >expect &&
	test_cmp expect actual && is_result pub/out-2.perf &&
	"$PERUN" postprocessby p.perf regressogram -o pub/dangling.perf &&
	is_result pub/dangling-2.perf && ! test -e created-by-root &&
	test "$(cat victim)" = mine && test -L pub/out.perf && test -L pub/dangling.perf &&
	! ls -A pub | grep "^\."
'

test_expect_success 'postprocessby -o in a directory others can write: a swapped staging file is neither published nor deleted' '
	mkdir -m 777 open && echo evil >open/evil0 && chown nobody open/evil0 &&
	as_nobody /usr/bin/python3 - "$TRASH/open" <<-\PY &
	import os, sys, time, shutil
	d = sys.argv[1]; n = 0; end = time.time() + 30
	while time.time() < end and not os.path.exists(d + "/stop"):
	    for f in os.listdir(d):
	        if f.startswith(".r.perf.new-") and ".tmp" not in f:
	            n += 1
	            shutil.copy(d + "/evil0", d + "/evil%d" % n)
	            try:
	                os.rename(d + "/evil%d" % n, d + "/" + f)
	            except OSError:
	                pass
	PY
	attacker=$! && sleep 0.5 &&
	i=0 && while [ $i -lt 30 ]; do
		"$PERUN" postprocessby p.perf regressogram -o open/r.perf >/dev/null 2>err || cat err
		i=$((i + 1))
	done &&
	touch open/stop && wait $attacker &&
	ls -la open && for f in open/r*.perf; do is_result "$f" || { echo "BAD $f"; exit 1; }; done &&
	for f in open/.r.perf.new-*; do test -e "$f" || continue; test "$(cat "$f")" = evil || exit 1; done
'

test_expect_success 'postprocessby: a pending-jobs directory that is a link is refused' '
	cd repo && mkdir -m 700 ../rootonly &&
	{ mv .perun/jobs ../jobs.saved 2>/dev/null || true; } &&
	ln -s "$TRASH/rootonly" .perun/jobs &&
	refused "$PERUN" postprocessby ../p.perf regressogram &&
	jobs=$(pwd)/.perun/jobs &&
	echo "fs: $jobs: $jobs is a symbolic link (owned by uid 0): perun follows no links in the paths it trusts; give the real path or remove the link; remove it or give -o PATH" >expect &&
	test_cmp expect err && ! ls -A ../rootonly | grep . &&
	rm .perun/jobs && { mv ../jobs.saved .perun/jobs 2>/dev/null || true; } &&
	"$PERUN" postprocessby ../p.perf regressogram >actual &&
	echo "../p.perf: 1 models of 1 functions by regressogram written to $jobs/p-regressogram.perf" >expect &&
	test_cmp expect actual &&
	is_result .perun/jobs/p-regressogram.perf
'

test_done
