/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Perun's check methods that compare the models postprocessby fitted
 * (best-model-order-equality, linear-regression, polynomial-regression,
 * fast-check, local-statistics) and exclusive-time-outliers: one job's
 * findings, for check_compare() (analysis/check.h).  No I/O.  */
#ifndef PERUN_ANALYSIS_CHECK_MODELS_H
#define PERUN_ANALYSIS_CHECK_MODELS_H

#include <stddef.h>

#include "analysis/check.h"

struct profile;

/* The threshold that applies to a function (regressions_thresholds).  */
typedef double (*check_threshold_fn)(void *ctx, const char *function);

/* Fills job->f with the findings of method o->method over the baseline
 * runs base[bi[0..nb)] and the target runs target[ti[0..nt)], then
 * check_job_finish(job).  0, or -1 after pr_error().  */
int check_models_job(const struct profile *base, const size_t *bi, size_t nb,
		     const struct profile *target, const size_t *ti, size_t nt,
		     const struct check_opts *o, check_threshold_fn thr, void *thr_ctx,
		     struct check_job *job);

#endif
