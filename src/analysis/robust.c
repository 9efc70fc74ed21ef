/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Robust statistics: quantiles, means and the normal distribution from GSL;
 * the Mann-Whitney U test, which GSL does not have.  */
#include "config.h"

#define PR_FMT "stats"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

#include "analysis/robust.h"
#include "profile/profile.h"
#include "util/log.h"

double stats_quantile_sorted(const double *v, size_t n, double q)
{
	return quantile_sorted(v, n, q);
}

double stats_median(double *v, size_t n)
{
	gsl_sort(v, 1, n);
	return stats_quantile_sorted(v, n, 0.5);
}

double stats_mean(const double *v, size_t n)
{
	return n ? gsl_stats_mean(v, 1, n) : 0;
}

double stats_norm_cdf(double z)
{
	return gsl_cdf_ugaussian_P(z);
}

struct tagged {
	double v;
	int from_b;
};

static int cmp_tagged(const void *a, const void *b)
{
	double x = ((const struct tagged *)a)->v, y = ((const struct tagged *)b)->v;

	return (x > y) - (x < y);
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct mw_result *r)
{
	struct tagged *t;
	size_t n = na + nb, i, j;
	double rank_b = 0, ties = 0, mu, sigma, dn = (double)n, diff;

	r->u = 0;
	r->z = 0;
	r->p = 1;
	r->confidence = 0;
	r->effect = 0.5;
	if (!na || !nb)
		return 0;
	t = malloc(n * sizeof(*t));
	if (!t)
		return pr_error("malloc: out of memory for %zu values", n);
	for (i = 0; i < na; i++)
		t[i] = (struct tagged){a[i], 0};
	for (i = 0; i < nb; i++)
		t[na + i] = (struct tagged){b[i], 1};
	qsort(t, n, sizeof(*t), cmp_tagged);
	/* midranks over runs of equal values; the tie term sum(t^3 - t) */
	for (i = 0; i < n; i = j) {
		double mid, cnt;
		size_t k, inb = 0;
		for (j = i + 1; j < n && t[j].v == t[i].v; j++)
			;
		cnt = (double)(j - i);
		mid = ((double)i + 1 + (double)j) / 2;
		for (k = i; k < j; k++)
			inb += (size_t)t[k].from_b;
		rank_b += mid * (double)inb;
		ties += cnt * cnt * cnt - cnt;
	}
	free(t);
	r->u = rank_b - (double)nb * ((double)nb + 1) / 2;
	r->effect = r->u / ((double)na * (double)nb);
	mu = (double)na * (double)nb / 2;
	sigma = sqrt((double)na * (double)nb / 12 * ((dn + 1) - ties / (dn * (dn - 1))));
	if (sigma <= 0) { /* every value equal: no evidence of a shift */
		r->p = 1;
		return 0;
	}
	diff = r->u - mu;
	/* continuity correction towards the mean */
	diff = diff > 0.5 ? diff - 0.5 : diff < -0.5 ? diff + 0.5 : 0;
	r->z = diff / sigma;
	r->p = 2 * stats_norm_cdf(-fabs(r->z));
	if (r->p > 1)
		r->p = 1;
	r->confidence = 1 - r->p;
	return 0;
}
