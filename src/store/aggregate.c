/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "aggregate"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "store/aggregate.h"
#include "util/log.h"

struct each_ctx {
	calls_fn fn;
	void *ctx;
};

static uint64_t field_u64(struct json_object *r, const char *key, int *ok)
{
	struct json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(r, key, &v) ||
	    (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))) {
		*ok = 0;
		return 0;
	}
	x = json_object_get_int64(v);
	return x < 0 ? 0 : (uint64_t)x;
}

static void each_resource(void *vctx, struct json_object *r)
{
	struct each_ctx *c = vctx;
	struct json_object *uid;
	uint64_t amount, excl;
	int ok = 1;

	if (!json_object_object_get_ex(r, "uid", &uid) ||
	    !json_object_is_type(uid, json_type_string))
		return;
	amount = field_u64(r, "amount", &ok);
	if (!ok)
		return;
	excl = field_u64(r, "exclusive", &ok);
	if (!ok)
		excl = amount;
	c->fn(c->ctx, json_object_get_string(uid), amount, excl);
}

void calls_each(const struct profile *p, calls_fn fn, void *ctx)
{
	struct each_ctx c = {fn, ctx};

	/* per-call and compact profiles alike */
	profile_each_resource(p, each_resource, &c);
}

void agg_init(struct agg *a, const char *release, const char *shard, int64_t timebox,
	      int64_t box_seconds)
{
	memset(a, 0, sizeof(*a));
	a->release = xstrdup(release ? release : "");
	a->shard = xstrdup(shard ? shard : "");
	a->timebox = timebox;
	a->box_seconds = box_seconds;
}

void agg_funcs_free(struct agg_func *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

void agg_input_release(struct agg_input *in)
{
	agg_funcs_free(in->f, in->nf);
	in->f = NULL;
	in->nf = 0;
}

void agg_release(struct agg *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		agg_input_release(&a->in[i]);
	free(a->in);
	free(a->release);
	free(a->shard);
	memset(a, 0, sizeof(*a));
}

static size_t bucket_of(uint64_t v)
{
	size_t b = 0;

	while (v > 1 && b < AGG_BUCKETS - 1) {
		v >>= 1;
		b++;
	}
	return b;
}

void agg_func_add(struct agg_func *d, const struct agg_func *s)
{
	size_t b;

	if (!s->calls)
		return;
	d->min = d->calls ? (s->min < d->min ? s->min : d->min) : s->min;
	d->max = d->calls ? (s->max > d->max ? s->max : d->max) : s->max;
	d->calls += s->calls;
	d->total += s->total;
	d->exclusive += s->exclusive;
	for (b = 0; b < AGG_BUCKETS; b++)
		d->hist[b] += s->hist[b];
}

struct build {
	struct agg_func *f;
	size_t n, alloc;
};

static int cmp_func(const void *a, const void *b)
{
	return strcmp(((const struct agg_func *)a)->name, ((const struct agg_func *)b)->name);
}

static struct agg_func *find_or_add(struct build *b, const char *name)
{
	size_t i;

	/* linear from the end: calls of one function come in runs */
	for (i = b->n; i-- > 0;)
		if (!strcmp(b->f[i].name, name))
			return &b->f[i];
	if (b->n == b->alloc) {
		b->alloc = b->alloc ? 2 * b->alloc : 16;
		b->f = xrealloc(b->f, b->alloc * sizeof(*b->f));
	}
	memset(&b->f[b->n], 0, sizeof(b->f[0]));
	b->f[b->n].name = xstrdup(name);
	return &b->f[b->n++];
}

static void add_call(void *ctx, const char *uid, uint64_t amount, uint64_t exclusive)
{
	struct agg_func one, *f = find_or_add(ctx, uid);

	memset(&one, 0, sizeof(one));
	one.calls = 1;
	one.total = amount;
	one.exclusive = exclusive;
	one.min = one.max = amount;
	one.hist[bucket_of(amount)] = 1;
	agg_func_add(f, &one);
}

int agg_input_from_profile(struct agg_input *in, const struct profile *p, const char *id,
			   int64_t time)
{
	struct build b = {NULL, 0, 0};

	memset(in, 0, sizeof(*in));
	snprintf(in->id, sizeof(in->id), "%s", id);
	in->time = time;
	calls_each(p, add_call, &b);
	if (b.n)
		qsort(b.f, b.n, sizeof(*b.f), cmp_func);
	in->f = b.f;
	in->nf = b.n;
	return 0;
}

static void input_copy(struct agg_input *d, const struct agg_input *s)
{
	size_t i;

	*d = *s;
	d->f = xcalloc(s->nf ? s->nf : 1, sizeof(*d->f));
	for (i = 0; i < s->nf; i++) {
		d->f[i] = s->f[i];
		d->f[i].name = xstrdup(s->f[i].name);
	}
}

int agg_add(struct agg *a, const struct agg_input *in)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(a->in[mid].id, in->id);
		if (c == 0)
			return 1; /* content-addressed: the same row */
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	a->in = xrealloc(a->in, (a->n + 1) * sizeof(*a->in));
	memmove(&a->in[lo + 1], &a->in[lo], (a->n - lo) * sizeof(*a->in));
	input_copy(&a->in[lo], in);
	a->n++;
	return 0;
}

void agg_merge(struct agg *dst, const struct agg *src)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		agg_add(dst, &src->in[i]);
}

size_t agg_totals(const struct agg *a, struct agg_func **out)
{
	struct build b = {NULL, 0, 0};
	size_t i, j;

	for (i = 0; i < a->n; i++)
		for (j = 0; j < a->in[i].nf; j++)
			agg_func_add(find_or_add(&b, a->in[i].f[j].name), &a->in[i].f[j]);
	if (b.n)
		qsort(b.f, b.n, sizeof(*b.f), cmp_func);
	*out = b.f;
	return b.n;
}

static void func_json(struct strbuf *sb, const struct agg_func *f)
{
	size_t b, k = 0;

	strbuf_add_json_str(sb, f->name);
	strbuf_addf(sb,
		    ":{\"calls\":%llu,\"total\":%llu,\"exclusive\":%llu,\"min\":%llu,"
		    "\"max\":%llu,\"hist\":{",
		    (unsigned long long)f->calls, (unsigned long long)f->total,
		    (unsigned long long)f->exclusive, (unsigned long long)f->min,
		    (unsigned long long)f->max);
	for (b = 0; b < AGG_BUCKETS; b++)
		if (f->hist[b])
			strbuf_addf(sb, "%s\"%zu\":%llu", k++ ? "," : "", b,
				    (unsigned long long)f->hist[b]);
	strbuf_addstr(sb, "}}");
}

void agg_to_json(const struct agg *a, struct strbuf *out)
{
	struct agg_func *tot;
	size_t i, j, nt = agg_totals(a, &tot);

	strbuf_addstr(out, "{\"perun_aggregate\":1,\"release\":");
	strbuf_add_json_str(out, a->release);
	strbuf_addstr(out, ",\"shard\":");
	strbuf_add_json_str(out, a->shard);
	strbuf_addf(out, ",\"timebox\":%lld,\"box_seconds\":%lld,\"inputs\":{",
		    (long long)a->timebox, (long long)a->box_seconds);
	for (i = 0; i < a->n; i++) {
		strbuf_addf(out, "%s\"%s\":{\"time\":%lld,\"functions\":{", i ? "," : "",
			    a->in[i].id, (long long)a->in[i].time);
		for (j = 0; j < a->in[i].nf; j++) {
			if (j)
				strbuf_addch(out, ',');
			func_json(out, &a->in[i].f[j]);
		}
		strbuf_addstr(out, "}}");
	}
	strbuf_addstr(out, "},\"functions\":{");
	for (j = 0; j < nt; j++) {
		if (j)
			strbuf_addch(out, ',');
		func_json(out, &tot[j]);
	}
	strbuf_addstr(out, "}}\n");
	agg_funcs_free(tot, nt);
}

int agg_is_aggregate(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i + 17 <= len && i < 64; i++)
		if (!memcmp(text + i, "\"perun_aggregate\"", 17))
			return 1;
	return 0;
}

static int get_u64(struct json_object *o, const char *key, uint64_t *v)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_int) ||
	    json_object_get_int64(x) < 0)
		return -1;
	*v = (uint64_t)json_object_get_int64(x);
	return 0;
}

static int parse_funcs(struct json_object *fs, struct agg_input *in)
{
	size_t n = 0;

	if (!json_object_is_type(fs, json_type_object))
		return -1;
	in->f = xcalloc((size_t)json_object_object_length(fs) + 1, sizeof(*in->f));
	json_object_object_foreach(fs, name, o)
	{
		struct agg_func *f = &in->f[n];
		struct json_object *h;
		f->name = xstrdup(name);
		in->nf = ++n;
		if (get_u64(o, "calls", &f->calls) || get_u64(o, "total", &f->total) ||
		    get_u64(o, "exclusive", &f->exclusive) || get_u64(o, "min", &f->min) ||
		    get_u64(o, "max", &f->max) || !json_object_object_get_ex(o, "hist", &h) ||
		    !json_object_is_type(h, json_type_object))
			return -1;
		json_object_object_foreach(h, bs, bv)
		{
			char *end;
			unsigned long b = strtoul(bs, &end, 10);
			if (*end || b >= AGG_BUCKETS || !json_object_is_type(bv, json_type_int))
				return -1;
			f->hist[b] = (uint64_t)json_object_get_int64(bv);
		}
	}
	qsort(in->f, in->nf, sizeof(*in->f), cmp_func);
	return 0;
}

int agg_parse(struct agg *a, const char *text, size_t len, const char *what)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = json_tokener_parse_ex(tok, text, (int)len), *v, *ins;
	int ret = -1;

	json_tokener_free(tok);
	agg_init(a, "", "", 0, 0);
	if (!root || !json_object_object_get_ex(root, "perun_aggregate", &v) ||
	    json_object_get_int(v) != 1) {
		pr_error("%s: not a perun aggregate (version 1)", what);
		goto out;
	}
	if (!json_object_object_get_ex(root, "release", &v) ||
	    !json_object_is_type(v, json_type_string))
		goto bad;
	free(a->release);
	a->release = xstrdup(json_object_get_string(v));
	if (!json_object_object_get_ex(root, "shard", &v) ||
	    !json_object_is_type(v, json_type_string))
		goto bad;
	free(a->shard);
	a->shard = xstrdup(json_object_get_string(v));
	if (!json_object_object_get_ex(root, "timebox", &v) ||
	    !json_object_is_type(v, json_type_int))
		goto bad;
	a->timebox = json_object_get_int64(v);
	if (!json_object_object_get_ex(root, "box_seconds", &v) ||
	    !json_object_is_type(v, json_type_int))
		goto bad;
	a->box_seconds = json_object_get_int64(v);
	if (!json_object_object_get_ex(root, "inputs", &ins) ||
	    !json_object_is_type(ins, json_type_object))
		goto bad;
	{
		json_object_object_foreach(ins, id, o)
		{
			struct agg_input in;
			struct json_object *fs, *t;
			memset(&in, 0, sizeof(in));
			if (strlen(id) != SHA1_HEXSZ || !json_object_object_get_ex(o, "time", &t) ||
			    !json_object_object_get_ex(o, "functions", &fs))
				goto bad;
			snprintf(in.id, sizeof(in.id), "%s", id);
			in.time = json_object_get_int64(t);
			if (parse_funcs(fs, &in) < 0) {
				agg_input_release(&in);
				goto bad;
			}
			agg_add(a, &in);
			agg_input_release(&in);
		}
	}
	ret = 0;
	goto out;
bad:
	pr_error("%s: a perun aggregate with missing or bad fields (damaged): aggregate its "
		 "profiles again",
		 what);
out:
	if (ret < 0)
		agg_release(a);
	json_object_put(root);
	return ret;
}

int64_t agg_timebox(int64_t t, int64_t box_seconds)
{
	int64_t r;

	if (box_seconds <= 0)
		return t;
	r = t % box_seconds;
	return t - (r < 0 ? r + box_seconds : r);
}

int agg_valid_id(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 200 || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] == '/' || (unsigned char)s[i] < 0x21 || s[i] == 0x7f)
			return 0;
	return 1;
}
