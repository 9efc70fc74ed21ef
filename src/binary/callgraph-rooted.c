/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The rooted analysis of a call graph (callgraph.h): reachability, levels
 * by Algorithm 1 of seeds/003 (ch. 7.1.1), strongly connected components
 * and reachable sets, leaves, complexity; and the queries over them.
 * Knows nothing of ELF: callgraph_from_edges builds graphs for tests and
 * for methods that reshape one.  */
#include "config.h"

#define PR_FMT "callgraph"

#include <stdlib.h>
#include <string.h>

#include "binary/callgraph.h"
#include "binary/target.h"
#include "util/log.h"
#include "util/strbuf.h"


static void build_adjacency(struct callgraph *cg)
{
	uint32_t i, n = cg->nnodes;
	uint32_t *pos;

	cg->out_start = xcalloc(n + 2, sizeof(*cg->out_start));
	cg->in_start = xcalloc(n + 2, sizeof(*cg->in_start));
	cg->in_edges = xmalloc((cg->nedges + 1) * sizeof(*cg->in_edges));
	for (i = 0; i < cg->nedges; i++) {
		cg->out_start[cg->edges[i].from + 1]++;
		cg->in_start[cg->edges[i].to + 1]++;
	}
	for (i = 0; i < n; i++) {
		cg->out_start[i + 1] += cg->out_start[i];
		cg->in_start[i + 1] += cg->in_start[i];
	}
	pos = xmalloc((n + 1) * sizeof(*pos));
	memcpy(pos, cg->in_start, (n + 1) * sizeof(*pos));
	for (i = 0; i < cg->nedges; i++)	/* by caller, as edges are */
		cg->in_edges[pos[cg->edges[i].to]++] = i;
	free(pos);
}

static void find_reachable(struct callgraph *cg)
{
	uint32_t *queue, head = 0, tail = 0, k;

	if (cg->root < 0)
		return;
	queue = xmalloc((cg->nnodes + 1) * sizeof(*queue));
	cg->nodes[cg->root].reachable = 1;
	queue[tail++] = (uint32_t)cg->root;
	while (head < tail) {
		uint32_t x = queue[head++];
		for (k = cg->out_start[x]; k < cg->out_start[x + 1]; k++) {
			uint32_t y = cg->edges[k].to;
			if (!cg->nodes[y].reachable) {
				cg->nodes[y].reachable = 1;
				queue[tail++] = y;
			}
		}
	}
	cg->nreachable = tail;
	free(queue);
}

/* A min-heap of (level estimate, name rank, node) for Algorithm 1's
 * lower-bound representatives; stale entries are skipped when popped.  */
struct cand {
	int level;
	uint32_t rank, node;
};

static int cand_less(const struct cand *a, const struct cand *b)
{
	return a->level != b->level ? a->level < b->level : a->rank < b->rank;
}

static void heap_push(struct cand *h, size_t *n, struct cand c)
{
	size_t i = (*n)++;

	h[i] = c;
	while (i && cand_less(&h[i], &h[(i - 1) / 2])) {
		struct cand tmp = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct cand heap_pop(struct cand *h, size_t *n)
{
	struct cand top = h[0];
	size_t i = 0;

	h[0] = h[--(*n)];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < *n && cand_less(&h[l], &h[m]))
			m = l;
		if (r < *n && cand_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			break;
		struct cand tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
	return top;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct cg_edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

void callgraph_from_edges(struct callgraph *cg, const char *const *names, uint32_t n,
			  const struct cg_edge *edges, uint32_t nedges, int root)
{
	uint32_t i, o = 0;

	memset(cg, 0, sizeof(*cg));
	cg->nnodes = n;
	cg->nodes = xcalloc((size_t)n + 1, sizeof(*cg->nodes));
	for (i = 0; i < n; i++)
		cg->nodes[i].name = names[i];
	cg->edges = xmalloc(((size_t)nedges + 1) * sizeof(*cg->edges));
	if (nedges)
		memcpy(cg->edges, edges, nedges * sizeof(*edges));
	qsort(cg->edges, nedges, sizeof(*cg->edges), cmp_edge);
	for (i = 0; i < nedges; i++) {
		if (o && cg->edges[o - 1].from == cg->edges[i].from &&
		    cg->edges[o - 1].to == cg->edges[i].to) {
			struct cg_edge *e = &cg->edges[o - 1];
			e->sites += cg->edges[i].sites;
			e->flags |= cg->edges[i].flags;
			if (cg->edges[i].loop_depth > e->loop_depth)
				e->loop_depth = cg->edges[i].loop_depth;
			continue;
		}
		cg->edges[o++] = cg->edges[i];
	}
	cg->nedges = o;
	cg->root = root;
	callgraph_analyse(cg);
}

static int cmp_node_name(const void *a, const void *b, void *arg)
{
	const struct callgraph *cg = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(cg->nodes[x].name, cg->nodes[y].name);

	return c ? c : (x < y ? -1 : x > y);
}

/* Algorithm 1 (seeds/003, ch. 7.1.1): a global BFS from the root resolves a
 * node once all its (reachable) callers were inspected, at one more than
 * the highest level among its callers and callees seen so far; when the
 * queue runs dry, cycles are broken at the candidate with the lowest
 * estimate (ties by name).  */
static void estimate_levels(struct callgraph *cg)
{
	uint32_t n = cg->nnodes, i, k, head = 0, tail = 0;
	uint32_t *queue, *ncallers, *nseen, *rank, *order;
	int *seen_max;
	uint8_t *done;
	struct cand *heap;
	size_t nheap = 0;

	for (i = 0; i < n; i++)
		cg->nodes[i].level = -1;
	cg->depth = -1;
	if (cg->root < 0)
		return;
	queue = xmalloc((cg->nedges + 1) * sizeof(*queue));
	ncallers = xcalloc(n + 1, sizeof(*ncallers));
	nseen = xcalloc(n + 1, sizeof(*nseen));
	seen_max = xmalloc((n + 1) * sizeof(*seen_max));
	done = xcalloc(n + 1, 1);
	heap = xmalloc((cg->nedges + 1) * sizeof(*heap));
	rank = xmalloc((n + 1) * sizeof(*rank));
	order = xmalloc((n + 1) * sizeof(*order));
	for (i = 0; i < n; i++) {
		order[i] = i;
		seen_max[i] = -1;
	}
	qsort_r(order, n, sizeof(*order), cmp_node_name, cg);
	for (i = 0; i < n; i++)
		rank[order[i]] = i;
	for (i = 0; i < cg->nedges; i++)
		if (cg->nodes[cg->edges[i].from].reachable)
			ncallers[cg->edges[i].to]++;

	done[cg->root] = 1;
	cg->nodes[cg->root].level = 0;
	for (k = cg->out_start[cg->root]; k < cg->out_start[cg->root + 1]; k++)
		queue[tail++] = k;
	for (;;) {
		uint32_t x;
		while (head < tail) {
			const struct cg_edge *e = &cg->edges[queue[head++]];
			int lvl = cg->nodes[e->from].level;
			x = e->to;
			if (done[x])
				continue;
			nseen[x]++;
			if (lvl > seen_max[x]) {
				seen_max[x] = lvl;
				if (nseen[x] < ncallers[x])
					heap_push(heap, &nheap, (struct cand){ lvl, rank[x], x });
			}
			if (nseen[x] < ncallers[x])
				continue;
			goto resolve;
		}
		/* the focused phase: break a cycle */
		x = UINT32_MAX;
		while (nheap) {
			struct cand c = heap_pop(heap, &nheap);
			if (!done[c.node] && c.level == seen_max[c.node]) {
				x = c.node;
				break;
			}
		}
		if (x == UINT32_MAX)
			break;
resolve:
		{
			int callers_max = seen_max[x], callees_max = -1, lvl;
			for (k = cg->out_start[x]; k < cg->out_start[x + 1]; k++) {
				uint32_t y = cg->edges[k].to;
				int l = done[y] ? cg->nodes[y].level : seen_max[y];
				if (l > callees_max)
					callees_max = l;
			}
			if (callees_max < 0)
				callees_max = callers_max;
			lvl = (callers_max > callees_max ? callers_max : callees_max) + 1;
			cg->nodes[x].level = lvl;
			done[x] = 1;
			for (k = cg->out_start[x]; k < cg->out_start[x + 1]; k++)
				queue[tail++] = k;
		}
	}
	/* levels as lists */
	for (i = 0; i < n; i++)
		if (cg->nodes[i].level > cg->depth)
			cg->depth = cg->nodes[i].level;
	cg->level_start = xcalloc((size_t)cg->depth + 3, sizeof(*cg->level_start));
	cg->level_nodes = xmalloc((cg->nreachable + 1) * sizeof(*cg->level_nodes));
	for (i = 0; i < n; i++)
		if (cg->nodes[i].level >= 0)
			cg->level_start[cg->nodes[i].level + 1]++;
	for (i = 0; i < (uint32_t)cg->depth + 1; i++)
		cg->level_start[i + 1] += cg->level_start[i];
	{
		uint32_t *pos = xmalloc(((size_t)cg->depth + 2) * sizeof(*pos));
		memcpy(pos, cg->level_start, ((size_t)cg->depth + 2) * sizeof(*pos));
		for (i = 0; i < n; i++)
			if (cg->nodes[i].level >= 0)
				cg->level_nodes[pos[cg->nodes[i].level]++] = i;
		free(pos);
	}
	free(queue);
	free(ncallers);
	free(nseen);
	free(seen_max);
	free(done);
	free(heap);
	free(rank);
	free(order);
}

/* Strongly connected components (iterative Tarjan), recursion flags, and
 * per component the set of nodes it reaches with its own members
 * (components complete in reverse topological order).  */
static void find_components(struct callgraph *cg)
{
	uint32_t n = cg->nnodes, i, nscc = 0, idx = 0, sp = 0, top = 0;
	uint32_t *index, *low, *stack, *call, *iter;
	uint8_t *on;

	cg->scc = xmalloc((n + 1) * sizeof(*cg->scc));
	index = xmalloc((n + 1) * sizeof(*index));
	low = xmalloc((n + 1) * sizeof(*low));
	stack = xmalloc((n + 1) * sizeof(*stack));
	call = xmalloc((n + 1) * sizeof(*call));
	iter = xmalloc((n + 1) * sizeof(*iter));
	on = xcalloc(n + 1, 1);
	cg->nwords = (n + 63) / 64;
	/* one bit per node per component: 22 MB for CPython's 13,000 nodes;
	 * past 512 MB, reachability is walked on demand instead */
	cg->reach_bits = (uint64_t)n * cg->nwords * 8 <= (512u << 20)
				 ? xmalloc(((size_t)n + 1) * cg->nwords * sizeof(uint64_t))
				 : NULL;
	for (i = 0; i < n; i++)
		index[i] = UINT32_MAX;
	for (i = 0; i < n; i++) {
		if (index[i] != UINT32_MAX)
			continue;
		call[top] = i;
		iter[top++] = cg->out_start[i];
		index[i] = low[i] = idx++;
		stack[sp++] = i;
		on[i] = 1;
		while (top) {
			uint32_t x = call[top - 1];
			if (iter[top - 1] < cg->out_start[x + 1]) {
				uint32_t y = cg->edges[iter[top - 1]++].to;
				if (index[y] == UINT32_MAX) {
					index[y] = low[y] = idx++;
					stack[sp++] = y;
					on[y] = 1;
					call[top] = y;
					iter[top++] = cg->out_start[y];
				} else if (on[y] && index[y] < low[x]) {
					low[x] = index[y];
				}
				continue;
			}
			top--;
			if (top && low[x] < low[call[top - 1]])
				low[call[top - 1]] = low[x];
			if (low[x] == index[x]) {
				/* x's component is complete: every component it
				 * calls into already has its bits */
				uint64_t *bits;
				uint32_t first = sp, m, k, size;
				do
					first--;
				while (stack[first] != x);
				size = sp - first;
				bits = cg->reach_bits ? cg->reach_bits + (size_t)nscc * cg->nwords
						      : NULL;
				if (bits)
					memset(bits, 0, cg->nwords * sizeof(uint64_t));
				for (m = first; m < sp; m++) {
					uint32_t v = stack[m];
					on[v] = 0;
					cg->scc[v] = nscc;
					if (bits)
						bits[v / 64] |= 1ULL << (v % 64);
				}
				for (m = first; m < sp; m++) {
					uint32_t v = stack[m];
					for (k = cg->out_start[v]; k < cg->out_start[v + 1]; k++) {
						uint32_t y = cg->edges[k].to, w;
						const uint64_t *ob;
						if (y == v)
							cg->nodes[v].recursive = 1;
						if (cg->scc[y] == nscc || !bits)
							continue;
						ob = cg->reach_bits + (size_t)cg->scc[y] * cg->nwords;
						for (w = 0; w < cg->nwords; w++)
							bits[w] |= ob[w];
					}
					if (size > 1)
						cg->nodes[v].recursive = 1;
				}
				sp = first;
				nscc++;
			}
		}
	}
	for (i = 0; i < n && cg->reach_bits; i++) {
		const uint64_t *bits = cg->reach_bits + (size_t)cg->scc[i] * cg->nwords;
		uint32_t w, c = 0;
		for (w = 0; w < cg->nwords; w++)
			c += (uint32_t)__builtin_popcountll(bits[w]);
		cg->nodes[i].reach = c - (cg->nodes[i].recursive ? 0 : 1);
	}
	free(index);
	free(low);
	free(stack);
	free(call);
	free(iter);
	free(on);
}

static void clear_analysis(struct callgraph *cg)
{
	uint32_t i;

	free(cg->out_start);
	free(cg->in_start);
	free(cg->in_edges);
	free(cg->level_start);
	free(cg->level_nodes);
	free(cg->leaves);
	free(cg->scc);
	free(cg->reach_bits);
	cg->out_start = cg->in_start = cg->in_edges = cg->level_start = cg->level_nodes =
		cg->leaves = cg->scc = NULL;
	cg->reach_bits = NULL;
	cg->nleaves = cg->nreachable = 0;
	for (i = 0; i < cg->nnodes; i++) {
		cg->nodes[i].reachable = cg->nodes[i].leaf = cg->nodes[i].recursive = 0;
		cg->nodes[i].reach = 0;
	}
}

void callgraph_analyse(struct callgraph *cg)
{
	uint32_t i;

	clear_analysis(cg);
	build_adjacency(cg);
	find_reachable(cg);
	estimate_levels(cg);
	find_components(cg);
	cg->leaves = xmalloc((cg->nnodes + 1) * sizeof(*cg->leaves));
	for (i = 0; i < cg->nnodes; i++) {
		struct cg_node *n = &cg->nodes[i];
		unsigned cx = cfg_complexity_of_depth(n->loop_depth);
		n->leaf = cg->out_start[i] == cg->out_start[i + 1];
		if (n->recursive && cx < CFG_LINEAR)
			cx = CFG_LINEAR;
		n->complexity = (uint8_t)cx;
		if (n->leaf && n->reachable)
			cg->leaves[cg->nleaves++] = i;
	}
}

/* --- queries ------------------------------------------------------------- */

int callgraph_find(const struct callgraph *cg, const char *name)
{
	const struct func *f = cg->target ? target_find_func(cg->target, name) : NULL;
	uint32_t i;

	if (f)
		return (int)(f - cg->target->funcs);
	for (i = cg->target ? cg->nfuncs : 0; i < cg->nnodes; i++)
		if (!strcmp(cg->nodes[i].name, name))
			return (int)i;
	return -1;
}

uint32_t callgraph_node_of(const struct callgraph *cg, const struct func *f)
{
	return (uint32_t)(f - cg->target->funcs);
}

const struct cg_edge *callgraph_callees(const struct callgraph *cg, uint32_t i, size_t *n)
{
	*n = cg->out_start[i + 1] - cg->out_start[i];
	return cg->edges + cg->out_start[i];
}

const uint32_t *callgraph_callers(const struct callgraph *cg, uint32_t i, size_t *n)
{
	*n = cg->in_start[i + 1] - cg->in_start[i];
	return cg->in_edges + cg->in_start[i];
}

const uint32_t *callgraph_level(const struct callgraph *cg, int l, size_t *n)
{
	if (l < 0 || l > cg->depth) {
		*n = 0;
		return NULL;
	}
	*n = cg->level_start[l + 1] - cg->level_start[l];
	return cg->level_nodes + cg->level_start[l];
}

/* Without the bit sets (huge graphs): a walk from a.  */
static int walk_reaches(const struct callgraph *cg, uint32_t a, uint32_t b)
{
	uint32_t *queue = xmalloc((cg->nnodes + 1) * sizeof(*queue)), head = 0, tail = 0, k;
	uint8_t *seen = xcalloc(cg->nnodes + 1, 1);
	int found = 0;

	queue[tail++] = a;
	while (head < tail && !found) {
		uint32_t x = queue[head++];
		for (k = cg->out_start[x]; k < cg->out_start[x + 1] && !found; k++) {
			uint32_t y = cg->edges[k].to;
			found = y == b;
			if (!seen[y]) {
				seen[y] = 1;
				queue[tail++] = y;
			}
		}
	}
	free(queue);
	free(seen);
	return found;
}

int callgraph_reaches(const struct callgraph *cg, uint32_t a, uint32_t b)
{
	const uint64_t *bits;

	if (a == b && !cg->nodes[a].recursive)
		return 0;
	if (cg->scc[a] == cg->scc[b] && a != b)
		return 1;
	if (!cg->reach_bits)
		return walk_reaches(cg, a, b);
	bits = cg->reach_bits + (size_t)cg->scc[a] * cg->nwords;
	return (bits[b / 64] >> (b % 64)) & 1;
}

size_t callgraph_reachable(const struct callgraph *cg, uint32_t a, uint32_t **out)
{
	uint32_t i;
	size_t k = 0;

	*out = xmalloc((cg->nnodes + 1) * sizeof(**out));
	for (i = 0; i < cg->nnodes; i++)
		if (callgraph_reaches(cg, a, i))
			(*out)[k++] = i;
	return k;
}

const struct cfg_block *callgraph_blocks(const struct callgraph *cg, uint32_t i, size_t *n)
{
	*n = cg->nodes[i].nblocks;
	return cg->blocks ? cg->blocks + cg->nodes[i].first_block : NULL;
}

