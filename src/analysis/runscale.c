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

/* The contexts with a value in every run (ctl[0..n)): n.  */
static size_t control_columns(const double *x, size_t nr, size_t nc, size_t *ctl)
{
	size_t r, c, n = 0;

	for (c = 0; c < nc; c++) {
		for (r = 0; r < nr && isfinite(x[r * nc + c]); r++)
			;
		if (nr && r == nr)
			ctl[n++] = c;
	}
	return n;
}

static int cmp_by_scale(const void *a, const void *b, void *scale)
{
	double x = ((const double *)scale)[*(const size_t *)a],
	       y = ((const double *)scale)[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

size_t runscale_groups(const double *scale, size_t nr, int *group)
{
	size_t *ix = xmalloc((nr ? nr : 1) * sizeof(*ix)), i, ng = nr ? 1 : 0;

	for (i = 0; i < nr; i++)
		ix[i] = i;
	qsort_r(ix, nr, sizeof(*ix), cmp_by_scale, (void *)scale);
	for (i = 0; i < nr; i++) {
		if (i && scale[ix[i]] - scale[ix[i - 1]] > RUNSCALE_GROUP_GAP)
			ng++;
		group[ix[i]] = (int)ng - 1;
	}
	free(ix);
	return ng;
}

void runscale_group_scale(const double *x, size_t nr, size_t nc, const int *group, size_t ng,
			  double *scale)
{
	size_t *ctl = xmalloc((nc ? nc : 1) * sizeof(*ctl)), *rr = xmalloc((nr ? nr : 1) * sizeof(*rr));
	double *xg = xmalloc((nr && nc ? nr * nc : 1) * sizeof(*xg));
	double *ref = xmalloc((ng && nc ? ng * nc : 1) * sizeof(*ref));
	double *tmp = xmalloc((nr > nc ? nr : nc ? nc : 1) * sizeof(*tmp));
	double *sg = xmalloc((nr ? nr : 1) * sizeof(*sg));
	size_t g, r, k, m, n, anchor = 0;
	double best = INFINITY;

	n = control_columns(x, nr, nc, ctl);
	if (n < RUNSCALE_MIN_CONTROL || ng < 2)
		goto out;
	for (g = 0; g < ng; g++) {
		for (m = 0, r = 0; r < nr; r++)
			if (group[r] == (int)g)
				rr[m++] = r;
		for (r = 0; r < m; r++)
			memcpy(xg + r * nc, x + rr[r] * nc, nc * sizeof(*xg));
		if (m < 2 || !runscale_estimate(xg, m, nc, sg))
			for (r = 0; r < m; r++)
				sg[r] = 0;
		for (r = 0; r < m; r++)
			scale[rr[r]] = sg[r];
		/* each context's reference in the group, its runs' speeds out */
		for (k = 0; k < n; k++) {
			for (r = 0; r < m; r++)
				tmp[r] = x[rr[r] * nc + ctl[k]] - sg[r];
			ref[g * n + k] = m ? median_sort(tmp, m) : 0;
		}
		/* the anchor: the group of 2 runs or more whose contexts agree
		 * best (the median over its runs of their spread about the
		 * references) */
		for (r = 0; r < m && m >= 2; r++) {
			double *e = xg + r * nc;
			for (k = 0; k < n; k++)
				e[k] = x[rr[r] * nc + ctl[k]] - sg[r] - ref[g * n + k];
			tmp[r] = runscale_mad_sd(e, n);
		}
		if (m >= 2 && median_sort(tmp, m) < best) {
			best = median_sort(tmp, m);
			anchor = g;
		}
	}
	/* the groups' speeds against the anchor's: the median shift of their
	 * references, which a change in a few contexts does not move (against
	 * a group whose contexts the host slowed apart, the shifts fall in two
	 * heaps, and the median between them is unsteady) */
	for (g = 0; g < ng; g++) {
		double centre;
		for (k = 0; k < n; k++)
			tmp[k] = ref[g * n + k] - ref[anchor * n + k];
		centre = median_sort(tmp, n);
		for (r = 0; r < nr; r++)
			if (group[r] == (int)g)
				scale[r] += centre;
	}
	memcpy(tmp, scale, nr * sizeof(*tmp));
	{
		double centre = median_sort(tmp, nr);
		for (r = 0; r < nr; r++)
			scale[r] -= centre;
	}
out:
	free(ctl);
	free(rr);
	free(xg);
	free(ref);
	free(tmp);
	free(sg);
}

size_t runscale_weights(const double *x, size_t nr, size_t nc, const double *scale,
			const int *group, size_t ng, int across, double *w, double *unit)
{
	size_t *ctl = xmalloc((nc ? nc : 1) * sizeof(*ctl));
	double *ref = xmalloc((ng && nc ? ng * nc : 1) * sizeof(*ref));
	double *tmp = xmalloc((nr > nc ? nr : nc ? nc : 1) * sizeof(*tmp));
	double *var = xmalloc((nr ? nr : 1) * sizeof(*var)), typ = INFINITY;
	double *gvar = xcalloc(ng ? ng : 1, sizeof(*gvar));
	size_t r, g, k, m, n, less = 0, best = 0;

	for (r = 0; r < nr; r++)
		w[r] = 1;
	if (unit)
		*unit = 0;
	n = control_columns(x, nr, nc, ctl);
	if (n < RUNSCALE_MIN_CONTROL || !ng)
		goto out;
	for (g = 0; g < ng; g++)
		for (k = 0; k < n; k++) {
			for (m = 0, r = 0; r < nr; r++)
				if (!group || group[r] == (int)g)
					tmp[m++] = x[r * nc + ctl[k]] - scale[r];
			ref[g * n + k] = m ? median_sort(tmp, m) : NAN;
		}
	for (r = 0; r < nr; r++) {
		double sd;
		for (k = 0; k < n; k++)
			tmp[k] = x[r * nc + ctl[k]] - scale[r] -
				 ref[(group ? (size_t)group[r] : 0) * n + k];
		sd = runscale_mad_sd(tmp, n);
		var[r] = sd > RUNSCALE_WEIGHT_FLOOR ? sd * sd
						    : RUNSCALE_WEIGHT_FLOOR * RUNSCALE_WEIGHT_FLOOR;
	}
	/* the typical run's variance: over every run, or the standard group's
	 * (of RUNSCALE_STANDARD_RUNS runs or more, if one has that many: a
	 * lone run agrees with itself) */
	for (g = 0, k = 0; across && group && g < ng; g++) {
		for (m = 0, r = 0; r < nr; r++)
			m += group[r] == (int)g;
		k = m > k ? m : k;
	}
	for (g = 0; g < (across && group ? ng : 1); g++) {
		for (m = 0, r = 0; r < nr; r++)
			if (!(across && group) || group[r] == (int)g)
				tmp[m++] = var[r];
		gvar[g] = m && (m >= RUNSCALE_STANDARD_RUNS || m == k) ? median_sort(tmp, m)
									 : INFINITY;
		if (gvar[g] < typ) {
			typ = gvar[g];
			best = g;
		}
	}
	if (typ > RUNSCALE_WEIGHT_TYPICAL * RUNSCALE_WEIGHT_TYPICAL)
		typ = RUNSCALE_WEIGHT_TYPICAL * RUNSCALE_WEIGHT_TYPICAL;
	typ *= across ? RUNSCALE_WEIGHT_SLACK_ACROSS : RUNSCALE_WEIGHT_SLACK;
	if (across && group) {
		double sbest;
		for (m = 0, r = 0; r < nr; r++)
			if (group[r] == (int)best)
				tmp[m++] = scale[r];
		sbest = median_sort(tmp, m);
		for (g = 0; g < ng; g++) {
			double d;
			if (g == best)
				continue;
			for (m = 0, r = 0; r < nr; r++)
				if (group[r] == (int)g)
					tmp[m++] = scale[r];
			d = RUNSCALE_WEIGHT_APART * fabs(median_sort(tmp, m) - sbest);
			for (r = 0; r < nr; r++)
				if (group[r] == (int)g)
					var[r] += d * d;
		}
	}
	if (unit)
		*unit = typ;
	for (r = 0; r < nr; r++) {
		w[r] = var[r] > typ ? typ / var[r] : 1;
		less += w[r] < 1;
	}
out:
	free(ctl);
	free(ref);
	free(tmp);
	free(var);
	free(gvar);
	return less;
}

size_t runscale_estimate(const double *x, size_t nr, size_t nc, double *scale)
{
	size_t *ctl = xmalloc((nc ? nc : 1) * sizeof(*ctl));
	double *ref = xmalloc((nc ? nc : 1) * sizeof(*ref));
	double *tmp = xmalloc((nr > nc ? nr : nc ? nc : 1) * sizeof(*tmp));
	size_t r, k, n;
	int it;

	for (r = 0; r < nr; r++)
		scale[r] = 0;
	n = control_columns(x, nr, nc, ctl);
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
