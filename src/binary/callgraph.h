/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The call-graph resource (the thesis' CGR, ch. 7.1.1) of one binary: who
 * calls whom, from the binary itself, and each function's control-flow
 * summary.
 *
 * Edges are direct calls: DWARF call-site entries (DW_TAG_call_site,
 * DW_TAG_GNU_call_site) and the call and tail-jump instructions capstone
 * decodes, merged (where both describe a site, the instruction's target is
 * the callee: DWARF names clones and same-named statics ambiguously); calls
 * into the PLT or through a GOT slot are edges to an import node named
 * after the imported symbol.  Calls through a function
 * pointer are no edges: they are counted per function (indirect_calls).
 *
 * Rooted at main (else the function at the entry point): what is reachable,
 * each reachable node's level by Algorithm 1 of the thesis (a longest-path
 * estimate, cycles broken at the lowest candidate), the leaves (reachable
 * nodes without callees), the maximal depth, and for every node the set of
 * nodes it reaches.
 *
 * The extraction is cached per build-id and file identity beside the
 * target analysis cache (targets/), and rebuilt when missing, stale or
 * corrupt.  */
#ifndef PERUN_CALLGRAPH_H
#define PERUN_CALLGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "binary/cfg.h"

struct target;
struct func;

/* Edge sources and kinds.  */
enum {
	CG_E_DWARF = 1,		/* a DWARF call-site entry names it */
	CG_E_INSN = 2,		/* a call or jump instruction makes it */
	CG_E_TAIL = 4,		/* (also) a tail call: a jump, not a call */
	CG_E_PLT = 8,		/* through the PLT or a GOT slot */
};

struct cg_edge {
	uint32_t from, to;	/* node indices */
	uint32_t sites;		/* call sites (instructions, or DWARF entries when none) */
	uint8_t flags;		/* CG_E_* */
	uint8_t loop_depth;	/* deepest loop nesting among its call sites in the caller */
};

struct cg_node {
	const char *name;	/* symbol name; an import's name without version */
	uint64_t addr, size;	/* 0 for imports */
	const struct func *func;	/* the target's function, NULL for imports */
	unsigned import : 1;	/* a PLT/GOT import: code outside the binary */
	unsigned reachable : 1;	/* from the root */
	unsigned leaf : 1;	/* no callees */
	unsigned recursive : 1;	/* on a cycle of the call graph */
	int level;		/* Algorithm 1 estimate; -1 when not reachable */
	uint32_t reach;		/* how many nodes it reaches (itself only through a
				 * cycle); 0 past ~65,000 nodes, where no bit sets are
				 * kept and callgraph_reaches walks instead */
	/* the control-flow summary (0 for imports) */
	uint32_t first_block, nblocks;	/* in callgraph.blocks */
	uint32_t ninsns;
	uint32_t nloops;
	uint32_t calls_in_loops;
	uint32_t indirect_calls;	/* calls through a function pointer */
	uint32_t unresolved_calls;	/* direct calls to no known function start */
	uint8_t loop_depth;
	uint8_t complexity;	/* enum cfg_complexity: loop depth, at least linear if recursive */
};

struct callgraph {
	const struct target *target;
	struct cg_node *nodes;	/* the target's functions in order, then imports by name */
	uint32_t nnodes, nfuncs;	/* nfuncs: how many of them are the target's */
	struct cg_edge *edges;	/* by (from, to), one per pair */
	uint32_t nedges;
	uint32_t *out_start;	/* node i's callees: edges[out_start[i] .. out_start[i+1]) */
	uint32_t *in_start, *in_edges;	/* node i's callers: edges[in_edges[in_start[i] ...]] */
	struct cfg_block *blocks;	/* every function's blocks, in node order */
	uint32_t nblocks;
	/* successors: block b's are succ[b.succ .. b.succ + b.nsucc), each an
	 * index into its own function's blocks (callgraph_blocks) */
	uint32_t *succ;
	uint32_t nsucc;
	int root;		/* node index, -1 when there is none (a library) */
	int depth;		/* maximal level; -1 without root */
	uint32_t *level_start, *level_nodes;	/* level l: level_nodes[level_start[l] ..] */
	uint32_t *leaves;	/* reachable nodes without callees, by index */
	uint32_t nleaves, nreachable;
	/* extraction counts */
	uint32_t dwarf_sites;	/* call-site entries that gave an edge */
	uint32_t insn_sites;	/* call/jump instructions that gave an edge */
	uint32_t dwarf_disagree;	/* call sites whose DWARF origin, found by name, is
					 * not the instruction's target (the latter wins) */
	unsigned has_dwarf : 1;	/* DWARF was read (in the binary or a debug file) */
	unsigned from_cache : 1;
	/* private */
	uint32_t *scc;		/* node -> component */
	uint64_t *reach_bits;	/* per component, nwords each */
	uint32_t nwords;
	char *strings;
};

/* Flags for callgraph_load.  */
enum {
	CG_NO_DWARF = 1,	/* ignore call-site entries (instructions only) */
};

/* Builds (or loads from cache_dir/targets, when cache_dir is given) the call
 * graph of t, which must stay loaded while cg is used.  0, or -1 (reported).  */
int callgraph_load(struct callgraph *cg, const struct target *t, const char *cache_dir,
		   unsigned flags);
void callgraph_release(struct callgraph *cg);

/* A call graph from names and edges alone (no target, no blocks): for
 * tests, and for methods that build a reshaped graph.  names are borrowed
 * and must outlive cg; edges may repeat and come in any order (repeats add
 * their sites).  root is a node index or -1.  The graph is analysed.  */
void callgraph_from_edges(struct callgraph *cg, const char *const *names, uint32_t n,
			  const struct cg_edge *edges, uint32_t nedges, int root);
/* (Re)computes the rooted analysis from nodes, edges (sorted by caller
 * then callee, one per pair) and root: adjacency, reachable, levels,
 * depth, components and reach, leaves, recursive, complexity.  */
void callgraph_analyse(struct callgraph *cg);

/* The node of a function or import by name (as target_find_func finds
 * names), or -1.  */
int callgraph_find(const struct callgraph *cg, const char *name);
/* The node of the target function f (one of cg->target->funcs).  */
uint32_t callgraph_node_of(const struct callgraph *cg, const struct func *f);

/* Node i's outgoing edges, sorted by callee.  */
const struct cg_edge *callgraph_callees(const struct callgraph *cg, uint32_t i, size_t *n);
/* Node i's incoming edges (indices into cg->edges), sorted by caller.  */
const uint32_t *callgraph_callers(const struct callgraph *cg, uint32_t i, size_t *n);
/* Nodes at level l (0 .. depth), by index.  */
const uint32_t *callgraph_level(const struct callgraph *cg, int l, size_t *n);
/* True when a path of one or more calls leads from node a to node b.  */
int callgraph_reaches(const struct callgraph *cg, uint32_t a, uint32_t b);
/* Every node a reaches, ascending, into a new array (caller frees); the count.  */
size_t callgraph_reachable(const struct callgraph *cg, uint32_t a, uint32_t **out);
/* Node i's basic blocks (successors index within them; the array of succ
 * starts at cg->succ).  */
const struct cfg_block *callgraph_blocks(const struct callgraph *cg, uint32_t i, size_t *n);

/* Rebuilds node i's full CFG (with its calls) from the binary, for display
 * or comparison; 0, or -1 (reported).  */
int callgraph_function_cfg(const struct callgraph *cg, uint32_t i, struct cfg *out);
/* Calls fn for each instruction of node i (from the binary).  */
int callgraph_function_insns(const struct callgraph *cg, uint32_t i,
			     int (*fn)(const struct cfg_insn *insn, void *arg), void *arg);

#endif
