# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by every tests/tNNNN-*.sh: git-style helpers printing TAP.
#
#   test_expect_success 'description' 'shell body'   the body runs with set -e
#       (a command failing on the left of && or || does not stop it)
#   test_done                                         prints the plan, cleans up
#   require_live                                      skip without root/stap; fail
#                                                     instead under PERUN_REQUIRE_LIVE=1
# Each test file gets its own trash directory ($TRASH) and module cache.
set -u

: "${PERUN:?run through make check (PERUN is not set)}"
: "${SRCDIR:?}"
TRASH=$(mktemp -d "${TMPDIR:-/tmp}/perun-test.XXXXXX")
export PERUN_CACHE_DIR="$TRASH/cache"
# perun's temp directories (scripts, modules, raw streams) of this test file go
# here, so that the runtime processes it starts name $TRASH on their command
# lines: see assert_nothing_left
export TMPDIR="$TRASH/tmp"
mkdir -p "$TMPDIR"
# A home of the test's own (as git's own test suite has) with a git identity
# in its global configuration, which a repository's own user.name overrides:
# the tests run alike on a fresh host with no git configuration and on a
# developer's machine with one
HOME="$TRASH"
GIT_CONFIG_NOSYSTEM=1
export HOME GIT_CONFIG_NOSYSTEM
unset XDG_CONFIG_HOME XDG_CACHE_HOME GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME \
	GIT_COMMITTER_EMAIL
printf "[user]\n\tname = A U Thor\n\temail = author@example.com\n" >"$TRASH/.gitconfig"
# stap's own cache (its kernel configuration probes, stapconf, about a minute
# of CPU per cold kernel-module build for the guest's 6.1 headers, and the
# typequery/tracequery modules it builds against a kernel's headers) is shared
# by the test files of one build tree instead of starting cold in each HOME.
# stap keys it by content, and never caches a module named with -m, as
# perun's are: every module is still compiled, and perun's own module cache
# stays per test file (what the tests' "(miss)" and "(hit)" lines are about).
# make clean removes it; PERUN_TEST_STAP_DIR=DIR puts it elsewhere.
SYSTEMTAP_DIR="${PERUN_TEST_STAP_DIR:-${BUILDDIR:-$SRCDIR}/tests/stap-cache}"
mkdir -p "$SYSTEMTAP_DIR"
export SYSTEMTAP_DIR
# libgit2 1.5 leaks pcre2 match data in remote config lookups (push, fetch):
# not ours; see the file
LSAN_OPTIONS="suppressions=$SRCDIR/tests/lsan-libgit2.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
FIXTURES="$SRCDIR/tests/fixtures"
test_count=0
test_failed=0

cleanup_trash() {
	hog_stop
	if [ "$test_failed" = 0 ] || [ -z "${PERUN_KEEP_TRASH:-}" ]; then
		rm -rf "$TRASH"
	else
		echo "# trash kept in $TRASH"
	fi
}
trap cleanup_trash EXIT

say() { echo "# $*"; }

# wait_line FILE REGEX: waits up to 60 s for a line of FILE matching REGEX
# (a service's output, perun's stderr); says what FILE held if none came
wait_line() {
	for i in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no '$2' in $1:"; cat "$1"; return 1
}

# hog_start [SECONDS]: a process that keeps one CPU busy (a loaded machine)
# for SECONDS (default: until hog_stop), or until hog_stop, the end of the test body that started it, or the end of the
# test file (its pid is kept in $TRASH/hog.pid, as bodies run in subshells)
hog_start() {
	[ -s "$TRASH/hog.pid" ] && return 0
	if [ -n "${1:-}" ]; then
		timeout "$1" sh -c "while :; do :; done" &
	else
		sh -c "while :; do :; done" &
	fi
	echo $! >"$TRASH/hog.pid"
	trap hog_stop EXIT
}
hog_stop() {
	[ -s "$TRASH/hog.pid" ] || return 0
	kill "$(cat "$TRASH/hog.pid")" 2>/dev/null
	wait "$(cat "$TRASH/hog.pid")" 2>/dev/null
	rm -f "$TRASH/hog.pid"
}

skip_all() {
	if [ "${PERUN_REQUIRE_LIVE:-0}" = 1 ]; then
		echo "not ok 1 - live test required (PERUN_REQUIRE_LIVE=1) but: $*"
		echo "1..1"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 0
}

require_live() {
	[ "$(id -u)" = 0 ] || skip_all "needs root"
	command -v stap >/dev/null 2>&1 || skip_all "needs stap (apt-get install systemtap)"
	command -v stapbpf >/dev/null 2>&1 || skip_all "needs stapbpf"
	"$PERUN" doctor >"$TRASH/doctor.out" 2>&1 || {
		sed 's/^/# /' "$TRASH/doctor.out"
		skip_all "perun doctor says this machine cannot trace"
	}
}

test_expect_success() {
	test_count=$((test_count + 1))
	: >"$TRASH/.start"
	# Not "if (set -e; eval ...)": a shell ignores set -e in the condition of
	# an if (or on the left of && and ||), in subshells too, so a failing
	# command in the middle of a body would not fail the test.  The subshell
	# runs as a statement of its own; its status is read afterwards.
	(cd "$TRASH" || exit; set -e; eval "$2") >"$TRASH/out.$test_count" 2>&1
	test_rc=$?
	if [ "$test_rc" = 0 ]; then
		echo "ok $test_count - $1"
	else
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$TRASH/out.$test_count" | tail -40
		# what the commands said into err files, when the body had not shown it
		find "$TRASH" -name err -newer "$TRASH/.start" 2>/dev/null | while read -r e; do
			[ -s "$e" ] && ! grep -qxF -- "$(tail -n 1 "$e")" "$TRASH/out.$test_count" || continue
			echo "#   --- $e:"
			sed 's/^/#   /' "$e" | tail -20
		done
		test_failed=$((test_failed + 1))
	fi
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" = 0 ]
	exit $?
}

# Compares the expected output $1 with the actual $2 and shows the difference
# (git's test_cmp).  With heredocs: cat >expect <<-\EOF ... EOF.
test_cmp() { diff -u "$1" "$2"; }

# test_line_count = N FILE: FILE has N lines (git's test_line_count)
test_line_count() {
	[ "$(wc -l <"$3" | tr -d " ")" "$1" "$2" ] || {
		echo "test_line_count: $3 has $(wc -l <"$3") lines, not $1 $2:"; cat "$3"; return 1
	}
}

# A single quote, for expected text inside the single-quoted body of a test:
# cat >expect <<-EOF with ${SQ}perun init${SQ} (git's $SQ).
SQ="'"

# Runs a command that must exit with status $1 (git's test_expect_code).
test_expect_code() {
	want=$1; shift
	got=0; "$@" || got=$?
	[ "$got" = "$want" ] || { echo "exit $got, not $want: $*"; return 1; }
}

# Builds the fixture programs into $TRASH (plain cc: no sanitizers).
build_fixtures() {
	cc -g -O1 -fPIC -shared -o "$TRASH/libcountlib.so" "$FIXTURES/countlib.c" &&
	cc -g -O1 -pthread -o "$TRASH/counts" "$FIXTURES/counts.c" \
		-L"$TRASH" -lcountlib -Wl,-rpath,"$TRASH" &&
	cc -g -O0 -o "$TRASH/forever" "$FIXTURES/forever.c" &&
	cc -g -O0 -o "$TRASH/crash" "$FIXTURES/crash.c" &&
	c++ -g -O1 -o "$TRASH/cppmethod" "$FIXTURES/cppmethod.cc"
}

# Per-function call counts of a profile: "name count" lines, sorted.
profile_counts() {
	python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for name, s in sorted(p["trace"]["summary"].items()):
    print(name, s["count"])
PY
}

# bpftrace_stop PID: ends a bpftrace started in the background, so that it
# prints its maps.  bpftrace 0.17 can take a SIGINT outside its poll and then
# wait in epoll_wait for ever (CI lost 18 minutes to one): INT again every
# half second, KILL after 30 s.  A zombie counts as ended.  Never fails (the
# bodies run under set -e).
bpftrace_stop() {
	_bs=0
	while [ $_bs -lt 300 ] && kill -0 "$1" 2>/dev/null &&
		[ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]; do
		[ $((_bs % 5)) != 0 ] || kill -INT "$1" 2>/dev/null || :
		_bs=$((_bs + 1))
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || :
	wait "$1" 2>/dev/null || :
}

# A field of the profile's trace region, by dotted path.
profile_field() {
	python3 - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[k]
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)
PY
}

# Pids of running programs whose executable lives in $TRASH.
procs_in_trash() {
	for p in /proc/[0-9]*; do
		case "$(readlink "$p/exe" 2>/dev/null)" in
		"$TRASH"/*) echo "${p#/proc/}" ;;
		esac
	done
}

# Waits up to 60 s until a fixture runs (perun holds it before exec until
# its probes are armed: a sanitizer build on a loaded machine took over 10 s).
wait_for_target() {
	for i in $(seq 600); do
		[ -n "$(procs_in_trash)" ] && return 0
		sleep 0.1
	done
	echo "the target never started"; return 1
}

# Runtime processes and uprobe events there were before this test file ran:
# assert_nothing_left looks only at what appeared since (another job on the
# machine, or a stale event from a killed tracer, is not this run's doing).
uprobe_lines() {
	for ev in /sys/kernel/tracing/uprobe_events /sys/kernel/debug/tracing/uprobe_events; do
		[ -r "$ev" ] && grep stapprobe "$ev" && break
	done | sort -u
}
# stap, stapbpf, staprun, stapio, stapdyn and perun's own loader (pgrep -x
# looks at the 15-character process name: one short pattern each)
runtime_procs() { pgrep -x 'stap[a-z]*'; pgrep -x perun-uprobes; }
runtime_procs | sort >"$TRASH/.procs.before" || true
uprobe_lines >"$TRASH/.uprobes.before" || true

# Whether process $1's command line names $TRASH: one this test file started
# (through perun, whose temp directories are under $TMPDIR, or directly).
mentions_trash() {
	tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "$TRASH"
}

# No stapbpf, stap or fixture left running, and no uprobe events left, of
# those this test file could have started.  Runtime processes of other jobs on
# the machine (their command lines do not name $TRASH) and their live uprobe
# events are not this run's doing.
assert_nothing_left() {
	sleep "${1:-0}"
	runtime_procs | sort >"$TRASH/.procs.now" || true
	new=
	for p in $(comm -13 "$TRASH/.procs.before" "$TRASH/.procs.now"); do
		mentions_trash "$p" && new="$new $p"
	done
	if [ -n "$new" ]; then
		echo "runtime processes left:"; for p in $new; do ps -o pid,ppid,etime,args -p "$p" | tail -n +2; done
		return 1
	fi
	if [ -n "$(procs_in_trash)" ]; then
		echo "target left:"; procs_in_trash; return 1
	fi
	uprobe_lines >"$TRASH/.uprobes.now" || true
	new=$(comm -13 "$TRASH/.uprobes.before" "$TRASH/.uprobes.now" | while read -r ev rest; do
		# stapprobe_PID_N of a live tracer that is not ours: another job's
		pid=${ev#*stapprobe_}; pid=${pid%%_*}
		if [ -d "/proc/$pid" ] && ! mentions_trash "$pid"; then continue; fi
		echo "$ev $rest"
	done)
	if [ -n "$new" ]; then
		echo "uprobe events left:"; echo "$new"; return 1
	fi
}
