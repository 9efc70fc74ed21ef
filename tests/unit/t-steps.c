/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Step detection (seeds/004): planted steps are found at their index under
 * Gaussian, Laplace and AR(1) noise; pure noise gives no step over 100
 * seeds; the Potts fit itself; points that are not finite keep their place.  */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "analysis/steps.h"
#include "rng.h"
#include "tap.h"

static size_t detect(const double *y, size_t n, struct step **st)
{
	size_t ns = 0;

	if (steps_detect(y, NULL, n, st, &ns) < 0)
		return (size_t)-1;
	return ns;
}

static void test_planted(void)
{
	double y[80];
	struct step *st;
	size_t i, ns, seed, right = 0;

	rng_state = 7;
	for (i = 0; i < 60; i++)
		y[i] = (i < 30 ? 10 : 15) + rng_gauss();
	ns = detect(y, 60, &st);
	is_int(ns, 1, "one planted step (gaussian noise, 5 sd)");
	if (ns == 1) {
		is_int(st[0].start, 30, "at its index");
		ok(fabs(st[0].before - 10) < 1 && fabs(st[0].after - 15) < 1 && st[0].end == 60,
		   "levels %.2f -> %.2f", st[0].before, st[0].after);
		ok(fabs(st[0].rel - 0.5) < 0.15, "relative change %.3f", st[0].rel);
	}
	free(st);

	/* two steps, up then down, laplace noise */
	rng_state = 11;
	for (i = 0; i < 80; i++)
		y[i] = (i < 20 ? 100 : i < 55 ? 130 : 110) + 3 * rng_laplace();
	ns = detect(y, 80, &st);
	is_int(ns, 2, "two planted steps (laplace noise)");
	if (ns == 2)
		ok(st[0].start == 20 && st[1].start == 55 && st[0].rel > 0 && st[1].rel < 0,
		   "at 20 (up) and 55 (down): %zu %zu", st[0].start, st[1].start);
	free(st);

	/* AR(1) noise, rho 0.5: the step is still found where it is */
	for (seed = 1; seed <= 20; seed++) {
		double e = 0;
		rng_state = 1000 + seed;
		for (i = 0; i < 60; i++) {
			e = 0.5 * e + rng_gauss();
			y[i] = (i < 40 ? 50 : 60) + e;
		}
		ns = detect(y, 60, &st);
		right += ns == 1 && st[0].start == 40;
		free(st);
	}
	ok(right >= 18, "AR(1) noise: step found at its index in %zu of 20 seeds", right);

	/* 20 points, a 6-sigma step: the bound on rho keeps it from being read
	 * as correlated noise (asv's unbounded rho finds about half) */
	for (seed = 1, right = 0; seed <= 100; seed++) {
		rng_state = seed;
		for (i = 0; i < 20; i++)
			y[i] = 100 + 5 * rng_gauss() + (i >= 10 ? 30 : 0);
		ns = detect(y, 20, &st);
		right += ns == 1 && st[0].start == 10;
		free(st);
	}
	ok(right >= 90, "20 points: the step found at its index in %zu of 100 seeds", right);
}

static void test_noise(void)
{
	double y[60];
	struct step *st;
	size_t i, seed, gauss = 0, lap = 0, ar = 0;

	for (seed = 1; seed <= 100; seed++) {
		double e = 0;
		rng_state = seed;
		for (i = 0; i < 60; i++)
			y[i] = 100 + 5 * rng_gauss();
		gauss += detect(y, 60, &st);
		free(st);
		for (i = 0; i < 60; i++)
			y[i] = 100 + 5 * rng_laplace();
		lap += detect(y, 60, &st);
		free(st);
		for (i = 0; i < 60; i++) {
			e = 0.5 * e + rng_gauss();
			y[i] = 100 + 5 * e;
		}
		ar += detect(y, 60, &st);
		free(st);
	}
	is_int(gauss, 0, "no false step on gaussian noise over 100 seeds");
	is_int(lap, 0, "no false step on laplace noise over 100 seeds");
	ok(ar <= 3, "AR(1) noise, rho 0.5: %zu false steps over 100 seeds", ar);
}

static void test_edges(void)
{
	double y[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	double z[12] = {5, NAN, 5, 5, 5, 5, 9, 9, INFINITY, 9, 9, 9};
	size_t seg[12], ns;
	double mu[12];
	struct step *st;
	struct steps_info info;

	is_int(detect(y, 10, &st), 0, "a constant series has no step");
	is_int(detect(y, 1, &st), 0, "one point has no step");
	{
		double few[6] = {10, 10, 10, 50, 50, 50};
		struct steps_opts o = {.min_points = 7};
		is_int(detect(few, 6, &st), 1, "6 points with a clean step: found by default");
		ok(st && st[0].start == 3, "at its index");
		free(st);
		steps_detect_opts(few, NULL, 6, &o, &st, &ns, NULL);
		is_int(ns, 0, "min_points 7: none");
		free(st);
	}
	is_int(detect(y, 0, &st), 0, "no points, no step");
	ok(steps_detect_opts(z, NULL, 12, NULL, &st, &ns, &info) == 0 && ns == 1,
	   "an exact step between non-finite points");
	if (ns == 1)
		ok(st[0].start == 6 && st[0].before == 5 && st[0].after == 9 && st[0].end == 12,
		   "indices are the caller's: start %zu", st[0].start);
	is_int(info.npoints, 10, "non-finite points are skipped");
	free(st);
	/* a weight of 0 drops a point */
	{
		double w[12] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0};
		steps_detect_opts(z, w, 12, NULL, &st, &ns, NULL);
		is_int(ns, 0, "zero weights drop the points after the step");
		free(st);
	}
	/* the Potts fit: a huge penalty leaves one segment, a tiny one many */
	{
		double p[6] = {1, 1, 1, 4, 4, 4};
		is_int(steps_potts(p, NULL, 6, 1e9, 1, seg, mu), 1, "huge gamma: one segment");
		ok(steps_potts(p, NULL, 6, 0.5, 1, seg, mu) == 2 && seg[1] == 3 && mu[0] == 1 &&
		       mu[1] == 4,
		   "gamma below the step's saving: two segments, medians as levels");
		is_int(steps_potts(p, NULL, 6, 0.5, 4, seg, mu), 1, "min_size 4 forbids them");
	}
	/* a long series is merged into blocks; the step keeps its place */
	{
		size_t n = 5000, i;
		double *big = malloc(n * sizeof(*big));
		rng_state = 3;
		for (i = 0; i < n; i++)
			big[i] = (i < 3001 ? 20 : 24) + rng_gauss();
		ns = detect(big, n, &st);
		ok(ns == 1 && st[0].start >= 2997 && st[0].start <= 3003,
		   "5000 points: one step near 3001 (%zu, at %zu)", ns, ns ? st[0].start : 0);
		free(st);
		free(big);
	}
}

/* The series of history's report: work's median over five commits, the
 * third 2.3x slower (the guard of 8 points hid it).  */
static void test_five_commits(void)
{
	double y[5] = {32.3, 31.6, 71.7, 72.3, 72.2}, p95[5] = {40.1, 39.0, 88.5, 90.2, 89.9};
	double noise[5] = {0.3, 0.3, 0.5, 0.4, 0.4};
	struct steps_opts o = {.threshold = 0.05};
	struct steps_info info;
	struct step *st;
	size_t ns;

	steps_detect_opts(y, NULL, 5, &o, &st, &ns, &info);
	ok(ns == 1 && st[0].start == 2 && st[0].rel > 1.2 && st[0].rel < 1.4,
	   "the median's step at commit 3 of 5, noise from the series: %zu step(s), rel %.2f", ns,
	   ns ? st[0].rel : 0);
	free(st);
	o.noise = noise;
	steps_detect_opts(y, NULL, 5, &o, &st, &ns, &info);
	ok(ns == 1 && st[0].start == 2 && info.floor >= 0.35 * 1.9 - 1e-9,
	   "with each point's measured noise: found, floor %.2f", info.floor);
	free(st);
	o.noise = NULL;
	steps_detect_opts(p95, NULL, 5, &o, &st, &ns, NULL);
	ok(ns == 1 && st[0].start == 2, "on p95 too");
	free(st);
	/* three points: only the measured noise can tell */
	o.noise = noise + 2;
	steps_detect_opts(y + 1, NULL, 3, &o, &st, &ns, NULL);
	ok(ns == 1 && st[0].start == 1, "3 commits, measured noise: the step at the second");
	free(st);
}

/* Series of 3 to 10 commits: no false step on noise whose size is known
 * (or, from 5 points, estimated); a step of 12 sd found.  */
static void test_short_series(void)
{
	double y[10], noise[10];
	size_t m, seed, i, ns, false_known = 0, false_est = 0, found = 0, tries = 0;
	struct step *st;

	for (i = 0; i < 10; i++)
		noise[i] = 0.7979; /* E|e| of a unit gaussian */
	for (m = 3; m <= 10; m++)
		for (seed = 1; seed <= 200; seed++) {
			struct steps_opts o = {.noise = noise};
			rng_state = 5000 + 1000 * m + seed;
			for (i = 0; i < m; i++)
				y[i] = 100 + rng_gauss();
			steps_detect_opts(y, NULL, m, &o, &st, &ns, NULL);
			false_known += ns;
			free(st);
			o.noise = NULL;
			if (m >= 5) {
				steps_detect_opts(y, NULL, m, &o, &st, &ns, NULL);
				false_est += ns;
				free(st);
			}
			for (i = m / 2; i < m; i++)
				y[i] += 12;
			o.noise = noise;
			steps_detect_opts(y, NULL, m, &o, &st, &ns, NULL);
			found += ns == 1 && st[0].start == m / 2;
			tries++;
			free(st);
		}
	ok(false_known <= 3, "noise of known size, 3-10 points x 200 seeds: %zu false steps",
	   false_known);
	ok(false_est <= 16, "noise estimated from the series, 5-10 points x 200 seeds: %zu false "
			    "steps",
	   false_est);
	ok(found >= tries * 85 / 100, "a 12 sd step, 3-10 points: found at its index in %zu of %zu",
	   found, tries);
}

int main(void)
{
	test_planted();
	test_noise();
	test_edges();
	test_five_commits();
	test_short_series();
	return tap_done();
}
