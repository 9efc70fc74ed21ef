/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "show"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "report/calls-view.h"
#include "util/log.h"
#include "util/quantile.h"

/* No caller among the calls.  */
#define NONE SIZE_MAX

/* Function names by first appearance, found by hash (names borrowed).  */
struct names {
	const char **v;
	size_t n, alloc;
	size_t *hash;		/* index + 1, 0 free */
	size_t hsize;
};

static size_t name_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static size_t name_index(struct names *t, const char *s)
{
	size_t i, j;

	if ((t->n + 1) * 2 > t->hsize) {
		free(t->hash);
		t->hsize = t->hsize ? t->hsize * 2 : 64;
		t->hash = xcalloc(t->hsize, sizeof(*t->hash));
		for (j = 0; j < t->n; j++) {
			for (i = name_hash(t->v[j]) & (t->hsize - 1); t->hash[i];
			     i = (i + 1) & (t->hsize - 1))
				;
			t->hash[i] = j + 1;
		}
	}
	for (i = name_hash(s) & (t->hsize - 1); t->hash[i]; i = (i + 1) & (t->hsize - 1))
		if (!strcmp(t->v[t->hash[i] - 1], s))
			return t->hash[i] - 1;
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 64;
		t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
	}
	t->v[t->n] = s;
	t->hash[i] = ++t->n;
	return t->n - 1;
}

static void names_release(struct names *t)
{
	free(t->v);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* The calls sorted by thread and entry, each with its function and caller.  */
struct calls {
	struct profile_call *v;
	size_t n;
	size_t *fn;		/* index in fns */
	size_t *parent;		/* index of the caller's call, or NONE */
	struct names fns;
	/* which calls the filter keeps */
	unsigned char *scope;	/* a call of an included function, or inside one */
	unsigned char *shown;
	unsigned *level;	/* shown calls above it */
};

static int cmp_entry(const void *a, const void *b)
{
	const struct profile_call *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->call_id < y->call_id ? -1 : x->call_id > y->call_id;
}

static int calls_load(struct calls *c, const struct profile *p, const char *what)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	if (profile_calls(p, what, &c->v, &c->n) < 0)
		return -1;
	if (c->n > 1)
		qsort(c->v, c->n, sizeof(*c->v), cmp_entry);
	c->fn = xmalloc((c->n ? c->n : 1) * sizeof(*c->fn));
	c->parent = xmalloc((c->n ? c->n : 1) * sizeof(*c->parent));
	for (i = 0; i < c->n; i++) {
		struct profile_call key = c->v[i], *hit = NULL;
		c->fn[i] = name_index(&c->fns, c->v[i].uid);
		c->parent[i] = NONE;
		if (c->v[i].caller_id < 0)
			continue;
		/* the caller entered before, in the same thread */
		key.call_id = (uint64_t)c->v[i].caller_id;
		hit = bsearch(&key, c->v, i, sizeof(*c->v), cmp_entry);
		if (hit)
			c->parent[i] = (size_t)(hit - c->v);
	}
	return 0;
}

static void calls_release(struct calls *c)
{
	free(c->v);
	free(c->fn);
	free(c->parent);
	free(c->scope);
	free(c->shown);
	free(c->level);
	names_release(&c->fns);
}

static int included(char *const *include, const char *uid)
{
	for (; include && *include; include++)
		if (!strcmp(*include, uid))
			return 1;
	return !include;
}

/* Marks the calls f keeps.  The calls come in entry order per thread, so a
 * caller is marked before its callees.  */
static void calls_mark(struct calls *c, const struct calls_filter *f)
{
	size_t i;

	c->scope = xcalloc(c->n ? c->n : 1, 1);
	c->shown = xcalloc(c->n ? c->n : 1, 1);
	c->level = xcalloc(c->n ? c->n : 1, sizeof(*c->level));
	for (i = 0; i < c->n; i++) {
		const struct profile_call *k = &c->v[i];
		size_t up = c->parent[i];
		int in_parent = up != NONE && c->scope[up];

		c->scope[i] = in_parent || included(f->include, k->uid);
		c->level[i] = in_parent ? c->level[up] + 1 : 0;
		c->shown[i] = c->scope[i] && (!f->has_thread || k->thread == f->thread) &&
			      k->amount >= f->min_ns && (!in_parent || c->shown[up]) &&
			      (!f->depth || c->level[i] < f->depth);
	}
}

/* --- tree ------------------------------------------------------------------------ */

static void add_time(struct strbuf *out, const struct profile_call *k, uint64_t ns)
{
	if (k->point)
		strbuf_addf(out, " %10s", "point");
	else
		strbuf_addf(out, " %10" PRIu64, ns);
}

static void view_tree(const struct calls *c, struct strbuf *out)
{
	size_t i, j, shown = 0;

	strbuf_addf(out, "# the calls per thread in entry order, nested by caller; times in ns,\n"
			 "# ENTRY since the trace began, SELF without the recorded callees\n");
	for (i = 0; i < c->n; i = j) {
		size_t n = 0, k;
		for (j = i; j < c->n && c->v[j].thread == c->v[i].thread; j++)
			n += c->shown[j];
		if (!n)
			continue;
		shown += n;
		strbuf_addf(out, "\n# thread %" PRId64 ": %zu call%s\n", c->v[i].thread, n,
			    n == 1 ? "" : "s");
		strbuf_addf(out, "# %10s %10s %10s  %s\n", "ENTRY", "DURATION", "SELF", "FUNCTION");
		for (k = i; k < j; k++) {
			const struct profile_call *v = &c->v[k];
			if (!c->shown[k])
				continue;
			strbuf_addf(out, "  %10" PRIu64, v->start);
			add_time(out, v, v->amount);
			add_time(out, v, v->exclusive);
			strbuf_addf(out, "  %*s%s\n", (int)(2 * c->level[k]), "", v->uid);
		}
	}
	if (!shown)
		strbuf_addstr(out, "\n# no calls match\n");
}

/* --- graph ----------------------------------------------------------------------- */

struct edge {
	const char *name;
	uint64_t calls, total, self;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void edge_add(struct edge **v, size_t *n, const char *name, const struct profile_call *k)
{
	size_t i;

	for (i = 0; i < *n && strcmp((*v)[i].name, name); i++)
		;
	if (i == *n) {
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		memset(&(*v)[i], 0, sizeof(**v));
		(*v)[i].name = name;
		(*n)++;
	}
	(*v)[i].calls++;
	(*v)[i].total += k->amount;
	(*v)[i].self += k->exclusive;
}

static void edges_print(struct edge *v, size_t n, const char *title, struct strbuf *out)
{
	size_t i;

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_edge);
	strbuf_addf(out, "\n# %10s %10s %10s  %s\n", "CALLS", "TOTAL", "SELF", title);
	for (i = 0; i < n; i++)
		strbuf_addf(out, "  %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "  %s\n", v[i].calls,
			    v[i].total, v[i].self, v[i].name);
	if (!n)
		strbuf_addstr(out, "  (none)\n");
}

/* 1 when a caller of call i at any depth is a call of the same function.  */
static int nested(const struct calls *c, size_t i)
{
	size_t up;

	for (up = c->parent[i]; up != NONE; up = c->parent[up])
		if (c->fn[up] == c->fn[i])
			return 1;
	return 0;
}

static int view_graph(const struct calls *c, const char *what, const char *func,
		      struct strbuf *out)
{
	struct edge *callers = NULL, *callees = NULL;
	size_t ncallers = 0, ncallees = 0, i;
	uint64_t n = 0, total = 0, self = 0;

	for (i = 0; i < c->n; i++) {
		const struct profile_call *k = &c->v[i];
		size_t up = c->parent[i];
		if (!c->shown[i])
			continue;
		if (!strcmp(k->uid, func)) {
			n++;
			self += k->exclusive;
			if (!nested(c, i))
				total += k->amount;
			edge_add(&callers, &ncallers, up == NONE ? "(no caller)" : c->v[up].uid, k);
		}
		if (up != NONE && c->shown[up] && !strcmp(c->v[up].uid, func))
			edge_add(&callees, &ncallees, k->uid, k);
	}
	if (!n) {
		free(callers);
		free(callees);
		return pr_error("%s: no calls of '%s' (the filter left none, or it was not traced)",
				what, func);
	}
	strbuf_addf(out,
		    "# %s: %" PRIu64 " call%s, %" PRIu64 " ns in total (outermost calls of a "
		    "recursion), %" PRIu64 " ns self\n"
		    "# TOTAL and SELF: ns in the calls of %s from each caller, and in each callee's "
		    "calls from %s\n",
		    func, n, n == 1 ? "" : "s", total, self, func, func);
	edges_print(callers, ncallers, "CALLERS", out);
	edges_print(callees, ncallees, "CALLEES", out);
	free(callers);
	free(callees);
	return 0;
}

/* --- Chrome trace-event JSON --------------------------------------------------------- */

/* The process of thread tid: trace.threads_by_process (perun's loader),
 * else the traced process, else -1.  */
static int64_t pid_of(const struct profile *p, int64_t tid)
{
	struct json_object *trace = NULL, *byp = NULL, *target = NULL, *pid = NULL;

	if (!json_object_object_get_ex(p->root, "trace", &trace) ||
	    !json_object_is_type(trace, json_type_object))
		return -1;
	if (json_object_object_get_ex(trace, "threads_by_process", &byp) &&
	    json_object_is_type(byp, json_type_object)) {
		json_object_object_foreach(byp, key, tids)
		{
			size_t i;
			for (i = 0; json_object_is_type(tids, json_type_array) &&
				    i < json_object_array_length(tids); i++)
				if (json_object_get_int64(json_object_array_get_idx(tids, i)) == tid)
					return strtoll(key, NULL, 10);
		}
	}
	if (json_object_object_get_ex(trace, "target", &target) &&
	    json_object_object_get_ex(target, "pid", &pid) && json_object_is_type(pid, json_type_int))
		return json_object_get_int64(pid);
	return -1;
}

static void add_json_string(struct strbuf *out, const char *s)
{
	struct json_object *o = json_object_new_string(s);

	strbuf_addstr(out, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* ns as microseconds, exactly: 1234 as 1.234 */
static void add_us(struct strbuf *out, uint64_t ns)
{
	strbuf_addf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void view_chrome(const struct profile *p, const struct calls *c, const char *what,
			struct strbuf *out)
{
	const char *cmd = profile_str(p, "header.cmd");
	char **escaped = xcalloc(c->fns.n ? c->fns.n : 1, sizeof(*escaped));
	int64_t *pids = xmalloc((c->n ? c->n : 1) * sizeof(*pids)), first = c->n ? c->v[0].thread : 0;
	struct strbuf inc = STRBUF_INIT;
	size_t i, j, k;

	if (!cmd || !*cmd)
		cmd = what;
	/* a thread of no known process belongs to the first thread's: the
	 * lowest id, which is the process's own in a trace of one process */
	for (i = 0; i < c->n; i = j) {
		int64_t pid = pid_of(p, c->v[i].thread);
		for (j = i; j < c->n && c->v[j].thread == c->v[i].thread; j++)
			pids[j] = pid >= 0 ? pid : first;
	}
	strbuf_addstr(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"profile\":");
	add_json_string(out, what);
	strbuf_addstr(out, ",\"command\":");
	add_json_string(out, cmd);
	if (profile_incomplete(p, "", &inc)) {
		strbuf_addstr(out, ",\"incomplete\":");
		add_json_string(out, inc.buf);
	}
	strbuf_addstr(out, "},\n\"traceEvents\":[");
	/* names: one process_name per process, one thread_name per thread */
	for (i = 0, k = 0; i < c->n; i = j) {
		struct strbuf name = STRBUF_INIT;
		size_t m;
		for (m = 0; m < i && pids[m] != pids[i]; m++)
			;
		if (m == i) {
			strbuf_addf(&name, "%s (pid %" PRId64 ")", cmd, pids[i]);
			strbuf_addf(out, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRId64
					 ",\"tid\":%" PRId64 ",\"args\":{\"name\":",
				    k++ ? "," : "", pids[i], pids[i]);
			add_json_string(out, name.buf);
			strbuf_addstr(out, "}}");
			strbuf_reset(&name);
		}
		strbuf_addf(&name, "thread %" PRId64, c->v[i].thread);
		strbuf_addf(out, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%" PRId64
				 ",\"tid\":%" PRId64 ",\"args\":{\"name\":",
			    k++ ? "," : "", pids[i], c->v[i].thread);
		add_json_string(out, name.buf);
		strbuf_addstr(out, "}}");
		strbuf_release(&name);
		for (j = i; j < c->n && c->v[j].thread == c->v[i].thread; j++)
			;
	}
	for (i = 0; i < c->n; i++) {
		const struct profile_call *v = &c->v[i];
		size_t fn = c->fn[i];
		if (!c->shown[i])
			continue;
		if (!escaped[fn]) {
			struct strbuf e = STRBUF_INIT;
			add_json_string(&e, v->uid);
			escaped[fn] = strbuf_detach(&e);
		}
		strbuf_addf(out, "%s\n{\"name\":%s,\"cat\":\"%s\",\"ph\":\"%s\",\"ts\":", k++ ? "," : "",
			    escaped[fn], v->point ? "point" : "function", v->point ? "i" : "X");
		add_us(out, v->start);
		if (v->point) {
			strbuf_addstr(out, ",\"s\":\"t\"");
		} else {
			strbuf_addstr(out, ",\"dur\":");
			add_us(out, v->amount);
		}
		/* no args: speedscope names a frame by its name and args, so a
		 * call's own numbers would make every call a frame of its own */
		strbuf_addf(out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 "}", pids[i], v->thread);
	}
	strbuf_addstr(out, "\n]}\n");
	for (i = 0; i < c->fns.n; i++)
		free(escaped[i]);
	free(escaped);
	free(pids);
	strbuf_release(&inc);
}

/* --- latency distributions ------------------------------------------------------------ */

#define HIST_BUCKETS 64
#define HIST_BAR 40

/* One function's durations: its calls' amounts, or a log2 histogram.  */
struct lat {
	const char *name;
	double *v;
	size_t n, alloc;
	uint64_t hist[HIST_BUCKETS];
	uint64_t count;		/* calls in either */
	double min, max, total;
	unsigned from_hist : 1;
};

struct lat_ctx {
	struct names names;	/* while collecting: index in l */
	struct lat *l;
	size_t nl;
	char *const *include;
	int has_thread;
	int64_t thread;
};

static unsigned log2_bucket(uint64_t ns)
{
	unsigned b = 0;

	while (ns > 1) {
		ns >>= 1;
		b++;
	}
	return b;
}

static struct json_object *field(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* The entry of function name, made on first use.  */
static struct lat *lat_of(struct lat_ctx *c, const char *name)
{
	size_t n = c->names.n, i = name_index(&c->names, name);

	if (i == n) {
		c->l = xrealloc(c->l, c->names.n * sizeof(*c->l));
		c->nl = c->names.n;
		memset(&c->l[i], 0, sizeof(*c->l));
		c->l[i].name = name;
		c->l[i].min = -1;
	}
	return &c->l[i];
}

static void lat_add_call(struct lat_ctx *c, const char *name, double amount)
{
	struct lat *l = lat_of(c, name);

	if (l->n == l->alloc) {
		l->alloc = l->alloc ? l->alloc * 2 : 64;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	l->v[l->n++] = amount;
	l->hist[log2_bucket((uint64_t)amount)]++;
	l->total += amount;
	if (l->min < 0 || amount < l->min)
		l->min = amount;
	if (amount > l->max)
		l->max = amount;
	l->count++;
}

/* A stored resource: a summary of many calls with a log2 histogram
 * (--aggregate), or one call.  */
static void lat_one(void *ctxp, struct json_object *r)
{
	struct lat_ctx *c = ctxp;
	struct json_object *uid = field(r, "uid"), *hist = field(r, "log2_hist");
	struct json_object *sub = field(r, "subtype"), *thread = field(r, "thread");
	const char *name;
	struct lat *l;
	size_t n;
	double lo, hi;

	if (uid && json_object_is_type(uid, json_type_object))
		uid = field(uid, "function");
	name = uid ? json_object_get_string(uid) : NULL;
	if (!name || !included(c->include, name) ||
	    (sub && !strcmp(json_object_get_string(sub), "point")) ||
	    (c->has_thread && (!thread || json_object_get_int64(thread) != c->thread)))
		return;
	if (!hist || !json_object_is_type(hist, json_type_array)) {
		lat_add_call(c, name, json_object_get_double(field(r, "amount")));
		return;
	}
	l = lat_of(c, name);
	lo = json_object_get_double(field(r, "min"));
	hi = json_object_get_double(field(r, "max"));
	for (n = 0; n < json_object_array_length(hist) && n < HIST_BUCKETS; n++) {
		uint64_t k = (uint64_t)json_object_get_int64(json_object_array_get_idx(hist, n));
		l->hist[n] += k;
		l->count += k;
	}
	l->from_hist = 1;
	l->total += json_object_get_double(field(r, "amount"));
	if (l->min < 0 || lo < l->min)
		l->min = lo;
	if (hi > l->max)
		l->max = hi;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_lat(const void *a, const void *b)
{
	const struct lat *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The quantiles every latency view shows.  */
static const double lat_q[] = { 0.5, 0.9, 0.99, 0.999 };
const char *const calls_latency_qname[4] = { "p50", "p90", "p99", "p99.9" };

static double lat_quantile(const struct lat *l, double q)
{
	if (l->from_hist)
		return log2_hist_quantile(l->hist, HIST_BUCKETS, q, l->min, l->max);
	return quantile_sorted(l->v, l->n, q);
}

static void lat_histogram(const struct lat *l, struct strbuf *out)
{
	size_t b, lo = HIST_BUCKETS, hi = 0;
	uint64_t most = 0;

	for (b = 0; b < HIST_BUCKETS; b++)
		if (l->hist[b]) {
			lo = b < lo ? b : lo;
			hi = b;
			most = l->hist[b] > most ? l->hist[b] : most;
		}
	strbuf_addf(out, "\n%s: %" PRIu64 " call%s, log2 buckets of ns\n", l->name, l->count,
		    l->count == 1 ? "" : "s");
	for (b = lo; b <= hi && most; b++) {
		uint64_t from = b ? 1ull << b : 0, to = b < 63 ? (1ull << (b + 1)) - 1 : UINT64_MAX;
		size_t bar = (size_t)((l->hist[b] * HIST_BAR + most - 1) / most), i;
		strbuf_addf(out, "  %12" PRIu64 " .. %-12" PRIu64 " %10" PRIu64 "%s", from, to,
			    l->hist[b], bar ? " " : "");
		for (i = 0; i < bar; i++)
			strbuf_addch(out, '#');
		strbuf_addch(out, '\n');
	}
}

/* The latency of each function of p that f keeps, sorted by total time;
 * *kinds gets bit 0 when some come from exact calls, bit 1 from histograms.  */
static int lat_collect(const struct profile *p, const char *what, const struct calls_filter *f,
		       struct lat_ctx *c, int *kinds)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->include = f->include;
	c->has_thread = f->has_thread;
	c->thread = f->thread;
	if (profile_is_compact(p)) {
		struct profile_call *v;
		size_t n;
		if (profile_calls(p, what, &v, &n) < 0)
			return -1;
		for (i = 0; i < n; i++)
			if (!v[i].point && included(f->include, v[i].uid) &&
			    (!f->has_thread || v[i].thread == f->thread))
				lat_add_call(c, v[i].uid, (double)v[i].amount);
		free(v);
	} else {
		profile_each_resource(p, lat_one, c);
	}
	*kinds = 0;
	for (i = 0; i < c->names.n; i++) {
		/* a function with both kinds has its calls in the histogram too */
		*kinds |= c->l[i].from_hist ? 2 : 1;
		if (!c->l[i].from_hist)
			qsort(c->l[i].v, c->l[i].n, sizeof(double), cmp_double);
	}
	if (c->names.n > 1)
		qsort(c->l, c->names.n, sizeof(*c->l), cmp_lat);
	/* sorted: the name index no longer matches l */
	names_release(&c->names);
	return 0;
}

static void lat_release(struct lat_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nl; i++)
		free(c->l[i].v);
	free(c->l);
	names_release(&c->names);
}

static const char *lat_source(int kinds)
{
	return kinds == 3   ? "quantiles of the exact calls (FROM calls) or of log2 histograms "
			      "(FROM log2)"
	       : kinds == 2 ? "quantiles of the stored log2 histograms, interpolated within a "
			      "bucket (FROM log2)"
			    : "quantiles of the exact calls, linear between the closest ranks "
			      "(FROM calls)";
}

static const char *lat_short_source(int kinds)
{
	return kinds == 3 ? "the exact calls and log2 histograms"
	       : kinds == 2 ? "the stored log2 histograms" : "the exact calls";
}

static int view_hist(const struct profile *p, const char *what, const struct calls_filter *f,
		     struct strbuf *out)
{
	struct lat_ctx c;
	size_t i, j, width = 8;
	int kinds;

	if (lat_collect(p, what, f, &c, &kinds) < 0)
		return -1;
	for (i = 0; i < c.nl; i++)
		if (strlen(c.l[i].name) > width)
			width = strlen(c.l[i].name);
	strbuf_addf(out, "# latency per function in ns: %s\n", lat_source(kinds));
	strbuf_addf(out, "%-*s %10s", (int)width, "function", "calls");
	for (j = 0; j < sizeof(lat_q) / sizeof(lat_q[0]); j++)
		strbuf_addf(out, " %12s", calls_latency_qname[j]);
	strbuf_addf(out, " %12s  %s\n", "max", "from");
	for (i = 0; i < c.nl; i++) {
		strbuf_addf(out, "%-*s %10" PRIu64, (int)width, c.l[i].name, c.l[i].count);
		for (j = 0; j < sizeof(lat_q) / sizeof(lat_q[0]); j++)
			strbuf_addf(out, " %12.1f", lat_quantile(&c.l[i], lat_q[j]));
		strbuf_addf(out, " %12.1f  %s\n", c.l[i].max, c.l[i].from_hist ? "log2" : "calls");
	}
	if (!c.nl)
		strbuf_addstr(out, "# no calls match\n");
	for (i = 0; i < c.nl; i++)
		lat_histogram(&c.l[i], out);
	lat_release(&c);
	return 0;
}

int calls_latency(const struct profile *p, const char *what, struct calls_latency **rows,
		  size_t *n)
{
	struct calls_filter f;
	struct lat_ctx c;
	size_t i, j;
	int kinds;

	memset(&f, 0, sizeof(f));
	*rows = NULL;
	*n = 0;
	if (lat_collect(p, what, &f, &c, &kinds) < 0)
		return -1;
	*rows = xcalloc(c.nl ? c.nl : 1, sizeof(**rows));
	for (i = 0; i < c.nl; i++) {
		struct calls_latency *r = &(*rows)[i];
		r->name = xstrdup(c.l[i].name);
		r->count = c.l[i].count;
		for (j = 0; j < sizeof(lat_q) / sizeof(lat_q[0]); j++)
			r->q[j] = lat_quantile(&c.l[i], lat_q[j]);
		r->max = c.l[i].max;
		r->from_hist = c.l[i].from_hist;
	}
	*n = c.nl;
	lat_release(&c);
	return 0;
}

void calls_latency_free(struct calls_latency *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(rows[i].name);
	free(rows);
}

/* The row of function name in c, or NULL.  */
static const struct lat *lat_find(const struct lat_ctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nl; i++)
		if (!strcmp(c->l[i].name, name))
			return &c->l[i];
	return NULL;
}

static void lat_cells(struct strbuf *out, const struct lat *a, const struct lat *b, double q)
{
	if (a)
		strbuf_addf(out, " %10.1f", lat_quantile(a, q));
	else
		strbuf_addf(out, " %10s", "-");
	if (b)
		strbuf_addf(out, " %10.1f", lat_quantile(b, q));
	else
		strbuf_addf(out, " %10s", "-");
}

int calls_hist_diff(const struct profile *pa, const char *a, const struct profile *pb,
		    const char *b, struct strbuf *out)
{
	struct calls_filter f = { NULL };
	struct lat_ctx c[2];
	size_t i, j, k, width = 8;
	int kinds[2];

	if (lat_collect(pa, a, &f, &c[0], &kinds[0]) < 0)
		return -1;
	if (lat_collect(pb, b, &f, &c[1], &kinds[1]) < 0) {
		lat_release(&c[0]);
		return -1;
	}
	for (k = 0; k < 2; k++)
		for (i = 0; i < c[k].nl; i++)
			if (strlen(c[k].l[i].name) > width)
				width = strlen(c[k].l[i].name);
	strbuf_addf(out, "# latency per function in ns, quantiles of A: %s; of B: %s\n",
		    lat_short_source(kinds[0]), lat_short_source(kinds[1]));
	strbuf_addf(out, "%-*s %8s %8s", (int)width, "function", "calls A", "calls B");
	for (j = 0; j < sizeof(lat_q) / sizeof(lat_q[0]); j++)
		strbuf_addf(out, " %8s A %8s B", calls_latency_qname[j], calls_latency_qname[j]);
	strbuf_addf(out, " %9s\n", "p99 B/A");
	/* A's functions by total time, then those only in B */
	for (k = 0; k < 2; k++)
		for (i = 0; i < c[k].nl; i++) {
			const struct lat *la = k ? lat_find(&c[0], c[1].l[i].name) : &c[0].l[i];
			const struct lat *lb = k ? &c[1].l[i] : lat_find(&c[1], c[0].l[i].name);
			char ca[24] = "-", cb[24] = "-", ratio[24] = "-";
			if (k && la)
				continue;
			if (la)
				snprintf(ca, sizeof(ca), "%" PRIu64, la->count);
			if (lb)
				snprintf(cb, sizeof(cb), "%" PRIu64, lb->count);
			if (la && lb && lat_quantile(la, 0.99) > 0)
				snprintf(ratio, sizeof(ratio), "%.2fx",
					 lat_quantile(lb, 0.99) / lat_quantile(la, 0.99));
			strbuf_addf(out, "%-*s %8s %8s", (int)width, la ? la->name : lb->name, ca, cb);
			for (j = 0; j < sizeof(lat_q) / sizeof(lat_q[0]); j++)
				lat_cells(out, la, lb, lat_q[j]);
			strbuf_addf(out, " %9s\n", ratio);
		}
	lat_release(&c[0]);
	lat_release(&c[1]);
	return 0;
}

int calls_view(const struct profile *p, const char *what, enum calls_format fmt,
	       const struct calls_filter *f, struct strbuf *out)
{
	struct calls c;
	int ret = 0;

	if (fmt == CALLS_HIST)
		return view_hist(p, what, f, out);
	if (calls_load(&c, p, what) < 0)
		return -1;
	calls_mark(&c, f);
	if (fmt == CALLS_TREE)
		view_tree(&c, out);
	else if (fmt == CALLS_GRAPH)
		ret = view_graph(&c, what, f->function, out);
	else
		view_chrome(p, &c, what, out);
	calls_release(&c);
	return ret;
}
