#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs perun's build and test dependencies on Debian 12, prepares the
# machine for SystemTap tracing, and builds ./perun for use: a release build
# (-O2, no sanitizers).  CI (.ci/run) rebuilds it with sanitizers and -Werror
# for the tests.  Idempotent, and quick when everything is installed (apt-get
# runs only for missing packages); run as root from the source tree.
#
#   sh tools/bootstrap-debian.sh                  everything
#   sh tools/bootstrap-debian.sh --list-missing   print missing packages, change nothing
set -eu
cd "$(dirname "$0")/.."
say() { printf 'bootstrap: %s\n' "$*"; }

packages="build-essential autoconf automake pkg-config git python3 procps psmisc
	libdw-dev libelf-dev zlib1g-dev liblzma-dev libjson-c-dev libgit2-dev libpcre2-dev libyaml-dev
	libcapstone-dev libgsl-dev libbpf-dev clang
	systemtap systemtap-sdt-dev bpftrace g++ golang-go chromium nodejs uftrace debuginfod jq gdb
	postgresql-15 postgresql-client-15"

missing=
for p in $packages; do
	case "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" in
	"install ok installed") ;;
	*) missing="$missing $p" ;;
	esac
done
if [ "${1:-}" = --list-missing ]; then
	[ -z "$missing" ] || echo "${missing# }"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	say "run me as root (sudo sh tools/bootstrap-debian.sh)"; exit 1
fi
if [ -n "$missing" ]; then
	say "installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null
else
	say "packages ok"
fi
# npm fetches the speedscope viewer tests/t5050 opens the Chrome export in;
# a nodejs of nodesource's carries its own npm, which Debian's npm conflicts with
if ! command -v npm >/dev/null 2>&1; then
	say "installing npm"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm >/dev/null
fi
say "preparing tracing"
sh tools/prepare-tracing.sh
say "preparing perun's copy of the stap kernel runtime (--runtime kernel)"
sh tools/prepare-kernel-runtime.sh
say "building a release perun"
autoreconf -fi >/dev/null 2>&1
# a tree built with other flags (say the sanitizer build) is rebuilt from scratch:
# make would keep its objects
old=$( [ -x config.status ] && ./config.status --config 2>/dev/null || echo none)
./configure -q
if [ "$old" != "$(./config.status --config)" ] && [ -f Makefile ]; then
	make clean >/dev/null
fi
make -j"$(nproc)" >/dev/null
say "built ./perun ($(./perun --version | head -n 1)); put it on PATH with: export PATH=\"\$PWD:\$PATH\""
