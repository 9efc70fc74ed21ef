#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: source-line probes (-d FILE:LINE) on perun's own loader and on
# stapbpf give the same counts: a line's probe goes where SystemTap's
# statement probe goes, the first address of the line in each function, so
# a loop's body line counts its iterations and its header line once.
. "$SRCDIR/tests/lib.sh"
require_live

# "NAME COUNT PARTIAL" per entry of the summary, and the loader that ran.
marks() {
	python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print("loader", p["trace"]["loader"], "complete", p["trace"]["complete"])
for name, s in sorted(p["trace"]["summary"].items()):
    print(name, s["count"], s.get("partial", False))
PY
}

test_expect_success 'build the fixture (-O1: the loop header line is split)' '
	cc -g -O1 -o deeptree "$FIXTURES/deeptree.c" &&
	./deeptree 40 | grep "^sum "
'

# stage1 runs once per iteration of work's loop (line 30), the loop's
# header (line 29) is entered once, stage5 (line 15) once per stage1.
for l in perun stapbpf; do
	test_expect_success "lines and a function on --loader $l: the fixture's counts" '
		"$PERUN" collect -c ./deeptree -a 40 -o line-'$l'.perf trace -s custom \
			-d deeptree.c:29 -d deeptree.c:30 -d deeptree.c:15 -f stage1 \
			--loader '$l' >out 2>err &&
		grep "^perun: attached 5 of 5 probe points" err &&
		marks line-'$l'.perf | sed "s/perun-uprobes/perun/" >line-'$l'.marks &&
		cat >expect <<-EOF &&
		loader '$l' complete True
		deeptree.c:15 40 False
		deeptree.c:29 1 False
		deeptree.c:30 40 False
		stage1 40 False
		EOF
		test_cmp expect line-'$l'.marks
	'
done

test_expect_success '--aggregate with lines on both loaders: the same counts' '
	for l in perun stapbpf; do
		"$PERUN" collect -c ./deeptree -a 40 -o agg-$l.perf trace -s custom \
			-d deeptree.c:29 -d deeptree.c:30 -f stage1 --aggregate --loader $l \
			>out 2>err-$l || { cat err-$l; return 1; }
		marks agg-$l.perf | sed 1d >agg-$l.marks || return 1
	done &&
	! grep "stapbpf runs this trace" err-perun &&
	cat >expect <<-\EOF &&
	deeptree.c:29 1 False
	deeptree.c:30 40 False
	stage1 40 False
	EOF
	test_cmp expect agg-perun.marks &&
	test_cmp expect agg-stapbpf.marks
'

test_expect_success 'a line with no code: nothing attached on the loader, exit 1, and why' '
	test_expect_code 1 "$PERUN" collect -c ./deeptree -a 2 -o none.perf trace -s custom \
		-d deeptree.c:28 --loader perun >out 2>err &&
	cat err &&
	grep "attached 0 of 1 probe points" err &&
	grep "deeptree.c:28 (.*): no code at that line" err &&
	grep "no probe attached" err
'

test_done
