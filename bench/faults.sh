#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/faults.sh [PERUN]: the fault-injection table (what each fault leaves).  Each fault
# runs FAULT_RUNS times (default 10); after every run it checks
#   lost:   the profile exists when it should and says what it recorded (or
#           perun exited non-zero with a clear message); the user's files and
#           the store's objects are byte-identical (sha1sum before/after);
#           perun fsck finds no problem;
#   left:   no process of this run (anything whose command line names this
#           run's private directory: perun, stapbpf, stap, the fixture), no
#           uprobe event on a binary of this run, nothing in the run's own
#           TMPDIR (no perun-collect-*), no cache or store lock held, no
#           temp file in the cache, the store or the output directory, no
#           mount left.
# Builds nothing but the fixtures (into a private temp dir); needs root and
# SystemTap.  Not part of make check: it takes minutes.  Exit 1 if any row
# shows a loss or a leftover, 2 if it cannot run.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PERUN=${1:-$here/perun}
case $PERUN in /*) ;; *) PERUN=$(pwd)/$PERUN ;; esac
if ! [ -x "$PERUN" ]; then
	echo "faults.sh: $PERUN is not executable: build perun first or give its path" >&2
	exit 2
fi
[ "$(id -u)" = 0 ] || { echo "faults.sh: needs root (perun loads BPF programs)" >&2; exit 2; }
command -v stap >/dev/null 2>&1 && command -v stapbpf >/dev/null 2>&1 ||
	{ echo "faults.sh: needs stap and stapbpf (apt-get install systemtap)" >&2; exit 2; }
# perun finds its templates and shim beside its executable (a build tree or
# an install); PERUN_DATADIR/PERUN_LIBDIR, when set, are passed on as they are
K=${FAULT_RUNS:-10}
FIX=$here/tests/fixtures
BASE=$(mktemp -d /tmp/perun-faults.XXXXXX)
BIN=$BASE/bin
CACHE=$BASE/cache
export PERUN_CACHE_DIR=$CACHE
GIT_CEILING_DIRECTORIES=$BASE
export GIT_CEILING_DIRECTORIES
UPROBES=/sys/kernel/tracing/uprobe_events
[ -r $UPROBES ] || UPROBES=/sys/kernel/debug/tracing/uprobe_events
failed_rows=0

cleanup() {
	grep " $BASE/" /proc/mounts | while read -r _ m _; do umount "$m"; done
	[ -n "${FAULTS_KEEP:-}" ] || rm -rf "$BASE"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

die() { echo "faults.sh: $*" >&2; exit 2; }

# pf FILE PATH: a field of a profile, by dotted path
pf() {
	python3 - "$1" "$2" 2>/dev/null <<-\PY
	import json, sys
	v = json.load(open(sys.argv[1]))
	for k in sys.argv[2].split("."):
	    v = v[k]
	print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)
	PY
}
# js FILE KEY: a field of __parse's JSON summary
js() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2" 2>/dev/null; }
# calls FILE FUNC: the call count of FUNC in a profile (0 if absent)
calls() { pf "$1" "trace.summary.$2.count" || echo 0; }

# ---------------------------------------------------------------- set-up
mkdir -p "$BIN" "$BASE/runs" || die "cannot make $BASE"
cc -g -O0 -o "$BIN/forever" "$FIX/forever.c" &&
cc -g -O0 -o "$BIN/crash" "$FIX/crash.c" &&
cc -g -O0 -o "$BIN/small" "$FIX/small.c" &&
cc -g -O1 -pthread -o "$BIN/exact" "$FIX/exact.c" &&
cp "$FIX/fake-stapbpf.sh" "$BIN/" || die "cannot build the fixtures"

# the template of every run's directory: a git repository with a perun store
# holding three registered profiles, and two files of the user's own
T=$BASE/tmpl
(
	set -e
	mkdir "$T" && cd "$T"
	git init -q && git config user.email f@example.com && git config user.name Faults
	echo one >f && git add f && git commit -q -m one
	"$PERUN" init >/dev/null
	for fs in "-f leaf" "-f main" "-f leaf -f main"; do
		# shellcheck disable=SC2086
		"$PERUN" collect -c "$BIN/small" -o p.perf trace -q -s custom $fs
		"$PERUN" add p.perf >/dev/null
		rm -f p.perf
	done
	head -c 4096 /dev/urandom >precious.bin
	"$PERUN" collect -c "$BIN/small" -o old.perf trace -q -s custom -f leaf
	# ten distinct profiles for the concurrent add
	mkdir "$BASE/par"
	for i in 0 1 2 3 4 5 6 7 8 9; do
		python3 -c "import json,sys; p=json.load(open('old.perf')); p['header']['workload']='par'+sys.argv[1]; json.dump(p, open(sys.argv[2],'w'))" \
			$i "$BASE/par/par$i.perf"
	done
	for i in 0 1 2; do "$PERUN" show $i@i --format json | sha1sum; done | sort >"$BASE/shown"
	# a real recorded stream and its plan, for the parser faults
	"$PERUN" collect -c "$BIN/forever" -o "$BASE/full.perf" trace -s custom -f tick -t 1 -k \
		2>"$BASE/kept.err"
	kept=$(sed -n 's/^perun: temp files kept in //p' "$BASE/kept.err")
	cp "$kept/plan" "$kept/trace.raw" "$BASE/"
	rm -rf "$kept"
	"$PERUN" __parse "$BASE/plan" "$BASE/trace.raw" "$BASE/parsed.perf" >"$BASE/parsed.js"
) || die "set-up failed"
LEAFKEY=$(pf "$T/old.perf" trace.cache_key)
FULLCALLS=$(js "$BASE/parsed.js" calls)
FULLEVENTS=$(js "$BASE/parsed.js" events)
[ "$FULLCALLS" -gt 0 ] || die "the recorded stream has no calls"

# ---------------------------------------------------------------- one run
# Each fault is a function run in a subshell in $W (a copy of the template)
# with TMPDIR $W/tmp; it records its exit status with setrc and every loss it
# sees with flost (files: the subshell cannot set our variables).
lost() { LOST="${LOST:+$LOST; }$*"; }
left() { LEFT="${LEFT:+$LEFT; }$*"; }

# sums of the files the run must not touch: SNAP=all the store's objects and
# indexes too, store all but the index of HEAD, user only the user's files
snapshot() {
	(cd "$W" && {
		echo precious.bin; echo old.perf; echo .perun/local.yml
		case $SNAP in
		all) find .perun/objects -type f ;;
		store) find .perun/objects -type f ! -path "$(idx_path)" ;;
		esac
	} | sort | xargs sha1sum) >"$W.sums"
}

# pids of processes of this run: their command line names $W or $BIN
run_procs() { pgrep -f -- "$W/|$BIN/" || true; }

check_left() {
	for _ in $(seq 50); do
		[ -z "$(run_procs)" ] && ! grep -q " $BASE/" $UPROBES && break
		sleep 0.2
	done
	p=$(run_procs)
	[ -z "$p" ] || left "processes: $(ps -o comm= -p "$(echo $p | tr ' ' ,)" | sort | uniq -c | tr -s ' \n' '  ')"
	n=$(grep -c " $BASE/" $UPROBES)
	[ "$n" = 0 ] || left "$n uprobe events: $(grep " $BASE/" $UPROBES | head -1)"
	[ -z "$(ls -A "$W/tmp")" ] || left "TMPDIR: $(ls -A "$W/tmp" | tr '\n' ' ')"
	for c in "$CACHE" "$W/cache"; do
		[ -d "$c" ] || continue
		! [ -e "$c/lock" ] || flock -n "$c/lock" true || left "cache lock held"
		t=$(find "$c" -name '.tmp*' | head -3)
		[ -z "$t" ] || left "cache temp: $t"
	done
	! [ -e "$W/.perun/lock" ] || flock -n "$W/.perun/lock" true || left "store lock held"
	t=$(find "$W" -path "$W/tmp" -prune -o \( -name '*.tmp*' -o -name '.new-*' \) -print | head -3)
	[ -z "$t" ] || left "temp files: $t"
	! grep -q " $W/" /proc/mounts || left "mount left"
}

check_lost_common() {
	(cd "$W" && sha1sum -c --quiet "$W.sums") >"$W.sumerr" 2>&1 ||
		lost "changed: $(grep -v '^sha1sum' "$W.sumerr" | head -2 | tr '\n' ' ')"
	(cd "$W" && "$PERUN" fsck) >"$W.fsck" 2>&1 || lost "fsck: $(grep -v '^checked' "$W.fsck" | head -2 | tr '\n' ' ')"
}

# run_row NAME RUNS SNAP FUNC [NOTE]
run_row() {
	name=$1 runs=$2 SNAP=$3 fn=$4 note=${5:-}
	nlost=0 nleft=0 firstlost= firstleft= rcs=
	i=0
	while [ $i -lt "$runs" ]; do
		i=$((i + 1))
		W=$BASE/runs/$fn-$i
		cp -a "$T" "$W" && mkdir "$W/tmp" || die "cannot copy the template"
		snapshot
		LOST= LEFT= RC=
		(cd "$W" && export TMPDIR="$W/tmp" && "$fn" "$i") >"$W.out" 2>&1
		RC=$(cat "$W.rc" 2>/dev/null)
		[ -s "$W.lost" ] && LOST=$(sed '$!s/$/;/' "$W.lost" | tr "\n" " ")
		check_lost_common
		check_left
		rcs="$rcs ${RC:-?}"
		if [ -n "$LOST" ]; then
			nlost=$((nlost + 1)); [ -n "$firstlost" ] || firstlost="run $i: $LOST"
		fi
		if [ -n "$LEFT" ]; then
			nleft=$((nleft + 1)); [ -n "$firstleft" ] || firstleft="run $i: $LEFT"
			# clean up what this run left, so the next run starts clean
			p=$(run_procs); [ -z "$p" ] || kill -9 $p 2>/dev/null
		fi
		if [ -n "$LOST$LEFT" ]; then
			echo "# $name, run $i: lost: ${LOST:-none}; left: ${LEFT:-none}" >&2
			sed 's/^/#   /' "$W.out" | tail -15 >&2
		fi
		grep " $W/" /proc/mounts | while read -r _ m _; do umount "$m"; done
		rm -rf "$W" "$W".*
	done
	seen=$(echo $rcs | tr ' ' '\n' | sort -n | uniq -c | awk '{printf "%s%sx%s", s, $2, $1; s=" "}')
	if [ $nlost = 0 ]; then l=none; else l="$nlost runs ($firstlost)"; fi
	if [ $nleft = 0 ]; then b=none; else b="$nleft runs ($firstleft)"; fi
	[ $nlost = 0 ] && [ $nleft = 0 ] || failed_rows=$((failed_rows + 1))
	printf '%-62s | %4s | %-8s | %-11s | %s\n' "$name${note:+ ($note)}" "$runs" "$l" "$b" "$seen"
}

# helpers for the fault functions (they run in a subshell in $W)
setrc() { echo "$1" >"$W.rc"; }
flost() { echo "$*" >>"$W.lost"; }
wait_target() {	# waits up to 10 s for the fixture $1 of this run
	for _ in $(seq 100); do
		pgrep -f -- "^$BIN/$1" >/dev/null && return 0
		sleep 0.1
	done
	flost "the target never started"
	return 1
}
need() {	# need WHAT TEST...: a loss unless the test holds
	what=$1; shift
	"$@" || flost "$what"
}
has() { grep -q "$1" err || flost "no message '$1'"; }

# ---------------------------------------------------------------- faults
f_timeout() {
	"$PERUN" collect -c "$BIN/forever" -o out.perf trace -q -s custom -f tick -t 1 2>err
	setrc $?
	need "profile not timed_out" [ "$(pf out.perf trace.timed_out)" = true ]
	need "no tick recorded" [ "$(calls out.perf tick)" -gt 0 ]
}
f_segv() {
	"$PERUN" collect -c "$BIN/crash" -o out.perf trace -s userspace 2>err
	setrc $?
	has "killed by signal 11"
	need "target.signal not 11" [ "$(pf out.perf trace.target.signal)" = 11 ]
	need "ok calls not 3" [ "$(calls out.perf ok)" = 3 ]
}
f_sigint() {
	"$PERUN" collect -c "$BIN/forever" -o out.perf trace -q -s custom -f tick -t 60 2>err &
	pid=$!
	wait_target forever && sleep 1.5
	kill -INT $pid
	wait $pid
	setrc $?
	need "profile not interrupted" [ "$(pf out.perf trace.interrupted)" = true ]
	need "no tick recorded" [ "$(calls out.perf tick)" -gt 0 ]
}
f_kill_perun() {
	"$PERUN" collect -c "$BIN/forever" -o out.perf trace -q -s custom -f tick -t 60 2>err &
	pid=$!
	wait_target forever && sleep 1
	kill -9 $pid
	wait $pid
	setrc $?
	# nothing can be written after SIGKILL: no profile, and no partial one
	need "a partial out.perf" [ ! -e out.perf ]
}
f_kill_stapbpf() {
	"$PERUN" collect -c "$BIN/forever" -o out.perf trace -q -s custom -f tick -t 60 2>err &
	pid=$!
	wait_target forever
	rt=
	for _ in $(seq 50); do
		rt=$(pgrep -f -- "stapbpf .*$W/") && break
		sleep 0.1
	done
	sleep 1
	[ -n "$rt" ] && kill -9 $rt || flost "no stapbpf found"
	wait $pid
	setrc $?
	has "while the command ran"
	# the recorder's events die with the runtime (they are in its map): the
	# profile must say so, not pass for a complete trace
	need "runtime_died not recorded" [ "$(pf out.perf trace.runtime_died)" = true ]
	need "profile says complete" [ "$(pf out.perf trace.complete)" = false ]
}
f_sigpipe() {
	# stderr into a pipe whose reader goes away after one byte
	{ "$PERUN" collect -c "$BIN/forever" -o out.perf trace -s custom -f tick -t 2 2>&1 >/dev/null
	  echo $? >"$W.rc"; } | head -c1 >/dev/null
	rc=$(cat "$W.rc")
	if [ "$rc" = 0 ]; then
		need "no tick recorded" [ "$(calls out.perf tick)" -gt 0 ]
	else
		need "exit $rc and a partial out.perf" [ ! -e out.perf ]
	fi
}
f_buffer() {
	"$PERUN" collect -c "$BIN/exact" -a "15 2 1000" -o out.perf trace -s custom \
		-f fib -f work -f tiny --buffer-size 100 2>err >/dev/null
	setrc $?
	has "warning: the trace is incomplete"
	# every event is recorded (a call is two) or counted lost, per function
	python3 - out.perf <<-\PY || flost "events unaccounted for"
	import json, sys
	t = json.load(open(sys.argv[1]))["trace"]
	an = t["anomalies"]
	calls = {"fib": 1973, "work": 2000, "tiny": 2000}
	rec = sum(2 * s["count"] for s in t["summary"].values())
	assert t["complete"] is False
	assert rec + an["unmatched_entries"] + an["unmatched_exits"] + an["lost_events"] == 2 * sum(calls.values()), (rec, an)
	assert sum(an["lost_by_function"].values()) == an["lost_events"] > 0, an
	PY
}
f_cache_corrupt() {
	cp -a "$CACHE" "$W/cache"
	export PERUN_CACHE_DIR="$W/cache"
	bo=$(ls "$W/cache/modules/$LEAFKEY/"*.bo)
	size=$(stat -c %s "$bo")
	off=$(( ($1 * 7919) % size ))
	b=$(od -An -tu1 -j $off -N1 "$bo" | tr -d ' ')
	printf "\\$(printf %o $(( (b + 1) % 256 )))" | dd of="$bo" bs=1 seek=$off conv=notrunc 2>/dev/null
	bad=$(sha1sum <"$bo" | cut -c1-40)
	# odd runs can rebuild (stap present), even runs cannot (stap missing)
	if [ $(($1 % 2)) = 1 ]; then stap=; else stap=/nonexistent/stap; fi
	[ -z "$stap" ] || export PERUN_STAP=$stap
	"$PERUN" collect -c "$BIN/small" -o out.perf trace -s custom -f leaf -k 2>err
	setrc $?
	rc=$(cat "$W.rc")
	kept=$(sed -n 's/^perun: temp files kept in //p' err)
	if [ -n "$kept" ] && [ -d "$kept/load" ]; then
		for f in "$kept"/load/*; do
			[ "$(sha1sum <"$f" | cut -c1-40)" != "$bad" ] || flost "LOADED the corrupted module"
		done
	fi
	[ -z "$kept" ] || rm -rf "$kept"
	if [ "$rc" = 0 ]; then
		need "leaf calls not 10" [ "$(calls out.perf leaf)" = 10 ]
	else
		has "corrupted"
		need "a profile after a refusal" [ ! -e out.perf ]
	fi
	# the entry is gone or sound again, never left corrupted
	if [ -e "$bo" ]; then
		need "corrupted entry kept" [ "$(sha1sum <"$bo" | cut -c1-40)" != "$bad" ]
	fi
}
# cut the recorded stream at a byte offset: the profile holds every call of
# the whole lines before the cut, the cut line is dropped, nothing else lost
f_trunc() {
	size=$(stat -c %s "$BASE/trace.raw")
	off=$(( size * $1 / (K + 1) + 3 ))
	head -c $off "$BASE/trace.raw" >cut.raw
	head -c $off "$BASE/trace.raw" | sed '$d' >whole.raw
	"$PERUN" __parse "$BASE/plan" cut.raw cut.perf >cut.js 2>err
	setrc $?
	"$PERUN" __parse "$BASE/plan" whole.raw whole.perf >whole.js 2>&1
	for k in events calls; do
		need "$k differ from the whole lines before the cut" [ "$(js cut.js $k)" = "$(js whole.js $k)" ]
	done
	need "the profile lacks calls" [ "$("$PERUN" show cut.perf --format summary | awk '$1 == "tick" { print $2 }')" = "$(js whole.js calls)" ]
	rm -f cut.raw whole.raw cut.perf whole.perf
}
# duplicate 5 x run data records: each counts once (__parse); through the
# collect pipeline (a fake stapbpf replaying the stream) the profile also
# reports exactly that many duplicates
f_dup() {
	awk -v n=$((5 * $1)) '{ print } /^v / && n > 0 && NR % 7 == 0 { print; n-- }' \
		"$BASE/trace.raw" >dup.raw
	ndup=$(( $(wc -l <dup.raw) - $(wc -l <"$BASE/trace.raw") ))
	"$PERUN" __parse "$BASE/plan" dup.raw dup.perf >dup.js 2>err
	r1=$?
	need "calls changed by duplicates" [ "$(js dup.js calls)" = "$FULLCALLS" ]
	need "events changed by duplicates" [ "$(js dup.js events)" = "$FULLEVENTS" ]
	grep -v '^[sr]' dup.raw >replay.raw
	PERUN_STAPBPF="$BIN/fake-stapbpf.sh" FAKE_STAPBPF_MODE=garbage FAKE_STAPBPF_RAW=$W/replay.raw \
		"$PERUN" collect -c "$BIN/crash" -o out.perf trace -q -s custom -f ok 2>>err
	setrc "$r1/$?"
	need "duplicates not reported ($ndup made)" [ "$(pf out.perf trace.anomalies.duplicates)" = "$ndup" ]
	need "replayed calls not $FULLCALLS" [ "$(calls out.perf ok)" = "$FULLCALLS" ]
	rm -f dup.raw dup.perf replay.raw
}
shown_same() {
	for n in 0 1 2; do "$PERUN" show $n@i --format json | sha1sum; done | sort >shown
	cmp -s shown "$BASE/shown"
}
idx_path() { h=$(git rev-parse HEAD) && echo ".perun/objects/$(echo "$h" | cut -c1-2)/$(echo "$h" | cut -c3-)"; }
f_index() {
	idx=$(idx_path)
	size=$(stat -c %s "$idx")
	off=$(( 4 + ($1 * 13) % (size - 4) ))
	printf '\377' | dd of="$idx" bs=1 seek=$off conv=notrunc 2>/dev/null
	cp "$idx" "$W.idx"
	"$PERUN" fsck >fsck1 2>&1; r1=$?
	"$PERUN" fsck --repair >fsck2 2>&1
	setrc "$r1/$?"
	need "damaged index not kept" cmp -s "$W.idx" ".perun/damaged/index-$(git rev-parse HEAD)"
	need "profiles not all reachable again" shown_same
}
f_object() {
	idx=$(idx_path)
	oid=$(python3 -c "import sys; d=open(sys.argv[1],'rb').read(); print(d[16:36].hex())" "$idx")
	obj=.perun/objects/$(echo "$oid" | cut -c1-2)/$(echo "$oid" | cut -c3-)
	chmod u+w "$obj"
	printf '\377\377' | dd of="$obj" bs=1 seek=$((10 + $1)) conv=notrunc 2>/dev/null
	dsum=$(sha1sum <"$obj")
	"$PERUN" fsck >fsck1 2>&1; r1=$?
	"$PERUN" fsck --repair >fsck2 2>&1
	setrc "$r1/$?"
	need "damaged object not kept byte for byte" [ "$(sha1sum <.perun/damaged/object-$oid)" = "$dsum" ]
	need "other entries lost" [ "$("$PERUN" status --short | grep -c '@i')" = 2 ]
}
f_add10() {
	cp "$BASE"/par/*.perf .
	for i in 0 1 2 3 4 5 6 7 8 9; do
		{ "$PERUN" add par$i.perf --keep-profile >/dev/null 2>>err; echo $? >>rcs; } &
	done
	wait
	setrc "$(sort -u rcs | tr '\n' ' ' | sed 's/ $//')"
	need "entries lost" [ "$("$PERUN" status --short | grep -c '@i')" = 13 ]
	for n in 0 1 2 3 4 5 6 7 8 9 10 11 12; do
		"$PERUN" show $n@i --format json >j 2>/dev/null && sha1sum <j >>shown.all &&
		python3 -c "import json; print(json.load(open('j'))['header'].get('workload', ''))" >>workloads
	done
	for i in 0 1 2 3 4 5 6 7 8 9; do
		grep -qx "par$i" workloads || flost "par$i not registered"
	done
	sort shown.all | comm -23 "$BASE/shown" - | grep -q . && flost "an earlier profile not shown as before"
	rm -f j shown.all workloads par*.perf
}
f_missing_dir() {
	start=$(date +%s)
	"$PERUN" collect -c "$BIN/forever" -o nodir/out.perf trace -s custom -f tick -t 5 2>err
	setrc $?
	has "directory nodir does not exist: create it first"
	need "the target ran" [ $(($(date +%s) - start)) -lt 4 ]
	need "nodir created" [ ! -e nodir ]
}
f_disk_full() {
	mkdir full && mount -t tmpfs -o size=64k tmpfs full || { flost "cannot mount tmpfs"; return; }
	head -c 40000 /dev/urandom >full/filler
	fsum=$(sha1sum <full/filler)
	"$PERUN" collect -c "$BIN/forever" -o full/out.perf trace -q -s custom -f tick -t 1 2>err
	setrc $?
	if [ -s full/out.perf ] && [ "$(calls full/out.perf tick)" -gt 0 ]; then
		:	# it fit
	else
		f=$(sed -n 's/.*the profile is in \(.*\), not where it was asked for/\1/p' err)
		need "no rescue file named" [ -n "$f" ]
		[ -z "$f" ] || need "rescue file $f missing" [ -s "$f" ]
		[ -z "$f" ] || need "rescue file without ticks" [ "$(calls "$f" tick)" -gt 0 ]
		need "a partial file on the full disk" [ "$(ls -A full)" = filler ]
	fi
	need "filler changed" [ "$(sha1sum <full/filler)" = "$fsum" ]
	umount full
}
f_fake_crash() {
	PERUN_STAPBPF="$BIN/fake-stapbpf.sh" FAKE_STAPBPF_MODE=crash \
		"$PERUN" collect -c "$BIN/crash" -o out.perf trace -q -s custom -f ok 2>err
	setrc $?
	has "fake stapbpf crashing on purpose"
	need "a profile from a runtime that never ran" [ ! -e out.perf ]
}
f_fake_hang() {
	start=$(date +%s)
	PERUN_STAPBPF="$BIN/fake-stapbpf.sh" FAKE_STAPBPF_MODE=hang \
		"$PERUN" collect -c "$BIN/forever" -o out.perf trace -q -s custom -f tick -t 1 2>err
	setrc $?
	need "not stopped within 20 s" [ $(($(date +%s) - start)) -lt 20 ]
	[ -e out.perf ] || [ -s err ] || flost "no profile and no message"
}
f_fake_garbage() {
	printf "s 100 0 0\n0 0 10\n1 0 20\nq\n" >raw
	PERUN_STAPBPF="$BIN/fake-stapbpf.sh" FAKE_STAPBPF_MODE=garbage FAKE_STAPBPF_RAW=$W/raw \
		"$PERUN" collect -c "$BIN/crash" -o out.perf trace -q -s custom -f ok 2>err
	setrc $?
	need "malformed lines not 3" [ "$(pf out.perf trace.anomalies.malformed_lines)" = 3 ]
	need "truncated lines not 1" [ "$(pf out.perf trace.anomalies.truncated_lines)" = 1 ]
	need "lost events not 17" [ "$(pf out.perf trace.anomalies.lost_events)" = 17 ]
	need "ok calls not 1" [ "$(calls out.perf ok)" = 1 ]
}
f_fake_readerdies() {
	PERUN_STAPBPF="$BIN/fake-stapbpf.sh" FAKE_STAPBPF_MODE=readerdies \
		"$PERUN" collect -c "$BIN/forever" -o out.perf trace -q -s custom -f tick -t 60 2>err
	setrc $?
	has "reader stopped"
	need "runtime_died not recorded" [ "$(pf out.perf trace.runtime_died)" = true ]
}

# ---------------------------------------------------------------- the table
rows=${FAULT_ROWS:-all}
row() {	# row NAME RUNS SNAP FUNC [NOTE]
	case " $rows " in *" all "*|*" $4 "*) run_row "$@" ;; esac
}
printf '%-62s | %4s | %-8s | %-11s | %s\n' fault runs lost "left behind" "exit statuses seen"
row "target timeout (-t 1)" "$K" all f_timeout
row "target segfault" "$K" all f_segv
row "SIGINT to perun mid-run" "$K" all f_sigint
row "SIGKILL to perun mid-run" "$K" all f_kill_perun "no profile possible"
row "SIGKILL to stapbpf mid-run" "$K" all f_kill_stapbpf
row "SIGPIPE: stderr to a closed pipe" "$K" all f_sigpipe
row "full recorder buffer (--buffer-size 100)" "$K" all f_buffer "loss counted"
row "corrupted module cache entry" "$K" all f_cache_corrupt "odd runs: stap, even: none"
row "truncated raw stream (__parse)" "$K" all f_trunc "K cut points"
row "duplicated raw records (__parse)" "$K" all f_dup
row "damaged index, then fsck --repair" "$K" user f_index
row "damaged object, then fsck --repair" "$K" user f_object
row "10 concurrent perun add" "$K" store f_add10
row "-o into a missing directory" "$K" all f_missing_dir
row "disk full on the output (64k tmpfs)" "$K" all f_disk_full
row "fake stapbpf: crash" "$K" all f_fake_crash
row "fake stapbpf: hang (ignores SIGINT/TERM)" "$K" all f_fake_hang
row "fake stapbpf: garbage records" "$K" all f_fake_garbage
row "fake stapbpf: perf reader dies" "$K" all f_fake_readerdies
[ $failed_rows = 0 ]
