#include "config.h"

#define PR_FMT "profile"

#include <json-c/json.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/log.h"

int profile_parse(struct profile *p, const char *text, size_t len, const char *what)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	enum json_tokener_error err;

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
	return 0;
}

int profile_load(struct profile *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	p->root = NULL;
	if (strbuf_read_file(&sb, path) < 0)
		return pr_error_errno("%s", path);
	ret = profile_parse(p, sb.buf, sb.len, path);
	strbuf_release(&sb);
	return ret;
}

void profile_release(struct profile *p)
{
	json_object_put(p->root);
	p->root = NULL;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
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

int profile_validate(const struct profile *p, const char *what)
{
	struct json_object *snaps, *h = get(p->root, "header");
	size_t i, j;

	if (want(p->root, "header", json_type_object, what, "") < 0 ||
	    want(h, "type", json_type_string, what, "header") < 0 ||
	    want(h, "units", json_type_object, what, "header") < 0 ||
	    want(h, "cmd", json_type_string, what, "header") < 0 ||
	    want(p->root, "collector_info", json_type_object, what, "") < 0 ||
	    want(get(p->root, "collector_info"), "name", json_type_string, what,
		 "collector_info") < 0 ||
	    want(p->root, "postprocessors", json_type_array, what, "") < 0 ||
	    want(p->root, "snapshots", json_type_array, what, "") < 0)
		return -1;
	if (get(h, "args") && !json_object_is_type(get(h, "args"), json_type_string))
		return pr_error("%s: header.args must be a string", what);
	if (get(h, "workload") && !json_object_is_type(get(h, "workload"), json_type_string))
		return pr_error("%s: header.workload must be a string", what);
	if (get(p->root, "origin") && !json_object_is_type(get(p->root, "origin"), json_type_string))
		return pr_error("%s: origin must be a string", what);
	snaps = get(p->root, "snapshots");
	for (i = 0; i < json_object_array_length(snaps); i++) {
		struct json_object *s = json_object_array_get_idx(snaps, i), *res;
		char where[64];
		snprintf(where, sizeof(where), "snapshots[%zu]", i);
		if (want(s, "resources", json_type_array, what, where) < 0)
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
			if (!get(r, "uid"))
				return pr_error("%s: %s.uid is missing", what, where);
		}
	}
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

double log2_hist_quantile(const uint64_t *hist, size_t nbuckets, double q, double min,
			  double max)
{
	uint64_t n = 0, seen = 0;
	double want, v = 0;
	size_t b;

	for (b = 0; b < nbuckets; b++)
		n += hist[b];
	if (!n)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	want = q * (double)n;
	for (b = 0; b < nbuckets; b++) {
		double lo, hi;
		if (!hist[b])
			continue;
		if ((double)(seen + hist[b]) >= want || b + 1 == nbuckets) {
			lo = b ? (double)(1ull << (b < 63 ? b : 63)) : 0;
			hi = b < 63 ? (double)(1ull << (b + 1)) : 2 * lo;
			v = lo + (hi - lo) * ((want - (double)seen) / (double)hist[b]);
			break;
		}
		seen += hist[b];
	}
	if (v < min)
		v = min;
	if (v > max)
		v = max;
	return v;
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
	double cal_mean;	/* trace.summary's calibrated_mean, -1 without */
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

static double ceil_(double v)
{
	double t = (double)(uint64_t)v;
	return t < v ? t + 1 : t;
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

static int64_t int_of(struct json_object *r, const char *key)
{
	struct json_object *v = get(r, key);

	return v ? json_object_get_int64(v) : -1;
}

/* Every per-call resource's call-id, caller-id and uid, sorted by call-id.  */
static size_t collect_refs(const struct profile *p, struct frame_ref **out)
{
	struct json_object *snaps = get(p->root, "snapshots");
	struct frame_ref *refs = NULL;
	size_t nrefs = 0, alloc = 0, i, j;

	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *res = get(json_object_array_get_idx(snaps, i), "resources");
		for (j = 0; res && j < json_object_array_length(res); j++) {
			struct json_object *r = json_object_array_get_idx(res, j);
			if (nrefs == alloc) {
				alloc = alloc ? 2 * alloc : 64;
				refs = xrealloc(refs, alloc * sizeof(*refs));
			}
			refs[nrefs].id = int_of(r, "call-id");
			refs[nrefs].caller = int_of(r, "caller-id");
			refs[nrefs].uid = uid_of(r);
			nrefs++;
		}
	}
	if (nrefs > 1)
		qsort(refs, nrefs, sizeof(*refs), cmp_ref);
	*out = refs;
	return nrefs;
}

/* 1 when a caller of r, at any depth, is the same function: r's time is
 * then inside that caller's, and a total counts the outermost call only.  */
static int nested_call(const struct frame_ref *refs, size_t nrefs, struct json_object *r,
		       const char *uid)
{
	int64_t caller = int_of(r, "caller-id");
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
 * their middle.  */
#define NAME_COLUMN_MAX 80

void profile_summary(const struct profile *p, struct strbuf *out)
{
	struct json_object *snaps = get(p->root, "snapshots");
	struct json_object *tsum = get(get(p->root, "trace"), "summary");
	struct fstat *fs = NULL;
	struct frame_ref *refs = NULL;
	size_t nfs = 0, nrefs, i, j, k, width = 40;
	double all_excl = 0;
	const char *unit = "";
	struct json_object *units = get(get(p->root, "header"), "units");
	int any_sampled = 0, any_cal = 0;

	if (units && json_object_is_type(units, json_type_object)) {
		json_object_object_foreach(units, key, val) {
			(void)key;
			unit = json_object_get_string(val);
			break;
		}
	}
	nrefs = collect_refs(p, &refs);
	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *res = get(json_object_array_get_idx(snaps, i), "resources");
		for (j = 0; res && j < json_object_array_length(res); j++) {
			struct json_object *r = json_object_array_get_idx(res, j);
			const char *uid = uid_of(r);
			double a = json_object_get_double(get(r, "amount"));
			struct json_object *ex = get(r, "exclusive"), *cnt = get(r, "count");
			struct json_object *hist = get(r, "log2_hist");
			for (k = 0; k < nfs && strcmp(fs[k].uid, uid); k++)
				;
			if (k == nfs) {
				struct json_object *ts = get(tsum, uid);
				fs = xrealloc(fs, (nfs + 1) * sizeof(*fs));
				memset(&fs[nfs], 0, sizeof(*fs));
				fs[nfs].uid = uid;
				fs[nfs].min = -1;
				fs[nfs].sampled = get(ts, "sampled") ? json_object_get_int64(get(ts, "sampled")) : 0;
				fs[nfs].cal_mean = get(ts, "calibrated_mean")
							   ? json_object_get_double(get(ts, "calibrated_mean"))
							   : -1;
				any_sampled |= fs[nfs].sampled > 1;
				any_cal |= fs[nfs].cal_mean >= 0;
				nfs++;
			}
			if (hist && json_object_is_type(hist, json_type_array)) {
				/* a per-thread summary: its amount is a sum, not one call */
				size_t b, nb = json_object_array_length(hist);
				double mx = get(r, "max") ? json_object_get_double(get(r, "max")) : a;
				double mn = get(r, "min") ? json_object_get_double(get(r, "min")) : 0;
				for (b = 0; b < nb && b < 64; b++)
					fs[k].hist[b] += (uint64_t)json_object_get_int64(
						json_object_array_get_idx(hist, b));
				fs[k].has_hist = 1;
				if (mx > fs[k].max)
					fs[k].max = mx;
				if (fs[k].min < 0 || mn < fs[k].min)
					fs[k].min = mn;
			} else {
				if (fs[k].n == fs[k].alloc) {
					fs[k].alloc = fs[k].alloc ? fs[k].alloc * 2 : 16;
					fs[k].amounts = xrealloc(fs[k].amounts,
								 fs[k].alloc * sizeof(double));
				}
				fs[k].amounts[fs[k].n++] = a;
				if (a > fs[k].max)
					fs[k].max = a;
			}
			fs[k].calls += cnt ? (uint64_t)json_object_get_int64(cnt) : 1;
			fs[k].sum += a;
			if (!nested_call(refs, nrefs, r, uid))
				fs[k].total += a;
			fs[k].excl += ex ? json_object_get_double(ex) : a;
			all_excl += ex ? json_object_get_double(ex) : a;
		}
	}
	free(refs);
	if (nfs > 1)
		qsort(fs, nfs, sizeof(*fs), cmp_total);
	for (k = 0; k < nfs; k++)
		if (strlen(fs[k].uid) > width)
			width = strlen(fs[k].uid);
	if (width > NAME_COLUMN_MAX)
		width = NAME_COLUMN_MAX;
	strbuf_addf(out, "%-*s %10s %14s %12s %12s %12s %14s %7s%s\n", (int)width, "function",
		    "calls", "total", "mean", "median", "p95", "max", "excl%",
		    any_cal ? "  cal.mean" : "");
	for (k = 0; k < nfs; k++) {
		double *a = fs[k].amounts, med, p95;
		size_t n = fs[k].n;
		char calls[32], cal[32] = "", name[NAME_COLUMN_MAX + 1];
		size_t len = strlen(fs[k].uid);
		if (len > width) {
			/* C++ names differ at both ends (scope, parameters): keep both */
			size_t tail = (width - 3) / 2, head = width - 3 - tail;
			snprintf(name, sizeof(name), "%.*s...%s", (int)head, fs[k].uid,
				 fs[k].uid + len - tail);
		} else {
			snprintf(name, sizeof(name), "%s", fs[k].uid);
		}
		if (fs[k].has_hist) {
			med = log2_hist_quantile(fs[k].hist, 64, 0.5, fs[k].min, fs[k].max);
			p95 = log2_hist_quantile(fs[k].hist, 64, 0.95, fs[k].min, fs[k].max);
		} else {
			if (n > 1)
				qsort(a, n, sizeof(double), cmp_double);
			med = n ? a[n / 2] : 0;
			/* nearest rank: never below the median */
			p95 = n ? a[(size_t)ceil_(0.95 * (double)n) - 1] : 0;
		}
		snprintf(calls, sizeof(calls), "%" PRIu64 "%s", fs[k].calls, fs[k].sampled > 1 ? "~" : "");
		if (any_cal && fs[k].cal_mean >= 0)
			snprintf(cal, sizeof(cal), " %9.1f", fs[k].cal_mean);
		strbuf_addf(out, "%-*s %10s %14.0f %12.1f %12.0f %12.0f %14.0f %6.1f%%%s\n",
			    (int)width, name, calls, fs[k].total,
			    fs[k].calls ? fs[k].sum / (double)fs[k].calls : 0, med, p95, fs[k].max,
			    all_excl > 0 ? 100.0 * fs[k].excl / all_excl : 0, cal);
		free(a);
	}
	strbuf_addf(out, "%zu function%s; amounts in %s\n", nfs, nfs == 1 ? "" : "s",
		    *unit ? unit : "the profile's units");
	strbuf_addstr(out, "total: outermost calls of a recursion only");
	if (any_cal)
		strbuf_addstr(out, "; cal.mean: the mean minus the measured probe cost");
	strbuf_addch(out, '\n');
	if (any_sampled) {
		for (k = 0; k < nfs; k++)
			if (fs[k].sampled > 1)
				strbuf_addf(out, "~ %s: sampled, 1 call in %" PRId64 " recorded\n",
					    fs[k].uid, fs[k].sampled);
	}
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

void profile_folded(const struct profile *p, struct strbuf *out)
{
	struct json_object *snaps = get(p->root, "snapshots");
	struct frame_ref *refs = NULL;
	struct folded_line *lines = NULL;
	size_t nrefs = 0, nlines = 0, i, j, k;

	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *res = get(json_object_array_get_idx(snaps, i), "resources");
		for (j = 0; res && j < json_object_array_length(res); j++) {
			struct json_object *r = json_object_array_get_idx(res, j);
			refs = xrealloc(refs, (nrefs + 1) * sizeof(*refs));
			refs[nrefs].id = get(r, "call-id") ? json_object_get_int64(get(r, "call-id")) : -1;
			refs[nrefs].caller = get(r, "caller-id") ? json_object_get_int64(get(r, "caller-id")) : -1;
			refs[nrefs].uid = uid_of(r);
			nrefs++;
		}
	}
	if (nrefs > 1)
		qsort(refs, nrefs, sizeof(*refs), cmp_ref);
	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *res = get(json_object_array_get_idx(snaps, i), "resources");
		for (j = 0; res && j < json_object_array_length(res); j++) {
			struct json_object *r = json_object_array_get_idx(res, j);
			struct json_object *ex = get(r, "exclusive");
			struct strbuf st = STRBUF_INIT;
			const char *chain[256];
			size_t depth = 0;
			int64_t caller = get(r, "caller-id") ? json_object_get_int64(get(r, "caller-id")) : -1;
			double v = ex ? json_object_get_double(ex) : json_object_get_double(get(r, "amount"));
			chain[depth++] = uid_of(r);
			while (caller >= 0 && depth < 256) {
				struct frame_ref key = { caller, 0, NULL }, *f;
				f = bsearch(&key, refs, nrefs, sizeof(*refs), cmp_ref);
				if (!f)
					break;
				chain[depth++] = f->uid;
				caller = f->caller;
			}
			while (depth--) {
				const char *c;
				for (c = chain[depth]; *c; c++)	/* ';' and ' ' separate fields */
					strbuf_addch(&st, *c == ';' || *c == ' ' ? '_' : *c);
				if (depth)
					strbuf_addch(&st, ';');
			}
			lines = xrealloc(lines, (nlines + 1) * sizeof(*lines));
			lines[nlines].stack = strbuf_detach(&st);
			lines[nlines].value = v;
			nlines++;
		}
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

void profile_each_resource(const struct profile *p, void (*fn)(void *, struct json_object *),
			   void *ctx)
{
	struct json_object *snaps = get(p->root, "snapshots");
	size_t i, j;

	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *res = get(json_object_array_get_idx(snaps, i), "resources");
		for (j = 0; res && j < json_object_array_length(res); j++)
			fn(ctx, json_object_array_get_idx(res, j));
	}
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
