/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pre-optimize methods of the thesis that work on the call graph and the
 * dynamic stats (7.2.1 Static Baseline, 7.2.2 Dynamic Baseline, 7.2.3 Call
 * Graph Shaping, 7.2.5 Dynamic Sampling), as pure functions over node sets.
 *
 * cand[i] is nonzero for the call-graph nodes the probe plan holds (the
 * thesis' measured or probed functions); a method marks in drop[] (nnodes
 * entries, set by the caller to 0) the candidates it removes and returns how
 * many it newly marked.  Nothing here reads files or prints.  */
#ifndef PERUN_OPTIMIZE_METHODS_H
#define PERUN_OPTIMIZE_METHODS_H

#include <stddef.h>
#include <stdint.h>

struct callgraph;
struct stats;

/* --- Call Graph Shaping (cg-shaping) ---------------------------------------- */

/* Matching: candidates the root cannot reach.  */
size_t cgs_match(const struct callgraph *cg, const unsigned char *cand, unsigned char *drop);
/* Trimming (Algorithm 3): the reachable candidates of levels 0 .. keep_top
 * are kept (their leaves trimmed unless keep_leaf); below, whole levels are
 * trimmed, except that while fewer than min_functions are kept, the
 * candidates of the next level that reach the most nodes are kept to fill
 * up (ties by node index).  */
size_t cgs_trim(const struct callgraph *cg, const unsigned char *cand, int keep_top,
		size_t min_functions, int keep_leaf, unsigned char *drop);
/* The bottom-level candidates (5.1, M_HC): reachable candidates f from which
 * no other candidate of a higher level is reachable.  bot: nnodes entries.
 * Returns how many.  */
size_t cgs_bottom(const struct callgraph *cg, const unsigned char *cand, unsigned char *bot);
/* Pruning (Algorithm 4): every bottom candidate at level keep_top or below,
 * and the candidates that reach one in at most chain_length calls through
 * candidates whose level is within chain_length / 2 of the bottom one's and
 * at least keep_top.  */
size_t cgs_prune(const struct callgraph *cg, const unsigned char *cand, int chain_length,
		 int keep_top, unsigned char *drop);

/* --- Static Baseline (baseline-static) --------------------------------------- */

/* Candidates whose CFG complexity class (enum cfg_complexity) is at most
 * max_class, except those on the top keep_top levels (level < keep_top).
 * Unreachable candidates have no level and are not protected.  */
size_t baseline_static(const struct callgraph *cg, const unsigned char *cand, int max_class,
		       int keep_top, unsigned char *drop);

/* --- Dynamic Baseline (baseline-dynamic) ------------------------------------- */

/* Why Algorithm 2 removes a function.  */
enum dynbase_filter {
	DYNBASE_KEEP,
	DYNBASE_CALL_LIMIT,	/* more calls than the hard threshold */
	DYNBASE_CONSTANT,	/* past the soft threshold and constant-like */
	DYNBASE_WRAPPED,	/* every caller only wraps it */
};

struct dynbase_params {
	uint64_t soft_threshold, hard_threshold;
	double median_resolution;	/* ns: medians below it are not measurable */
	double constant_median_ratio;	/* IQR below median * this: constant */
	double wrapper_ratio;		/* func.median > wrapper.median * this: wrapped */
};

/* The defaults of the constants Table A.4 does not list.  */
#define DYNBASE_MEDIAN_RESOLUTION 1000.0
#define DYNBASE_CONSTANT_MEDIAN_RATIO 0.05
#define DYNBASE_WRAPPER_RATIO 0.8

/* Algorithm 2 for the function name (node: its call-graph node, or -1; cg
 * may be NULL, then no wrapper filter): the first filter that removes it,
 * or DYNBASE_KEEP (also when st has no stats for it).  */
enum dynbase_filter dynbase_check(const struct callgraph *cg, const struct stats *st,
				  const char *name, int node, const struct dynbase_params *p);
/* "call-limit", "constant", "wrapped".  */
const char *dynbase_filter_name(enum dynbase_filter f);

/* --- Dynamic Sampling (dynamic-sampling) ------------------------------------- */

/* The largest sampling: the script counts calls in 64-bit integers, the
 * plan keeps an unsigned.  */
#define DYNSAMPLE_MAX 1000000000u
/* threshold_eps_ratio: calls within threshold +- threshold * this are on
 * target, their sampling stays.  */
#define DYNSAMPLE_EPS_RATIO 0.1

/* The complexity coefficient of the initial phase: constant 2, linear 1.5,
 * else 1.  */
double dynsample_coefficient(int complexity);
/* The initial phase: round(step^level) * coefficient, normalized into
 * 1 .. DYNSAMPLE_MAX (a level below 0 counts as 0).  */
unsigned dynsample_initial(int level, int complexity, double step);
/* The refinement phase: sample_old when sampled_count is within the
 * threshold's epsilon, else round(sample_old / (threshold / sampled_count)),
 * normalized into 1 .. DYNSAMPLE_MAX.  */
unsigned dynsample_refine(uint64_t sample_old, uint64_t sampled_count, uint64_t threshold);

#endif
