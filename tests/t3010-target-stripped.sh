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

test_expect_success 'build a program and strip it' '
	unset SYSTEMTAP_DEBUGINFO_PATH DEBUGINFOD_URLS &&
	cc -g -O1 -o full "$FIXTURES/stripped.c" -Wl,--no-as-needed -lz &&
	cp full bare && strip --strip-all bare &&
	cc -g -O1 -rdynamic -o exports "$FIXTURES/stripped.c" && strip --strip-all exports
'

test_expect_success 'doctor BINARY: where its functions come from' '
	"$PERUN" doctor ./full ./bare ./exports >out 2>err || true &&
	cat out &&
	grep "^ok   symbols full  *$TRASH/full: [0-9]* functions from its .symtab, DWARF$" out &&
	grep "^warn symbols bare  *$TRASH/bare: stripped, no debuginfo found, exports no function: only its libraries'"'"' functions can be traced (-f LIB#NAME)$" out &&
	grep "^warn symbols exports  *$TRASH/exports: stripped, no debuginfo found: only the [0-9]* functions it exports can be traced$" out &&
	grep -A1 "^warn symbols bare" out | grep "fix: rebuild it without stripping" &&
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
	cat gz &&
	grep "fix: install its debug symbols: apt-get install gzip-dbgsym, from Debian'"'"'s debug archive (the apt line '"'"'deb http://deb.debian.org/debian-debug $VERSION_CODENAME-debug main'"'"', then apt-get update)" gz
'

test_expect_success 'collect: a stripped program is refused for its own functions only' '
	expect_fail 1 "$PERUN" collect -c ./bare -o x.perf trace -s userspace --script-only &&
	grep "$TRASH/bare: no function symbols for -s userspace (stripped, no .symtab; it exports no function; no debuginfo found): rebuild it" err &&
	expect_fail 1 "$PERUN" collect -c ./bare -o x.perf trace -s custom -f work --script-only &&
	grep "no function symbols for '"'"'work'"'"'" err &&
	"$PERUN" collect -c ./bare -o x.perf trace -s custom -f libz#inflate --script-only \
		>script 2>err &&
	grep "process(\"[^\"]*libz.so[^\"]*\").function" script
'

test_expect_success 'a library the program does not load: the error lists those it does' '
	expect_fail 1 "$PERUN" collect -c ./bare -o x.perf trace -s custom -f libnope#f \
		--script-only &&
	grep "library '"'"'libnope'"'"' not found for $TRASH/bare (it loads libz.so.1 libc.so.6)" err
'

test_expect_success 'callgraph of a stripped program says what to install' '
	expect_fail 1 "$PERUN" callgraph ./bare &&
	grep "no function symbols for a call graph" err
'

test_done
