#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun show's call views on a real trace of a program whose call tree
# is known (tests/fixtures/calltree.c): the tree and the graph give exactly
# its calls and nesting; the Chrome export has one complete event per call,
# as many per function as the profile counts, nested per thread, and
# speedscope (a real viewer, in headless Chromium) opens it and draws it;
# the quantiles of hist are those a script computes from the calls.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'trace the fixture' '
	cc -g -O1 -pthread -o calltree "$FIXTURES/calltree.c" &&
	"$PERUN" collect -c ./calltree -o ct.perf trace >out 2>err &&
	grep "calltree done 21" out &&
	profile_counts ct.perf >actual &&
	cat >expect <<-\EOF &&
	eval 15
	lex 10
	main 1
	parse 5
	worker 1
	EOF
	test_cmp expect actual
'

# The tree without its times: the thread lines with their threads numbered
# in order, and each call's indentation and name.
untimed_tree() {
	awk '/^# thread / { n++; sub(/thread [0-9]+/, "thread T" n); print; next }
	     /^  / { sub(/^ +[0-9]+ +[0-9]+ +[0-9]+  /, ""); print }'
}

test_expect_success 'tree: every call in its thread, nested as the program calls' '
	"$PERUN" show ct.perf --format tree >tree &&
	untimed_tree <tree >actual &&
	cat >expect <<-\EOF &&
	# thread T1: 19 calls
	main
	  parse
	    lex
	    lex
	    eval
	      eval
	        eval
	  parse
	    lex
	    lex
	    eval
	      eval
	        eval
	  parse
	    lex
	    lex
	    eval
	      eval
	        eval
	# thread T2: 13 calls
	worker
	  parse
	    lex
	    lex
	    eval
	      eval
	        eval
	  parse
	    lex
	    lex
	    eval
	      eval
	        eval
	EOF
	test_cmp expect actual &&
	"$PERUN" show ct.perf parse --format tree --depth 2 | untimed_tree >actual &&
	test "$(grep -c "^parse" actual)" = 5 && test "$(grep -c "^  lex" actual)" = 10 &&
	test "$(grep -c "^  eval" actual)" = 5 && test "$(grep -c "^    " actual)" = 0
'

test_expect_success 'graph: the callers and callees of parse, counted' '
	"$PERUN" show ct.perf parse --format graph >graph &&
	awk "/^#/ { print } /^  / { print \$1, \$4 }" graph | sed 1,2d >actual &&
	cat >expect <<-\EOF &&
	#      CALLS      TOTAL       SELF  CALLERS
	3 main
	2 worker
	#      CALLS      TOTAL       SELF  CALLEES
	10 lex
	5 eval
	EOF
	sort_rows() { awk "/^#/ { h = h \$0 \"\\n\"; next } { print }" "$1" | sort; } &&
	sort_rows expect >e.rows && sort_rows actual >a.rows && test_cmp e.rows a.rows &&
	grep "^# parse: 5 calls" graph
'

test_expect_success 'chrome: events per function are the counts; calls nest per thread' '
	"$PERUN" show ct.perf --format chrome -o ct.json &&
	"$PERUN" show ct.perf --format json --expand >ct.expanded &&
	python3 - ct.json ct.perf ct.expanded <<-\PY
	import json, sys, collections
	d = json.load(open(sys.argv[1]))
	p = json.load(open(sys.argv[2]))
	calls = json.load(open(sys.argv[3]))["snapshots"][0]["resources"]
	ev = d["traceEvents"]
	x = [e for e in ev if e["ph"] == "X"]
	counts = collections.Counter(e["name"] for e in x)
	assert counts == {k: v["count"] for k, v in p["trace"]["summary"].items()}, counts
	assert len(x) == len(calls) == 32
	pid = p["trace"]["target"]["pid"]
	tids = {e["tid"] for e in x}
	assert len(tids) == 2 and all(e["pid"] == pid for e in ev), tids
	meta = {(e["name"], e["tid"]) for e in ev if e["ph"] == "M"}
	assert meta == {("process_name", pid)} | {("thread_name", t) for t in tids}, meta
	# ts and dur in microseconds, exactly the ns of the calls
	want = sorted((c["uid"], c["thread"], c["timestamp"], c["amount"]) for c in calls)
	got = sorted((e["name"], e["tid"], round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in x)
	assert want == got
	# per thread, each event lies inside the one open around it, and the
	# nesting is that of the calls (from the stack of open events)
	for t in tids:
	    stack = []
	    for e in sorted((e for e in x if e["tid"] == t), key=lambda e: (e["ts"], -e["dur"])):
	        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
	            stack.pop()
	        if stack:
	            top = stack[-1]
	            assert top["ts"] <= e["ts"] and e["ts"] + e["dur"] <= top["ts"] + top["dur"], (top, e)
	        want_parent = {"main": None, "worker": None, "parse": ("main", "worker"),
	                       "lex": ("parse",), "eval": ("parse", "eval")}[e["name"]]
	        assert (stack[-1]["name"] if stack else None) in (want_parent or (None,)), (stack, e)
	        stack.append(e)
	PY
'

test_expect_success 'hist: the quantiles a script computes from the calls' '
	"$PERUN" show ct.perf --format hist >hist &&
	sed -n "3,7p" hist | awk "{ print \$1, \$2, \$3, \$4, \$5, \$6, \$7, \$8 }" | sort >actual &&
	python3 - ct.expanded <<-\PY | sort >expect &&
	import json, sys
	calls = json.load(open(sys.argv[1]))["snapshots"][0]["resources"]
	by = {}
	for c in calls:
	    by.setdefault(c["uid"], []).append(c["amount"])
	def q(v, p):
	    # linear between the closest ranks (Hyndman and Fan type 7)
	    h = (len(v) - 1) * p
	    lo = int(h)
	    return v[lo] if lo + 1 >= len(v) else v[lo] + (h - lo) * (v[lo + 1] - v[lo])
	for name, v in by.items():
	    v.sort()
	    print(name, len(v), *("%.1f" % q(v, p) for p in (0.5, 0.9, 0.99, 0.999)),
	          "%.1f" % v[-1], "calls")
	PY
	test_cmp expect actual &&
	head -n 1 hist | grep "quantiles of the exact calls"
'

# speedscope's static app (npm), served on a free local port
test_expect_success 'speedscope in headless Chromium opens the export and draws it' '
	command -v chromium >/dev/null || { echo "needs chromium (tools/bootstrap-debian.sh)"; exit 1; } &&
	app=$(sh "$SRCDIR/tools/get-speedscope.sh") &&
	mkdir www && cp -R "$app"/. www/ && cp ct.json www/ &&
	{ python3 -u -m http.server 0 --bind 127.0.0.1 --directory www >http.log 2>&1 & echo $! >http.pid; } &&
	rc=0 &&
	(
		i=0 && while ! grep -q "port [0-9]" http.log && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
		port=$(sed -n "s/.* port \([0-9]*\) .*/\1/p" http.log) && test -n "$port" &&
		url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/ct.json&title=calltree" &&
		for view in time-ordered sandwich; do
			timeout 120 chromium --headless --no-sandbox --disable-gpu \
				--user-data-dir="$TRASH/chrome" --window-size=1200,800 \
				--virtual-time-budget=5000 --screenshot="$TRASH/$view.png" \
				--dump-dom "$url&view=$view" >$view.html 2>chrome.err || exit 1
		done
	) || rc=$? &&
	kill "$(cat http.pid)" && test $rc = 0 &&
	grep "<title>calltree - speedscope</title>" time-ordered.html &&
	grep -o "calltree <span[^>]*>(1/2)</span>" time-ordered.html &&
	for f in main parse lex eval; do grep -q ">$f<" sandwich.html || { echo "no $f"; exit 1; }; done &&
	python3 - time-ordered.png <<-\PY
	# the flame chart drew frames: many pixels of colour (the chrome around
	# it is black, white and grey)
	import struct, sys, zlib
	b = open(sys.argv[1], "rb").read()
	assert b[:8] == b"\x89PNG\r\n\x1a\n"
	i, idat = 8, b""
	while i < len(b):
	    n, t = struct.unpack(">I4s", b[i:i + 8])
	    if t == b"IHDR":
	        w, h, depth, ctype = struct.unpack(">IIBB", b[i + 8:i + 18])
	    if t == b"IDAT":
	        idat += b[i + 8:i + 8 + n]
	    i += 12 + n
	assert depth == 8 and ctype in (2, 6), (depth, ctype)
	bpp = 3 if ctype == 2 else 4
	raw, stride = zlib.decompress(idat), w * bpp
	prev, coloured, pos = bytearray(stride), 0, 0
	for y in range(h):
	    f, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
	    pos += 1 + stride
	    for x in range(stride):
	        a = line[x - bpp] if x >= bpp else 0
	        c = prev[x - bpp] if x >= bpp else 0
	        up = prev[x]
	        if f == 1: line[x] = (line[x] + a) & 255
	        elif f == 2: line[x] = (line[x] + up) & 255
	        elif f == 3: line[x] = (line[x] + (a + up) // 2) & 255
	        elif f == 4:
	            pa, pb, pc = abs(up - c), abs(a - c), abs(a + up - 2 * c)
	            line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
	    for x in range(0, stride, bpp):
	        r, g, bl = line[x:x + 3]
	        coloured += max(r, g, bl) - min(r, g, bl) > 30
	    prev = line
	print("coloured pixels:", coloured, "of", w * h)
	assert coloured > 2000, coloured
	PY
'

test_done
