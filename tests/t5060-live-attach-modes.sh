#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: every kind of collect attaches to a running service on perun's own
# loader, not only plain recording.  The service (tests/fixtures/service.c,
# three worker threads) runs before perun and after it; perun attaches by
# pid with each mode in turn (plain recording, per-function sampling
# handle#3, --aggregate, dynamic probing, timed sampling, the overhead
# budget, a source-line probe), 600 requests are served while attached (in
# 6 bursts 30 ms apart, so that timed sampling's 50 ms windows see some),
# and Ctrl-C detaches.  Each trace ran on the loader (trace.loader), exits
# 0, counts what the mode says it counts, marks what it left out, and leaves
# the service serving.  An untraced twin of the binary is timed before and
# during each trace: the loader binds its probes to the traced process, so
# the twin pays no trap whatever the mode (ratio in the output).
. "$SRCDIR/tests/lib.sh"
require_live

# the twin's own time for 200,000 calls of handle (its median of 3)
twin() {
	for i in 1 2 3; do ./service --bench 200000; done |
		sed -n "s/^bench 200000 ns //p" | sort -n | sed -n 2p
}

test_expect_success 'build the service' '
	cc -g -O1 -pthread -o service "$FIXTURES/service.c" &&
	grep -n "sink += x;" "$FIXTURES/service.c" | cut -d: -f1 >line &&
	test -s line
'

(cd "$TRASH" && rm -f in && mkfifo in)
cd "$TRASH" && { ./service <in >out 2>&1 & echo $! >service.pid; } && exec 3>in && cd - >/dev/null

# serve N: N more requests, waited for (the total kept in a file: a test's
# body runs in a subshell)
serve() {
	total=$(($(cat served 2>/dev/null || echo 0) + $1)) &&
	echo "$1" >&3 && wait_line out "served $1 total $total" && echo "$total" >served
}

# attach NAME TRACE-OPTIONS...: attach with those options, serve 600
# requests, time the twin meanwhile, Ctrl-C; NAME.perf, NAME.err,
# NAME.status; the twin's ratio appended to ratios
attach() {
	name=$1
	shift
	before=$(twin) &&
	rm -f "$name.err" &&
	{ "$PERUN" collect --pid "$(cat service.pid)" -o "$name.perf" trace "$@" \
		2>"$name.err" & echo $! >perun.pid; } &&
	wait_line "$name.err" "^perun: attached" &&
	during=$(twin) &&
	for k in 1 2 3 4 5 6; do serve 100 && sleep 0.03 || return 1; done &&
	kill -INT "$(cat perun.pid)" &&
	status=0 && wait "$(cat perun.pid)" || status=$?
	echo "$status" >"$name.status" &&
	cat "$name.err" &&
	echo "$name: twin $before ns before, $during ns during ($(python3 -c \
		"print(round($during / $before, 2))")x)" >>ratios &&
	test "$(profile_field "$name.perf" trace.loader)" = perun-uprobes &&
	python3 -c "import sys; sys.exit(0 if $during <= 3 * $before else 1)" &&
	serve 1
}

test_expect_success 'the service is up' '
	wait_line out ready && serve 10
'

test_expect_success 'plain recording: exact' '
	attach rec -s custom -f handle -f parse -f reply &&
	test "$(cat rec.status)" = 0 &&
	printf "handle 600\nparse 600\nreply 600\n" >expect &&
	profile_counts rec.perf >actual && test_cmp expect actual
'

test_expect_success 'handle#3: one call in 3 per thread, said sampled, every call counted; the others exact' '
	attach samp -s custom -f "handle#3" -f parse &&
	test "$(cat samp.status)" = 0 &&
	n=$(profile_counts samp.perf | sed -n "s/^handle //p") &&
	test "$n" -ge 200 && test "$n" -le 203 &&
	test "$(profile_counts samp.perf | sed -n "s/^parse //p")" = 600 &&
	test "$(profile_field samp.perf trace.summary.handle.sampled)" = 3 &&
	test "$(profile_field samp.perf trace.summary.handle.counted_calls)" = 600 &&
	test "$(profile_field samp.perf trace.summary.handle.estimated_calls)" = 600
'

test_expect_success '--aggregate: every call, summaries kept in the kernel' '
	attach agg --aggregate -s custom -f handle -f parse &&
	test "$(cat agg.status)" = 0 &&
	grep "summaries kept in the kernel" agg.err &&
	printf "handle 600\nparse 600\n" >expect &&
	profile_counts agg.perf >actual && test_cmp expect actual
'

test_expect_success 'dynamic probing: handle disarmed after 100, removed from the kernel, marked partial' '
	attach dp -s custom -f handle -f parse -on dynamic-probing -oa probing-threshold 100 &&
	test "$(cat dp.status)" = 0 &&
	test "$(profile_counts dp.perf | sed -n "s/^handle //p")" = 100 &&
	test "$(profile_field dp.perf trace.summary.handle.partial)" = true &&
	test "$(profile_field dp.perf trace.summary.handle.disarmed_after)" = 100 &&
	test "$(profile_field dp.perf trace.optimization.dynamic_probing.disarm_by)" = remove
'

test_expect_success 'timed sampling: some calls, in its windows, said sampled' '
	attach ts -s custom -f handle -on timed-sampling -oa timed-sample-freq 20 &&
	test "$(cat ts.status)" = 0 &&
	test "$(profile_field ts.perf trace.sampled)" = true &&
	test "$(profile_field ts.perf trace.summary.handle.sampled_by)" = timed-sampling
'

test_expect_success 'the overhead budget: within it, the calls it kept' '
	attach bud -s custom -f handle -f parse --max-overhead 50 &&
	test "$(cat bud.status)" = 0 &&
	n=$(profile_counts bud.perf | sed -n "s/^handle //p") &&
	test "$n" -ge 1 && test "$n" -le 600
'

test_expect_success 'a source-line probe: every visit' '
	attach line -s custom -d "service.c:$(cat line)" &&
	test "$(cat line.status)" = 0 &&
	python3 -c "import json, sys; s = json.load(open(\"line.perf\"))[\"trace\"][\"summary\"]; c = s[\"service.c:\" + sys.argv[1]][\"count\"]; print(c); sys.exit(c != 600)" "$(cat line)"
'

test_expect_success 'the service serves on; nothing of perun is left' '
	cat ratios &&
	serve 5 &&
	kill -0 "$(cat service.pid)"
'
[ -f "$TRASH/ratios" ] && while read -r l; do say "untraced twin, $l"; done <"$TRASH/ratios"

echo quit >&3
exec 3>&-
wait "$(cat "$TRASH/service.pid")" 2>/dev/null || true

assert_nothing_left

test_done
