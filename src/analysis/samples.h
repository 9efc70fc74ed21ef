/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The call times of a profile per function, read only through
 * profile_each_resource() so that per-call and compact profiles read alike;
 * what postprocessby, check and diff compute on.  */
#ifndef PERUN_ANALYSIS_SAMPLES_H
#define PERUN_ANALYSIS_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

struct profile;

struct func_samples {
	char *uid;
	double *amount;	   /* inclusive time of each call, in the profile's order */
	double *exclusive; /* exclusive time (NAN where the resource has none) */
	double *x;	   /* the x field of each call (NAN where missing); NULL without xfield */
	size_t n, alloc;
	int binned; /* some values come from --aggregate histograms */
	uint64_t hist[64];	 /* binned: the merged log2 histograms */
	double hist_min, hist_max; /* binned: their resources' min and max */
	/* filled by samples_finish */
	double sum, sum_exclusive, mean, median, p95;
};

struct func_table {
	struct func_samples *f; /* sorted by uid after samples_finish */
	size_t n;
	double total_exclusive; /* over every function */
	int binned;
};

/* Reads every call resource of p (subtype "point" and resources without a
 * numeric amount are skipped; a uid object names its function).  xfield is
 * the flattened key of x (call-order, structure-unit-size ...) or NULL.
 * Resources of --aggregate profiles (log2_hist) become one value per call
 * at the geometric middle of its bucket, clamped to [min, max]; their median
 * and p95 are interpolated from the histograms (profile.h's
 * log2_hist_quantile, as collect's summaries do), every other function's
 * are exact (quantile_sorted).  */
void samples_read(const struct profile *p, const char *xfield, struct func_table *t);
void samples_release(struct func_table *t);
/* The function named uid, or NULL.  */
struct func_samples *samples_find(const struct func_table *t, const char *uid);

/* One function of two tables side by side (perun diff).  */
struct samples_pair {
	const char *uid;
	const struct func_samples *a, *b; /* NULL: not in that table */
	double ratio; /* median b / median a (INFINITY from a zero median; 1 when
			 both are zero); NAN when one side is missing */
};
/* The functions of a and b paired by uid, the biggest change of median
 * first (|log ratio|, ties by uid), those in one table only last; *n of
 * them (caller frees the array; it points into a and b).  */
struct samples_pair *samples_pair(const struct func_table *a, const struct func_table *b,
				  size_t *n);

#endif
