#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: where profiles go (origin, .perun/jobs), output handling, and the
# options that keep temp files.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'in a git work tree the origin is HEAD' '
	mkdir repo && cd repo &&
	git init -q && git config user.email t@example.com && git config user.name t &&
	echo a >a && git add a && git commit -q -m one &&
	"$PERUN" collect -c ../counts -o ../o.perf trace -q -s custom -f first &&
	test "$(profile_field ../o.perf origin)" = "$(git rev-parse HEAD)"
'

test_expect_success 'inside a perun repository the profile goes to .perun/jobs' '
	cd repo && mkdir -p .perun &&
	"$PERUN" collect -c ../counts trace -s custom -f first 2>err &&
	grep "pending: perun add" err &&
	ls .perun/jobs/counts-trace-*.perf &&
	test "$(profile_field .perun/jobs/counts-trace-*.perf origin)" = "$(git rev-parse HEAD)" &&
	test "$(profile_field .perun/jobs/counts-trace-*.perf header.cmd)" = ../counts
'

test_expect_success 'outside any repository: the current directory, no origin' '
	mkdir plain && cd plain && GIT_CEILING_DIRECTORIES="$TRASH" &&
	export GIT_CEILING_DIRECTORIES &&
	"$PERUN" collect -c ../counts trace -q -s custom -f first &&
	f=$(ls counts-trace-*.perf) &&
	python3 -c "import json,sys; assert \"origin\" not in json.load(open(sys.argv[1]))" "$f"
'

test_expect_success 'args and workload reach the command and the header' '
	"$PERUN" collect -c ./counts -a "a b" -w "c d" -o aw.perf trace -q -s custom -f first >out &&
	test "$(profile_field aw.perf header.args)" = "a b" &&
	test "$(profile_field aw.perf header.workload)" = "c d"
'

test_expect_success 'output handling: suppress hides it, capture shows and keeps it' '
	"$PERUN" collect -c ./counts -o s.perf trace -q -s custom -f first -o suppress >out &&
	! grep "counts done" out &&
	"$PERUN" collect -c ./counts -o c.perf trace -q -s custom -f first -o capture -k >out 2>err &&
	grep "counts done" out &&
	dir=$(sed -n "s/^perun: temp files kept in //p" err) &&
	grep "counts done" "$dir/output.log" && rm -rf "$dir"
'

test_expect_success '-vt keeps the raw stream, -z keeps gzipped temps in .perun/logs' '
	cd repo &&
	"$PERUN" collect -c ../counts -o v.perf trace -q -s custom -f fib -vt -z -w &&
	test "$(grep -c "^[0-9a-f]* [0-9a-f]* [0-9a-f]*$" v.perf.raw)" = $((1983 * 2)) &&
	ls .perun/logs/ | grep "trace.raw.gz" &&
	ls .perun/logs/ | grep "watchdog.log.gz" &&
	zcat .perun/logs/*watchdog.log.gz | grep "loader: perun-uprobes" &&
	"$PERUN" collect -c ../counts -o w.perf trace -q -s custom -f fib -vt --loader stapbpf &&
	test "$(grep -c "^v [0-9a-f]* [0-9a-f]* [0-9a-f]* [0-9a-f]*$" w.perf.raw)" = $((1983 * 2))
'

test_expect_success '--metrics prints and records the thesis metrics' '
	"$PERUN" collect -c ./counts -o m.perf trace -q -s custom -f fib -f work --metrics >out &&
	cat out &&
	grep "PL   4 probe locations" out && grep "PLR  4 reached" out &&
	grep "RDV" out && grep "CPT" out && grep "PRT" out && grep "PT " out &&
	test "$(profile_field m.perf trace.metrics.PL)" = 4 &&
	test "$(profile_field m.perf trace.metrics.PLR)" = 4
'

# perun's loader reports once a second while the trace runs; perun redraws
# it on a terminal (script(1) gives it one) and says nothing when piped.
test_expect_success 'progress on a terminal: time, events and losses, redrawn; none when piped' '
	command -v script >/dev/null || { echo "needs script (util-linux)"; exit 1; } &&
	script -qfec "\"$PERUN\" collect -c ./forever -o p.perf trace -s custom -f tick -t 3.5" \
		/dev/null >tty.out 2>&1 &&
	tr "\r" "\n" <tty.out >lines &&
	grep -E "^perun: tracing for [1-3] s: [0-9,]+ events \([0-9,]+/s\), 0 lost" lines >progress &&
	cat progress &&
	test_line_count -ge 2 progress &&
	cr=$(printf "\r") && esc=$(printf "\033") &&
	grep -qF "$cr$esc[Kperun: attached 2 of 2 probe points" tty.out &&
	calls=$(profile_counts p.perf | sed -n "s/^tick //p") &&
	last=$(tail -n 1 progress | sed "s/.*: \([0-9,]*\) events.*/\1/" | tr -d ,) &&
	echo "last progress: $last events; the profile: $calls calls" &&
	test "$last" -gt 0 && test "$last" -le $((2 * calls + 2)) &&
	"$PERUN" collect -c ./forever -o q.perf trace -s custom -f tick -t 1.5 2>piped.err &&
	! grep "tracing for" piped.err &&
	script -qfec "\"$PERUN\" collect -c ./forever -o r.perf trace -s custom -f tick -t 1.5 --no-progress" \
		/dev/null >tty2.out 2>&1 &&
	! grep "tracing for" tty2.out
'

test_expect_success 'a program that reads its stdin still works' '
	printf "#include <stdio.h>\nint main(void){char b[64]; if (fgets(b, sizeof b, stdin)) fputs(b, stdout); return 0;}\n" >echo.c &&
	cc -g -o echo echo.c &&
	echo hello | "$PERUN" collect -c ./echo -o echo.perf trace -q -s custom -f main >out 2>err ||
		{ cat err; exit 1; }
	grep hello out &&
	test "$(profile_counts echo.perf)" = "main 1"
'

test_done
