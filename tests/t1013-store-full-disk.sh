#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# collect on a full disk: when neither the profile nor its rescue file can
# be written, no empty or cut *-rescue-*.perf stays in .perun/jobs, and
# status and add go on working.  .perun/jobs is a 64k tmpfs, filled first.
. "$SRCDIR/tests/lib.sh"
require_live

cleanup_tmpfs() {
	mountpoint -q "$TRASH/repo/.perun/jobs" && umount "$TRASH/repo/.perun/jobs"
}
trap 'cleanup_tmpfs' EXIT

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'a repository whose .perun/jobs is a full 64k tmpfs' '
	mkdir repo && cd repo && git init -q && echo 1 >f && git add f && git commit -q -m one &&
	"$PERUN" init >/dev/null &&
	mount -t tmpfs -o size=64k perun-t1013 .perun/jobs &&
	{ dd if=/dev/zero of=.perun/jobs/fill bs=4k 2>/dev/null || :; } && test -s .perun/jobs/fill
'

test_expect_success 'collect fails, and leaves no rescue file in .perun/jobs' '
	cd repo &&
	test_expect_code 1 "$PERUN" collect -c ../counts trace -q -s custom -f first >out 2>err &&
	sed "s/^/err: /" err &&
	test "$(ls .perun/jobs)" = fill &&
	grep "removed it, no profile was kept" err
'

test_expect_success 'status and add do not fail on the full disk' '
	cd repo &&
	"$PERUN" status >out 2>err && ! test -s err &&
	rm .perun/jobs/fill && "$PERUN" collect -c ../counts trace -q -s custom -f first &&
	"$PERUN" add 0@p >out 2>err && ! test -s err && "$PERUN" status >out 2>err && ! test -s err
'

test_done
