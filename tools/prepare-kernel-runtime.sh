#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Prepares perun's private copy of SystemTap's kernel runtime.  Idempotent; root.
#
#   sh prepare-kernel-runtime.sh [--dest DIR] [--without-txfix] [--check]
#
# Debian 12's systemtap 4.8 needs three fixes for perun's kernel runtime
# (--runtime kernel), shipped as patches in stap-runtime/<version>/ next to
# this script:
#   01-task-work-cancel-func.patch  stap -p4 cannot build modules for current
#                                   Debian 6.1 kernels without it
#   02-relay-txfix.patch            the stock relay transport loses most
#                                   per-event output at high rates
#   03-uprobe-filter.patch          uprobes get a consumer filter, so only
#                                   the traced process tree holds breakpoints
#                                   (stock: every process of the binary traps)
# This copies /usr/share/systemtap/runtime to DIR (default
# $PERUN_KRUNTIME_DIR, else /var/lib/perun/stap-runtime), applies the
# patches, and writes DIR/.perun-kruntime, which records the stap version, the
# patches and a fingerprint of the stock runtime.  perun compiles kernel
# modules with 'stap -R DIR' while that fingerprint still matches; 'perun
# doctor' says which runtime is used and why.  For a stap version perun ships
# no patches for, nothing is done and perun uses the stock runtime.
#
#   --without-txfix  leave the relay transport fix out (the stock, lossy transport;
#                    for comparisons)
#   --check          only say whether DIR is prepared and current (exit 1 if not)
set -eu
say() { printf 'prepare-kernel-runtime: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
stock=${PERUN_STOCK_RUNTIME:-/usr/share/systemtap/runtime}
dest=${PERUN_KRUNTIME_DIR:-/var/lib/perun/stap-runtime}
txfix=1
check=0
while [ $# -gt 0 ]; do
	case $1 in
	--dest) [ $# -ge 2 ] || die "--dest needs a directory"; dest=$2; shift 2 ;;
	--without-txfix) txfix=0; shift ;;
	--check) check=1; shift ;;
	-h|--help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
case $dest in /*) ;; *) dest=$(pwd)/$dest ;; esac

# The stap version: from stap, else from staprun (a host without the compiler).
ver=$( { stap -V 2>&1 || staprun -V 2>&1 || true; } |
	sed -n 's/.*(version \([0-9][0-9.]*\)[/,)].*/\1/p' | head -n1)
[ -n "$ver" ] || die "cannot tell the systemtap version: stap -V and staprun -V failed (apt-get install systemtap)"
patches=$here/stap-runtime/$ver
if [ ! -d "$patches" ]; then
	say "systemtap $ver: perun ships no runtime patches for it; the stock runtime is used"
	exit 0
fi
[ -d "$stock" ] || die "$stock: no such directory (apt-get install systemtap)"

list=$(cd "$patches" && ls ./*.patch | sed 's|^\./||' | LC_ALL=C sort)
[ "$txfix" = 1 ] || list=$(printf '%s\n' "$list" | grep -v txfix)
names=$(printf '%s\n' "$list" | sed 's/\.patch$//' | tr '\n' ' ' | sed 's/ $//')
# Files whose size and mtime identify the stock runtime (perun checks the same).
fingerprint() {
	for f in runtime.h stp_task_work.c transport/relay_v2.c transport/transport.c; do
		stat -c "file $f %s %Y" "$stock/$f" || return 1
	done
}
want=$( { echo "perun-kruntime 1"; echo "stap $ver"; echo "source $stock"; fingerprint;
	echo "patches $names"; } ) || die "cannot stat the stock runtime in $stock"

if [ -s "$dest/.perun-kruntime" ] && [ "$(cat "$dest/.perun-kruntime")" = "$want" ]; then
	say "ok: $dest is systemtap $ver's runtime with $names"
	exit 0
fi
if [ "$check" = 1 ]; then
	say "$dest is not prepared for systemtap $ver: run sh $0"
	exit 1
fi
[ "$(id -u)" = 0 ] || [ -w "$(dirname "$dest")" ] || die "run me as root (writes $dest)"
command -v patch >/dev/null 2>&1 || die "patch not found: apt-get install patch"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest.new"
cp -a "$stock" "$dest.new"
for p in $list; do
	patch -d "$dest.new" -p1 --quiet --no-backup-if-mismatch --forward < "$patches/$p" ||
		{ rm -rf "$dest.new"; die "$p does not apply to $stock (systemtap $ver modified?)"; }
done
printf '%s\n' "$want" > "$dest.new/.perun-kruntime"
chmod -R go-w "$dest.new"
rm -rf "$dest"
mv "$dest.new" "$dest"
say "prepared $dest: systemtap $ver's runtime with $names"
