/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which of the plan's functions perun's loader times with a uretprobe.
 *
 * A uretprobe costs about what the entry probe costs; a probe on a return
 * instruction is stepped out of line, a trap more, which on a virtual
 * machine is several times that (bench/percall.sh).  But the kernel keeps
 * at most 64 uretprobes pending per thread, and a uretprobe replaces the
 * return address on the stack, which an unwinder (C++ exceptions, Go's
 * stack growth) reads.  So a function gets a uretprobe only when no call of
 * it can be 64 traced frames deep and nothing unwinds through it:
 *
 *   - the binary throws no C++ exception and is not Go's;
 *   - the function is on no cycle of the call graph, and reaches no call
 *     through a pointer and no call into the middle of a function (either
 *     could close a cycle the graph does not show).
 *
 * A deep chain without a cycle, or a cycle through a library's callback,
 * can still pass the kernel's 64: retpair counts those calls without a
 * duration and the collect says so (beyond_return_limit).  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "binary/callgraph.h"
#include "collect/session.h"
#include "util/log.h"

/* deep[i]: node i is on a cycle of the call graph, or reaches an indirect
 * or unresolved call (itself or through its callees, to a fixed point),
 * which could close a cycle through it.  A caller of a recursive function
 * is not deep for that: its own frames do not repeat.  */
static unsigned char *deep_nodes(const struct callgraph *cg)
{
	unsigned char *r = xcalloc(cg->nnodes ? cg->nnodes : 1, 1);
	uint32_t i;
	int changed = 1;

	for (i = 0; i < cg->nnodes; i++)
		r[i] = cg->nodes[i].indirect_calls || cg->nodes[i].unresolved_calls;
	while (changed) {
		changed = 0;
		for (i = 0; i < cg->nedges; i++)
			if (r[cg->edges[i].to] && !r[cg->edges[i].from]) {
				r[cg->edges[i].from] = 1;
				changed = 1;
			}
	}
	for (i = 0; i < cg->nnodes; i++)
		r[i] |= cg->nodes[i].recursive;
	return r;
}

void collect_plan_returns(struct session *s)
{
	const struct target *t = &s->target;
	struct callgraph cg;
	unsigned char *deep;
	size_t i, uret = 0, funcs = 0;

	memset(&cg, 0, sizeof(cg));
	for (i = 0; i < s->plan.n; i++)
		s->plan.probes[i].flags &= ~PROBE_F_RET_UPROBE;
	if (t->exceptions || t->go || !t->path || !t->nfuncs)
		return;
	for (i = 0; i < s->plan.n; i++)
		funcs += s->plan.probes[i].kind == PROBE_FUNC;
	if (!funcs)
		return;
	if (callgraph_load(&cg, t, s->o->cache_off ? NULL : s->cache_dir, 0) < 0) {
		log_msg(2, "perun", "no call graph of %s: every return is timed on its return "
				    "instructions", t->path);
		return;
	}
	deep = deep_nodes(&cg);
	for (i = 0; i < s->plan.n; i++) {
		struct probe *pr = &s->plan.probes[i];
		const struct func *f;
		uint32_t node;
		if (pr->kind != PROBE_FUNC || (pr->flags & PROBE_F_ENTRY_ONLY) ||
		    !pr->binary || strcmp(pr->binary, t->path))
			continue;
		f = target_func_at(t, pr->addr);
		if (!f)
			continue;
		node = callgraph_node_of(&cg, f);
		if (node >= cg.nfuncs || deep[node])
			continue;
		pr->flags |= PROBE_F_RET_UPROBE;
		uret++;
	}
	log_msg(2, "perun", "%zu of %zu functions' returns by uretprobe, the others' on their "
			    "return instructions", uret, funcs);
	free(deep);
	callgraph_release(&cg);
}
