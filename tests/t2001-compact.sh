#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The compact profile form: columns per uid and thread in
# snapshots[0].calls, uids and call contexts in chunks.  Profiles come from
# the parser alone (perun __parse), no tracing.  Checks: compact -> per-call
# -> compact is identical, the per-call form it expands to is byte for byte
# what --per-call writes (and what perun 0.1.0 wrote: tests/data/
# per-call-0.1.perf, made by main at 49003af from the stream below), every
# show format gives the same output from both forms, the store keeps it.
. "$SRCDIR/tests/lib.sh"

# main, work, a USDT point, recursive fib, and a name with ';', ' ' and '"'
mkplan() {
	printf "perun-plan 2\t5\n" &&
	printf "0\tfunc\t1\t1000\t0\t0\t0\t0\t/bin/app\tmain\t\t\t\t\n" &&
	printf "1\tfunc\t1\t1010\t0\t0\t0\t0\t/bin/app\twork\t\t\t\t\n" &&
	printf "2\tusdt-point\t1\t1020\t0\t0\t0\t0\t/bin/app\tapp:tick\t\t\t\t\n" &&
	printf "3\tfunc\t1\t1030\t0\t0\t0\t0\t/bin/app\tfib\t\t\t\t\n" &&
	printf "4\tfunc\t1\t1040\t0\t0\t0\t0\t/bin/app\tns::op \"a;b\" (x y)\t\t\t\t\n"
}

same_everywhere() {	# same_everywhere A B: every show format agrees (flame graph titles name the file)
	for f in summary folded flamegraph; do
		"$PERUN" show "$1" --format $f | sed "/id=\"title\"/d" >a.$f &&
		"$PERUN" show "$2" --format $f | sed "/id=\"title\"/d" >b.$f &&
		test_cmp a.$f b.$f || return 1
	done
}

test_expect_success 'a stream with threads, recursion, a point, a call that never returns' '
	mkplan >plan &&
	printf "s 3e8 0 100\nr\n0 0 200\n2 0 300\n4 0 350\n3 0 400\n6 0 450\n6 0 460\n7 0 470\n7 0 480\n2 1 410\n3 1 490\n2 0 500\n8 0 510\n9 0 520\n1 0 600\n3 1 610\nq\n" >raw &&
	"$PERUN" __parse plan raw c.perf >/dev/null &&
	"$PERUN" __parse plan raw p.perf --per-call >/dev/null &&
	python3 - c.perf p.perf <<-\PY
	import json, sys
	c, p = (json.load(open(f)) for f in sys.argv[1:])
	s = c["snapshots"][0]
	assert s["resources"] == [] and len(s["calls"]) > 0, s
	assert sorted(c["chunks"]) == ["contexts", "uids"], c["chunks"]
	assert sum(b["n"] for b in s["calls"]) == len(p["snapshots"][0]["resources"]) == 7
	for k in ("header", "collector_info", "postprocessors"):
	    assert c[k] == p[k], k
	assert s["time"] == p["snapshots"][0]["time"] and s["models"] == []
	PY
'

test_expect_success 'compact -> per-call is what --per-call writes; -> compact again is identical' '
	"$PERUN" show c.perf --format json --expand >expanded &&
	cmp expanded p.perf &&
	"$PERUN" show expanded --format json --compact >again &&
	cmp again c.perf &&
	"$PERUN" show c.perf --format json --compact | cmp - c.perf &&
	"$PERUN" show p.perf --format json --expand | cmp - p.perf
'

test_expect_success 'other regions, also a snapshot'"'"'s own, and number texts survive both ways' '
	python3 - c.perf <<-\PY &&
	s = open("c.perf").read()
	s = s.replace("\"collector_info\":{\"name\":\"trace\"}",
	              "\"collector_info\":{\"name\":\"trace\",\"timeout\":0.0,\"x\":1e3,\"y\":0.10}")
	s = s.replace("\"models\":[]}]", "\"models\":[],\"note\":1.50}]")
	s = s.replace("}\n", ",\"trace\":{\"a\":[1,2]},\"extra\":null}\n")
	open("more.perf", "w").write(s)
	PY
	"$PERUN" show ./more.perf --format json --expand >more-calls.perf &&
	grep -q "\"note\":1.50" more-calls.perf && grep -q "\"y\":0.10" more-calls.perf &&
	"$PERUN" show ./more-calls.perf --format json --compact | cmp - more.perf
'

test_expect_success 'every show format reads both forms the same' '
	same_everywhere c.perf p.perf &&
	cat >expect <<-\EOF &&
	main 720
	main;fib 32
	main;fib;fib 16
	main;work 256
	main;work;app:tick 0
	ns::op_"a_b"_(x_y) 16
	work 128
	EOF
	test_cmp expect a.folded &&
	"$PERUN" show c.perf --format json >pretty && python3 -c "import json; json.load(open(\"pretty\"))"
'

test_expect_success 'a profile of perun 0.1.0 (per-call) still reads, and converts to the same bytes' '
	cp "$SRCDIR/tests/data/per-call-0.1.perf" old.perf &&
	same_everywhere old.perf c.perf &&
	"$PERUN" show old.perf --format json --compact | cmp - c.perf &&
	cmp old.perf p.perf
'

test_expect_success 'blocks of 4096 calls, two threads, 30000 calls: still identical both ways' '
	awk "BEGIN { print \"s 3e8 0 100\"; print \"r\"; t = 4096; print \"0 0 \" sprintf(\"%x\", t);
		for (i = 0; i < 15000; i++) {
			for (th = 0; th < 2; th++) {
				t += 3 + i % 7; printf \"2 %x %x\n\", th, t;
				t += 5 + i % 11; printf \"6 %x %x\n\", th, t;
				t += 2; printf \"7 %x %x\n\", th, t;
				t += 1 + i % 3; printf \"3 %x %x\n\", th, t;
			}
		}
		t += 9; printf \"1 0 %x\n\", t; print \"q\" }" >big.raw &&
	"$PERUN" __parse plan big.raw big.perf >/dev/null &&
	"$PERUN" __parse plan big.raw bigp.perf --per-call >/dev/null &&
	python3 - big.perf <<-\PY &&
	import json, sys
	s = json.load(open(sys.argv[1]))["snapshots"][0]
	ns = sorted(b["n"] for b in s["calls"])
	assert sum(ns) == 60001 and ns.count(4096) == 12, ns
	PY
	"$PERUN" show big.perf --format json --expand | cmp - bigp.perf &&
	"$PERUN" show bigp.perf --format json --compact | cmp - big.perf &&
	same_everywhere big.perf bigp.perf &&
	test $(wc -c <big.perf) -lt $(( $(wc -c <bigp.perf) / 5 ))
'

test_expect_success 'a uid and thread whose blocks switch from call-order-gap to call-order' '
	awk "BEGIN { print \"s 3e8 0 100\"; print \"r\"; t = 4096;
		for (ph = 0; ph < 3; ph++) {
			other = ph == 1 ? 6 : 2;
			for (i = 0; i < 4096; i++) {
				t += 3; printf \"2 0 %x\n\", t; t += 4 + i % 5; printf \"3 0 %x\n\", t;
				for (k = 0; k < (i * 7919) % (ph == 1 ? 23 : 3); k++) {
					t += 2; printf \"%x 1 %x\n\", other, t; t += 3; printf \"%x 1 %x\n\", other + 1, t;
				}
			}
		}
		print \"q\" }" >sw.raw &&
	"$PERUN" __parse plan sw.raw sw.perf >/dev/null &&
	"$PERUN" __parse plan sw.raw swp.perf --per-call >/dev/null &&
	python3 - sw.perf <<-\PY &&
	import json, sys
	s = json.load(open(sys.argv[1]))["snapshots"][0]
	modes = ["gap" if "call-order-gap" in b else "order" for b in s["calls"] if b["thread"] == 1000]
	assert modes == ["gap", "order", "order"], modes
	PY
	"$PERUN" show sw.perf --format json --expand | cmp - swp.perf &&
	"$PERUN" show swp.perf --format json --compact | cmp - sw.perf &&
	same_everywhere sw.perf swp.perf
'

test_expect_success 'the store keeps the compact form and shows it like the file' '
	mkdir repo && cd repo && git init -q && git config user.email t@e && git config user.name t &&
	echo a >a && git add a && git commit -q -m one && "$PERUN" init >/dev/null &&
	python3 -c "
import json
p = json.load(open(\"../c.perf\"))
p[\"header\"].update(units={\"mixed(time delta)\": \"ns\"}, cmd=\"./app\", args=\"\", workload=\"\")
json.dump(p, open(\"app.perf\", \"w\"))" &&
	"$PERUN" add app.perf -m HEAD >/dev/null &&
	"$PERUN" show 0@i --format folded >stored.folded &&
	"$PERUN" show ../c.perf --format folded | test_cmp - stored.folded &&
	"$PERUN" show 0@i --format json --expand >stored.json &&
	python3 -c "import json; r = json.load(open(\"stored.json\"))[\"snapshots\"][0][\"resources\"]; assert len(r) == 7, r"
'

test_expect_success 'broken columns are refused with the field named' '
	python3 - c.perf <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	b = p["snapshots"][0]["calls"][2]
	b["amount"] = [1]
	json.dump(p, open("bad1.perf", "w"))
	p = json.load(open(sys.argv[1]))
	p["snapshots"][0]["calls"][0]["uid"] = 99
	json.dump(p, open("bad2.perf", "w"))
	p = json.load(open(sys.argv[1]))
	del p["chunks"]["contexts"]
	json.dump(p, open("bad3.perf", "w"))
	p = json.load(open(sys.argv[1]))
	p["snapshots"][0]["calls"][0]["n"] = 10 ** 12
	json.dump(p, open("bad4.perf", "w"))
	PY
	! "$PERUN" show bad1.perf --format json --expand >out 2>err &&
	echo "profile: bad1.perf: snapshots[0].calls[2].amount must be one integer or a list of n = 2" >expect &&
	test_cmp expect err &&
	! "$PERUN" show bad2.perf --format json --expand 2>err &&
	echo "profile: bad2.perf: snapshots[0].calls[0] needs uid (an index of chunks.uids), thread and n (at most 4096)" >expect &&
	test_cmp expect err &&
	! "$PERUN" show bad3.perf --format json --compact 2>err &&
	echo "profile: bad3.perf: compact calls need chunks.uids and chunks.contexts, lists of the same length" >expect &&
	test_cmp expect err &&
	! "$PERUN" show bad4.perf --format summary 2>err &&
	echo "profile: bad4.perf: snapshots[0].calls[0] needs uid (an index of chunks.uids), thread and n (at most 4096)" >expect &&
	test_cmp expect err &&
	mkdir -p r2 && cd r2 && git init -q && git config user.email t@e && git config user.name t &&
	echo a >a && git add a && git commit -q -m one && "$PERUN" init >/dev/null &&
	python3 -c "
import json
p = json.load(open(\"../bad1.perf\"))
p[\"header\"].update(units={\"mixed(time delta)\": \"ns\"}, cmd=\"./app\")
json.dump(p, open(\"bad.perf\", \"w\"))" &&
	! "$PERUN" add bad.perf -m HEAD 2>err &&
	echo "profile: bad.perf: snapshots[0].calls[2].amount must be one integer or a list of n = 2" >expect &&
	test_cmp expect err
'

test_expect_success 'summary resources (--aggregate) have no calls to convert' '
	python3 - p.perf <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["snapshots"][0]["resources"] = [{"amount": 5, "uid": "work", "type": "mixed",
	    "subtype": "time summary", "thread": 1, "count": 2, "min": 2, "max": 3, "log2_hist": [0, 2]}]
	json.dump(p, open("agg.perf", "w"))
	PY
	! "$PERUN" show agg.perf --format json --compact 2>err &&
	echo "profile: agg.perf: snapshots[0].resources[0] is not a per-call record (perun collect without --aggregate writes those): nothing to convert" >expect &&
	test_cmp expect err &&
	"$PERUN" show agg.perf --format summary >/dev/null &&
	! "$PERUN" show c.perf --expand 2>err &&
	echo "perun show: --expand and --compact go with --format json" >expect &&
	test_cmp expect err
'

test_done
