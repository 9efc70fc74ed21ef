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
 *   - the binary throws no C++ exception, is not Go's, and neither calls
 *     nor holds a function that unwinds the stack; pthread_exit and
 *     pthread_cancel (a forced unwind) count only in a binary with landing
 *     pads (see forced[] below);
 *   - the function is on no cycle of the call graph, and reaches no call
 *     through a pointer, no call into the middle of a function and no
 *     library function that calls back (qsort, bsearch, ...): each could
 *     close a cycle the graph does not show;
 *   - no chain of such functions the call graph shows is longer than 64
 *     above it.
 *
 * A cycle through a callback of a library function not listed here, or a
 * chain through a callback, can still pass the kernel's 64: retpair counts
 * those calls without a duration and the collect says so
 * (beyond_return_limit).  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/callgraph.h"
#include "binary/cfg.h"
#include "binary/exits.h"
#include "collect/session.h"
#include "util/fs.h"
#include "util/log.h"

/* Library functions that call back into the program: a call to one is a
 * call through a pointer.  */
static const char *const callback_imports[] = {
	"qsort", "qsort_r", "bsearch", "lsearch", "lfind", "tsearch", "tfind", "tdelete",
	"twalk", "twalk_r", "ftw", "nftw", "scandir", "scandirat", "glob", "pthread_once",
	"dl_iterate_phdr", "_Unwind_Backtrace", "g_list_foreach", "g_hash_table_foreach",
	NULL,
};

/* Functions that unwind the stack by its return addresses.  A throw
 * (C++ exceptions) looks for its handler frame by frame, and a uretprobe's
 * replaced address ends that search: the program aborts.  A binary that
 * calls or holds one gets no uretprobe.  */
static const char *const throwers[] = {
	"_Unwind_RaiseException", "_Unwind_Resume", "__cxa_throw", NULL,
};

/* A thread's exit or cancellation runs a forced unwind, which stops at a
 * uretprobe's replaced address as at the end of the stack: glibc's stop
 * function (nptl/unwind.c) then runs the thread's cleanup handlers
 * registered without exceptions and jumps to the thread's start, which
 * ends it as it would have.  Only landing pads (C++ destructors, C built
 * with -fexceptions) in frames above that address are skipped, and a
 * binary without .gcc_except_table has none: checked on this VM, 50
 * threads ending through pthread_exit under three pending uretprobes ran
 * their cleanup handlers and were joined with their values; built with
 * -fexceptions, the same program's handlers did not run.  So a binary that
 * holds one of these but no landing pad keeps its uretprobes.  The rule's
 * one known gap: a library's frames with landing pads above the binary's
 * (a C++ library calling back into it) would lose theirs too; such a
 * library is rare in a C program's threads.  */
static const char *const forced[] = {
	"pthread_exit", "pthread_cancel", "_Unwind_ForcedUnwind", NULL,
};

static const char *held(const struct callgraph *cg, const char *const *names)
{
	uint32_t i;
	size_t k;

	for (i = 0; i < cg->nnodes; i++)
		for (k = 0; cg->nodes[i].name && names[k]; k++)
			if (!strcmp(cg->nodes[i].name, names[k]))
				return names[k];
	return NULL;
}

/* The function that keeps t's returns off uretprobes, or NULL.  */
static const char *unwinder_of(const struct target *t, const struct callgraph *cg)
{
	const char *f = held(cg, throwers);

	if (f)
		return f;
	f = held(cg, forced);
	return f && target_has_cleanups(t) != 0 ? f : NULL;
}

static int calls_back(const struct cg_node *n)
{
	size_t i;

	if (!n->import || !n->name)
		return 0;
	for (i = 0; callback_imports[i]; i++)
		if (!strcmp(n->name, callback_imports[i]))
			return 1;
	return 0;
}

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
		r[i] = cg->nodes[i].indirect_calls || cg->nodes[i].unresolved_calls ||
		       calls_back(&cg->nodes[i]);
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

/* The kernel's pending uretprobes per thread (MAX_URETPROBE_DEPTH).  */
#define URET_LIMIT 64

/* Of the candidates (uret[node] set: traced, not deep), those a chain of
 * more than URET_LIMIT candidates would reach past the kernel's limit lose
 * their uretprobe.  The components of the call graph are numbered callees
 * first (Tarjan), so callers come first from the top; a candidate is on no
 * cycle, so a component of its own, and appears once on any stack.  pend[c]:
 * the most candidates' frames open when component c is entered.  */
static size_t cap_chains(const struct callgraph *cg, unsigned char *uret)
{
	uint32_t ncomp = 0, i, c, *pend, *first, *next, dropped = 0;

	if (!cg->scc)
		return 0;
	for (i = 0; i < cg->nnodes; i++)
		if (cg->scc[i] + 1 > ncomp)
			ncomp = cg->scc[i] + 1;
	pend = xcalloc(ncomp ? ncomp : 1, sizeof(*pend));
	first = xmalloc((ncomp ? ncomp : 1) * sizeof(*first));
	next = xmalloc((cg->nnodes ? cg->nnodes : 1) * sizeof(*next));
	for (c = 0; c < ncomp; c++)
		first[c] = UINT32_MAX;
	for (i = 0; i < cg->nnodes; i++) {
		next[i] = first[cg->scc[i]];
		first[cg->scc[i]] = i;
	}
	for (c = ncomp; c-- > 0;) {
		uint32_t out = pend[c], v, k;
		for (v = first[c]; v != UINT32_MAX; v = next[v])
			if (uret[v]) {
				if (pend[c] + 1 > URET_LIMIT) {
					uret[v] = 0;
					dropped++;
				} else {
					out = pend[c] + 1;
				}
			}
		for (v = first[c]; v != UINT32_MAX; v = next[v])
			for (k = cg->out_start[v]; k < cg->out_start[v + 1]; k++) {
				uint32_t d = cg->scc[cg->edges[k].to];
				if (d != c && pend[d] < out)
					pend[d] = out;
			}
	}
	free(pend);
	free(first);
	free(next);
	return dropped;
}

/* The function of t that probe pr probes with both an entry and a return
 * probe, or NULL.  */
static const struct func *func_of(const struct target *t, const struct probe *pr)
{
	if (pr->kind != PROBE_FUNC || (pr->flags & PROBE_F_ENTRY_ONLY) || !pr->binary ||
	    strcmp(pr->binary, t->path))
		return NULL;
	return target_func_at(t, pr->addr);
}

/* The call graph's node of func_of(t, pr), or UINT32_MAX.  */
static uint32_t node_of(const struct target *t, const struct callgraph *cg,
			const struct probe *pr)
{
	const struct func *f = func_of(t, pr);
	uint32_t node;

	if (!f)
		return UINT32_MAX;
	node = callgraph_node_of(cg, f);
	return node < cg->nfuncs ? node : UINT32_MAX;
}

/* In a binary that unwinds its stack (C++ exceptions, or a forced unwind
 * through landing pads), a function whose return instructions cannot all
 * be found (a jump through a register, a jump to its .cold part, a
 * function that never returns) would get a uretprobe from the loader: an
 * exception unwinding through it aborts, a forced unwind stops at it and
 * skips the landing pads above (the handlers pthread_cleanup_push
 * registered with -fexceptions).  It is counted at entry only; why names
 * the unwinder.  */
static void unwound_entry_only(struct session *s, const char *why)
{
	const struct target *t = &s->target;
	struct cfg_disasm *d = NULL;
	size_t i, n = 0;
	int fd;

	if (cfg_disasm_new(&d) < 0)
		return;
	/* the binary may have been swapped since it was read: never block on
	 * a FIFO in its place */
	fd = fs_open_regular(t->path, 0, 0);
	for (i = 0; i < s->plan.n && fd >= 0; i++) {
		struct probe *pr = &s->plan.probes[i];
		const struct func *f = func_of(t, pr);
		uint64_t *offs = NULL;
		if (!f || pr->kind != PROBE_FUNC || (pr->flags & PROBE_F_ENTRY_ONLY))
			continue;
		if (target_func_exits(t, f, fd, d, &offs) <= 0) {
			pr->flags |= PROBE_F_ENTRY_ONLY;
			n++;
		}
		free(offs);
	}
	if (fd >= 0)
		close(fd);
	cfg_disasm_free(d);
	if (n)
		log_msg(1, "perun", "%s %s: %zu function%s counted at entry only "
				    "(not every return instruction of theirs was found, and a "
				    "uretprobe would break unwinding through them)",
			t->path, why, n, n == 1 ? "" : "s");
}

void collect_plan_returns(struct session *s)
{
	const struct target *t = &s->target;
	struct callgraph cg;
	unsigned char *deep, *uretn;
	size_t i, uret = 0, funcs = 0, capped;
	uint32_t node;
	const char *unwinder, *env = getenv("PERUN_RETURNS");

	memset(&cg, 0, sizeof(cg));
	for (i = 0; i < s->plan.n; i++)
		s->plan.probes[i].flags &= ~PROBE_F_RET_UPROBE;
	if (!t->path || !t->nfuncs)
		return;
	/* every return on its instructions, as before perun chose per function
	 * (tests whose fixtures assume that cost) */
	if (env && !strcmp(env, "instructions"))
		return;
	if (t->exceptions && !t->go)
		unwound_entry_only(s, "uses C++ exceptions");
	if (t->exceptions || t->go)
		return;
	for (i = 0; i < s->plan.n; i++)
		funcs += s->plan.probes[i].kind == PROBE_FUNC;
	if (!funcs)
		return;
	if (callgraph_load(&cg, t, s->o->cache_off ? NULL : s->cache_dir, 0) < 0) {
		/* no call graph to say whether it unwinds: its landing pads say
		 * it might */
		if (target_has_cleanups(t) != 0)
			unwound_entry_only(s, "has landing pads, and no call graph to tell whether "
					      "it unwinds through them");
		log_msg(2, "perun", "no call graph of %s: every return is timed on its return "
				    "instructions", t->path);
		return;
	}
	if ((unwinder = unwinder_of(t, &cg))) {
		char why[96];
		snprintf(why, sizeof(why), "unwinds its stack through landing pads (%s)", unwinder);
		unwound_entry_only(s, why);
		log_msg(2, "perun", "%s holds %s, which unwinds through return addresses: every "
				    "return is timed on its return instructions", t->path, unwinder);
		callgraph_release(&cg);
		return;
	}
	deep = deep_nodes(&cg);
	/* the candidates: traced, and no call of theirs can repeat on a stack */
	uretn = xcalloc(cg.nnodes ? cg.nnodes : 1, 1);
	for (i = 0; i < s->plan.n; i++)
		if ((node = node_of(t, &cg, &s->plan.probes[i])) != UINT32_MAX && !deep[node])
			uretn[node] = 1;
	capped = cap_chains(&cg, uretn);
	for (i = 0; i < s->plan.n; i++)
		if ((node = node_of(t, &cg, &s->plan.probes[i])) != UINT32_MAX && uretn[node]) {
			s->plan.probes[i].flags |= PROBE_F_RET_UPROBE;
			uret++;
		}
	log_msg(2, "perun", "%zu of %zu functions' returns by uretprobe, the others' on their "
			    "return instructions (%zu of them past a chain of %d)", uret, funcs, capped,
		URET_LIMIT);
	free(deep);
	free(uretn);
	callgraph_release(&cg);
}
