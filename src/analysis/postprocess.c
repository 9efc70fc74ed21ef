/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Postprocessors: fitting models into a profile (analysis/postprocess.h).  */
#include "config.h"

#define PR_FMT "postprocess"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/postprocess.h"
#include "analysis/samples.h"
#include "profile/profile.h"
#include "util/log.h"
#include "util/number.h"
#include "util/strbuf.h"

static const char *const method_names[] = {"regression-analysis", "regressogram",
					   "moving-average"};
/* seeds/001's names in the postprocessors region */
static const char *const perun_names[] = {"regression_analysis", "regressogram",
					  "moving_average"};

int pp_method_parse(const char *s)
{
	int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(s, method_names[i]) || !strcmp(s, perun_names[i]))
			return i;
	return -1;
}

const char *pp_method_name(enum pp_method m)
{
	return method_names[m];
}

const char *pp_profile_name(enum pp_method m)
{
	return perun_names[m];
}

void pp_opts_init(struct pp_opts *o, enum pp_method m)
{
	memset(o, 0, sizeof(*o));
	o->method = m;
	o->x = "call-order";
	o->ma_kind = MA_SMA;
}

/* bins and window: beyond a million neither means anything, and bins are
 * allocated (18446744073709551615 overflowed calloc's count * size).  */
#define PP_SIZE_MAX 1000000

/* -1 with err filled: what is wrong, for the caller to say.  */
static int bad(struct strbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct strbuf *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(err, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_size(const char *opt, const char *v, size_t *out, struct strbuf *err)
{
	uint64_t n;

	if (parse_count(v, PP_SIZE_MAX, &n) < 0 || !n)
		return bad(err, "%s wants a number from 1 to %d, not '%s'", opt, PP_SIZE_MAX, v);
	*out = (size_t)n;
	return 0;
}

static int add_models(struct pp_opts *o, const char *v, struct strbuf *err)
{
	char *copy = xstrdup(v), *save = NULL, *t;
	int k, i, dup;

	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if ((k = model_kind_parse(t)) < 0) {
			bad(err, "unknown model '%s': constant, linear, logarithmic, quadratic, "
				 "power or exponential",
				 t);
			free(copy);
			return -1;
		}
		for (i = 0, dup = 0; i < o->nmodels; i++)
			dup |= o->models[i] == k;
		if (!dup && o->nmodels < MODEL_NKINDS)
			o->models[o->nmodels++] = k;
	}
	free(copy);
	return 0;
}

static int want(const char *key, const char *v, const char *only, struct strbuf *err)
{
	if (strcmp(v, only))
		return bad(err, "%s '%s': only '%s' is supported", key, v, only);
	return 0;
}

int pp_opts_set(struct pp_opts *o, const char *key, const char *v, const char *shown,
		struct strbuf *err)
{
	int ra = o->method == PP_REGRESSION_ANALYSIS, rg = o->method == PP_REGRESSOGRAM,
	    ma = o->method == PP_MOVING_AVERAGE;

	if (!strcmp(key, "x") || !strcmp(key, "per_key")) {
		o->x = v;
	} else if (!strcmp(key, "of_key")) {
		return want(shown, v, "amount", err);
	} else if (ra && (!strcmp(key, "models") || !strcmp(key, "regression_models"))) {
		return add_models(o, v, err);
	} else if (ra && !strcmp(key, "method")) {
		return want(shown, v, "full", err);
	} else if (ra && !strcmp(key, "steps")) {
		return 0; /* steps of Perun's iterative method; "full" fits all */
	} else if (rg && (!strcmp(key, "bins") || !strcmp(key, "bucket_number"))) {
		return parse_size(shown, v, &o->bins, err);
	} else if (rg && !strcmp(key, "statistic_function")) {
		return want(shown, v, "mean", err);
	} else if (rg && !strcmp(key, "bucket_method")) {
		return want(shown, v, "auto", err);
	} else if (ma && (!strcmp(key, "window") || !strcmp(key, "window_width"))) {
		return parse_size(shown, v, &o->window, err);
	} else if (ma && (!strcmp(key, "kind") || !strcmp(key, "moving_method"))) {
		if ((o->ma_kind = ma_kind_parse(v)) < 0)
			return bad(err, "unknown %s '%s': sma, smm or ema", shown, v);
	} else if (ma && !strcmp(key, "decay")) {
		if (parse_decimal(v, &o->decay) < 0 || !(o->decay > 0 && o->decay < 1))
			return bad(err, "%s wants a number in (0, 1), not '%s'", shown, v);
	} else if (ma && !strcmp(key, "right-aligned")) {
		o->right_aligned = 1;
	} else if (ma && !strcmp(key, "center")) {
		if (!strcmp(v, "true") || !strcmp(v, "yes"))
			o->right_aligned = 0;
		else if (!strcmp(v, "false") || !strcmp(v, "no"))
			o->right_aligned = 1;
		else
			return bad(err, "%s wants true or false, not '%s'", shown, v);
	} else {
		return bad(err, "%s takes no option '%s'", method_names[o->method], shown);
	}
	return 0;
}

static struct json_object *num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static struct json_object *coeffs(const struct model *m)
{
	struct json_object *a = json_object_new_array();
	size_t i, n = m->ncoeffs < 2 ? 2 : m->ncoeffs; /* seeds/001: constant has b0, b1 = 0 */

	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_new_object();
		char name[24];
		snprintf(name, sizeof(name), "b%zu", i);
		json_object_object_add(c, "name", json_object_new_string(name));
		json_object_object_add(c, "value", json_object_new_double(m->b[i]));
		json_object_array_add(a, c);
	}
	return a;
}

static struct json_object *record(const char *uid, const char *model, const char *method, double r2,
				  double xs, double xe)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "uid", json_object_new_string(uid));
	json_object_object_add(o, "model", json_object_new_string(model));
	json_object_object_add(o, "method", json_object_new_string(method));
	json_object_object_add(o, "r_square", num(r2));
	json_object_object_add(o, "x_interval_start", num(xs));
	json_object_object_add(o, "x_interval_end", num(xe));
	return o;
}

struct xy {
	double x, y;
};

static int cmp_xy(const void *a, const void *b)
{
	double p = ((const struct xy *)a)->x, q = ((const struct xy *)b)->x;

	return (p > q) - (p < q);
}

/* Fits one function; adds its records to models.  -1 on failure.  */
static int fit_function(const struct pp_opts *o, const struct func_samples *f,
			struct json_object *models)
{
	struct xy *pt = xmalloc((f->n ? f->n : 1) * sizeof(*pt));
	double *x = xmalloc((f->n ? f->n : 1) * sizeof(*x)),
	       *y = xmalloc((f->n ? f->n : 1) * sizeof(*y));
	size_t n = 0, i;
	int ret = 0;

	for (i = 0; i < f->n; i++)
		if (isfinite(f->x[i]) && isfinite(f->amount[i]))
			pt[n++] = (struct xy){f->x[i], f->amount[i]};
	qsort(pt, n, sizeof(*pt), cmp_xy);
	for (i = 0; i < n; i++) {
		x[i] = pt[i].x;
		y[i] = pt[i].y;
	}
	if (n < 2)
		goto out;
	if (o->method == PP_REGRESSION_ANALYSIS) {
		int k;
		for (k = 0; k < o->nmodels; k++) {
			struct model m;
			struct json_object *r;
			if (model_fit((enum model_kind)o->models[k], x, y, n, &m))
				continue;
			r = record(f->uid, model_name(m.kind), "full", m.r2, m.x_start, m.x_end);
			json_object_object_add(r, "coeffs", coeffs(&m));
			json_object_array_add(models, r);
		}
	} else if (o->method == PP_REGRESSOGRAM) {
		struct regressogram rg;
		struct json_object *r, *b;
		if (regressogram_fit(x, y, n, o->bins, &rg) < 0) {
			ret = -1;
			goto out;
		}
		r = record(f->uid, "regressogram", "regressogram", rg.r2, rg.x_start, rg.x_end);
		json_object_object_add(r, "statistic_function", json_object_new_string("mean"));
		json_object_object_add(r, "bins", json_object_new_int64((int64_t)rg.nbins));
		b = json_object_new_array();
		for (i = 0; i < rg.nbins; i++)
			json_object_array_add(b, num(rg.value[i]));
		json_object_object_add(r, "bucket_stats", b);
		json_object_array_add(models, r);
		regressogram_release(&rg);
	} else {
		struct moving_average ma;
		struct json_object *r, *b;
		if (moving_average_fit(y, n, (enum ma_kind)o->ma_kind, o->window, !o->right_aligned,
				       o->decay, &ma) < 0) {
			ret = -1;
			goto out;
		}
		r = record(f->uid, "moving_average", ma_kind_name(ma.kind), ma.r2, x[0], x[n - 1]);
		json_object_object_add(r, "window_width",
				       json_object_new_int64((int64_t)ma.window));
		json_object_object_add(r, "centered", json_object_new_boolean(ma.centered));
		if (ma.kind == MA_EMA)
			json_object_object_add(r, "decay", json_object_new_double(ma.decay));
		b = json_object_new_array();
		for (i = 0; i < ma.n; i++)
			json_object_array_add(b, num(ma.value[i]));
		json_object_object_add(r, "bucket_stats", b);
		json_object_array_add(models, r);
		moving_average_release(&ma);
	}
out:
	free(pt);
	free(x);
	free(y);
	return ret;
}

static struct json_object *params(const struct pp_opts *o)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "x", json_object_new_string(o->x));
	if (o->method == PP_REGRESSION_ANALYSIS) {
		struct json_object *m = json_object_new_array();
		int k;
		json_object_object_add(p, "method", json_object_new_string("full"));
		for (k = 0; k < o->nmodels; k++)
			json_object_array_add(m, json_object_new_string(model_name(o->models[k])));
		json_object_object_add(p, "models", m);
	} else if (o->method == PP_REGRESSOGRAM) {
		json_object_object_add(p, "bins",
				       o->bins ? json_object_new_int64((int64_t)o->bins)
					       : json_object_new_string("auto"));
		json_object_object_add(p, "bin_rule",
				       json_object_new_string("max(sturges, freedman-diaconis)"));
		json_object_object_add(p, "statistic_function", json_object_new_string("mean"));
	} else {
		json_object_object_add(p, "kind", json_object_new_string(ma_kind_name(o->ma_kind)));
		json_object_object_add(p, "window",
				       o->window ? json_object_new_int64((int64_t)o->window)
						 : json_object_new_string("auto"));
		json_object_object_add(
		    p, "centered",
		    json_object_new_boolean(!o->right_aligned && o->ma_kind != MA_EMA));
		if (o->ma_kind == MA_EMA && o->decay > 0)
			json_object_object_add(p, "decay", json_object_new_double(o->decay));
	}
	return p;
}

int postprocess_profile(struct profile *p, const struct pp_opts *o, const char *what,
			size_t *nmodels, size_t *nfuncs)
{
	struct pp_opts all = *o;
	struct func_table t = {NULL, 0, 0, 0};
	struct json_object *snaps, *snap0, *models, *pp, *entry;
	size_t i, j, nx = 0;
	int ret = -1;

	if (all.method == PP_REGRESSION_ANALYSIS && !all.nmodels)
		for (all.nmodels = 0; all.nmodels < MODEL_NKINDS; all.nmodels++)
			all.models[all.nmodels] = all.nmodels;
	samples_read(p, all.x, &t);
	for (i = 0; i < t.n; i++)
		for (j = 0; j < t.f[i].n; j++)
			nx += isfinite(t.f[i].x[j]);
	if (!nx) {
		pr_error("%s: no call has a numeric '%s' to fit against: name another field "
			 "(perun show PROFILE --format json shows the resources)",
			 what, all.x);
		goto out;
	}
	if (!json_object_object_get_ex(p->root, "snapshots", &snaps) ||
	    !json_object_is_type(snaps, json_type_array)) {
		snaps = json_object_new_array();
		json_object_object_add(p->root, "snapshots", snaps);
	}
	if (!json_object_array_length(snaps)) {
		snap0 = json_object_new_object();
		json_object_object_add(snap0, "resources", json_object_new_array());
		json_object_array_add(snaps, snap0);
	}
	snap0 = json_object_array_get_idx(snaps, 0);
	/* seeds/001 keeps models per snapshot; every call is fitted together, so
	 * they go to the first one */
	if (!json_object_object_get_ex(snap0, "models", &models) ||
	    !json_object_is_type(models, json_type_array)) {
		models = json_object_new_array();
		json_object_object_add(snap0, "models", models);
	}
	for (i = 0; i < t.n; i++)
		if (fit_function(&all, &t.f[i], models) < 0)
			goto out;
	if (!json_object_object_get_ex(p->root, "postprocessors", &pp) ||
	    !json_object_is_type(pp, json_type_array)) {
		pp = json_object_new_array();
		json_object_object_add(p->root, "postprocessors", pp);
	}
	entry = json_object_new_object();
	json_object_object_add(entry, "name", json_object_new_string(pp_profile_name(all.method)));
	json_object_object_add(entry, "params", params(&all));
	json_object_array_add(pp, entry);
	*nmodels = json_object_array_length(models);
	*nfuncs = t.n;
	ret = 0;
out:
	samples_release(&t);
	return ret;
}
