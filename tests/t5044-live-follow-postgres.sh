#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: --follow on a real forking server, Debian's PostgreSQL 15.  A cluster
# of the test's own (unix socket in $TRASH, no TCP) runs before perun; perun
# attaches to the postmaster with --follow while several psql sessions each
# run a few queries, each in a backend the postmaster forks, and bpftrace
# counts the same functions per process in the same run.  Every backend's
# counts equal bpftrace's, from its first instruction (traced_after_ns 0).
# /usr/lib/postgresql/15/bin/postgres is stripped: its functions come from
# .dynsym.
. "$SRCDIR/tests/lib.sh"
require_live

PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] && command -v psql >/dev/null 2>&1 ||
	skip_all "needs PostgreSQL 15 (apt-get install postgresql-15 postgresql-client-15)"
command -v bpftrace >/dev/null 2>&1 || skip_all "needs bpftrace"
id postgres >/dev/null 2>&1 || skip_all "needs the postgres user (postgresql-15 makes it)"

SESSIONS=4
# the postmaster's socket is $TRASH/pg/sock/.s.PGSQL.$PORT: no other cluster
# can meet it, whatever the port
PORT=$((20000 + $$ % 10000))

as_postgres() { su postgres -s /bin/sh -c "$*"; }

stop_cluster() {
	[ -f "$TRASH/pg/data/postmaster.pid" ] &&
		as_postgres "$PGBIN/pg_ctl -D $TRASH/pg/data -m immediate -w stop" >/dev/null 2>&1
	return 0
}
# the cluster goes whatever happens to the test: before the trash does
trap 'stop_cluster; cleanup_trash' EXIT
trap 'exit 1' INT TERM HUP

test_expect_success 'a cluster of its own: initdb, started on a socket in the trash' '
	chmod 711 "$TRASH" &&
	mkdir -p pg/data pg/sock && chown postgres: pg/data pg/sock &&
	as_postgres "$PGBIN/initdb --no-sync -A trust -U postgres -D $TRASH/pg/data" \
		>initdb.log 2>&1 &&
	as_postgres "$PGBIN/pg_ctl -D $TRASH/pg/data -l $TRASH/pg/sock/log -w -o \
		\"-k $TRASH/pg/sock -p $PORT -c listen_addresses= -c autovacuum=off\" start" \
		>start.log 2>&1 &&
	psql -h "$TRASH/pg/sock" -p "$PORT" -U postgres -Atc "select 1" >one &&
	test "$(cat one)" = 1
'

test_expect_success '--follow on the postmaster: every backend'"'"'s counts equal bpftrace'"'"'s' '
	pm=$(head -n 1 pg/data/postmaster.pid) &&
	# the processes that were there before: not the postmaster'"'"'s new children
	pgrep -P "$pm" | sort >before.pids &&
	pg=$PGBIN/postgres &&
	rm -f bt.out err &&
	{ bpftrace -e "BEGIN { printf(\"go\\n\"); }
		uprobe:$pg:PortalRun, uprobe:$pg:ExecutorRun, uprobe:$pg:palloc
		{ @[pid, probe] = count(); }" >bt.out 2>bt.err & echo $! >bt.pid; } &&
	wait_line bt.out "^go" &&
	{ "$PERUN" collect --pid "$pm" --follow -o pg.perf trace -s custom -f PortalRun \
		-f ExecutorRun -f palloc 2>err & echo $! >perun.pid; } &&
	wait_line err "^perun: attached" &&
	sessions= &&
	for s in $(seq $SESSIONS); do
		psql -h "$TRASH/pg/sock" -p "$PORT" -U postgres -At \
			-c "select count(*) > 0 from pg_class" \
			-c "select sum(g) from generate_series(1, 1000) g" \
			-c "select $s" >psql.$s 2>&1 &
		sessions="$sessions $!"
	done &&
	for p in $sessions; do wait "$p"; done &&
	for s in $(seq $SESSIONS); do
		printf "t\n500500\n$s\n" >expect.$s && test_cmp expect.$s psql.$s || return 1
	done &&
	# the backends end after their clients: wait until only those before are left
	for i in $(seq 300); do
		pgrep -P "$pm" | sort >now.pids
		cmp -s before.pids now.pids && break
		sleep 0.1
	done &&
	test_cmp before.pids now.pids &&
	kill -INT "$(cat perun.pid)" &&
	status=0 && wait "$(cat perun.pid)" || status=$? &&
	bpftrace_stop "$(cat bt.pid)" &&
	cat err &&
	test "$status" = 0 &&
	grep "^perun: attached 6 of 6 probe points to process $pm" err &&
	test "$(profile_field pg.perf trace.complete)" = true &&
	"$PERUN" show pg.perf --format json --expand >pg.json &&
	python3 - pg.perf pg.json bt.out before.pids "$pm" $SESSIONS <<-\PY
	import json, re, sys
	prof = json.load(open(sys.argv[1]))["trace"]
	show = json.load(open(sys.argv[2]))
	before = {int(l) for l in open(sys.argv[4]) if l.strip()}
	pm, sessions = int(sys.argv[5]), int(sys.argv[6])
	# bpftrace: @[PID, uprobe:BINARY:FUNCTION]: N
	bt = {}
	for line in open(sys.argv[3]):
	    m = re.match(r"@\[(\d+), uprobe:[^:]*:(\w+)\]: (\d+)", line)
	    if m:
	        pid = int(m.group(1))
	        bt.setdefault(pid, {})[m.group(2)] = int(m.group(3))
	kids = prof["children"]
	assert len(kids) >= sessions, kids
	for k in kids:
	    assert k["followed"] and k["traced_after_ns"] == 0, k
	# perun per process: the calls of each thread under its process
	proc_of = {t: int(p) for p, ts in prof["threads_by_process"].items() for t in ts}
	pr = {}
	for r in show["snapshots"][0]["resources"]:
	    p = proc_of.get(r["thread"], r["thread"])
	    pr.setdefault(p, {}).setdefault(r["uid"], 0)
	    pr[p][r["uid"]] += 1
	# the backends: processes born after both tracers attached (not the
	# postmaster, whose calls before perun attached bpftrace counts too)
	born = sorted(p for p in set(bt) | set(pr) if p != pm and p not in before)
	backends = 0
	said = open("compare.txt", "w")
	for p in born:
	    b, q = bt.get(p, {}), pr.get(p, {})
	    print("process %d: bpftrace %s, perun %s" % (p, sorted(b.items()), sorted(q.items())),
	          file=said, flush=True)
	    assert b == q, (p, b, q)
	    assert p in {k["pid"] for k in kids}, (p, kids)
	    backends += b.get("PortalRun", 0) > 0
	assert backends >= sessions, (backends, sessions)
	PY
'

# the counts of each backend, in the output of the test
sed 's/^/# /' "$TRASH/compare.txt" 2>/dev/null

test_expect_success 'nothing of perun is left, and the cluster stops' '
	assert_nothing_left &&
	stop_cluster &&
	! test -f pg/data/postmaster.pid
'

test_done
