/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Models of y against x (seeds/003 ch. 3; the models region of seeds/001):
 * least-squares regression of six parametric forms, the regressogram and
 * the moving average.  No I/O; pure functions of their input.  */
#ifndef PERUN_ANALYSIS_MODELS_H
#define PERUN_ANALYSIS_MODELS_H

#include <stddef.h>

/* The parametric forms, as Perun's regression analysis names them:
 *   constant     y = b0
 *   linear       y = b0 + b1 x
 *   logarithmic  y = b0 + b1 ln x            (x > 0)
 *   quadratic    y = b0 + b1 x + b2 x^2
 *   power        y = b0 x^b1                 (x > 0, y > 0; fitted on ln y)
 *   exponential  y = b0 b1^x                 (y > 0; fitted on ln y)  */
enum model_kind {
	MODEL_CONSTANT,
	MODEL_LINEAR,
	MODEL_LOGARITHMIC,
	MODEL_QUADRATIC,
	MODEL_POWER,
	MODEL_EXPONENTIAL,
	MODEL_NKINDS
};

struct model {
	enum model_kind kind;
	double b[3];	       /* b0, b1, b2 (unused ones 0) */
	size_t ncoeffs;	       /* 1, 2 or 3 */
	double r2;	       /* coefficient of determination on y (not ln y) */
	double x_start, x_end; /* the interval of x the model was fitted on */
	size_t n;	       /* points fitted */
};

/* "linear", ...; NULL for a bad kind.  */
const char *model_name(enum model_kind k);
/* The kind named s, or -1.  */
int model_kind_parse(const char *s);

/* Fits one form by least squares on the points in its domain (points that
 * are not finite, or x <= 0 for logarithmic and power, y <= 0 for power and
 * exponential, are left out: m->n says how many were fitted, so call-order
 * from 0 loses one call).  0 with *m filled; 1 when the form does not apply
 * (too few points left, every x equal), *m untouched; never an error.  */
/* Least squares of y by a polynomial of degree deg (0 to 3) in
 * z = (x - m) / s (x centred and scaled by the caller, s > 0, so that the fit
 * stays well conditioned), by GSL's multifit: the coefficients z[0..deg] and
 * the residual sum of squares.  -1 when n <= deg, s <= 0 or GSL fails.  */
int poly_lsq_scaled(const double *x, const double *y, size_t n, size_t deg, double m, double s,
		    double *z, double *chisq);
int model_fit(enum model_kind k, const double *x, const double *y, size_t n, struct model *m);
/* Fits every applicable form into out[] (room for MODEL_NKINDS) and returns
 * how many; *best is the index of the highest adjusted r2 (-1 when none).  */
size_t model_fit_all(const double *x, const double *y, size_t n, struct model *out, int *best);
double model_eval(const struct model *m, double x);
/* The integral of m over [a, b] (the Integral Method of seeds/003 4.1).  */
double model_integral(const struct model *m, double a, double b);

/* A regressogram (seeds/003 3.3): [x_start, x_end] cut into nbins equal
 * bins, each estimated by the mean of its y.  */
struct regressogram {
	size_t nbins;
	double x_start, x_end;
	double *value; /* nbins means; NaN for an empty bin */
	size_t *count; /* nbins point counts */
	double r2;
};
/* The bin count when asked for 0: numpy's "auto" rule, the larger of
 * Sturges' log2(n) + 1 (fine for small, near-normal samples) and
 * Freedman-Diaconis' range / (2 IQR n^(-1/3)) (robust to outliers, right
 * for large samples); Sturges alone when the IQR is 0; at most n and 1024.
 * x need not be sorted.  */
size_t regressogram_bins(const double *x, size_t n);
/* Returns 0, or -1 after pr_error() (no points, out of memory).  */
int regressogram_fit(const double *x, const double *y, size_t n, size_t nbins,
		     struct regressogram *rg);
void regressogram_release(struct regressogram *rg);

/* The moving averages of seeds/003 3.4 over y in x order (the caller sorts):
 * simple (SMA, eq. 3.1/3.2), simple moving median (SMM) and exponential
 * (EMA, eq. 3.4, decay lambda).  */
enum ma_kind { MA_SMA, MA_SMM, MA_EMA };
struct moving_average {
	enum ma_kind kind;
	size_t window; /* points in the window */
	int centered;  /* 1: eq. 3.1, else right-aligned (eq. 3.2) */
	double decay;  /* EMA's lambda */
	size_t n;
	double *value; /* n smoothed values */
	double r2;
};
/* The default window: the odd number nearest sqrt(n), at least 3 (at most
 * n).  sqrt(n) smooths more as the data grows while the lag stays a
 * vanishing fraction of it, the trade-off seeds/003 3.4 describes.  */
size_t moving_average_window(size_t n);
/* y must be finite; window 0 = moving_average_window(n).  The moving median
 * slides a sorted window: O(n w) at worst.  Returns 0, or -1 after pr_error().  */
int moving_average_fit(const double *y, size_t n, enum ma_kind kind, size_t window, int centered,
		       double decay, struct moving_average *ma);
void moving_average_release(struct moving_average *ma);
/* "sma", "smm", "ema"; -1 for anything else.  */
int ma_kind_parse(const char *s);
const char *ma_kind_name(enum ma_kind k);

/* The coefficient of determination of fitted values f against y.  */
double r_squared(const double *y, const double *f, size_t n);

#endif
