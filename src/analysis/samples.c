/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Call times per function, read through profile_each_resource().  */
#include "config.h"

#define PR_FMT "samples"

#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/json-read.h"
#include "analysis/robust.h"
#include "analysis/samples.h"
#include "profile/profile.h"
#include "util/log.h"
#include "util/strbuf.h"

struct reader {
	struct func_table *t;
	const char *xfield;
	size_t *slot; /* open addressing: index + 1 into t->f, 0 empty */
	size_t nslots;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void rehash(struct reader *r)
{
	size_t n = r->nslots ? r->nslots * 2 : 64, i;

	free(r->slot);
	r->slot = xcalloc(n, sizeof(*r->slot));
	r->nslots = n;
	for (i = 0; i < r->t->n; i++) {
		size_t h = (size_t)hash_str(r->t->f[i].uid) & (n - 1);
		while (r->slot[h])
			h = (h + 1) & (n - 1);
		r->slot[h] = i + 1;
	}
}

static struct func_samples *lookup(struct reader *r, const char *uid)
{
	size_t h, n;
	struct func_samples *f;

	if (2 * (r->t->n + 1) > r->nslots)
		rehash(r);
	n = r->nslots;
	for (h = (size_t)hash_str(uid) & (n - 1); r->slot[h]; h = (h + 1) & (n - 1))
		if (!strcmp(r->t->f[r->slot[h] - 1].uid, uid))
			return &r->t->f[r->slot[h] - 1];
	r->t->f = xrealloc(r->t->f, (r->t->n + 1) * sizeof(*r->t->f));
	f = &r->t->f[r->t->n];
	memset(f, 0, sizeof(*f));
	f->uid = xstrdup(uid);
	r->slot[h] = ++r->t->n;
	return f;
}

static void push(struct func_samples *f, int with_x, double a, double e, double x)
{
	if (f->n == f->alloc) {
		f->alloc = f->alloc ? 2 * f->alloc : 16;
		f->amount = xrealloc(f->amount, f->alloc * sizeof(*f->amount));
		f->exclusive = xrealloc(f->exclusive, f->alloc * sizeof(*f->exclusive));
		if (with_x)
			f->x = xrealloc(f->x, f->alloc * sizeof(*f->x));
	}
	f->amount[f->n] = a;
	f->exclusive[f->n] = e;
	if (with_x)
		f->x[f->n] = x;
	f->n++;
}

/* A flattened key (seeds/001): nested objects joined by ':'.  */
static double field(struct json_object *r, const char *key)
{
	char buf[256], *save = NULL, *k;
	struct json_object *o = r;
	double v;

	if (!key)
		return NAN;
	if (!strchr(key, ':'))
		return jr_number(jr_get(r, key), &v) ? v : NAN;
	snprintf(buf, sizeof(buf), "%s", key);
	for (k = strtok_r(buf, ":", &save); k && o; k = strtok_r(NULL, ":", &save))
		o = jr_get(o, k);
	return jr_number(o, &v) ? v : NAN;
}

static void one(void *ctx, struct json_object *res)
{
	struct reader *r = ctx;
	struct json_object *uid = jr_get(res, "uid"), *sub = jr_get(res, "subtype"), *hist;
	const char *name = NULL;
	struct func_samples *f;
	double a, e, x;

	if (sub && json_object_is_type(sub, json_type_string) &&
	    !strcmp(json_object_get_string(sub), "point"))
		return;
	if (uid && json_object_is_type(uid, json_type_string))
		name = json_object_get_string(uid);
	else if (jr_get(uid, "function") &&
		 json_object_is_type(jr_get(uid, "function"), json_type_string))
		name = json_object_get_string(jr_get(uid, "function"));
	if (!name || !jr_number(jr_get(res, "amount"), &a))
		return;
	f = lookup(r, name);
	hist = jr_get(res, "log2_hist");
	if (hist && json_object_is_type(hist, json_type_array)) {
		double lo = 0, hi = INFINITY;
		size_t b;
		jr_number(jr_get(res, "min"), &lo);
		jr_number(jr_get(res, "max"), &hi);
		if (!f->binned || lo < f->hist_min)
			f->hist_min = lo;
		if (!f->binned || hi > f->hist_max)
			f->hist_max = hi;
		for (b = 0; b < json_object_array_length(hist); b++) {
			double c = 0, mid = b ? sqrt((double)(1ull << (b < 62 ? b : 62)) *
						     (double)(1ull << (b < 62 ? b + 1 : 63)))
					      : 0.5;
			uint64_t k;
			jr_number(json_object_array_get_idx(hist, b), &c);
			if (b < 64)
				f->hist[b] += (uint64_t)c;
			mid = mid < lo ? lo : mid > hi ? hi : mid;
			for (k = 0; k < (uint64_t)c; k++)
				push(f, r->xfield != NULL, mid, NAN, NAN);
		}
		f->binned = 1;
		r->t->binned = 1;
		return;
	}
	e = field(res, "exclusive");
	x = field(res, r->xfield);
	push(f, r->xfield != NULL, a, e, x);
}

static int cmp_uid(const void *a, const void *b)
{
	return strcmp(((const struct func_samples *)a)->uid, ((const struct func_samples *)b)->uid);
}

void samples_read(const struct profile *p, const char *xfield, struct func_table *t)
{
	struct reader r = {t, xfield, NULL, 0};
	size_t i, j;
	double *tmp = NULL;
	size_t tmpn = 0;

	memset(t, 0, sizeof(*t));
	profile_each_resource(p, one, &r);
	free(r.slot);
	qsort(t->f, t->n, sizeof(*t->f), cmp_uid);
	for (i = 0; i < t->n; i++) {
		struct func_samples *f = &t->f[i];
		if (f->n > tmpn) {
			tmpn = f->n;
			tmp = xrealloc(tmp, tmpn * sizeof(*tmp));
		}
		f->sum = f->sum_exclusive = 0;
		for (j = 0; j < f->n; j++) {
			f->sum += f->amount[j];
			f->sum_exclusive += isnan(f->exclusive[j]) ? f->amount[j] : f->exclusive[j];
			tmp[j] = f->amount[j];
		}
		f->mean = f->n ? f->sum / (double)f->n : 0;
		f->median = stats_median(tmp, f->n);
		f->p95 = stats_quantile_sorted(tmp, f->n, 0.95);
		if (f->binned) {
			f->median = log2_hist_quantile(f->hist, 64, 0.5, f->hist_min, f->hist_max);
			f->p95 = log2_hist_quantile(f->hist, 64, 0.95, f->hist_min, f->hist_max);
		}
		t->total_exclusive += f->sum_exclusive;
	}
	free(tmp);
}

void samples_release(struct func_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->f[i].uid);
		free(t->f[i].amount);
		free(t->f[i].exclusive);
		free(t->f[i].x);
	}
	free(t->f);
	memset(t, 0, sizeof(*t));
}

struct func_samples *samples_find(const struct func_table *t, const char *uid)
{
	struct func_samples key;

	memset(&key, 0, sizeof(key));
	key.uid = (char *)uid;
	return t->n ? bsearch(&key, t->f, t->n, sizeof(*t->f), cmp_uid) : NULL;
}

static double change_of(const struct samples_pair *r)
{
	if (isnan(r->ratio))
		return -1;
	if (r->ratio <= 0 || isinf(r->ratio))
		return 1e300;
	return fabs(log(r->ratio));
}

static int cmp_pair(const void *x, const void *y)
{
	double a = change_of(x), b = change_of(y);

	if (a != b)
		return (a < b) - (a > b);
	return strcmp(((const struct samples_pair *)x)->uid, ((const struct samples_pair *)y)->uid);
}

struct samples_pair *samples_pair(const struct func_table *a, const struct func_table *b,
				  size_t *n)
{
	struct samples_pair *rows = xcalloc(a->n + b->n + 1, sizeof(*rows));
	size_t i;

	*n = 0;
	for (i = 0; i < a->n; i++) {
		struct samples_pair *r = &rows[(*n)++];
		r->uid = a->f[i].uid;
		r->a = &a->f[i];
		r->b = samples_find(b, r->uid);
	}
	for (i = 0; i < b->n; i++)
		if (!samples_find(a, b->f[i].uid)) {
			rows[*n].uid = b->f[i].uid;
			rows[(*n)++].b = &b->f[i];
		}
	for (i = 0; i < *n; i++) {
		struct samples_pair *r = &rows[i];
		r->ratio = !r->a || !r->b     ? NAN
			   : r->a->median > 0 ? r->b->median / r->a->median
			   : r->b->median > 0 ? INFINITY
					      : 1;
	}
	qsort(rows, *n, sizeof(*rows), cmp_pair);
	return rows;
}
