#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Names perun did not choose (a function's, a profile file's) reach a
# terminal and a Markdown page escaped: a control character as \xNN, so an
# ESC or BEL cannot drive the terminal and a newline cannot end a table row
# or a code span.  perun add refuses a file whose name holds a control
# character: push would publish it and every other host's fetch refuse it.
# No tracing.
. "$SRCDIR/tests/lib.sh"
GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# mkprof FILE FACTOR: main calling "work" 10 times, "work" renamed to
# $HOSTILE, every amount times FACTOR
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
	python3 - "$1.tmp" "$1" "$2" <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload="")
	p["chunks"]["uids"] = ["wo\nrk|`x`\x1b]0;T\x07" if u == "work" else u
	                       for u in p["chunks"]["uids"]]
	for c in p["snapshots"][0]["calls"]:
	    c["amount"] *= int(sys.argv[3])
	json.dump(p, open(sys.argv[2], "w"))
	PY
	rm "$1.tmp"
}

test_expect_success 'two profiles whose function name holds a newline, |, ` and ESC/BEL' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	mkprof a.perf 1 && mkprof b.perf 3
'

test_expect_success 'show --format folded escapes control characters' '
	"$PERUN" show --format folded a.perf >actual &&
	cat >expect <<-\EOF &&
	main 110
	main;wo\x0ark|`x`\x1b]0_T\x07 10000
	EOF
	test_cmp expect actual
'

test_expect_success 'check --format markdown: a newline, | or ` cannot end a row or code span' '
	cp a.perf "$(printf "a\nb.perf")" &&
	"$PERUN" check --format markdown "$(printf "a\nb.perf")" b.perf >actual &&
	cat >expect <<-\EOF &&
	### perun check: 0 degradations, 0 optimizations, 4 undecided

	`a\x0ab.perf` → `b.perf`, threshold 10%, confidence 99% (runs)

	#### trace ./app

	1 → 1 runs

	| change | time | context | ratio | interval | baseline | target | runs | decided by |
	|---|---|---|---:|---|---:|---:|---:|---|
	| undecided | self | `main` | +18216.2% | - | 110 ns | 20.3 us | 1/1 | runs |
	| undecided | inclusive | `main` | +200.0% | - | 10.1 us | 30.3 us | 1/1 | runs |
	| undecided | self | `main;wo\x0ark\|'"'"'x'"'"'\x1b]0_T\x07` | +199.8% | - | 1e+03 ns | 3 us | 1/1 | runs |
	| undecided | inclusive | `main;wo\x0ark\|'"'"'x'"'"'\x1b]0_T\x07` | +199.8% | - | 1e+03 ns | 3 us | 1/1 | runs |
	EOF
	test_cmp expect actual
'

test_expect_success 'check (text) escapes the file names and contexts it prints' '
	"$PERUN" check --all "$(printf "a\nb.perf")" b.perf >out &&
	! grep -q "$(printf "[\033\007]")" out &&
	{ head -n 1 out && sed -n "s/.* runs  \([^ ]*\) .*/\1/p" out; } >actual &&
	cat >expect <<-\EOF &&
	a\x0ab.perf -> b.perf: trace ./app
	main
	main
	main;wo\x0ark|`x`\x1b]0_T\x07
	main;wo\x0ark|`x`\x1b]0_T\x07
	EOF
	test_cmp expect actual
'

test_expect_success 'a repository' '
	mkdir repo && cd repo && git init -q && echo 1 >f && git add f && git commit -q -m one &&
	"$PERUN" init >/dev/null
'

test_expect_success 'add refuses a profile file whose name holds a control character' '
	cd repo && mkdir -p "$(printf "d\033]0;T\007")" &&
	name="$(printf "d\033]0;T\007/p\033[2Jx.perf")" &&
	cp ../a.perf "$name" &&
	test_expect_code 1 "$PERUN" add -m HEAD "$name" >out 2>err &&
	! test -s out &&
	echo "perun: d\\x1b]0;T\\x07/p\\x1b[2Jx.perf: refusing to register a profile so named: it holds a control character; rename the file" >expect &&
	test_cmp expect err &&
	test -f "$name" &&
	"$PERUN" status >actual 2>err && ! test -s err
'

test_expect_success 'add says a registered name escaped (C1 control refused too)' '
	cd repo &&
	name="$(printf "p\302\233x.perf")" && cp ../a.perf "$name" &&
	test_expect_code 1 "$PERUN" add -m HEAD "$name" >out 2>err &&
	echo "perun: p\\xc2\\x9bx.perf: refusing to register a profile so named: it holds a control character; rename the file" >expect &&
	test_cmp expect err &&
	mkdir "$(printf "e\033")" && cp ../a.perf "$(printf "e\033")/ok.perf" &&
	"$PERUN" add -m HEAD "$(printf "e\033")/ok.perf" >actual &&
	sed "s/(object [0-9a-f]*)/(object X)/;s/for [0-9a-f]* as/for C as/" actual >actual.n &&
	echo "registered ok.perf for C as 0@i (object X)" >expect &&
	test_cmp expect actual.n
'

test_done
