#!/bin/sh
# Installs perun's build and test dependencies on Debian 12, prepares the
# machine for SystemTap tracing, and builds perun with sanitizers and -Werror.
# Idempotent; run as root from the source tree.
set -eu
cd "$(dirname "$0")/.."
say() { printf 'bootstrap: %s\n' "$*"; }

if [ "$(id -u)" != 0 ]; then
	say "run me as root (sudo sh tools/bootstrap-debian.sh)"; exit 1
fi
say "installing packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends \
	build-essential autoconf automake pkg-config git python3 procps psmisc \
	libdw-dev libelf-dev zlib1g-dev libjson-c-dev libgit2-dev libpcre2-dev libyaml-dev \
	systemtap systemtap-sdt-dev bpftrace g++ chromium >/dev/null
say "preparing tracing"
sh tools/prepare-tracing.sh
say "preparing perun's copy of the stap kernel runtime (--runtime kernel)"
sh tools/prepare-kernel-runtime.sh
say "building"
autoreconf -fi >/dev/null 2>&1
./configure -q --enable-sanitizers --enable-werror
make -j"$(nproc)" >/dev/null
say "built ./perun ($(./perun --version))"
