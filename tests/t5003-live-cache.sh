#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: the module cache.  A hit must not start stap at all; a corrupted entry
# is rebuilt; an entry another user could have written is refused.  The
# cache serves stapbpf and the kernel runtime (perun's own loader needs no
# module), so these collects ask for stapbpf.
. "$SRCDIR/tests/lib.sh"
require_live

collect() {
	"$PERUN" collect -c ./counts -o "$1" trace -s custom -f fib -f work "$@"
}

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'first collect compiles and stores the module' '
	"$PERUN" collect -c ./counts -o a.perf trace -s custom -f fib -f work --loader stapbpf 2>err &&
	grep "module cache: miss" err &&
	test "$(profile_field a.perf trace.module_cache)" = miss &&
	test "$(ls "$PERUN_CACHE_DIR/modules" | wc -l)" = 1 &&
	"$PERUN" cache verify
'

test_expect_success 'a hit runs stapbpf on the stored module with no stap at all' '
	PERUN_STAP=/nonexistent/stap "$PERUN" collect -c ./counts -o b.perf trace -s custom -f fib -f work --loader stapbpf 2>err &&
	grep "module cache: hit" err &&
	test "$(profile_counts b.perf)" = "$(printf "fib 1983\nwork 300")"
'

test_expect_success 'perun cache list shows the entry (text and JSON)' '
	"$PERUN" cache list >out &&
	grep "^1 entries" out &&
	grep bpf out &&
	"$PERUN" cache list --json >json &&
	python3 -c "import json,sys; e=json.load(open(\"json\")); assert len(e)==1 and e[0][\"probes\"]==4, e"
'

test_expect_success 'a corrupted module is detected and rebuilt' '
	mod=$(ls "$PERUN_CACHE_DIR"/modules/*/*.bo) &&
	printf "\377" | dd of="$mod" bs=1 seek=100 conv=notrunc 2>/dev/null &&
	! "$PERUN" cache verify &&
	"$PERUN" collect -c ./counts -o c.perf trace -s custom -f fib -f work --loader stapbpf 2>err &&
	cat err &&
	grep "failed verification: rebuilding" err &&
	grep "module cache: miss" err &&
	"$PERUN" cache verify &&
	test "$(profile_counts c.perf)" = "$(printf "fib 1983\nwork 300")"
'

test_expect_success 'a group-writable module is refused, never loaded' '
	mod=$(ls "$PERUN_CACHE_DIR"/modules/*/*.bo) &&
	chmod g+w "$mod" &&
	! "$PERUN" collect -c ./counts -o d.perf trace -s custom -f fib -f work --loader stapbpf 2>err &&
	cat err &&
	grep "refusing .*writable by group or others" err &&
	! test -e d.perf &&
	chmod g-w "$mod"
'

test_expect_success 'a module owned by another user is refused' '
	mod=$(ls "$PERUN_CACHE_DIR"/modules/*/*.bo) &&
	chown 65534 "$mod" &&
	! "$PERUN" collect -c ./counts -o e.perf trace -s custom -f fib -f work --loader stapbpf 2>err &&
	grep "refusing .*owned by uid 65534" err &&
	chown 0 "$mod"
'

# --aggregate: three stapbpf readers on two CPUs can overflow stapbpf's 32 KB
# per-CPU rings with per-event output (perun reports that as lost events);
# this test is about the cache, so the counts must be exact.  --loader
# stapbpf: perun's own loader aggregates without a module.
test_expect_success 'concurrent collects of one new script compile it once' '
	for i in 1 2 3; do
		"$PERUN" collect -c ./counts -o par$i.perf trace -q -s custom -f leaf --aggregate \
			--loader stapbpf 2>par$i.err &
	done
	wait &&
	for i in 1 2 3; do
		cat par$i.err
		got=$(profile_counts par$i.perf) &&
		echo "run $i: $got; anomalies $(profile_field par$i.perf trace.anomalies)" &&
		test "$got" = "leaf 300" || exit 1
	done &&
	ls -a "$PERUN_CACHE_DIR/modules" &&
	test "$(ls "$PERUN_CACHE_DIR/modules" | wc -l)" = 2 &&
	test -z "$(ls -a "$PERUN_CACHE_DIR/modules" | grep "^\.tmp")"
'

test_expect_success '-sc compiles afresh and leaves the cache alone' '
	"$PERUN" collect -c ./counts -o f.perf trace -s custom -f first -sc --loader stapbpf 2>err &&
	grep "module cache: off" err &&
	test "$(ls "$PERUN_CACHE_DIR/modules" | wc -l)" = 2
'

test_expect_success 'prune evicts the least recently used entry, clear empties' '
	size=$("$PERUN" cache list --json | python3 -c "import json,sys; print(sum(e[\"size\"] for e in json.load(sys.stdin)))") &&
	"$PERUN" cache prune --max-size $((size * 3 / 4)) &&
	test "$(ls "$PERUN_CACHE_DIR/modules" | wc -l)" = 1 &&
	"$PERUN" cache clear &&
	test "$(ls "$PERUN_CACHE_DIR/modules" | wc -l)" = 0
'

test_done
