/* SPDX-License-Identifier: GPL-3.0-or-later */
/* optimize/methods on hand-made call graphs: matching, trimming (Algorithm
 * 3), bottom-level functions, pruning (Algorithm 4), the static baseline,
 * the dynamic baseline's filters (Algorithm 2) and dynamic sampling's
 * initial, refinement and normalization (Algorithm 5), each result computed
 * by hand in the comments.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "optimize/methods.h"
#include "store/stats.h"
#include "tap.h"
#include "binary/callgraph.h"
#include "binary/cfg.h"

#define E(a, b) { a, b, 1, CG_E_INSN, 0 }

/* The graph G (node: level, reach):
 *
 *   main(0,6) -> a(1,4), b(1,3);  a -> c(2,1), d(2,2);  b -> d;
 *   c -> e(3,0);  d -> e, f(3,0);  x (unreachable) -> f
 *
 * leaves e and f, depth 3.  */
static const char *const gnames[] = { "main", "a", "b", "c", "d", "e", "f", "x" };
static const struct cg_edge gedges[] = { E(0, 1), E(0, 2), E(1, 3), E(1, 4), E(2, 4),
					 E(3, 5), E(4, 5), E(4, 6), E(7, 6) };
#define GN 8

static char buf[256];

/* The names marked in set, comma separated.  */
static const char *names_of(const struct callgraph *cg, const unsigned char *set)
{
	uint32_t i;

	buf[0] = 0;
	for (i = 0; i < cg->nnodes; i++)
		if (set[i]) {
			if (buf[0])
				strcat(buf, ",");
			strcat(buf, cg->nodes[i].name);
		}
	return buf;
}

static void graph(struct callgraph *cg)
{
	callgraph_from_edges(cg, gnames, GN, gedges, sizeof(gedges) / sizeof(gedges[0]), 0);
}

static void test_graph_is_as_drawn(void)
{
	struct callgraph cg;

	graph(&cg);
	ok(cg.depth == 3 && cg.nodes[3].level == 2 && cg.nodes[4].level == 2 &&
		   cg.nodes[5].level == 3 && cg.nodes[6].level == 3 && cg.nodes[7].level == -1,
	   "G's levels");
	ok(cg.nodes[0].reach == 6 && cg.nodes[1].reach == 4 && cg.nodes[2].reach == 3 &&
		   cg.nodes[3].reach == 1 && cg.nodes[4].reach == 2,
	   "G's reach counts");
	ok(cg.nodes[5].leaf && cg.nodes[6].leaf && !cg.nodes[4].leaf, "e and f are the leaves");
	callgraph_release(&cg);
}

static void test_match_trim(void)
{
	unsigned char all[GN], drop[GN];
	struct callgraph cg;

	graph(&cg);
	memset(all, 1, GN);
	memset(drop, 0, GN);
	is_int(cgs_match(&cg, all, drop), 1, "matching: one unreachable candidate");
	is_str(names_of(&cg, drop), "x", "matching drops x");

	memset(drop, 0, GN);
	is_int(cgs_trim(&cg, all, 1, 0, 0, drop), 4, "trim keep-top 1: four trimmed");
	is_str(names_of(&cg, drop), "c,d,e,f", "levels 0 and 1 kept, 2 and 3 trimmed");

	memset(drop, 0, GN);
	cgs_trim(&cg, all, 1, 4, 0, drop);
	is_str(names_of(&cg, drop), "c,e,f",
	       "min-functions 4: d (reaches 2) fills the fourth place before c (reaches 1)");

	memset(drop, 0, GN);
	cgs_trim(&cg, all, 3, 0, 0, drop);
	is_str(names_of(&cg, drop), "e,f", "every level kept: only the leaves trimmed");

	memset(drop, 0, GN);
	is_int(cgs_trim(&cg, all, 3, 0, 1, drop), 0, "keep-leaf: nothing trimmed");

	memset(drop, 0, GN);
	cgs_trim(&cg, all, 0, 6, 0, drop);
	is_str(names_of(&cg, drop), "f",
	       "keep-top 0, min-functions 6: main, a, b, d, c, then e (tie by index) fill up");

	memset(drop, 0, GN);
	cgs_trim(&cg, all, 0, 0, 0, drop);
	is_str(names_of(&cg, drop), "a,b,c,d,e,f", "keep-top 0: only the root stays");
	callgraph_release(&cg);
}

static void test_bottom_prune(void)
{
	unsigned char all[GN], some[GN], bot[GN], drop[GN];
	struct callgraph cg;

	graph(&cg);
	memset(all, 1, GN);
	is_int(cgs_bottom(&cg, all, bot), 2, "two bottom-level functions");
	is_str(names_of(&cg, bot), "e,f", "the bottom of G: e and f");
	memcpy(some, all, GN);
	some[5] = some[6] = 0;
	cgs_bottom(&cg, some, bot);
	is_str(names_of(&cg, bot), "c,d", "without e and f probed, c and d are the bottom");

	memset(drop, 0, GN);
	is_int(cgs_prune(&cg, all, 1, 2, drop), 2, "prune chain 1: the bottom only");
	is_str(names_of(&cg, drop), "e,f", "callers are a level up, out of +-0.5");

	memset(drop, 0, GN);
	cgs_prune(&cg, all, 2, 1, drop);
	is_str(names_of(&cg, drop), "c,d,e,f", "chain 2: callers within one level go too");

	memset(drop, 0, GN);
	cgs_prune(&cg, all, 4, 1, drop);
	is_str(names_of(&cg, drop), "a,b,c,d,e,f", "chain 4: up to level 1, main protected");

	memset(drop, 0, GN);
	cgs_prune(&cg, all, 4, 2, drop);
	is_str(names_of(&cg, drop), "c,d,e,f", "chain 4, keep-top 2: a and b protected");

	memset(drop, 0, GN);
	is_int(cgs_prune(&cg, all, 2, 4, drop), 0, "bottom above keep-top: nothing pruned");
	callgraph_release(&cg);
}

static void test_static(void)
{
	unsigned char all[GN], drop[GN];
	struct callgraph cg;

	graph(&cg);
	cg.nodes[3].complexity = CFG_LINEAR;	/* c */
	cg.nodes[4].complexity = CFG_QUADRATIC;	/* d */
	memset(all, 1, GN);
	memset(drop, 0, GN);
	is_int(baseline_static(&cg, all, CFG_CONSTANT, 1, drop), 5, "constant: five dropped");
	is_str(names_of(&cg, drop), "a,b,e,f,x", "every constant one but the protected root");
	memset(drop, 0, GN);
	baseline_static(&cg, all, CFG_LINEAR, 2, drop);
	is_str(names_of(&cg, drop), "c,e,f,x", "linear, keep-top 2: c goes, main, a, b stay");
	memset(drop, 0, GN);
	baseline_static(&cg, all, CFG_QUARTIC, 0, drop);
	is_str(names_of(&cg, drop), "main,a,b,c,d,e,f,x", "quartic, keep-top 0: everything");
	callgraph_release(&cg);
}

static struct fn_stats fs(const char *name, uint64_t count, double median, double iqr)
{
	struct fn_stats f;

	memset(&f, 0, sizeof(f));
	f.name = (char *)name;
	f.sampled_count = f.count = count;
	f.sample = 1;
	f.median = median;
	f.iqr = iqr;
	return f;
}

static void test_dynamic_baseline(void)
{
	/* main -> w, h, k;  w -> g;  h -> k */
	static const char *const names[] = { "main", "w", "g", "h", "k" };
	static const struct cg_edge e[] = { E(0, 1), E(0, 3), E(0, 4), E(1, 2), E(3, 4) };
	struct fn_stats fn[9];
	struct dynbase_params p = { 10000, 1000000, DYNBASE_MEDIAN_RESOLUTION,
				    DYNBASE_CONSTANT_MEDIAN_RATIO, DYNBASE_WRAPPER_RATIO };
	struct callgraph cg;
	struct stats st;

	/* sorted by name, as stats_find wants */
	fn[0] = fs("below", 50, 10, 0);
	fn[1] = fs("const1", 20000, 500, 400);
	fn[2] = fs("const2", 20000, 5000, 100);
	fn[3] = fs("g", 300, 90, 10);
	fn[4] = fs("hot", 2000000, 5000, 4000);
	fn[5] = fs("k", 300, 50, 10);
	fn[6] = fs("main", 1, 1e6, 0);
	fn[7] = fs("var", 20000, 5000, 1000);
	fn[8] = fs("w", 300, 100, 10);
	memset(&st, 0, sizeof(st));
	st.fn = fn;
	st.n = 9;
	callgraph_from_edges(&cg, names, 5, e, 5, 0);
	is_int(dynbase_check(&cg, &st, "hot", -1, &p), DYNBASE_CALL_LIMIT,
	       "2,000,000 calls > hard 1,000,000: call limit");
	is_int(dynbase_check(&cg, &st, "const1", -1, &p), DYNBASE_CONSTANT,
	       "past soft, median 500 ns under the resolution: constant");
	is_int(dynbase_check(&cg, &st, "const2", -1, &p), DYNBASE_CONSTANT,
	       "past soft, IQR 100 < 5000 * 0.05: constant");
	is_int(dynbase_check(&cg, &st, "var", -1, &p), DYNBASE_KEEP, "IQR 1000 >= 250: kept");
	is_int(dynbase_check(&cg, &st, "below", -1, &p), DYNBASE_KEEP,
	       "under the soft threshold: no constant check");
	is_int(dynbase_check(&cg, &st, "nosuch", -1, &p), DYNBASE_KEEP, "no stats: kept");
	is_int(dynbase_check(&cg, &st, "g", 2, &p), DYNBASE_WRAPPED,
	       "w calls only g, as often, g's median 90 > 100 * 0.8: wrapped");
	is_int(dynbase_check(NULL, &st, "g", 2, &p), DYNBASE_KEEP, "no call graph: no wrappers");
	is_int(dynbase_check(&cg, &st, "k", 4, &p), DYNBASE_KEEP,
	       "k's callers call others too: not wrapped");
	is_int(dynbase_check(&cg, &st, "w", 1, &p), DYNBASE_KEEP, "main calls three: w kept");
	fn[3].median = 70;
	is_int(dynbase_check(&cg, &st, "g", 2, &p), DYNBASE_KEEP,
	       "g's median 70 <= 80: the wrapper does work of its own");
	fn[3].median = 90;
	fn[3].count = 301;
	is_int(dynbase_check(&cg, &st, "g", 2, &p), DYNBASE_KEEP, "other call counts: kept");
	is_str(dynbase_filter_name(DYNBASE_WRAPPED), "wrapped", "filter names");
	callgraph_release(&cg);
}

static void test_sampling(void)
{
	uint64_t calls = 1000000, sampled;
	unsigned s;
	int i;

	ok(dynsample_coefficient(CFG_CONSTANT) == 2.0 && dynsample_coefficient(CFG_LINEAR) == 1.5 &&
		   dynsample_coefficient(CFG_QUADRATIC) == 1.0 && dynsample_coefficient(-1) == 1.0,
	   "coefficients: constant 2, linear 1.5, else 1");
	is_int(dynsample_initial(3, CFG_CONSTANT, 2), 16, "2^3 * 2");
	is_int(dynsample_initial(3, CFG_LINEAR, 2), 12, "2^3 * 1.5");
	is_int(dynsample_initial(3, CFG_QUADRATIC, 2), 8, "2^3 * 1");
	is_int(dynsample_initial(1, CFG_LINEAR, 2), 3, "2 * 1.5");
	is_int(dynsample_initial(0, CFG_LINEAR, 2), 2, "round(1.5)");
	is_int(dynsample_initial(0, CFG_QUADRATIC, 2), 1, "the root: every call");
	is_int(dynsample_initial(-1, -1, 2), 1, "no level: every call");
	is_int(dynsample_initial(3, CFG_CONSTANT, 1.5), 6, "round(1.5^3) = 3, * 2");
	is_int(dynsample_initial(100, CFG_CONSTANT, 2), DYNSAMPLE_MAX, "normalized to the maximum");
	is_int(dynsample_refine(100, 20, 10), 200, "the thesis' example: 100 / (10 / 20)");
	is_int(dynsample_refine(100, 5, 10), 50, "too few records: sample halves");
	is_int(dynsample_refine(100, 11, 10), 100, "within epsilon (1): unchanged");
	is_int(dynsample_refine(100, 9, 10), 100, "within epsilon below: unchanged");
	is_int(dynsample_refine(1, 3, 10), 1, "round(0.3) normalized to 1");
	is_int(dynsample_refine(7, 0, 10), 1, "never called: every call");
	is_int(dynsample_refine(2, 1000000000000ull, 1), DYNSAMPLE_MAX, "normalized down");

	/* iterations on a function of 1,000,000 calls at level 3, constant: the
	 * script records calls 0, s, 2s, ... so ceil(calls / s) */
	s = dynsample_initial(3, CFG_CONSTANT, 2);
	for (i = 0; i < 4; i++) {
		sampled = (calls + s - 1) / s;
		s = dynsample_refine(s, sampled, 10000);
	}
	is_int(s, 100, "refinement converges: 16 -> 100, then stays");
	sampled = (calls + s - 1) / s;
	is_int(sampled, 10000, "the threshold's records");
}

int main(void)
{
	test_graph_is_as_drawn();
	test_match_trim();
	test_bottom_prune();
	test_static();
	test_dynamic_baseline();
	test_sampling();
	return tap_done();
}
