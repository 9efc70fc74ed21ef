# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by the kernel-runtime tests (t51xx) after lib.sh: the QEMU guest of
# tools/stap-vm.sh (Debian 6.1, this host's files visible read-only), the
# release its modules are built for ($REL), the patched runtime sources
# ($RT_FIXED, what prepare-kernel-runtime.sh gives users) and in_guest.
[ "$(id -u)" = 0 ] || skip_all "needs root"
command -v stap >/dev/null 2>&1 || skip_all "needs stap (apt-get install systemtap)"
VM="bash $SRCDIR/tools/stap-vm.sh"
REL=$($VM release 2>/dev/null) ||
	skip_all "the QEMU guest is not prepared: run 'bash tools/stap-vm.sh prepare' (as .ci/run does)"
# a failed preparation fails the file instead of going on with an empty
# PERUN_KRUNTIME_DIR
RT_FIXED=$($VM runtime --txfix) && test -n "$RT_FIXED" || {
	echo "not ok 1 - bash tools/stap-vm.sh runtime --txfix failed"; echo "1..1"; exit 1
}
export PERUN_KRUNTIME_DIR="$RT_FIXED"

# in_guest SCRIPT [--env NAME=VALUE ...]: runs the shell script $TRASH/SCRIPT
# in the guest; $TRASH is shared read-write, perun finds its data in the
# source tree and cannot find stap, so every run is a module cache hit.
in_guest() {
	script=$1
	shift
	$VM run --rw "$TRASH" --cwd "$TRASH" --timeout 240 \
		--env PERUN="$PERUN" --env PERUN_DATADIR="$PERUN_DATADIR" \
		--env PERUN_LIBDIR="$PERUN_LIBDIR" --env PERUN_CACHE_DIR="$PERUN_CACHE_DIR" \
		--env PERUN_KRUNTIME_DIR="$RT_FIXED" --env PERUN_STAP=/nonexistent \
		"$@" -- /bin/bash "$TRASH/$script"
}
