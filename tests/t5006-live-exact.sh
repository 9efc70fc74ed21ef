#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: per-event tracing through the bpf runtime records every call, or
# says exactly how many it lost, per function, and exits 3.  The fixture
# counts its own calls; bpftrace counts the same run independently.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the fixture' '
	cc -g -O1 -pthread -o exact "$FIXTURES/exact.c" &&
	cc -g -O0 -o forever "$FIXTURES/forever.c" &&
	./exact 20 8 4500 >self &&
	grep "calls fib=21891 work=36000 tiny=36000" self
'

test_expect_success 'fib(20) and 8 threads x 4500 calls: every call, per event' '
	bpftrace -e "uprobe:$TRASH/exact:fib,uprobe:$TRASH/exact:work,uprobe:$TRASH/exact:tiny { @[probe] = count(); }" >bt.out 2>&1 &
	bt=$! &&
	for i in $(seq 100); do grep -q Attaching bt.out && break; sleep 0.1; done &&
	sleep 1 &&
	"$PERUN" collect -c ./exact -a "20 8 4500" -o exact.perf trace -s custom \
		-f fib -f work -f tiny 2>err >out ||
		{ kill -INT $bt; cat err; exit 1; }
	bpftrace_stop $bt &&
	cat err bt.out &&
	grep "calls fib=21891 work=36000 tiny=36000" out &&
	profile_counts exact.perf >actual &&
	printf "fib 21891\ntiny 36000\nwork 36000\n" >expect &&
	test_cmp expect actual &&
	for f in fib work tiny; do
		want=$(sed -n "s/^@\[uprobe:.*:$f\]: //p" bt.out) &&
		got=$(profile_counts exact.perf | sed -n "s/^$f //p") &&
		echo "$f perun=$got bpftrace=$want" &&
		test "$got" = "$want" || exit 1
	done &&
	test "$(profile_field exact.perf collector_info.params.transport)" = record &&
	test "$(profile_field exact.perf trace.complete)" = true &&
	test "$(profile_field exact.perf trace.anomalies.lost_events)" = 0 &&
	test "$(profile_field exact.perf trace.anomalies.unmatched_entries)" = 0 &&
	test "$(profile_field exact.perf trace.threads)" = 9 &&
	! grep -i "warning" err
'

test_expect_success 'a function starting with a LOCK prefix: not attached, said why, exit 1' '
	objdump -d exact | grep -A1 "<locked>:" | grep -q "lock" || { echo "compiler did not start locked() with lock"; exit 0; } &&
	set +e
	"$PERUN" collect -c ./exact -a lock -o lock.perf trace -s custom -f locked -f main 2>err
	rc=$?
	set -e
	cat err &&
	test $rc = 1 &&
	grep "locked (.*LOCK or segment prefix" err &&
	grep "attached 2 of 4 probe points" err &&
	grep "locked.*recorded no call" err &&
	test "$(profile_counts lock.perf)" = "main 1"
'

test_expect_success 'children of the command are counted and said untraced' '
	cc -g -O0 -o forks "$FIXTURES/forks.c" &&
	"$PERUN" collect -c ./forks -o forks.perf trace -s custom -f job 2>err &&
	cat err &&
	grep "the command started 3 child processes; only its own process was traced" err &&
	test "$(profile_field forks.perf trace.untraced_children)" = 3 &&
	test "$(profile_counts forks.perf)" = "job 1"
'

test_expect_success 'a full buffer: exact loss per function, exit 3, --strict exit 1' '
	set +e
	"$PERUN" collect -c ./exact -a "15 8 1000" -o small.perf trace -s custom \
		-f fib -f work -f tiny --buffer-size 100 2>err
	rc=$?
	set -e
	cat err &&
	test $rc = 3 &&
	grep "warning: the trace is incomplete" err &&
	grep "raise --buffer-size" err &&
	test "$(profile_field small.perf trace.complete)" = false &&
	python3 - small.perf <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1]))["trace"]
	an = t["anomalies"]
	calls = {"fib": 1973, "work": 8000, "tiny": 8000}
	# a call with a duration is two events; one counted without a duration
	# (its return lost or never made) is an unmatched entry
	rec = sum(2 * (s["count"] - s.get("no_duration", 0)) for s in t["summary"].values())
	lost = an["lost_by_function"]
	# every event is either recorded or counted lost
	assert rec + an["unmatched_entries"] + an["unmatched_exits"] + an["lost_events"] == 2 * sum(calls.values()), (rec, an)
	assert sum(lost.values()) == an["lost_events"] > 0, an
	for f, n in calls.items():
	    got = t["summary"].get(f, {"count": 0})["count"]
	    assert 2 * got <= 2 * n and lost.get(f, 0) <= 2 * n, (f, got, lost)
	print("ok", rec, an["lost_events"])
	PY
	set +e
	"$PERUN" collect -c ./exact -a "20 8 4500" -o strict.perf trace -q -s custom \
		-f fib -f work -f tiny --buffer-size 100 --strict 2>err
	rc=$?
	set -e
	test $rc = 1 &&
	grep "warning: the trace is incomplete" err
'

test_expect_success '--buffer-size and --transport refuse nonsense' '
	for v in 0 -5 abc 1e400 100000001; do
		set +e
		"$PERUN" collect -c ./exact trace --buffer-size "$v" 2>err
		rc=$?
		set -e
		test $rc = 2 && grep "buffer-size" err || exit 1
	done &&
	set +e
	"$PERUN" collect -c ./exact trace --transport carrier-pigeon 2>err
	rc=$?
	set -e
	test $rc = 2
'

for loader in stapbpf perun; do
test_expect_success "a runtime killed mid-run: the target is stopped, exit 1, runtime_died ($loader)" '
	"$PERUN" collect -c ./forever -o died.perf trace -q -s custom -f tick --loader '$loader' 2>err &
	pid=$! &&
	wait_for_target &&
	if test '$loader' = stapbpf
	then
		rt=$(pgrep -f "stapbpf -x $(procs_in_trash) ")
	else
		rt=$(pgrep -f "perun-uprobes .*-x $(procs_in_trash) ")
	fi &&
	test -n "$rt" || { kill $pid; echo "no runtime process found"; exit 1; }
	sleep 1 &&
	kill -9 $rt &&
	start=$(date +%s) &&
	test_expect_code 1 wait $pid &&
	cat err &&
	test $(( $(date +%s) - start )) -lt 15 &&
	grep "while the command ran" err &&
	test "$(profile_field died.perf trace.runtime_died)" = true &&
	test -z "$(procs_in_trash)"
'
done

test_expect_success 'fake stapbpf whose reader dies: target stopped, exit 1, no spin' '
	start=$(date +%s) &&
	set +e
	PERUN_STAPBPF="$FIXTURES/fake-stapbpf.sh" FAKE_STAPBPF_MODE=readerdies \
		"$PERUN" collect -c ./forever -o rd.perf trace -q -s custom -f tick --loader stapbpf 2>err
	rc=$?
	set -e
	cat err &&
	test $rc = 1 &&
	test $(( $(date +%s) - start )) -lt 30 &&
	grep "reader stopped" err &&
	grep "while the command ran" err &&
	test "$(profile_field rd.perf trace.runtime_died)" = true &&
	test -z "$(procs_in_trash)" &&
	! pgrep -f "fake-stapbpf.sh" >/dev/null
'

test_expect_success 'perun waits without burning CPU' '
	"$PERUN" collect -c ./forever -o idle.perf trace -q -s custom -f tick -t 6 2>err &
	pid=$! &&
	sleep 5 &&
	ticks=$(awk "{print \$14 + \$15}" /proc/$pid/stat) &&
	{ wait $pid || :; } &&
	echo "perun used $ticks clock ticks in 5 s" &&
	test "$ticks" -lt 50
'

test_done
