#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: the optimization layer's run-optimize methods on the bpf runtime.
# Dynamic probing disarms a probe past its threshold and marks its count
# partial; timed sampling records part of the calls and says the trace is
# sampled (exit 0, complete).  Methods whose requirement is missing (the call
# graph, stats) switch off with a notice, never an error.
. "$SRCDIR/tests/lib.sh"
require_live

# profile_field, with list indices too (methods.0.name).
field() {
	python3 - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)
PY
}

test_expect_success 'build the fixture' '
	cc -g -O1 -o optimize "$FIXTURES/optimize.c" &&
	./optimize 100000 >self &&
	grep "calls f=100000 g=10" self
'

test_expect_success 'dynamic probing: f disarmed after 1000 of 100000 calls, marked partial' '
	"$PERUN" collect -c ./optimize -a 100000 -o dp.perf trace --loader stapbpf -s custom -f f -f g \
		-on dynamic-probing -oa probing-threshold 1000 2>err >out &&
	cat err &&
	grep "calls f=100000 g=10" out &&
	grep "dynamic probing disarmed 1 probe after 1000 calls, so their counts are partial: f" err &&
	profile_counts dp.perf >actual &&
	printf "f 1000\ng 10\n" >expect &&
	test_cmp expect actual &&
	test "$(profile_field dp.perf trace.summary.f.partial)" = true &&
	test "$(profile_field dp.perf trace.summary.f.disarmed_after)" = 1000 &&
	! profile_field dp.perf trace.summary.g.partial 2>/dev/null &&
	test "$(profile_field dp.perf trace.optimization.dynamic_probing.disarmed)" = "{\"f\": 1000}" &&
	test "$(profile_field dp.perf trace.complete)" = true &&
	test "$(profile_field dp.perf trace.sampled)" = true &&
	test "$(profile_field dp.perf trace.optimization.dynamic_probing.disarm_by)" = handler-condition &&
	test "$(field dp.perf collector_info.params.optimization.methods.0.name)" = dynamic-probing &&
	test "$(field dp.perf collector_info.params.optimization.methods.0.params.probing-threshold)" = 1000 &&
	"$PERUN" show dp.perf --format summary >sum &&
	grep "^f  *1000~ " sum &&
	grep "^~ f: disarmed after 1000 calls (dynamic probing): the later ones were not recorded$" sum
'

test_expect_success 'dynamic probing under its threshold changes nothing: exact, not sampled' '
	"$PERUN" collect -c ./optimize -a 500 -o dp2.perf trace --loader stapbpf -s custom -f f -f g \
		-on dynamic-probing -oa probing-threshold 1000 2>err &&
	cat err &&
	! grep "disarmed" err &&
	printf "f 500\ng 10\n" >expect &&
	profile_counts dp2.perf >actual &&
	test_cmp expect actual &&
	test "$(profile_field dp2.perf trace.sampled)" = false &&
	test "$(profile_field dp2.perf trace.optimization.dynamic_probing.disarmed)" = "{}"
'

test_expect_success 'reattach: f re-armed in doubling intervals; the profile holds what the script recorded' '
	"$PERUN" collect -c ./optimize -a 100000 -o ra.perf trace --loader stapbpf -s custom -f f -f g \
		-on dynamic-probing -oa probing-threshold 1000 -oa probing-reattach true \
		-oa probing-reattach-ms 10 2>err >out &&
	cat err &&
	grep "calls f=100000 g=10" out &&
	grep "dynamic probing disarmed 1 probe after bursts of 1000 calls and re-armed them [0-9]* times\{0,1\} (first after 10 ms, doubling), so their counts are partial: f" err &&
	dis=$(profile_field ra.perf trace.optimization.dynamic_probing.reattach.f.disarmed) &&
	re=$(profile_field ra.perf trace.optimization.dynamic_probing.reattach.f.rearmed) &&
	rec=$(profile_field ra.perf trace.optimization.dynamic_probing.reattach.f.recorded) &&
	n=$(profile_counts ra.perf | sed -n "s/^f //p") &&
	say "bpf reattach: f disarmed $dis times, re-armed $re times, $rec of 100000 calls recorded" &&
	test "$re" -ge 1 &&
	{ test "$dis" = "$re" || test "$dis" = $((re + 1)); } &&
	test "$n" = "$rec" &&
	test "$rec" -ge $((1000 * dis)) && test "$rec" -le $((1000 * dis + 1000)) &&
	test "$rec" -lt 100000 &&
	test "$(profile_counts ra.perf | sed -n "s/^g //p")" = 10 &&
	test "$(profile_field ra.perf trace.summary.f.partial)" = true &&
	test "$(profile_field ra.perf trace.summary.f.recorded_in_bursts)" = "$rec" &&
	test "$(profile_field ra.perf trace.summary.f.rearmed_times)" = "$re" &&
	! profile_field ra.perf trace.summary.g.partial 2>/dev/null &&
	test "$(profile_field ra.perf trace.optimization.dynamic_probing.disarm_by)" = handler-condition &&
	test "$(profile_field ra.perf trace.complete)" = true &&
	test "$(profile_field ra.perf trace.sampled)" = true &&
	test "$(profile_field ra.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field ra.perf trace.anomalies.unmatched_exits)" = 0 &&
	"$PERUN" show ra.perf --format summary >sum &&
	grep "^~ f: disarmed $dis times and re-armed $re times (dynamic probing, reattach): calls recorded in bursts only$" sum
'

test_expect_success 'recursion: a disarmed fib keeps every recorded call whole (the open-call rule)' '
	cc -g -O1 -o fibn "$FIXTURES/fibn.c" &&
	"$PERUN" collect -c ./fibn -a 20 -o fib.perf trace --loader stapbpf -s custom -f fib \
		-on dynamic-probing -oa probing-threshold 1000 2>err >out &&
	cat err &&
	grep "fib(20) = 6765" out &&
	test "$(profile_counts fib.perf)" = "fib 1000" &&
	test "$(profile_field fib.perf trace.optimization.dynamic_probing.disarm_by)" = handler-condition &&
	test "$(profile_field fib.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field fib.perf trace.anomalies.unmatched_exits)" = 0 &&
	"$PERUN" collect -c ./fibn -a 22 -o fibr.perf trace --loader stapbpf -s custom -f fib \
		-on dynamic-probing -oa probing-threshold 500 -oa probing-reattach true \
		-oa probing-reattach-ms 1 2>err >out &&
	cat err &&
	rec=$(profile_field fibr.perf trace.optimization.dynamic_probing.reattach.fib.recorded) &&
	test "$(profile_counts fibr.perf)" = "fib $rec" &&
	test "$(profile_field fibr.perf trace.complete)" = true &&
	test "$(profile_field fibr.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field fibr.perf trace.anomalies.unmatched_exits)" = 0
'

test_expect_success 'reattach without a threshold: Table A.4 predicts 0.2 x 100000' '
	"$PERUN" collect -c ./optimize trace -s custom -f f -on dynamic-probing \
		-oa probing-reattach true --script-only >ra.stp &&
	grep "past probing-threshold (20000) in one armed burst" ra.stp &&
	grep "re-armed after an interval that starts at 10 ticks of" ra.stp &&
	"$PERUN" collect -c ./optimize trace -s custom -f f -on dynamic-probing \
		-oa probing-reattach true -oa probing-threshold 500 --script-only >ra2.stp &&
	grep "past probing-threshold (500) in one armed burst" ra2.stp
'

test_expect_success 'timed sampling: fewer calls than made, the trace says sampled, exit 0' '
	"$PERUN" collect -c ./optimize -a 200000 -o ts.perf trace -s custom -f f -f g \
		-on timed-sampling -oa timed-sample-freq 20 --loader stapbpf 2>err >out &&
	cat err &&
	grep "calls f=200000 g=10" out &&
	grep "the trace is sampled: timed sampling recorded calls only in its gather windows (50 ms on, 50 ms off)" err &&
	n=$(profile_counts ts.perf | sed -n "s/^f //p") &&
	echo "f recorded $n of 200000" &&
	test "$n" -gt 0 && test "$n" -lt 200000 &&
	test "$(profile_field ts.perf trace.complete)" = true &&
	test "$(profile_field ts.perf trace.sampled)" = true &&
	test "$(profile_field ts.perf trace.summary.f.sampled_by)" = timed-sampling &&
	test "$(profile_field ts.perf trace.optimization.timed_sampling.flips)" -gt 1 &&
	test "$(profile_field ts.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field ts.perf trace.anomalies.unmatched_exits)" = 0 &&
	"$PERUN" show ts.perf --format summary >sum &&
	grep "^~ f: timed sampling: calls recorded in its gather windows only$" sum
'

test_expect_success 'timed sampling that recorded no call at all: exit 1, and why' '
	test_expect_code 1 "$PERUN" collect -c ./optimize -a 0 -o ts0.perf trace -s custom \
		-f h -on timed-sampling -oa timed-sample-freq 1000 --loader stapbpf 2>err &&
	cat err &&
	grep "timed sampling recorded no call: the command ran only while the probes were dormant, or called none of the 1 functions traced" err
'

# f's 2000 calls take over 4 ms, so some fall in a 1 ms gather window
# whenever the command starts; g's 10 calls at the start may all fall in a
# dormant one (with -a 10 the whole command could, an error then)
test_expect_success 'a named function timed sampling never caught is not an error' '
	"$PERUN" collect -c ./optimize -a 2000 -o ts2.perf trace -s custom -f f -f g \
		-on timed-sampling -oa timed-sample-freq 1000 --loader stapbpf 2>err &&
	cat err &&
	! grep "recorded no call" err
'

test_expect_success '-op basic on a first run: cg-shaping runs, baseline-dynamic waits for stats, -f functions stay' '
	"$PERUN" collect -c ./optimize -a 100 -o basic.perf trace -s custom -f f -f g \
		-op basic 2>err &&
	cat err &&
	! grep "cg-shaping switched off" err &&
	grep "^perun: optimization baseline-dynamic switched off: no dynamic stats of an earlier collect$" err &&
	printf "f 100\ng 10\n" >expect &&
	profile_counts basic.perf >actual &&
	test_cmp expect actual &&
	test "$(profile_field basic.perf collector_info.params.optimization.pipeline)" = basic &&
	test "$(field basic.perf collector_info.params.optimization.methods.0.name)" = cg-shaping &&
	test "$(field basic.perf collector_info.params.optimization.pre_optimize.probes_after)" = 2 &&
	test "$(profile_field basic.perf trace.sampled)" = false
'

test_expect_success 'in a perun repository the second collect has stats: baseline-dynamic runs' '
	mkdir repo && cp optimize repo/ && cd repo &&
	git init -q && git config user.email t@example.org && git config user.name t &&
	echo x >f && git add f && git commit -qm one &&
	"$PERUN" init >/dev/null &&
	"$PERUN" collect -c ./optimize -a 100 -o one.perf trace -s custom -f f -op basic 2>err &&
	cat err &&
	grep "^perun: optimization baseline-dynamic switched off: no dynamic stats of an earlier collect$" err &&
	"$PERUN" collect -c ./optimize -a 100 -o two.perf trace -s custom -f f -op basic 2>err &&
	cat err &&
	! grep "switched off" err &&
	grep "^perun: pre-optimize: 1 of 1 probes left: cg-shaping (strict) removed 0, baseline-dynamic removed 0$" err
'

test_expect_success '-op full with -off dynamic-probing, and --aggregate turns the gates off' '
	"$PERUN" collect -c ./optimize -a 100 -o full.perf trace --loader stapbpf -s custom -f f -f g \
		-op full -off dynamic-probing 2>err &&
	cat err &&
	! grep "dynamic-probing" err &&
	! field full.perf collector_info.params.optimization.methods | grep dynamic-probing &&
	test "$(field full.perf collector_info.params.optimization.methods.0.name)" = cg-shaping &&
	"$PERUN" collect -c ./optimize -a 100 -o agg.perf trace -s custom -f f -f g --aggregate \
		-on dynamic-probing 2>err &&
	cat err &&
	grep "^perun: optimization dynamic-probing switched off: no per-call records (not --aggregate)$" err &&
	printf "f 100\ng 10\n" >expect &&
	profile_counts agg.perf >actual &&
	test_cmp expect actual
'

test_expect_success '--optimization-reset-cache removes the cached analyses; -cache-off reads afresh' '
	"$PERUN" collect -c ./optimize trace -s custom -f f --script-only >/dev/null &&
	test -d "$PERUN_CACHE_DIR/targets" &&
	"$PERUN" collect -c ./optimize trace -s custom -f f --script-only \
		--optimization-reset-cache --optimization-cache-off >/dev/null 2>err &&
	cat err &&
	grep "removed the cached optimization data in .*/targets" err &&
	! test -d "$PERUN_CACHE_DIR/targets"
'

test_expect_success 'bad optimization options: exit 2 naming the fix' '
	for a in "-on nosuch" "-off nosuch" "-op fastest" "-oa probing-threshold many" \
		 "-oa nosuch 1" "-oa timed-sample-freq 0" "-oa probing-reattach-ms 0" "-oa probing-threshold"; do
		set +e
		"$PERUN" collect -c ./optimize -o bad.perf trace -s custom -f f $a 2>err
		rc=$?
		set -e
		cat err
		test $rc = 2 || { echo "$a: exit $rc"; exit 1; }
	done
'

test_done
