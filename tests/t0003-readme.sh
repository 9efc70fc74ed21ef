#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# README's set-up commands and its first main-job example (building the README's
# app from tests/fixtures, then tracing it), exactly as written, in a fresh clone
# of this repository's HEAD (uncommitted work is not in it) with no PERUN_*
# variable set and a fresh HOME: what a new user types.  `make check` is left out, as
# this test runs inside it.  The bootstrap runs for real; it installs nothing when the
# packages are there (and this test skips when they are not: apt-get is too slow here).
. "$SRCDIR/tests/lib.sh"
require_live
missing=$(sh "$SRCDIR/tools/bootstrap-debian.sh" --list-missing)
[ -z "$missing" ] || skip_all "packages missing ($missing): run sh tools/bootstrap-debian.sh"

# The indented lines of the README section whose title starts with $1.
readme_block() {
	awk -v t="$1" '
		index($0, t) == 1 { on = 1; next }
		on && /^-+$/ && seen { exit }
		on && /^-+$/ { seen = 1; next }
		on && /^    / { sub(/^    /, ""); print }
	' "$SRCDIR/README"
}

test_expect_success 'README has a set-up block and a main-job example' '
	readme_block "Set up on a fresh Debian 12 machine" >setup.all &&
	grep -v "^make check" setup.all >setup.sh &&
	grep -q "^sh tools/bootstrap-debian.sh" setup.sh &&
	test $(grep -c "^make check" setup.all) = 1 &&
	readme_block "The main job" | head -n 2 >mainjob.sh &&
	sed -n 1p mainjob.sh | grep -q "^cc -g -o app tests/fixtures/app.c -lz" &&
	sed -n 2p mainjob.sh | grep -q "^perun collect -o app.perf -c ./app trace" &&
	cat setup.sh mainjob.sh
'

test_expect_success 'a clean checkout' '
	top=$(git -C "$SRCDIR" rev-parse --show-toplevel 2>/dev/null || :) &&
	if test -n "$top" && test "$top" = "$(cd "$SRCDIR" && pwd -P)"; then
		git clone -q "$SRCDIR" perun
	else	# make distcheck: the unpacked tarball is the clean tree
		cp -R "$SRCDIR" perun && chmod -R u+w perun
	fi &&
	test -f perun/tools/bootstrap-debian.sh && ! test -e perun/perun &&
	mkdir work home &&
	cc -g -O0 -o work/app perun/tests/fixtures/app.c -lz &&
	cat >work/server.c <<-\EOC &&
	int http_parse(int x) { return x % 7; }
	int http_handle(int x) { return http_parse(x) + 1; }
	int idle(int x) { return x; }
	int main(void) { int s = 0; for (int i = 0; i < 1000; i++) s += http_handle(i) + idle(i); return s < 0; }
	EOC
	cc -g -O0 -o work/server work/server.c &&
	seq 1 50 >work/input.txt
'

# every PERUN_* variable make check and lib.sh set, unset
unset_perun=$(env | sed -n "s/^\(PERUN[A-Z_]*\)=.*/-u \1/p" | tr "\n" " ")

test_expect_success 'the set-up commands and the main job, as written' '
	{
		echo "set -e"
		echo "cd \"$TRASH/perun\""
		cat setup.sh
		echo "command -v perun"
		cat mainjob.sh
	} >script.sh &&
	env $unset_perun HOME="$TRASH/home" sh script.sh >run.out 2>&1 || { cat run.out; false; } &&
	cat run.out &&
	grep -qx "$TRASH/perun/perun" run.out &&
	test -s perun/app.perf &&
	profile_counts perun/app.perf >counts &&
	grep -qx "leaf 7" counts && grep -qx "middle 7" counts && grep -qx "main 1" counts
'

# The other examples of "The main job", as written, each in the same set-up
# (the clean clone's perun on PATH, fresh HOME, no PERUN_* variables).
test_expect_success 'every other example of The main job, as written' '
	readme_block "The main job" | tail -n +3 >examples &&
	cat examples && test "$(wc -l <examples)" -ge 5 &&
	n=0 &&
	while IFS= read -r line; do
		n=$((n + 1))
		{
			echo "cd \"$TRASH/work\""
			echo "PATH=\"$TRASH/perun:\$PATH\""
			printf "%s\n" "$line"
		} >ex.$n.sh
		code=0
		env $unset_perun HOME="$TRASH/home" sh -e ex.$n.sh >ex.$n.out 2>&1 || code=$?
		echo "[$code] $line"
		[ $code = 0 ] || { cat ex.$n.out; exit 1; }
	done <examples &&
	grep -q "libz#inflate" examples &&
	grep "calls of" ex.1.out && grep -q "metrics:" ex.2.out &&
	grep -q "perun can trace here" ex.4.out &&
	grep -q "liblzma#lzma_code" examples && test -s work/input.txt.xz &&
	! grep -i "debuginfo\|stripped" ex.6.out
'

# "The kernel runtime": the preparation from the source tree, the cross-build
# from the tree, for the release whose headers CI installs
# (tools/stap-vm.sh prepare); here too without a kernel that loads modules.
test_expect_success 'the examples of The kernel runtime, as written' '
	readme_block "The kernel runtime" >kexamples && cat kexamples &&
	test "$(wc -l <kexamples)" = 2 &&
	# the release as the example names it: that of the guest, which follows
	# the current 6.1 kernel of Debian
	grep -q "cache build --kernel \"\$(bash tools/stap-vm.sh release)\" " kexamples &&
	{ rel=$(cd "$TRASH/perun" && bash tools/stap-vm.sh release 2>/dev/null) || rel=; } &&
	if test -z "$rel" || ! test -d "/lib/modules/$rel/build"; then
		test -z "${PERUN_REQUIRE_LIVE:-}" || { echo "no headers for $rel: run tools/stap-vm.sh prepare"; exit 1; }
		echo "# no headers for $rel: the cross-build is not tried"; exit 0
	fi &&
	{ echo "cd \"$TRASH/perun\""; sed -n 1p kexamples; } >k1.sh &&
	{ echo "cd \"$TRASH/perun\""; echo "PATH=\"$TRASH/perun:\$PATH\""; sed -n 2p kexamples; } >k2.sh &&
	env $unset_perun HOME="$TRASH/home" sh -e k1.sh >k1.out 2>&1 || { cat k1.out; exit 1; } &&
	env $unset_perun HOME="$TRASH/home" sh -e k2.sh >k2.out 2>&1 || { cat k2.out; exit 1; } &&
	cat k1.out k2.out &&
	ls home/.cache/perun/modules/*/*.ko
'

test_expect_success 'the bootstrap built a release perun (no sanitizers)' '
	! grep -q "enable-sanitizers" perun/config.status &&
	! nm perun/perun | grep -q __asan_init &&
	! grep -q "LeakSanitizer\|AddressSanitizer\|runtime error" run.out
'

test_expect_success 'the cache went to the fresh HOME, nothing of this run left running' '
	test -d home/.cache/perun/modules &&
	test -z "$(procs_in_trash)"
'

test_done
