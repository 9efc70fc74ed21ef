#!/bin/sh
# README's set-up commands and its first main-job example, exactly as written, in a
# fresh clone of this repository's HEAD (uncommitted work is not in it) with no PERUN_*
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
	readme_block "The main job" | head -n 1 >mainjob.sh &&
	grep -q "^perun collect -o app.perf -c ./app trace" mainjob.sh &&
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
	cat >work/app.c <<-\EOC &&
	int leaf(int x) { return x * 2; }
	int middle(int x) { return leaf(x) + 1; }
	int main(void) { int s = 0; for (int i = 0; i < 7; i++) s += middle(i); return s == 49 ? 0 : 1; }
	EOC
	cc -g -O0 -o work/app work/app.c
'

# every PERUN_* variable make check and lib.sh set, unset
unset_perun=$(env | sed -n "s/^\(PERUN[A-Z_]*\)=.*/-u \1/p" | tr "\n" " ")

test_expect_success 'the set-up commands and the main job, as written' '
	{
		echo "set -e"
		echo "cd \"$TRASH/perun\""
		cat setup.sh
		echo "command -v perun"
		echo "cd \"$TRASH/work\""
		cat mainjob.sh
	} >script.sh &&
	env $unset_perun HOME="$TRASH/home" sh script.sh >run.out 2>&1 || { cat run.out; false; } &&
	cat run.out &&
	grep -qx "$TRASH/perun/perun" run.out &&
	test -s work/app.perf &&
	profile_counts work/app.perf >counts &&
	grep -qx "leaf 7" counts && grep -qx "middle 7" counts && grep -qx "main 1" counts
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
