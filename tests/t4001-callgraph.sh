#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun callgraph on a fixture whose call graph is known
# (tests/fixtures/cgraph.c): edges, PLT names, the indirect call, recursion,
# the loop nest, levels by Algorithm 1, leaves and depth; DWARF call sites
# and the instructions agree; the cache is used, and rebuilt when damaged.
. "$SRCDIR/tests/lib.sh"

F="$FIXTURES/cgraph.c"
# -O1 keeps the calls as written (noinline); no sibling calls, so no tail jumps
CFLAGS="-O1 -fno-optimize-sibling-calls"

# "caller callee" for every edge out of a reachable node, sorted
edges() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
for n in d["nodes"]:
    if n["reachable"]:
        for c in n["callees"]:
            print(n["name"], c["name"])
' | sort
}

# one field of the whole graph, or of a node: field KEY [NODE]
field() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
if len(sys.argv) > 2:
    d = [n for n in d["nodes"] if n["name"] == sys.argv[2]][0]
v = d[sys.argv[1]]
print(json.dumps(v) if isinstance(v, (list, dict, bool)) or v is None else v)
' "$@"
}

cat >"$TRASH/expect.edges" <<EOF
fact fact
main apply
main fact
main nest
main printf
main puts
main twice
nest leaf_add
quad leaf_add
twice quad
EOF

test_expect_success 'build the fixture with -g, without -g, with .plt.sec, with -fno-plt, at -O0' '
	cc -g $CFLAGS -o cg-g "$F" &&
	cc $CFLAGS -o cg-nog "$F" &&
	cc $CFLAGS -fcf-protection=full -Wl,-z,ibtplt -o cg-ibt "$F" &&
	cc $CFLAGS -fno-plt -o cg-noplt "$F" &&
	cc -g -O0 -o cg-O0 "$F" &&
	"$PERUN" callgraph cg-g --format json >g.json &&
	"$PERUN" callgraph cg-nog --format json >nog.json &&
	"$PERUN" callgraph cg-ibt --format json >ibt.json &&
	"$PERUN" callgraph cg-noplt --format json >noplt.json &&
	"$PERUN" callgraph cg-O0 --format json >O0.json
'

test_expect_success 'with -g: exactly the known edges, each from a DWARF call site and an instruction' '
	edges <g.json >actual && test_cmp "$TRASH/expect.edges" actual &&
	test "$(field has_dwarf <g.json)" = true &&
	test "$(field dwarf_sites <g.json)" = 11 &&
	test "$(field dwarf_disagree <g.json)" = 0 &&
	python3 -c "
import json, sys
d = json.load(open(\"g.json\"))
for n in d[\"nodes\"]:
    if n[\"reachable\"]:
        for c in n[\"callees\"]:
            assert c[\"dwarf\"] and c[\"insn\"], (n[\"name\"], c)
            assert c[\"sites\"] == 1 and not c[\"tail\"], (n[\"name\"], c)
            assert c[\"plt\"] == (c[\"name\"] in (\"puts\", \"printf\")), (n[\"name\"], c)
"
'

test_expect_success 'without -g: the instructions alone find the same direct edges' '
	test "$(field has_dwarf <nog.json)" = false &&
	test "$(field dwarf_sites <nog.json)" = 0 &&
	edges <nog.json >actual && test_cmp "$TRASH/expect.edges" actual
'

test_expect_success '--no-dwarf on the -g build: the same edges, none from DWARF' '
	"$PERUN" callgraph cg-g --no-dwarf --format json >nodw.json &&
	test "$(field dwarf_sites <nodw.json)" = 0 &&
	edges <nodw.json >actual && test_cmp "$TRASH/expect.edges" actual
'

test_expect_success 'at -O0 (no call-site entries) and through .plt.sec or GOT slots: the same edges' '
	test "$(field dwarf_sites <O0.json)" = 0 &&
	edges <O0.json >actual && test_cmp "$TRASH/expect.edges" actual &&
	readelf -SW cg-ibt | grep -q "\.plt\.sec" &&
	edges <ibt.json >actual && test_cmp "$TRASH/expect.edges" actual &&
	objdump -d cg-noplt | grep -q "call.*\*.*(%rip)" &&
	edges <noplt.json >actual && test_cmp "$TRASH/expect.edges" actual
'

test_expect_success 'a jump to another function is a tail-call edge, from DWARF and the instruction' '
	cc -g -O1 -foptimize-sibling-calls -o cg-tail "$F" &&
	objdump -d cg-tail | grep -A8 "<tailer>:" | grep -q "jmp.*<leaf_add>" &&
	"$PERUN" callgraph cg-tail --format json >tail.json &&
	test "$(field callees tailer <tail.json | python3 -c "import json,sys; c = json.load(sys.stdin); print(len(c), c[0][\"name\"], c[0][\"tail\"], c[0][\"dwarf\"], c[0][\"insn\"])")" = "1 leaf_add True True True" &&
	test "$(field callees tailer <g.json | python3 -c "import json,sys; c = json.load(sys.stdin); print(len(c), c[0][\"name\"], c[0][\"tail\"])")" = "1 leaf_add False" &&
	test "$(field reachable tailer <g.json)" = false
'

test_expect_success 'imports are nodes named after the imported symbol' '
	test "$(field import puts <g.json)" = true &&
	test "$(field import printf <g.json)" = true &&
	test "$(field import main <g.json)" = false
'

test_expect_success 'the call through a pointer is no edge, but counted; bump is not reachable' '
	test "$(field indirect_calls apply <g.json)" = 1 &&
	test "$(field callees apply <g.json)" = "[]" &&
	test "$(field reachable bump <g.json)" = false &&
	test "$(field level bump <g.json)" = -1
'

# each level sorted, then the leaves sorted
levels_leaves() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
for l in d["levels"]:
    print(" ".join(sorted(l)))
print("leaves:", " ".join(sorted(d["leaves"])))
'
}

cat >"$TRASH/expect.levels" <<EOF
main
apply fact nest printf puts twice
quad
leaf_add
leaves: apply leaf_add printf puts
EOF

test_expect_success 'levels by Algorithm 1, leaves, depth, root' '
	for j in g nog O0 ibt noplt; do
		test "$(field root <$j.json)" = main &&
		test "$(field depth <$j.json)" = 3 &&
		levels_leaves <$j.json >actual &&
		test_cmp "$TRASH/expect.levels" actual || exit 1
	done &&
	test "$(field level leaf_add <g.json)" = 3 &&
	test "$(field level quad <g.json)" = 2 &&
	test "$(field level fact <g.json)" = 1 &&
	test "$(field reachable <g.json)" = 9
'

test_expect_success 'recursion: fact calls itself, is recursive, reaches itself, at least linear' '
	test "$(field recursive fact <g.json)" = true &&
	test "$(field recursive main <g.json)" = false &&
	test "$(field reach fact <g.json)" = 1 &&
	test "$(field complexity fact <g.json)" = linear &&
	test "$(field reach main <g.json)" = 8 &&
	test "$(field reach twice <g.json)" = 2
'

test_expect_success 'the loop nest: depth 2, quadratic, its call two loops deep' '
	for j in g nog O0; do
		test "$(field loop_depth nest <$j.json)" = 2 &&
		test "$(field loops nest <$j.json)" = 2 &&
		test "$(field complexity nest <$j.json)" = quadratic &&
		test "$(field calls_in_loops nest <$j.json)" = 1 &&
		test "$(field callees nest <$j.json | python3 -c "import json,sys; print(json.load(sys.stdin)[0][\"loop_depth\"])")" = 2 &&
		for f in main twice quad leaf_add apply; do
			test "$(field loop_depth $f <$j.json)" = 0 &&
			test "$(field complexity $f <$j.json)" = constant || exit 1
		done || exit 1
	done
'

test_expect_success '--function: callers, callees, reachable set, blocks with two loop headers' '
	"$PERUN" callgraph cg-g --function nest --format json >nest.json &&
	test "$(field callers <nest.json | python3 -c "import json,sys; print(\" \".join(c[\"name\"] for c in json.load(sys.stdin)))")" = main &&
	test "$(field reachable_set <nest.json)" = "[\"leaf_add\"]" &&
	field cfg <nest.json | python3 -c "
import json, sys
c = json.load(sys.stdin)
assert sum(b[\"loop_header\"] for b in c[\"blocks\"]) == 2, c
assert max(b[\"loop_depth\"] for b in c[\"blocks\"]) == 2, c
assert any(i[\"text\"].startswith(\"call\") for i in c[\"instructions\"]), c
" &&
	"$PERUN" callgraph cg-g --function nest >nest.txt &&
	head -n 4 nest.txt >actual &&
	cat >expect <<-\EOF &&
	nest: function, level 1, reaches 1; 6 blocks, 2 loops, loop depth 2, quadratic; 1 calls in loops, 0 indirect calls
	  caller main                           sites 1, loop depth 0 (dwarf,insn)
	  callee leaf_add                       sites 1, loop depth 2 (dwarf,insn)
	  reaches: leaf_add
	EOF
	test_cmp expect actual &&
	sed -n "s/^  block [0-9]* /  block N /; /(loop header)/p" nest.txt >actual &&
	cat >expect <<-\EOF &&
	  block N  loop depth 1  (loop header)
	  block N  loop depth 2  (loop header)
	EOF
	test_cmp expect actual &&
	"$PERUN" callgraph cg-g -f puts >actual &&
	cat >expect <<-\EOF &&
	puts: import, leaf, level 1, reaches 0; 0 blocks, 0 loops, loop depth 0, constant; 0 calls in loops, 0 indirect calls
	  caller main                           sites 1, loop depth 0 (dwarf,insn,plt)
	  reaches:
	EOF
	test_cmp expect actual
'

test_expect_success 'text and dot' '
	"$PERUN" callgraph cg-g >g.txt &&
	sed -n "/^root:/p; /^depth:/p" g.txt >actual &&
	cat >expect <<-\EOF &&
	root:      main
	depth:     3
	EOF
	test_cmp expect actual &&
	sed -n "/^level/,\$p" g.txt >actual &&
	cat >expect <<-\EOF &&
	level  function -> callees
	    0  main -> fact twice nest apply printf puts
	    1  fact -> fact
	    1  twice -> quad
	    1  nest -> leaf_add
	    1  apply ->
	    1  printf (import) ->
	    1  puts (import) ->
	    2  quad -> leaf_add
	    3  leaf_add ->
	EOF
	test_cmp expect actual &&
	"$PERUN" callgraph cg-g --format dot >g.dot &&
	echo "digraph callgraph {" >expect && head -n 1 g.dot >actual && test_cmp expect actual &&
	test "$(grep -c -- "->" g.dot)" = 10 &&
	"$PERUN" callgraph cg-g --format dot --function nest >nest.dot &&
	test "$(grep -c "style=bold" nest.dot)" = 2
'

test_expect_success 'the second run reads the cache; the output is the same' '
	"$PERUN" callgraph cg-g --format json >again.json &&
	test "$(field from_cache <again.json)" = true &&
	grep -v from_cache g.json >a && grep -v from_cache again.json >b && test_cmp a b &&
	ls "$PERUN_CACHE_DIR"/targets/*.cg >/dev/null
'

test_expect_success 'a damaged cache entry is detected, rebuilt, and used again' '
	cg=$(ls "$PERUN_CACHE_DIR"/targets/$(field build_id <g.json)-*.cg) &&
	size=$(stat -c %s "$cg") &&
	printf "\377\377\377\377" | dd of="$cg" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null &&
	"$PERUN" callgraph cg-g --format json >fixed.json 2>err &&
	echo "callgraph: warning: $cg: damaged call-graph cache entry (checksum mismatch): rebuilding it" >expect &&
	test_cmp expect err &&
	test "$(field from_cache <fixed.json)" = false &&
	grep -v from_cache fixed.json >b && test_cmp a b &&
	"$PERUN" callgraph cg-g --format json >again.json 2>err &&
	! test -s err && test "$(field from_cache <again.json)" = true &&
	head -c 100 "$cg" >short && cat short >"$cg" &&
	"$PERUN" callgraph cg-g --format json >fixed.json 2>err &&
	echo "callgraph: warning: $cg: damaged call-graph cache entry (wrong size): rebuilding it" >expect &&
	test_cmp expect err &&
	grep -v from_cache fixed.json >b && test_cmp a b
'

test_expect_success 'a changed binary (same path) is analysed afresh; --no-cache writes nothing' '
	touch cg-g &&
	"$PERUN" callgraph cg-g --format json >touched.json &&
	test "$(field from_cache <touched.json)" = false &&
	rm -rf "$PERUN_CACHE_DIR"/targets/*.cg &&
	"$PERUN" callgraph cg-nog --no-cache --format json >nc.json &&
	test "$(field from_cache <nc.json)" = false &&
	! ls "$PERUN_CACHE_DIR"/targets/*.cg 2>/dev/null
'

test_expect_success 'perun cache clear removes the call-graph files' '
	"$PERUN" callgraph cg-g >/dev/null &&
	ls "$PERUN_CACHE_DIR"/targets/*.cg &&
	n=$(ls "$PERUN_CACHE_DIR"/targets | wc -l) && test "$n" -ge 2 &&
	"$PERUN" cache clear >out 2>err && ! test -s err &&
	echo "removed 0 entries and $n analysis files from $PERUN_CACHE_DIR" >expect &&
	test_cmp expect out &&
	! ls "$PERUN_CACHE_DIR"/targets/*.cg 2>/dev/null
'

test_expect_success 'errors: usage exits 2, a missing binary or function 1' '
	test_expect_code 2 "$PERUN" callgraph 2>err &&
	echo "perun callgraph: give one BINARY: see ${SQ}perun callgraph --help${SQ}" >expect &&
	test_cmp expect err &&
	test_expect_code 2 "$PERUN" callgraph cg-g --format xml 2>err &&
	cat >expect <<-\EOF &&
	perun callgraph: --format xml: use text, json or dot
	usage: perun callgraph BINARY [--format text|json|dot] [--function NAME]
	                        [--no-dwarf] [--no-cache]
	EOF
	test_cmp expect err &&
	test_expect_code 1 "$PERUN" callgraph nosuch 2>err &&
	echo "target: nosuch: no such file: check the path given with -c or -b" >expect &&
	test_cmp expect err &&
	test_expect_code 1 "$PERUN" callgraph cg-g --function nosuch 2>err &&
	echo "perun callgraph: $TRASH/cg-g: no function or import named ${SQ}nosuch${SQ}: list them with ${SQ}perun callgraph cg-g --format json${SQ}" >expect &&
	test_cmp expect err &&
	test_expect_code 2 "$PERUN" callgraph cg-g cg-nog 2>err &&
	echo "perun callgraph: one BINARY only: see ${SQ}perun callgraph --help${SQ}" >expect &&
	test_cmp expect err
'

test_done
