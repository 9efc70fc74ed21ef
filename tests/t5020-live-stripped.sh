#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: binaries as distributions ship them.  Debian's stripped /usr/bin/xz
# and /usr/bin/gzip traced in their libraries (-f LIB#NAME), counted as
# bpftrace counts the same process; a program stripped with its debuginfo
# under a .build-id directory (a test directory through
# SYSTEMTAP_DEBUGINFO_PATH, then the default /usr/lib/debug), served by a
# debuginfod of the test's own (DEBUGINFOD_URLS), or beside it through
# .gnu_debuglink (elfutils also takes NAME.debug beside it), with exact
# counts (the program counts its own calls); one with a MiniDebugInfo
# (.gnu_debugdata, as Fedora ships binaries); one stripped of everything but
# its exports, traced by them.
. "$SRCDIR/tests/lib.sh"
require_live
# libdebuginfod's leak (tests/lsan-libgit2.supp) is matched only with the slow unwinder
LSAN_OPTIONS="$LSAN_OPTIONS:fast_unwind_on_malloc=0"
export LSAN_OPTIONS
command -v bpftrace >/dev/null 2>&1 || skip_all "needs bpftrace (apt-get install bpftrace)"
for b in /usr/bin/xz /usr/bin/gzip; do
	[ -x $b ] || skip_all "needs $b (apt-get install xz-utils gzip)"
done

# The one file the test puts under /usr/lib/debug (only where none was), and
# the directories it made for it (deepest first): removed when the test body
# ends, whichever way (its subshell's EXIT trap).
SYSDBG= SYSDIRS=
sys_cleanup() {
	[ -z "$SYSDBG" ] || rm -f "$SYSDBG"
	for d in $SYSDIRS; do rmdir "$d" 2>/dev/null || true; done
	SYSDBG= SYSDIRS=
}

N=1234

# bpftrace counting calls of $2 in $1 per pid, in the background: $bt.
# Its BEGIN probe runs once every uprobe is attached.
bt_start() {
	bpftrace -e "BEGIN { printf(\"ready\\n\"); } uprobe:$1:$2 { @[pid] = count(); }" \
		>bt.out 2>&1 &
	bt=$!
	for i in $(seq 300); do grep -q "^ready" bt.out && break; sleep 0.1; done
	grep -q "^ready" bt.out
}

# Stops bpftrace and waits until it has printed its counts.  Called in the
# shell that started it (not inside $(...): a subshell's wait does not wait
# for a process that is not its child, and would read bt.out too early).
bt_stop() {
	bpftrace_stop $bt
	cat bt.out
}

# bpftrace's count for the pid of profile $1's target (after bt_stop).
bt_count() {
	pid=$(profile_field "$1" trace.target.pid)
	sed -n "s/^@\[$pid\]: //p" bt.out
}

expect_fail() {
	code=$1; shift
	set +e; "$@" >out 2>err; rc=$?; set -e
	cat err
	test "$rc" = "$code" || { echo "exit $rc, want $code"; return 1; }
}

build_id() {
	readelf -n "$1" | sed -n "s/^ *Build ID: //p"
}

test_expect_success 'Debian binaries are stripped' '
	for b in /usr/bin/xz /usr/bin/gzip; do
		! readelf -S $b | grep -q "\.symtab" || exit 1
	done &&
	head -c 2000000 /dev/urandom >in.bin
'

test_expect_success 'xz: -f liblzma#lzma_code counts as bpftrace does' '
	lib=$(ldd /usr/bin/xz | sed -n "s/.*liblzma[^ ]* => \([^ ]*\).*/\1/p") &&
	test -n "$lib" &&
	bt_start "$lib" lzma_code &&
	"$PERUN" collect -c /usr/bin/xz -a "-k -f in.bin" -o xz.perf trace -s custom \
		-f liblzma#lzma_code 2>err &&
	bt_stop &&
	want=$(bt_count xz.perf) &&
	cat err && ! grep -i "debuginfo\|stripped" err &&
	got=$(profile_counts xz.perf | sed -n "s/^lzma_code //p") &&
	echo "lzma_code perun=$got bpftrace=$want" &&
	test -n "$want" && test "$want" -gt 10 && test "$got" = "$want" &&
	xz -dc in.bin.xz | cmp - in.bin
'

test_expect_success 'gzip: -f libc#write counts as bpftrace does' '
	lib=$(ldd /usr/bin/gzip | sed -n "s/.*libc\.so[^ ]* => \([^ ]*\).*/\1/p") &&
	test -n "$lib" &&
	bt_start "$lib" write &&
	"$PERUN" collect -c /usr/bin/gzip -a "-k -f in.bin" -o gz.perf trace -s custom \
		-f libc#write 2>err &&
	bt_stop &&
	want=$(bt_count gz.perf) &&
	cat err &&
	got=$(profile_counts gz.perf | sed -n "s/^write //p") &&
	echo "write perun=$got bpftrace=$want" &&
	test -n "$want" && test "$want" -gt 5 && test "$got" = "$want" &&
	gzip -dc in.bin.gz | cmp - in.bin
'

test_expect_success 'jq: -f libonig#onig_search, a library its library loads, counts as bpftrace does' '
	command -v jq >/dev/null || { echo "needs jq (apt-get install jq)"; exit 1; } &&
	lib=$(ldd /usr/bin/jq | sed -n "s/.*libonig[^ ]* => \([^ ]*\).*/\1/p") &&
	test -n "$lib" &&
	! readelf -d /usr/bin/jq | grep -q "libonig" &&
	printf "[range(40)] | map(tostring | test(\"1\")) | length\n" >f.jq &&
	bt_start "$lib" onig_search &&
	"$PERUN" collect -c /usr/bin/jq -a "-n -f f.jq" -o jq.perf trace -s custom \
		-f libonig#onig_search 2>err &&
	bt_stop &&
	want=$(bt_count jq.perf) &&
	cat err &&
	got=$(profile_counts jq.perf | sed -n "s/^onig_search //p") &&
	echo "onig_search perun=$got bpftrace=$want" &&
	test -n "$want" && test "$want" -ge 40 && test "$got" = "$want"
'

test_expect_success 'gzip: -s userspace names what to install' '
	expect_fail 1 "$PERUN" collect -c /usr/bin/gzip -a "-k -f in.bin" -o no.perf \
		trace -s userspace &&
	! test -e no.perf &&
	grep "/usr/bin/gzip: no function symbols for -s userspace" err &&
	grep "traced with -f LIB#NAME" err &&
	if command -v dpkg-query >/dev/null && dpkg-query -S /bin/gzip >/dev/null 2>&1; then
		grep "apt-get install gzip-dbgsym" err &&
		grep "deb http://deb.debian.org/debian-debug .*-debug main" err
	fi
'

test_expect_success 'build the program and split its debuginfo off' '
	cc -g -O1 -o app "$FIXTURES/stripped.c" &&
	./app $N >expect &&
	mkdir keep &&
	objcopy --only-keep-debug app keep/app.debug &&
	strip --strip-all app &&
	! readelf -S app | grep -q "\.symtab\|\.debug_info" &&
	id=$(build_id app) && test -n "$id" &&
	mkdir -p dbg/.build-id/$(echo $id | cut -c1-2) &&
	cp keep/app.debug dbg/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug
'

test_expect_success 'without its debuginfo it is refused, naming what to do' '
	expect_fail 1 "$PERUN" collect -c ./app -a $N -o no.perf trace -s userspace &&
	grep "no function symbols for -s userspace" err &&
	grep "/usr/lib/debug/.build-id/xx/rest.debug" err
'

test_expect_success 'debuginfo by build-id (SYSTEMTAP_DEBUGINFO_PATH): exact counts' '
	SYSTEMTAP_DEBUGINFO_PATH="$TRASH/dbg" "$PERUN" collect -c ./app -a $N -o bid.perf \
		trace -s userspace >out 2>err &&
	cat err &&
	grep "is stripped: its functions come from its debuginfo $TRASH/dbg/.build-id/" err &&
	! grep -i "warning" err &&
	profile_counts bid.perf >actual &&
	test_cmp expect actual
'

test_expect_success 'debuginfo by build-id under /usr/lib/debug: exact counts' '
	id=$(build_id app) &&
	d=/usr/lib/debug/.build-id/$(echo $id | cut -c1-2) &&
	f=$d/$(echo $id | cut -c3-).debug &&
	! test -e $f &&
	trap sys_cleanup EXIT &&
	for dir in /usr/lib/debug /usr/lib/debug/.build-id $d; do
		test -d $dir || { mkdir $dir && SYSDIRS="$dir $SYSDIRS"; }
	done &&
	(set -C && cat keep/app.debug >$f) &&
	SYSDBG=$f &&
	"$PERUN" collect -c ./app -a $N -o sys.perf trace -s userspace >out 2>err &&
	sys_cleanup &&
	cat err &&
	grep "its functions come from its debuginfo $f" err &&
	profile_counts sys.perf >actual &&
	test_cmp expect actual
'

test_expect_success 'debuginfo by .gnu_debuglink beside it (no build-id): exact counts' '
	cc -g -O1 -Wl,--build-id=none -o linked "$FIXTURES/stripped.c" &&
	objcopy --only-keep-debug linked linked.debug &&
	strip --strip-all linked &&
	objcopy --add-gnu-debuglink=linked.debug linked &&
	test -z "$(build_id linked)" &&
	"$PERUN" collect -c ./linked -a $N -o link.perf trace -s userspace >out 2>err &&
	cat err &&
	grep "its functions come from its debuginfo $TRASH/linked.debug" err &&
	profile_counts link.perf >actual &&
	test_cmp expect actual
'

# A debuginfod server of our own, serving the debuginfo of ./app only, on
# a free port; its client cache in $TRASH.
DPID=
stop_debuginfod() {
	[ -z "$DPID" ] || { kill $DPID 2>/dev/null; wait $DPID 2>/dev/null || true; }
	DPID=
}

test_expect_success 'debuginfo from debuginfod (DEBUGINFOD_URLS): exact counts' '
	if ! command -v debuginfod >/dev/null || ! command -v curl >/dev/null; then
		test -z "${PERUN_REQUIRE_LIVE:-}" || { echo "needs debuginfod and curl"; exit 1; }
		say "no debuginfod or curl (apt-get install debuginfod curl): not tried"; exit 0
	fi &&
	mkdir served &&
	cp keep/app.debug served/ &&
	id=$(build_id app) &&
	trap stop_debuginfod EXIT &&
	for try in 1 2 3 4 5; do
		port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000 ))
		debuginfod -F -p $port -d "$TRASH/dfd.sqlite" served >dfd.log 2>&1 &
		DPID=$!
		for i in $(seq 100); do
			curl -sf -o /dev/null http://127.0.0.1:$port/buildid/$id/debuginfo && break
			kill -0 $DPID 2>/dev/null || break
			sleep 0.1
		done
		curl -sf -o /dev/null http://127.0.0.1:$port/buildid/$id/debuginfo && break
		stop_debuginfod
	done &&
	test -n "$DPID" &&
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH="$TRASH/dcache" \
		"$PERUN" collect -c ./app -a $N -o dfd.perf trace -s userspace >out 2>err &&
	stop_debuginfod &&
	cat err &&
	grep "its functions come from its debuginfo $TRASH/dcache/$id/debuginfo" err &&
	profile_counts dfd.perf >actual &&
	test_cmp expect actual
'

test_expect_success 'MiniDebugInfo (.gnu_debugdata, as Fedora ships): exact counts' '
	command -v xz >/dev/null || { say "no xz: not tried"; exit 0; } &&
	cc -g -O1 -o mini "$FIXTURES/stripped.c" &&
	nm mini --format=posix --defined-only | awk "\$2 == \"T\" || \$2 == \"t\" { print \$1 }" |
		sort >mini.funcs &&
	nm -D mini --format=posix --defined-only | awk "{ print \$1 }" | sort >mini.dyn &&
	comm -13 mini.dyn mini.funcs >mini.keep &&
	objcopy --only-keep-debug mini mini.full &&
	objcopy -S --remove-section .comment --keep-symbols=mini.keep mini.full mini.mini &&
	xz -f mini.mini && strip --strip-all mini &&
	objcopy --add-section .gnu_debugdata=mini.mini.xz mini &&
	rm mini.full &&
	"$PERUN" collect -c ./mini -a $N -o mini.perf trace -s userspace >out 2>err &&
	cat err &&
	grep "its functions come from its MiniDebugInfo (.gnu_debugdata)" err &&
	profile_counts mini.perf >actual &&
	test_cmp expect actual
'

test_expect_success 'only .dynsym: -s userspace probes the exports and says so' '
	cc -g -O1 -rdynamic -o exports "$FIXTURES/stripped.c" &&
	strip --strip-all exports &&
	"$PERUN" collect -c ./exports -a $N -o exp.perf trace -s userspace >out 2>err &&
	cat err &&
	grep "has no symbol table and no debuginfo was found: probing the 2 functions it exports (.dynsym) only" err &&
	profile_counts exp.perf >actual &&
	printf "main 1\nwork 1\n" >expect.exp &&
	test_cmp expect.exp actual
'

test_expect_success 'nothing left running' 'assert_nothing_left'

test_done
