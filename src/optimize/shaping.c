/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Call Graph Shaping (thesis 7.2.3): matching, trimming (Algorithm 3) and
 * pruning (Algorithm 4) over the call-graph resource.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "binary/callgraph.h"
#include "optimize/methods.h"
#include "util/log.h"
#include "util/strbuf.h"

static size_t mark(unsigned char *drop, uint32_t i)
{
	if (drop[i])
		return 0;
	drop[i] = 1;
	return 1;
}

size_t cgs_match(const struct callgraph *cg, const unsigned char *cand, unsigned char *drop)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < cg->nnodes; i++)
		if (cand[i] && !cg->nodes[i].reachable)
			n += mark(drop, i);
	return n;
}

/* How many nodes i reaches (the analysis keeps no count on huge graphs).  */
static size_t reach_of(const struct callgraph *cg, uint32_t i)
{
	uint32_t *r;
	size_t n;

	if (cg->nodes[i].reach || cg->nnodes <= 65000)
		return cg->nodes[i].reach;
	n = callgraph_reachable(cg, i, &r);
	free(r);
	return n;
}

struct by_reach {
	uint32_t node;
	size_t reach;
};

static int cmp_reach(const void *a, const void *b)
{
	const struct by_reach *x = a, *y = b;

	if (x->reach != y->reach)
		return x->reach > y->reach ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

size_t cgs_trim(const struct callgraph *cg, const unsigned char *cand, int keep_top,
		size_t min_functions, int keep_leaf, unsigned char *drop)
{
	size_t kept = 0, n = 0, k, m, nl;
	struct by_reach *f;
	const uint32_t *lv;
	int l;

	for (l = 0; l <= cg->depth; l++) {
		lv = callgraph_level(cg, l, &nl);
		if (l <= keep_top) {
			for (k = 0; k < nl; k++) {
				if (!cand[lv[k]])
					continue;
				if (keep_leaf || !cg->nodes[lv[k]].leaf)
					kept++;
				else
					n += mark(drop, lv[k]);
			}
			continue;
		}
		f = xcalloc(nl ? nl : 1, sizeof(*f));
		for (k = m = 0; k < nl; k++)
			if (cand[lv[k]]) {
				f[m].node = lv[k];
				f[m].reach = kept < min_functions ? reach_of(cg, lv[k]) : 0;
				m++;
			}
		if (kept < min_functions)
			qsort(f, m, sizeof(*f), cmp_reach);
		for (k = 0; k < m; k++) {
			if (kept < min_functions)
				kept++;
			else
				n += mark(drop, f[k].node);
		}
		free(f);
	}
	return n;
}

size_t cgs_bottom(const struct callgraph *cg, const unsigned char *cand, unsigned char *bot)
{
	size_t n = 0, k, nr;
	uint32_t i, *r;

	for (i = 0; i < cg->nnodes; i++) {
		int sub = 0;
		bot[i] = 0;
		if (!cand[i] || !cg->nodes[i].reachable)
			continue;
		nr = callgraph_reachable(cg, i, &r);
		for (k = 0; k < nr && !sub; k++)
			sub = r[k] != i && cand[r[k]] && cg->nodes[r[k]].level > cg->nodes[i].level;
		free(r);
		if (!sub) {
			bot[i] = 1;
			n++;
		}
	}
	return n;
}

size_t cgs_prune(const struct callgraph *cg, const unsigned char *cand, int chain_length,
		 int keep_top, unsigned char *drop)
{
	unsigned char *bot = xcalloc(cg->nnodes ? cg->nnodes : 1, 1);
	/* seen: the bottom node's leaf_candidates, by stamp */
	uint32_t *seen = xcalloc(cg->nnodes ? cg->nnodes : 1, sizeof(*seen));
	uint32_t *inspect = xcalloc(cg->nnodes ? cg->nnodes : 1, sizeof(*inspect));
	uint32_t *next = xcalloc(cg->nnodes ? cg->nnodes : 1, sizeof(*next));
	size_t n = 0, ni, nn, k, c, nc;
	uint32_t b, stamp = 0, *tmp;
	int step;

	cgs_bottom(cg, cand, bot);
	for (b = 0; b < cg->nnodes; b++) {
		double lo, hi;
		if (!bot[b] || cg->nodes[b].level < keep_top)
			continue;
		hi = cg->nodes[b].level + chain_length / 2.0;
		lo = cg->nodes[b].level - chain_length / 2.0;
		n += mark(drop, b);
		stamp++;
		seen[b] = stamp;
		inspect[0] = b;
		ni = 1;
		for (step = 0; step < chain_length && ni; step++) {
			nn = 0;
			for (k = 0; k < ni; k++) {
				const uint32_t *in = callgraph_callers(cg, inspect[k], &nc);
				for (c = 0; c < nc; c++) {
					uint32_t g = cg->edges[in[c]].from;
					int gl = cg->nodes[g].level;
					if (!cand[g] || seen[g] == stamp || gl < 0 || gl < keep_top ||
					    gl < lo || gl > hi)
						continue;
					seen[g] = stamp;
					next[nn++] = g;
					n += mark(drop, g);
				}
			}
			tmp = inspect;
			inspect = next;
			next = tmp;
			ni = nn;
		}
	}
	free(bot);
	free(seen);
	free(inspect);
	free(next);
	return n;
}
