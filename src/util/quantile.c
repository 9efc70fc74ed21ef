/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include "util/quantile.h"

double quantile_sorted(const double *v, size_t n, double q)
{
	double h;
	size_t lo;

	if (!n)
		return 0;
	if (q <= 0)
		return v[0];
	if (q >= 1)
		return v[n - 1];
	h = q * (double)(n - 1);
	lo = (size_t)h;
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

double log2_hist_quantile(const uint64_t *hist, size_t nbuckets, double q, double min,
			  double max)
{
	uint64_t n = 0, seen = 0;
	double want, v = 0;
	size_t b;

	for (b = 0; b < nbuckets; b++)
		n += hist[b];
	if (!n)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	want = q * (double)n;
	for (b = 0; b < nbuckets; b++) {
		double lo, hi;
		if (!hist[b])
			continue;
		if ((double)(seen + hist[b]) >= want || b + 1 == nbuckets) {
			lo = b ? (double)(1ull << (b < 63 ? b : 63)) : 0;
			hi = b < 63 ? (double)(1ull << (b + 1)) : 2 * lo;
			v = lo + (hi - lo) * ((want - (double)seen) / (double)hist[b]);
			break;
		}
		seen += hist[b];
	}
	if (v < min)
		v = min;
	if (v > max)
		v = max;
	return v;
}
