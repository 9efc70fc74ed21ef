/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target/callgraph's rooted analysis on hand-made graphs: reachability,
 * levels by Algorithm 1 (cycles broken at the lowest candidate, ties by
 * name), leaves, depth, recursion, reachable sets.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "binary/callgraph.h"

#define E(a, b) { a, b, 1, CG_E_INSN, 0 }

static int level_of(const struct callgraph *cg, const char *name)
{
	int i = callgraph_find(cg, name);

	return i < 0 ? -2 : cg->nodes[i].level;
}

static void test_dag(void)
{
	/* main -> a, b; a -> b; b -> c; a -> c; d -> c (d unreachable) */
	static const char *const names[] = { "main", "a", "b", "c", "d" };
	static const struct cg_edge e[] = { E(0, 1), E(0, 2), E(1, 2), E(2, 3), E(1, 3), E(4, 3),
					    E(1, 2) };
	struct callgraph cg;
	size_t n;
	const uint32_t *v;
	const struct cg_edge *out;
	uint32_t *r;

	callgraph_from_edges(&cg, names, 5, e, 7, 0);
	is_int(cg.nedges, 6, "a repeated edge merges");
	out = callgraph_callees(&cg, 1, &n);
	ok(n == 2 && out[0].to == 2 && out[0].sites == 2 && out[1].to == 3, "a's callees, b twice");
	is_int(cg.nreachable, 4, "d is not reachable");
	is_int(level_of(&cg, "main"), 0, "main 0");
	is_int(level_of(&cg, "a"), 1, "a 1");
	is_int(level_of(&cg, "b"), 2, "b 2: the longest path, not the shortest");
	is_int(level_of(&cg, "c"), 3, "c 3");
	is_int(level_of(&cg, "d"), -1, "d has no level");
	is_int(cg.depth, 3, "depth 3");
	v = callgraph_level(&cg, 2, &n);
	ok(n == 1 && v[0] == 2, "level 2 is b");
	ok(cg.nleaves == 1 && cg.leaves[0] == 3, "c is the only leaf");
	(void)callgraph_callers(&cg, 3, &n);
	is_int(n, 3, "c has three callers, d among them");
	is_int(cg.nodes[0].reach, 3, "main reaches a, b, c");
	ok(callgraph_reaches(&cg, 1, 3) && !callgraph_reaches(&cg, 3, 1) &&
		   !callgraph_reaches(&cg, 1, 1),
	   "a reaches c, c nothing, a not itself");
	n = callgraph_reachable(&cg, 0, &r);
	ok(n == 3 && r[0] == 1 && r[1] == 2 && r[2] == 3, "main's reachable set");
	free(r);
	ok(!cg.nodes[0].recursive && !cg.nodes[2].recursive, "nothing recursive");
	is_int(callgraph_find(&cg, "nosuch"), -1, "an unknown name");
	callgraph_release(&cg);
}

static void test_cycles(void)
{
	/* main -> a, b; a <-> b; b -> c; c -> c */
	static const char *const names[] = { "main", "b", "a", "c" };
	static const struct cg_edge e[] = { E(0, 2), E(0, 1), E(2, 1), E(1, 2), E(1, 3), E(3, 3) };
	struct callgraph cg;

	callgraph_from_edges(&cg, names, 4, e, 6, 0);
	/* a and b both wait on each other at estimate 0; a wins by name:
	 * a = max(0, b's 0) + 1 = 1, then b = max(0, 1, a's 1) + 1 = 2,
	 * c waits on itself: c = max(2, its own 2) + 1 = 3 */
	is_int(level_of(&cg, "a"), 1, "a 1 (first by name among equal candidates)");
	is_int(level_of(&cg, "b"), 2, "b 2");
	is_int(level_of(&cg, "c"), 3, "c 3");
	is_int(cg.depth, 3, "depth 3");
	ok(cg.nodes[1].recursive && cg.nodes[2].recursive && cg.nodes[3].recursive &&
		   !cg.nodes[0].recursive,
	   "a, b and c are recursive, main not");
	ok(callgraph_reaches(&cg, 2, 2) && callgraph_reaches(&cg, 3, 3) &&
		   callgraph_reaches(&cg, 2, 3) && !callgraph_reaches(&cg, 3, 2),
	   "cycles reach themselves");
	is_int(cg.nodes[2].reach, 3, "a reaches a, b, c");
	is_int(cg.nodes[3].reach, 1, "c reaches itself");
	is_int(cg.nodes[3].complexity, CFG_LINEAR, "recursion is at least linear");
	is_int(cg.nleaves, 0, "no leaf: c calls itself");
	callgraph_release(&cg);
}

static void test_chain_breaks(void)
{
	/* main -> x; x -> y; y -> x; y -> z: x waits on y, broken at x */
	static const char *const names[] = { "main", "x", "y", "z" };
	static const struct cg_edge e[] = { E(0, 1), E(1, 2), E(2, 1), E(2, 3) };
	struct callgraph cg;

	callgraph_from_edges(&cg, names, 4, e, 4, 0);
	is_int(level_of(&cg, "x"), 1, "x 1");
	is_int(level_of(&cg, "y"), 2, "y 2");
	is_int(level_of(&cg, "z"), 3, "z 3");
	callgraph_release(&cg);

	/* no root: nothing reachable, no levels */
	callgraph_from_edges(&cg, names, 4, e, 4, -1);
	ok(cg.depth == -1 && cg.nreachable == 0 && level_of(&cg, "x") == -1, "no root");
	ok(cg.nodes[1].recursive && cg.nodes[1].reach == 3, "reach without a root");
	callgraph_release(&cg);
}

int main(void)
{
	test_dag();
	test_cycles();
	test_chain_breaks();
	return tap_done();
}
