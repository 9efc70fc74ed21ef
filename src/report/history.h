/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Versions over time: per-function series (median, p95, calls) over the
 * first-parent history of commits that have matching profiles, and the
 * steps in them (analysis/steps.h, asv's detection, seeds/004).  */
#ifndef PERUN_HISTORY_H
#define PERUN_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/steps.h"
#include "util/strbuf.h"

struct repo;

/* Which profiles make a series: those of one collector, command, arguments
 * and workload.  NULL fields: taken from the newest profile found.  */
struct history_filter {
	const char *collector, *cmd, *args, *workload;
	int any_machine; /* else only profiles of the newest one's machine */
};

struct history_commit {
	char sha[41];
	int64_t date;
	char *subject;
	size_t profiles; /* matching profiles pooled at this commit */
	char first[41];	 /* object id of the first of them */
	/* what the incomplete ones among them lost (profile_incomplete, per
	 * profile "OBJECT: ..." lines), or NULL when every one is complete */
	char *incomplete;
};

struct history_step {
	size_t index; /* of the commit where the new level starts */
	double before, after, rel;
};

struct history_series {
	char *name;
	double *median, *p95, *calls; /* per commit; NAN where the function was not seen */
	/* per commit, the standard error of median and p95: the spread of the
	 * runs' own (several profiles), or of the calls around the order
	 * statistic (one profile), whichever is larger */
	double *median_noise, *p95_noise;
	double *median_calls_noise; /* the median's standard error from its calls alone */
	/* per commit, with h->control: the median of its runs' medians, each
	 * run's speed as a whole taken out (analysis/runscale.h), and its
	 * standard error; else the median and its noise */
	double *norm, *norm_noise;
	struct history_step *steps;	/* of norm (the median with each run's speed out) */
	size_t nsteps;
	struct history_step *p95_steps; /* of the p95 */
	size_t np95_steps;
};

/* Commits oldest first; series sorted by name.  */
struct history {
	char *collector, *cmd, *args, *workload;
	char *machine;		 /* where the profiles ran ("" unknown), unless any_machine */
	int any_machine;
	size_t skipped_machine; /* matching profiles left out: another machine */
	size_t control;		/* functions that formed the in-run control (0: none, the
				   steps are the raw median's) */
	size_t runs_weighed;	/* runs that weighed less: their functions disagreed
				   (analysis/runscale.h, runscale_weights()) */
	struct history_commit *c;
	size_t nc;
	struct history_series *s;
	size_t ns;
};

/* Walks first parents from rev, newest first, over at most max commits
 * (0: all), pooling the calls of the matching profiles of each commit.  */
int history_build(struct repo *r, const char *rev, size_t max, const struct history_filter *f,
		  struct history *h);
/* Finds the steps of every series' median (its normalised series when the
 * runs have an in-run control) and p95, each point weighing as the inverse
 * of its own noise (opts may be NULL; its noise is set from the series').  The
 * detection is one call, through this pointer: a seam for tests and other
 * detectors.  */
typedef int (*history_detect_fn)(const double *y, const double *w, size_t n,
				 const struct steps_opts *opts, struct step **out, size_t *nout,
				 struct steps_info *info);
extern history_detect_fn history_detect;
int history_steps(struct history *h, const struct steps_opts *opts);
void history_release(struct history *h);
/* The series named name, or NULL.  */
const struct history_series *history_find(const struct history *h, const char *name);

/* JSON of the history (every series, or only the one named).  */
void history_to_json(const struct history *h, const char *only, struct strbuf *out);
/* The JSON of one series alone, as perun report's graphs/ files hold it.  */
void history_series_json(const struct history *h, const struct history_series *s,
			 struct strbuf *out);

#endif
