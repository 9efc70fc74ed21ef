/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What perun check compares: the two sides (the runs registered for a
 * minor version, or profile files), the baseline found among the target's
 * ancestors when none is named, and the per-function thresholds of
 * .perun/local.yml; then the comparison (analysis/check.h) with what makes
 * its result useless said as an error.  */
#ifndef PERUN_ANALYSIS_CHECK_INPUT_H
#define PERUN_ANALYSIS_CHECK_INPUT_H

#include <stddef.h>

#include "analysis/check.h"
#include "store/repo.h"

/* One side: the runs of a minor version, or profile files (one run each).  */
struct check_side {
	char sha[41];  /* the minor version; "" for files */
	char **labels; /* "abc1234:0@i", or the file's path */
	struct profile *p;
	size_t n;
};

void check_side_release(struct check_side *s);
/* What names the side in the output: its minor version, else its first
 * file.  */
const char *check_side_name(const struct check_side *s);

struct check_input {
	struct check_side base, target;
	struct check_threshold *thresholds; /* of local.yml; o->thresholds points here */
	size_t nthresholds;
	struct repo repo; /* opened when a revision or local.yml needed it */
	int have_repo;
};

void check_input_init(struct check_input *in);
void check_input_release(struct check_input *in);

/* Loads the target (target_arg; NULL: HEAD) and the baseline (base_arg;
 * NULL: the nearest ancestor of the target with runs of one of its jobs, on
 * this machine unless o->any_machine).  An argument is a profile file,
 * files separated by commas, or a revision.  Reads the thresholds of
 * local.yml when there is a repository into o->thresholds, and sets
 * o->any_job (with a warning) for two single files of different jobs.  0,
 * or -1 after pr_error().  */
int check_input_load(struct check_input *in, const char *base_arg, const char *target_arg,
		     struct check_opts *o);

/* check_input_load(), then check_compare() of the two sides into *res: -1
 * after pr_error() too when a model method finds no models or no job of the
 * target has runs on both sides (and a warning for baseline runs left out
 * for their machine).  */
int check_input_compare(struct check_input *in, const char *base_arg, const char *target_arg,
			struct check_opts *o, struct check_result *res);

#endif
