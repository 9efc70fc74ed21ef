#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun report -o DIR: the static site (index.json, one JSON series per
# function, a flame graph per commit, index.html) of a repository where one
# commit makes a function 3x slower.  Headless Chromium loads the page: no
# console message (a page with a broken script proves the check sees one),
# every graph drawn with the step marked at that commit, a screenshot taken.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-history.sh"
command -v chromium >/dev/null 2>&1 || skip_all "needs chromium (apt-get install chromium)"

chrome() {
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$TRASH/chrome" --window-size=1000,1400 "$@"
}

# prof SEED WORK_NS: registers for HEAD a profile of main calling work,
# steady (500 ns) and a C++ template function (2000 ns) 15 times each,
# within +-10%.
prof() { hist_prof "$1" 0.1 w "" "$2" 500 2000; }

test_expect_success 'a repository of 10 commits, work 3x slower from c6' '
	hist_plan /bin/app work steady "ns::f<int>" &&
	mkdir repo && cd repo && git init -q -b main && git config user.email t@example.com &&
	git config user.name T && "$PERUN" init >/dev/null &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		echo $i >>f && git add f && git commit -q -m "c$i <b>&" &&
		if [ $i -lt 6 ]; then prof $i 1000; else prof $i 3000; fi &&
		if [ $i = 6 ]; then git rev-parse HEAD >../c6; fi
	done
'

test_expect_success 'report writes index.json, a series per function, a flame graph per commit' '
	cd repo &&
	"$PERUN" aggregate --release v1 --shard h1 0@i >/dev/null &&
	"$PERUN" aggregate --release v1 --shard h2 -m HEAD~1 0@i >/dev/null &&
	"$PERUN" report -o ../site >actual &&
	echo "wrote ../site/index.html: 4 functions over 10 commits, 1 aggregated release" >expect &&
	test_cmp expect actual &&
	cd ../site && test -f index.html &&
	ls graphs >actual &&
	cat >expect <<-\EOF &&
	flame
	main.json
	ns_3A_3Af_3Cint_3E.json
	steady.json
	work.json
	EOF
	test_cmp expect actual &&
	test "$(ls graphs/flame/*.svg | wc -l)" = 10 &&
	test -f "graphs/flame/$(cat ../c6).svg" &&
	python3 - "$(cat ../c6)" <<-\PY
	import json, sys
	i = json.load(open("index.json"))
	assert i["perun_report"] == 1 and len(i["history"]["commits"]) == 10
	names = {f["name"]: f for f in i["functions"]}
	assert set(names) == {"main", "work", "steady", "ns::f<int>"}, names
	assert names["steady"]["steps"] == 0 and names["ns::f<int>"]["steps"] == 0
	reg = {r["function"]: r for r in i["regressions"]}
	assert reg["work"]["commit"] == sys.argv[1] and 1.7 < reg["work"]["rel"] < 2.3, reg
	(a,) = i["aggregates"]
	assert a["release"] == "v1" and a["inputs"] == 2, a
	agg = json.load(open(a["file"]))
	assert agg["functions"]["work"]["calls"] == 30, agg["functions"]["work"]
	g = json.load(open(names["work"]["graph"]))
	assert len(g["commits"]) == 10 and g["series"]["steps"][0]["index"] == 5, g
	print("ok")
	PY
'

test_expect_success 'the latency table: the newest commit'"'"'s quantiles, as show --format hist gives them' '
	cd repo &&
	"$PERUN" show 0@i --format hist >../hist &&
	python3 - ../site/index.json ../hist ../site/index.html "$(git rev-parse HEAD)" <<-\PY
	import json, sys
	lat = json.load(open(sys.argv[1]))["latency"]
	assert lat["commit"] == sys.argv[4], lat["commit"]
	rows = {}
	for line in open(sys.argv[2]):
	    w = line.split()
	    if len(w) == 8 and w[1].isdigit():
	        rows[w[0]] = w
	got = {f["name"]: f for f in lat["functions"]}
	assert set(got) == set(rows) == {"main", "work", "steady", "ns::f<int>"}, (got, rows)
	for name, w in rows.items():
	    f = got[name]
	    assert f["calls"] == int(w[1]) and f["from"] == w[7], (f, w)
	    for k, v in zip(("p50", "p90", "p99", "p99.9", "max"), w[2:7]):
	        assert abs(f[k] - float(v)) < 0.06, (name, k, f[k], v)
	html = open(sys.argv[3]).read()
	assert "<table id=\"latency\">" in html and "<td>ns::f&lt;int&gt;</td>" in html
	print("ok")
	PY
'

test_expect_success 'the page needs no network and escapes what it shows' '
	! grep -E "(src|href)=\"(https?:)?//" site/index.html &&
	grep "c6 &lt;b&gt;&amp;" site/index.html &&
	grep "<h3>release v1</h3>" site/index.html &&
	! grep -q "ns::f<int>" site/index.html && grep -q "ns::f\\\\u003cint>" site/index.html
'

test_expect_success 'the console check sees a broken script' '
	printf "<html><body><script>no_such_function();</script></body></html>\n" >broken.html &&
	chrome --enable-logging=stderr --v=0 --dump-dom "file://$TRASH/broken.html" \
		>/dev/null 2>console && grep "CONSOLE.*no_such_function" console
'

test_expect_success 'chromium: no console message, every graph drawn, the step at c6' '
	chrome --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom \
		"file://$TRASH/site/index.html" >dom 2>console &&
	! grep "CONSOLE" console &&
	python3 - "$(cat c6)" <<-\PY
	import re, sys
	dom = open("dom").read()
	assert "data-rendered=\"4\"" in dom, "4 graphs drawn"
	assert len(re.findall(r"<svg class=\"graph\"", dom)) == 4
	assert len(re.findall(r"<circle class=\"point\"", dom)) == 40
	steps = re.findall(r"<line class=\"step\"", dom)
	assert len(steps) >= 1, "a step marked"
	assert ("% at " + sys.argv[1][:7]) in dom, "the step names c6"
	print("ok", len(steps), "step markers")
	PY
'

test_expect_success 'chromium: a screenshot of the page' '
	chrome --virtual-time-budget=5000 --screenshot="$TRASH/report.png" \
		"file://$TRASH/site/index.html" >/dev/null 2>&1 &&
	python3 -c "import sys; d=open(sys.argv[1],\"rb\").read(); assert d[:8]==b\"\\x89PNG\\r\\n\\x1a\\n\" and len(d) > 20000, len(d)" report.png &&
	if [ -n "${PERUN_REPORT_SHOT:-}" ]; then cp report.png "$PERUN_REPORT_SHOT"; fi
'

# shown SITE: what the page shows, measured in it: a page of ours frames
# SITE/index.html and writes as JSON the regressions table's rows (function,
# commit, of what) and per graph its step lines, the red ones, and each step
# label's text and box (getBBox, the font as rendered)
shown() {
	cat >"$1/shown.html" <<-\EOF &&
	<!DOCTYPE html><html><body><pre id="out">pending</pre>
	<iframe id="f" src="index.html" width="1000" height="1400"></iframe>
	<script>
	document.getElementById("f").onload = function () {
	  var doc = this.contentDocument, res = {rows: [], graphs: []};
	  doc.querySelectorAll("table#regressions tr").forEach(function (tr) {
	    var td = tr.querySelectorAll("td");
	    if (td.length) res.rows.push([td[0].textContent, td[1].textContent.slice(0, 7), td[5].textContent]);
	  });
	  doc.querySelectorAll("section.fn").forEach(function (sec) {
	    var svg = sec.querySelector("svg");
	    res.graphs.push({name: sec.querySelector("h2").textContent.split(" \u2014 ")[0],
	      width: svg.width.baseVal.value,
	      lines: sec.querySelectorAll("line.step").length,
	      red: sec.querySelectorAll("line.step[stroke='#d22']").length,
	      labels: [].map.call(sec.querySelectorAll("text.step-label"), function (t) {
	        var b = t.getBBox(); return [t.textContent, b.x, b.y, b.width, b.height]; })});
	  });
	  document.getElementById("out").textContent = JSON.stringify(res);
	};
	</script></body></html>
	EOF
	chrome --allow-file-access-from-files --virtual-time-budget=5000 --dump-dom \
		"file://$1/shown.html" 2>/dev/null |
		sed -n "s/.*<pre id=\"out\">\(.*\)<\/pre>.*/\1/p" | sed "s/&quot;/\"/g; s/&amp;/\&/g" >"$1/shown.json"
}

# the rows of the regressions table each have their red line and label in
# their function's graph; no two labels of a graph overlap, none leaves it
check_shown() {
	python3 - "$1/shown.json" <<-\PY
	import json, sys
	r = json.load(open(sys.argv[1]))
	g = {x["name"]: x for x in r["graphs"]}
	assert r["rows"], "the table lists steps"
	for fn, sha, of in r["rows"]:
	    lab = [l[0] for l in g[fn]["labels"] if ("at " + sha) in l[0] and
	           (l[0].startswith("p95 ") == (of == "p95"))]
	    assert len(lab) == 1, (fn, sha, of, g[fn]["labels"])
	    assert g[fn]["red"] >= sum(1 for x in r["rows"] if x[0] == fn), g[fn]
	for x in r["graphs"]:
	    assert x["lines"] == len(x["labels"]), x
	    ls = x["labels"]
	    for i, a in enumerate(ls):
	        assert a[1] >= 0 and a[1] + a[3] <= x["width"], ("outside", a, x["width"])
	        for b in ls[i + 1:]:
	            apart = a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1] or \
	                a[2] + a[4] <= b[2] or b[2] + b[4] <= a[2]
	            assert apart, ("overlap", x["name"], a, b)
	print(len(r["rows"]), "rows,", sum(len(x["labels"]) for x in r["graphs"]), "labels apart")
	PY
}

test_expect_success 'chromium: a red line and a label for every row of the table, labels apart' '
	shown "$TRASH/site" && cat site/shown.json && check_shown "$TRASH/site"
'

test_expect_success 'two steps on neighbouring commits: both drawn, their labels apart' '
	mkdir repo2 && cd repo2 && git init -q -b main && "$PERUN" init >/dev/null &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		echo $i >>f && git add f && git commit -q -m "c$i" &&
		case $i in [1-4]) prof $i 1000 ;; 5) prof $i 1600 ;; *) prof $i 4000 ;; esac || exit 1
	done &&
	"$PERUN" report -o ../site2 >/dev/null &&
	python3 -c "import json; print([(r[\"function\"], r[\"of\"], r[\"commit\"][:7]) for r in json.load(open(\"../site2/index.json\"))[\"regressions\"]])" &&
	shown "$TRASH/site2" && cat ../site2/shown.json && check_shown "$TRASH/site2" &&
	test "$(python3 -c "import json; print(len([r for r in json.load(open(\"../site2/shown.json\"))[\"rows\"] if r[0] == \"work\"]))")" -ge 2 &&
	chrome --virtual-time-budget=5000 --screenshot="$TRASH/report2.png" \
		"file://$TRASH/site2/index.html" >/dev/null 2>&1 &&
	if [ -n "${PERUN_REPORT_SHOT:-}" ]; then cp "$TRASH/report2.png" "$PERUN_REPORT_SHOT.2.png"; fi
'

test_expect_success 'usage: -o is needed; --help' '
	cd repo && test_expect_code 2 "$PERUN" report 2>err &&
	cat >expect <<-\EOF &&
	perun report: say where the site goes with -o DIR
	usage: perun report -o DIR [-n N] [-m REV] [--cmd CMD] [--args ARGS]
	                    [--workload W] [--collector C] [--threshold R]
	                    [--aggregates DIR] [--any-machine]
	EOF
	test_cmp expect err &&
	"$PERUN" report --help | head -n 1 >actual &&
	echo "usage: perun report -o DIR [-n N] [-m REV] [--cmd CMD] [--args ARGS]" >expect &&
	test_cmp expect actual
'

test_done
