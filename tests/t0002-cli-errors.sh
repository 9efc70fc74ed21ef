#!/bin/sh
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

test_expect_success 'a missing binary' '
	expect_fail 1 "$PERUN" collect -c ./nope -o x.perf trace &&
	grep "nope: command not found" err && ! test -e x.perf
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
		grep "no function symbols (stripped binary)" err
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

test_expect_success 'command substitution in -a is refused' '
	expect_fail 2 "$PERUN" collect -c ./m -a "\$(id)" trace --script-only &&
	grep "command substitution is not allowed" err
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

test_done
