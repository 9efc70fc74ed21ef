#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live, kernel runtime: --follow in the QEMU guest (tests/lib-vm.sh).  A
# forking server run with -c forks children that serve at once; the script
# keeps the target's process tree from the fork tracepoint (before a child
# runs) and the runtime's uprobe filter gives children their breakpoints, so
# each child's counts equal the program's own, and trace.children lists them
# followed from their first instruction (traced_after_ns 0).  Then the
# server is started first and attached by pid: the children it forks after
# the attach are exact too, and an untraced twin of the binary timed before
# and during the trace pays nothing (the filter; ratio in the output).  The
# same collect on perun's own loader on the host gives the same counts.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vm.sh"

# Per-process counts, "PROC FUNCTION COUNT" sorted, with PROC "parent" for
# the target and "child" for the others (pids differ between runs).
process_counts() {
	"$PERUN" show "$1" --format json --expand >"$1.json" &&
	python3 - "$1" "$1.json" <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1]))["trace"]
	proc_of = {th: int(p) for p, ts in t.get("threads_by_process", {}).items() for th in ts}
	kids = {k["pid"] for k in t["children"]}
	n = {}
	for r in json.load(open(sys.argv[2]))["snapshots"][0]["resources"]:
	    p = proc_of.get(r["thread"], r["thread"])
	    k = (p, r["uid"])
	    n[k] = n.get(k, 0) + 1
	out = []
	for (p, f), c in n.items():
	    out.append(("child" if p in kids else "parent", f, c))
	for line in sorted(out):
	    print(*line)
	PY
}

# trace.children: each followed from its first instruction, and exactly the
# pids the program says served (its "child PID served N" lines in $2).
children_ok() {
	python3 - "$1" "$2" <<-\PY
	import json, re, sys
	t = json.load(open(sys.argv[1]))["trace"]
	served = sorted(int(p) for p in re.findall(r"child (\d+) served", open(sys.argv[2]).read()))
	kids = t["children"]
	assert sorted(k["pid"] for k in kids) == served, (kids, served)
	assert all(k["followed"] and k["traced_after_ns"] == 0 for k in kids), kids
	assert t["untraced_children"] == 0 and t["complete"] is True, t
	PY
}

cat >"$TRASH/expect" <<EOF_EXPECT
child handle 40
child handle 40
child handle 40
child parse 40
child parse 40
child parse 40
parent handle 5
parent parse 5
EOF_EXPECT
printf "5\nfork 3 40\nquit\n" >"$TRASH/cmds"

test_expect_success 'the build host compiles the --follow module for the guest' '
	cc -g -O1 -pthread -o forksrv "$FIXTURES/forksrv.c" &&
	"$PERUN" collect -c ./forksrv --follow trace -s custom -f handle -f parse \
		--transport print --compile-only -r "$REL" >key 2>err &&
	cat err && grep "kernel module in the cache (miss)" err
'

cat >"$TRASH/guest-follow.sh" <<'GUEST'
set -u
wait_line() {
	for i in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	echo "no '$2' in $1"; cat "$1"; return 1
}
t0=$(date +%s)
"$PERUN" collect -c ./forksrv --follow -o k.perf trace -s custom -f handle -f parse \
	--transport print --runtime kernel <cmds >k.out 2>k.err
echo "k_status=$?" >guest.status
echo "k_seconds=$(($(date +%s) - t0))" >>guest.status
# the same server started before perun, attached by pid: its children are
# forked after the attach; an untraced twin is timed before and during
./forksrv --bench 20000 >twin.before
fifo=$(mktemp -u /run/perun-in.XXXXXX) && mkfifo "$fifo" || { echo "mkfifo failed"; exit 1; }
./forksrv <"$fifo" >a.out 2>&1 &
svc=$!
exec 3>"$fifo"
wait_line a.out ready
"$PERUN" collect --pid "$svc" --follow -o a.perf trace -s custom -f handle -f parse \
	--transport print --runtime kernel 2>a.err &
pp=$!
wait_line a.err "^perun: attached"
./forksrv --bench 20000 >twin.during
echo "fork 3 40" >&3
wait_line a.out "forked 3"
echo 5 >&3
wait_line a.out "served 5"
kill -INT "$pp"
wait "$pp"
echo "a_status=$?" >>guest.status
echo quit >&3
exec 3>&-
wait "$svc"
rm -f "$fifo"
GUEST

test_expect_success 'in the guest: --follow on the kernel runtime, every child exact' '
	mkdir -p gtmp &&
	in_guest guest-follow.sh --env TMPDIR="$TRASH/gtmp" >guest.out 2>&1 || { cat guest.out; exit 1; }
	cat guest.out guest.status k.err k.out &&
	grep "^k_status=0" guest.status &&
	grep "module cache: hit" k.err &&
	test "$(profile_field k.perf trace.runtime)" = kernel &&
	process_counts k.perf >actual &&
	test_cmp expect actual &&
	children_ok k.perf k.out
'

test_expect_success 'in the guest: attached by pid, the children it forks after exact; a twin pays nothing' '
	cat a.err &&
	grep "^a_status=0" guest.status &&
	grep "module cache: hit" a.err &&
	process_counts a.perf >actual &&
	test_cmp expect actual &&
	children_ok a.perf a.out &&
	b=$(sed -n "s/^bench 20000 ns //p" twin.before) &&
	d=$(sed -n "s/^bench 20000 ns //p" twin.during) &&
	echo "kernel runtime, guest, --follow attached: an untraced twin ran 20,000 calls in $b ns before and $d ns during ($(python3 -c "print(round($d / $b, 1))")x)" >"$TRASH/twin.ratio" &&
	cat "$TRASH/twin.ratio" &&
	# the uprobe filter keeps the breakpoints out of the twin; a trap a
	# call would make it hundreds of times slower (TCG varies: 10x bound)
	python3 -c "import sys; sys.exit(0 if $d <= 10 * $b else 1)"
'
[ -f "$TRASH/twin.ratio" ] && say "$(cat "$TRASH/twin.ratio")"

test_expect_success 'on the host: the same collect on perun'"'"'s loader, the same counts' '
	"$PERUN" collect -c ./forksrv --follow -o h.perf trace -s custom -f handle -f parse \
		<cmds >h.out 2>h.err &&
	cat h.err &&
	test "$(profile_field h.perf trace.loader)" = perun-uprobes &&
	process_counts h.perf >host &&
	test_cmp expect host &&
	children_ok h.perf h.out &&
	profile_counts h.perf >h.counts && profile_counts k.perf >k.counts &&
	test_cmp h.counts k.counts
'

test_done
