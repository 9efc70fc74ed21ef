/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Postprocessors: models of call time (amount) against a resource field
 * per function (seeds/003 ch. 3), added to a profile's models region with
 * the postprocessor appended to its postprocessors region (seeds/001), as
 * 'perun postprocessby' and the postprocessors of .perun/local.yml's job
 * matrix apply them.  No I/O besides pr_error().  */
#ifndef PERUN_ANALYSIS_POSTPROCESS_H
#define PERUN_ANALYSIS_POSTPROCESS_H

#include <stddef.h>

#include "analysis/models.h"

struct profile;

enum pp_method { PP_REGRESSION_ANALYSIS, PP_REGRESSOGRAM, PP_MOVING_AVERAGE };

struct pp_opts {
	enum pp_method method;
	const char *x;		      /* the independent variable (default call-order) */
	int models[MODEL_NKINDS];     /* regression-analysis: the forms (default all) */
	int nmodels;
	size_t bins;		      /* regressogram: 0 = the rule of regressogram_bins() */
	size_t window;		      /* moving average: 0 = moving_average_window() */
	int ma_kind;		      /* enum ma_kind */
	int right_aligned;
	double decay;		      /* EMA's; 0 = from the window */
};

/* "regression-analysis", "regressogram", "moving-average", or Perun's
 * "regression_analysis", "moving_average"; -1 for anything else.  */
int pp_method_parse(const char *s);
/* The name in perun's commands ("regression-analysis").  */
const char *pp_method_name(enum pp_method m);
/* The name a postprocessed profile carries, Perun's ("regression_analysis").  */
const char *pp_profile_name(enum pp_method m);
void pp_opts_init(struct pp_opts *o, enum pp_method m);

/* Sets one option from its name and value: the names of postprocessby's
 * options without "--" (x, models, bins, window, kind, decay,
 * right-aligned) or Perun's params (per_key, regression_models,
 * bucket_number, window_width, moving_method, decay, center, method,
 * of_key: amount, steps, statistic_function: mean, bucket_method,
 * min_periods: accepted where perun does the same).  models may repeat or
 * be comma-separated.  value points into storage that outlives o.  shown:
 * the option as its user wrote it ("--bins" on the command line, "bins" in
 * local.yml), for the message.  0, or -1 with err filled: the option and
 * what it takes, for the caller to say.  */
struct strbuf;

int pp_opts_set(struct pp_opts *o, const char *key, const char *value, const char *shown,
		struct strbuf *err);

/* Fits the models of o->method per function of p (into its first
 * snapshot's models) and appends the postprocessor with its params to
 * p's postprocessors.  0 with *nmodels and *nfuncs set; -1 after pr_error()
 * (what names p): no call has a numeric x, or memory ran out.  */
int postprocess_profile(struct profile *p, const struct pp_opts *o, const char *what,
			size_t *nmodels, size_t *nfuncs);

#endif
