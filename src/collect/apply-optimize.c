/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pre-optimize and post-optimize phases: the optimization methods of the
 * selection (src/optimize/) around the collect, and what they did in the
 * profile.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/callgraph.h"
#include "binary/cfg.h"
#include "collect/session.h"
#include "optimize/methods.h"
#include "optimize/optimize.h"
#include "parse/parse.h"
#include "store/repo.h"
#include "store/stats.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* Most disarmed functions named on stderr (all of them go to the profile).  */
#define MAX_DISARMED_SHOWN 5

/* The dynamic stats an earlier collect of this command, arguments and
 * workload left in .perun/stats, on HEAD or one of its 20 first parents:
 * 1 and *st filled (the caller releases it), else 0.  */
static int load_stats(const struct session *s, struct stats *st)
{
	const struct collect_opts *o = s->o;
	char *pd = repo_locate(), *name;
	char head[41], found[41];
	struct repo r;
	int ret = 0;

	if (!pd)
		return 0;
	free(pd);
	if (repo_find(&r) < 0)
		return 0;
	if (vcs_head(r.worktree, head) == 0) {
		name = stats_name(o->cmd, o->args ? o->args : "", o->workload ? o->workload : "");
		if (stats_nearest(&r, head, name, 20, st, found) == 0)
			ret = 1;
		free(name);
	}
	repo_release(&r);
	return ret;
}

/* What this collect can give the methods: cg and st are filled when there
 * (*have_cg, *have_st set).  */
static unsigned resources(struct session *s, struct callgraph *cg, int *have_cg, struct stats *st,
			  int *have_st)
{
	const struct opt_selection *os = &s->o->opt;
	unsigned have = 0;
	char *wt;
	int m, want_cg = 0;

	if (!s->o->aggregate)
		have |= OPT_REQ_PER_CALL;
	wt = vcs_find_worktree(".");
	if (wt)
		have |= OPT_REQ_VCS;
	free(wt);
	*have_st = load_stats(s, st);
	if (*have_st)
		have |= OPT_REQ_STATS;
	/* the call graph: for the methods that need it, and for baseline-dynamic's
	 * wrapper filter */
	for (m = 0; m < OPT_NMETHODS; m++)
		want_cg |= os->on[m] &&
			   (opt_methods[m].requires & OPT_REQ_CALLGRAPH || m == OPT_BASELINE_DYNAMIC);
	*have_cg = 0;
	if (want_cg && callgraph_load(cg, &s->target,
				      s->o->cache_off || os->cache_off ? NULL : s->cache_dir, 0) == 0) {
		if (cg->root >= 0) {
			*have_cg = 1;
			have |= OPT_REQ_CALLGRAPH;
		} else {
			callgraph_release(cg);
		}
	}
	/* not yet: the target's sources */
	return have;
}

int collect_reset_optimization_cache(struct session *s)
{
	/* the binaries' analyses (targets/) and the methods' own data (optimize/) */
	static const char *const dirs[] = { "targets", "optimize", NULL };
	size_t i;

	for (i = 0; dirs[i]; i++) {
		char *dir = xstrfmt("%s/%s", s->cache_dir, dirs[i]);
		if (fs_exists(dir)) {
			if (fs_remove_tree(dir) < 0) {
				pr_error("cannot remove %s: remove it by hand", dir);
				free(dir);
				return -1;
			}
			if (!s->o->quiet)
				pr_info("perun: removed the cached optimization data in %s", dir);
		}
		free(dir);
	}
	return 0;
}

/* A parameter given with -oa (not a default or a pipeline's value).  */
static int given(const struct opt_selection *os, const char *name)
{
	return os->values && os->values[opt_param_find(name)];
}

/* Table A.4's prediction max(depth * ratio, least), unless -oa gave name.  */
static long long predict_levels(const struct opt_selection *os, const char *name, int depth,
				double ratio, long long least)
{
	long long v = (long long)(depth * ratio);

	if (given(os, name))
		return opt_value_int(os, name);
	return v > least ? v : least;
}

/* The pre-optimize methods' view of the plan: per probe its call-graph node
 * (-1: none), per node whether it is a candidate and protected (-f).  */
struct pre {
	struct callgraph *cg;	/* NULL when there is none */
	const struct stats *st;	/* NULL when there are none */
	int *node;		/* per probe */
	unsigned char *gone;	/* per probe: removed */
	unsigned char *cand, *prot, *drop;	/* per node */
	size_t nprobes, left;
};

struct by_addr {
	uint64_t addr;
	uint32_t node;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct by_addr *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void pre_init(struct pre *p, struct session *s, struct callgraph *cg,
		     const struct stats *st)
{
	struct by_addr *idx = NULL, key, *hit;
	size_t i, n = 0;

	memset(p, 0, sizeof(*p));
	p->cg = cg;
	p->st = st;
	p->nprobes = p->left = s->plan.n;
	p->node = xcalloc(s->plan.n + 1, sizeof(*p->node));
	p->gone = xcalloc(s->plan.n + 1, 1);
	if (cg) {
		p->cand = xcalloc(cg->nnodes + 1, 1);
		p->prot = xcalloc(cg->nnodes + 1, 1);
		p->drop = xcalloc(cg->nnodes + 1, 1);
		idx = xcalloc(cg->nnodes + 1, sizeof(*idx));
		for (i = 0; i < cg->nnodes; i++)
			if (!cg->nodes[i].import && cg->nodes[i].addr) {
				idx[n].addr = cg->nodes[i].addr;
				idx[n++].node = (uint32_t)i;
			}
		qsort(idx, n, sizeof(*idx), cmp_addr);
	}
	for (i = 0; i < s->plan.n; i++) {
		const struct probe *pr = &s->plan.probes[i];
		p->node[i] = -1;
		if (!cg || pr->kind != PROBE_FUNC || strcmp(pr->binary, s->target.path))
			continue;
		key.addr = pr->addr;
		hit = n ? bsearch(&key, idx, n, sizeof(*idx), cmp_addr) : NULL;
		if (!hit)
			continue;
		p->node[i] = (int)hit->node;
		p->cand[hit->node] = 1;
		/* named with -f, or changed since the baseline (diff tracing's
		 * protect mode): never dropped */
		if ((pr->flags & PROBE_F_NAMED) || collect_protected(s, pr->name) ||
		    (pr->sym && collect_protected(s, pr->sym)))
			p->prot[hit->node] = 1;
	}
	free(idx);
}

static void pre_release(struct pre *p)
{
	free(p->node);
	free(p->gone);
	free(p->cand);
	free(p->prot);
	free(p->drop);
}

/* Removes the probes of the nodes marked in p->drop (but those -f named),
 * listing them in names; clears drop.  Returns how many.  */
static size_t pre_apply(struct pre *p, struct session *s, struct json_object *names)
{
	size_t i, n = 0;

	for (i = 0; i < p->nprobes; i++) {
		int v = p->node[i];
		if (p->gone[i] || v < 0 || !p->drop[v] || p->prot[v])
			continue;
		p->gone[i] = 1;
		p->left--;
		n++;
		json_object_array_add(names, json_object_new_string(s->plan.probes[i].name));
	}
	for (i = 0; p->cg && i < p->cg->nnodes; i++) {
		if (p->drop[i] && !p->prot[i])
			p->cand[i] = 0;
		p->drop[i] = 0;
	}
	return n;
}

/* Compacts the plan: the probes not gone, ids renumbered.  */
static void plan_compact(struct plan *plan, const unsigned char *gone)
{
	size_t i, k = 0;

	for (i = 0; i < plan->n; i++) {
		struct probe *pr = &plan->probes[i];
		if (gone[i]) {
			free(pr->binary);
			free(pr->name);
			free(pr->mark);
			free(pr->mark_end);
			free(pr->file);
			free(pr->sym);
			continue;
		}
		plan->probes[k] = *pr;
		plan->probes[k].id = (int)k;
		k++;
	}
	plan->n = k;
}

static struct json_object *method_record(struct json_object *rec, const char *name,
					 size_t removed, struct json_object *names)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "removed", json_object_new_int64((int64_t)removed));
	json_object_object_add(m, "removed_functions", names);
	json_object_object_add(rec, name, m);
	return m;
}

static void run_cg_shaping(struct pre *p, struct session *s, struct json_object *rec,
			   struct strbuf *said)
{
	const struct opt_selection *os = &s->o->opt;
	const char *mode = opt_value(os, "cg-mode");
	struct json_object *names = json_object_new_array(), *m;
	size_t matched, n, probed = p->left;
	long long keep_top = -1, minf = -1, chain = -1;
	int keep_leaf = -1;

	matched = cgs_match(p->cg, p->cand, p->drop);
	if (!strcmp(mode, "soft") || !strcmp(mode, "strict")) {
		keep_top = predict_levels(os, "cg-keep-top", p->cg->depth,
					  !strcmp(mode, "soft") ? 0.5 : 0.25, 2);
		minf = given(os, "cg-trim-min-functions")
			       ? opt_value_int(os, "cg-trim-min-functions")
			       : ((long long)(probed * 0.1) > 10 ? (long long)(probed * 0.1) : 10);
		keep_leaf = given(os, "cg-trim-keep-leaf") ? opt_value_bool(os, "cg-trim-keep-leaf")
							   : probed <= 20;
		cgs_trim(p->cg, p->cand, (int)keep_top, (size_t)minf, keep_leaf, p->drop);
	} else if (!strcmp(mode, "prune")) {
		keep_top = predict_levels(os, "cg-keep-top", p->cg->depth, 0.1, 2);
		chain = predict_levels(os, "cg-prune-chain-length", p->cg->depth, 0.1, 1);
		cgs_prune(p->cg, p->cand, (int)chain, (int)keep_top, p->drop);
	}
	n = pre_apply(p, s, names);
	m = method_record(rec, "cg-shaping", n, names);
	json_object_object_add(m, "mode", json_object_new_string(mode));
	json_object_object_add(m, "unreachable", json_object_new_int64((int64_t)matched));
	json_object_object_add(m, "depth", json_object_new_int(p->cg->depth));
	if (keep_top >= 0)
		json_object_object_add(m, "keep_top", json_object_new_int64(keep_top));
	if (minf >= 0)
		json_object_object_add(m, "min_functions", json_object_new_int64(minf));
	if (keep_leaf >= 0)
		json_object_object_add(m, "keep_leaf", json_object_new_boolean(keep_leaf));
	if (chain >= 0)
		json_object_object_add(m, "chain_length", json_object_new_int64(chain));
	strbuf_addf(said, "%scg-shaping (%s) removed %zu", said->len ? ", " : "", mode, n);
}

static void run_baseline_static(struct pre *p, struct session *s, struct json_object *rec,
				struct strbuf *said)
{
	const struct opt_selection *os = &s->o->opt;
	const char *cls = opt_value(os, "static-complexity");
	int c = cfg_complexity_parse(cls);
	long long keep_top = predict_levels(os, "static-keep-top", p->cg->depth, 0.1, 1);
	struct json_object *names = json_object_new_array(), *m;
	size_t n;

	baseline_static(p->cg, p->cand, c < 0 ? CFG_CONSTANT : c, (int)keep_top, p->drop);
	n = pre_apply(p, s, names);
	m = method_record(rec, "baseline-static", n, names);
	json_object_object_add(m, "complexity", json_object_new_string(cls));
	json_object_object_add(m, "keep_top", json_object_new_int64(keep_top));
	strbuf_addf(said, "%sbaseline-static removed %zu", said->len ? ", " : "", n);
}

static void run_baseline_dynamic(struct pre *p, struct session *s, struct json_object *rec,
				 struct strbuf *said)
{
	const struct opt_selection *os = &s->o->opt;
	int strict = !strcmp(opt_value(os, "threshold-mode"), "strict");
	struct dynbase_params dp;
	struct json_object *names = json_object_new_array(), *m, *by;
	size_t i, n = 0, per[4] = { 0, 0, 0, 0 };

	dp.soft_threshold = given(os, "dyn-base-soft-threshold") || !strict
				    ? (uint64_t)opt_value_int(os, "dyn-base-soft-threshold")
				    : 1000;
	dp.hard_threshold = given(os, "dyn-base-hard-threshold") || !strict
				    ? (uint64_t)opt_value_int(os, "dyn-base-hard-threshold")
				    : 100000;
	dp.median_resolution = DYNBASE_MEDIAN_RESOLUTION;
	dp.constant_median_ratio = DYNBASE_CONSTANT_MEDIAN_RATIO;
	dp.wrapper_ratio = DYNBASE_WRAPPER_RATIO;
	for (i = 0; i < p->nprobes; i++) {
		const struct probe *pr = &s->plan.probes[i];
		enum dynbase_filter f;
		if (p->gone[i] || pr->kind != PROBE_FUNC || (pr->flags & PROBE_F_NAMED))
			continue;
		f = dynbase_check(p->cg, p->st, pr->name, p->node[i], &dp);
		if (f == DYNBASE_KEEP)
			continue;
		p->gone[i] = 1;
		p->left--;
		if (p->node[i] >= 0)
			p->cand[p->node[i]] = 0;
		per[f]++;
		n++;
		json_object_array_add(names, json_object_new_string(pr->name));
	}
	m = method_record(rec, "baseline-dynamic", n, names);
	json_object_object_add(m, "soft_threshold", json_object_new_int64((int64_t)dp.soft_threshold));
	json_object_object_add(m, "hard_threshold", json_object_new_int64((int64_t)dp.hard_threshold));
	by = json_object_new_object();
	for (i = DYNBASE_CALL_LIMIT; i <= DYNBASE_WRAPPED; i++)
		json_object_object_add(by, dynbase_filter_name((enum dynbase_filter)i),
				       json_object_new_int64((int64_t)per[i]));
	json_object_object_add(m, "by_filter", by);
	strbuf_addf(said, "%sbaseline-dynamic removed %zu", said->len ? ", " : "", n);
}

static void run_dynamic_sampling(struct pre *p, struct session *s, struct json_object *rec,
				 struct strbuf *said)
{
	const struct opt_selection *os = &s->o->opt;
	int strict = !strcmp(opt_value(os, "threshold-mode"), "strict");
	uint64_t thr = given(os, "dyn-sample-threshold") || !strict
			       ? (uint64_t)opt_value_int(os, "dyn-sample-threshold")
			       : 1000;
	double step = opt_value_real(os, "dyn-sample-step");
	struct json_object *m = json_object_new_object(), *smp = json_object_new_object();
	size_t i, initial = 0, refined = 0, changed = 0;

	for (i = 0; i < p->nprobes; i++) {
		struct probe *pr = &s->plan.probes[i];
		const struct fn_stats *f = p->st ? stats_find(p->st, pr->name) : NULL;
		int v = p->node[i];
		unsigned old = pr->sampling;
		/* -f NAME#N and global sampling are the user's */
		if (p->gone[i] || pr->kind != PROBE_FUNC || pr->sampling != 1)
			continue;
		if (f) {
			pr->sampling = dynsample_refine(f->sample, f->sampled_count, thr);
			refined++;
		} else {
			pr->sampling = dynsample_initial(v >= 0 ? p->cg->nodes[v].level : 0,
							 v >= 0 ? p->cg->nodes[v].complexity : -1,
							 step);
			initial++;
		}
		if (pr->sampling != old)
			changed++;
		if (pr->sampling > 1)
			json_object_object_add(smp, pr->name,
					       json_object_new_int64((int64_t)pr->sampling));
	}
	json_object_object_add(m, "threshold", json_object_new_int64((int64_t)thr));
	json_object_object_add(m, "step", json_object_new_double(step));
	json_object_object_add(m, "initial", json_object_new_int64((int64_t)initial));
	json_object_object_add(m, "refined", json_object_new_int64((int64_t)refined));
	json_object_object_add(m, "changed", json_object_new_int64((int64_t)changed));
	json_object_object_add(m, "sampling", smp);
	json_object_object_add(rec, "dynamic-sampling", m);
	strbuf_addf(said, "%sdynamic-sampling set %zu (%zu initial, %zu refined from stats)",
		    said->len ? ", " : "", changed, initial, refined);
}

/* The pre-optimize methods, in the order of the pipelines (7.3): they
 * rewrite s->plan and leave what they did in s->pre_opt.  */
static void pre_methods(struct session *s, struct callgraph *cg, const struct stats *st)
{
	const struct opt_selection *os = &s->o->opt;
	struct strbuf said = STRBUF_INIT;
	struct json_object *rec;
	struct pre p;

	if (!os->active[OPT_CG_SHAPING] && !os->active[OPT_BASELINE_STATIC] &&
	    !os->active[OPT_BASELINE_DYNAMIC] && !os->active[OPT_DYNAMIC_SAMPLING])
		return;
	pre_init(&p, s, cg, st);
	rec = json_object_new_object();
	json_object_object_add(rec, "probes_before", json_object_new_int64((int64_t)s->plan.n));
	if (os->active[OPT_CG_SHAPING])
		run_cg_shaping(&p, s, rec, &said);
	if (os->active[OPT_BASELINE_STATIC])
		run_baseline_static(&p, s, rec, &said);
	if (os->active[OPT_BASELINE_DYNAMIC])
		run_baseline_dynamic(&p, s, rec, &said);
	if (os->active[OPT_DYNAMIC_SAMPLING])
		run_dynamic_sampling(&p, s, rec, &said);
	plan_compact(&s->plan, p.gone);
	json_object_object_add(rec, "probes_after", json_object_new_int64((int64_t)s->plan.n));
	if (!s->o->quiet)
		pr_info("perun: pre-optimize: %zu of %zu probes left: %s", s->plan.n, p.nprobes,
			said.buf);
	json_object_put(s->pre_opt);
	s->pre_opt = rec;
	strbuf_release(&said);
	pre_release(&p);
}

int collect_pre_optimize(struct session *s)
{
	struct opt_selection *os = &s->o->opt;
	struct callgraph cg;
	struct stats st;
	int have_cg = 0, have_st = 0;

	if (!os->pipeline && !os->ntoggles)
		return 0;
	opt_resolve(os, ~0u, NULL);	/* which are on, for what to load */
	memset(&cg, 0, sizeof(cg));
	memset(&st, 0, sizeof(st));
	opt_resolve(os, resources(s, &cg, &have_cg, &st, &have_st), s->o->quiet ? NULL : stderr);
	if (collect_diff_tracing(s) < 0) {
		if (have_cg)
			callgraph_release(&cg);
		if (have_st)
			stats_release(&st);
		return -1;
	}
	pre_methods(s, have_cg ? &cg : NULL, have_st ? &st : NULL);
	if (have_cg)
		callgraph_release(&cg);
	if (have_st)
		stats_release(&st);
	memset(&s->sopt, 0, sizeof(s->sopt));
	if (os->active[OPT_TIMED_SAMPLING]) {
		double f = opt_value_real(os, "timed-sample-freq");
		long ms = (long)(1000.0 / f + 0.5);
		s->sopt.timed_freq = f;
		s->sopt.timed_period_ms = (unsigned)(ms < 1 ? 1 : ms);
	}
	if (os->active[OPT_DYNAMIC_PROBING]) {
		s->sopt.probing_threshold = (uint64_t)opt_value_int(os, "probing-threshold");
		if (opt_value_bool(os, "probing-reattach"))
			s->sopt.probing_reattach_ms =
				(unsigned)opt_value_int(os, "probing-reattach-ms");
		s->sopt.probing_cond = collect_probing_cond(s);
	}
	collect_wd(&s->wd, "pre-optimize: %s%s%s", os->pipeline ? "pipeline " : "",
		   os->pipeline ? os->pipeline : "",
		   s->sopt.timed_period_ms || s->sopt.probing_threshold ? " (run-optimize code)" : "");
	return 0;
}

int collect_probing_cond(const struct session *s)
{
	const char *e = getenv("PERUN_PROBING_COND");

	/* stap unregisters a conditional uprobe on the kernel runtime only;
	 * stapbpf runs the condition first in the handler.  PERUN_PROBING_COND=0
	 * keeps the gate in the handler's body (bench/disarm.sh measures what
	 * the condition saves) */
	if (e && !strcmp(e, "0"))
		return 0;
	return s->runtime == RUNTIME_KERNEL ? PROBING_COND_KERNEL : PROBING_COND_INLINE;
}

int collect_optimizing(const struct session *s)
{
	return s->o->opt.pipeline || s->o->opt.ntoggles;
}

void collect_mark_partial(struct json_object *sum, const char *name, const char *key,
			  struct json_object *val)
{
	struct json_object *fs;

	if (!json_object_object_get_ex(sum, name, &fs)) {
		json_object_put(val);
		return;
	}
	json_object_object_add(fs, "partial", json_object_new_boolean(1));
	json_object_object_add(fs, key, val);
}

/* Per probe of dynamic probing's o lines: disarms (o 3), re-arms (o 4) and
 * calls recorded (o 1), in plan order.  */
struct probing_count {
	uint64_t recorded, disarms, rearms;
	int seen;
};

/* Dynamic probing in the profile: optimization.dynamic_probing under o,
 * the disarmed functions marked partial in sum, a line on stderr.  */
static void collect_probing_records(const struct session *s, const struct parse_opt_record *r,
				    size_t n, struct json_object *sum, struct json_object *o)
{
	struct json_object *dp = json_object_new_object(), *dis = json_object_new_object();
	struct json_object *ra = NULL;
	unsigned ms = s->sopt.probing_reattach_ms;
	struct probing_count *c = xcalloc(s->plan.n ? s->plan.n : 1, sizeof(*c));
	struct strbuf names = STRBUF_INIT;
	uint64_t rearms = 0;
	size_t i, ndis = 0;

	for (i = 0; i < n; i++) {
		if (r[i].id >= s->plan.n)
			continue;
		if (r[i].method == PARSE_OPT_DISARMED) {
			c[r[i].id].recorded = r[i].value;
			c[r[i].id].seen = 1;
		} else if (r[i].method == PARSE_OPT_DISARMS) {
			c[r[i].id].disarms = r[i].value;
		} else if (r[i].method == PARSE_OPT_REARMS) {
			c[r[i].id].rearms = r[i].value;
		}
	}
	if (ms)
		ra = json_object_new_object();
	for (i = 0; i < s->plan.n; i++) {
		const char *name = s->plan.probes[i].name;
		if (!c[i].seen)
			continue;
		json_object_object_add(dis, name, json_object_new_int64((int64_t)c[i].recorded));
		if (ms) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "disarmed", json_object_new_int64((int64_t)c[i].disarms));
			json_object_object_add(e, "rearmed", json_object_new_int64((int64_t)c[i].rearms));
			json_object_object_add(e, "recorded",
					       json_object_new_int64((int64_t)c[i].recorded));
			json_object_object_add(ra, name, e);
			collect_mark_partial(sum, name, "disarmed_times",
				     json_object_new_int64((int64_t)c[i].disarms));
			collect_mark_partial(sum, name, "rearmed_times",
				     json_object_new_int64((int64_t)c[i].rearms));
			collect_mark_partial(sum, name, "recorded_in_bursts",
				     json_object_new_int64((int64_t)c[i].recorded));
			rearms += c[i].rearms;
		} else {
			collect_mark_partial(sum, name, "disarmed_after",
				     json_object_new_int64((int64_t)c[i].recorded));
		}
		if (ndis < MAX_DISARMED_SHOWN)
			strbuf_addf(&names, "%s%s", ndis ? ", " : "", name);
		else if (ndis == MAX_DISARMED_SHOWN)
			strbuf_addstr(&names, ", ...");
		ndis++;
	}
	json_object_object_add(dp, "threshold",
			       json_object_new_int64((int64_t)s->sopt.probing_threshold));
	json_object_object_add(dp, "disarmed", dis);
	json_object_object_add(dp, "disarm_by",
			       json_object_new_string(
				       s->uprobes ? "remove"
				       : s->sopt.probing_cond == PROBING_COND_KERNEL ? "unregister"
				       : s->sopt.probing_cond ? "handler-condition"
							      : "handler-gate"));
	if (ms) {
		json_object_object_add(dp, "reattach_first_ms", json_object_new_int64(ms));
		json_object_object_add(dp, "reattach", ra);
	}
	json_object_object_add(o, "dynamic_probing", dp);
	if (ndis && !ms)
		log_msg(0, "perun",
			"dynamic probing disarmed %zu probe%s after %llu calls, so their counts "
			"are partial: %s",
			ndis, ndis == 1 ? "" : "s",
			(unsigned long long)s->sopt.probing_threshold, names.buf);
	else if (ndis)
		log_msg(0, "perun",
			"dynamic probing disarmed %zu probe%s after bursts of %llu calls and "
			"re-armed them %llu time%s (first after %u ms, doubling), so their counts "
			"are partial: %s",
			ndis, ndis == 1 ? "" : "s",
			(unsigned long long)s->sopt.probing_threshold, (unsigned long long)rearms,
			rearms == 1 ? "" : "s", ms, names.buf);
	strbuf_release(&names);
	free(c);
}

void collect_post_optimize(struct session *s, const struct parser *parser,
			   struct json_object *extra, struct json_object *sum)
{
	const struct opt_selection *os = &s->o->opt;
	const struct parse_opt_record *r;
	struct json_object *o;
	size_t n, i;
	int sampled = 0;

	if (!collect_optimizing(s))
		return;
	r = parser_opt_records(parser, &n);
	o = json_object_new_object();
	if (os->active[OPT_DYNAMIC_PROBING]) {
		collect_probing_records(s, r, n, sum, o);
		sampled |= json_object_object_length(
				   json_object_object_get(json_object_object_get(o, "dynamic_probing"),
							  "disarmed")) > 0;
	}
	if (os->active[OPT_TIMED_SAMPLING]) {
		struct json_object *ts = json_object_new_object();
		uint64_t flips = 0;
		for (i = 0; i < n; i++)
			if (r[i].method == PARSE_OPT_FLIPS)
				flips = r[i].value;
		json_object_object_add(ts, "freq_hz", json_object_new_double(s->sopt.timed_freq));
		json_object_object_add(ts, "period_ms",
				       json_object_new_int64((int64_t)s->sopt.timed_period_ms));
		json_object_object_add(ts, "flips", json_object_new_int64((int64_t)flips));
		json_object_object_add(o, "timed_sampling", ts);
		json_object_object_foreach(sum, name, val)
		{
			(void)val;
			collect_mark_partial(sum, name, "sampled_by", json_object_new_string("timed-sampling"));
		}
		log_msg(0, "perun",
			"the trace is sampled: timed sampling recorded calls only in its gather "
			"windows (%u ms on, %u ms off)",
			s->sopt.timed_period_ms, s->sopt.timed_period_ms);
		sampled = 1;
	}
	if (os->active[OPT_DYNAMIC_SAMPLING])
		for (i = 0; i < s->plan.n; i++)
			sampled |= s->plan.probes[i].sampling > 1;
	if (s->diff_j)
		json_object_object_add(o, "diff_tracing", json_object_get(s->diff_j));
	json_object_object_add(extra, "optimization", o);
	/* intended sampling: the trace is complete, but not every call is in it */
	json_object_object_add(extra, "sampled", json_object_new_boolean(sampled));
}
