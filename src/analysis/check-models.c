/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Perun's check methods over fitted models and exclusive times
 * (analysis/check-models.h).  The meanings are Perun's (perun/check/methods);
 * where Perun compares one profile with one profile, the runs of a side are
 * summarised first: per function the form with the best mean r^2 over the
 * side's runs, the pointwise median of the runs' curves of that form, and
 * the median of their coefficients.  */
#include "config.h"

#define PR_FMT "check"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check-job.h"
#include "analysis/check-models.h"
#include "analysis/json-read.h"
#include "analysis/models.h"
#include "analysis/samples.h"
#include "profile/profile.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Points at which a model's curve is sampled (Perun's SAMPLES).  */
#define SAMPLES 1000
/* Perun: no change when b0 and b1 both move by this fraction or less.  */
#define COEFF_NO_CHANGE 0.05
/* local-statistics: a window holds this fraction of the points, at least
 * 2 (else the whole curve is one window); a statistic moving by 10 % or
 * less is no change, past 25 % a change; models whose r^2 is below 0.15
 * are not compared.  */
#define LS_DENSITY 0.05
#define LS_NO_CHANGE 0.10
#define LS_CHANGE 0.25
#define LS_MIN_R2 0.15
#define LS_NSTATS 8
/* exclusive-time-outliers: the modified z-score's consistency factor and
 * cut-off, the IQR multiple and the standard deviation multiple.  */
#define MZS_FACTOR 0.6745
#define MZS_CUTOFF 3.5
#define IQR_CUTOFF 1.5
#define SD_CUTOFF 2.0

/* --- the models of a side ------------------------------------------------ */

/* Non-parametric kinds after the parametric ones of models.h.  */
enum { KIND_REGRESSOGRAM = MODEL_NKINDS, KIND_MOVING_AVERAGE, NKINDS };

struct mrec {
	const char *uid; /* points into the profile */
	size_t run;
	int kind;
	double b[3];
	double r2, xs, xe;
	struct json_object *buckets; /* non-parametric: bucket_stats */
};

struct mside {
	struct mrec *m;
	size_t n, nruns;
};

static double num(struct json_object *v)
{
	if (!v ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return NAN;
	return json_object_get_double(v);
}

static const char *kind_name(int k)
{
	return k == KIND_REGRESSOGRAM	 ? "regressogram"
	       : k == KIND_MOVING_AVERAGE ? "moving_average"
					  : model_name((enum model_kind)k);
}

static int kind_parse(const char *s)
{
	if (!strcmp(s, "regressogram"))
		return KIND_REGRESSOGRAM;
	if (!strcmp(s, "moving_average"))
		return KIND_MOVING_AVERAGE;
	return model_kind_parse(s);
}

/* One model record of the models region; 0 when it is not one we read.  */
static int read_rec(struct json_object *mo, size_t run, struct mrec *r)
{
	struct json_object *uid = jr_get(mo, "uid"), *kind = jr_get(mo, "model"), *c;
	size_t i;

	if (!uid || !kind || !json_object_is_type(uid, json_type_string) ||
	    !json_object_is_type(kind, json_type_string))
		return 0;
	memset(r, 0, sizeof(*r));
	r->uid = json_object_get_string(uid);
	r->run = run;
	if ((r->kind = kind_parse(json_object_get_string(kind))) < 0)
		return 0;
	r->r2 = num(jr_get(mo, "r_square"));
	r->xs = num(jr_get(mo, "x_interval_start"));
	if (isnan(r->xs))
		r->xs = num(jr_get(mo, "x_start"));
	r->xe = num(jr_get(mo, "x_interval_end"));
	if (isnan(r->xe))
		r->xe = num(jr_get(mo, "x_end"));
	if (r->kind >= MODEL_NKINDS) {
		r->buckets = jr_get(mo, "bucket_stats");
		return r->buckets && json_object_is_type(r->buckets, json_type_array) &&
		       json_object_array_length(r->buckets) > 0;
	}
	c = jr_get(mo, "coeffs");
	if (!c || !json_object_is_type(c, json_type_array))
		return 0;
	for (i = 0; i < 3 && i < json_object_array_length(c); i++) {
		struct json_object *e = json_object_array_get_idx(c, i);
		r->b[i] = json_object_is_type(e, json_type_object) ? num(jr_get(e, "value")) : num(e);
		if (!isfinite(r->b[i]))
			return 0;
	}
	return 1;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct mrec *x = a, *y = b;
	int c = strcmp(x->uid, y->uid);

	return c ? c : x->kind - y->kind;
}

static void read_side(const struct profile *p, const size_t *idx, size_t n, struct mside *s)
{
	size_t i, j, k, alloc = 0;

	memset(s, 0, sizeof(*s));
	s->nruns = n;
	for (i = 0; i < n; i++) {
		struct json_object *snaps = jr_get(p[idx[i]].root, "snapshots");
		if (!snaps || !json_object_is_type(snaps, json_type_array))
			continue;
		for (j = 0; j < json_object_array_length(snaps); j++) {
			struct json_object *ms = jr_get(json_object_array_get_idx(snaps, j), "models");
			if (!ms || !json_object_is_type(ms, json_type_array))
				continue;
			for (k = 0; k < json_object_array_length(ms); k++) {
				if (s->n == alloc) {
					alloc = alloc ? 2 * alloc : 64;
					s->m = xrealloc(s->m, alloc * sizeof(*s->m));
				}
				s->n += read_rec(json_object_array_get_idx(ms, k), i, &s->m[s->n]);
			}
		}
	}
	if (s->n)
		qsort(s->m, s->n, sizeof(*s->m), cmp_rec);
}

/* The records of uid: [*lo, *hi).  */
static void uid_range(const struct mside *s, const char *uid, size_t *lo, size_t *hi)
{
	size_t a = 0, b = s->n;

	while (a < b) {
		size_t mid = (a + b) / 2;
		if (strcmp(s->m[mid].uid, uid) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	while (a < s->n && !strcmp(s->m[a].uid, uid))
		a++;
	*hi = a;
}

/* Of the records [lo, hi) (one function), the kind with the best mean r^2,
 * parametric kinds only unless nonparam; Perun counts only r^2 > 0.  -1
 * when none.  */
static int best_kind(const struct mside *s, size_t lo, size_t hi, int nonparam, double *r2)
{
	double sum[NKINDS] = {0};
	size_t cnt[NKINDS] = {0}, i;
	int k, best = -1;

	for (i = lo; i < hi; i++)
		if (isfinite(s->m[i].r2) && (nonparam || s->m[i].kind < MODEL_NKINDS)) {
			sum[s->m[i].kind] += s->m[i].r2;
			cnt[s->m[i].kind]++;
		}
	for (k = 0; k < NKINDS; k++)
		if (cnt[k] && sum[k] / (double)cnt[k] > 0 &&
		    (best < 0 || sum[k] / (double)cnt[k] > *r2)) {
			best = k;
			*r2 = sum[k] / (double)cnt[k];
		}
	return best;
}

static double median_of(double *v, size_t n)
{
	if (!n)
		return NAN;
	gsl_sort(v, 1, n);
	return gsl_stats_median_from_sorted_data(v, 1, n);
}

static struct model to_model(const struct mrec *r)
{
	struct model m;

	memset(&m, 0, sizeof(m));
	m.kind = (enum model_kind)r->kind;
	m.ncoeffs = r->kind == MODEL_CONSTANT ? 1 : r->kind == MODEL_QUADRATIC ? 3 : 2;
	memcpy(m.b, r->b, sizeof(m.b));
	return m;
}

/* The median over the runs of coefficient j of kind k.  */
static double median_coeff(const struct mside *s, size_t lo, size_t hi, int k, int j)
{
	double *v = xmalloc((hi - lo + 1) * sizeof(*v)), r;
	size_t i, n = 0;

	for (i = lo; i < hi; i++)
		if (s->m[i].kind == k)
			v[n++] = s->m[i].b[j];
	r = median_of(v, n);
	free(v);
	return r;
}

/* The x interval kind k was fitted on, over the runs.  */
static void interval(const struct mside *s, size_t lo, size_t hi, int k, double *xs, double *xe)
{
	size_t i;

	*xs = INFINITY;
	*xe = -INFINITY;
	for (i = lo; i < hi; i++)
		if (s->m[i].kind == k) {
			if (s->m[i].xs < *xs)
				*xs = s->m[i].xs;
			if (s->m[i].xe > *xe)
				*xe = s->m[i].xe;
		}
}

/* The side's curve of parametric kind k at x[0..n): per point the median
 * over the runs (NAN where the form is undefined).  */
static void param_curve(const struct mside *s, size_t lo, size_t hi, int k, const double *x,
			size_t n, double *y)
{
	double *v = xmalloc((hi - lo + 1) * sizeof(*v));
	size_t i, j, m;

	for (j = 0; j < n; j++) {
		for (i = lo, m = 0; i < hi; i++) {
			struct model md;
			double e;
			if (s->m[i].kind != k)
				continue;
			md = to_model(&s->m[i]);
			e = model_eval(&md, x[j]);
			if (isfinite(e))
				v[m++] = e;
		}
		y[j] = m ? median_of(v, m) : NAN;
	}
	free(v);
}

/* A non-parametric side's curve: the runs' bucket values, pointwise median,
 * as long as the shortest run's.  Returns the length (x spread evenly over
 * the interval); *x and *y are the caller's.  */
static size_t nonparam_curve(const struct mside *s, size_t lo, size_t hi, int k, double **x,
			     double **y)
{
	size_t i, j, m, len = SIZE_MAX;
	double xs, xe, *v = xmalloc((hi - lo + 1) * sizeof(*v));

	for (i = lo; i < hi; i++)
		if (s->m[i].kind == k && json_object_array_length(s->m[i].buckets) < len)
			len = json_object_array_length(s->m[i].buckets);
	interval(s, lo, hi, k, &xs, &xe);
	*x = xmalloc(len * sizeof(**x));
	*y = xmalloc(len * sizeof(**y));
	for (j = 0; j < len; j++) {
		for (i = lo, m = 0; i < hi; i++) {
			double e;
			if (s->m[i].kind != k)
				continue;
			e = num(json_object_array_get_idx(s->m[i].buckets, j));
			if (isfinite(e))
				v[m++] = e;
		}
		(*y)[j] = m ? median_of(v, m) : NAN;
		(*x)[j] = len > 1 ? xs + (xe - xs) * (double)j / (double)(len - 1) : xs;
	}
	free(v);
	return len;
}

/* n points evenly over the x both sides' models cover (else the
 * baseline's).  */
static double *grid(double bxs, double bxe, double txs, double txe, size_t n)
{
	double lo = bxs > txs ? bxs : txs, hi = bxe < txe ? bxe : txe, *x = xmalloc(n * sizeof(*x));
	size_t i;

	if (!(hi >= lo)) {
		lo = bxs;
		hi = bxe;
	}
	for (i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * (double)i / (double)(n - 1);
	return x;
}

/* Drops the points where any of the curves is not finite; the count left.  */
static size_t keep_finite(double *x, double **c, size_t nc, size_t n)
{
	size_t i, j, k = 0;

	for (i = 0; i < n; i++) {
		int ok = isfinite(x[i]);
		for (j = 0; j < nc; j++)
			ok &= isfinite(c[j][i]);
		if (!ok)
			continue;
		x[k] = x[i];
		for (j = 0; j < nc; j++)
			c[j][k] = c[j][i];
		k++;
	}
	return k;
}

/* --- the shape of a change (Perun's change type) --------------------------- */

/* The residual sum of squares of the least-squares polynomial of degree deg
 * through (x, y), by GSL's multifit on x centred and scaled; NAN when it
 * cannot be fitted.  */
static double poly_rss(const double *x, const double *y, size_t n, size_t deg)
{
	double m = gsl_stats_mean(x, 1, n), s = n > 1 ? gsl_stats_sd_m(x, 1, n, m) : 0, chisq;
	double z[4];

	if (!(s > 0))
		s = 1;
	return poly_lsq_scaled(x, y, n, deg, m, s, z, &chisq) < 0 ? NAN : chisq;
}

/* polynomial-regression: the lowest degree (0 to 3) whose polynomial fits
 * the difference of the linear models within 1 % of the baseline's level
 * (root mean square residual).  */
static const char *shape_polynomial(const double *x, const double *d, size_t n, double level)
{
	static const char *const names[] = {"constant", "linear", "quadratic", "cubic"};
	size_t deg;

	for (deg = 0; deg < 4; deg++) {
		double rss = poly_rss(x, d, n, deg);
		if (isfinite(rss) && sqrt(rss / (double)n) <= 0.01 * fabs(level))
			return names[deg];
	}
	return "unknown";
}

/* The form that fits (x, d) best (regression analysis of the difference).  */
static const char *shape_best(const double *x, const double *d, size_t n)
{
	struct model m[MODEL_NKINDS];
	int best;

	model_fit_all(x, d, n, m, &best);
	return best >= 0 ? model_name(m[best].kind) : "unknown";
}

/* linear-regression: a linear regression of the linear models' difference
 * ld: constant when its slope is within 5 % of the largest difference and
 * its intercept is the change of b0; linear when its slope is the change of
 * the linear models' b1 (within 30 %) with r^2 > 0.95; quadratic when a
 * quadratic fits ld (r^2 > 0.9) clearly better than a line; else the best
 * form of ld.  */
static const char *shape_linear(const double *x, const double *ld, const double *d, size_t n,
				double diff_b0, double diff_lin_b1)
{
	double c0, c1, cov00, cov01, cov11, sumsq, r, maxd = 0;
	struct model q, l;
	const char *shape = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		maxd = fabs(d[i]) > maxd ? fabs(d[i]) : maxd;
	gsl_set_error_handler_off();
	if (gsl_fit_linear(x, 1, ld, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq) ==
	    GSL_SUCCESS) {
		r = gsl_stats_correlation(x, 1, ld, 1, n);
		if (fabs(c1) <= 0.05 * maxd && fabs(diff_b0 - c0) <= 0.05 * fabs(c0) + 1e-9)
			shape = "constant";
		else if (fabs(diff_lin_b1 - c1) <= 0.3 * fabs(c1) && isfinite(r) && r * r > 0.95)
			shape = "linear";
	}
	if (!model_fit(MODEL_QUADRATIC, x, ld, n, &q) && !model_fit(MODEL_LINEAR, x, ld, n, &l) &&
	    q.r2 > 0.9 && fabs(q.r2 - l.r2) > 0.01)
		shape = "quadratic";
	return shape ? shape : shape_best(x, ld, n);
}

/* --- the regression checks ----------------------------------------------- */

static void undecided(struct check_finding *f, const char *why)
{
	f->verdict = CHECK_UNDECIDED;
	f->why = why;
}

/* Perun's verdict from the mean relative difference rel (a fraction) and
 * the sign of the summed difference.  */
static void verdict_rel(struct check_finding *f, double rel, double sum)
{
	f->ratio = 1 + rel;
	if (sum > 0 && rel > f->threshold)
		f->verdict = CHECK_DEGRADATION;
	else if (sum <= 0 && rel < -f->threshold)
		f->verdict = CHECK_OPTIMIZATION;
	else
		undecided(f, sum > 0 ? "maybe a degradation: the models differ, by less than the "
				       "threshold"
				     : "maybe an optimization: the models differ, by less than the "
				       "threshold");
}

static void regression(enum check_method method, const struct mside *B, size_t blo, size_t bhi,
		       const struct mside *T, size_t tlo, size_t thi, struct check_finding *f)
{
	double rb = 0, rt = 0, rl = 0, bxs, bxe, txs, txe, *x, *c[4], sum = 0, rel = 0;
	int kb = best_kind(B, blo, bhi, 0, &rb), kt = best_kind(T, tlo, thi, 0, &rt), j;
	size_t i, n;

	if (kb < 0 || kt < 0) {
		undecided(f, "no model with r^2 above 0 on a side: run postprocessby "
			     "regression-analysis");
		return;
	}
	f->base_model = kind_name(kb);
	f->target_model = kind_name(kt);
	{
		size_t k;
		int lin_b = 0, lin_t = 0;
		for (k = blo; k < bhi; k++)
			lin_b |= B->m[k].kind == MODEL_LINEAR;
		for (k = tlo; k < thi; k++)
			lin_t |= T->m[k].kind == MODEL_LINEAR;
		if (!lin_b || !lin_t) {
			undecided(f, "no linear model on a side: run postprocessby "
				     "regression-analysis with the linear form");
			return;
		}
	}
	/* Perun's confidence: the smaller r^2 of the baseline's best model and
	 * the target's linear model */
	for (i = tlo, n = 0; i < thi; i++)
		if (T->m[i].kind == MODEL_LINEAR && isfinite(T->m[i].r2))
			rl += T->m[i].r2, n++;
	rl = n ? rl / (double)n : 0;
	f->rate_name = "r_square";
	f->rate = rb < rl ? rb : rl;
	interval(B, blo, bhi, kb, &bxs, &bxe);
	interval(T, tlo, thi, kt, &txs, &txe);
	x = grid(bxs, bxe, txs, txe, SAMPLES);
	for (j = 0; j < 4; j++)
		c[j] = xmalloc(SAMPLES * sizeof(*c[j]));
	param_curve(B, blo, bhi, kb, x, SAMPLES, c[0]);
	param_curve(T, tlo, thi, kt, x, SAMPLES, c[1]);
	param_curve(B, blo, bhi, MODEL_LINEAR, x, SAMPLES, c[2]);
	param_curve(T, tlo, thi, MODEL_LINEAR, x, SAMPLES, c[3]);
	n = keep_finite(x, c, 4, SAMPLES);
	if (n < 2) {
		undecided(f, "the models have no common x where both are defined");
		goto out;
	}
	f->base = gsl_stats_mean(c[0], 1, n);
	f->target = gsl_stats_mean(c[1], 1, n);
	/* the change relative to the baseline: the difference of the curves'
	 * areas over the common x, over the baseline's area.  Perun averages
	 * d / baseline point by point, which a baseline curve passing near zero
	 * (a quadratic pulled by one slow first call) turns into any number of
	 * either sign: a function 11 times slower read -623 %.  Both agree
	 * when the target is the baseline scaled.  */
	for (i = 0; i < n; i++) {
		double d = c[1][i] - c[0][i];
		sum += d;
		rel += c[0][i];
		c[1][i] = d;		   /* the difference of the best models */
		c[3][i] = c[3][i] - c[2][i]; /* of the linear models */
	}
	rel = rel > 0 ? sum / rel : 0;
	{
		double b0 = median_coeff(B, blo, bhi, kb, 0), b1 = median_coeff(B, blo, bhi, kb, 1);
		double t0 = median_coeff(T, tlo, thi, kt, 0), t1 = median_coeff(T, tlo, thi, kt, 1);
		if (fabs(t0 - b0) <= COEFF_NO_CHANGE * fabs(b0) &&
		    fabs(t1 - b1) <= COEFF_NO_CHANGE * fabs(b1)) {
			f->verdict = CHECK_NO_CHANGE;
			f->ratio = 1 + rel;
			goto out;
		}
		if (method == CHECK_POLYNOMIAL_REGRESSION)
			f->shape = shape_polynomial(x, c[3], n, f->base);
		else if (method == CHECK_FAST_CHECK)
			f->shape = shape_best(x, c[1], n);
		else
			f->shape = shape_linear(
			    x, c[3], c[1], n, t0 - b0,
			    median_coeff(T, tlo, thi, MODEL_LINEAR, 1) -
				median_coeff(B, blo, bhi, MODEL_LINEAR, 1));
	}
	verdict_rel(f, rel, sum);
out:
	for (j = 0; j < 4; j++)
		free(c[j]);
	free(x);
}

/* --- local-statistics ---------------------------------------------------- */

/* Simpson's rule over sampled points; an even count averages Simpson on
 * the first n-1 points plus a trapezoid and the reverse (scipy's "avg").  */
static double simpson(const double *x, const double *y, size_t n)
{
	double s = 0, a, b;
	size_t i;

	if (n < 2)
		return 0;
	if (n == 2)
		return (x[1] - x[0]) * (y[0] + y[1]) / 2;
	if (n % 2) {
		for (i = 0; i + 2 < n; i += 2)
			s += (x[i + 2] - x[i]) / 6 * (y[i] + 4 * y[i + 1] + y[i + 2]);
		return s;
	}
	a = simpson(x, y, n - 1) + (x[n - 1] - x[n - 2]) * (y[n - 2] + y[n - 1]) / 2;
	b = (x[1] - x[0]) * (y[0] + y[1]) / 2 + simpson(x + 1, y + 1, n - 1);
	return (a + b) / 2;
}

/* The eight statistics of one window.  */
static void window_stats(const double *x, const double *y, size_t n, double st[LS_NSTATS])
{
	double *s = xmalloc(n * sizeof(*s));

	memcpy(s, y, n * sizeof(*s));
	gsl_sort(s, 1, n);
	st[0] = simpson(x, y, n);
	st[1] = gsl_stats_mean(y, 1, n);
	st[2] = gsl_stats_median_from_sorted_data(s, 1, n);
	st[3] = s[n - 1];
	st[4] = s[0];
	st[5] = st[1] * (double)n;
	st[6] = gsl_stats_quantile_from_sorted_data(s, 1, n, 0.25);
	st[7] = gsl_stats_quantile_from_sorted_data(s, 1, n, 0.75);
	free(s);
}

/* The curve of kind k of a side on the grid x (parametric), or its own
 * points (non-parametric, then *own holds them).  */
static size_t side_curve(const struct mside *s, size_t lo, size_t hi, int k, const double *x,
			 double **own, double **y)
{
	if (k >= MODEL_NKINDS)
		return nonparam_curve(s, lo, hi, k, own, y);
	*own = NULL;
	*y = xmalloc(SAMPLES * sizeof(**y));
	param_curve(s, lo, hi, k, x, SAMPLES, *y);
	return SAMPLES;
}

static void local_statistics(const struct mside *B, size_t blo, size_t bhi, const struct mside *T,
			     size_t tlo, size_t thi, struct check_finding *f)
{
	double rb = 0, rt = 0, bxs, bxe, txs, txe, *x, *bx = NULL, *tx = NULL, *by, *ty, *c[2];
	double rel = 0, no_change = f->threshold < LS_NO_CHANGE ? f->threshold : LS_NO_CHANGE;
	int kb = best_kind(B, blo, bhi, 1, &rb), kt = best_kind(T, tlo, thi, 1, &rt);
	size_t n, nb, nt, w, i, nwin = 0, changed = 0;

	if (kb < 0 || kt < 0) {
		undecided(f, "no model with r^2 above 0 on a side: run postprocessby first");
		return;
	}
	f->base_model = kind_name(kb);
	f->target_model = kind_name(kt);
	f->rate_name = "r_square";
	f->rate = rb < rt ? rb : rt;
	if (f->rate < LS_MIN_R2) {
		undecided(f, "the models fit too poorly to compare (r^2 below 0.15)");
		return;
	}
	interval(B, blo, bhi, kb, &bxs, &bxe);
	interval(T, tlo, thi, kt, &txs, &txe);
	x = grid(bxs, bxe, txs, txe, SAMPLES);
	nb = side_curve(B, blo, bhi, kb, x, &bx, &by);
	nt = side_curve(T, tlo, thi, kt, x, &tx, &ty);
	n = nb < nt ? nb : nt;
	if (bx) /* the baseline's own points give x */
		memcpy(x, bx, n * sizeof(*x));
	c[0] = by;
	c[1] = ty;
	n = keep_finite(x, c, 2, n);
	if (n < 1) {
		undecided(f, "the models have no common x where both are defined");
		goto out;
	}
	f->base = gsl_stats_mean(by, 1, n);
	f->target = gsl_stats_mean(ty, 1, n);
	w = (size_t)(LS_DENSITY * (double)n);
	if (w < 2)
		w = n;
	for (i = 0; i < n; i += w, nwin++) {
		size_t m = i + w <= n ? w : n - i, s;
		double sb[LS_NSTATS], stt[LS_NSTATS], score = 0, wrel = 0;
		window_stats(x + i, by + i, m, sb);
		window_stats(x + i, ty + i, m, stt);
		for (s = 0; s < LS_NSTATS; s++) {
			double r = sb[s] != 0 ? (stt[s] - sb[s]) / sb[s] : 0;
			if (!isfinite(r))
				r = 0;
			wrel += r;
			if (fabs(r) > LS_CHANGE)
				score += r < 0 ? -1 : 1;
			else if (fabs(r) > LS_NO_CHANGE)
				score += r < 0 ? -0.5 : 0.5;
		}
		rel += wrel / LS_NSTATS;
		changed += fabs(score) > 0.5 * LS_NSTATS;
	}
	rel /= (double)nwin;
	f->ratio = 1 + rel;
	f->shape = changed ? "changed in some intervals" : NULL;
	if (fabs(rel) <= no_change)
		f->verdict = CHECK_NO_CHANGE;
	else
		verdict_rel(f, rel, rel);
out:
	free(x);
	free(bx);
	free(tx);
	free(by);
	free(ty);
}

/* --- best-model-order-equality -------------------------------------------- */

/* Perun's order of the forms, slowest growing first.  */
static int order_rank(int kind)
{
	static const int order[] = {MODEL_CONSTANT,  MODEL_LOGARITHMIC, MODEL_LINEAR,
				    MODEL_QUADRATIC, MODEL_POWER,	MODEL_EXPONENTIAL};
	int i;

	for (i = 0; i < 6; i++)
		if (order[i] == kind)
			return i;
	return -1;
}

static void model_order(const struct mside *B, size_t blo, size_t bhi, const struct mside *T,
			size_t tlo, size_t thi, struct check_finding *f)
{
	double rb = 0, rt = 0;
	int kb = best_kind(B, blo, bhi, 0, &rb), kt = best_kind(T, tlo, thi, 0, &rt);

	if (kb < 0 || kt < 0) {
		undecided(f, "no model with r^2 above 0 on a side: run postprocessby "
			     "regression-analysis");
		return;
	}
	f->base_model = kind_name(kb);
	f->target_model = kind_name(kt);
	f->base = rb;
	f->target = rt;
	f->rate_name = "r_square";
	f->rate = rb < rt ? rb : rt;
	f->verdict = order_rank(kt) > order_rank(kb)   ? CHECK_DEGRADATION
		     : order_rank(kt) < order_rank(kb) ? CHECK_OPTIMIZATION
						       : CHECK_NO_CHANGE;
}

/* --- exclusive-time-outliers ---------------------------------------------- */

struct excl {
	const char *uid; /* points into the table it came from */
	int side;	 /* 0 baseline, 1 target */
	double total, calls;
};

static int cmp_excl(const void *a, const void *b)
{
	return strcmp(((const struct excl *)a)->uid, ((const struct excl *)b)->uid);
}

static void add_runs(const struct profile *p, const size_t *idx, size_t n, int side,
		     struct func_table *tabs, struct excl **e, size_t *ne, int *have_self)
{
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		samples_read(&p[idx[i]], NULL, &tabs[i]);
		for (j = 0; j < tabs[i].n; j++) {
			const struct func_samples *fs = &tabs[i].f[j];
			for (k = 0; k < fs->n && !*have_self; k++)
				*have_self = !isnan(fs->exclusive[k]);
			*e = xrealloc(*e, (*ne + 1) * sizeof(**e));
			(*e)[(*ne)++] = (struct excl){fs->uid, side, fs->sum_exclusive,
						      (double)fs->n};
		}
	}
}

static void exclusive_outliers(const struct profile *base, const size_t *bi, size_t nb,
			      const struct profile *target, const size_t *ti, size_t nt,
			      check_threshold_fn thr, void *thr_ctx, struct check_job *job)
{
	struct func_table *tb = xcalloc(nb, sizeof(*tb)), *tt = xcalloc(nt, sizeof(*tt));
	struct excl *e = NULL;
	size_t ne = 0, i, j, nf = 0, nok = 0;
	double *delta, *work, *srt, med, mad, q1, q3, iqr, sd;
	int have_self = 0, *flag;

	add_runs(base, bi, nb, 0, tb, &e, &ne, &have_self);
	add_runs(target, ti, nt, 1, tt, &e, &ne, &have_self);
	if (ne)
		qsort(e, ne, sizeof(*e), cmp_excl);
	/* one finding per function: the mean total of a run on each side */
	job->f = xcalloc(ne ? ne : 1, sizeof(*job->f));
	for (i = 0; i < ne; i = j) {
		struct check_finding *f = &job->f[nf++];
		double tot[2] = {0, 0}, calls[2] = {0, 0};
		int seen[2] = {0, 0};
		for (j = i; j < ne && !strcmp(e[j].uid, e[i].uid); j++) {
			tot[e[j].side] += e[j].total;
			calls[e[j].side] += e[j].calls;
			seen[e[j].side] = 1;
		}
		memset(f, 0, sizeof(*f));
		f->context = xstrdup(e[i].uid);
		f->function = f->context;
		f->metric = have_self ? CHECK_SELF : CHECK_INCLUSIVE;
		f->nbase = nb;
		f->ntarget = nt;
		f->base = tot[0] / (double)nb;
		f->target = tot[1] / (double)nt;
		f->calls_base = calls[0] / (double)nb;
		f->calls_target = calls[1] / (double)nt;
		f->ratio = (f->target + 1) / (f->base + 1);
		f->ci_low = f->ci_high = f->p = f->effect = f->rate = NAN;
		f->threshold = thr(thr_ctx, f->function);
		f->verdict = !seen[0] ? CHECK_NEW : !seen[1] ? CHECK_REMOVED : CHECK_NO_CHANGE;
	}
	job->nf = nf;
	delta = xmalloc((nf ? nf : 1) * sizeof(*delta));
	work = xmalloc((nf ? nf : 1) * sizeof(*work));
	srt = xmalloc((nf ? nf : 1) * sizeof(*srt));
	flag = xcalloc(nf ? nf : 1, sizeof(*flag));
	for (i = 0; i < nf; i++)
		delta[i] = srt[i] = job->f[i].target - job->f[i].base;
	if (nf < 3)
		goto out; /* no outlier among fewer than three */
	gsl_sort(srt, 1, nf);
	med = gsl_stats_median_from_sorted_data(srt, 1, nf);
	mad = gsl_stats_mad0(delta, 1, nf, work);
	q1 = gsl_stats_quantile_from_sorted_data(srt, 1, nf, 0.25);
	q3 = gsl_stats_quantile_from_sorted_data(srt, 1, nf, 0.75);
	iqr = q3 - q1;
	for (i = 0; i < nf; i++) {
		double z = MZS_FACTOR * fabs(delta[i] - med) / (mad > 0 ? mad : 1e-300);
		if (z > MZS_CUTOFF)
			flag[i] = 3; /* severe */
		if (delta[i] < q1 - IQR_CUTOFF * iqr || delta[i] > q3 + IQR_CUTOFF * iqr) {
			if (!flag[i])
				flag[i] = 2;
			job->f[i].rate_name = "IQR multiple";
			job->f[i].rate = iqr > 0 ? (delta[i] > q3 ? delta[i] - q3 : q1 - delta[i]) / iqr
						 : INFINITY;
		}
		if (!flag[i])
			work[nok++] = delta[i];
	}
	sd = nok > 1 ? gsl_stats_sd(work, 1, nok) : NAN;
	for (i = 0; i < nf; i++) {
		struct check_finding *f = &job->f[i];
		double m = sd > 0 ? delta[i] / sd : NAN;
		int past;
		if (!flag[i] && isfinite(m) && fabs(m) > SD_CUTOFF) {
			flag[i] = 1;
			f->rate_name = "stddev multiple";
			f->rate = m;
		}
		if (f->verdict != CHECK_NO_CHANGE || !flag[i])
			continue;
		past = f->ratio >= 1 + f->threshold || f->ratio <= 1 / (1 + f->threshold);
		if (!past)
			continue; /* an outlier, but not by the threshold */
		if (flag[i] == 3)
			f->shape = "severe";
		if (flag[i] >= 2)
			f->verdict = delta[i] > 0 ? CHECK_DEGRADATION : CHECK_OPTIMIZATION;
		else
			undecided(f, delta[i] > 0 ? "maybe a degradation: past 2 standard deviations "
						    "of the other functions' deltas, no outlier"
						  : "maybe an optimization: past 2 standard "
						    "deviations of the other functions' deltas, no "
						    "outlier");
	}
out:
	free(delta);
	free(work);
	free(srt);
	free(flag);
	free(e);
	for (i = 0; i < nb; i++)
		samples_release(&tb[i]);
	for (i = 0; i < nt; i++)
		samples_release(&tt[i]);
	free(tb);
	free(tt);
}

/* --- one job ------------------------------------------------------------- */

int check_models_job(const struct profile *base, const size_t *bi, size_t nb,
		     const struct profile *target, const size_t *ti, size_t nt,
		     const struct check_opts *o, check_threshold_fn thr, void *thr_ctx,
		     struct check_job *job)
{
	struct mside B, T;
	size_t i, j, blo, bhi;

	if (o->method == CHECK_EXCLUSIVE_TIME_OUTLIERS) {
		exclusive_outliers(base, bi, nb, target, ti, nt, thr, thr_ctx, job);
		check_job_finish(job);
		return 0;
	}
	read_side(base, bi, nb, &B);
	read_side(target, ti, nt, &T);
	for (i = 0; i < T.n; i = j) {
		struct check_finding f;
		for (j = i; j < T.n && !strcmp(T.m[j].uid, T.m[i].uid); j++)
			;
		uid_range(&B, T.m[i].uid, &blo, &bhi);
		if (blo == bhi)
			continue;
		memset(&f, 0, sizeof(f));
		f.context = xstrdup(T.m[i].uid);
		f.function = f.context;
		f.metric = CHECK_INCLUSIVE;
		f.nbase = nb;
		f.ntarget = nt;
		f.ratio = f.ci_low = f.ci_high = f.p = f.effect = f.rate = f.base = f.target = NAN;
		f.calls_base = f.calls_target = NAN;
		f.threshold = thr(thr_ctx, f.function);
		if (o->method == CHECK_MODEL_ORDER)
			model_order(&B, blo, bhi, &T, i, j, &f);
		else if (o->method == CHECK_LOCAL_STATISTICS)
			local_statistics(&B, blo, bhi, &T, i, j, &f);
		else
			regression(o->method, &B, blo, bhi, &T, i, j, &f);
		job->f = xrealloc(job->f, (job->nf + 1) * sizeof(*job->f));
		job->f[job->nf++] = f;
	}
	free(B.m);
	free(T.m);
	check_job_finish(job);
	return 0;
}
