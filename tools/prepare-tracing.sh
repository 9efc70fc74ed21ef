#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Prepares a Debian machine for perun's SystemTap tracing.  Idempotent; root.
#
#   - installs systemtap (stap, stapbpf, staprun) and the SDT headers;
#   - mounts debugfs and tracefs (stapbpf writes uprobe_events there);
#   - when the running kernel has no build tree (custom kernels, containers),
#     creates a stub one: stap checks it even for --runtime=bpf, and the bpf
#     runtime needs nothing else from it.  The kernel runtime still needs the
#     real linux-headers package.
# perun itself preloads its own memlock shim into stapbpf where root cannot
# raise RLIMIT_MEMLOCK; 'perun doctor' reports what is still missing.
set -eu
say() { printf 'prepare-tracing: %s\n' "$*"; }

if [ "$(id -u)" != 0 ]; then
	say "run me as root"; exit 1
fi
if ! command -v stap >/dev/null 2>&1 || ! command -v stapbpf >/dev/null 2>&1; then
	say "installing systemtap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q systemtap systemtap-sdt-dev >/dev/null
fi

mountpoint -q /sys/kernel/debug 2>/dev/null || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null || true
mountpoint -q /sys/kernel/debug/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/debug/tracing 2>/dev/null || true
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
if [ -e /sys/kernel/tracing/uprobe_events ] || [ -e /sys/kernel/debug/tracing/uprobe_events ]; then
	say "tracefs ok"
else
	say "WARNING: no uprobe_events in tracefs: the kernel lacks CONFIG_UPROBE_EVENTS"
fi

rel=$(uname -r)
build=/lib/modules/$rel/build
if [ ! -e "$build/.config" ]; then
	if apt-get install -y -q "linux-headers-$rel" >/dev/null 2>&1; then
		say "installed linux-headers-$rel"
	else
		say "creating a stub kernel build tree at $build (bpf runtime only)"
		mkdir -p "$build"
		if [ -r /proc/config.gz ]; then zcat /proc/config.gz > "$build/.config"
		elif [ -r "/boot/config-$rel" ]; then cp "/boot/config-$rel" "$build/.config"
		else say "WARNING: no kernel config found"; : > "$build/.config"; fi
		: > "$build/Module.symvers"
		cat /proc/kallsyms > "$build/System.map" 2>/dev/null || true
	fi
else
	say "kernel build tree ok"
fi
say "done"
