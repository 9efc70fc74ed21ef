/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Dynamic Sampling (thesis 7.2.5, Algorithm 5): an initial sampling of
 * step^level from the call graph, refined toward the threshold from the
 * dynamic stats of an earlier collect, normalized.  */
#include "config.h"

#include <math.h>

#include "binary/cfg.h"
#include "optimize/methods.h"

static unsigned normalize(double s)
{
	if (!(s >= 1))	/* also NaN */
		return 1;
	if (s >= DYNSAMPLE_MAX)
		return DYNSAMPLE_MAX;
	return (unsigned)s;
}

double dynsample_coefficient(int complexity)
{
	switch (complexity) {
	case CFG_CONSTANT: return 2.0;
	case CFG_LINEAR: return 1.5;
	}
	return 1.0;
}

unsigned dynsample_initial(int level, int complexity, double step)
{
	double s = round(pow(step, level < 0 ? 0 : level));

	return normalize(round(s * dynsample_coefficient(complexity)));
}

unsigned dynsample_refine(uint64_t sample_old, uint64_t sampled_count, uint64_t threshold)
{
	double thr = (double)threshold, calls = (double)sampled_count;
	double eps = thr * DYNSAMPLE_EPS_RATIO;

	if (calls >= thr - eps && calls <= thr + eps)
		return normalize((double)sample_old);
	return normalize(round((double)sample_old / (thr / calls)));
}
