#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the speedscope viewer (a static web app, from npm) that
# tests/t5050 loads perun's Chrome trace-event export into, in headless
# Chromium.  Not part of perun and not committed: fetched once per machine
# into DIR (default /var/tmp/perun-speedscope-VERSION), through a temporary
# directory renamed into place, so concurrent runs never see half of it.
# Prints DIR/node_modules/speedscope/dist/release, the app's directory.
#
#   sh tools/get-speedscope.sh [DIR]
set -eu
version=1.25.0
dir=${1:-/var/tmp/perun-speedscope-$version}
app=$dir/node_modules/speedscope/dist/release
if [ ! -r "$app/index.html" ]; then
	command -v npm >/dev/null 2>&1 || { echo "get-speedscope: needs npm (apt-get install npm)" >&2; exit 1; }
	tmp=$(mktemp -d "$dir.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	npm install --no-audit --no-fund --silent --prefix "$tmp" "speedscope@$version" >&2
	test -r "$tmp/node_modules/speedscope/dist/release/index.html" ||
		{ echo "get-speedscope: npm installed no speedscope app" >&2; exit 1; }
	# another run may have won the race: then keep its copy
	mv -T "$tmp" "$dir" 2>/dev/null || true
fi
test -r "$app/index.html"
echo "$app"
