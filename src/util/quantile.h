/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Quantiles of call amounts: of sorted values, and of a log2 histogram.  */
#ifndef PERUN_QUANTILE_H
#define PERUN_QUANTILE_H

#include <stddef.h>
#include <stdint.h>

/* The q-quantile (0..1) of n sorted values: linear interpolation between
 * the closest ranks (Hyndman and Fan's type 7), so the median of an even
 * count is the mean of the middle two; 0 when n is 0.  The one definition
 * of median and p95 wherever the calls are in the profile (collect's
 * summaries, show, diff, check, history); log2_hist_quantile only where
 * they are not (--aggregate).  */
double quantile_sorted(const double *v, size_t n, double q);
/* The q-quantile (0..1) of a log2 histogram (bucket b holds [2^b, 2^(b+1)),
 * bucket 0 holds 0 and 1), interpolated linearly within its bucket and
 * clamped to [min, max]; 0 when empty.  */
double log2_hist_quantile(const uint64_t *hist, size_t nbuckets, double q, double min,
			  double max);

#endif
