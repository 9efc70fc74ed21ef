#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Stripped binaries without tracing: what perun says about where functions
# come from and what to install (perun doctor BINARY, collect's and
# callgraph's errors), a library rule that works whatever the program
# holds, and a library the program does not load.
. "$SRCDIR/tests/lib.sh"

expect_fail() {
	code=$1; shift
	set +e; "$@" >out 2>err; rc=$?; set -e
	cat err
	test "$rc" = "$code" || { echo "exit $rc, want $code"; return 1; }
}

# what perun says to do for a stripped binary
FIX="rebuild it without stripping (no -s, no strip), or put its debuginfo where perun and stap look (/usr/lib/debug/.build-id/xx/rest.debug, \$SYSTEMTAP_DEBUGINFO_PATH), or set DEBUGINFOD_URLS"
# why a stripped program without exports has no functions of its own
NOSYMS="(stripped, no .symtab; it exports no function; no debuginfo found): $FIX; functions of its libraries are traced with -f LIB#NAME"

# doctor's lines about symbols with their fix lines, the counts of
# functions (which depend on the compiler) as N
symbols_of() {
	awk '/^[a-z]+ +symbols /{p = 1; print; next} p && /^ /{print; next} {p = 0}' "$1" |
	sed "s/ [0-9][0-9]* functions / N functions /"
}

test_expect_success 'build a program and strip it' '
	unset SYSTEMTAP_DEBUGINFO_PATH DEBUGINFOD_URLS &&
	cc -g -O1 -o full "$FIXTURES/stripped.c" -Wl,--no-as-needed -lz &&
	cp full bare && strip --strip-all bare &&
	cc -g -O1 -rdynamic -o exports "$FIXTURES/stripped.c" && strip --strip-all exports
'

test_expect_success 'doctor BINARY: where its functions come from' '
	"$PERUN" doctor ./full ./bare ./exports >out 2>err || true &&
	symbols_of out >actual &&
	cat >expect <<-EOF &&
	ok   symbols full       $TRASH/full: N functions from its .symtab, DWARF
	warn symbols bare       $TRASH/bare: stripped, no debuginfo found, exports no function: only its libraries${SQ} functions can be traced (-f LIB#NAME)
	                        fix: $FIX
	warn symbols exports    $TRASH/exports: stripped, no debuginfo found: only the N functions it exports can be traced
	                        fix: $FIX
	EOF
	test_cmp expect actual &&
	n=$(sed -n "s/.*only the \([0-9]*\) functions it exports.*/\1/p" out) &&
	"$PERUN" collect -c ./exports trace --script-only >/dev/null 2>err &&
	grep "probing the $n functions it exports" err &&
	"$PERUN" doctor --json ./bare >json 2>/dev/null || true &&
	python3 - json <<-\PY
	import json, sys
	c = [c for c in json.load(open(sys.argv[1]))["checks"] if c["check"] == "symbols bare"]
	assert len(c) == 1 and not c[0]["ok"] and not c[0]["required"], c
	assert "rebuild it without stripping" in c[0]["fix"], c
	PY
'

test_expect_success 'doctor names the Debian -dbgsym package and the debug archive' '
	if ! command -v dpkg-query >/dev/null || ! dpkg-query -S /bin/gzip >/dev/null 2>&1; then
		say "no dpkg, or it does not know gzip: not checked"; exit 0
	fi &&
	. /etc/os-release &&
	"$PERUN" doctor /usr/bin/gzip >out 2>err || true &&
	grep -A1 "^warn symbols gzip" out >gz &&
	cat >expect <<-EOF &&
	warn symbols gzip       /usr/bin/gzip: stripped, no debuginfo found, exports no function: only its libraries${SQ} functions can be traced (-f LIB#NAME)
	                        fix: install its debug symbols: apt-get install gzip-dbgsym, from Debian${SQ}s debug archive (the apt line ${SQ}deb http://deb.debian.org/debian-debug $VERSION_CODENAME-debug main${SQ}, then apt-get update), or set DEBUGINFOD_URLS=https://debuginfod.debian.net
	EOF
	test_cmp expect gz
'

test_expect_success 'collect: a stripped program is refused for its own functions only' '
	expect_fail 1 "$PERUN" collect -c ./bare -o x.perf trace -s userspace --script-only &&
	echo "target: $TRASH/bare: no function symbols for -s userspace $NOSYMS" >expect &&
	test_cmp expect err &&
	expect_fail 1 "$PERUN" collect -c ./bare -o x.perf trace -s custom -f work --script-only &&
	echo "target: $TRASH/bare: no function symbols for ${SQ}work${SQ} $NOSYMS" >expect &&
	test_cmp expect err &&
	"$PERUN" collect -c ./bare -o x.perf trace -s custom -f libz#inflate --script-only \
		>script 2>err &&
	grep "process(\"[^\"]*libz.so[^\"]*\").function" script
'

test_expect_success 'a library the program does not load: the error lists those it does' '
	expect_fail 1 "$PERUN" collect -c ./bare -o x.perf trace -s custom -f libnope#f \
		--script-only &&
	echo "strategy: library ${SQ}libnope${SQ} not found for $TRASH/bare (it loads libz.so.1 libc.so.6): give its path as PATH#f, or, when the program has the library built in, name the function alone" >expect &&
	test_cmp expect err
'

test_expect_success 'callgraph of a stripped program says what to install' '
	expect_fail 1 "$PERUN" callgraph ./bare &&
	echo "target: $TRASH/bare: no function symbols for a call graph $NOSYMS" >expect &&
	test_cmp expect err
'

test_done
