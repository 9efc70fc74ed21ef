#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun aggregate: profiles of many runs and hosts merged per release, shard
# and time box (seeds/002's layout); the same profile twice counts once;
# aggregates merge into aggregates; --expire-before deletes only old time
# boxes perun wrote; perun show reads a report and a release.  Profiles come
# from the parser alone (no tracing).
. "$SRCDIR/tests/lib.sh"

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# mkprof FILE CALLS DURATION_NS [WORKLOAD]: main calling work CALLS times.
mkprof() {
	python3 - "$@" <<-\PY >"$TRASH/raw.$$"
	import sys
	n, d = int(sys.argv[2]), int(sys.argv[3])
	print("s 3e8 0 100"); print("r")
	t = 0x100
	print("0 1 %x" % t)
	for i in range(n):
	    t += 10; print("2 1 %x" % t); t += d; print("3 1 %x" % t)
	t += 10; print("1 1 %x" % t); print("q")
	PY
	"$PERUN" __parse "$TRASH/plan" "$TRASH/raw.$$" "$1.tmp" >/dev/null &&
	python3 - "$1.tmp" "$1" "${4:-}" <<-\PY
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload=sys.argv[3])
	json.dump(p, open(sys.argv[2], "w"))
	PY
	rm -f "$1.tmp" "$TRASH/raw.$$"
}

# calls_of FUNCTION < summary: its calls column.
calls_of() { awk -v f="$1" '$1 == f { print $2 }'; }

# The time box of a profile collected now, as BOX: in names and metadata.
nobox() { sed -e "s/^report\.[0-9]*\./report.BOX./" -e "s/{\"[0-9]*\":/{\"BOX\":/" "$@"; }

test_expect_success 'profiles from the parser alone, two registered' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	mkdir repo && cd repo && git init -q && git symbolic-ref HEAD refs/heads/master &&
	git config user.email t@example.com &&
	git config user.name T && echo 1 >f && git add f && git commit -q -m one &&
	"$PERUN" init >/dev/null &&
	mkprof ../p1.perf 10 1000 one && mkprof ../p2.perf 20 3000 two &&
	mkprof ../p3.perf 5 500 three &&
	"$PERUN" add -m HEAD ../p1.perf ../p2.perf >/dev/null &&
	"$PERUN" status --short >actual &&
	short=$(git rev-parse HEAD | cut -c1-7) &&
	cat >expect <<-EOF &&
	On major version master (minor $short)

	0 pending profiles

	2 profiles registered for $short:
	  0@i   p1.perf
	  1@i   p2.perf
	EOF
	test_cmp expect actual
'

test_expect_success 'aggregate writes seed 002 layout: report per time box and shard' '
	cd repo &&
	"$PERUN" aggregate --release v1 --shard hostA --time-box 3600 0@i 1@i >actual &&
	echo "release v1 shard hostA: 2 inputs added, 0 already aggregated, 1 time box written under $(pwd)/.perun/aggregates/v1" >expect &&
	test_cmp expect actual &&
	test -f .perun/aggregates/v1/__state__/shard.hostA &&
	nobox .perun/aggregates/v1/aggregate/metadata.hostA >actual &&
	cat >expect <<-\EOF &&
	{"perun_aggregate_metadata":1,"shard":"hostA","timeboxes":{"BOX":2},"inputs":2}
	EOF
	test_cmp expect actual &&
	ls .perun/aggregates/v1/aggregate/ | nobox >actual &&
	cat >expect <<-\EOF &&
	metadata.hostA
	report.BOX.hostA
	EOF
	test_cmp expect actual &&
	"$PERUN" show .perun/aggregates/v1/aggregate/report.*.hostA >actual &&
	cat >expect <<-\EOF &&
	function                            calls          total         mean       median          p95          min          max   excl%
	main                                    2          70320      35160.0      16384.0      60210.0        10110        60210    0.5%
	work                                   30          70000       2333.3       2560.0       3000.0         1000         3000   99.5%
	2 functions, 2 input profiles
	EOF
	test_cmp expect actual
'

test_expect_success 'the same profiles again, by number, name or path, count once' '
	cd repo && f=$(ls .perun/aggregates/v1/aggregate/report.*.hostA) && cp "$f" before &&
	"$PERUN" aggregate --release v1 --shard hostA --time-box 3600 1@i 0@i 0@i >actual &&
	echo "release v1 shard hostA: 0 inputs added, 3 already aggregated, 1 time box written under $(pwd)/.perun/aggregates/v1" >expect &&
	test_cmp expect actual &&
	cmp before "$f"
'

test_expect_success 'a file input, another shard; show of the release merges shards' '
	cd repo &&
	"$PERUN" aggregate --release v1 --shard hostB ../p3.perf >actual &&
	echo "release v1 shard hostB: 1 input added, 0 already aggregated, 1 time box written under $(pwd)/.perun/aggregates/v1" >expect &&
	test_cmp expect actual &&
	test -f .perun/aggregates/v1/__state__/shard.hostB &&
	"$PERUN" show .perun/aggregates/v1 >actual &&
	cat >expect <<-\EOF &&
	function                            calls          total         mean       median          p95          min          max   excl%
	main                                    3          72880      24293.3      12288.0      60210.0         2560        60210    0.5%
	work                                   35          72500       2071.4       2304.0       3000.0          500         3000   99.5%
	2 functions, 3 input profiles
	EOF
	test_cmp expect actual &&
	"$PERUN" show .perun/aggregates/v1 --format json |
		python3 -c "import json,sys; a=json.load(sys.stdin); assert len(a[\"inputs\"]) == 3 and a[\"functions\"][\"work\"][\"calls\"] == 35, a[\"functions\"]" &&
	! "$PERUN" show .perun/aggregates/v1 --format folded 2>err &&
	echo "perun show: an aggregate holds no call stacks: use --format summary or json" >expect &&
	test_cmp expect err
'

test_expect_success 'aggregates merge into an aggregate: associative and idempotent' '
	cd repo && A=$(ls .perun/aggregates/v1/aggregate/report.*.hostA) &&
	B=$(ls .perun/aggregates/v1/aggregate/report.*.hostB) &&
	"$PERUN" aggregate --dir ../m1 --release v1 --shard all --time-box 3600 "$A" "$B" >/dev/null &&
	"$PERUN" aggregate --dir ../m2 --release v1 --shard all --time-box 3600 "$B" >/dev/null &&
	"$PERUN" aggregate --dir ../m2 --release v1 --shard all --time-box 3600 "$A" "$B" "$A" 1@i >/dev/null &&
	"$PERUN" show ../m1/v1 --format json >j1 && "$PERUN" show ../m2/v1 --format json >j2 &&
	test_cmp j1 j2 && grep "\"work\":{\"calls\":35," j1
'

test_expect_success 'time boxes by collection time; --expire-before deletes only old boxes' '
	mkdir ta && cd ta &&
	cp ../p1.perf old.perf && touch -d "2020-01-01 10:30:00 UTC" old.perf &&
	cp ../p2.perf new.perf && touch -d "2020-01-03 10:30:00 UTC" new.perf &&
	"$PERUN" aggregate --dir agg --release r --shard h old.perf new.perf >actual &&
	echo "release r shard h: 2 inputs added, 0 already aggregated, 2 time boxes written under $(pwd)/agg/r" >expect &&
	test_cmp expect actual &&
	test -f agg/r/aggregate/report.1577836800.h && test -f agg/r/aggregate/report.1578009600.h &&
	echo "not perun" >agg/r/aggregate/report.1.h && echo x >agg/r/aggregate/notes.txt &&
	cp agg/r/aggregate/report.1578009600.h agg/r/aggregate/report.1000.h &&
	"$PERUN" aggregate --dir agg --expire-before 2020-01-02 >out 2>err &&
	echo "aggregate: warning: $(pwd)/agg/r/aggregate/report.1.h is not a perun aggregate: left alone" >expect &&
	test_cmp expect err &&
	echo "expired 1 time box ending before 1577923200" >expect &&
	test_cmp expect out &&
	test ! -e agg/r/aggregate/report.1577836800.h &&
	test -f agg/r/aggregate/report.1578009600.h && test -f agg/r/aggregate/notes.txt &&
	test -f agg/r/aggregate/report.1000.h && test -f agg/r/aggregate/report.1.h &&
	cat >expect <<-\EOF &&
	{"perun_aggregate_metadata":1,"shard":"h","timeboxes":{"1578009600":1},"inputs":1}
	EOF
	test_cmp expect agg/r/aggregate/metadata.h &&
	"$PERUN" show agg/r >s && test "$(calls_of work <s)" = 20
'

test_expect_success 'a compact profile aggregates as its per-call form does' '
	"$PERUN" show p2.perf --format json --compact >c2.perf &&
	grep -q "\"calls\":\[" c2.perf &&
	"$PERUN" aggregate --dir cagg --release r --shard c c2.perf >/dev/null &&
	"$PERUN" aggregate --dir pagg --release r --shard c p2.perf >/dev/null &&
	"$PERUN" show cagg/r >cs && "$PERUN" show pagg/r >ps && cat cs &&
	test "$(calls_of work <cs)" = 20 && test_cmp ps cs
'

test_expect_success 'usage errors exit 2' '
	cd repo && : >err &&
	for args in "--release v1 0@i" "--shard h 0@i" "--release ../x --shard h 0@i" \
		    "--release v1 --shard h --time-box 0 0@i" "--expire-before yesterday" \
		    "--release v1 --shard h"; do
		test_expect_code 2 "$PERUN" aggregate $args 2>>err || { echo "$args"; exit 1; }
	done &&
	# the errors, without the usage that follows most of them
	sed "/^usage: /,/^   or: /d" err >actual &&
	cat >expect <<-EOF &&
	perun aggregate: --release, --shard and at least one PROFILE are needed (or --expire-before)
	perun aggregate: --release, --shard and at least one PROFILE are needed (or --expire-before)
	perun aggregate: release and shard ids name files: no ${SQ}/${SQ}, no leading ${SQ}.${SQ}, no spaces
	perun aggregate: --time-box takes a positive number of seconds, not ${SQ}0${SQ}
	perun aggregate: --expire-before takes seconds since the epoch or YYYY-MM-DD, not ${SQ}yesterday${SQ}
	perun aggregate: --release, --shard and at least one PROFILE are needed (or --expire-before)
	EOF
	test_cmp expect actual &&
	"$PERUN" aggregate --help | head -n 1 >actual &&
	echo "usage: perun aggregate --release REV --shard HOST [--time-box SECONDS] [--dir DIR]" >expect &&
	test_cmp expect actual
'

test_done
