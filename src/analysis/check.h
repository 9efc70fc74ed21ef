/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The degradation check: the profiles of a baseline revision against those
 * of a target revision, per job and per calling context.
 *
 * The runs of a job are the samples.  Profiles of one collector, command,
 * arguments, workload (and machine, unless any_machine) form a job; each
 * profile is one run.  Per run and per calling context (the path of callers
 * down to the function, as folded stacks have it) one quantile of the call
 * times stands for the run (opts.statistic: p10 by default, as noise on a
 * shared machine only adds time), self time and inclusive time apart, with
 * the probes' cost taken out of every call when every run carries its
 * calibration; the runs' values of the two sides are then compared, so that
 * noise which moves a whole run (a busy core, a frequency change) counts
 * once per run, not once per call.
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
 *   CHECK_LINEAR_REGRESSION, CHECK_POLYNOMIAL_REGRESSION, CHECK_FAST_CHECK
 *                      Perun's three regression checks: per function, the
 *                      best parametric model and the linear model of each
 *                      side, sampled at 1000 points over the x both cover;
 *                      no change when the best models' b0 and b1 differ by
 *                      5 % or less, else the mean relative difference of
 *                      the curves decides: past the threshold a degradation
 *                      (or optimization), below it undecided (Perun's
 *                      "maybe").  They differ in how they name the shape of
 *                      the change (f->shape): a linear regression of the
 *                      linear models' difference, the lowest polynomial
 *                      degree that fits it, or the best model of the best
 *                      models' difference.
 *   CHECK_LOCAL_STATISTICS  Perun's local-statistics: the curves of the best
 *                      models (parametric, regressogram or moving average)
 *                      cut into windows of 5 % of their points; per window
 *                      the relative differences of eight statistics
 *                      (integral, mean, median, min, max, sum, quartiles);
 *                      their mean over the windows decides: 10 % or less no
 *                      change, up to the threshold undecided, past it a
 *                      change.  Models with r^2 below 0.15 are undecided.
 *   CHECK_EXCLUSIVE_TIME_OUTLIERS  Perun's: per function the total exclusive
 *                      time of a run (the mean over a side's runs), the
 *                      target's minus the baseline's; a delta that is an
 *                      outlier among all functions' deltas (modified z-score
 *                      past 3.5: severe; outside 1.5 IQR of the quartiles)
 *                      is a change, one past 2 standard deviations of the
 *                      others undecided, when the function's own time moved
 *                      by the threshold or more.  Needs no models.
 * The in-run control (runs and mann-whitney, unless opts.no_control): each
 * run's speed as a whole is estimated from its own functions
 * (analysis/runscale.h: the median over contexts of their self times'
 * shift against the other runs) and taken out of every value of the run
 * before the sides are compared, so that a host that ran one run fast and
 * the next slow moves nothing, while a function that moved against the
 * rest of its run has changed.  With 2 or more runs a side the method's
 * statistic compares the normalised values; with one run on a side the
 * spread of every control context's shift (1.4826 MAD) is the noise, and a
 * change decides when its interval at the confidence asked lies past 1
 * and its ratio past the threshold.  A change the run-level statistic sees
 * but the control does not (every function moved together) is undecided:
 * the host or a change everywhere.  Even when the runs' speeds themselves
 * differ between the sides past the confidence asked (host_moved), which
 * says the latter when the sides' runs took turns: a host of two speeds
 * puts 3 runs of one side on the slow one and 3 of the other on the fast
 * one once in 32 comparisons.  Fewer than RUNSCALE_MIN_CONTROL
 * contexts with self times above the probes' cost in every run form no
 * control: the run-level statistic decides alone, and says so.
 * With several runs a side, the model methods take per function the form
 * with the best mean r^2 over the side's runs and the pointwise median of
 * the runs' curves of that form.
 * The first two say "undecided" when the data cannot decide: too few runs,
 * or a change past the threshold that the runs' spread does not support.
 *
 * No I/O besides pr_error()/pr_warn(); pure functions of the profiles.  */
#ifndef PERUN_ANALYSIS_CHECK_H
#define PERUN_ANALYSIS_CHECK_H

#include <stddef.h>

struct profile;

enum check_method {
	CHECK_RUNS,
	CHECK_MANN_WHITNEY,
	CHECK_MODEL_ORDER,
	CHECK_LINEAR_REGRESSION,
	CHECK_POLYNOMIAL_REGRESSION,
	CHECK_FAST_CHECK,
	CHECK_LOCAL_STATISTICS,
	CHECK_EXCLUSIVE_TIME_OUTLIERS,
};

enum check_verdict {
	CHECK_NO_CHANGE,
	CHECK_DEGRADATION,
	CHECK_OPTIMIZATION,
	CHECK_UNDECIDED,
	CHECK_NEW,     /* calls only in the target */
	CHECK_REMOVED, /* calls only in the baseline */
};

enum check_metric { CHECK_SELF, CHECK_INCLUSIVE };

/* How far a calibrated probe cost is seen to drift between runs on one
 * machine (the bpf runtime's flips between ~1.6 and ~2.0 us): a change
 * smaller than this share of the cost taken out of a call is not told
 * apart from the drift.  */
#define CHECK_PROBE_DRIFT 0.25

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
	double statistic;  /* the quantile of a run's calls that stands for the
			      run: 0.1 (default), 0.5 the median, 0 the fastest call */
	const struct check_threshold *thresholds;
	size_t nthresholds;
	int any_machine; /* pair profiles whatever machine they ran on */
	int any_job;	 /* one job of every profile, whatever its command (two files) */
	int no_control;	 /* runs, mann-whitney: the run-level statistic alone, no in-run control */
};

/* Which comparison gave a finding its verdict.  */
enum check_basis {
	CHECK_BY_RUNS,	  /* the method's statistic over the runs' own times */
	CHECK_BY_CONTROL, /* the same with each run's speed taken out (the in-run control) */
	CHECK_BY_MODELS,  /* the model methods and exclusive-time-outliers */
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
	double resolution;	  /* the smallest change in ns that counts: CHECK_PROBE_DRIFT
				     of the probes' cost taken out of a call (0: raw times) */
	double calls_base, calls_target; /* mean calls per run */
	const char *why;	  /* for CHECK_UNDECIDED: the reason (static text) */
	char *cause;		  /* an inclusive degradation's degraded callee context, or NULL */
	const char *base_model, *target_model; /* model methods: the best forms */
	const char *shape;	  /* the shape of the change the models show (Perun's change
				     type: "constant", "linear", ...), "severe" for an
				     exclusive-time outlier by modified z-score, or NULL */
	const char *rate_name;	  /* Perun's confidence: "r_square", "IQR multiple",
				     "stddev multiple", or NULL */
	double rate;		  /* its value */
	enum check_basis basis;	  /* what decided */
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
	int calibrated; /* the probes' cost was taken out of every run's calls
			   (every run carries its calibration, none is binned) */
	size_t control;	   /* contexts that formed the in-run control (0: none) */
	int control_raw;   /* calibrated runs, the control read from their self times
			      with the probes' cost in them (too few were above it) */
	double host_ratio; /* the target's runs' speed as a whole against the baseline's
			      (geometric means of the run scales; 1 without a control) */
	double control_sd; /* one run a side: the control's spread (log units), else NAN */
	size_t speed_groups; /* 2 runs a side or more: groups of runs of like speed
				(analysis/runscale.h, RUNSCALE_GROUP_GAP) the sides were
				compared within; 1 when the runs' speeds are alike */
	double pool_ss, pool_df; /* 2 runs a side or more: the control's own spread
				    (analysis/check.c, compare_control_cells()) */
	double apart_sd;   /* 2 runs a side or more: how far the control's own functions
			      moved apart between the sides once each run's speed was out
			      (log units: the median over them of the standard deviation
			      of the others' changes, each context's least noise of a
			      change; analysis/check.c, apart_sd()); NAN: none */
	size_t runs_weighed; /* 2 runs a side or more: runs that weighed less because
				their own functions disagreed (analysis/runscale.h,
				runscale_weights()) */
	int host_moved;	   /* 2 runs a side or more: the runs' speeds as a whole differ
			      between the sides past the confidence asked (a change
			      everywhere when the runs of the sides took turns) */
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

const char *check_verdict_name(enum check_verdict v);
const char *check_metric_name(enum check_metric m);
/* "runs", "in-run control" or "models".  */
const char *check_basis_name(enum check_basis b);
/* The method named s ("runs", "mann-whitney", "best-model-order-equality",
 * "linear-regression", "polynomial-regression", "fast-check",
 * "local-statistics", "exclusive-time-outliers"), or -1.  */
int check_method_parse(const char *s);
const char *check_method_name(enum check_method m);
/* The per-run statistic named s: "median", "min" or "pN" (0 < N < 100),
 * as the quantile *q; -1 for anything else.  */
int check_statistic_parse(const char *s, double *q);
/* "median", "fastest call" or "p10" for quantile q.  */
void check_statistic_name(double q, char *buf, size_t n);
/* The threshold a method uses when none is given: 0.1, or Perun's 0.25 for
 * the regression checks and local-statistics.  */
double check_method_threshold(enum check_method m);
/* Whether m compares the models postprocessby fitted (not the calls).  */
int check_method_models(enum check_method m);

#endif
