/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The degradation check over runs and calling contexts (analysis/check.h).  */
#include "config.h"

#define PR_FMT "check"
#define PCRE2_CODE_UNIT_WIDTH 8

#include <ctype.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <json-c/json.h>
#include <math.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check-job.h"
#include "analysis/check-models.h"
#include "analysis/check.h"
#include "analysis/json-read.h"
#include "analysis/robust.h"
#include "analysis/runscale.h"
#include "profile/job.h"
#include "profile/machine.h"
#include "profile/profile.h"
#include "util/log.h"
#include "util/quantile.h"
#include "util/strbuf.h"

static const char *const verdict_names[] = {"no-change", "degradation", "optimization",
					    "undecided", "new",		"removed"};
static const char *const metric_names[] = {"self", "inclusive"};
static const char *const method_names[] = {
    "runs",	       "mann-whitney",	       "best-model-order-equality",
    "linear-regression", "polynomial-regression", "fast-check",
    "local-statistics",  "exclusive-time-outliers"};

const char *check_verdict_name(enum check_verdict v)
{
	return verdict_names[v];
}

const char *check_metric_name(enum check_metric m)
{
	return metric_names[m];
}

const char *check_basis_name(enum check_basis b)
{
	return b == CHECK_BY_CONTROL ? "in-run control" : b == CHECK_BY_MODELS ? "models" : "runs";
}

const char *check_method_name(enum check_method m)
{
	return method_names[m];
}

int check_statistic_parse(const char *s, double *q)
{
	char *end;
	double v;

	if (!strcmp(s, "median")) {
		*q = 0.5;
		return 0;
	}
	if (!strcmp(s, "min")) {
		*q = 0;
		return 0;
	}
	if (s[0] != 'p' || !isdigit((unsigned char)s[1]))
		return -1;
	v = strtod(s + 1, &end);
	if (*end || !(v > 0 && v < 100))
		return -1;
	*q = v / 100;
	return 0;
}

void check_statistic_name(double q, char *buf, size_t n)
{
	if (q == 0.5)
		snprintf(buf, n, "median");
	else if (q == 0)
		snprintf(buf, n, "fastest call");
	else
		snprintf(buf, n, "p%g", 100 * q);
}

double check_method_threshold(enum check_method m)
{
	return m == CHECK_LINEAR_REGRESSION || m == CHECK_POLYNOMIAL_REGRESSION ||
			       m == CHECK_FAST_CHECK || m == CHECK_LOCAL_STATISTICS
		   ? 0.25
		   : 0.1;
}

int check_method_models(enum check_method m)
{
	return m == CHECK_MODEL_ORDER || m == CHECK_LINEAR_REGRESSION ||
	       m == CHECK_POLYNOMIAL_REGRESSION || m == CHECK_FAST_CHECK ||
	       m == CHECK_LOCAL_STATISTICS;
}

int check_method_parse(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(method_names) / sizeof(*method_names); i++)
		if (!strcmp(s, method_names[i]))
			return (int)i;
	return -1;
}

void check_opts_init(struct check_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->method = CHECK_RUNS;
	o->threshold = 0.1;
	o->confidence = 0.99;
	o->statistic = 0.1;
}

/* --- calling contexts ---------------------------------------------------- */

/* Interned names and contexts, shared by every run of a job: a context is
 * (parent context, function), the root's parent is NONE.  */
#define NONE SIZE_MAX

struct ctx_node {
	size_t parent, name;
};

struct interner {
	char **names;
	size_t nnames, name_alloc;
	size_t *name_slot, name_nslots; /* open addressing, index + 1 */
	struct ctx_node *ctx;
	size_t nctx, ctx_alloc;
	size_t *ctx_slot, ctx_nslots;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static uint64_t hash_pair(size_t a, size_t b)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ ((uint64_t)b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	return h * 0xbf58476d1ce4e5b9ull;
}

static size_t intern_name(struct interner *in, const char *s)
{
	size_t h, i;

	if (2 * (in->nnames + 1) > in->name_nslots) {
		size_t n = in->name_nslots ? 2 * in->name_nslots : 64;
		free(in->name_slot);
		in->name_slot = xcalloc(n, sizeof(*in->name_slot));
		in->name_nslots = n;
		for (i = 0; i < in->nnames; i++) {
			h = (size_t)hash_str(in->names[i]) & (n - 1);
			while (in->name_slot[h])
				h = (h + 1) & (n - 1);
			in->name_slot[h] = i + 1;
		}
	}
	for (h = (size_t)hash_str(s) & (in->name_nslots - 1); in->name_slot[h];
	     h = (h + 1) & (in->name_nslots - 1))
		if (!strcmp(in->names[in->name_slot[h] - 1], s))
			return in->name_slot[h] - 1;
	if (in->nnames == in->name_alloc) {
		in->name_alloc = in->name_alloc ? 2 * in->name_alloc : 64;
		in->names = xrealloc(in->names, in->name_alloc * sizeof(*in->names));
	}
	in->names[in->nnames] = xstrdup(s);
	in->name_slot[h] = ++in->nnames;
	return in->nnames - 1;
}

static size_t intern_ctx(struct interner *in, size_t parent, size_t name)
{
	size_t h, i;

	if (2 * (in->nctx + 1) > in->ctx_nslots) {
		size_t n = in->ctx_nslots ? 2 * in->ctx_nslots : 64;
		free(in->ctx_slot);
		in->ctx_slot = xcalloc(n, sizeof(*in->ctx_slot));
		in->ctx_nslots = n;
		for (i = 0; i < in->nctx; i++) {
			h = (size_t)hash_pair(in->ctx[i].parent, in->ctx[i].name) & (n - 1);
			while (in->ctx_slot[h])
				h = (h + 1) & (n - 1);
			in->ctx_slot[h] = i + 1;
		}
	}
	for (h = (size_t)hash_pair(parent, name) & (in->ctx_nslots - 1); in->ctx_slot[h];
	     h = (h + 1) & (in->ctx_nslots - 1)) {
		const struct ctx_node *c = &in->ctx[in->ctx_slot[h] - 1];
		if (c->parent == parent && c->name == name)
			return in->ctx_slot[h] - 1;
	}
	if (in->nctx == in->ctx_alloc) {
		in->ctx_alloc = in->ctx_alloc ? 2 * in->ctx_alloc : 64;
		in->ctx = xrealloc(in->ctx, in->ctx_alloc * sizeof(*in->ctx));
	}
	in->ctx[in->nctx] = (struct ctx_node){parent, name};
	in->ctx_slot[h] = ++in->nctx;
	return in->nctx - 1;
}

static void interner_release(struct interner *in)
{
	size_t i;

	for (i = 0; i < in->nnames; i++)
		free(in->names[i]);
	free(in->names);
	free(in->name_slot);
	free(in->ctx);
	free(in->ctx_slot);
	memset(in, 0, sizeof(*in));
}

/* "main;slowpart;spin": the folded-stack form (';' and ' ' inside a name
 * become '_').  */
static char *ctx_path(const struct interner *in, size_t c)
{
	size_t depth = 0, k, *chain = NULL, alloc = 0;
	struct strbuf sb = STRBUF_INIT;
	const char *ch;

	for (k = c; k != NONE; k = in->ctx[k].parent) {
		if (depth == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			chain = xrealloc(chain, alloc * sizeof(*chain));
		}
		chain[depth++] = in->ctx[k].name;
	}
	while (depth--) {
		for (ch = in->names[chain[depth]]; *ch; ch++)
			strbuf_addch(&sb, *ch == ';' || *ch == ' ' ? '_' : *ch);
		if (depth)
			strbuf_addch(&sb, ';');
	}
	free(chain);
	return sb.buf ? strbuf_detach(&sb) : xstrdup("");
}

/* --- one run: its calls, then per context the median call times -------- */

struct call {
	size_t name;
	double amount, exclusive; /* exclusive NAN when the record has none */
	int64_t id, caller;
	size_t ctx;
	size_t children, callees; /* traced calls directly under it, and in all */
	size_t children_insn, callees_insn; /* of those: returns on their instructions */
	double cost_in, cost_ex;  /* the probes' cost taken out of amount, exclusive */
};

struct run_reader {
	struct interner *in;
	struct call *c;
	size_t n, alloc;
	int binned;
};

static void push_call(struct run_reader *r, size_t name, double a, double e, int64_t id,
		      int64_t caller)
{
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? 2 * r->alloc : 1024;
		r->c = xrealloc(r->c, r->alloc * sizeof(*r->c));
	}
	r->c[r->n++] = (struct call){name, a, e, id, caller, NONE, 0, 0, 0, 0, 0, 0};
}

static void read_one(void *ctx, struct json_object *res)
{
	struct run_reader *r = ctx;
	struct json_object *uid = jr_get(res, "uid"), *sub = jr_get(res, "subtype"), *hist;
	const char *name = NULL;
	double a, e = NAN, v;
	int64_t id = -1, caller = -1;
	size_t ni;

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
	ni = intern_name(r->in, name);
	hist = jr_get(res, "log2_hist");
	if (hist && json_object_is_type(hist, json_type_array)) {
		/* --aggregate: each call at the geometric middle of its bucket */
		double lo = 0, hi = INFINITY;
		size_t b;
		jr_number(jr_get(res, "min"), &lo);
		jr_number(jr_get(res, "max"), &hi);
		for (b = 0; b < json_object_array_length(hist); b++) {
			double c = 0, mid = b ? sqrt(ldexp(1, (int)(b < 62 ? b : 62)) *
						     ldexp(1, (int)(b < 62 ? b + 1 : 63)))
					      : 0.5;
			uint64_t k;
			jr_number(json_object_array_get_idx(hist, b), &c);
			mid = mid < lo ? lo : mid > hi ? hi : mid;
			for (k = 0; k < (uint64_t)c; k++)
				push_call(r, ni, mid, NAN, -1, -1);
		}
		r->binned = 1;
		return;
	}
	if (jr_number(jr_get(res, "exclusive"), &v))
		e = v;
	if (jr_number(jr_get(res, "call-id"), &v))
		id = (int64_t)v;
	if (jr_number(jr_get(res, "caller-id"), &v))
		caller = (int64_t)v;
	push_call(r, ni, a, e, id, caller);
}

static int cmp_call_id(const void *a, const void *b)
{
	int64_t x = (*(const struct call *const *)a)->id, y = (*(const struct call *const *)b)->id;

	return (x > y) - (x < y);
}

/* Fills c->ctx of every call: the caller's context, then this function.  */
static void assign_contexts(struct interner *in, struct call *c, size_t n)
{
	struct call **by_id = xmalloc((n ? n : 1) * sizeof(*by_id)), **stack = NULL;
	size_t i, nid = 0, depth, alloc = 0;

	for (i = 0; i < n; i++)
		if (c[i].id >= 0)
			by_id[nid++] = &c[i];
	qsort(by_id, nid, sizeof(*by_id), cmp_call_id);
	for (i = 0; i < n; i++) {
		struct call *k = &c[i];
		size_t parent = NONE;
		depth = 0;
		/* climb to a caller whose context is known, or to the root */
		while (k && k->ctx == NONE) {
			struct call key, *kp = &key, **f = NULL;
			if (depth == alloc) {
				alloc = alloc ? 2 * alloc : 64;
				stack = xrealloc(stack, alloc * sizeof(*stack));
			}
			stack[depth++] = k;
			if (k->caller >= 0 && depth <= n) {
				key.id = k->caller;
				f = bsearch(&kp, by_id, nid, sizeof(*by_id), cmp_call_id);
			}
			k = f ? *f : NULL;
		}
		if (k)
			parent = k->ctx;
		while (depth--) {
			stack[depth]->ctx = intern_ctx(in, parent, stack[depth]->name);
			parent = stack[depth]->ctx;
		}
	}
	free(stack);
	free(by_id);
}

/* Per run and context: the median self and inclusive call times.  */
struct run_stat {
	size_t ctx;
	double self, incl; /* NAN: no exclusive times */
	double calls;
	double cost_self, cost_incl; /* the probes' mean cost taken out of a call */
	double children;	     /* traced calls a call makes, mean */
	double per_child;	     /* median of a call's self time per traced call it makes
					(NAN: it makes none) */
};

struct run {
	struct run_stat *s; /* sorted by ctx */
	size_t n;
};

static int cmp_call_ctx(const void *a, const void *b)
{
	const struct call *x = a, *y = b;

	return (x->ctx > y->ctx) - (x->ctx < y->ctx);
}

/* What a run's probes cost (machine.calibration, as collect measured it):
 * the cost inside a call's own time, the cost of a traced call to its
 * caller, and the cost of an entry probe the kernel single-steps.  */
struct run_cost {
	double probe, pair, stepped;
	double insn_probe, insn_pair;	/* a function whose returns were probed on
					 * their instructions (perun's loader) */
};

/* 1 and *c when p carries a calibration, else 0.  */
static int run_cost_read(const struct profile *p, struct run_cost *c)
{
	struct json_object *cal = jr_get(jr_get(p->root, "machine"), "calibration");

	if (!jr_number(jr_get(cal, "probe_ns"), &c->probe) || c->probe < 0)
		return 0;
	if (!jr_number(jr_get(cal, "pair_ns"), &c->pair) || c->pair < c->probe)
		c->pair = c->probe;
	if (!jr_number(jr_get(cal, "stepped_probe_ns"), &c->stepped) || c->stepped <= 0)
		c->stepped = c->probe;
	if (!jr_number(jr_get(cal, "insn_probe_ns"), &c->insn_probe) || c->insn_probe <= 0 ||
	    !jr_number(jr_get(cal, "insn_pair_ns"), &c->insn_pair) || c->insn_pair < c->insn_probe) {
		c->insn_probe = c->probe;
		c->insn_pair = c->pair;
	}
	return 1;
}

/* Whether function name's summary (trace.summary) says key is value:
 * probe_entry stepped (its entry probe single-stepped), probe_return
 * instructions (its returns probed on their instructions).  */
static int run_probe_kind(const struct profile *p, const char *name, const char *key,
			  const char *value)
{
	struct json_object *e =
		jr_get(jr_get(jr_get(jr_get(p->root, "trace"), "summary"), name), key);

	return e && json_object_is_type(e, json_type_string) &&
	       !strcmp(json_object_get_string(e), value);
}

/* Per name of in: run_probe_kind of key and value (a new array).  */
static unsigned char *run_probe_kinds(const struct interner *in, const struct profile *p,
				      const char *key, const char *value)
{
	unsigned char *k = xcalloc(in->nnames ? in->nnames : 1, 1);
	size_t i;

	for (i = 0; i < in->nnames; i++)
		k[i] = (unsigned char)run_probe_kind(p, in->names[i], key, value);
	return k;
}

static int cmp_call_ptr_id(const void *a, const void *b)
{
	int64_t x = (*(struct call *const *)a)->id, y = (*(struct call *const *)b)->id;

	return (x > y) - (x < y);
}

/* Counts each call's traced children and descendants from the call and
 * caller ids (a callee's id is larger than its caller's: ids are given at
 * entry).  */
static void count_callees(struct call *c, size_t n, const unsigned char *insn)
{
	struct call **by_id = xmalloc((n ? n : 1) * sizeof(*by_id));
	size_t i, nid = 0;

	for (i = 0; i < n; i++)
		if (c[i].id >= 0)
			by_id[nid++] = &c[i];
	qsort(by_id, nid, sizeof(*by_id), cmp_call_ptr_id);
	for (i = nid; i-- > 0;) { /* callees first */
		struct call key, *kp = &key, **f;
		if (by_id[i]->caller < 0 || by_id[i]->caller >= by_id[i]->id)
			continue;
		key.id = by_id[i]->caller;
		f = bsearch(&kp, by_id, i, sizeof(*by_id), cmp_call_ptr_id);
		if (!f)
			continue;
		(*f)->children++;
		(*f)->callees += 1 + by_id[i]->callees;
		(*f)->children_insn += insn[by_id[i]->name];
		(*f)->callees_insn += insn[by_id[i]->name] + by_id[i]->callees_insn;
	}
	free(by_id);
}

/* Takes the probes' cost out of every call's times (count_callees() first)
 * as the profile's summary does (profile/writer.c): its own probe (the
 * stepped cost where its entry probe was stepped, and the difference of an
 * instructions return where insn says so), a pair for every traced call
 * inside it (the instructions pair for those with such returns), and for
 * self time the part of each child's pair that falls outside the child's
 * own time.  */
static void take_out_cost(const struct interner *in, const struct profile *p,
			  const struct run_cost *cost, const unsigned char *insn, struct call *c,
			  size_t n)
{
	unsigned char *stepped = run_probe_kinds(in, p, "probe_entry", "stepped");
	size_t i;
	double outside = cost->pair - cost->probe;
	double ioutside = cost->insn_pair - cost->insn_probe;

	for (i = 0; i < n; i++) {
		double own = stepped[c[i].name] ? cost->stepped : cost->probe, v;
		if (insn[c[i].name])
			own += cost->insn_probe - cost->probe;
		c[i].cost_in = own + (double)(c[i].callees - c[i].callees_insn) * cost->pair +
			       (double)c[i].callees_insn * cost->insn_pair;
		v = c[i].amount - c[i].cost_in;
		c[i].amount = v > 0 ? v : 0;
		if (!isnan(c[i].exclusive)) {
			c[i].cost_ex = own + (double)(c[i].children - c[i].children_insn) * outside +
				       (double)c[i].children_insn * ioutside;
			v = c[i].exclusive - c[i].cost_ex;
			c[i].exclusive = v > 0 ? v : 0;
		}
	}
	free(stepped);
}

/* Reads a run's calls and gives each its calling context.  */
static void read_calls(struct interner *in, const struct profile *p, struct run_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->in = in;
	profile_each_resource(p, read_one, r);
	assign_contexts(in, r->c, r->n);
}

/* Per context, the statistic (quantile q of the calls) of self and
 * inclusive times; frees r's calls.  */
static void run_stats(struct run_reader *r, double q, struct run *run)
{
	double *tmp;
	size_t i, j, k, m;

	memset(run, 0, sizeof(*run));
	qsort(r->c, r->n, sizeof(*r->c), cmp_call_ctx);
	tmp = xmalloc((r->n ? r->n : 1) * sizeof(*tmp));
	run->s = xmalloc((r->n ? r->n : 1) * sizeof(*run->s));
	for (i = 0; i < r->n; i = j) {
		struct run_stat st;
		int have_self = 1;
		for (j = i; j < r->n && r->c[j].ctx == r->c[i].ctx; j++)
			have_self &= !isnan(r->c[j].exclusive);
		m = j - i;
		st.ctx = r->c[i].ctx;
		st.calls = (double)m;
		st.cost_self = st.cost_incl = 0;
		for (k = 0; k < m; k++) {
			st.cost_self += r->c[i + k].cost_ex / (double)m;
			st.cost_incl += r->c[i + k].cost_in / (double)m;
		}
		st.children = 0;
		for (k = 0; k < m; k++)
			st.children += (double)r->c[i + k].children / (double)m;
		st.per_child = NAN;
		if (have_self && st.children > 0) {
			size_t kk = 0;
			for (k = 0; k < m; k++)
				if (r->c[i + k].children)
					tmp[kk++] = r->c[i + k].exclusive /
						    (double)r->c[i + k].children;
			gsl_sort(tmp, 1, kk);
			st.per_child = quantile_sorted(tmp, kk, 0.5);
		}
		for (k = 0; k < m; k++)
			tmp[k] = r->c[i + k].amount;
		gsl_sort(tmp, 1, m);
		st.incl = quantile_sorted(tmp, m, q);
		st.self = NAN;
		if (have_self) {
			for (k = 0; k < m; k++)
				tmp[k] = r->c[i + k].exclusive;
			gsl_sort(tmp, 1, m);
			st.self = quantile_sorted(tmp, m, q);
		}
		run->s[run->n++] = st;
	}
	free(tmp);
	free(r->c);
	r->c = NULL;
}

/* Reads the runs of both sides (base's first) into run[]: the probes' cost
 * is taken out of the calls when every run carries a calibration and none
 * holds --aggregate histograms (*calibrated then 1), else the times stay
 * as recorded.  */
static void read_runs(struct interner *in, const struct profile *const *p, size_t n, double q,
		      struct run *run, int *binned, int *calibrated)
{
	struct run_reader *r = xcalloc(n ? n : 1, sizeof(*r));
	struct run_cost *cost = xcalloc(n ? n : 1, sizeof(*cost));
	size_t i;

	*calibrated = n > 0;
	for (i = 0; i < n; i++) {
		read_calls(in, p[i], &r[i]);
		*binned |= r[i].binned;
		*calibrated &= !r[i].binned && run_cost_read(p[i], &cost[i]);
	}
	for (i = 0; i < n; i++) {
		unsigned char *insn = run_probe_kinds(in, p[i], "probe_return", "instructions");
		count_callees(r[i].c, r[i].n, insn);
		if (*calibrated)
			take_out_cost(in, p[i], &cost[i], insn, r[i].c, r[i].n);
		free(insn);
		run_stats(&r[i], q, &run[i]);
	}
	free(cost);
	free(r);
}

static const struct run_stat *run_find(const struct run *run, size_t ctx)
{
	size_t lo = 0, hi = run->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (run->s[mid].ctx < ctx)
			lo = mid + 1;
		else if (run->s[mid].ctx > ctx)
			hi = mid;
		else
			return &run->s[mid];
	}
	return NULL;
}

/* --- the statistics over runs -------------------------------------------- */

/* The runs' values are in ns, >= 0; logs of v + 1 keep 0 finite.  */
static double lg(double v)
{
	return log((v > 0 ? v : 0) + 1);
}

/* f's ratio exp(d) of the sides' mean logs, and its interval and p by
 * Student's t of df degrees of freedom with standard error se.  Returns 1
 * when se is 0 (every run alike on both sides: the interval is the ratio
 * and the effect set), else 0 (the effect is the caller's).  */
static int t_interval(struct check_finding *f, double d, double se, double df, double conf)
{
	double q;

	f->ratio = exp(d);
	if (!(se > 0)) {
		f->ci_low = f->ci_high = f->ratio;
		f->p = d == 0 ? 1 : 0;
		f->effect = d == 0 ? 0 : d > 0 ? INFINITY : -INFINITY;
		return 1;
	}
	q = gsl_cdf_tdist_Qinv((1 - conf) / 2, df);
	f->ci_low = exp(d - q * se);
	f->ci_high = exp(d + q * se);
	f->p = 2 * gsl_cdf_tdist_Q(fabs(d) / se, df);
	return 0;
}

/* Welch's t over the logs: ratio of geometric means and its interval.  */
static void compare_runs_t(const double *b, size_t nb, const double *t, size_t nt, double conf,
			   int pooled, struct check_finding *f)
{
	double *lb = xmalloc(nb * sizeof(*lb)), *lt = xmalloc(nt * sizeof(*lt));
	double mb, mt, vb, vt, se, df, d, sp;
	size_t i;

	for (i = 0; i < nb; i++)
		lb[i] = lg(b[i]);
	for (i = 0; i < nt; i++)
		lt[i] = lg(t[i]);
	mb = gsl_stats_mean(lb, 1, nb);
	mt = gsl_stats_mean(lt, 1, nt);
	f->base = exp(mb) - 1;
	f->target = exp(mt) - 1;
	d = mt - mb;
	f->ratio = exp(d);
	if (nb < 2 || nt < 2)
		goto out;
	vb = gsl_stats_variance_m(lb, 1, nb, mb);
	vt = gsl_stats_variance_m(lt, 1, nt, mt);
	se = sqrt(vb / (double)nb + vt / (double)nt);
	sp = sqrt(((double)(nb - 1) * vb + (double)(nt - 1) * vt) / (double)(nb + nt - 2));
	if (pooled) {
		se = sp * sqrt(1 / (double)nb + 1 / (double)nt);
		df = (double)(nb + nt - 2);
	} else {
		df = se * se * se * se /
		     ((vb / (double)nb) * (vb / (double)nb) / (double)(nb - 1) +
		      (vt / (double)nt) * (vt / (double)nt) / (double)(nt - 1));
	}
	if (t_interval(f, d, se, df, conf))
		goto out;
	/* Hedges' g: the difference in pooled standard deviations, corrected
	 * for small samples */
	f->effect = sp > 0 ? d / sp * (1 - 3 / (4 * (double)(nb + nt) - 9)) : 0;
out:
	free(lb);
	free(lt);
}

/* Welch's t over the runs' own times: the two sides may have run on a host
 * of different moods, so their spreads are not assumed alike.  */
static void compare_runs(const double *b, size_t nb, const double *t, size_t nt, double conf,
			 struct check_finding *f)
{
	compare_runs_t(b, nb, t, nt, conf, 0, f);
}

/* Student's t (one spread, pooled) over the runs' values with each run's
 * speed taken out: what is left on either side is the same program's calls
 * against the rest of their own run, one noise.  Welch's degrees of freedom
 * fall to n - 1 when one side happens to agree closely (a function the
 * control matches run by run), t(2) = 9.9 at 99 % for 3 runs a side where
 * the pooled spread gives t(4) = 4.6.  */
static void compare_control_runs(const double *b, size_t nb, const double *t, size_t nt,
				 double conf, struct check_finding *f)
{
	compare_runs_t(b, nb, t, nt, conf, 1, f);
}

/* Run i of the sides' nb + nt (the target's after the baseline's): its
 * cell (see cell_sums()), weight *wi and log *y.  */
static size_t cell_of(size_t i, const double *b, const double *wb, const int *gb, size_t nb,
		      const double *t, const double *wt, const int *gt, double *wi, double *y)
{
	int side = i >= nb;
	size_t k = side ? i - nb : i;
	const int *gg = side ? gt : gb;
	const double *ww = side ? wt : wb;

	*wi = ww ? ww[k] : 1;
	*y = lg(side ? t[k] : b[k]);
	return 2 * (size_t)(gg ? gg[k] : 0) + (size_t)side;
}

/* The runs' logs by cell (a cell: one side of one group of runs of like
 * speed, gb[i] and gt[i] below ng; gb and gt NULL: one group), each run
 * weighed by wb[i] or wt[i] (NULL: all 1; see runscale_weights()): sum[2g] the
 * weighted sum of group g's baseline runs, w[2g] their weight, sum[2g + 1]
 * and w[2g + 1] its target's (2 * ng each, zeroed by the caller).  Returns
 * the weighted sum of squares of the logs about their cells' means; *df
 * its degrees of freedom: the cells' effective numbers of runs ((sum w)^2 /
 * sum w^2, the count when every weight is 1) less the cells that hold
 * runs.  */
static double cell_sums(const double *b, const double *wb, const int *gb, size_t nb,
			const double *t, const double *wt, const int *gt, size_t nt, size_t ng,
			double *sum, double *w, double *df)
{
	double ss = 0, e, wi, y, *w2 = xcalloc(2 * ng, sizeof(*w2));
	size_t i, g;

	for (i = 0; i < nb + nt; i++) {
		g = cell_of(i, b, wb, gb, nb, t, wt, gt, &wi, &y);
		sum[g] += wi * y;
		w[g] += wi;
		w2[g] += wi * wi;
	}
	for (i = 0; i < nb + nt; i++) {
		g = cell_of(i, b, wb, gb, nb, t, wt, gt, &wi, &y);
		e = y - sum[g] / w[g];
		ss += wi * e * e;
	}
	for (*df = 0, g = 0; g < 2 * ng; g++)
		if (w[g] > 0)
			*df += w[g] * w[g] / w2[g] - 1;
	free(w2);
	return ss;
}

/* cell_sums()'s sum of squares and degrees of freedom alone.  */
static double cell_ss(const double *b, const double *wb, const int *gb, size_t nb,
		      const double *t, const double *wt, const int *gt, size_t nt, size_t ng,
		      double *df)
{
	double *sum = xcalloc(2 * ng, sizeof(*sum)), *w = xcalloc(2 * ng, sizeof(*w)), ss;

	ss = cell_sums(b, wb, gb, nb, t, wt, gt, nt, ng, sum, w, df);
	free(sum);
	free(w);
	return ss;
}

/* Student's t over the runs' values with each run's speed taken out, the
 * sides compared within groups of runs of like speed (gb, gt as cell_ss();
 * NULL: all runs alike).
 *
 * Groups: a loaded host does not slow a run's functions alike.  A sibling
 * hyperthread's load slows each loop by where its code lies: in t7023's
 * runs at half speed two of five identical loops ran 0.7x the others'
 * median and two 1.3x, in every such run, while at full speed all five
 * agreed within 0.1 %.  So a run at half speed against one at full speed
 * moves a function that did not change.  The difference of the sides is
 * taken within each group that holds runs of both, weighted by
 * 1 / (1/nb_g + 1/nt_g) (a two-way layout, groups as blocks).
 *
 * Weights: each run weighs wb[i] or wt[i] (NULL: 1), less where its
 * own functions disagreed (runscale_weights()).
 *
 * Spread: pooled within the cells, and with the control's own (pool_ss
 * over pool_df degrees of freedom: the same program's calls against the
 * rest of their runs, one noise) where this context is not plainly
 * noisier than the control (an F test at 5 %): three runs a side leave 4
 * degrees of freedom, t(4) = 4.6 at 99 %, the control's functions 10 or
 * more.  And no closer than apart (log units, apart_sd()): returns 1 when
 * that decided the interval, 0 when the runs' spread did, -1 when no group
 * holds both sides or no spread is left.  */
static int compare_control_cells(const double *b, const double *wb, const int *gb, size_t nb,
				 const double *t, const double *wt, const int *gt, size_t nt,
				 size_t ng, double pool_ss, double pool_df, double apart,
				 double conf, struct check_finding *f)
{
	double *sum = xcalloc(2 * ng, sizeof(*sum)), *n = xcalloc(2 * ng, sizeof(*n));
	double d = 0, w = 0, ss, s2, df, mb = 0, se;
	size_t i, g, used = 0;
	int ret = -1;

	ss = cell_sums(b, wb, gb, nb, t, wt, gt, nt, ng, sum, n, &df);
	for (i = 0; i < nb; i++)
		mb += lg(b[i]) / (double)nb;
	for (g = 0; g < ng; g++)
		if (n[2 * g] > 0 && n[2 * g + 1] > 0) {
			double wg = 1 / (1 / n[2 * g] + 1 / n[2 * g + 1]);
			d += wg * (sum[2 * g + 1] / n[2 * g + 1] - sum[2 * g] / n[2 * g]);
			w += wg;
			used++;
		}
	if (!used || df < 1)
		goto out;
	d /= w;
	s2 = ss / df;
	if (pool_df >= 1 && pool_ss > 0 &&
	    s2 <= pool_ss / pool_df * gsl_cdf_fdist_Qinv(0.05, df, pool_df)) {
		ss += pool_ss;
		df += pool_df;
		s2 = ss / df;
	}
	f->base = exp(mb) - 1;
	f->target = exp(mb + d) - 1;
	/* no closer than the control's own functions agreed between the sides */
	se = sqrt(s2 / w);
	ret = apart > se;
	if (ret)
		se = apart;
	if (!t_interval(f, d, se, df, conf))
		f->effect = d / sqrt(s2);
out:
	free(sum);
	free(n);
	return ret;
}

/* The exact two-sided p of U (no ties) for samples of n and m: the count
 * of arrangements with U <= u over all C(n+m, n), doubled.  */
static double mw_exact_p(size_t n, size_t m, double u)
{
	size_t umax = n * m, i, j, k;
	double *cur, *prev, total = 0, tail = 0, lo;

	/* f[i][j][k]: arrangements of i and j values with U = k, by rows of j */
	prev = xcalloc((n + 1) * (umax + 1), sizeof(*prev));
	cur = xcalloc((n + 1) * (umax + 1), sizeof(*cur));
	for (i = 0; i <= n; i++)
		prev[i * (umax + 1)] = 1; /* j = 0: one arrangement, U = 0 */
	for (j = 1; j <= m; j++) {
		memset(cur, 0, (n + 1) * (umax + 1) * sizeof(*cur));
		for (i = 0; i <= n; i++)
			for (k = 0; k <= umax; k++) {
				/* the largest value is from the j side (adds i to U) or the i side */
				double v = 0;
				if (k >= i)
					v += prev[i * (umax + 1) + k - i];
				if (i)
					v += cur[(i - 1) * (umax + 1) + k];
				cur[i * (umax + 1) + k] = v;
			}
		memcpy(prev, cur, (n + 1) * (umax + 1) * sizeof(*cur));
	}
	lo = u < (double)umax - u ? u : (double)umax - u;
	for (k = 0; k <= umax; k++) {
		total += prev[n * (umax + 1) + k];
		if ((double)k <= lo + 1e-9)
			tail += prev[n * (umax + 1) + k];
	}
	free(prev);
	free(cur);
	return total > 0 && 2 * tail / total < 1 ? 2 * tail / total : 1;
}

static double median_of(const double *v, size_t n)
{
	double *tmp = xmalloc((n ? n : 1) * sizeof(*tmp)), m;

	memcpy(tmp, v, n * sizeof(*tmp));
	gsl_sort(tmp, 1, n);
	m = n ? gsl_stats_median_from_sorted_data(tmp, 1, n) : 0;
	free(tmp);
	return m;
}

/* asv's: Mann-Whitney over the run medians, the ratio of their medians.  */
static int compare_mw(const double *b, size_t nb, const double *t, size_t nt,
		      struct check_finding *f)
{
	struct mw_result mw;
	size_t i, j;
	int ties = 0;

	f->base = median_of(b, nb);
	f->target = median_of(t, nt);
	f->ratio = (f->target + 1) / (f->base + 1);
	if (stats_mann_whitney(b, nb, t, nt, &mw) < 0)
		return -1;
	for (i = 0; i < nb; i++)
		for (j = 0; j < nt; j++)
			ties |= b[i] == t[j];
	f->effect = mw.effect;
	f->p = !ties && nb * nt <= 400 ? mw_exact_p(nb, nt, mw.u) : mw.p;
	return 0;
}

/* --- thresholds ------------------------------------------------------------ */

struct thresholds {
	pcre2_code **re;
	size_t n;
	pcre2_match_data *md;
};

static int thresholds_compile(const struct check_opts *o, struct thresholds *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!o->nthresholds)
		return 0;
	t->re = xcalloc(o->nthresholds, sizeof(*t->re));
	t->md = pcre2_match_data_create(4, NULL);
	for (i = 0; i < o->nthresholds; i++, t->n++) {
		int err;
		PCRE2_SIZE off;
		t->re[i] = pcre2_compile((PCRE2_SPTR)o->thresholds[i].regex, PCRE2_ZERO_TERMINATED,
					 PCRE2_UTF, &err, &off, NULL);
		if (!t->re[i]) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(err, msg, sizeof(msg));
			return pr_error("regressions_thresholds: the regular expression '%s' at "
					"offset %zu: %s: fix it in .perun/local.yml",
					o->thresholds[i].regex, (size_t)off, (char *)msg);
		}
	}
	return 0;
}

static void thresholds_release(struct thresholds *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		pcre2_code_free(t->re[i]);
	free(t->re);
	if (t->md)
		pcre2_match_data_free(t->md);
	memset(t, 0, sizeof(*t));
}

static int re_match(const struct thresholds *t, size_t i, const char *s)
{
	return pcre2_match(t->re[i], (PCRE2_SPTR)s, strlen(s), 0, 0, t->md, NULL) >= 0;
}

static double threshold_of(const struct check_opts *o, const struct thresholds *t,
			   const char *function, const char *context)
{
	double thr = -1;
	size_t i;

	for (i = 0; i < t->n; i++)
		if ((re_match(t, i, function) || re_match(t, i, context)) &&
		    o->thresholds[i].threshold > thr)
			thr = o->thresholds[i].threshold;
	return thr >= 0 ? thr : o->threshold;
}

struct threshold_ctx {
	const struct check_opts *o;
	const struct thresholds *t;
};

/* check_threshold_fn of a function name (the model methods' findings are
 * per function, so the name is the context as well).  */
static double threshold_fn(void *ctx, const char *function)
{
	struct threshold_ctx *c = ctx;

	return threshold_of(c->o, c->t, function, function);
}

/* --- one job ------------------------------------------------------------- */

static void decide(struct check_finding *f, const struct check_opts *o)
{
	double up = 1 + f->threshold, down = 1 / (1 + f->threshold), alpha = 1 - o->confidence;
	int sig_up, sig_down;

	if (o->method == CHECK_MANN_WHITNEY) {
		sig_up = f->ratio > 1 && f->p < alpha;
		sig_down = f->ratio < 1 && f->p < alpha;
	} else {
		sig_up = !isnan(f->ci_low) && f->ci_low > 1;
		sig_down = !isnan(f->ci_high) && f->ci_high < 1;
	}
	if (f->ratio >= up)
		f->verdict = sig_up ? CHECK_DEGRADATION : CHECK_UNDECIDED;
	else if (f->ratio <= down)
		f->verdict = sig_down ? CHECK_OPTIMIZATION : CHECK_UNDECIDED;
	else
		f->verdict = CHECK_NO_CHANGE;
	if (f->verdict != CHECK_NO_CHANGE && fabs(f->target - f->base) < f->resolution) {
		f->verdict = CHECK_UNDECIDED;
		f->why = "the change is within the drift of the probe cost taken out";
		return;
	}
	if (f->verdict != CHECK_UNDECIDED)
		return;
	if (f->nbase < 2 || f->ntarget < 2)
		f->why = "fewer than 2 runs on a side: collect with repeats";
	else if (o->method == CHECK_MANN_WHITNEY &&
		 mw_exact_p(f->nbase, f->ntarget, 0) >= alpha)
		f->why = "too few runs for a rank test at this confidence";
	else
		f->why = "the runs vary too much to tell";
}

/* --- the in-run control (analysis/runscale.h) ----------------------------- */


/* The least spread (log units) the control is taken to have with one run a
 * side.  A few functions can agree by chance more closely than their calls
 * do, and one run cannot show how far one function of it strays by itself
 * from the others: in 40 runs of one binary (t7022's fixture, a CPU hog on
 * the other core every third run), with each run's speed taken out, the p10
 * of a function's 100 calls stayed within 2 % of the others' in 150 of 160
 * cases and strayed 4-8 % in 9, and 15 % in one, all of a run.  At 0.07 a
 * 99 % interval is +-20 %: one run a side decides a change of about a
 * fifth or more, and says of smaller ones to collect with repeats.  */
#define CONTROL_MIN_SD 0.07

/* The fewest calls a run must have of a context for one run a side to
 * decide it by the in-run control.  The control takes out how fast the host
 * ran; the p10 of many calls also leaves out the stalls (the process
 * descheduled, an interrupt) that fell into some of them, but a context of a
 * few calls holds every stall of its run (main's one call holds them all),
 * and one run a side has no other run to show how large they are.  */
#define CONTROL_MIN_CALLS 10

/* Each run's speed: scale[r] (log units, 0 for the typical run) from the
 * self times of the contexts every run has, above the probes' cost taken
 * out of them (below it the drift of that cost, not the run, moves them),
 * and not bound[c] (bound may be NULL: see probe_bound()).  Returns the
 * number of contexts in the control (0: none); ctl[c] says whether context
 * c is one.  */
static size_t control_scale(const struct interner *in, const struct run *runs, size_t nr,
			    const unsigned char *bound, double *scale, unsigned char *ctl)
{
	size_t nc = in->nctx, r, c, n;
	double *x = xmalloc((nr * nc > 0 ? nr * nc : 1) * sizeof(*x));

	for (r = 0; r < nr; r++)
		for (c = 0; c < nc; c++) {
			const struct run_stat *st = run_find(&runs[r], c);
			x[r * nc + c] = st && isfinite(st->self) && st->self > 0 &&
						st->self > st->cost_self && !(bound && bound[c])
					    ? log(st->self)
					    : NAN;
		}
	n = runscale_estimate(x, nr, nc, scale);
	for (c = 0; c < nc; c++) {
		for (r = 0; r < nr && isfinite(x[r * nc + c]); r++)
			;
		ctl[c] = n && nr && r == nr;
	}
	free(x);
	return n;
}

/* With one run on a side: the spread of the control contexts' shifts
 * between the sides once each run's speed is out (1.4826 MAD, at least
 * CONTROL_MIN_SD).  */
static double control_sd(const struct interner *in, const struct run *runs, size_t nb,
			 size_t nt, const double *scale, const unsigned char *ctl)
{
	double *d = xmalloc((in->nctx ? in->nctx : 1) * sizeof(*d)), sd;
	size_t c, r, n = 0;

	for (c = 0; c < in->nctx; c++) {
		double mb = 0, mt = 0;
		if (!ctl[c])
			continue;
		for (r = 0; r < nb; r++)
			mb += (log(run_find(&runs[r], c)->self) - scale[r]) / (double)nb;
		for (r = nb; r < nb + nt; r++)
			mt += (log(run_find(&runs[r], c)->self) - scale[r]) / (double)nt;
		d[n++] = mt - mb;
	}
	sd = runscale_mad_sd(d, n);
	free(d);
	return sd > CONTROL_MIN_SD ? sd : CONTROL_MIN_SD;
}

/* How many times the least self time per traced call of any context (a
 * bound on what the probes of one call cost its caller, where a run has no
 * calibration) a context's self time must exceed per traced call it makes
 * to be its own: below, its self time is mostly the probes' cost, which
 * moves with the host's load apart from the code's (a CI host: the self
 * times of two callers of one spin each +21 % between two runs of one
 * binary, their spins and the run as a whole -32 %).  */
#define PROBE_BOUND_FACTOR 2

/* Which contexts' self times are mostly the probes' cost of the calls they
 * make, in some run (runs without a calibration: see PROBE_BOUND_FACTOR),
 * where two contexts or more make traced calls; bound[c] set for those.  */
static void probe_bound(const struct interner *in, const struct run *runs, size_t nr,
			unsigned char *bound)
{
	double least = INFINITY;
	size_t r, i, parents = 0;

	memset(bound, 0, in->nctx ? in->nctx : 1);
	for (r = 0; r < nr; r++)
		for (i = 0; i < runs[r].n; i++)
			if (isfinite(runs[r].s[i].per_child) && runs[r].s[i].per_child > 0) {
				if (runs[r].s[i].per_child < least)
					least = runs[r].s[i].per_child;
				if (!bound[runs[r].s[i].ctx]) {
					bound[runs[r].s[i].ctx] = 1;
					parents++;
				}
			}
	memset(bound, 0, in->nctx ? in->nctx : 1);
	/* one context that makes calls bounds nothing but itself: its own
	 * time between the calls may be all its own (a loop around them) */
	if (!isfinite(least) || parents < 2)
		return;
	for (r = 0; r < nr; r++)
		for (i = 0; i < runs[r].n; i++) {
			const struct run_stat *st = &runs[r].s[i];
			if (st->children > 0 && isfinite(st->self) &&
			    st->self <= PROBE_BOUND_FACTOR * least * st->children)
				bound[st->ctx] = 1;
		}
}

/* One run on a side, in-run control: the ratio of the geometric means of
 * the normalised values, its interval from the control's spread sd.  */
static void compare_control_one(const double *b, size_t nb, const double *t, size_t nt,
				double sd, double conf, struct check_finding *f)
{
	double mb = 0, mt = 0, d, z = gsl_cdf_ugaussian_Qinv((1 - conf) / 2);
	size_t i;

	for (i = 0; i < nb; i++)
		mb += lg(b[i]) / (double)nb;
	for (i = 0; i < nt; i++)
		mt += lg(t[i]) / (double)nt;
	d = mt - mb;
	f->base = exp(mb) - 1;
	f->target = exp(mt) - 1;
	f->ratio = exp(d);
	f->ci_low = exp(d - z * sd);
	f->ci_high = exp(d + z * sd);
	f->p = 2 * gsl_cdf_ugaussian_Q(fabs(d) / sd);
	f->effect = d / sd;
}

static int is_change(enum check_verdict v)
{
	return v == CHECK_DEGRADATION || v == CHECK_OPTIMIZATION;
}

/* The share of a run's time (its roots' inclusive time) past which a change
 * of a context of few calls is not a stall's: beside a CPU hog, main's one
 * call held up to 6 ms of stalls in runs of 75 ms (8 %).  */
#define FEW_CALLS_STALL_SHARE 0.1

/* A context of fewer than CONTROL_MIN_CALLS calls a run holds every stall
 * of its runs (main's one call: 1.4 ms in a quiet run, up to 7.5 ms in runs
 * beside a CPU hog), a noise far from normal: three runs a side of main
 * at 2.6 to 3.0 ms against 1.4 to 1.9 ms, one binary, passed Welch's t at
 * 99 %.  Its change, unless a good part of the run's time (run_ns: the
 * typical run's), stands only where the ranks agree too (the exact
 * Mann-Whitney p below 1 - confidence: 5 runs a side or more at 99 %).
 * 0, or -1 (out of memory).  */
static int few_calls_ranked(const double *b, size_t nb, const double *t, size_t nt,
			    double run_ns, const struct check_opts *o, struct check_finding *f)
{
	struct check_finding r = *f;
	double calls = f->calls_base > f->calls_target ? f->calls_base : f->calls_target;

	if (!is_change(f->verdict) || o->method == CHECK_MANN_WHITNEY || nb < 2 || nt < 2 ||
	    (f->calls_base >= CONTROL_MIN_CALLS && f->calls_target >= CONTROL_MIN_CALLS))
		return 0;
	/* a change of a good part of the run is no stall's (main's inclusive
	 * time 2.2x) */
	if (run_ns > 0 && fabs(f->target - f->base) * calls >= FEW_CALLS_STALL_SHARE * run_ns)
		return 0;
	if (compare_mw(b, nb, t, nt, &r) < 0)
		return -1;
	if (r.p < 1 - o->confidence)
		return 0;
	f->verdict = CHECK_UNDECIDED;
	f->why = mw_exact_p(nb, nt, 0) >= 1 - o->confidence
			 ? "fewer than 10 calls a run hold the host's stalls: their runs' ranks "
			   "must agree too, and that takes more runs at this confidence (5 a side "
			   "at 99 %)"
			 : "fewer than 10 calls a run hold the host's stalls: their runs' ranks "
			   "do not agree";
	return 0;
}

/* The method's statistic over the runs' values v (raw) and nv (each run's
 * speed taken out), then the verdict: the in-run control's when the job has
 * one, else the run level's (analysis/check.h).  */
static int compare_one(const double *vb, const double *nvb, const double *wb, const int *gb,
		       size_t n_b, const double *vt, const double *nvt, const double *wt,
		       const int *gt, size_t n_t, double apart, double run_ns,
		       const struct check_job *job, const struct check_opts *o,
		       struct check_finding *f)
{
	struct check_finding run = *f;
	int floor = 0;

	if (o->method == CHECK_MANN_WHITNEY) {
		if (compare_mw(vb, n_b, vt, n_t, &run) < 0)
			return -1;
	} else {
		compare_runs(vb, n_b, vt, n_t, o->confidence, &run);
	}
	decide(&run, o);
	run.basis = CHECK_BY_RUNS;
	if (!job->control) {
		*f = run;
		if (f->why && (n_b < 2 || n_t < 2) && !o->no_control && !job->binned)
			f->why = "fewer than 2 runs on a side and too few functions above the "
				 "probe cost to form an in-run control: collect with repeats";
		return few_calls_ranked(vb, n_b, vt, n_t, run_ns, o, f);
	}
	if (n_b >= 2 && n_t >= 2 && o->method == CHECK_MANN_WHITNEY) {
		if (compare_mw(nvb, n_b, nvt, n_t, f) < 0)
			return -1;
	} else if (n_b >= 2 && n_t >= 2) {
		/* a context of a few calls a run holds every stall of its runs
		 * (CONTROL_MIN_CALLS), a noise the control's functions do not
		 * share: its own spread alone */
		int grouped = job->speed_groups > 1,
		    many = f->calls_base >= CONTROL_MIN_CALLS && f->calls_target >= CONTROL_MIN_CALLS;
		floor = compare_control_cells(nvb, wb, grouped ? gb : NULL, n_b, nvt, wt,
					      grouped ? gt : NULL, n_t, grouped ? job->speed_groups : 1,
					      many ? job->pool_ss : 0, many ? job->pool_df : 0, apart,
					      o->confidence, f);
		if (floor < 0)
			compare_control_runs(nvb, n_b, nvt, n_t, o->confidence, f);
	} else {
		struct check_opts one = *o;
		one.method = CHECK_RUNS; /* decided by its interval */
		compare_control_one(nvb, n_b, nvt, n_t, job->control_sd, o->confidence, f);
		decide(f, &one);
		if (f->verdict == CHECK_UNDECIDED && f->why && !strncmp(f->why, "fewer", 5))
			f->why = job->control_sd > CONTROL_MIN_SD
					 ? "the other functions of the run moved apart too much "
					   "for the in-run control to tell"
					 : "one run a side tells a change of about a fifth or more: "
					   "collect with repeats";
		if (is_change(f->verdict) &&
		    (f->calls_base < CONTROL_MIN_CALLS || f->calls_target < CONTROL_MIN_CALLS)) {
			f->verdict = CHECK_UNDECIDED;
			f->why = "too few calls in a run for one run a side to tell a change from "
				 "the host's stalls: collect with repeats";
		}
		f->basis = CHECK_BY_CONTROL;
		goto combine;
	}
	decide(f, o);
	f->basis = CHECK_BY_CONTROL;
	if (floor > 0 && f->verdict == CHECK_UNDECIDED && f->why &&
	    !strcmp(f->why, "the runs vary too much to tell"))
		f->why = "the control's other functions moved apart between the sides as far: "
			 "the host slowed them unlike";
	if (few_calls_ranked(nvb, n_b, nvt, n_t, run_ns, o, f) < 0)
		return -1;
combine:
	if (f->verdict == CHECK_NO_CHANGE && is_change(run.verdict)) {
		/* every function moved together: the host, or a change everywhere */
		*f = run;
		f->verdict = CHECK_UNDECIDED;
		f->why = job->host_moved ? "the whole run moved with it, in every run: a change "
					   "everywhere, or the speed of the host"
					 : "the whole run moved with it: the speed of the host or a "
					   "change everywhere";
	}
	return 0;
}

/* The control contexts' self times, each run's speed taken out, in cells
 * (group NULL: one group), each run weighed by w[r] (NULL: 1): their sum of
 * squares about the cells' means and its degrees of freedom, less those
 * the runs' speeds took (the runs' effective number less 1).  */
static void control_pool(const struct interner *in, const struct run *runs, size_t nb,
			 size_t nt, const double *scale, const unsigned char *ctl,
			 const int *group, size_t ng, const double *w, double *ss, double *df)
{
	double *v = xmalloc((nb + nt ? nb + nt : 1) * sizeof(*v)), cdf, sw = 0, sw2 = 0;
	size_t c, r;

	*ss = 0;
	*df = 0;
	for (c = 0; c < in->nctx; c++) {
		if (!ctl[c])
			continue;
		for (r = 0; r < nb + nt; r++)
			v[r] = run_find(&runs[r], c)->self / exp(scale[r]);
		*ss += cell_ss(v, w, group, nb, v + nb, w ? w + nb : NULL,
			       group ? group + nb : NULL, nt, ng, &cdf);
		*df += cdf;
	}
	for (r = 0; r < nb + nt; r++) {
		sw += w ? w[r] : 1;
		sw2 += w ? w[r] * w[r] : 1;
	}
	*df -= sw * sw / sw2 - 1;
	if (*df < 1)
		*ss = *df = 0;
	free(v);
}

/* How far the control's own functions moved apart between the sides, each
 * run's speed out and compared as any context is (in cells of group, each
 * run weighed by w): d[c] each control context's change (log units; NAN for
 * the others), for apart_sd().  */
static void control_apart(const struct interner *in, const struct run *runs, size_t nb,
			  size_t nt, const double *scale, const unsigned char *ctl,
			  const int *group, size_t ng, const double *w, double *d)
{
	double *v = xmalloc((nb + nt) * sizeof(*v));
	size_t c, r;

	for (c = 0; c < in->nctx; c++) {
		struct check_finding f;
		d[c] = NAN;
		if (!ctl[c])
			continue;
		for (r = 0; r < nb + nt; r++)
			v[r] = run_find(&runs[r], c)->self / exp(scale[r]);
		memset(&f, 0, sizeof(f));
		if (compare_control_cells(v, w, group, nb, v + nb, w + nb, group ? group + nb : NULL,
					  nt, ng, 0, 0, 0, 0.99, &f) >= 0 &&
		    f.ratio > 0)
			d[c] = log(f.ratio);
	}
	free(v);
}

/* Whether context k is c or lies below it.  */
static int ctx_within(const struct interner *in, size_t k, size_t c)
{
	for (; k != NONE; k = in->ctx[k].parent)
		if (k == c)
			return 1;
	return 0;
}

/* The least noise of context c's change: the spread of the other control
 * functions' changes between the sides (control_apart()), about their
 * median.  The control takes out the host's
 * speed as one number, but a host's load does not slow every function
 * alike: runs of t7021's program beside a CPU hog, all of the baseline at
 * half speed and all of the target at full, moved the callers' self times
 * (their probes' cost) 1.3x and the loops they call 1.6x, and with the
 * runs' speeds out the loops came out 18 % faster, though nothing had
 * changed.  A change is then told no closer than the rest of the control
 * agreed between the sides: c and the contexts below it left out, as a
 * changed function of the control does not hide its own change, nor its
 * callers' inclusive time.  NAN with fewer than 2
 * others (main's inclusive time holds every function: see apart_of()).  */
static double apart_sd(const struct interner *in, const double *d, size_t c)
{
	double *o = xmalloc((in->nctx ? in->nctx : 1) * sizeof(*o)), med, ss = 0;
	size_t k, n = 0;

	for (k = 0; k < in->nctx; k++)
		if (isfinite(d[k]) && !ctx_within(in, k, c))
			o[n++] = d[k];
	if (n < 2) {
		free(o);
		return NAN;
	}
	gsl_sort(o, 1, n);
	med = gsl_stats_median_from_sorted_data(o, 1, n);
	for (k = 0; k < n; k++)
		ss += (o[k] - med) * (o[k] - med);
	free(o);
	return sqrt(ss / (double)(n - 1));
}

/* What the control line says of apart_sd(): its median over the control's
 * functions (a changed one moves the others' floors, not the typical);
 * NAN with fewer than RUNSCALE_MIN_CONTROL of them.  */
static double apart_typical(const struct interner *in, const double *d)
{
	double *v = xmalloc((in->nctx ? in->nctx : 1) * sizeof(*v)), m;
	size_t c, n = 0;

	for (c = 0; c < in->nctx; c++)
		if (isfinite(d[c]) && isfinite(v[n] = apart_sd(in, d, c)))
			n++;
	m = n >= RUNSCALE_MIN_CONTROL ? median_of(v, n) : NAN;
	free(v);
	return m;
}

/* The control contexts' log self times, x[r * nctx + c] (NAN for the
 * others), for runscale.h's functions: the caller frees.  */
static double *control_logs(const struct interner *in, const struct run *runs, size_t nr,
			    const unsigned char *ctl)
{
	double *x = xmalloc((nr && in->nctx ? nr * in->nctx : 1) * sizeof(*x));
	size_t r, c;

	for (r = 0; r < nr; r++)
		for (c = 0; c < in->nctx; c++)
			x[r * in->nctx + c] = ctl[c] ? log(run_find(&runs[r], c)->self) : NAN;
	return x;
}

/* With 2 runs a side or more: the runs' groups of like speed (group[r]),
 * in job->speed_groups.  The groups stand only where they explain the
 * control's spread (an F test at 5 %): where the host slows every function
 * alike they cost degrees of freedom and buy nothing (job->speed_groups 1).
 * Where they stand, each run's speed is told again within its group
 * (runscale_group_scale(), over x: control_logs()).  */
static void group_by_speed(const struct interner *in, const struct run *runs, size_t nb,
			   size_t nt, const double *x, double *scale, const unsigned char *ctl,
			   int *group, struct check_job *job)
{
	double ss, df, gss, gdf;

	job->speed_groups = runscale_groups(scale, nb + nt, group);
	if (job->speed_groups < 2)
		return;
	control_pool(in, runs, nb, nt, scale, ctl, NULL, 1, NULL, &ss, &df);
	control_pool(in, runs, nb, nt, scale, ctl, group, job->speed_groups, NULL, &gss, &gdf);
	if (gdf >= 1 && df > gdf &&
	    (gss == 0 ? ss > 0
		      : gsl_cdf_fdist_Q(((ss - gss) / (df - gdf)) / (gss / gdf), df - gdf, gdf) <
				0.05)) {
		runscale_group_scale(x, nb + nt, in->nctx, group, job->speed_groups, scale);
	} else {
		job->speed_groups = 1;
		memset(group, 0, (nb + nt) * sizeof(*group));
	}
}

/* A copy of runs whose self times have the probes' cost taken out put back
 * in (cost_self 0): what the control reads of calibrated runs whose
 * functions are mostly below that cost.  */
static struct run *raw_runs(const struct run *runs, size_t nr)
{
	struct run *c = xcalloc(nr ? nr : 1, sizeof(*c));
	size_t r, i;

	for (r = 0; r < nr; r++) {
		c[r].n = runs[r].n;
		c[r].s = xmalloc((runs[r].n ? runs[r].n : 1) * sizeof(*c[r].s));
		for (i = 0; i < runs[r].n; i++) {
			c[r].s[i] = runs[r].s[i];
			if (isfinite(c[r].s[i].self))
				c[r].s[i].self += c[r].s[i].cost_self;
			c[r].s[i].cost_self = 0;
		}
	}
	return c;
}

/* Context c's floor (apart_sd()); 0 where too few control functions lie
 * outside it (main's inclusive time: the typical function's floor, which
 * its own change moves, took main's 2x when one loop ran 3x).  */
static double apart_of(const struct interner *in, const double *d, size_t c)
{
	double a = d ? apart_sd(in, d, c) : NAN;

	return isfinite(a) ? a : 0;
}

/* The typical run's time: the median over the runs of their roots'
 * inclusive time (a call's value times its calls), 0 when unknown.  */
static double typical_run_ns(const struct interner *in, const struct run *runs, size_t nr)
{
	double *v = xmalloc((nr ? nr : 1) * sizeof(*v)), m;
	size_t r, i;

	for (r = 0; r < nr; r++) {
		v[r] = 0;
		for (i = 0; i < runs[r].n; i++)
			if (in->ctx[runs[r].s[i].ctx].parent == NONE && isfinite(runs[r].s[i].incl))
				v[r] += runs[r].s[i].incl * runs[r].s[i].calls;
	}
	m = median_of(v, nr);
	free(v);
	return m;
}

static int compare_job(const struct profile *base, const size_t *bi, size_t nb,
		       const struct profile *target, const size_t *ti, size_t nt,
		       const struct check_opts *o, const struct thresholds *thr,
		       struct check_job *job)
{
	struct interner in;
	const struct profile **all = xmalloc((nb + nt ? nb + nt : 1) * sizeof(*all));
	struct run *runs = xcalloc(nb + nt ? nb + nt : 1, sizeof(*runs));
	struct run *rb = runs, *rt = runs + nb;
	double *vb = xmalloc(nb * sizeof(*vb)), *vt = xmalloc(nt * sizeof(*vt));
	double *cb = xmalloc(nb * sizeof(*cb)), *ct = xmalloc(nt * sizeof(*ct));
	double *nvb = xmalloc(nb * sizeof(*nvb)), *nvt = xmalloc(nt * sizeof(*nvt));
	double *scale = xcalloc(nb + nt ? nb + nt : 1, sizeof(*scale));
	int *group = xcalloc(nb + nt ? nb + nt : 1, sizeof(*group));
	int *gb = xcalloc(nb ? nb : 1, sizeof(*gb)), *gt = xcalloc(nt ? nt : 1, sizeof(*gt));
	double *wr = xmalloc((nb + nt ? nb + nt : 1) * sizeof(*wr));
	double *wb = xmalloc((nb ? nb : 1) * sizeof(*wb)), *wt = xmalloc((nt ? nt : 1) * sizeof(*wt));
	unsigned char *ctl = NULL, *bound = NULL;
	double *apart = NULL, run_ns;
	struct run *craw = NULL;
	const struct run *cruns = runs;	/* what the control reads */
	size_t i, c;
	int metric, ret = -1;

	memset(&in, 0, sizeof(in));
	for (i = 0; i < nb; i++)
		all[i] = &base[bi[i]];
	for (i = 0; i < nt; i++)
		all[nb + i] = &target[ti[i]];
	read_runs(&in, all, nb + nt, o->statistic, runs, &job->binned, &job->calibrated);
	run_ns = typical_run_ns(&in, runs, nb + nt);
	for (i = 0; i < nb + nt; i++)
		wr[i] = 1;
	ctl = xcalloc(in.nctx ? in.nctx : 1, 1);
	job->host_ratio = 1;
	job->speed_groups = 1;
	job->control_sd = NAN;
	job->apart_sd = NAN;
	if (!job->calibrated && !job->binned && (nb < 2 || nt < 2)) {
		/* one run a side has no other run to show how the probes' cost
		 * moved: self times that are mostly that cost neither decide nor
		 * tell the run's speed (the host moves them apart from the code) */
		bound = xmalloc(in.nctx ? in.nctx : 1);
		probe_bound(&in, runs, nb + nt, bound);
	}
	if (!o->no_control && !job->binned) {
		job->control = control_scale(&in, runs, nb + nt, bound, scale, ctl);
		/* too few others: the probe-bound ones still tell the host's
		 * speed roughly, as one run a side with none would not at all */
		if (!job->control && bound)
			job->control = control_scale(&in, runs, nb + nt, NULL, scale, ctl);
		/* calibrated, and too few functions above the probes' cost (a
		 * program whose callers do little but call): their self times
		 * with that cost in them still move with the host, as a run
		 * without calibration has them; the runs alone cannot tell the
		 * host's speed at all (3 runs of one binary all at half speed
		 * against 3 at full: its loops +51 %, a degradation) */
		if (!job->control && job->calibrated) {
			craw = raw_runs(runs, nb + nt);
			job->control = control_scale(&in, craw, nb + nt, NULL, scale, ctl);
			if (job->control)
				cruns = craw;
			job->control_raw = job->control > 0;
		}
	}
	if (job->control) {
		double sb = 0, st = 0;
		for (i = 0; i < nb; i++)
			sb += scale[i] / (double)nb;
		for (i = 0; i < nt; i++)
			st += scale[nb + i] / (double)nt;
		job->host_ratio = exp(st - sb);
		if (nb < 2 || nt < 2) {
			job->control_sd = control_sd(&in, cruns, nb, nt, scale, ctl);
		} else {
			/* the runs' speeds themselves: ns-sized values keep lg()'s +1 out */
			struct check_finding h;
			double *sp = xmalloc((nb + nt) * sizeof(*sp));
			double *x = control_logs(&in, cruns, nb + nt, ctl);
			memset(&h, 0, sizeof(h));
			h.ci_low = h.ci_high = NAN;
			for (i = 0; i < nb + nt; i++)
				sp[i] = 1e9 * exp(scale[i]);
			compare_runs(sp, nb, sp + nb, nt, o->confidence, &h);
			job->host_moved = h.ci_low > 1 || h.ci_high < 1;
			free(sp);
			group_by_speed(&in, cruns, nb, nt, x, scale, ctl, group, job);
			job->runs_weighed = runscale_weights(x, nb + nt, in.nctx, scale, group,
							     job->speed_groups, 0, wr, NULL);
			free(x);
			control_pool(&in, cruns, nb, nt, scale, ctl,
				     job->speed_groups > 1 ? group : NULL, job->speed_groups, wr,
				     &job->pool_ss, &job->pool_df);
			apart = xmalloc((in.nctx ? in.nctx : 1) * sizeof(*apart));
			control_apart(&in, cruns, nb, nt, scale, ctl,
				      job->speed_groups > 1 ? group : NULL, job->speed_groups, wr,
				      apart);
			job->apart_sd = apart_typical(&in, apart);
		}
	}
	for (c = 0; c < in.nctx; c++) {
		char *path = ctx_path(&in, c);
		for (metric = CHECK_SELF; metric <= CHECK_INCLUSIVE; metric++) {
			struct check_finding f;
			size_t n_b = 0, n_t = 0, calls_b = 0, calls_t = 0;
			double cost = 0;
			for (i = 0; i < nb + nt; i++) {
				const struct run_stat *s = run_find(&runs[i], c);
				double k = s ? (metric == CHECK_SELF ? s->cost_self : s->cost_incl) : 0;
				if (k > cost)
					cost = k;
			}
			for (i = 0; i < nb; i++) {
				const struct run_stat *s = run_find(&rb[i], c);
				double v = s ? (metric == CHECK_SELF ? s->self : s->incl) : NAN;
				if (s)
					cb[calls_b++] = s->calls;
				if (s && !isnan(v)) {
					nvb[n_b] = v / exp(scale[i]);
					wb[n_b] = wr[i];
					gb[n_b] = group[i];
					vb[n_b++] = v;
				}
			}
			for (i = 0; i < nt; i++) {
				const struct run_stat *s = run_find(&rt[i], c);
				double v = s ? (metric == CHECK_SELF ? s->self : s->incl) : NAN;
				if (s)
					ct[calls_t++] = s->calls;
				if (s && !isnan(v)) {
					nvt[n_t] = v / exp(scale[nb + i]);
					wt[n_t] = wr[nb + i];
					gt[n_t] = group[nb + i];
					vt[n_t++] = v;
				}
			}
			if (!calls_b && !calls_t)
				continue;
			if ((calls_b && !n_b) || (calls_t && !n_t))
				continue; /* no self times on a side: nothing to compare */
			memset(&f, 0, sizeof(f));
			f.metric = (enum check_metric)metric;
			f.nbase = n_b;
			f.ntarget = n_t;
			f.ci_low = f.ci_high = f.p = f.effect = NAN;
			f.ratio = 1;
			/* runs without calls count as 0 calls */
			f.calls_base = calls_b ? gsl_stats_mean(cb, 1, calls_b) *
						     ((double)calls_b / (double)nb)
					       : 0;
			f.calls_target = calls_t ? gsl_stats_mean(ct, 1, calls_t) *
						       ((double)calls_t / (double)nt)
						 : 0;
			f.context = xstrdup(path);
			f.function = strrchr(f.context, ';') ? strrchr(f.context, ';') + 1
							      : f.context;
			f.threshold = threshold_of(o, thr, in.names[in.ctx[c].name], path);
			f.resolution = CHECK_PROBE_DRIFT * cost;
			if (!n_b || !n_t) {
				f.verdict = n_b ? CHECK_REMOVED : CHECK_NEW;
				if (n_b)
					f.base = median_of(vb, n_b);
				if (n_t)
					f.target = median_of(vt, n_t);
				f.ratio = NAN;
			} else if (compare_one(vb, nvb, wb, gb, n_b, vt, nvt, wt, gt, n_t,
					       apart_of(&in, apart, c), run_ns, job, o,
					       &f) < 0) {
				free(f.context);
				free(path);
				goto out;
			} else if (bound && bound[c] && metric == CHECK_SELF &&
				   is_change(f.verdict)) {
				f.verdict = CHECK_UNDECIDED;
				f.why = "its self time is mostly the probes' cost of the calls it "
					"makes, which the host's load moves apart from the code (no "
					"calibration to take it out): collect with repeats, or run "
					"perun calibrate";
			}
			job->f = xrealloc(job->f, (job->nf + 1) * sizeof(*job->f));
			job->f[job->nf++] = f;
		}
		free(path);
	}
	check_job_finish(job);
	ret = 0;
out:
	for (i = 0; i < nb + nt; i++)
		free(runs[i].s);
	free(runs);
	free(all);
	free(vb);
	free(vt);
	free(cb);
	free(ct);
	free(nvb);
	free(nvt);
	free(group);
	free(gb);
	free(gt);
	free(wr);
	free(wb);
	free(wt);
	free(scale);
	free(ctl);
	free(apart);
	for (i = 0; craw && i < nb + nt; i++)
		free(craw[i].s);
	free(craw);
	free(bound);
	interner_release(&in);
	return ret;
}

static char **copy_labels(const char *const *labels, const size_t *idx, size_t n)
{
	char **out = xcalloc(n ? n : 1, sizeof(*out));
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = xstrdup(labels ? labels[idx[i]] : "");
	return out;
}

int check_compare(const struct profile *base, const char *const *base_labels, size_t nbase,
		  const struct profile *target, const char *const *target_labels, size_t ntarget,
		  const struct check_opts *o, struct check_result *res)
{
	struct thresholds thr;
	size_t *taken = xcalloc(ntarget ? ntarget : 1, sizeof(*taken));
	size_t *ti = xmalloc((ntarget ? ntarget : 1) * sizeof(*ti));
	size_t *bi = xmalloc((nbase ? nbase : 1) * sizeof(*bi));
	size_t i, j, nt, nb, other;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	if (thresholds_compile(o, &thr) < 0)
		goto out;
	for (i = 0; i < ntarget; i++) {
		struct check_job job;
		struct job of;
		if (taken[i])
			continue;
		/* the target runs of this job, on this machine */
		for (j = i, nt = 0; j < ntarget; j++)
			if (!taken[j] && (o->any_job || job_same_profiles(&target[i], &target[j])) &&
			    (o->any_machine || machine_same(&target[i], &target[j]))) {
				taken[j] = 1;
				ti[nt++] = j;
			}
		for (j = 0, nb = 0, other = 0; j < nbase; j++) {
			if (!o->any_job && !job_same_profiles(&target[i], &base[j]))
				continue;
			if (o->any_machine || machine_same(&target[i], &base[j]))
				bi[nb++] = j;
			else
				other++;
		}
		res->skipped_machine += other;
		if (!nb) {
			res->unpaired += nt;
			continue;
		}
		memset(&job, 0, sizeof(job));
		job_from_profile(&target[i], &of);
		job.collector = xstrdup(of.collector);
		job.cmd = xstrdup(of.cmd);
		job.args = xstrdup(of.args);
		job.workload = xstrdup(of.workload);
		job.machine = machine_describe(&target[i]);
		job.base_labels = copy_labels(base_labels, bi, nb);
		job.target_labels = copy_labels(target_labels, ti, nt);
		job.nbase = nb;
		job.ntarget = nt;
		{
			struct strbuf inc = STRBUF_INIT;
			size_t k;
			for (k = 0; k < nb; k++)
				profile_incomplete(&base[bi[k]], "  baseline: ", &inc);
			for (k = 0; k < nt; k++)
				profile_incomplete(&target[ti[k]], "  target: ", &inc);
			/* calls counted without a duration are in no time compared */
			for (k = 0; k < nb; k++)
				profile_untimed(&base[bi[k]], "  baseline: ", &inc);
			for (k = 0; k < nt; k++)
				profile_untimed(&target[ti[k]], "  target: ", &inc);
			job.incomplete = strbuf_detach(&inc);
		}
		res->jobs = xrealloc(res->jobs, (res->njobs + 1) * sizeof(*res->jobs));
		res->jobs[res->njobs++] = job;
		if (o->method >= CHECK_MODEL_ORDER) {
			struct threshold_ctx tc = {o, &thr};
			struct check_job *mj = &res->jobs[res->njobs - 1];
			if (check_models_job(base, bi, nb, target, ti, nt, o, threshold_fn, &tc, mj) <
			    0)
				goto out;
			mj->host_ratio = 1;
			mj->speed_groups = 1;
			mj->control_sd = NAN;
			mj->apart_sd = NAN;
			for (j = 0; j < mj->nf; j++)
				mj->f[j].basis = CHECK_BY_MODELS;
		} else if (compare_job(base, bi, nb, target, ti, nt, o, &thr,
				     &res->jobs[res->njobs - 1]) < 0)
			goto out;
		res->degradations += res->jobs[res->njobs - 1].degradations;
		res->optimizations += res->jobs[res->njobs - 1].optimizations;
		res->undecided += res->jobs[res->njobs - 1].undecided;
	}
	ret = 0;
out:
	thresholds_release(&thr);
	free(taken);
	free(ti);
	free(bi);
	return ret;
}

void check_result_release(struct check_result *res)
{
	size_t i, j;

	for (i = 0; i < res->njobs; i++) {
		struct check_job *job = &res->jobs[i];
		for (j = 0; j < job->nf; j++) {
			free(job->f[j].context);
			free(job->f[j].cause);
		}
		free(job->f);
		for (j = 0; j < job->nbase; j++)
			free(job->base_labels[j]);
		for (j = 0; j < job->ntarget; j++)
			free(job->target_labels[j]);
		free(job->base_labels);
		free(job->target_labels);
		free(job->collector);
		free(job->cmd);
		free(job->args);
		free(job->workload);
		free(job->machine);
		free(job->incomplete);
	}
	free(res->jobs);
	memset(res, 0, sizeof(*res));
}
