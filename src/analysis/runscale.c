/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The in-run control (analysis/runscale.h).  */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/runscale.h"
#include "util/strbuf.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n), sorting v.  */
static double median_sort(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double runscale_mad_sd(const double *v, size_t n)
{
	double *t, m;
	size_t i;

	if (!n)
		return 0;
	t = xmalloc(n * sizeof(*t));
	memcpy(t, v, n * sizeof(*t));
	m = median_sort(t, n);
	for (i = 0; i < n; i++)
		t[i] = fabs(v[i] - m);
	m = median_sort(t, n);
	free(t);
	return 1.4826 * m;
}

size_t runscale_estimate(const double *x, size_t nr, size_t nc, double *scale)
{
	size_t *ctl = xmalloc((nc ? nc : 1) * sizeof(*ctl));
	double *ref = xmalloc((nc ? nc : 1) * sizeof(*ref));
	double *tmp = xmalloc((nr > nc ? nr : nc ? nc : 1) * sizeof(*tmp));
	size_t r, c, k, n = 0;
	int it;

	for (r = 0; r < nr; r++)
		scale[r] = 0;
	for (c = 0; c < nc; c++) {
		for (r = 0; r < nr && isfinite(x[r * nc + c]); r++)
			;
		if (nr && r == nr)
			ctl[n++] = c;
	}
	if (n < RUNSCALE_MIN_CONTROL) {
		n = 0;
		goto out;
	}
	for (it = 0; it < 2; it++) {
		double centre;
		for (k = 0; k < n; k++) {
			for (r = 0; r < nr; r++)
				tmp[r] = x[r * nc + ctl[k]] - scale[r];
			ref[k] = median_sort(tmp, nr);
		}
		for (r = 0; r < nr; r++) {
			for (k = 0; k < n; k++)
				tmp[k] = x[r * nc + ctl[k]] - ref[k];
			scale[r] = median_sort(tmp, n);
		}
		memcpy(tmp, scale, nr * sizeof(*tmp));
		centre = median_sort(tmp, nr);
		for (r = 0; r < nr; r++)
			scale[r] -= centre;
	}
out:
	free(ctl);
	free(ref);
	free(tmp);
	return n;
}
