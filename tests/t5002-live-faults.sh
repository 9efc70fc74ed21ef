#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: timeouts, a crashing target, Ctrl-C and kill -9 leave a profile (where
# one can be written) and nothing behind: no runtime, no target, no uprobe
# event, no temp dir.  The fake stapbpf below is for fault paths only.
. "$SRCDIR/tests/lib.sh"
require_live
export TMPDIR="$TRASH/tmp"
mkdir -p "$TMPDIR"

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'a timeout terminates a command that never ends' '
	start=$(date +%s) &&
	"$PERUN" collect -c ./forever -o forever.perf trace -q -s custom -f tick -t 2 &&
	end=$(date +%s) &&
	test $((end - start)) -lt 20 &&
	test "$(profile_field forever.perf trace.timed_out)" = true &&
	n=$(profile_counts forever.perf | sed -n "s/^tick //p") &&
	echo "tick calls: $n" && test "$n" -gt 50 &&
	assert_nothing_left 1 &&
	test -z "$(ls "$TMPDIR")"
'

test_expect_success 'a segfaulting target still yields a profile, exit 139' '
	set +e
	"$PERUN" collect -c ./crash -o crash.perf trace -s userspace 2>err
	rc=$?
	set -e
	cat err &&
	test $rc = 139 &&
	grep "killed by signal 11" err &&
	test "$(profile_field crash.perf trace.target.signal)" = 11 &&
	test "$(profile_counts crash.perf | sed -n "s/^ok //p")" = 3 &&
	test "$(profile_field crash.perf trace.anomalies.unmatched_entries)" = 2 &&
	assert_nothing_left 1
'

test_expect_success 'SIGINT (Ctrl-C) stops the run and keeps what was traced' '
	"$PERUN" collect -c ./forever -o int.perf trace -q -s custom -f tick 2>err &
	pid=$! &&
	wait_for_target &&
	sleep 1.5 &&
	kill -INT $pid &&
	test_expect_code 130 wait $pid &&
	test "$(profile_field int.perf trace.interrupted)" = true &&
	n=$(profile_counts int.perf | sed -n "s/^tick //p") && test "$n" -gt 10 &&
	assert_nothing_left 1 &&
	test -z "$(ls "$TMPDIR")"
'

for loader in stapbpf perun; do
test_expect_success "kill -9 of perun mid-run leaves nothing behind (loader $loader)" '
	"$PERUN" collect -c ./forever -o killed.perf trace -q -s custom -f tick --loader '$loader' &
	pid=$! &&
	wait_for_target &&
	sleep 1 &&
	if test '$loader' = stapbpf
	then
		grep stapprobe /sys/kernel/tracing/uprobe_events
	else
		pgrep -f "perun-uprobes .*$TMPDIR"
	fi &&
	ls "$TMPDIR" &&
	test -n "$(ls "$TMPDIR")" &&
	kill -9 $pid &&
	{ wait $pid || :; } || exit 1
	for i in $(seq 100); do
		pgrep -x stapbpf >/dev/null || pgrep -f "perun-uprobes .*$TMPDIR" >/dev/null ||
			[ -n "$(procs_in_trash)" ] || break
		sleep 0.1
	done
	assert_nothing_left 1 &&
	! pgrep -f "perun-uprobes .*$TMPDIR" &&
	test -z "$(ls "$TMPDIR")" &&
	! test -e killed.perf
'
done

# What a perun killed while it writes the profile leaves (its temp dir under
# TMPDIR, the profile's temp file beside it) the next run removes; what a
# live perun holds, what is not perun's and what is not a file stays.
test_expect_success 'kill -9 while the profile is written: the next run removes what it left' '
	command -v gdb >/dev/null || { echo "needs gdb (apt-get install gdb)"; exit 1; } &&
	rm -rf "$TMPDIR"/* &&
	# stopped where the profile is being written, then SIGKILLed (gdb kill)
	gdb -q -batch -ex "break profile_writer_close" -ex run -ex kill \
		--args "$PERUN" collect -c ./forever -o w.perf trace -q -s custom -f tick -t 1 \
		>gdb.out 2>&1 &&
	grep "Breakpoint 1, profile_writer_close" gdb.out &&
	ls -d w.perf.tmp* "$TMPDIR"/perun-collect-* >left &&
	cat left &&
	test_line_count = 2 left &&
	! test -e w.perf &&
	# one a live perun holds (locked), one without the lock mark, a link
	echo live >w.perf.tmpLiVe01 &&
	{ flock w.perf.tmpLiVe01 sleep 300 & echo $! >holder1; } &&
	mkdir -m 700 "$TMPDIR/perun-collect-live01" "$TMPDIR/perun-collect-other" &&
	: >"$TMPDIR/perun-collect-live01/.perun-lock" &&
	{ flock "$TMPDIR/perun-collect-live01" sleep 300 & echo $! >holder2; } &&
	echo mine >precious && ln -s precious w.perf.tmpLink01 &&
	for i in $(seq 100); do
		flock -n w.perf.tmpLiVe01 true || flock -n "$TMPDIR/perun-collect-live01" true ||
			break
		sleep 0.1
	done &&
	! flock -n w.perf.tmpLiVe01 true && ! flock -n "$TMPDIR/perun-collect-live01" true &&
	"$PERUN" collect -c ./forever -o w.perf trace -s custom -f tick -t 1 2>err &&
	cat err &&
	kill $(cat holder1) $(cat holder2) &&
	sed -n "s/^perun: removed \(.*\), left by a perun that was killed$/\1/p" err |
		sed "s|^\./||; s|^$TRASH/||" | sort >removed &&
	sed "s|^$TRASH/||" left | sort >expect &&
	test_cmp expect removed &&
	ls -a w.perf* | sort >actual &&
	cat >expect <<-\EOF &&
	w.perf
	w.perf.tmpLiVe01
	w.perf.tmpLink01
	EOF
	test_cmp expect actual &&
	test "$(cat precious)" = mine &&
	ls "$TMPDIR" >actual &&
	cat >expect <<-\EOF &&
	perun-collect-live01
	perun-collect-other
	EOF
	test_cmp expect actual &&
	# the later tests check that perun leaves nothing in TMPDIR
	rm -rf "$TMPDIR/perun-collect-live01" "$TMPDIR/perun-collect-other"
'

test_expect_success 'an event flood: recorded exactly; printed, any loss is reported' '
	cc -O1 -g -o loop "$SRCDIR/bench/loop.c" &&
	"$PERUN" collect -c ./loop -a 100000 -o flood.perf trace -s custom -f f 2>err &&
	cat err &&
	test "$(profile_counts flood.perf)" = "f 100000" &&
	test "$(profile_field flood.perf trace.complete)" = true &&
	rc=0 &&
	{ "$PERUN" collect -c ./loop -a 100000 -o flood-print.perf trace -s custom -f f \
		--transport print 2>err || rc=$?; } &&
	cat err &&
	n=$(profile_counts flood-print.perf | sed -n "s/^f //p") &&
	echo "printed: recorded ${n:-0} of 100000, exit $rc" &&
	if [ "${n:-0}" -lt 100000 ]; then
		test $rc = 3 -o $rc = 1 &&
		grep "warning: the trace is incomplete" err &&
		test "$(profile_field flood-print.perf trace.complete)" = false
	else
		test $rc = 0
	fi &&
	"$PERUN" collect -c ./loop -a 100000 -o flood-agg.perf trace -q -s custom -f f --aggregate &&
	test "$(profile_counts flood-agg.perf)" = "f 100000" &&
	assert_nothing_left
'

test_expect_success 'fake stapbpf crash: clear error, exit 1, nothing left' '
	set +e
	PERUN_STAPBPF="$FIXTURES/fake-stapbpf.sh" FAKE_STAPBPF_MODE=crash \
		"$PERUN" collect -c ./crash -o fake.perf trace -q -s custom -f ok --loader stapbpf 2>err
	rc=$?
	set -e
	cat err &&
	test $rc = 1 &&
	grep "fake stapbpf crashing on purpose" err &&
	! test -e fake.perf &&
	test -z "$(ls "$TMPDIR")"
'

test_expect_success 'fake stapbpf garbage: anomalies and lost events counted' '
	printf "s 100 0 0\n0 0 10\n1 0 20\nq\n" >raw &&
	PERUN_STAPBPF="$FIXTURES/fake-stapbpf.sh" FAKE_STAPBPF_MODE=garbage FAKE_STAPBPF_RAW=raw \
		"$PERUN" collect -c ./crash -o garbage.perf trace -q -s custom -f ok --loader stapbpf || :
	test "$(profile_field garbage.perf trace.anomalies.malformed_lines)" = 3 &&
	test "$(profile_field garbage.perf trace.anomalies.truncated_lines)" = 1 &&
	test "$(profile_field garbage.perf trace.anomalies.lost_events)" = 17 &&
	test "$(profile_counts garbage.perf)" = "ok 1"
'

test_expect_success 'fake stapbpf that ignores SIGINT is killed after the grace time' '
	start=$(date +%s) &&
	PERUN_STAPBPF="$FIXTURES/fake-stapbpf.sh" FAKE_STAPBPF_MODE=hang \
		"$PERUN" collect -c ./crash -o hang.perf trace -q -s custom -f ok -t 1 --loader stapbpf || true
	end=$(date +%s) &&
	test $((end - start)) -lt 20 &&
	! pgrep -f fake-stapbpf.sh &&
	test -z "$(ls "$TMPDIR")"
'

test_expect_success 'a runtime still detaching past stop_timeout is waited for, not killed' '
	off=$(nm crash | awk "\$3 == \"ok\" { print \$1 }" | sed "s/^0*//") &&
	test -n "$off" &&
	start=$(date +%s) &&
	PERUN_STAPBPF="$FIXTURES/fake-stapbpf.sh" FAKE_STAPBPF_MODE=slowdetach \
		FAKE_STAPBPF_EVENTS=15 FAKE_STAPBPF_TARGET="$TRASH/crash:0x$off" \
		"$PERUN" collect -c ./crash -o slow.perf trace -s custom -f ok --loader stapbpf 2>err || true
	end=$(date +%s) &&
	cat err &&
	test $((end - start)) -ge 15 &&
	! grep "stopped before its end marker" err &&
	test -z "$(grep "stapprobe_" /sys/kernel/tracing/uprobe_events | grep "$TRASH/crash")"
'

test_expect_success 'a runtime still working past its stop grace (a busy host) is waited for' '
	printf "s 100 0 0\n0 0 10\n1 0 20\nq\n" >raw &&
	start=$(date +%s) &&
	PERUN_STAPBPF="$FIXTURES/fake-stapbpf.sh" FAKE_STAPBPF_MODE=slowend FAKE_STAPBPF_RAW=raw \
		FAKE_STAPBPF_BUSY=12 "$PERUN" collect -c ./crash -o busy.perf trace -s custom -f ok \
		--loader stapbpf 2>err || :
	end=$(date +%s) &&
	cat err &&
	test $((end - start)) -ge 12 &&
	! grep "end marker" err &&
	test "$(profile_field busy.perf trace.anomalies.missing_end)" = false &&
	test "$(profile_counts busy.perf)" = "ok 1"
'

test_expect_success 'a runtime killed at the end of its stop grace is named as such' '
	PERUN_STAPBPF="$FIXTURES/fake-stapbpf.sh" FAKE_STAPBPF_MODE=hang \
		"$PERUN" collect -c ./crash -o hang2.perf trace -s custom -f ok --loader stapbpf \
		2>err || :
	cat err &&
	grep "the trace is incomplete (how many events were lost is unknown): .*fake-stapbpf.sh had not ended 1[0-9] s after it was asked to stop, showing no work (writing, detaching, waiting in the kernel), and was killed before its end marker" err
'

test_done
