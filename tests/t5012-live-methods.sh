#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: the pre-optimize methods on the call graph and the dynamic stats
# (cg-shaping, baseline-static, baseline-dynamic, dynamic-sampling) with real
# stapbpf.  On a call tree eight levels deep, -op advanced traces fewer
# functions than no optimization and still exits 0; the second collect in a
# perun repository refines the sampling from the first one's stats.
. "$SRCDIR/tests/lib.sh"
require_live

# The profile's value at a dotted path (list indices too), as JSON for
# containers.
field() {
	python3 - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v, sort_keys=True) if isinstance(v, (dict, list, bool)) or v is None else v)
PY
}

# "name sampled" per function of the summary (sampled 1 when absent).
sampling() {
	python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for name, s in sorted(p["trace"]["summary"].items()):
    print(name, s.get("sampled", 1))
PY
}

PRE=collector_info.params.optimization.pre_optimize

test_expect_success 'build the fixture' '
	cc -g -O1 -o deeptree "$FIXTURES/deeptree.c" &&
	./deeptree 20000 >self &&
	grep "^sum 800280000$" self
'

test_expect_success 'no optimization: every function, every call' '
	"$PERUN" collect -c ./deeptree -a 20000 -o none.perf trace -s userspace 2>err >out &&
	cat err &&
	grep "^sum 800280000$" out &&
	profile_counts none.perf >counts &&
	grep "^leaf_add 40000$" counts &&
	grep "^leaf_mul 40000$" counts &&
	test $(wc -l <counts) = 11
'

test_expect_success '-op advanced, first run: matching and soft trimming drop 3, sampling set by level' '
	"$PERUN" collect -c ./deeptree -a 20000 -o adv.perf trace -s userspace -op advanced \
		2>err >out &&
	cat err &&
	grep "^sum 800280000$" out &&
	grep "^perun: optimization baseline-dynamic switched off: no dynamic stats of an earlier collect$" err &&
	grep "^perun: pre-optimize: 10 of 13 probes left: cg-shaping (soft) removed 3, dynamic-sampling set 10 (10 initial, 0 refined from stats)$" err &&
	test "$(field adv.perf $PRE.probes_before)" = 13 &&
	test "$(field adv.perf $PRE.probes_after)" = 10 &&
	test "$(field adv.perf $PRE.cg-shaping.removed_functions)" = "[\"leaf_mul\", \"unused1\", \"unused2\"]" &&
	test "$(field adv.perf $PRE.cg-shaping.unreachable)" = 2 &&
	test "$(field adv.perf $PRE.cg-shaping.keep_top)" = 3 &&
	profile_counts adv.perf >counts &&
	test $(wc -l <counts) = 10 &&
	! grep "^leaf_mul " counts &&
	test "$(field adv.perf $PRE.dynamic-sampling.sampling.leaf_add)" = 256 &&
	test "$(field adv.perf $PRE.dynamic-sampling.sampling.stage1)" = 8 &&
	sampling adv.perf >smp &&
	grep "^leaf_add 256$" smp &&
	grep "^stage1 8$" smp &&
	grep "^main 2$" smp &&
	grep "^stage1 2500$" counts &&
	test "$(field adv.perf trace.sampled)" = true &&
	test "$(field adv.perf trace.complete)" = true
'

test_expect_success "each method alone: strict trimming, pruning (fmt is a bottom: it calls only printf), baseline-static (work loops: linear), dynamic-sampling" '
	"$PERUN" collect -c ./deeptree -a 100 -o cg.perf trace -s userspace -on cg-shaping \
		-oa cg-mode strict -oa cg-keep-top 1 -oa cg-trim-min-functions 0 2>err &&
	cat err &&
	test "$(field cg.perf $PRE.probes_after)" = 2 &&
	printf "main 1\nwork 1\n" >expect &&
	profile_counts cg.perf >actual &&
	test_cmp expect actual &&
	"$PERUN" collect -c ./deeptree -a 100 -o pr.perf trace -s userspace -on cg-shaping \
		-oa cg-mode prune -oa cg-prune-chain-length 2 -oa cg-keep-top 2 2>err &&
	cat err &&
	test "$(field pr.perf $PRE.cg-shaping.removed_functions)" = "[\"leaf_add\", \"leaf_mul\", \"stage5\", \"fmt\", \"report\", \"unused1\", \"unused2\"]" &&
	"$PERUN" collect -c ./deeptree -a 100 -o st.perf trace -s userspace \
		-on baseline-static 2>err &&
	cat err &&
	test "$(field st.perf $PRE.baseline-static.complexity)" = constant &&
	test "$(field st.perf $PRE.baseline-static.keep_top)" = 1 &&
	profile_counts st.perf >actual &&
	test_cmp expect actual &&
	"$PERUN" collect -c ./deeptree -a 100 -o ds.perf trace -s userspace \
		-on dynamic-sampling -oa dyn-sample-step 3 2>err &&
	cat err &&
	test "$(field ds.perf $PRE.dynamic-sampling.sampling.stage1)" = 18 &&
	test "$(field ds.perf $PRE.probes_after)" = 13
'

test_expect_success '-f named functions are never dropped' '
	"$PERUN" collect -c ./deeptree -a 100 -o named.perf trace -s custom -f leaf_mul -f main \
		-on cg-shaping -oa cg-mode strict -oa cg-keep-top 0 -oa cg-trim-min-functions 0 2>err &&
	cat err &&
	printf "leaf_mul 200\nmain 1\n" >expect &&
	profile_counts named.perf >actual &&
	test_cmp expect actual
'

test_expect_success 'baseline-dynamic alone on a first run: switched off with one line, exit 0' '
	"$PERUN" collect -c ./deeptree -a 100 -o bd.perf trace -s userspace \
		-on baseline-dynamic 2>err &&
	cat err &&
	test "$(grep -c "baseline-dynamic" err)" = 1 &&
	grep "^perun: optimization baseline-dynamic switched off: no dynamic stats of an earlier collect$" err &&
	test "$(field bd.perf collector_info.params.optimization.switched_off.baseline-dynamic)" = "no dynamic stats of an earlier collect"
'

# The soft threshold is raised past the calls here: whether a tiny function
# looks constant (IQR under 5 % of its median) depends on the machine.
test_expect_success 'in a perun repository the second -op advanced refines sampling from the stats; the third has stats for every function' '
	mkdir repo && cp deeptree repo/ && cd repo &&
	git init -q && git config user.email t@example.org && git config user.name t &&
	echo x >f && git add f && git commit -qm one &&
	"$PERUN" init >/dev/null &&
	"$PERUN" collect -c ./deeptree -a 20000 -o one.perf trace -s userspace -op advanced \
		-oa dyn-base-soft-threshold 1000000 2>err &&
	cat err &&
	grep "10 initial, 0 refined from stats" err &&
	"$PERUN" collect -c ./deeptree -a 20000 -o two.perf trace -s userspace -op advanced \
		-oa dyn-base-soft-threshold 1000000 2>err >out &&
	cat err &&
	grep "^sum 800280000$" out &&
	! grep "baseline-dynamic switched off" err &&
	test "$(field two.perf $PRE.dynamic-sampling.initial)" = 0 &&
	test "$(field two.perf $PRE.dynamic-sampling.refined)" -ge 2 &&
	test "$(field two.perf $PRE.baseline-dynamic.by_filter.call-limit)" = 0 &&
	test "$(field two.perf $PRE.baseline-dynamic.by_filter.constant)" = 0 &&
	sampling two.perf >smp &&
	cat smp &&
	grep "^stage1 2$" smp &&
	grep "^leaf_add 4$" smp &&
	profile_counts two.perf >counts &&
	grep "^stage1 10000$" counts &&
	grep "^leaf_add 10000$" counts &&
	test "$(field two.perf $PRE.probes_after)" -le 10 &&
	"$PERUN" collect -c ./deeptree -a 20000 -o three.perf trace -s userspace -op advanced \
		-oa dyn-base-soft-threshold 1000000 2>err &&
	cat err &&
	test "$(field three.perf $PRE.dynamic-sampling.initial)" = 0 &&
	sampling three.perf >smp3 &&
	grep "^stage1 2$" smp3 &&
	grep "^leaf_add 4$" smp3
'

test_done
