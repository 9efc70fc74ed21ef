#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun show --format flamegraph: a self-contained SVG that a browser opens.
# Headless Chromium (Debian's chromium) renders it to a PNG and dumps its DOM
# after the inline script ran; the number of frames equals the number of
# nodes of the stack trie of the folded input.
. "$SRCDIR/tests/lib.sh"
require_live
command -v chromium >/dev/null 2>&1 || skip_all "needs chromium (apt-get install chromium)"

chrome() {
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$TRASH/chrome" --window-size=1200,500 "$@" 2>/dev/null
}

test_expect_success 'build the fixtures' 'build_fixtures'

test_expect_success 'a traced profile in the store' '
	mkdir repo && cd repo && git init -q && git config user.email t@e && git config user.name t &&
	echo a >a && git add a && git commit -q -m one && "$PERUN" init >/dev/null &&
	"$PERUN" collect -c ../counts trace -q -s userspace -f libcountlib#lib_add &&
	"$PERUN" add 0@p >/dev/null &&
	"$PERUN" show 0@i --format folded >../folded &&
	"$PERUN" show 0@i --format flamegraph >../fg.svg &&
	head -c 200 ../fg.svg | grep "<svg" && ! grep -q "http://[^w]" ../fg.svg
'

test_expect_success 'chromium renders it to a screenshot' '
	chrome --screenshot="$TRASH/fg.png" "file://$TRASH/fg.svg" >/dev/null &&
	test -s fg.png &&
	python3 -c "import sys; d=open(sys.argv[1],\"rb\").read(); assert d[:8]==b\"\\x89PNG\\r\\n\\x1a\\n\" and len(d) > 5000, len(d)" fg.png
'

test_expect_success 'frames in the rendered DOM equal the nodes of the folded stacks' '
	chrome --dump-dom "file://$TRASH/fg.svg" >dom &&
	python3 - folded dom <<-\PY
	import re, sys
	nodes = set()
	for line in open(sys.argv[1]):
	    stack = line.rsplit(" ", 1)[0].split(";")
	    for i in range(len(stack)):
	        nodes.add(tuple(stack[:i + 1]))
	dom = open(sys.argv[2]).read()
	frames = len(re.findall(r"<g class=\"frame\"", dom))
	print("folded nodes", len(nodes), "frames", frames)
	assert frames == len(nodes) > 10, (frames, len(nodes))
	assert "fib" in dom and "lib_add" in dom and "thread_main" in dom
	PY
'

test_done
