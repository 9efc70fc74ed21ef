/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Static Baseline (thesis 7.2.1) on the CFG complexity classes of the call
 * graph, and Dynamic Baseline (7.2.2, Algorithm 2) on the dynamic stats of
 * an earlier collect.  */
#include "config.h"

#include <string.h>

#include "binary/callgraph.h"
#include "optimize/methods.h"
#include "store/stats.h"

size_t baseline_static(const struct callgraph *cg, const unsigned char *cand, int max_class,
		       int keep_top, unsigned char *drop)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < cg->nnodes; i++) {
		const struct cg_node *v = &cg->nodes[i];
		if (!cand[i] || drop[i] || v->import || (int)v->complexity > max_class)
			continue;
		if (v->level >= 0 && v->level < keep_top)
			continue;
		drop[i] = 1;
		n++;
	}
	return n;
}

const char *dynbase_filter_name(enum dynbase_filter f)
{
	switch (f) {
	case DYNBASE_CALL_LIMIT: return "call-limit";
	case DYNBASE_CONSTANT: return "constant";
	case DYNBASE_WRAPPED: return "wrapped";
	case DYNBASE_KEEP: break;
	}
	return "kept";
}

/* wrapped_filter: every caller of node calls nothing else, as often as f is
 * called, and takes little more time than f.  */
static int wrapped(const struct callgraph *cg, const struct stats *st, const struct fn_stats *f,
		   uint32_t node, double ratio)
{
	size_t nin, k, nout;
	const uint32_t *in = callgraph_callers(cg, node, &nin);

	if (!nin)
		return 0;
	for (k = 0; k < nin; k++) {
		uint32_t w = cg->edges[in[k]].from;
		const struct cg_edge *out = callgraph_callees(cg, w, &nout);
		const struct fn_stats *ws;
		if (w == node || nout != 1 || out[0].to != node)
			return 0;
		ws = stats_find(st, cg->nodes[w].name);
		if (!ws || ws->count != f->count || !(f->median > ws->median * ratio))
			return 0;
	}
	return 1;
}

enum dynbase_filter dynbase_check(const struct callgraph *cg, const struct stats *st,
				  const char *name, int node, const struct dynbase_params *p)
{
	const struct fn_stats *f = stats_find(st, name);

	if (!f)
		return DYNBASE_KEEP;
	if (f->count > p->hard_threshold)
		return DYNBASE_CALL_LIMIT;
	if (f->count > p->soft_threshold &&
	    (f->median < p->median_resolution || f->iqr < f->median * p->constant_median_ratio))
		return DYNBASE_CONSTANT;
	if (cg && node >= 0 && wrapped(cg, st, f, (uint32_t)node, p->wrapper_ratio))
		return DYNBASE_WRAPPED;
	return DYNBASE_KEEP;
}
