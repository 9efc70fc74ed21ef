#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: a Go program.  Go copies a goroutine's stack when it grows and its
# runtime aborts on a return address a uretprobe replaced ("unexpected
# return pc"), so perun detects Go (.go.buildinfo / .gopclntab), says so in
# one line and probes entries only; stap addresses Go functions by name (Go
# writes no .debug_aranges) and after the stack check (-P: Go's line table
# marks the prologue end), so a call that grows its stack, which starts the
# function over, is counted once.  Counts are checked against the program's
# own and against bpftrace's uprobes on the same run.  perun's loader
# places the entry probe where the line table ends the prologue, as stap -P
# does (stapbpf checked once too).
. "$SRCDIR/tests/lib.sh"
require_live
command -v go >/dev/null 2>&1 || skip_all "needs go (apt-get install golang-go)"

N=1000
# main.work: N calls; main.deep: N/2 goroutine calls recursing 200 deep
DEEP=$(( (N - N / 2) * 201 ))

count_of() {
	python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["trace"]["summary"]
print(s[sys.argv[2]]["count"] if sys.argv[2] in s else 0)
PY
}

test_expect_success 'build the Go fixture' '
	HOME=$TRASH GOCACHE=$TRASH/gocache GOPATH=$TRASH/gopath GOFLAGS= \
		go build -o gowork "$FIXTURES/gowork.go" &&
	./gowork $N >out &&
	grep "work $N" out
'

test_expect_success 'perun says the target is Go and plans no return probe' '
	"$PERUN" collect -c ./gowork trace -s custom -f main.work -f main.deep \
		--script-only >script.stp 2>err &&
	cat err &&
	grep "is a Go program: counting entries only for its 2 functions" err &&
	test "$(grep -c "is a Go program" err)" = 1 &&
	grep "function(\"main.deep\").call" script.stp &&
	! grep "\.return" script.stp
'

test_expect_success 'named Go functions: exact counts, equal to bpftrace on the same run' '
	# main.deep is probed after its stack check, where stap puts it: Debian'"'"'s
	# bpftrace refuses any uprobe inside a function ("compiled without
	# uprobe offset support"), so bpftrace counts main.work and main.deep is
	# held to the count the program knows it makes ($DEEP)
	bpftrace -e "uprobe:$TRASH/gowork:main.work /comm == \"gowork\"/ { @w = count(); }" \
		>bt.out 2>&1 &
	bt=$!
	for i in $(seq 150); do grep -q Attaching bt.out && break; sleep 0.1; done
	sleep 1
	rc=0
	"$PERUN" collect -c ./gowork -a $N -o go1.perf trace -s custom -f main.work \
		-f main.deep >out 2>err || rc=$?
	bpftrace_stop $bt
	cat err bt.out
	test $rc = 0
	grep "work $N" out
	grep "attached 2 of 2 probe points" err
	test "$(count_of go1.perf main.work)" = $N
	test "$(count_of go1.perf main.deep)" = $DEEP
	test "$(sed -n "s/^@w: //p" bt.out)" = $N
	test "$(profile_field go1.perf collector_info.params.entry_only)" = false
	test "$(profile_field go1.perf trace.loader)" = perun-uprobes
'

test_expect_success 'stapbpf places main.deep after the stack check too: the same count' '
	"$PERUN" collect -c ./gowork -a $N -o go3.perf trace -s custom -f main.deep \
		--loader stapbpf >out 2>err &&
	cat err &&
	test "$(profile_field go3.perf trace.loader)" != perun-uprobes &&
	test "$(count_of go3.perf main.deep)" = $DEEP
'

test_expect_success 'userspace goes entry-only for Go by itself; exit 0, exact' '
	"$PERUN" collect -c ./gowork -a $N -o go2.perf trace -s userspace \
		--include "^main\\." >out 2>err &&
	cat err &&
	grep "is a Go program: counting entries only" err &&
	test "$(count_of go2.perf main.work)" = $N &&
	test "$(count_of go2.perf main.deep)" = $DEEP &&
	test "$(count_of go2.perf main.main)" = 1
'

test_expect_success 'a Go build without DWARF: perun says restarts are counted twice' '
	HOME=$TRASH GOCACHE=$TRASH/gocache GOPATH=$TRASH/gopath GOFLAGS= \
		go build -ldflags=-w -o gowork-nodwarf "$FIXTURES/gowork.go" &&
	"$PERUN" collect -c ./gowork-nodwarf trace -s custom -f main.deep --script-only \
		>/dev/null 2>err &&
	cat err &&
	grep "no DWARF.*counted twice" err
'

test_expect_success 'nothing of ours is left running' '
	sleep 1 && test -z "$(procs_in_trash)"
'

test_done
