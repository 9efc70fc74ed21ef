#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: the run-time methods on perun's own loader and on stapbpf, on the
# same program: per-function sampling (-f NAME#N, so -op advanced) and
# dynamic probing (with reattach); each collect run by both loaders
# (--loader perun, --loader stapbpf) gives the same counts, the same
# sampling and the same partial marks; the fixtures count their own calls.
# The loader removes a disarmed probe from the kernel.
. "$SRCDIR/tests/lib.sh"
require_live

# "NAME COUNT SAMPLED PARTIAL-KEYS" per function of the summary: what the
# two loaders must agree on.
marks() {
	python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
keys = ("in_flight_at_attach", "in_flight_at_detach", "count", "sampled", "partial",
        "total", "mean", "median", "min", "max", "p95", "exclusive", "calibrated_total",
        "calibrated_mean", "calibrated_median", "calibrated_p95", "calibrated_exclusive",
        "stddev", "variance", "self", "log2_hist", "probe_entry", "probe_return", "quantiles",
        "total_outermost_only", "estimated_calls", "counted_calls")
for name, s in sorted(p["trace"]["summary"].items()):
    extra = sorted(k for k in s if k not in keys and not k.startswith("calibrated"))
    print(name, s["count"], s.get("sampled", 1), s.get("partial", False), " ".join(extra))
PY
}

# both NAME PROGRAM ARGS -- TRACE-OPTIONS: the collect on each loader, each
# exiting 0 and naming its loader in the profile; NAME-perun.marks and
# NAME-stapbpf.marks hold what each found, and must be equal (TIMED=1: a
# method that depends on time, whose counts differ: the rest must).
both() {
	name=$1 prog=$2 args=$3
	shift 4
	for l in perun stapbpf; do
		"$PERUN" collect -c "$prog" -a "$args" -o "$name-$l.perf" trace "$@" --loader "$l" \
			>"$name-$l.out" 2>"$name-$l.err" || { cat "$name-$l.err"; return 1; }
		want=$l; if test "$l" = perun; then want=perun-uprobes; fi
		test "$(profile_field "$name-$l.perf" trace.loader)" = "$want" || return 1
		marks "$name-$l.perf" >"$name-$l.marks"
		cut -d" " -f1,3- "$name-$l.marks" >"$name-$l.keys"
	done
	cat "$name-perun.err" &&
	if test -n "${TIMED:-}"; then
		test_cmp "$name-stapbpf.keys" "$name-perun.keys"
	else
		test_cmp "$name-stapbpf.marks" "$name-perun.marks"
	fi
}

test_expect_success 'build the fixtures' '
	cc -g -O1 -o deeptree "$FIXTURES/deeptree.c" &&
	./deeptree 3000 | grep "^sum " &&
	cc -g -O0 -o deeprec "$FIXTURES/deeprec.c" &&
	./deeprec 60 | grep "^deeprec 60$"
'

test_expect_success 'f#N on both loaders: one call in N per function and thread, its return paired; the loader counts every call' '
	both fn ./deeptree 3000 -- -s custom -f work -f stage1#3 -f stage5#10 -f leaf_add#7 \
		-f fmt &&
	cat >expect <<-\EOF &&
	fmt 1 1 False 
	leaf_add 858 7 False 
	stage1 1000 3 False 
	stage5 300 10 False 
	work 1 1 False 
	EOF
	test_cmp expect fn-perun.marks &&
	test "$(profile_field fn-perun.perf trace.summary.stage1.counted_calls)" = 3000 &&
	test "$(profile_field fn-perun.perf trace.summary.stage5.counted_calls)" = 3000 &&
	test "$(profile_field fn-perun.perf trace.summary.leaf_add.counted_calls)" = 6000 &&
	test "$(profile_field fn-perun.perf trace.summary.leaf_add.estimated_calls)" = 6000 &&
	! profile_field fn-stapbpf.perf trace.summary.stage1.counted_calls 2>/dev/null &&
	! grep "stapbpf runs this trace" fn-perun.err &&
	grep "^perun: stapbpf runs this trace, not perun${SQ}s loader: --loader stapbpf$" fn-stapbpf.err &&
	test "$(profile_field fn-perun.perf trace.complete)" = true &&
	! profile_field fn-perun.perf trace.loader_reason 2>/dev/null &&
	test "$(profile_field fn-stapbpf.perf trace.loader_reason)" = "--loader stapbpf"
'

test_expect_success 'f#N in a recursion: every third call of 61 nested ones, each return paired' '
	both rec ./deeprec 60 -- -s custom -f rec#3 -f main &&
	cat >expect <<-\EOF &&
	main 1 1 False 
	rec 21 3 False 
	EOF
	test_cmp expect rec-perun.marks &&
	test "$(profile_field rec-perun.perf trace.summary.rec.counted_calls)" = 61 &&
	test "$(profile_field rec-perun.perf trace.complete)" = true
'

test_expect_success '-op advanced on both loaders: the same plan, sampling and counts' '
	both adv ./deeptree 20000 -- -s userspace -op advanced &&
	grep "^leaf_add 157 256 " adv-perun.marks &&
	grep "^stage1 2500 8 " adv-perun.marks &&
	test "$(profile_field adv-perun.perf trace.complete)" = true
'

test_expect_success 'dynamic probing on both loaders: disarmed after the threshold, the same marks' '
	both dp ./deeptree 3000 -- -s custom -f work -f stage1 -f leaf_add -f fmt \
		-on dynamic-probing -oa probing-threshold 100 &&
	cat >expect <<-\EOF &&
	fmt 1 1 False 
	leaf_add 100 1 True disarmed_after
	stage1 100 1 True disarmed_after
	work 1 1 False 
	EOF
	test_cmp expect dp-perun.marks &&
	P=trace.optimization.dynamic_probing &&
	test "$(profile_field dp-perun.perf $P.disarm_by)" = remove &&
	test "$(profile_field dp-stapbpf.perf $P.disarm_by)" = handler-condition &&
	test "$(profile_field dp-perun.perf $P.disarmed)" = "$(profile_field dp-stapbpf.perf $P.disarmed)" &&
	test "$(profile_field dp-perun.perf trace.summary.stage1.disarmed_after)" = 100 &&
	grep "^perun: dynamic probing disarmed 2 probes after 100 calls, so their counts are partial: " dp-perun.err &&
	test "$(profile_field dp-perun.perf trace.complete)" = true
'

test_expect_success "perun's loader removes a disarmed probe from the kernel" '
	"$PERUN" collect -c ./deeptree -a 2000000 -o gone.perf trace -s custom -f work \
		-f stage1 -on dynamic-probing -oa probing-threshold 100 2>err &&
	cat err &&
	grep "^perun: removed 1 disarmed probe from the kernel (put back 0 times)$" err &&
	printf "stage1 100\nwork 1\n" >expect &&
	profile_counts gone.perf >actual &&
	test_cmp expect actual
'

test_expect_success 'dynamic probing with reattach on both loaders: bursts of the threshold, re-armed' '
	TIMED=1 both ra ./deeptree 200000 -- -s custom -f work -f stage1 -f fmt \
		-on dynamic-probing -oa probing-threshold 1000 -oa probing-reattach true \
		-oa probing-reattach-ms 1 &&
	P=trace.optimization.dynamic_probing.reattach.stage1 &&
	for l in perun stapbpf; do
		n=$(profile_field ra-$l.perf trace.summary.stage1.count) &&
		d=$(profile_field ra-$l.perf $P.disarmed) &&
		r=$(profile_field ra-$l.perf $P.rearmed) &&
		say "$l: stage1 recorded $n of 200000 calls in $d bursts, re-armed $r times" &&
		test "$(profile_field ra-$l.perf $P.recorded)" = "$n" &&
		test "$d" -ge 1 && test "$r" -le "$d" && test "$r" -ge "$((d - 1))" &&
		test "$n" -ge $((1000 * r)) && test "$n" -le $((1000 * (r + 1))) &&
		test "$(profile_field ra-$l.perf trace.summary.work.count)" = 1 || return 1
	done
'

test_expect_success '--aggregate with f#N: every call counted, on the loader, and said' '
	"$PERUN" collect -c ./deeptree -a 3000 -o agg.perf trace --aggregate -s custom \
		-f work -f stage1#3 >agg.out 2>agg.err || { cat agg.err; false; } &&
	cat agg.err &&
	grep "^perun: --aggregate counts and times every call: per-function sampling (NAME#N, -g) does not apply to the 1 probe that asked for it$" agg.err &&
	test "$(profile_field agg.perf trace.loader)" = perun-uprobes &&
	test "$(profile_field agg.perf trace.summary.stage1.count)" = 3000 &&
	python3 -c "import json, sys; s = json.load(open(\"agg.perf\"))[\"trace\"][\"summary\"][\"stage1\"]; sys.exit(\"sampled\" in s)"
'

test_done
