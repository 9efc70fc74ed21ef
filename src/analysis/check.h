/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The degradation check: the profiles of a baseline revision against those
 * of a target revision, per job and per calling context.
 *
 * The runs of a job are the samples.  Profiles of one collector, command,
 * arguments, workload (and machine, unless any_machine) form a job; each
 * profile is one run.  Per run and per calling context (the path of callers
 * down to the function, as folded stacks have it) the median call time is
 * taken, self time and inclusive time apart; the runs' medians of the two
 * sides are then compared, so that noise which moves a whole run (a busy
 * core, a frequency change) counts once per run, not once per call.
 *
 * Methods (enum check_method):
 *   CHECK_RUNS         the ratio of the geometric means of the run medians,
 *                      target / baseline, with its confidence interval from
 *                      Welch's t on their logarithms (GSL's t quantiles);
 *                      a degradation when the interval lies above 1 and the
 *                      ratio is at least 1 + threshold.  Needs 2 runs a side.
 *   CHECK_MANN_WHITNEY asv's: the Mann-Whitney U test over the run medians
 *                      (exact for small samples), the ratio of their medians.
 *   CHECK_MODEL_ORDER  Perun's best-model-order-equality, on the models
 *                      postprocessby regression-analysis fitted: per
 *                      function, the form with the best r^2 over each
 *                      side's profiles; a degradation when the target's
 *                      grows faster (constant < logarithmic < linear <
 *                      quadratic < power < exponential).  Per function, not
 *                      per context; needs models on both sides.
 * The first two say "undecided" when the data cannot decide: too few runs,
 * or a change past the threshold that the runs' spread does not support.
 *
 * No I/O besides pr_error()/pr_warn(); pure functions of the profiles.  */
#ifndef PERUN_ANALYSIS_CHECK_H
#define PERUN_ANALYSIS_CHECK_H

#include <stddef.h>

struct profile;

enum check_method { CHECK_RUNS, CHECK_MANN_WHITNEY, CHECK_MODEL_ORDER };

enum check_verdict {
	CHECK_NO_CHANGE,
	CHECK_DEGRADATION,
	CHECK_OPTIMIZATION,
	CHECK_UNDECIDED,
	CHECK_NEW,     /* calls only in the target */
	CHECK_REMOVED, /* calls only in the baseline */
};

enum check_metric { CHECK_SELF, CHECK_INCLUSIVE };

/* A threshold for the functions whose name (or calling context) the
 * regular expression (PCRE2) matches; where several match, the largest
 * counts (asv's regressions_thresholds).  */
struct check_threshold {
	char *regex;
	double threshold;
};

struct check_opts {
	enum check_method method;
	double threshold;  /* relative change that counts; default 0.1 */
	double confidence; /* of the interval / the test; default 0.99 */
	const struct check_threshold *thresholds;
	size_t nthresholds;
	int any_machine; /* pair profiles whatever machine they ran on */
	int any_job;	 /* one job of every profile, whatever its command (two files) */
};

/* One comparison: one calling context, one metric.  */
struct check_finding {
	char *context;	      /* "main;slowpart;spin" (';' inside a name becomes '_') */
	const char *function; /* the last frame of context (points into it) */
	enum check_metric metric;
	enum check_verdict verdict;
	size_t nbase, ntarget;	  /* runs with calls of the context */
	double base, target;	  /* per-call time of a typical run (ns) */
	double ratio;		  /* target / base */
	double ci_low, ci_high;	  /* its interval at the confidence asked (NAN: none) */
	double p;		  /* two-sided p-value of "no change" (NAN: none) */
	double effect;		  /* standardised effect: Hedges' g of the log run medians,
				     or Mann-Whitney's U / (n m) (NAN: none) */
	double threshold;	  /* the one that applied */
	double calls_base, calls_target; /* mean calls per run */
	const char *why;	  /* for CHECK_UNDECIDED: the reason (static text) */
	char *cause;		  /* an inclusive degradation's degraded callee context, or NULL */
	const char *base_model, *target_model; /* CHECK_MODEL_ORDER: the best forms */
};

/* The comparison of one job.  Findings sorted: degradations, optimizations,
 * undecided, the rest; each group by |log ratio|, largest first.  */
struct check_job {
	char *collector, *cmd, *args, *workload;
	char *machine; /* the machine's description ("" when the profiles have none) */
	char **base_labels, **target_labels;
	size_t nbase, ntarget;
	struct check_finding *f;
	size_t nf;
	size_t degradations, optimizations, undecided;
	int binned; /* some call times come from --aggregate histograms */
	/* what each side's incomplete profiles lost (profile_incomplete's lines,
	 * after "  baseline: " or "  target: "), or "" */
	char *incomplete;
};

struct check_result {
	struct check_job *jobs;
	size_t njobs;
	size_t degradations, optimizations, undecided;
	size_t skipped_machine; /* baseline profiles of the target's jobs left out: other machine */
	size_t unpaired;	/* target profiles without a baseline of their job */
};

void check_opts_init(struct check_opts *o);

/* Compares the baseline runs with the target runs (labels name each profile
 * in the output, e.g. "abc1234:0@i").  0 with *res filled (no job paired is
 * not an error: res->njobs is 0); -1 after pr_error() (a bad regular
 * expression).  */
int check_compare(const struct profile *base, const char *const *base_labels, size_t nbase,
		  const struct profile *target, const char *const *target_labels, size_t ntarget,
		  const struct check_opts *o, struct check_result *res);
void check_result_release(struct check_result *res);

/* Whether two profiles are runs of the same job: collector, command,
 * arguments, workload and postprocessors (the machine is machine_same()'s,
 * profile/machine.h).  */
int check_same_job(const struct profile *a, const struct profile *b);

const char *check_verdict_name(enum check_verdict v);
const char *check_metric_name(enum check_metric m);
/* The method named s ("runs", "mann-whitney", "best-model-order-equality"),
 * or -1.  */
int check_method_parse(const char *s);
const char *check_method_name(enum check_method m);

#endif
