/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Regression models, regressogram and moving average (seeds/003 ch. 3).  */
#include "config.h"

#define PR_FMT "models"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/models.h"
#include "analysis/robust.h"
#include "util/log.h"

static const char *const names[MODEL_NKINDS] = {
    "constant", "linear", "logarithmic", "quadratic", "power", "exponential",
};

const char *model_name(enum model_kind k)
{
	return (unsigned)k < MODEL_NKINDS ? names[k] : NULL;
}

int model_kind_parse(const char *s)
{
	int i;

	for (i = 0; i < MODEL_NKINDS; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

double r_squared(const double *y, const double *f, size_t n)
{
	long double mean = 0, ss_tot = 0, ss_res = 0;
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		mean += y[i];
	mean /= (long double)n;
	for (i = 0; i < n; i++) {
		ss_tot += (y[i] - mean) * (y[i] - mean);
		ss_res += (long double)(y[i] - f[i]) * (y[i] - f[i]);
	}
	if (ss_tot <= 0) /* constant y: perfect when the model hits it */
		return ss_res <= 1e-12L * (mean * mean + 1) * (long double)n ? 1 : 0;
	return (double)(1 - ss_res / ss_tot);
}

int poly_lsq_scaled(const double *x, const double *y, size_t n, size_t deg, double m, double s,
		    double *z, double *chisq)
{
	size_t i, j, d = deg + 1;
	gsl_matrix *X, *cov;
	gsl_vector *v, *c;
	gsl_multifit_linear_workspace *w;
	int ret = -1;

	if (n <= deg || deg > 3 || !(s > 0))
		return -1;
	gsl_set_error_handler_off();
	X = gsl_matrix_alloc(n, d);
	v = gsl_vector_alloc(n);
	c = gsl_vector_alloc(d);
	cov = gsl_matrix_alloc(d, d);
	w = gsl_multifit_linear_alloc(n, d);
	if (X && v && c && cov && w) {
		for (i = 0; i < n; i++) {
			double zz = (x[i] - m) / s, p = 1;
			for (j = 0; j < d; j++, p *= zz)
				gsl_matrix_set(X, i, j, p);
			gsl_vector_set(v, i, y[i]);
		}
		if (gsl_multifit_linear(X, v, c, cov, chisq, w) == GSL_SUCCESS) {
			for (j = 0; j < d; j++)
				z[j] = gsl_vector_get(c, j);
			ret = 0;
		}
	}
	if (w)
		gsl_multifit_linear_free(w);
	if (cov)
		gsl_matrix_free(cov);
	if (c)
		gsl_vector_free(c);
	if (v)
		gsl_vector_free(v);
	if (X)
		gsl_matrix_free(X);
	return ret;
}

/* Least squares of u = a0 + a1 t (+ a2 t^2), fitted on t centred and
 * scaled and expanded back in t.  1 when every t is equal or GSL fails.  */
static int poly_fit(const double *t, const double *u, size_t n, int deg, double a[3])
{
	double m, s, chisq, z[3] = {0, 0, 0};

	if (n < (size_t)deg + 1)
		return 1;
	m = gsl_stats_mean(t, 1, n);
	s = n > 1 ? gsl_stats_sd_with_fixed_mean(t, 1, n, m) : 0;
	if (poly_lsq_scaled(t, u, n, (size_t)deg, m, s, z, &chisq) < 0)
		return 1;
	/* u = z0 + z1 (t - m)/s + z2 ((t - m)/s)^2 expanded in t */
	a[2] = z[2] / (s * s);
	a[1] = z[1] / s - 2 * z[2] * m / (s * s);
	a[0] = z[0] - z[1] * m / s + z[2] * m * m / (s * s);
	return 0;
}

/* Whether (x, y) is in the domain of form k.  */
static int in_domain(enum model_kind k, double x, double y)
{
	if (!isfinite(x) || !isfinite(y))
		return 0;
	if ((k == MODEL_LOGARITHMIC || k == MODEL_POWER) && !(x > 0))
		return 0;
	if ((k == MODEL_POWER || k == MODEL_EXPONENTIAL) && !(y > 0))
		return 0;
	return 1;
}

int model_fit(enum model_kind k, const double *x, const double *y, size_t n, struct model *m)
{
	double *t, *u, a[3] = {0, 0, 0}, *f, *xv, *yv;
	size_t i, need = k == MODEL_CONSTANT ? 1 : k == MODEL_QUADRATIC ? 3 : 2, nv = 0;
	double xmin = INFINITY, xmax = -INFINITY;
	int rc = 1;

	if ((unsigned)k >= MODEL_NKINDS || n < 1)
		return 1;
	for (i = 0; i < n; i++)
		nv += in_domain(k, x[i], y[i]);
	if (nv < need)
		return 1;
	t = malloc(nv * sizeof(*t));
	u = malloc(nv * sizeof(*u));
	f = malloc(nv * sizeof(*f));
	xv = malloc(nv * sizeof(*xv));
	yv = malloc(nv * sizeof(*yv));
	if (!t || !u || !f || !xv || !yv)
		goto out;
	for (i = 0, nv = 0; i < n; i++) {
		if (!in_domain(k, x[i], y[i]))
			continue;
		xv[nv] = x[i];
		yv[nv] = y[i];
		t[nv] = k == MODEL_LOGARITHMIC || k == MODEL_POWER ? log(x[i]) : x[i];
		u[nv] = k == MODEL_POWER || k == MODEL_EXPONENTIAL ? log(y[i]) : y[i];
		xmin = x[i] < xmin ? x[i] : xmin;
		xmax = x[i] > xmax ? x[i] : xmax;
		nv++;
	}
	if (k == MODEL_CONSTANT) {
		long double s = 0;
		for (i = 0; i < nv; i++)
			s += yv[i];
		a[0] = (double)(s / (long double)nv);
	} else if (poly_fit(t, u, nv, k == MODEL_QUADRATIC ? 2 : 1, a)) {
		goto out;
	}
	memset(m, 0, sizeof(*m));
	m->kind = k;
	m->ncoeffs = k == MODEL_CONSTANT ? 1 : k == MODEL_QUADRATIC ? 3 : 2;
	m->b[0] = a[0];
	m->b[1] = a[1];
	m->b[2] = a[2];
	if (k == MODEL_POWER) {
		m->b[0] = exp(a[0]);
	} else if (k == MODEL_EXPONENTIAL) {
		m->b[0] = exp(a[0]);
		m->b[1] = exp(a[1]);
	}
	m->x_start = xmin;
	m->x_end = xmax;
	m->n = nv;
	for (i = 0; i < nv; i++)
		f[i] = model_eval(m, xv[i]);
	m->r2 = r_squared(yv, f, nv);
	rc = 0;
out:
	free(t);
	free(u);
	free(f);
	free(xv);
	free(yv);
	return rc;
}

/* r2 penalised for the coefficients a form has, so that the quadratic form
 * does not win on linear data by fitting its noise.  */
static double adjusted_r2(const struct model *m)
{
	if (m->n <= m->ncoeffs)
		return m->r2;
	return 1 - (1 - m->r2) * (double)(m->n - 1) / (double)(m->n - m->ncoeffs);
}

size_t model_fit_all(const double *x, const double *y, size_t n, struct model *out, int *best)
{
	size_t k, got = 0;

	*best = -1;
	for (k = 0; k < MODEL_NKINDS; k++) {
		if (model_fit((enum model_kind)k, x, y, n, &out[got]))
			continue;
		if (*best < 0 || adjusted_r2(&out[got]) > adjusted_r2(&out[*best]))
			*best = (int)got;
		got++;
	}
	return got;
}

double model_eval(const struct model *m, double x)
{
	const double *b = m->b;

	switch (m->kind) {
	case MODEL_CONSTANT:
		return b[0];
	case MODEL_LINEAR:
		return b[0] + b[1] * x;
	case MODEL_LOGARITHMIC:
		return b[0] + b[1] * log(x);
	case MODEL_QUADRATIC:
		return b[0] + b[1] * x + b[2] * x * x;
	case MODEL_POWER:
		return b[0] * pow(x, b[1]);
	case MODEL_EXPONENTIAL:
		return b[0] * pow(b[1], x);
	default:
		return NAN;
	}
}

double model_integral(const struct model *m, double a, double b)
{
	const double *c = m->b;

	switch (m->kind) {
	case MODEL_CONSTANT:
		return c[0] * (b - a);
	case MODEL_LINEAR:
		return c[0] * (b - a) + c[1] / 2 * (b * b - a * a);
	case MODEL_QUADRATIC:
		return c[0] * (b - a) + c[1] / 2 * (b * b - a * a) +
		       c[2] / 3 * (b * b * b - a * a * a);
	case MODEL_LOGARITHMIC: {
		/* x ln x - x, which tends to 0 as x -> 0 */
		double fa = a > 0 ? a * log(a) - a : 0, fb = b > 0 ? b * log(b) - b : 0;
		return c[0] * (b - a) + c[1] * (fb - fa);
	}
	case MODEL_POWER:
		if (fabs(c[1] + 1) < 1e-12)
			return a > 0 && b > 0 ? c[0] * log(b / a) : NAN;
		return c[0] / (c[1] + 1) * (pow(b, c[1] + 1) - pow(a > 0 ? a : 0, c[1] + 1));
	case MODEL_EXPONENTIAL:
		if (fabs(c[1] - 1) < 1e-15)
			return c[0] * (b - a);
		return c[0] / log(c[1]) * (pow(c[1], b) - pow(c[1], a));
	default:
		return NAN;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

size_t regressogram_bins(const double *x, size_t n)
{
	double *s, iqr, h, range;
	size_t sturges, fd = 0, k;

	if (n < 2)
		return 1;
	sturges = (size_t)ceil(log2((double)n)) + 1;
	s = malloc(n * sizeof(*s));
	if (s) {
		memcpy(s, x, n * sizeof(*s));
		qsort(s, n, sizeof(*s), cmp_double);
		iqr = stats_quantile_sorted(s, n, 0.75) - stats_quantile_sorted(s, n, 0.25);
		range = s[n - 1] - s[0];
		h = 2 * iqr * pow((double)n, -1.0 / 3);
		if (h > 0 && range > 0)
			fd = (size_t)ceil(range / h);
		free(s);
	}
	k = fd > sturges ? fd : sturges;
	if (k > n)
		k = n;
	if (k > 1024)
		k = 1024;
	return k ? k : 1;
}

void regressogram_release(struct regressogram *rg)
{
	free(rg->value);
	free(rg->count);
	rg->value = NULL;
	rg->count = NULL;
}

static size_t bin_of(double x, double lo, double hi, size_t nbins)
{
	size_t b;

	if (!(hi > lo))
		return 0;
	b = (size_t)((x - lo) / (hi - lo) * (double)nbins);
	return b >= nbins ? nbins - 1 : b; /* the last bin is closed */
}

int regressogram_fit(const double *x, const double *y, size_t n, size_t nbins,
		     struct regressogram *rg)
{
	double lo = INFINITY, hi = -INFINITY, *sum, *f;
	size_t i;

	memset(rg, 0, sizeof(*rg));
	if (!n)
		return pr_error("regressogram: no points to fit");
	if (!nbins)
		nbins = regressogram_bins(x, n);
	for (i = 0; i < n; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	rg->nbins = nbins;
	rg->x_start = lo;
	rg->x_end = hi;
	rg->value = calloc(nbins, sizeof(*rg->value));
	rg->count = calloc(nbins, sizeof(*rg->count));
	sum = calloc(nbins, sizeof(*sum));
	f = malloc(n * sizeof(*f));
	if (!rg->value || !rg->count || !sum || !f) {
		free(sum);
		free(f);
		regressogram_release(rg);
		return pr_error("regressogram: out of memory for %zu bins", nbins);
	}
	for (i = 0; i < n; i++) {
		size_t b = bin_of(x[i], lo, hi, nbins);
		sum[b] += y[i];
		rg->count[b]++;
	}
	for (i = 0; i < nbins; i++)
		rg->value[i] = rg->count[i] ? sum[i] / (double)rg->count[i] : NAN;
	for (i = 0; i < n; i++)
		f[i] = rg->value[bin_of(x[i], lo, hi, nbins)];
	rg->r2 = r_squared(y, f, n);
	free(sum);
	free(f);
	return 0;
}

size_t moving_average_window(size_t n)
{
	size_t w = (size_t)llround(sqrt((double)n));

	if (w % 2 == 0)
		w++;
	if (w < 3)
		w = 3;
	if (w > n)
		w = n ? n : 1;
	return w;
}

static const char *const ma_names[] = {"sma", "smm", "ema"};

int ma_kind_parse(const char *s)
{
	int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(s, ma_names[i]))
			return i;
	return -1;
}

const char *ma_kind_name(enum ma_kind k)
{
	return (unsigned)k < 3 ? ma_names[k] : NULL;
}

void moving_average_release(struct moving_average *ma)
{
	free(ma->value);
	ma->value = NULL;
}

/* The first index of sorted v[0..n) whose value is not below x.  */
static size_t lower_bound(const double *v, size_t n, double x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void sorted_insert(double *v, size_t *n, double x)
{
	size_t i = lower_bound(v, *n, x);

	memmove(v + i + 1, v + i, (*n - i) * sizeof(*v));
	v[i] = x;
	(*n)++;
}

static void sorted_remove(double *v, size_t *n, double x)
{
	size_t i = lower_bound(v, *n, x);

	if (i < *n && v[i] == x) {
		memmove(v + i, v + i + 1, (*n - i - 1) * sizeof(*v));
		(*n)--;
	}
}

int moving_average_fit(const double *y, size_t n, enum ma_kind kind, size_t window, int centered,
		       double decay, struct moving_average *ma)
{
	long double *pre = NULL;
	double *buf = NULL;
	size_t t, left, right;

	memset(ma, 0, sizeof(*ma));
	if (!n)
		return pr_error("moving average: no points to fit");
	if (!window)
		window = moving_average_window(n);
	if (window > n)
		window = n;
	if (kind == MA_EMA) {
		centered = 0; /* eq. 3.4 weighs the past only */
		if (!(decay > 0 && decay < 1))
			decay = 1 - 2.0 / ((double)window + 1); /* pandas' span convention */
	}
	/* a centred window: window/2 before and the rest after; right-aligned:
	 * window - 1 before; both truncated at the ends */
	left = centered ? window / 2 : window - 1;
	right = centered ? window - 1 - window / 2 : 0;
	ma->kind = kind;
	ma->window = window;
	ma->centered = centered;
	ma->decay = kind == MA_EMA ? decay : 0;
	ma->n = n;
	ma->value = malloc(n * sizeof(*ma->value));
	pre = malloc((n + 1) * sizeof(*pre));
	buf = malloc((window + 1) * sizeof(*buf));
	if (!ma->value || !pre || !buf) {
		free(pre);
		free(buf);
		moving_average_release(ma);
		return pr_error("moving average: out of memory for %zu points", n);
	}
	pre[0] = 0;
	for (t = 0; t < n; t++)
		pre[t + 1] = pre[t] + y[t];
	if (kind == MA_EMA) {
		/* sum_{j<=k} lambda^j P_{t-j} / sum lambda^j, kept by recurrence */
		long double num = 0, den = 0, lk = powl(decay, (long double)window);
		for (t = 0; t < n; t++) {
			num = y[t] + decay * num;
			den = 1 + decay * den;
			if (t >= window) {
				num -= lk * y[t - window];
				den -= lk;
			}
			ma->value[t] = (double)(num / den);
		}
	} else {
		/* the moving median keeps the window sorted in buf[0..nbuf):
		 * O(log w) to find, O(w) to shift, per point */
		size_t nbuf = 0, cur_lo = 0, cur_hi = 0; /* buf holds y[cur_lo, cur_hi) */
		for (t = 0; t < n; t++) {
			size_t lo = t >= left ? t - left : 0,
			       hi = t + right < n ? t + right : n - 1;
			if (kind == MA_SMA) {
				ma->value[t] =
				    (double)((pre[hi + 1] - pre[lo]) / (long double)(hi - lo + 1));
				continue;
			}
			for (; cur_lo < lo; cur_lo++)
				sorted_remove(buf, &nbuf, y[cur_lo]);
			for (; cur_hi <= hi; cur_hi++)
				sorted_insert(buf, &nbuf, y[cur_hi]);
			ma->value[t] = stats_quantile_sorted(buf, nbuf, 0.5);
		}
	}
	ma->r2 = r_squared(y, ma->value, n);
	free(pre);
	free(buf);
	return 0;
}
