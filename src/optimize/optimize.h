/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The optimization layer (thesis ch. 6.2, 7): a registry of methods, each
 * hooking phases of the collect pipeline, its requirements and the
 * parameters of Table A.4; pipelines (7.3) as lists of methods; and the
 * selection a collect runs with (-op, -on, -off, -oa of Table A.2).
 *
 * A method whose requirement is missing switches off with a one-line notice,
 * never an error.  No I/O here but that notice.  */
#ifndef PERUN_OPTIMIZE_H
#define PERUN_OPTIMIZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;

/* The methods of the thesis (7.2), by their Perun names.  */
enum opt_method {
	OPT_DIFF_TRACING,	/* diff-tracing */
	OPT_CG_SHAPING,		/* cg-shaping */
	OPT_BASELINE_STATIC,	/* baseline-static */
	OPT_BASELINE_DYNAMIC,	/* baseline-dynamic */
	OPT_DYNAMIC_SAMPLING,	/* dynamic-sampling */
	OPT_TIMED_SAMPLING,	/* timed-sampling */
	OPT_DYNAMIC_PROBING,	/* dynamic-probing */
	OPT_NMETHODS,
};

/* Phases of the collect pipeline a method hooks.  */
#define OPT_PHASE_PRE 1u	/* pre-optimize: rewrites the probe plan */
#define OPT_PHASE_RUN 2u	/* run-optimize: code in the generated script */
#define OPT_PHASE_POST 4u	/* post-optimize: reads the run, marks the profile */

/* What a method needs; what a collect has is the same bits.  */
#define OPT_REQ_CALLGRAPH 1u	/* the call-graph resource of the binary */
#define OPT_REQ_STATS 2u	/* dynamic stats of an earlier collect */
#define OPT_REQ_VCS 4u		/* a git history with a previous version */
#define OPT_REQ_PER_CALL 8u	/* a per-call script (not --aggregate) */
#define OPT_REQ_SOURCES 16u	/* the target's source files */

enum opt_param_type { OPT_T_BOOL, OPT_T_INT, OPT_T_REAL, OPT_T_ENUM, OPT_T_PATHS };

/* The choices of the enum parameters, in the order their rows list them.  */
enum opt_cg_mode { OPT_CG_MATCH, OPT_CG_SOFT, OPT_CG_STRICT, OPT_CG_PRUNE };
enum opt_cfg_mode { OPT_CFG_SOFT, OPT_CFG_SEMISTRICT, OPT_CFG_STRICT };
enum opt_threshold_mode { OPT_THRESHOLD_SOFT, OPT_THRESHOLD_STRICT };

/* The parameters of Table A.4 a collect runs with, typed: -oa, else what
 * the pipeline predicts, else the default (filled by opt_fill()).  A value
 * Table A.4 predicts from the call graph or the plan is -1 unless -oa gave
 * it; under threshold-mode strict the thresholds not given are strict's.  */
struct opt_values {
	int diff_keep_leaf, diff_inspect_all;
	enum opt_cfg_mode diff_cfg_mode;
	const char *diff_baseline;		/* "" for none */
	const char *diff_version;
	const char *source_files, *source_dirs;
	int static_complexity;			/* enum cfg_complexity (target/cfg.h) */
	long long static_keep_top;		/* -1: from the call graph's depth */
	enum opt_cg_mode cg_mode;
	long long cg_keep_top;			/* -1: from the call graph's depth */
	long long cg_trim_min_functions;	/* -1: from the number of probes */
	int cg_trim_keep_leaf;			/* -1: from the number of probes */
	long long cg_prune_chain_length;	/* -1: from the call graph's depth */
	double dyn_sample_step;
	long long dyn_sample_threshold;		/* strict: 1000 */
	long long probing_threshold;		/* probing-reattach: 20000 */
	int probing_reattach;
	long long probing_reattach_ms;
	double timed_sample_freq;
	long long dyn_base_soft_threshold;	/* strict: 1000 */
	long long dyn_base_hard_threshold;	/* strict: 100000 */
	enum opt_threshold_mode threshold_mode;
};

/* A parameter of Table A.4.  */
struct opt_param {
	const char *name;
	enum opt_param_type type;
	const char *def;	/* its default, as -oa would give it */
	const char *choices;	/* OPT_T_ENUM: "a|b|c" */
	double min, max;	/* OPT_T_INT, OPT_T_REAL: the range */
	unsigned methods;	/* bit (1 << enum opt_method) per method that reads it */
	size_t field;		/* where struct opt_values holds it (offsetof) */
	int predicted;		/* -1 in struct opt_values unless -oa gave it */
	const char *strict;	/* its value under threshold-mode strict unless -oa gave
				   it, or NULL */
};

struct opt_method_def {
	const char *name;
	unsigned phases;	/* OPT_PHASE_* */
	unsigned requires;	/* OPT_REQ_* */
	int implemented;	/* 0: registered, switched off with a notice even when
				 * its requirements are met */
};

extern const struct opt_method_def opt_methods[OPT_NMETHODS];
extern const struct opt_param opt_params[];
extern const size_t opt_nparams;

/* The most -on/-off a command line may give.  */
#define OPT_MAX_TOGGLES 64

/* What a collect runs with.  */
struct opt_selection {
	const char *pipeline;	/* -op basic|advanced|full, or NULL */
	/* -on (1) and -off (0), in the order given: applied after the pipeline */
	struct {
		enum opt_method m;
		int on;
	} toggles[OPT_MAX_TOGGLES];
	size_t ntoggles;
	const char **values;	/* -oa, per opt_params[] entry, or NULL */
	int cache_off;		/* --optimization-cache-off */
	int reset_cache;	/* --optimization-reset-cache */
	unsigned char on[OPT_NMETHODS];		/* asked for (pipeline, -on, -off) */
	unsigned char active[OPT_NMETHODS];	/* on, and its requirements met */
	unsigned missing[OPT_NMETHODS];		/* on, but these requirements missing */
	unsigned char unimplemented[OPT_NMETHODS];	/* on, met, but not written yet */
	const char *off_why[OPT_NMETHODS];	/* switched off by the method itself: why */
	struct opt_values v;	/* the parameters, typed: opt_fill() after the last -oa
				   and -op */
};

void opt_selection_init(struct opt_selection *s);
void opt_selection_release(struct opt_selection *s);

/* The method named name, or -1.  */
int opt_method_find(const char *name);
/* The index of parameter name in opt_params, or -1.  */
int opt_param_find(const char *name);
/* True when name is a pipeline.  */
int opt_pipeline_valid(const char *name);
/* -oa name value: -1 with a message naming the fix when the name is not a
 * parameter or the value does not fit it.  */
int opt_set(struct opt_selection *s, const char *name, const char *value);
/* -on or -off: -1 with a message when name is not a method.  */
int opt_toggle(struct opt_selection *s, const char *name, int on);

/* Fills on[] from the pipeline and the toggles, then active[]: a method on
 * whose requirements are not all in have, or that is not implemented yet, is
 * switched off with one line on notice (when not NULL) saying why.  Returns
 * how many are active.  */
int opt_resolve(struct opt_selection *s, unsigned have, FILE *notice);

/* Fills s->v from -oa, the pipeline and the defaults (the values were
 * checked by opt_set()); opt_selection_init() fills the defaults.  */
void opt_fill(struct opt_selection *s);
/* "match", "soft", "strict" or "prune".  */
const char *opt_cg_mode_name(enum opt_cg_mode m);

/* {"pipeline": P, "methods": [{"name", "phases", "params": {...}}...],
 * "switched_off": {"NAME": "no call graph"...}} for collector_info: what
 * ran, with which parameters, and what was asked for but could not run.  */
struct json_object *opt_json(const struct opt_selection *s);

/* What a requirement bit is called in messages ("call graph").  */
const char *opt_requirement_name(unsigned bit);

#endif
