#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live, kernel runtime: an attach (the print transport, its default there)
# whose relay overflows, in the QEMU guest (tests/lib-vm.sh).  The relay is
# made small (staprun -b 1: 1 MiB, through PERUN_STAPRUN) and stapio is
# stopped while the service serves 20,000 requests (80,000 events, about
# 2 MB of output), so the module's writes fail for real: SystemTap counts
# them in one "transport failures" total, and perun counts per function what
# each probe printed and never arrived (the end probe's w lines), exactly:
# the events carried plus the events lost per function are every event of
# every request served while attached.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vm.sh"

test_expect_success 'the build host compiles the service module for the guest' '
	cc -g -O1 -pthread -o service "$FIXTURES/service.c" &&
	printf "#!/bin/sh\nexec staprun -b 1 \"\$@\"\n" >staprun-small &&
	chmod 755 staprun-small &&
	# the runtime program is part of the module cache key
	PERUN_STAPRUN="$TRASH/staprun-small" "$PERUN" collect -c ./service trace -s custom \
		-f handle -f parse --compile-only --transport print -r "$REL" >key 2>err &&
	cat err && grep "kernel module in the cache" err
'

cat >"$TRASH/guest-relay.sh" <<'GUEST'
set -u
step() { echo "$(cut -d' ' -f1 /proc/uptime) $*" >>progress; }
wait_line() {
	for i in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	echo "no '$2' in $1"; cat "$1"; return 1
}
fifo=$(mktemp -u /run/perun-in.XXXXXX) && mkfifo "$fifo" || { echo "mkfifo failed"; exit 1; }
./service <"$fifo" >svc.out 2>&1 &
svc=$!
exec 3>"$fifo"
wait_line svc.out ready
# the raw stream in the guest's tmpfs: the 9p share is slow for it
mkdir -p /run/tmp
PERUN_STAPRUN="$PWD/staprun-small" TMPDIR=/run/tmp \
	"$PERUN" collect --pid "$svc" -o r.perf trace -s custom -f handle -f parse \
	--runtime kernel >r.out 2>r.err &
pp=$!
step started perun
wait_line r.err "^perun: attached"
step attached
echo 10 >&3
wait_line svc.out "served 10 total 10"
io=$(ps -eo pid=,comm= | awk '$2 == "stapio" { print $1 }')
echo "stapio=$io" >guest.status
kill -STOP $io
step "stopped stapio $io"
echo 20000 >&3
wait_line svc.out "served 20000 total 20010"
step served
kill -CONT $io
echo 10 >&3
wait_line svc.out "served 10 total 20020"
step "served all; Ctrl-C"
kill -INT "$pp"
wait "$pp"
echo "r_status=$?" >>guest.status
step "perun ended"
echo quit >&3
exec 3>&-
wait "$svc"
GUEST

test_expect_success 'in the guest: a full relay drops events, counted per function exactly' '
	in_guest guest-relay.sh >guest.out 2>&1 || { cat guest.out progress r.err svc.out; exit 1; }
	cat guest.out guest.status r.err &&
	grep "^stapio=[0-9]" guest.status &&
	grep "^r_status=3$" guest.status &&
	grep "module cache: hit" r.err &&
	grep "perun: warning: the trace is incomplete .*the relay was full and dropped" r.err &&
	lh=$(profile_field r.perf trace.anomalies.lost_by_function.handle) &&
	lp=$(profile_field r.perf trace.anomalies.lost_by_function.parse) &&
	ev=$(profile_field r.perf trace.events) &&
	lt=$(profile_field r.perf trace.anomalies.lost_in_transport) &&
	echo "relay of 1 MiB, stapio stopped: $ev of 80080 events carried, lost handle $lh, parse $lp; lost_in_transport $lt" >relay.summary &&
	test "$lh" -gt 0 && test "$lp" -gt 0 &&
	test $((ev + lh + lp)) -eq 80080 &&
	test "$lt" -ge $((lh + lp)) &&
	test "$(profile_field r.perf trace.anomalies.transport_errors)" -gt 0 &&
	test "$(profile_field r.perf trace.complete)" = false &&
	test "$(profile_field r.perf trace.anomalies.missing_end)" = false
'
# in the log, whatever the outcome
[ -f "$TRASH/relay.summary" ] && echo "# $(cat "$TRASH/relay.summary")"

test_done
