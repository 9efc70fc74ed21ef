/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Robust statistics for comparing call-time distributions.  No I/O.  */
#ifndef PERUN_ANALYSIS_ROBUST_H
#define PERUN_ANALYSIS_ROBUST_H

#include <stddef.h>

/* The q-quantile (0..1) of sorted v[0..n), linear between order statistics
 * (Hyndman-Fan type 7, what numpy and R use by default); 0 when n is 0.  */
double stats_quantile_sorted(const double *v, size_t n, double q);
/* Sorts v in place and returns its median.  */
double stats_median(double *v, size_t n);
/* Arithmetic mean; 0 when n is 0.  */
double stats_mean(const double *v, size_t n);

/* The Mann-Whitney U test of "b is shifted against a", two-sided, by the
 * normal approximation with the tie correction and a continuity correction.
 *
 * Why this test and not a bootstrap of the median difference: call times are
 * skewed and heavy-tailed (a scheduler hiccup makes one call 100x slower), so
 * a rank test is the robust choice; it is distribution-free, deterministic
 * (the same profiles give the same verdict in CI, no seed), O(n log n) on
 * millions of calls where a bootstrap needs thousands of resamples, and its
 * normal approximation is accurate from about 10 values per side.  Its
 * effect size, U/(na nb) (the probability that a call of b is slower than
 * one of a, ties counting half), says how much, where p only says whether.  */
struct mw_result {
	double u;	   /* U of b: pairs (a_i, b_j) with b_j > a_i, ties counting 1/2 */
	double z;	   /* standardised U (positive: b larger) */
	double p;	   /* two-sided p-value; 1 when either sample is empty */
	double confidence; /* 1 - p */
	double effect;	   /* U / (na nb), 0.5 = no shift */
};
/* Fills *r; a and b are not modified.  Returns 0, or -1 after pr_error()
 * when memory runs out.  */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct mw_result *r);

/* The standard normal distribution function.  */
double stats_norm_cdf(double z);

#endif
