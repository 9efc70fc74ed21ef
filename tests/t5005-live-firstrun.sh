#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: what a first run meets.  The binary finds its data from the build tree
# and from an installed layout with no PERUN_* variable; arguments are kept as
# written; the target's exit status, an oddly named USDT note and a closed pipe
# are handled; long C++ names stay apart in the summary; a user without root
# is told what is missing and can still read; root in a user's repository
# leaves the user's files the user's and reports git's ownership refusal.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'build the targets' '
	cat >args.c <<-\EOC &&
	#include <stdio.h>
	int show(const char *s) { return printf("[%s]\n", s); }
	int main(int argc, char **argv) { for (int i = 1; i < argc; i++) show(argv[i]); return 3; }
	EOC
	cc -g -O0 -o args args.c &&
	cat >usdt.c <<-\EOC &&
	#include <sys/sdt.h>
	int work(int x) { STAP_PROBE1(app, weird_name, x); STAP_PROBE1(app, good, x); return x + 1; }
	int main(void) { int s = 0; for (int i = 0; i < 4; i++) s += work(i); return s == 10 ? 0 : 1; }
	EOC
	cc -g -O0 -S -o usdt.s usdt.c && sed "s/weird_name/weird-name/" usdt.s >usdt2.s &&
	cc -g -o usdt usdt2.s &&
	cat >long.cc <<-\EOC &&
	namespace very_long_namespace_name { namespace inner {
	template <typename T> struct Container {
		__attribute__((noinline)) T compute_something(T a, T b) { return a + b; }
	};
	} }
	int main() {
		very_long_namespace_name::inner::Container<int> a;
		very_long_namespace_name::inner::Container<double> b;
		int s = 0;
		for (int i = 0; i < 3; i++) s += a.compute_something(i, 1) + (int)b.compute_something(i, 2.0);
		return s > 1000;
	}
	EOC
	c++ -g -O1 -o long long.cc
'

test_expect_success 'the build tree binary finds templates, tapset and shim by itself' '
	env -u PERUN_DATADIR -u PERUN_LIBDIR "$PERUN" doctor >doc &&
	grep "perun data .*templates/header.stp.in" doc &&
	! grep "memlock.*missing" doc &&
	env -u PERUN_DATADIR -u PERUN_LIBDIR "$PERUN" collect -o a.perf -c ./args -a x trace \
		-s custom -f show 2>err &&
	cat err && test "$(profile_counts a.perf)" = "show 1"
'

test_expect_success 'doctor: where modules are off it says so instead of suggesting headers' '
	"$PERUN" doctor >doc && cat doc &&
	if test -e /proc/modules; then
		echo "this kernel loads modules: nothing to check"
	else
		grep -A1 "kernel runtime" doc | grep "modules are off" &&
		! grep -A1 "kernel runtime" doc | grep "linux-headers"
	fi
'

test_expect_success 'an installed layout (PREFIX/bin, share/perun, lib/perun) works when moved' '
	p=moved/prefix && mkdir -p $p/bin $p/share/perun/templates $p/share/perun/tapsets $p/lib/perun &&
	cp "$PERUN" $p/bin/perun &&
	cp "$SRCDIR"/templates/*.stp.in $p/share/perun/templates/ &&
	cp "$SRCDIR"/tapsets/perun.stp $p/share/perun/tapsets/ &&
	cp "$BUILDDIR/perun-memlock-shim.so" $p/lib/perun/ &&
	env -u PERUN_DATADIR -u PERUN_LIBDIR $p/bin/perun doctor >doc &&
	grep "perun data .*moved/prefix/share/perun/templates" doc &&
	env -u PERUN_DATADIR -u PERUN_LIBDIR $p/bin/perun collect -o b.perf -c ./args -a y trace \
		-s custom -f show 2>err &&
	cat err && test "$(profile_counts b.perf)" = "show 1"
'

test_expect_success 'the environment still overrides the lookup' '
	set +e; PERUN_DATADIR="$TRASH/nowhere" "$PERUN" collect -o c.perf -c ./args trace 2>err
	rc=$?; set -e; cat err; test $rc = 1 && grep "nowhere/templates" err
'

test_expect_success '-a and -w are split but never expanded' '
	HOME=/should-not-appear "$PERUN" collect -o d.perf -c ./args \
		-a "\$HOME ~ *.c \"a b\" '"'"'c  d'"'"' e\\ f \$(id) x|y" -w "w1 w2" \
		trace -s custom -f show >out 2>err &&
	cat out &&
	cat >expect <<-\EOF &&
	[$HOME]
	[~]
	[*.c]
	[a b]
	[c  d]
	[e f]
	[$(id)]
	[x|y]
	[w1]
	[w2]
	EOF
	test_cmp expect out
'

test_expect_success 'a non-zero exit of the target is said' '
	"$PERUN" collect -o e.perf -c ./args -a x trace -s custom -f show 2>err &&
	grep "target exited with status 3" err &&
	test "$(profile_field e.perf trace.target.exit)" = 3
'

test_expect_success 'the auto runtime line does not repeat that modules are off' '
	"$PERUN" collect -o f.perf -c ./args -a x trace -s custom -f show 2>err &&
	grep "^perun: runtime " err &&
	if ! test -e /proc/modules; then ! grep "cannot load modules" err; fi
'

test_expect_success 'an oddly named USDT note is skipped with a warning, the rest traced' '
	"$PERUN" collect -o g.perf -c ./usdt trace 2>err &&
	cat err &&
	grep "skipping USDT probe .app:weird-name." err &&
	profile_counts g.perf >counts && cat counts &&
	grep -x "app:good 4" counts && grep -x "work 4" counts
'

test_expect_success '-g at its largest passes the BPF verifier' '
	"$PERUN" collect -o h.perf -c ./args -a z trace -s custom -f show -g 2147483647 2>err &&
	cat err && test -s h.perf
'

test_expect_success 'a closed pipe does not leave the temp dir behind' '
	mkdir -p tmp &&
	TMPDIR="$TRASH/tmp" "$PERUN" collect -c ./args -a "$(seq -s " " 1 2000)" -o i.perf trace \
		--metrics 2>&1 | head -c 1 >/dev/null &&
	sleep 1 && test -z "$(ls tmp)" && test -s i.perf
'

test_expect_success 'long C++ names stay apart in the summary' '
	mkdir sum && cd sum && git init -q && git config user.email t@example.com &&
	git config user.name t && git commit -q --allow-empty -m one && "$PERUN" init >/dev/null &&
	"$PERUN" collect -o ../long.perf -c ../long trace -q &&
	"$PERUN" show ../long.perf --format summary >s && cat s &&
	grep "compute_something(int, int) " s &&
	grep "compute_something(double, double) " s &&
	test $(grep -c "compute_something" s) = 2
'

# --- not root ------------------------------------------------------------------

# nobody has its own HOME and cache (lib.sh's PERUN_CACHE_DIR is root's)
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- env -u PERUN_CACHE_DIR "$@"
}

test_expect_success 'set up a repository with profiles, readable by nobody' '
	chmod 755 "$TRASH" &&
	mkdir ro && cd ro && git init -q && git config user.email t@example.com &&
	git config user.name t && cp ../args.c . && git add args.c && git commit -q -m one &&
	"$PERUN" init >/dev/null &&
	"$PERUN" collect -c ../args -a x trace -q -s custom -f show &&
	"$PERUN" add 0@p >/dev/null &&
	"$PERUN" collect -c ../args -a x trace -q -s custom -f show &&
	cd .. && cp -R ro ro-nobody && chown -R nobody ro-nobody &&
	mkdir home-nobody && chown nobody home-nobody
'

stapbpf_mode=$(stat -c %a "$(command -v stapbpf)" 2>/dev/null)

test_expect_success 'not root: stapbpf is not "not found" but not executable, with the fix' '
	case "$stapbpf_mode" in *4) ;; *) echo "stapbpf is mode $stapbpf_mode: nothing to check"; exit 0 ;; esac
	mkdir -p nobody-out && chown nobody nobody-out &&
	test_expect_code 1 as_nobody env HOME="$TRASH/home-nobody" "$PERUN" collect -o nobody-out/x.perf -c ./args trace 2>err &&
	cat err &&
	grep "stapbpf is installed but not executable by uid" err &&
	grep "run perun as root" err && grep "stapusr" err && ! grep "not found" err &&
	! test -e nobody-out/x.perf
'

test_expect_success 'not root: doctor says what is missing' '
	set +e; as_nobody env HOME="$TRASH/home-nobody" "$PERUN" doctor >doc 2>&1; rc=$?; set -e
	cat doc; test $rc = 1 &&
	grep "^FAIL root" doc &&
	case "$stapbpf_mode" in *4) grep "stapbpf .*not executable by uid" doc ;; esac &&
	! grep "stapbpf .*not found" doc
'

test_expect_success 'not root: show, log, status and cache list work' '
	cd ro-nobody &&
	as_nobody env HOME="$TRASH/home-nobody" "$PERUN" status >st 2>&1 && cat st &&
	grep "1 pending profile" st &&
	as_nobody env HOME="$TRASH/home-nobody" "$PERUN" log >lg 2>&1 && cat lg &&
	grep "^minor " lg &&
	as_nobody env HOME="$TRASH/home-nobody" "$PERUN" show 0@i --format summary >sh 2>&1 &&
	cat sh && grep "^show  " sh &&
	as_nobody env HOME="$TRASH/home-nobody" "$PERUN" show 0@p --format summary >/dev/null &&
	as_nobody env HOME="$TRASH/home-nobody" "$PERUN" cache list >cl 2>&1 && cat cl &&
	grep "entries" cl
'

# --- root in another user's repository -----------------------------------------

test_expect_success 'root in nobody'"'"'s repository: git'"'"'s refusal is reported with the fix' '
	cd ro-nobody &&
	test_expect_code 1 env -u SUDO_UID "$PERUN" status >st 2>err && cat err &&
	grep "git refuses the repository at $TRASH/ro-nobody" err &&
	grep "git config --global --add safe.directory $TRASH/ro-nobody" err
'

test_expect_success 'root collecting there: the refusal is said, the files stay nobody'"'"'s' '
	cd ro-nobody &&
	{ env -u SUDO_UID "$PERUN" collect -c ../args trace -q -s custom -f show 2>err || :; } && cat err &&
	grep "safe.directory" err &&
	test -z "$(find .perun ! -user nobody)" &&
	ls .perun/jobs/*.perf
'

test_expect_success 'under sudo, as with git, root may use the sudo user'"'"'s repository' '
	cd ro-nobody &&
	SUDO_UID=$(id -u nobody) "$PERUN" status >st 2>err && cat st err &&
	grep "pending profile" st &&
	SUDO_UID=$(id -u nobody) "$PERUN" collect -c ../args -a x -o ../sudo.perf trace -q \
		-s custom -f show 2>err &&
	! grep "safe.directory" err &&
	test "$(profile_field ../sudo.perf origin)" = "$(git -c safe.directory="*" rev-parse HEAD)" &&
	test -z "$(find .perun ! -user nobody)"
'

test_expect_success 'a hard link or symlink planted in .perun is never given away' '
	cd ro-nobody && echo secret >"$TRASH/rootfile" && chmod 600 "$TRASH/rootfile" &&
	ln "$TRASH/rootfile" .perun/link && ln -s "$TRASH/rootfile" .perun/sym &&
	SUDO_UID=$(id -u nobody) "$PERUN" status >/dev/null 2>&1 &&
	test "$(stat -c %U "$TRASH/rootfile")" = root
'

test_expect_success 'nothing of this run left running' 'test -z "$(procs_in_trash)"'

test_done
