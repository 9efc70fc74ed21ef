/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "profile"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/compact.h"
#include "profile/processes.h"
#include "profile/profile.h"
#include "profile/writer.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/quantile.h"

struct profile_calls {
	int state;		/* 0 not decoded yet, 1 decoded, -1 bad */
	struct compact_call *v;	/* in the order of the per-call form */
	size_t n;
	const char **names;	/* uids, into root */
	size_t nnames;
};

int profile_parse(struct profile *p, const char *text, size_t len, const char *what)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	enum json_tokener_error err;

	p->calls = NULL;
	p->view = NULL;
	p->root = json_tokener_parse_ex(tok, text, (int)len);
	err = json_tokener_get_error(tok);
	if (!p->root || err != json_tokener_success) {
		pr_error("%s: not a JSON profile: %s at byte %zu", what,
			 json_tokener_error_desc(err == json_tokener_continue ? json_tokener_error_parse_eof : err),
			 (size_t)json_tokener_get_parse_end(tok));
		json_object_put(p->root);
		p->root = NULL;
		json_tokener_free(tok);
		return -1;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(p->root, json_type_object)) {
		json_object_put(p->root);
		p->root = NULL;
		return pr_error("%s: a profile is a JSON object", what);
	}
	p->calls = xcalloc(1, sizeof(*p->calls));
	return 0;
}

int profile_load(struct profile *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	p->root = NULL;
	p->calls = NULL;
	p->view = NULL;
	if (fs_read_regular(&sb, path) < 0) {
		strbuf_release(&sb);
		return errno == EINVAL ? -1 : pr_error_errno("%s", path);
	}
	ret = profile_read(p, sb.buf, sb.len, path);
	strbuf_release(&sb);
	return ret;
}

int profile_read(struct profile *p, const char *text, size_t len, const char *what)
{
	if (profile_parse(p, text, len, what) < 0)
		return -1;
	if (profile_validate(p, what) < 0) {
		profile_release(p);
		return -1;
	}
	return 0;
}

void profile_release(struct profile *p)
{
	json_object_put(p->root);
	p->root = NULL;
	if (p->calls) {
		free(p->calls->v);
		free(p->calls->names);
		free(p->calls);
	}
	p->calls = NULL;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* The compact calls of snapshots[0], decoded once; -1 when they are bad
 * (said once, naming what).  */
static int decode_calls(const struct profile *p, const char *what)
{
	struct json_object *snaps = get(p->root, "snapshots");
	struct profile_calls *c = p->calls;
	size_t i;

	if (!c)
		return -1;
	if (c->state)
		return c->state;
	c->state = 1;
	for (i = 0; snaps && json_object_is_type(snaps, json_type_array) &&
		    i < json_object_array_length(snaps); i++) {
		struct json_object *s = json_object_array_get_idx(snaps, i);
		if (!compact_present(s))
			continue;
		if (i > 0) {
			c->state = -1;
			return pr_error("%s: snapshots[%zu].calls: only snapshots[0] may hold compact "
					"calls", what, i);
		}
		if (compact_decode(s, get(p->root, "chunks"), what, &c->v, &c->n, &c->names,
				   &c->nnames) < 0) {
			c->state = -1;
			return -1;
		}
	}
	return 1;
}

int profile_check_calls(const struct profile *p, const char *what)
{
	return decode_calls(p, what) < 0 ? -1 : 0;
}

int profile_is_compact(const struct profile *p)
{
	struct json_object *snaps = get(p->root, "snapshots");

	return snaps && json_object_is_type(snaps, json_type_array) &&
	       json_object_array_length(snaps) > 0 &&
	       compact_present(json_object_array_get_idx(snaps, 0));
}

static int want(struct json_object *o, const char *key, json_type t, const char *what,
		const char *where)
{
	struct json_object *v = get(o, key);

	if (!v)
		return pr_error("%s: %s%s%s is missing", what, where, *where ? "." : "", key);
	if (!json_object_is_type(v, t) &&
	    !(t == json_type_double && json_object_is_type(v, json_type_int)))
		return pr_error("%s: %s%s%s must be %s, not %s", what, where, *where ? "." : "", key,
				json_type_to_name(t), json_type_to_name(json_object_get_type(v)));
	return 0;
}

/* A number that is not negative (and finite) at o.key, when o has key.  */
static int want_amount(struct json_object *o, const char *key, const char *what,
		       const char *where)
{
	struct json_object *v = get(o, key);
	double d;

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return pr_error("%s: %s.%s must be a number, not %s", what, where, key,
				json_type_to_name(json_object_get_type(v)));
	if (json_object_is_type(v, json_type_int) ? json_object_get_int64(v) < 0 :
	    (d = json_object_get_double(v)) < 0 || !isfinite(d))
		return pr_error("%s: %s.%s is %s: amounts and counts are never negative", what,
				where, key, json_object_to_json_string(v));
	return 0;
}

int profile_validate(const struct profile *p, const char *what)
{
	static const char *const amounts[] = { "amount", "exclusive", "count", "min", "max" };
	struct json_object *snaps, *h = get(p->root, "header");
	size_t i, j, k;

	if (want(p->root, "header", json_type_object, what, "") < 0 ||
	    want(h, "type", json_type_string, what, "header") < 0 ||
	    want(p->root, "collector_info", json_type_object, what, "") < 0 ||
	    want(get(p->root, "collector_info"), "name", json_type_string, what,
		 "collector_info") < 0 ||
	    want(p->root, "postprocessors", json_type_array, what, "") < 0 ||
	    want(p->root, "snapshots", json_type_array, what, "") < 0)
		return -1;
	if (get(h, "units") && !json_object_is_type(get(h, "units"), json_type_object))
		return pr_error("%s: header.units must be an object", what);
	if (get(h, "cmd") && !json_object_is_type(get(h, "cmd"), json_type_string))
		return pr_error("%s: header.cmd must be a string", what);
	if (get(h, "args") && !json_object_is_type(get(h, "args"), json_type_string))
		return pr_error("%s: header.args must be a string", what);
	if (get(h, "workload") && !json_object_is_type(get(h, "workload"), json_type_string))
		return pr_error("%s: header.workload must be a string", what);
	if (get(p->root, "origin") && !json_object_is_type(get(p->root, "origin"), json_type_string))
		return pr_error("%s: origin must be a string", what);
	snaps = get(p->root, "snapshots");
	if (!json_object_array_length(snaps))
		return pr_error("%s: snapshots is empty: a profile holds at least one snapshot",
				what);
	for (i = 0; i < json_object_array_length(snaps); i++) {
		struct json_object *s = json_object_array_get_idx(snaps, i), *res;
		char where[64];
		snprintf(where, sizeof(where), "snapshots[%zu]", i);
		if (!json_object_is_type(s, json_type_object))
			return pr_error("%s: %s must be an object", what, where);
		if (want(s, "resources", json_type_array, what, where) < 0)
			return -1;
		if (get(s, "calls") && want(s, "calls", json_type_array, what, where) < 0)
			return -1;
		res = get(s, "resources");
		for (j = 0; j < json_object_array_length(res); j++) {
			struct json_object *r = json_object_array_get_idx(res, j);
			snprintf(where, sizeof(where), "snapshots[%zu].resources[%zu]", i, j);
			if (!json_object_is_type(r, json_type_object))
				return pr_error("%s: %s must be an object", what, where);
			if (want(r, "amount", json_type_double, what, where) < 0 ||
			    want(r, "type", json_type_string, what, where) < 0)
				return -1;
			for (k = 0; k < sizeof(amounts) / sizeof(*amounts); k++)
				if (want_amount(r, amounts[k], what, where) < 0)
					return -1;
			if (!get(r, "uid"))
				return pr_error("%s: %s.uid is missing", what, where);
		}
	}
	return decode_calls(p, what) < 0 ? -1 : 0;
}

int profile_validate_for_store(const struct profile *p, const char *what)
{
	struct json_object *h = get(p->root, "header");

	if (profile_validate(p, what) < 0 || want(h, "units", json_type_object, what, "header") < 0 ||
	    want(h, "cmd", json_type_string, what, "header") < 0)
		return -1;
	return 0;
}

const char *profile_str(const struct profile *p, const char *path)
{
	char *copy = xstrdup(path), *save = NULL, *k;
	struct json_object *o = p->root;
	const char *out = NULL;

	for (k = strtok_r(copy, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = get(o, k);
	if (o && json_object_is_type(o, json_type_string))
		out = json_object_get_string(o);
	free(copy);
	return out;
}

const char *profile_type(const struct profile *p)
{
	const char *t = profile_str(p, "header.type");
	return t ? t : "";
}

const char *profile_to_json(const struct profile *p)
{
	return json_object_to_json_string_ext(p->root, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
}

char *profile_take_origin(struct profile *p)
{
	struct json_object *o = get(p->root, "origin");
	char *out = NULL;

	if (o) {
		out = xstrdup(json_object_is_type(o, json_type_string) ? json_object_get_string(o) : "");
		json_object_object_del(p->root, "origin");
	}
	return out;
}

/* --- interned strings ----------------------------------------------------------- */

/* Strings by first appearance, found by hash (the strings are borrowed).  */
struct intern {
	const char **names;
	size_t n, alloc;
	int *hash;		/* index + 1 */
	size_t hsize;
};

static size_t str_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static int intern(struct intern *t, const char *s)
{
	size_t i;

	if ((t->n + 1) * 2 > t->hsize) {
		size_t j;
		free(t->hash);
		t->hsize = t->hsize ? t->hsize * 2 : 64;
		t->hash = xcalloc(t->hsize, sizeof(int));
		for (j = 0; j < t->n; j++) {
			for (i = str_hash(t->names[j]) & (t->hsize - 1); t->hash[i]; i = (i + 1) & (t->hsize - 1))
				;
			t->hash[i] = (int)j + 1;
		}
	}
	for (i = str_hash(s) & (t->hsize - 1); t->hash[i]; i = (i + 1) & (t->hsize - 1))
		if (!strcmp(t->names[t->hash[i] - 1], s))
			return t->hash[i] - 1;
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 64;
		t->names = xrealloc(t->names, t->alloc * sizeof(*t->names));
	}
	t->names[t->n] = s;
	t->hash[i] = (int)++t->n;
	return (int)t->n - 1;
}

/* --- summary ----------------------------------------------------------------- */

struct fstat {
	const char *uid;
	double *amounts;
	size_t n, alloc;
	double total, sum, excl, max, min;
	uint64_t calls;		/* with --aggregate resources carry a count */
	uint64_t hist[64];	/* --aggregate: the merged log2 histograms */
	unsigned has_hist : 1;
	int64_t sampled;	/* trace.summary's 1 in N, 0 when every call */
	int64_t disarmed;	/* trace.summary's disarmed_after (dynamic probing), or 0 */
	int64_t disarms, rearms;	/* its disarmed_times, rearmed_times (reattach), or 0 */
	unsigned timed : 1;	/* trace.summary's sampled_by timed-sampling */
	unsigned budget : 1;	/* disarmed by the overhead budget (at disarmed_at), not
				 * by dynamic probing */
	double disarmed_at;	/* trace.summary's disarmed_at_s */
	double cal_mean;	/* trace.summary's calibrated_mean, -1 without */
	double cal_median;	/* trace.summary's calibrated_median, -1 without */
	const char *entry;	/* trace.summary's probe_entry, or NULL */
	int64_t untimed;	/* trace.summary's no_duration: calls without a duration */
	int64_t below_min;	/* its below_min_duration: calls faster than --min-duration */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int cmp_total(const void *a, const void *b)
{
	const struct fstat *x = a, *y = b;
	return x->total < y->total ? 1 : x->total > y->total ? -1 : strcmp(x->uid, y->uid);
}

static const char *uid_of(struct json_object *r)
{
	struct json_object *u = get(r, "uid");

	if (u && json_object_is_type(u, json_type_object) && get(u, "function"))
		return json_object_get_string(get(u, "function"));
	return u ? json_object_get_string(u) : "?";
}

struct frame_ref {
	int64_t id, caller;
	const char *uid;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct frame_ref *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* 1 when caller, or its caller at any depth, is the same function: r's time is
 * then inside that caller's, and a total counts the outermost call only.  */
static int nested_call(const struct frame_ref *refs, size_t nrefs, int64_t caller,
		       const char *uid)
{
	size_t hops = 0;

	while (caller >= 0 && hops++ < nrefs) {
		struct frame_ref key = { caller, 0, NULL }, *f;
		f = bsearch(&key, refs, nrefs, sizeof(*refs), cmp_ref);
		if (!f)
			return 0;
		if (!strcmp(f->uid, uid))
			return 1;
		caller = f->caller;
	}
	return 0;
}

/* The function column grows to the longest name up to this; longer names lose
 * their middle, unless two rows would then look alike: the column then grows
 * until every row reads differently (C++ names of one class template, say,
 * differ only in a template argument in the middle).  */
#define NAME_COLUMN_MAX 80

/* uid cut to width characters, its middle replaced by "...": C++ names
 * differ at both ends (scope, parameters), so both are kept.  Caller frees.  */
static char *short_name(const char *uid, size_t width)
{
	size_t len = strlen(uid), tail, head;

	if (len <= width)
		return xstrdup(uid);
	tail = (width - 3) / 2;
	head = width - 3 - tail;
	return xstrfmt("%.*s...%s", (int)head, uid, uid + len - tail);
}

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The narrowest width from width up at which the n names, cut by
 * short_name, are all different (at most the longest name's length).  */
static size_t distinct_width(char *const *names, size_t n, size_t width, size_t longest)
{
	char **v = xmalloc((n ? n : 1) * sizeof(*v));
	size_t i;

	for (; width < longest; width += 8) {
		int dup = 0;
		for (i = 0; i < n; i++)
			v[i] = short_name(names[i], width);
		qsort(v, n, sizeof(*v), cmp_str_ptr);
		for (i = 1; i < n && !dup; i++)
			dup = !strcmp(v[i - 1], v[i]);
		for (i = 0; i < n; i++)
			free(v[i]);
		if (!dup)
			break;
	}
	free(v);
	return width < longest ? width : longest;
}

/* One call or resource as summary and folded stacks need it, from either form.  */
struct call_view {
	const char *uid;
	double amount, exclusive;
	uint64_t count;
	int64_t id, caller;
	struct json_object *hist;	/* --aggregate: log2 histogram of its calls */
	double min, max;		/* of its calls */
};

struct fold_refs {
	struct frame_ref *refs;
	size_t n, alloc;
};

static void view_of_resource(struct json_object *r, struct call_view *v)
{
	struct json_object *ex = get(r, "exclusive"), *cnt = get(r, "count");

	v->uid = uid_of(r);
	v->amount = json_object_get_double(get(r, "amount"));
	v->exclusive = ex ? json_object_get_double(ex) : v->amount;
	v->count = cnt ? (uint64_t)json_object_get_int64(cnt) : 1;
	v->id = get(r, "call-id") ? json_object_get_int64(get(r, "call-id")) : -1;
	v->caller = get(r, "caller-id") ? json_object_get_int64(get(r, "caller-id")) : -1;
	v->hist = get(r, "log2_hist");
	if (v->hist && !json_object_is_type(v->hist, json_type_array))
		v->hist = NULL;
	v->max = get(r, "max") ? json_object_get_double(get(r, "max")) : v->amount;
	v->min = get(r, "min") ? json_object_get_double(get(r, "min")) : 0;
}

static void each_call(const struct profile *p, void (*fn)(void *, const struct call_view *),
		      void *ctx)
{
	struct json_object *snaps = get(p->root, "snapshots");
	struct call_view v;
	size_t i, j;

	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *res = get(json_object_array_get_idx(snaps, i), "resources");
		for (j = 0; res && j < json_object_array_length(res); j++) {
			struct json_object *r = json_object_array_get_idx(res, j);
			if (p->view && !profile_shows_thread(p, json_object_get_int64(get(r, "thread"))))
				continue;
			view_of_resource(r, &v);
			fn(ctx, &v);
		}
	}
	if (decode_calls(p, "profile") <= 0)
		return;
	memset(&v, 0, sizeof(v));
	for (i = 0; i < p->calls->n; i++) {
		const struct call_record *r = &p->calls->v[i].r;
		if (p->view && !profile_shows_thread(p, r->thread))
			continue;
		v.uid = p->calls->names[r->probe];
		v.amount = (double)r->amount;
		v.exclusive = (double)r->exclusive;
		v.count = 1;
		v.id = (int64_t)r->call_id;
		v.caller = r->caller_id;
		v.min = v.max = v.amount;
		fn(ctx, &v);
	}
}

static void ref_one(void *ctxp, const struct call_view *v)
{
	struct fold_refs *c = ctxp;

	if (c->n == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 1024;
		c->refs = xrealloc(c->refs, c->alloc * sizeof(*c->refs));
	}
	c->refs[c->n].id = v->id;
	c->refs[c->n].caller = v->caller;
	c->refs[c->n].uid = v->uid;
	c->n++;
}

/* Every call's call-id, caller-id and uid, sorted by call-id.  */
static size_t collect_refs(const struct profile *p, struct frame_ref **out)
{
	struct fold_refs c = { NULL, 0, 0 };

	each_call(p, ref_one, &c);
	if (c.n > 1)
		qsort(c.refs, c.n, sizeof(*c.refs), cmp_ref);
	*out = c.refs;
	return c.n;
}

struct sum_ctx {
	struct fstat *fs;
	size_t nfs;
	double all_excl;
	struct intern uids;	/* index in fs */
	struct json_object *tsum;	/* trace.summary */
	struct frame_ref *refs;
	size_t nrefs;
	int any_sampled, any_cal, any_untimed;
};

static int64_t int_at(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
		       ? json_object_get_int64(v)
		       : 0;
}

/* The row of function uid, made on first use with what trace.summary
 * says of it.  */
static struct fstat *fstat_of(struct sum_ctx *c, const char *uid)
{
	size_t k = (size_t)intern(&c->uids, uid);
	struct json_object *ts;
	struct fstat *f;

	if (k < c->nfs)
		return &c->fs[k];
	ts = get(c->tsum, uid);
	c->fs = xrealloc(c->fs, (c->nfs + 1) * sizeof(*c->fs));
	f = &c->fs[c->nfs++];
	memset(f, 0, sizeof(*f));
	f->uid = uid;
	f->min = -1;
	f->sampled = get(ts, "sampled") ? json_object_get_int64(get(ts, "sampled")) : 0;
	f->cal_mean = get(ts, "calibrated_mean") ? json_object_get_double(get(ts, "calibrated_mean"))
						 : -1;
	f->cal_median = get(ts, "calibrated_median")
				? json_object_get_double(get(ts, "calibrated_median"))
				: -1;
	f->entry = get(ts, "probe_entry") ? json_object_get_string(get(ts, "probe_entry")) : NULL;
	f->disarmed = get(ts, "disarmed_after") ? json_object_get_int64(get(ts, "disarmed_after"))
						: 0;
	f->disarms = get(ts, "disarmed_times") ? json_object_get_int64(get(ts, "disarmed_times"))
					       : 0;
	f->rearms = get(ts, "rearmed_times") ? json_object_get_int64(get(ts, "rearmed_times")) : 0;
	f->timed = get(ts, "sampled_by") != NULL;
	f->budget = get(ts, "disarmed_by") &&
		    !strcmp(json_object_get_string(get(ts, "disarmed_by")), "max-overhead");
	f->disarmed_at = get(ts, "disarmed_at_s") ? json_object_get_double(get(ts, "disarmed_at_s"))
						  : 0;
	f->untimed = int_at(ts, "no_duration");
	f->below_min = int_at(ts, "below_min_duration");
	c->any_sampled |= f->sampled > 1 || f->disarmed > 0 || f->disarms > 0 || f->timed;
	c->any_cal |= f->cal_mean >= 0;
	c->any_untimed |= f->untimed > 0 || f->below_min > 0;
	return f;
}

static void sum_one(void *ctxp, const struct call_view *v)
{
	struct sum_ctx *c = ctxp;
	struct fstat *f = fstat_of(c, v->uid);

	if (v->hist) {
		/* a per-thread summary: its amount is a sum, not one call */
		size_t b, nb = json_object_array_length(v->hist);
		for (b = 0; b < nb && b < 64; b++)
			f->hist[b] += (uint64_t)json_object_get_int64(
				json_object_array_get_idx(v->hist, b));
		f->has_hist = 1;
		if (v->max > f->max)
			f->max = v->max;
		if (f->min < 0 || v->min < f->min)
			f->min = v->min;
	} else {
		if (f->n == f->alloc) {
			f->alloc = f->alloc ? f->alloc * 2 : 16;
			f->amounts = xrealloc(f->amounts, f->alloc * sizeof(double));
		}
		f->amounts[f->n++] = v->amount;
		if (v->amount > f->max)
			f->max = v->amount;
	}
	f->calls += v->count;
	f->sum += v->amount;
	if (!nested_call(c->refs, c->nrefs, v->caller, v->uid))
		f->total += v->amount;
	f->excl += v->exclusive;
	c->all_excl += v->exclusive;
}

/* Functions profile_untimed names on a line, at most.  */
#define UNTIMED_SHOWN 10

/* Functions with a loss that profile_incomplete names, at most.  */
#define INCOMPLETE_SHOWN 20

struct loss {
	const char *name;
	int64_t lost, unfinished;
};

static int cmp_loss(const void *a, const void *b)
{
	const struct loss *x = a, *y = b;
	int64_t u = x->lost + x->unfinished, v = y->lost + y->unfinished;

	return u != v ? (u < v) - (u > v) : strcmp(x->name, y->name);
}

static struct loss *loss_of(struct loss **l, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*l)[i].name, name))
			return &(*l)[i];
	*l = xrealloc(*l, (*n + 1) * sizeof(**l));
	memset(&(*l)[*n], 0, sizeof(**l));
	(*l)[*n].name = name;
	return &(*l)[(*n)++];
}

int profile_incomplete(const struct profile *p, const char *prefix, struct strbuf *out)
{
	struct json_object *tr = get(p->root, "trace"), *an = get(tr, "anomalies");
	struct json_object *pr = get(get(p->root, "collector_info"), "probes"), *c = get(tr, "complete");
	struct json_object *failed = get(pr, "failed");
	struct strbuf what = STRBUF_INIT;
	struct loss *l = NULL;
	size_t nl = 0, i, nfailed = 0;
	int64_t lost = int_at(an, "lost_events"), buf = int_at(an, "lost_in_buffer");
	int64_t tx = int_at(an, "lost_in_transport"), miss = int_at(an, "missing_records");
	int64_t unatt = int_at(pr, "planned") - int_at(pr, "attached");

	if (!c || !json_object_is_type(c, json_type_boolean) || json_object_get_boolean(c))
		return 0;
	if (lost > 0) {
		strbuf_addf(&what, "%" PRId64 " events lost (", lost);
		if (buf)
			strbuf_addf(&what, "%" PRId64 " in the recorder's full buffer, ", buf);
		if (tx)
			strbuf_addf(&what, "%" PRId64 " in the runtime's transport, ", tx);
		if (miss)
			strbuf_addf(&what, "%" PRId64 " records missing, ", miss);
		what.len -= 2;
		what.buf[what.len] = '\0';
		strbuf_addstr(&what, ")");
	}
	if (unatt > 0)
		strbuf_addf(&what, "%s%" PRId64 " of %" PRId64 " probe points not attached",
			    what.len ? ", " : "", unatt, int_at(pr, "planned"));
	if (int_at(an, "transport_errors") > 0)
		strbuf_addf(&what, "%s%" PRId64 " transport errors", what.len ? ", " : "",
			    int_at(an, "transport_errors"));
	if (int_at(an, "missed_returns") > 0)
		strbuf_addf(&what, "%s%" PRId64 " returns not seen (those calls have no duration)",
			    what.len ? ", " : "", int_at(an, "missed_returns"));
	if (get(an, "missing_end") && json_object_get_boolean(get(an, "missing_end")))
		strbuf_addf(&what, "%sthe trace's end is missing (cut short)", what.len ? ", " : "");
	if (!what.len)
		strbuf_addstr(&what, "the trace says so");
	strbuf_addf(out, "%sincomplete profile: %s; the calls and times shown miss what was lost\n",
		    prefix, what.buf);
	strbuf_release(&what);
	if (get(an, "lost_by_function") && json_object_is_type(get(an, "lost_by_function"),
							      json_type_object)) {
		json_object_object_foreach(get(an, "lost_by_function"), k, v)
			loss_of(&l, &nl, k)->lost += json_object_get_int64(v);
	}
	if (get(an, "unfinished_by_function") &&
	    json_object_is_type(get(an, "unfinished_by_function"), json_type_object)) {
		json_object_object_foreach(get(an, "unfinished_by_function"), k, v)
			loss_of(&l, &nl, k)->unfinished += json_object_get_int64(v);
	}
	if (nl > 1)
		qsort(l, nl, sizeof(*l), cmp_loss);
	for (i = 0; i < nl && i < INCOMPLETE_SHOWN; i++) {
		strbuf_addf(out, "%s  ", prefix);
		strbuf_add_printable(out, l[i].name);
		strbuf_addch(out, ':');
		if (l[i].lost)
			strbuf_addf(out, " %" PRId64 " events lost%s", l[i].lost,
				    l[i].unfinished ? "," : "");
		if (l[i].unfinished)
			strbuf_addf(out, " %" PRId64 " calls without a duration", l[i].unfinished);
		strbuf_addch(out, '\n');
	}
	if (failed && json_object_is_type(failed, json_type_array))
		nfailed = json_object_array_length(failed);
	for (i = 0; i < nfailed && nl + i < INCOMPLETE_SHOWN; i++) {
		const char *f = json_object_get_string(json_object_array_get_idx(failed, i));
		strbuf_addf(out, "%s  not attached: ", prefix);
		strbuf_add_printable(out, f ? f : "");
		strbuf_addch(out, '\n');
	}
	if (nl + nfailed > INCOMPLETE_SHOWN)
		strbuf_addf(out, "%s  ... and %zu more (trace.anomalies and "
				 "collector_info.probes.failed of the JSON)\n",
			    prefix, nl + nfailed - INCOMPLETE_SHOWN);
	free(l);
	return 1;
}

void profile_untimed_calls(const struct profile *p, const char *uid, uint64_t *untimed,
			   uint64_t *below_min)
{
	struct json_object *ts = get(get(get(p->root, "trace"), "summary"), uid);

	*untimed = (uint64_t)int_at(ts, "no_duration");
	*below_min = (uint64_t)int_at(ts, "below_min_duration");
}

/* One line of profile_untimed: the functions whose summary has key.  */
static int untimed_line(struct json_object *tsum, const char *key, const char *prefix,
			const char *what, struct strbuf *out)
{
	size_t n = 0;

	json_object_object_foreach(tsum, name, ts) {
		int64_t v = int_at(ts, key);
		if (v <= 0)
			continue;
		if (!n)
			strbuf_addf(out, "%s%s:", prefix, what);
		if (n++ == UNTIMED_SHOWN) {
			strbuf_addstr(out, " ...");
			break;
		}
		strbuf_addstr(out, n > 1 ? ", " : " ");
		strbuf_add_printable(out, name);
		strbuf_addf(out, " %" PRId64 " of %" PRId64, v, int_at(ts, "count"));
	}
	if (n)
		strbuf_addch(out, '\n');
	return n > 0;
}

int profile_untimed(const struct profile *p, const char *prefix, struct strbuf *out)
{
	struct json_object *tsum = get(get(p->root, "trace"), "summary");
	int any;

	if (!tsum || !json_object_is_type(tsum, json_type_object))
		return 0;
	any = untimed_line(tsum, "no_duration", prefix,
			   "* calls without a duration (no return seen; counted, not timed)", out);
	any |= untimed_line(tsum, "below_min_duration", prefix,
			    "* calls faster than --min-duration (counted, not kept)", out);
	return any;
}

void profile_summary(const struct profile *p, struct strbuf *out)
{
	struct fstat *fs = NULL;
	size_t nfs = 0, k, width = 40;
	double all_excl = 0;
	const char *unit = "";
	char **shown, *shown_unit;
	struct json_object *units = get(get(p->root, "header"), "units");
	int any_sampled = 0, any_cal = 0, any_untimed = 0;

	if (units && json_object_is_type(units, json_type_object)) {
		json_object_object_foreach(units, key, val) {
			(void)key;
			unit = json_object_get_string(val);
			break;
		}
	}
	{
		struct sum_ctx c;
		memset(&c, 0, sizeof(c));
		c.tsum = get(get(p->root, "trace"), "summary");
		c.nrefs = collect_refs(p, &c.refs);
		each_call(p, sum_one, &c);
		/* functions whose calls all lack a duration have no call record
		 * (the trace's summary counts all processes together) */
		if (!p->view && c.tsum && json_object_is_type(c.tsum, json_type_object)) {
			json_object_object_foreach(c.tsum, name, ts)
				if (int_at(ts, "no_duration") > 0 || int_at(ts, "below_min_duration") > 0)
					fstat_of(&c, name);
		}
		free(c.uids.names);
		free(c.uids.hash);
		free(c.refs);
		fs = c.fs;
		nfs = c.nfs;
		all_excl = c.all_excl;
		any_sampled = c.any_sampled;
		any_cal = c.any_cal;
		any_untimed = c.any_untimed;
	}
	if (nfs > 1)
		qsort(fs, nfs, sizeof(*fs), cmp_total);
	/* names as a terminal may show them */
	shown = xcalloc(nfs ? nfs : 1, sizeof(*shown));
	for (k = 0; k < nfs; k++)
		shown[k] = xstrdup_printable(fs[k].uid);
	for (k = 0; k < nfs; k++)
		if (strlen(shown[k]) > width)
			width = strlen(shown[k]);
	if (width > NAME_COLUMN_MAX)
		width = distinct_width(shown, nfs, NAME_COLUMN_MAX, width);
	strbuf_addf(out, "%-*s %10s %14s %12s %12s %12s %14s %7s%s\n", (int)width, "function",
		    "calls", "total", "mean", "median", "p95", "max", "excl%",
		    any_cal ? "  cal.mean cal.median probe" : "");
	for (k = 0; k < nfs; k++) {
		double *a = fs[k].amounts, med, p95;
		size_t n = fs[k].n;
		char calls[32], cal[80] = "", *name = short_name(shown[k], width);
		if (fs[k].has_hist) {
			med = log2_hist_quantile(fs[k].hist, 64, 0.5, fs[k].min, fs[k].max);
			p95 = log2_hist_quantile(fs[k].hist, 64, 0.95, fs[k].min, fs[k].max);
		} else {
			if (n > 1)
				qsort(a, n, sizeof(double), cmp_double);
			med = quantile_sorted(a, n, 0.5);
			p95 = quantile_sorted(a, n, 0.95);
		}
		/* every call seen; the amounts are those of the calls with one */
		snprintf(calls, sizeof(calls), "%" PRIu64 "%s%s",
			 fs[k].calls + (uint64_t)fs[k].untimed + (uint64_t)fs[k].below_min,
			 fs[k].untimed > 0 || fs[k].below_min > 0 ? "*" : "",
			 fs[k].sampled > 1 || fs[k].disarmed > 0 || fs[k].disarms > 0 || fs[k].timed
				 ? "~"
				 : "");
		if (any_cal && fs[k].cal_mean >= 0)
			snprintf(cal, sizeof(cal), " %9.1f %10.1f %s", fs[k].cal_mean,
				 fs[k].cal_median >= 0 ? fs[k].cal_median : fs[k].cal_mean,
				 fs[k].entry ? fs[k].entry : "-");
		strbuf_addf(out, "%-*s %10s %14.0f %12.1f %12.0f %12.0f %14.0f %6.1f%%%s\n",
			    (int)width, name, calls, fs[k].total,
			    fs[k].calls ? fs[k].sum / (double)fs[k].calls : 0, med, p95, fs[k].max,
			    all_excl > 0 ? 100.0 * fs[k].excl / all_excl : 0, cal);
		free(name);
		free(a);
	}
	shown_unit = xstrdup_printable(*unit ? unit : "the profile's units");
	strbuf_addf(out, "%zu function%s; amounts in %s\n", nfs, nfs == 1 ? "" : "s",
		    shown_unit);
	free(shown_unit);
	strbuf_addstr(out, "total: outermost calls of a recursion only");
	if (any_cal)
		strbuf_addstr(out, "; cal.*: minus the measured cost of the function's probe, whose "
				   "instruction the kernel emulates or steps out of line (probe)");
	strbuf_addch(out, '\n');
	for (k = 0; any_untimed && k < nfs; k++) {
		if (fs[k].untimed > 0)
			strbuf_addf(out, "* %s: %" PRId64 " of its calls have no duration (no "
					 "return seen), counted but not timed\n",
				    shown[k], fs[k].untimed);
		if (fs[k].below_min > 0)
			strbuf_addf(out, "* %s: %" PRId64 " of its calls were faster than "
					 "--min-duration, counted but not kept\n",
				    shown[k], fs[k].below_min);
	}
	if (any_sampled) {
		for (k = 0; k < nfs; k++)
			if (fs[k].sampled > 1)
				strbuf_addf(out, "~ %s: sampled, 1 call in %" PRId64 " recorded\n",
					    shown[k], fs[k].sampled);
		for (k = 0; k < nfs; k++)
			if (fs[k].disarmed > 0 && fs[k].budget)
				strbuf_addf(out, "~ %s: disarmed after %" PRId64 " calls, %.2f s into "
						 "the trace (the overhead budget): the later ones were "
						 "not recorded\n",
					    shown[k], fs[k].disarmed, fs[k].disarmed_at);
			else if (fs[k].disarmed > 0)
				strbuf_addf(out, "~ %s: disarmed after %" PRId64 " calls (dynamic "
						 "probing): the later ones were not recorded\n",
					    shown[k], fs[k].disarmed);
		for (k = 0; k < nfs; k++)
			if (fs[k].disarms > 0)
				strbuf_addf(out, "~ %s: disarmed %" PRId64 " times and re-armed %" PRId64
						 " times (dynamic probing, reattach): calls recorded "
						 "in bursts only\n",
					    shown[k], fs[k].disarms, fs[k].rearms);
		for (k = 0; k < nfs; k++)
			if (fs[k].timed)
				strbuf_addf(out, "~ %s: timed sampling: calls recorded in its gather "
						 "windows only\n",
					    shown[k]);
	}
	for (k = 0; k < nfs; k++)
		free(shown[k]);
	free(shown);
	free(fs);
}

/* --- folded stacks ------------------------------------------------------------- */

struct folded_line {
	char *stack;
	double value;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

struct fold_ctx {
	struct frame_ref *refs;
	double *values;
	size_t n, alloc;
};

static void fold_one(void *ctxp, const struct call_view *v)
{
	struct fold_ctx *c = ctxp;

	if (c->n == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 1024;
		c->refs = xrealloc(c->refs, c->alloc * sizeof(*c->refs));
		c->values = xrealloc(c->values, c->alloc * sizeof(*c->values));
	}
	c->refs[c->n].id = v->id;
	c->refs[c->n].caller = v->caller;
	c->refs[c->n].uid = v->uid;
	c->values[c->n++] = v->exclusive;
}

void profile_folded(const struct profile *p, struct strbuf *out)
{
	struct fold_ctx c = { NULL, NULL, 0, 0 };
	struct frame_ref *refs;
	struct folded_line *lines = NULL;
	size_t nrefs, nlines = 0, i, j, k;

	each_call(p, fold_one, &c);
	nrefs = c.n;
	refs = xmalloc((nrefs ? nrefs : 1) * sizeof(*refs));
	if (nrefs)
		memcpy(refs, c.refs, nrefs * sizeof(*refs));
	if (nrefs > 1)
		qsort(refs, nrefs, sizeof(*refs), cmp_ref);
	lines = xmalloc((nrefs ? nrefs : 1) * sizeof(*lines));
	for (j = 0; j < nrefs; j++) {
		struct strbuf st = STRBUF_INIT;
		const char *chain[256];
		size_t depth = 0;
		int64_t caller = c.refs[j].caller;
		chain[depth++] = c.refs[j].uid;
		while (caller >= 0 && depth < 256) {
			struct frame_ref key = { caller, 0, NULL }, *f;
			f = bsearch(&key, refs, nrefs, sizeof(*refs), cmp_ref);
			if (!f)
				break;
			chain[depth++] = f->uid;
			caller = f->caller;
		}
		while (depth--) {
			/* a control character escaped (no raw ESC on a terminal);
			 * ';' and ' ' separate fields */
			char *shown = xstrdup_printable(chain[depth]), *ch;
			for (ch = shown; *ch; ch++)
				strbuf_addch(&st, *ch == ';' || *ch == ' ' ? '_' : *ch);
			free(shown);
			if (depth)
				strbuf_addch(&st, ';');
		}
		lines[nlines].stack = strbuf_detach(&st);
		lines[nlines].value = c.values[j];
		nlines++;
	}
	if (nlines > 1)
		qsort(lines, nlines, sizeof(*lines), cmp_line);
	for (i = 0; i < nlines; i = k) {
		double sum = 0;
		for (k = i; k < nlines && !strcmp(lines[k].stack, lines[i].stack); k++)
			sum += lines[k].value;
		strbuf_addf(out, "%s %.0f\n", lines[i].stack, sum);
	}
	for (i = 0; i < nlines; i++)
		free(lines[i].stack);
	free(lines);
	free(refs);
	free(c.refs);
	free(c.values);
}

/* --- query API (seeds/001) ----------------------------------------------------- */

static void kv_push(struct kv **out, size_t *n, const char *key, const char *value, int numeric)
{
	*out = xrealloc(*out, (*n + 1) * sizeof(**out));
	(*out)[*n].key = xstrdup(key);
	(*out)[*n].value = xstrdup(value);
	(*out)[*n].numeric = numeric;
	(*n)++;
}

static const char *scalar_text(struct json_object *v)
{
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v)
							: json_object_to_json_string(v);
}

static void flatten(struct json_object *o, const char *prefix, const char *sep, struct kv **out,
		    size_t *n)
{
	json_object_object_foreach(o, key, val) {
		char *k = *prefix ? xstrfmt("%s%s%s", prefix, sep, key) : xstrdup(key);
		if (json_object_is_type(val, json_type_object)) {
			flatten(val, k, ":", out, n);
		} else if (json_object_is_type(val, json_type_array)) {
			size_t i, len = json_object_array_length(val);
			int objects = len > 0;
			for (i = 0; i < len; i++)
				objects &= json_object_is_type(json_object_array_get_idx(val, i),
							       json_type_object);
			if (objects) {
				/* trace::function = f1,f2,...  */
				struct kv *sub = NULL;
				size_t ns = 0, j, m;
				for (i = 0; i < len; i++)
					flatten(json_object_array_get_idx(val, i), "", "", &sub, &ns);
				for (j = 0; j < ns; j++) {
					struct strbuf vals = STRBUF_INIT;
					char *kk;
					int seen = 0;
					for (m = 0; m < j; m++)
						seen |= !strcmp(sub[m].key, sub[j].key);
					if (seen)
						continue;
					for (m = j; m < ns; m++)
						if (!strcmp(sub[m].key, sub[j].key)) {
							if (vals.len)
								strbuf_addch(&vals, ',');
							strbuf_addstr(&vals, sub[m].value);
						}
					kk = xstrfmt("%s::%s", k, sub[j].key);
					kv_push(out, n, kk, strbuf_str(&vals), 0);
					free(kk);
					strbuf_release(&vals);
				}
				kv_free(sub, ns);
			} else {
				kv_push(out, n, k, json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN), 0);
			}
		} else {
			kv_push(out, n, k, val ? scalar_text(val) : "null",
				json_object_is_type(val, json_type_int) ||
					json_object_is_type(val, json_type_double));
		}
		free(k);
	}
}

size_t profile_flatten(struct json_object *r, struct kv **out)
{
	size_t n = 0;

	*out = NULL;
	if (r && json_object_is_type(r, json_type_object))
		flatten(r, "", "", out, &n);
	return n;
}

void kv_free(struct kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void strings_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_unique(char ***v, size_t *n, const char *s)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

/* The per-call form of one call, as the writer (--per-call) writes it.  */
/* One per-call resource, refilled for each call: profile_each_resource hands
 * out a temporary object, and building twelve fresh json-c objects per call
 * was most of a reader's time on large profiles.  */
struct call_obj {
	struct json_object *o, *amount, *exclusive, *uid, *subtype, *thread, *order, *ts,
		*depth, *id, *caller_id, *caller;
};

static struct json_object *field_add(struct json_object *o, const char *k, struct json_object *v)
{
	json_object_object_add(o, k, v);
	return v;
}

static void call_obj_init(struct call_obj *c)
{
	c->o = json_object_new_object();
	c->amount = field_add(c->o, "amount", json_object_new_int64(0));
	c->exclusive = field_add(c->o, "exclusive", json_object_new_int64(0));
	c->uid = field_add(c->o, "uid", json_object_new_string(""));
	json_object_object_add(c->o, "type", json_object_new_string("mixed"));
	c->subtype = field_add(c->o, "subtype", json_object_new_string("time delta"));
	c->thread = field_add(c->o, "thread", json_object_new_int64(0));
	c->order = field_add(c->o, "call-order", json_object_new_int64(0));
	c->ts = field_add(c->o, "timestamp", json_object_new_int64(0));
	c->depth = field_add(c->o, "depth", json_object_new_int64(0));
	c->id = field_add(c->o, "call-id", json_object_new_int64(0));
	c->caller_id = field_add(c->o, "caller-id", json_object_new_int64(0));
	c->caller = field_add(c->o, "caller", NULL);
}

static void call_obj_fill(struct call_obj *c, const struct profile_calls *pc,
			  const struct call_record *r)
{
	json_object_set_int64(c->amount, (int64_t)r->amount);
	json_object_set_int64(c->exclusive, (int64_t)r->exclusive);
	json_object_set_string(c->uid, pc->names[r->probe]);
	json_object_set_string(c->subtype, r->point ? "point" : "time delta");
	json_object_set_int64(c->thread, r->thread);
	json_object_set_int64(c->order, (int64_t)r->call_order);
	json_object_set_int64(c->ts, (int64_t)r->start);
	json_object_set_int64(c->depth, r->depth);
	json_object_set_int64(c->id, (int64_t)r->call_id);
	json_object_set_int64(c->caller_id, r->caller_id);
	if (r->caller_probe < 0) {
		if (c->caller)
			c->caller = field_add(c->o, "caller", NULL);
	} else if (c->caller) {
		json_object_set_string(c->caller, pc->names[r->caller_probe]);
	} else {
		c->caller = field_add(c->o, "caller", json_object_new_string(pc->names[r->caller_probe]));
	}
}

void profile_each_resource(const struct profile *p, void (*fn)(void *, struct json_object *),
			   void *ctx)
{
	struct json_object *snaps = get(p->root, "snapshots");
	struct call_obj c;
	size_t i, j;

	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *res = get(json_object_array_get_idx(snaps, i), "resources");
		for (j = 0; res && j < json_object_array_length(res); j++)
			fn(ctx, json_object_array_get_idx(res, j));
	}
	if (decode_calls(p, "profile") <= 0)
		return;
	call_obj_init(&c);
	for (i = 0; i < p->calls->n; i++) {
		call_obj_fill(&c, p->calls, &p->calls->v[i].r);
		fn(ctx, c.o);
	}
	json_object_put(c.o);
}

struct uniq_ctx {
	const char *key;
	char **v;
	size_t n;
};

static void uniq_one(void *ctxp, struct json_object *r)
{
	struct uniq_ctx *c = ctxp;
	struct kv *kv;
	size_t n = profile_flatten(r, &kv), i;

	for (i = 0; i < n; i++)
		if (!strcmp(kv[i].key, c->key))
			add_unique(&c->v, &c->n, kv[i].value);
	kv_free(kv, n);
}

size_t profile_unique_values(const struct profile *p, const char *key, char ***out)
{
	struct uniq_ctx c = { key, NULL, 0 };

	profile_each_resource(p, uniq_one, &c);
	if (c.n > 1)
		qsort(c.v, c.n, sizeof(*c.v), cmp_str);
	*out = c.v;
	return c.n;
}

struct num_ctx {
	char **num, **other;
	size_t nnum, nother;
};

static void num_one(void *ctxp, struct json_object *r)
{
	struct num_ctx *c = ctxp;
	struct kv *kv;
	size_t n = profile_flatten(r, &kv), i;

	for (i = 0; i < n; i++)
		add_unique(kv[i].numeric ? &c->num : &c->other, kv[i].numeric ? &c->nnum : &c->nother,
			   kv[i].key);
	kv_free(kv, n);
}

size_t profile_numeric_keys(const struct profile *p, char ***out)
{
	struct num_ctx c = { NULL, NULL, 0, 0 };
	size_t i, j, k = 0;

	profile_each_resource(p, num_one, &c);
	for (i = 0; i < c.nnum; i++) {
		int mixed = 0;
		for (j = 0; j < c.nother; j++)
			mixed |= !strcmp(c.num[i], c.other[j]);
		if (mixed)
			free(c.num[i]);
		else
			c.num[k++] = c.num[i];
	}
	strings_free(c.other, c.nother);
	if (k > 1)
		qsort(c.num, k, sizeof(*c.num), cmp_str);
	*out = c.num;
	return k;
}

/* --- conversion between the forms ------------------------------------------------ */

static int int_field(struct json_object *r, const char *key, int64_t *v)
{
	struct json_object *o = get(r, key);

	if (!o || !json_object_is_type(o, json_type_int))
		return -1;
	*v = json_object_get_int64(o);
	return 0;
}

/* Resource r as a call record, when it is one in the per-call form.  */
static int record_of(struct json_object *r, struct intern *t, struct call_record *c)
{
	struct json_object *uid = get(r, "uid"), *caller = get(r, "caller");
	struct json_object *type = get(r, "type"), *sub = get(r, "subtype");
	int64_t amount, excl, thread, order, ts, depth, id, cid;

	if (!json_object_is_type(r, json_type_object) || json_object_object_length(r) != 12 ||
	    !uid || !json_object_is_type(uid, json_type_string) || !json_object_object_get_ex(r, "caller", NULL) ||
	    (caller && !json_object_is_type(caller, json_type_string)) || !type ||
	    strcmp(json_object_get_string(type), "mixed") || !sub ||
	    (strcmp(json_object_get_string(sub), "time delta") &&
	     strcmp(json_object_get_string(sub), "point")) ||
	    int_field(r, "amount", &amount) || int_field(r, "exclusive", &excl) ||
	    int_field(r, "thread", &thread) || int_field(r, "call-order", &order) ||
	    int_field(r, "timestamp", &ts) || int_field(r, "depth", &depth) ||
	    int_field(r, "call-id", &id) || int_field(r, "caller-id", &cid) || amount < 0 ||
	    excl < 0 || order < 0 || ts < 0 || depth < 0 || depth > UINT32_MAX || id < 0)
		return -1;
	memset(c, 0, sizeof(*c));
	c->probe = intern(t, json_object_get_string(uid));
	c->caller_probe = caller ? intern(t, json_object_get_string(caller)) : -1;
	c->point = !strcmp(json_object_get_string(sub), "point");
	c->thread = thread;
	c->amount = (uint64_t)amount;
	c->exclusive = (uint64_t)excl;
	c->call_order = (uint64_t)order;
	c->start = (uint64_t)ts;
	c->depth = (unsigned)depth;
	c->call_id = (uint64_t)id;
	c->caller_id = cid;
	return 0;
}

static const char *plain(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

int profile_write_form(const struct profile *p, FILE *f, int form, const char *what)
{
	struct json_object *snaps = get(p->root, "snapshots"), *snap, *res, *t, *m;
	struct strbuf prefix = STRBUF_INIT, rest = STRBUF_INIT, models = STRBUF_INIT, *to = &prefix;
	struct intern names = { NULL, 0, 0, NULL, 0 };
	struct call_record *recs = NULL;
	struct profile_writer w;
	size_t i, n = 0;
	int ret = -1;

	if (!snaps || !json_object_is_type(snaps, json_type_array) ||
	    json_object_array_length(snaps) != 1)
		return pr_error("%s: has %s snapshots, not one: no per-call data to convert", what,
				snaps ? "several or no" : "no");
	snap = json_object_array_get_idx(snaps, 0);
	res = get(snap, "resources");
	if (decode_calls(p, what) < 0)
		return -1;
	if (res && !json_object_is_type(res, json_type_array))
		return pr_error("%s: snapshots[0].resources must be a list", what);
	if (p->calls->n || profile_is_compact(p)) {
		if (res && json_object_array_length(res))
			return pr_error("%s: has both compact calls and resources: convert one form "
					"at a time", what);
		/* chunks.uids name one probe each: probes that share a name
		 * (static functions of several files) are one uid here */
		int *map = xmalloc((p->calls->nnames ? p->calls->nnames : 1) * sizeof(*map));
		n = p->calls->n;
		recs = xmalloc((n ? n : 1) * sizeof(*recs));
		for (i = 0; i < p->calls->nnames; i++)
			map[i] = intern(&names, p->calls->names[i]);
		for (i = 0; i < n; i++) {
			recs[i] = p->calls->v[i].r;
			recs[i].probe = map[recs[i].probe];
			if (recs[i].caller_probe >= 0)
				recs[i].caller_probe = map[recs[i].caller_probe];
		}
		free(map);
	} else {
		n = res ? json_object_array_length(res) : 0;
		recs = xmalloc((n ? n : 1) * sizeof(*recs));
		for (i = 0; i < n; i++)
			if (record_of(json_object_array_get_idx(res, i), &names, &recs[i]) < 0) {
				pr_error("%s: snapshots[0].resources[%zu] is not a per-call record "
					 "(perun collect without --aggregate writes those): nothing to "
					 "convert", what, i);
				goto out;
			}
	}
	json_object_object_foreach(p->root, key, val) {
		if (!strcmp(key, "snapshots")) {
			to = &rest;
			continue;
		}
		if (!strcmp(key, "chunks"))
			continue;
		if (to == &rest || to->len)
			strbuf_addch(to, ',');
		strbuf_add_json_str(to, key);
		strbuf_addch(to, ':');
		strbuf_addstr(to, plain(val));
	}
	if (!prefix.len) {
		pr_error("%s: has no regions before its snapshots (header, collector_info)", what);
		goto out;
	}
	if (profile_writer_open_stream(&w, f, names.n, names.names, prefix.buf, form) < 0)
		goto out;
	for (i = 0; i < n; i++)
		if (profile_writer_call(&w, &recs[i]) < 0) {
			w.f = NULL;	/* the caller's */
			profile_writer_abort(&w);
			goto out;
		}
	t = get(snap, "time");
	m = get(snap, "models");
	/* the snapshot's other regions follow its models */
	strbuf_addstr(&models, m ? plain(m) : "[]");
	json_object_object_foreach(snap, skey, sval) {
		if (!strcmp(skey, "resources") || !strcmp(skey, "calls") || !strcmp(skey, "time") ||
		    !strcmp(skey, "models"))
			continue;
		strbuf_addch(&models, ',');
		strbuf_add_json_str(&models, skey);
		strbuf_addch(&models, ':');
		strbuf_addstr(&models, plain(sval));
	}
	ret = profile_writer_finish_stream(&w, t ? plain(t) : "\"0\"", models.buf,
					   strbuf_str(&rest));
out:
	free(recs);
	free(names.names);
	free(names.hash);
	strbuf_release(&prefix);
	strbuf_release(&rest);
	strbuf_release(&models);
	return ret;
}

/* --- calls with their place in the trace --------------------------------------------- */

static void call_of_record(struct profile_call *c, const struct call_record *r,
			   const char *const *names)
{
	c->uid = names[r->probe];
	c->thread = r->thread;
	c->start = r->start;
	c->amount = r->amount;
	c->exclusive = r->exclusive;
	c->call_id = r->call_id;
	c->caller_id = r->caller_id;
	c->depth = r->depth;
	c->point = r->point;
}

int profile_calls(const struct profile *p, const char *what, struct profile_call **out,
		  size_t *n)
{
	struct json_object *snaps = get(p->root, "snapshots");
	struct intern t = { NULL, 0, 0, NULL, 0 };
	struct profile_call *v = NULL;
	size_t i, j, nv = 0, alloc = 0;
	int ret = -1;

	if (decode_calls(p, what) < 0)
		return -1;
	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *res = get(json_object_array_get_idx(snaps, i), "resources");
		for (j = 0; res && j < json_object_array_length(res); j++) {
			struct call_record r;
			if (record_of(json_object_array_get_idx(res, j), &t, &r) < 0) {
				pr_error("%s: snapshots[%zu].resources[%zu]: not a per-call record (an "
					 "--aggregate profile keeps summaries per function, not calls)",
					 what, i, j);
				goto out;
			}
			if (nv == alloc) {
				alloc = alloc ? alloc * 2 : 1024;
				v = xrealloc(v, alloc * sizeof(*v));
			}
			call_of_record(&v[nv++], &r, t.names);
		}
	}
	if (p->calls && p->calls->state == 1 && p->calls->n) {
		v = xrealloc(v, (nv + p->calls->n) * sizeof(*v));
		for (i = 0; i < p->calls->n; i++)
			call_of_record(&v[nv++], &p->calls->v[i].r, p->calls->names);
	}
	*out = v;
	*n = nv;
	v = NULL;
	ret = 0;
out:
	free(v);
	free(t.names);
	free(t.hash);
	return ret;
}
