/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The models library: regression recovers known coefficients from noisy
 * generated data (fixed seeds), integrals, the regressogram and its bin
 * rule, moving averages, and the Mann-Whitney test.  */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/models.h"
#include "analysis/robust.h"
#include "rng.h"
#include "tap.h"

#define N 200

static int near(double got, double want, double tol)
{
	if (fabs(got - want) <= tol)
		return 1;
	printf("#   got %.9g, want %.9g +- %g\n", got, want, tol);
	return 0;
}

static void fit_one(enum model_kind k, const double *x, const double *y, size_t n, const double *b,
		    const double *tol, double min_r2)
{
	struct model m;
	size_t i;

	if (!ok(model_fit(k, x, y, n, &m) == 0, "%s: fits", model_name(k)))
		return;
	for (i = 0; i < m.ncoeffs; i++)
		ok(near(m.b[i], b[i], tol[i]), "%s: b%zu recovered", model_name(k), i);
	ok(m.r2 >= min_r2 && m.r2 <= 1, "%s: r2 %.4f >= %.2f", model_name(k), m.r2, min_r2);
	ok(m.x_start == x[0] && m.x_end == x[n - 1] && m.n == n, "%s: interval and count",
	   model_name(k));
}

static void test_regression(void)
{
	double x[N], y[N];
	size_t i;

	rng_state = 42;
	for (i = 0; i < N; i++)
		x[i] = (double)(i + 1);

	for (i = 0; i < N; i++)
		y[i] = 7 + 0.5 * rng_gauss();
	fit_one(MODEL_CONSTANT, x, y, N, (double[]){7}, (double[]){0.15}, -1e-9);

	for (i = 0; i < N; i++)
		y[i] = 3 + 2 * x[i] + 0.5 * rng_gauss();
	fit_one(MODEL_LINEAR, x, y, N, (double[]){3, 2}, (double[]){0.25, 0.003}, 0.999);

	for (i = 0; i < N; i++)
		y[i] = 10 + 4 * log(x[i]) + 0.1 * rng_gauss();
	fit_one(MODEL_LOGARITHMIC, x, y, N, (double[]){10, 4}, (double[]){0.1, 0.02}, 0.99);

	for (i = 0; i < N; i++)
		y[i] = 5 + 0.5 * x[i] + 0.02 * x[i] * x[i] + rng_gauss();
	fit_one(MODEL_QUADRATIC, x, y, N, (double[]){5, 0.5, 0.02}, (double[]){0.6, 0.015, 0.0001},
		0.999);

	for (i = 0; i < N; i++)
		y[i] = 2 * pow(x[i], 1.5) * exp(0.02 * rng_gauss());
	fit_one(MODEL_POWER, x, y, N, (double[]){2, 1.5}, (double[]){0.05, 0.005}, 0.99);

	for (i = 0; i < N; i++)
		y[i] = 3 * pow(1.02, x[i]) * exp(0.02 * rng_gauss());
	fit_one(MODEL_EXPONENTIAL, x, y, N, (double[]){3, 1.02}, (double[]){0.05, 0.0002}, 0.99);

	/* the best form by adjusted r2 is the one the data came from */
	{
		struct model all[MODEL_NKINDS];
		int best;
		size_t n = model_fit_all(x, y, N, all, &best);
		ok(n == MODEL_NKINDS, "every form applies to positive data (%zu)", n);
		ok(best >= 0 && all[best].kind == MODEL_EXPONENTIAL, "exponential data: best is %s",
		   best >= 0 ? model_name(all[best].kind) : "none");
		for (i = 0; i < N; i++)
			y[i] = 10 + 4 * log(x[i]) + 0.1 * rng_gauss();
		model_fit_all(x, y, N, all, &best);
		ok(best >= 0 && all[best].kind == MODEL_LOGARITHMIC, "logarithmic data: best is %s",
		   best >= 0 ? model_name(all[best].kind) : "none");
	}

	/* domains */
	{
		struct model m;
		double xs[3] = {0, 1, 2}, ys[3] = {1, -1, 2}, same[3] = {4, 4, 4};
		double neg[3] = {-1, 0, 1};
		ok(model_fit(MODEL_LOGARITHMIC, neg, ys, 3, &m) == 1,
		   "logarithmic needs two x > 0");
		ok(model_fit(MODEL_LOGARITHMIC, xs, ys, 3, &m) == 0 && m.n == 2 && m.x_start == 1,
		   "logarithmic leaves x = 0 out");
		ok(model_fit(MODEL_EXPONENTIAL, xs, ys, 3, &m) == 0 && m.n == 2,
		   "exponential leaves y <= 0 out");
		ok(model_fit(MODEL_POWER, xs, ys, 3, &m) == 1, "power: one point with x, y > 0");
		ok(model_fit(MODEL_LINEAR, same, ys, 3, &m) == 1, "linear needs two distinct x");
		ok(model_fit(MODEL_QUADRATIC, xs, ys, 2, &m) == 1, "quadratic needs three points");
		ok(model_kind_parse("power") == MODEL_POWER && model_kind_parse("cubic") == -1,
		   "names parse");
	}
}

static void test_integral(void)
{
	struct model m = {.kind = MODEL_LINEAR, .b = {1, 2, 0}, .ncoeffs = 2};

	ok(near(model_integral(&m, 0, 3), 12, 1e-12), "linear integral");
	m.kind = MODEL_QUADRATIC;
	m.b[2] = 3;
	ok(near(model_integral(&m, 0, 3), 12 + 27, 1e-12), "quadratic integral");
	m.kind = MODEL_POWER;
	m.b[0] = 2;
	m.b[1] = 1;
	ok(near(model_integral(&m, 0, 2), 4, 1e-12), "power integral");
	m.kind = MODEL_EXPONENTIAL;
	m.b[0] = 1;
	m.b[1] = M_E;
	ok(near(model_integral(&m, 0, 1), M_E - 1, 1e-12), "exponential integral");
	m.kind = MODEL_LOGARITHMIC;
	m.b[0] = 0;
	m.b[1] = 1;
	ok(near(model_integral(&m, 1, M_E), 1, 1e-12), "logarithmic integral");
}

static void test_regressogram(void)
{
	double x[100], y[100];
	struct regressogram rg;
	size_t i;

	for (i = 0; i < 100; i++) {
		x[i] = (double)i;
		y[i] = i < 50 ? 1 : 5;
	}
	/* Sturges ceil(log2 100) + 1 = 8; FD ceil(99 / (2 * 49.5 * 100^(-1/3))) = 5 */
	is_int(regressogram_bins(x, 100), 8, "auto bins: max(Sturges, Freedman-Diaconis)");
	ok(regressogram_fit(x, y, 100, 2, &rg) == 0, "regressogram fits");
	ok(rg.nbins == 2 && rg.value[0] == 1 && rg.value[1] == 5 && rg.count[0] == 50 &&
	       rg.count[1] == 50,
	   "two bins split at the step");
	ok(near(rg.r2, 1, 1e-12), "perfect fit r2 1");
	regressogram_release(&rg);
	ok(regressogram_fit(x, y, 100, 0, &rg) == 0 && rg.nbins == 8, "0 bins means the rule");
	regressogram_release(&rg);
	/* an outlier far out: FD keeps many bins */
	x[99] = 1e6;
	ok(regressogram_bins(x, 100) == 100,
	   "a far outlier makes FD ask for many bins (capped at n)");
}

static void test_moving_average(void)
{
	double y[5] = {1, 2, 3, 4, 5}, spike[7] = {1, 1, 1, 100, 1, 1, 1};
	struct moving_average ma;

	ok(moving_average_fit(y, 5, MA_SMA, 3, 1, 0, &ma) == 0, "sma fits");
	ok(near(ma.value[0], 1.5, 1e-12) && near(ma.value[2], 3, 1e-12) &&
	       near(ma.value[4], 4.5, 1e-12),
	   "centred sma truncates at the ends (eq. 3.1)");
	moving_average_release(&ma);
	moving_average_fit(y, 5, MA_SMA, 3, 0, 0, &ma);
	ok(near(ma.value[0], 1, 1e-12) && near(ma.value[1], 1.5, 1e-12) &&
	       near(ma.value[4], 4, 1e-12),
	   "right-aligned sma (eq. 3.2)");
	moving_average_release(&ma);
	moving_average_fit(spike, 7, MA_SMM, 3, 1, 0, &ma);
	ok(ma.value[3] == 1, "the moving median drops a lone outlier");
	moving_average_release(&ma);
	/* the sliding sorted window against sorting every window */
	{
		double r[500], buf[9];
		size_t t, c, bad = 0;
		rng_state = 5;
		for (t = 0; t < 500; t++)
			r[t] = floor(10 * rng_uniform()); /* ties on purpose */
		for (c = 0; c < 2; c++) {
			moving_average_fit(r, 500, MA_SMM, 9, (int)c, 0, &ma);
			for (t = 0; t < 500; t++) {
				size_t lo = c ? (t >= 4 ? t - 4 : 0) : (t >= 8 ? t - 8 : 0);
				size_t hi = c ? (t + 4 < 500 ? t + 4 : 499) : t;
				memcpy(buf, r + lo, (hi - lo + 1) * sizeof(*buf));
				bad += stats_median(buf, hi - lo + 1) != ma.value[t];
			}
			moving_average_release(&ma);
		}
		is_int(bad, 0, "moving median: the sliding window agrees with sorting each");
	}
	moving_average_fit(y, 5, MA_EMA, 3, 0, 0.5, &ma);
	/* t=4: (5 + .5*4 + .25*3) / 1.75 over the window of 3 */
	ok(near(ma.value[4], (5 + 2 + 0.75) / 1.75, 1e-12),
	   "ema weighs the window by lambda^j (eq. 3.4)");
	ok(ma.r2 > 0.8, "ema r2 %.3f", ma.r2);
	moving_average_release(&ma);
	is_int(moving_average_window(100), 11, "default window: odd nearest sqrt(n)");
	is_int(moving_average_window(2), 2, "at most n");
}

static void test_mann_whitney(void)
{
	double a[60], b[60];
	struct mw_result r;
	size_t i, seed, false_pos = 0, found = 0;

	ok(stats_mann_whitney((double[]){1, 2, 3}, 3, (double[]){4, 5, 6}, 3, &r) == 0 &&
	       r.u == 9 && r.effect == 1 && r.z > 0,
	   "U of a fully shifted sample is na*nb");
	stats_mann_whitney((double[]){1, 1, 1}, 3, (double[]){1, 1}, 2, &r);
	ok(r.p == 1 && r.effect == 0.5, "all ties: no evidence");
	for (seed = 1; seed <= 100; seed++) {
		rng_state = seed;
		for (i = 0; i < 60; i++) {
			a[i] = 100 + 10 * rng_gauss();
			b[i] = 100 + 10 * rng_gauss();
		}
		stats_mann_whitney(a, 60, b, 60, &r);
		false_pos += r.confidence >= 0.99;
		for (i = 0; i < 60; i++)
			b[i] += 10; /* a shift of one standard deviation */
		stats_mann_whitney(a, 60, b, 60, &r);
		found += r.confidence >= 0.99 && r.z > 0;
	}
	ok(false_pos <= 4, "unshifted: %zu of 100 seeds at 99%% confidence (about 1 expected)",
	   false_pos);
	ok(found >= 95, "shifted by one sd: found in %zu of 100 seeds", found);
	/* by hand: N = 11, mean 15, three ties of two: var = 30/12 (12 - 18/110) = 29.59,
	 * z = (25.5 - 15 - 0.5) / 5.4397 = 1.838, p = 2 (1 - Phi(1.838)) = 0.0660 */
	stats_mann_whitney((double[]){1, 2, 3, 4, 5}, 5, (double[]){3, 4, 5, 6, 7, 8}, 6, &r);
	ok(near(r.u, 25.5, 1e-12), "U with ties (pairs b > a, ties counting half)");
	ok(near(r.p, 0.0660, 0.0002), "p with the tie and continuity corrections");
}

int main(void)
{
	test_regression();
	test_integral();
	test_regressogram();
	test_moving_average();
	test_mann_whitney();
	return tap_done();
}
