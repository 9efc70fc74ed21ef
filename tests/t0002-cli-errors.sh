#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Bad input gets a clear error and the documented exit code, and nothing is
# written: missing, stripped and non-ELF binaries, bad options.
. "$SRCDIR/tests/lib.sh"

expect_fail() {
	code=$1; shift
	set +e; "$@" >out 2>err; rc=$?; set -e
	cat err
	test "$rc" = "$code" || { echo "exit $rc, want $code"; return 1; }
}

test_expect_success 'no collector' '
	expect_fail 2 "$PERUN" collect -c /bin/true &&
	grep "missing collector" err
'

test_expect_success 'an unknown strategy' '
	expect_fail 2 "$PERUN" collect -c /bin/true trace -s everything &&
	grep "unknown strategy .everything." err
'

test_expect_success '-e ebpf points to --runtime bpf' '
	expect_fail 2 "$PERUN" collect -c /bin/true trace -e ebpf &&
	grep -- "--runtime bpf" err
'

test_expect_success 'bad numbers for -g and -t' '
	expect_fail 2 "$PERUN" collect -c /bin/true trace -g 0 &&
	expect_fail 2 "$PERUN" collect -c /bin/true trace -t soon
'

test_expect_success 'a missing binary: where perun looked, or that it is no program' '
	: >noexec && mkdir -p sub &&
	for c in ./nope nope /no/such/prog ./sub ./noexec; do
		expect_fail 1 "$PERUN" collect -c $c -o x.perf trace && cat err >>all || exit 1
	done &&
	! test -e x.perf &&
	cat >expect <<-EOF &&
	perun collect: ./nope: no such file in $(pwd -P)
	perun collect: nope: command not found in PATH (give its path, e.g. ./nope)
	perun collect: /no/such/prog: no such file
	perun collect: ./sub: is a directory
	perun collect: ./noexec: not executable
	EOF
	test_cmp expect all
'

test_expect_success 'a trace option before trace: where it goes' '
	expect_fail 2 "$PERUN" collect -t 2 -c ./nope trace -f main &&
	head -n 1 err >actual &&
	expect_fail 2 "$PERUN" collect -c ./nope --timeout=2 trace -f main &&
	head -n 1 err >>actual &&
	cat >expect <<-EOF &&
	perun collect: -t is an option of trace: put it after ${SQ}trace${SQ} (perun collect -c CMD trace -t ...)
	perun collect: --timeout=2 is an option of trace: put it after ${SQ}trace${SQ} (perun collect -c CMD trace --timeout=2 ...)
	EOF
	test_cmp expect actual
'

test_expect_success 'a reader that goes away (perun show | head): quiet, as git is' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	awk "BEGIN { print \"s 3e8 0 100\"; print \"r\"; print \"0 1 200\";
		for (i = 0; i < 30000; i++) printf \"2 1 %x\\n3 1 %x\\n\", 1000 + 4 * i, 1002 + 4 * i;
		print \"1 1 fffffff\"; print \"q\" }" >raw &&
	"$PERUN" __parse plan raw big.perf >/dev/null &&
	{ "$PERUN" show big.perf --format json 2>err; echo $? >rc; } | head -c 100 >/dev/null &&
	cat err && ! test -s err &&
	test "$(cat rc)" = 141
'

test_expect_success 'a file that is not ELF' '
	printf "#!/bin/sh\necho hi\n" >script.sh && chmod +x script.sh &&
	expect_fail 1 "$PERUN" collect -c ./script.sh -o x.perf trace --script-only &&
	grep "not an ELF file" err && ! test -e x.perf
'

test_expect_success 'a stripped binary with no symbols' '
	printf "int main(void){return 0;}\n" >s.c &&
	cc -O1 -s -static -o stripped s.c 2>/dev/null || cc -O1 -s -o stripped s.c &&
	strip --strip-all stripped &&
	if "$PERUN" collect -c ./stripped -o x.perf trace --script-only >script 2>err; then
		echo "only dynamic symbols left:" && cat err && grep -v "^#" script | grep -q probe
	else
		grep "no function symbols for -s userspace (stripped, no .symtab" err
	fi
'

test_expect_success 'a function that does not exist' '
	printf "int main(void){return 0;}\n" >m.c && cc -g -o m m.c &&
	expect_fail 1 "$PERUN" collect -c ./m trace -s custom -f nosuchfn --script-only &&
	grep "function .nosuchfn. not found" err
'

test_expect_success 'the custom strategy without rules' '
	expect_fail 1 "$PERUN" collect -c ./m trace -s custom --script-only &&
	grep "custom strategy needs -f, -u or -d" err
'

test_expect_success 'a bad regex names the offset' '
	expect_fail 1 "$PERUN" collect -c ./m trace --include "(" --script-only &&
	grep "include regex" err
'

test_expect_success 'an unclosed quote in -a or -w is a usage error' '
	expect_fail 2 "$PERUN" collect -c ./m -a "\"x" trace --script-only &&
	grep "a quote is not closed" err &&
	expect_fail 2 "$PERUN" collect -c ./m -w "it'"'"'s" trace --script-only &&
	grep "a quote is not closed" err
'

test_expect_success '-a is never expanded, so $(...) is just text' '
	"$PERUN" collect -c ./m -a "\$(id) \$HOME ~ *.c" trace --script-only >script
'

test_expect_success '-t nan, inf, huge and negative are usage errors' '
	for t in nan inf -inf 1e400 1e9 -3 0; do
		expect_fail 2 "$PERUN" collect -c ./m trace -t "$t" --script-only &&
		grep "\-t wants a number of seconds above 0" err || exit 1
	done &&
	"$PERUN" collect -c ./m trace -t 0.5 --script-only >/dev/null
'

test_expect_success '-g out of range never reaches the BPF verifier' '
	for g in 2147483648 -5 4294967297 99999999999999999999 0 1x ""; do
		expect_fail 2 "$PERUN" collect -c ./m trace -g "$g" --script-only &&
		grep "\-g wants an integer from 1 to 2147483647" err || exit 1
	done &&
	"$PERUN" collect -c ./m trace -g 2147483647 --script-only >script &&
	grep -q 2147483647 script
'

test_expect_success 'a rule sampling out of range is a usage error, not a wrap' '
	for r in "main#4294967297" "main#0" "libc#x#2147483648" "m.c:1#4294967296"; do
		opt=-f; case "$r" in *:*) opt=-d ;; esac
		expect_fail 2 "$PERUN" collect -c ./m trace -s custom $opt "$r" --script-only || exit 1
	done &&
	expect_fail 2 "$PERUN" collect -c ./m trace -s custom -u "probe#4294967296" --script-only &&
	grep "sampling after the last .#. is an integer from 1 to 2147483647" err &&
	"$PERUN" collect -c ./m trace -s custom -f "main#2147483647" --script-only >script &&
	grep -q 2147483647 script
'

test_expect_success '-o after trace says where -o FILE goes' '
	expect_fail 2 "$PERUN" collect -c ./m trace -o out.perf &&
	grep "put -o before .trace.: perun collect -o out.perf" err && ! test -e out.perf
'

test_expect_success 'a binary path SystemTap would glob is refused' '
	cp m "./we*ird" &&
	expect_fail 1 "$PERUN" collect -c "./we*ird" trace --script-only &&
	grep "wildcard" err
'

test_expect_success 'a C++ binary: demangled names in the plan' '
	c++ -g -O1 -o cpp "$FIXTURES/cppmethod.cc" &&
	"$PERUN" collect -c ./cpp trace -s custom -f "Counter::bump(int)" --script-only >script &&
	grep -c "function(0x" script | grep -q 2
'

test_expect_success 'perun cache with a bad action or size' '
	expect_fail 2 "$PERUN" cache frob &&
	expect_fail 2 "$PERUN" cache prune --max-size lots
'

test_expect_success 'perun init with an empty PATH or two PATHs is a usage error' '
	mkdir initrepo && git -C initrepo init -q &&
	(cd initrepo && test_expect_code 2 "$PERUN" init "" 2>err) &&
	cat >expect <<-\EOF &&
	perun init: PATH is empty
	usage: perun init [PATH] [--init-vcs]
	EOF
	test_cmp expect initrepo/err &&
	(cd initrepo && test_expect_code 2 "$PERUN" init a b 2>err) &&
	grep "one PATH at most, not 2" initrepo/err && ! test -e initrepo/a
'

test_expect_success 'history and report: -n and --threshold refuse overflow and inf' '
	for v in 99999999999999999999 " 5" ""; do
		test_expect_code 2 "$PERUN" history --all -n "$v" 2>err &&
		echo "perun history: -n takes a count, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done &&
	for v in inf 1e400 nan; do
		test_expect_code 2 "$PERUN" report -o site --threshold "$v" 2>err &&
		echo "perun report: --threshold takes a finite ratio >= 0, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done && ! test -e site
'

test_expect_success 'numbers are digits as typed: no hex float, sign or space' '
	for v in 0x1p-3 +0.1 " 0.1" 0.1x; do
		test_expect_code 2 "$PERUN" report -o site --threshold "$v" 2>err &&
		echo "perun report: --threshold takes a finite ratio >= 0, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done && ! test -e site &&
	for v in 0x1p-3 +5 " 5" -5; do
		test_expect_code 2 "$PERUN" collect -c true trace -t "$v" 2>err &&
		echo "perun collect: -t wants a number of seconds above 0 and at most 31536000, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done &&
	for v in 0x10% +5% " 5%" 5%%; do
		test_expect_code 2 "$PERUN" collect -c true trace --max-overhead "$v" 2>err &&
		echo "perun collect: --max-overhead wants a percentage above 0 and at most 10000, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done &&
	for v in +5 " 5" 0x10 -5 99999999999999999999; do
		test_expect_code 2 "$PERUN" collect -c true trace --buffer-size "$v" 2>err &&
		echo "perun collect: --buffer-size wants a number of events from 1 to 100000000, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done &&
	for v in 0x1p3us +5us " 5us" -5us us 5xs; do
		test_expect_code 2 "$PERUN" collect -c true trace --min-duration "$v" 2>err &&
		echo "perun collect: --min-duration wants a time like 10us, 2ms or 500ns, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done
'

test_expect_success 'run, bisect, check, log, collect --pid, calibrate: numbers as digits' '
	for v in +5 " 5" 0x5 0 1001; do
		test_expect_code 2 "$PERUN" run matrix --repeat "$v" 2>err &&
		echo "perun run: --repeat wants a number of runs from 1 to 1000, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done &&
	for v in 0x1p-3 +0.1 " 0.1" .; do
		test_expect_code 2 "$PERUN" check --threshold "$v" a.perf b.perf 2>err &&
		echo "perun check: --threshold wants a number in (0, 1e+09), not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done &&
	for v in " 5" +5 0x5; do
		test_expect_code 2 "$PERUN" log -n "$v" 2>err &&
		echo "perun log: -n wants a count of minor versions, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first &&
		test_expect_code 2 "$PERUN" collect --pid "$v" trace 2>err &&
		echo "perun collect: --pid wants a process id, not '"'"'$v'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first &&
		test_expect_code 2 "$PERUN" calibrate --calls "${v}00" 2>err &&
		echo "perun calibrate: --calls wants 100 to 10000000, not '"'"'${v}00'"'"'" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done
'

test_expect_success 'aggregate: --time-box and --expire-before refuse overflow' '
	test_expect_code 2 "$PERUN" aggregate --time-box 99999999999999999999 2>err &&
	echo "perun aggregate: --time-box takes a positive number of seconds, not '"'"'99999999999999999999'"'"'" >expect &&
	head -n 1 err >first && test_cmp expect first &&
	test_expect_code 2 "$PERUN" aggregate --time-box "" 2>err &&
	grep "positive number of seconds, not '"''"'" err &&
	test_expect_code 2 "$PERUN" aggregate --expire-before 99999999999999999999 2>err &&
	grep "seconds since the epoch or YYYY-MM-DD, not .99999999999999999999." err
'

test_expect_success 'stats --top refuses an empty value and a spaced sign' '
	for v in "" " -5" 99999999999999999999; do
		test_expect_code 2 "$PERUN" stats list-files --top "$v" 2>err &&
		echo "perun stats: --top '"'"'$v'"'"': not a count" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done
'

test_expect_success '-d refuses a line number that overflows or is 0' '
	for l in 4294967297 99999999999999999999 0; do
		expect_fail 2 "$PERUN" collect -c ./m trace -s custom -d "m.c:$l" --script-only &&
		echo "perun collect: -d m.c:$l: the line after the last '"':'"' is an integer from 1 to 2147483647" >expect &&
		head -n 1 err >first && test_cmp expect first || return 1
	done &&
	"$PERUN" collect -c ./m trace -s custom -d "m.c:1#3" --script-only >script &&
	grep -q "m.c:1\"" script
'

test_expect_success 'perun cache: options after the action parse as before it' '
	test_expect_code 2 "$PERUN" cache prune --max-size 2>err &&
	echo "perun cache: --max-size wants a value (SIZE)" >expect &&
	head -n 1 err >first && test_cmp expect first &&
	"$PERUN" cache prune --max-size=5M >out &&
	grep "limit 5242880 bytes" out &&
	test_expect_code 2 "$PERUN" cache list --json=x 2>err &&
	grep "^perun cache: --json takes no value" err &&
	test_expect_code 2 "$PERUN" cache -qzv list 2>err &&
	grep "^perun cache: unknown option .-qzv." err &&
	test_expect_code 2 "$PERUN" cache verify extra 2>err &&
	grep "^perun cache: unexpected argument .extra." err &&
	"$PERUN" cache build --help >out && grep "usage: perun cache list" out
'

test_expect_success 'postprocessby: its options named as given, numbers as digits' '
	python3 "$SRCDIR/tests/data/gen-calls.py" raw plan raw 1 1 &&
	"$PERUN" __parse plan raw pp.perf >/dev/null &&
	python3 "$SRCDIR/tests/data/gen-calls.py" header pp.perf ./app input.txt &&
	for v in 18446744073709551615 " -5" 1000001 +5 0x10 0; do
		test_expect_code 2 "$PERUN" postprocessby pp.perf regressogram --bins "$v" \
			-o pp-m.perf 2>err &&
		echo "perun postprocessby: --bins wants a number from 1 to 1000000, not '"'"'$v'"'"'" >expect &&
		test_cmp expect err || return 1
	done &&
	test_expect_code 2 "$PERUN" postprocessby pp.perf moving-average --window " -5" \
		-o pp-m.perf 2>err &&
	echo "perun postprocessby: --window wants a number from 1 to 1000000, not '"'"' -5'"'"'" >expect &&
	test_cmp expect err && ! test -e pp-m.perf &&
	test_expect_code 2 "$PERUN" postprocessby pp.perf moving-average --decay 0x1p-3 \
		-o pp-m.perf 2>err &&
	echo "perun postprocessby: --decay wants a number in (0, 1), not '"'"'0x1p-3'"'"'" >expect &&
	test_cmp expect err && ! test -e pp-m.perf &&
	test_expect_code 2 "$PERUN" postprocessby pp.perf regressogram --window 3 \
		-o pp-m.perf 2>err &&
	echo "perun postprocessby: regressogram takes no option '"'"'--window'"'"'" >expect &&
	test_cmp expect err && ! test -e pp-m.perf &&
	"$PERUN" postprocessby pp.perf regressogram --bins 4 -o pp-m.perf >/dev/null
'

test_expect_success 'show: --expand and --compact together is a usage error' '
	test_expect_code 2 "$PERUN" show x.perf --format json --expand --compact 2>err &&
	cat >expect <<-\EOF &&
	perun show: --expand or --compact, not both
	usage: perun show PROFILE [FUNC] [--format json|summary|folded|flamegraph|
	                  tree|graph|chrome|hist] [--expand|--compact] [--include FUNC]
	                  [--depth N] [--thread TID] [--min-duration TIME] [-o FILE]
	                  [--pid PID|--per-process] [-m REV]
	EOF
	test_cmp expect err
'

test_expect_success 'parse_options: --help=x and --=x say what is wrong' '
	test_expect_code 2 "$PERUN" status --help=x 2>err &&
	cat >expect <<-\EOF &&
	perun status: --help takes no value
	usage: perun status [--short]
	EOF
	test_cmp expect err &&
	test_expect_code 2 "$PERUN" status --=x 2>err &&
	grep "^perun status: unknown option .--=x.$" err
'

test_expect_success 'stats: a subcommand refuses arguments it does not read' '
	mkdir statsrepo && git -C statsrepo init -q &&
	(cd statsrepo && "$PERUN" init >/dev/null &&
	 test_expect_code 2 "$PERUN" stats delete all x 2>../err) &&
	echo "perun stats delete all: unexpected argument '"'"'x'"'"'" >expect &&
	test_cmp expect err &&
	(cd statsrepo && test_expect_code 2 "$PERUN" stats delete file a b 2>../err) &&
	grep "^perun stats delete file: unexpected argument .b.$" err &&
	for s in sync clean list-files list-versions; do
		(cd statsrepo && test_expect_code 2 "$PERUN" stats $s x 2>../err) &&
		echo "perun stats $s: unexpected argument '"'"'x'"'"'" >expect &&
		test_cmp expect err || return 1
	done
'

test_expect_success 'log takes one REV, not the last of several' '
	test_expect_code 2 "$PERUN" log a b 2>err &&
	cat >expect <<-\EOF &&
	perun log: one REV at most, not '"'"'a'"'"' and '"'"'b'"'"'
	usage: perun log [--short] [-n N] [REV]
	EOF
	test_cmp expect err
'

test_expect_success 'run job: --help after trace prints collect'"'"'s help, not a silent exit 2' '
	"$PERUN" run job -c /nonexistent trace --help >out 2>err &&
	grep "^usage: perun collect" out && ! test -s err &&
	test_expect_code 2 "$PERUN" run job -c /nonexistent trace -s bogus 2>err &&
	grep "unknown strategy .bogus." err
'

test_expect_success 'diff with one profile says that two are needed' '
	test_expect_code 2 "$PERUN" diff -f json a.perf 2>err &&
	cat >expect <<-\EOF &&
	perun diff: two profiles, A and B, not 1
	usage: perun diff A B [--format text|json|flamegraph|hist]
	EOF
	test_cmp expect err
'

test_expect_success 'stats without a subcommand names them' '
	test_expect_code 2 "$PERUN" stats 2>err &&
	head -n 1 err >first &&
	echo "perun stats: name a subcommand: list-files, list-versions, show, compute, sync, clean or delete" >expect &&
	test_cmp expect first
'

test_done
