/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun bisect: binary search for the first commit where a function's time
 * steps up, collecting revisions through the runner and finding the step
 * with the step detection history uses (analysis/steps.h).  */
#include "config.h"

#define PR_FMT "perun bisect"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "analysis/postprocess.h"
#include "analysis/robust.h"
#include "analysis/samples.h"
#include "analysis/steps.h"
#include "profile/machine.h"
#include "profile/profile.h"
#include "run/run.h"
#include "store/repo.h"
#include "store/store.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* The per-run median call time of one function at one revision.  */
struct series {
	char *name;
	double *v;
	size_t n;
};

/* One commit of the range.  */
struct point {
	int tried;		/* collected, or tried to */
	struct series *f;	/* per function */
	size_t nf;
};

struct bisect {
	struct point *pt;
	size_t cur;		/* the point being collected */
};

static struct series *series_get(struct point *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nf; i++)
		if (!strcmp(p->f[i].name, name))
			return &p->f[i];
	p->f = xrealloc(p->f, (p->nf + 1) * sizeof(*p->f));
	memset(&p->f[p->nf], 0, sizeof(p->f[0]));
	p->f[p->nf].name = xstrdup(name);
	return &p->f[p->nf++];
}

/* The median call time of every function of p, into the current point.  */
static void add_profile(struct bisect *b, const struct profile *p)
{
	struct func_table t;
	size_t i;

	samples_read(p, NULL, &t);
	for (i = 0; i < t.n; i++) {
		struct series *s;
		if (!t.f[i].n)
			continue;
		s = series_get(&b->pt[b->cur], t.f[i].uid);
		s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
		s->v[s->n++] = t.f[i].median;
	}
	samples_release(&t);
}

/* The runner's callback: a collected profile.  */
static void on_profile(void *ctx, const char *sha, size_t job, const char *path)
{
	struct profile p = { NULL };

	(void)sha;
	(void)job;
	if (profile_load(&p, path) == 0)
		add_profile(ctx, &p);
	profile_release(&p);
}

static const char *hstr(const struct profile *p, const char *path)
{
	const char *v = profile_str(p, path);

	return v ? v : "";
}

/* Whether p is a run of the runner's (only) job: its command, arguments,
 * workload, the trace collector and the runner's postprocessors in order
 * (check_same_job()'s notion of a job; the trace options are not compared),
 * on this machine.  */
static int same_job(const struct runner *r, const struct profile *p, const struct profile *here)
{
	const struct run_job *j = r->jobs;
	struct json_object *pp = NULL;
	size_t i, n;

	if (strcmp(hstr(p, "header.cmd"), j->cmd) ||
	    strcmp(hstr(p, "header.args"), j->args ? j->args : "") ||
	    strcmp(hstr(p, "header.workload"), j->workload ? j->workload : "") ||
	    strcmp(hstr(p, "collector_info.name"), "trace") || !machine_same(p, here))
		return 0;
	n = p->root && json_object_object_get_ex(p->root, "postprocessors", &pp) &&
		    json_object_is_type(pp, json_type_array)
		? json_object_array_length(pp)
		: 0;
	if (n != r->npost)
		return 0;
	for (i = 0; i < n; i++) {
		struct json_object *name = NULL;
		json_object_object_get_ex(json_object_array_get_idx(pp, i), "name", &name);
		if (!name || pp_method_parse(json_object_get_string(name)) != (int)r->post[i].method)
			return 0;
	}
	return 1;
}

/* The profiles registered for sha that are runs of the job on this
 * machine, when there are r->repeat of them or more: read into the current
 * point instead of collecting again.  How many were read (0: collect).  */
static size_t reuse_registered(struct runner *r, struct bisect *b, const char *sha,
			       const struct profile *here)
{
	struct pidx index;
	struct profile *p = NULL;
	size_t i, n = 0, used = 0;

	pidx_init(&index);
	if (store_read_index(r->repo->dir, sha, &index) < 0)
		goto out; /* said; collected again */
	p = xcalloc(index.n ? index.n : 1, sizeof(*p));
	for (i = 0; i < index.n; i++) {
		struct lookup l = { 1, i, NULL };
		if (repo_load(r->repo, &index, &l, &p[n]) < 0) {
			profile_release(&p[n]);
			continue;
		}
		if (same_job(r, &p[n], here))
			n++;
		else
			profile_release(&p[n]);
	}
	if (n >= r->repeat) {
		for (i = 0; i < n; i++)
			add_profile(b, &p[i]);
		used = n;
	}
	for (i = 0; i < n; i++)
		profile_release(&p[i]);
out:
	free(p);
	pidx_release(&index);
	return used;
}

/* A revision's level for func: the median of its runs' medians; NAN when
 * it has none.  */
static double level(const struct point *p, const char *func, size_t *nruns)
{
	size_t i;

	*nruns = 0;
	for (i = 0; i < p->nf; i++)
		if (!strcmp(p->f[i].name, func)) {
			double *tmp = xcalloc(p->f[i].n, sizeof(*tmp)), m;
			memcpy(tmp, p->f[i].v, p->f[i].n * sizeof(*tmp));
			m = stats_median(tmp, p->f[i].n);
			free(tmp);
			*nruns = p->f[i].n;
			return m;
		}
	return NAN;
}

static int collect_point(struct runner *r, struct bisect *b, char (*commits)[41], size_t i,
			 struct bisect_result *out, const struct profile *here)
{
	size_t reused;
	int ret;

	b->cur = i;
	b->pt[i].tried = 1;
	if ((reused = reuse_registered(r, b, commits[i], here))) {
		if (r->progress)
			fprintf(stderr, "perun bisect: %.7s: %zu registered run%s of the job reused\n",
				commits[i], reused, reused == 1 ? "" : "s");
		out->reused++;
		return 0;
	}
	ret = runner_revision(r, commits[i], out->collected + out->reused, out->ncommits);
	out->collected++;
	return ret < 0 ? -1 : 0;
}

/* The function whose level rose most from point a to point z, or NULL.  */
static const char *steepest(const struct point *a, const struct point *z, double *ratio)
{
	const char *best = NULL;
	size_t i, n;

	*ratio = 0;
	for (i = 0; i < z->nf; i++) {
		double la = level(a, z->f[i].name, &n), lz = level(z, z->f[i].name, &n);
		if (!(la > 0) || !isfinite(lz) || lz / la <= *ratio)
			continue;
		*ratio = lz / la;
		best = z->f[i].name;
	}
	return best;
}

/* Among the collected points (in commit order), the pair around the largest
 * step up of func: the step detection first, and when it finds none on so
 * few points, the largest rise between neighbours of at least threshold.
 * 1 with *p < *q, 0 none, -1 out of memory.  */
static int find_step(const struct point *pt, size_t n, const char *func, double threshold,
		     size_t *p, size_t *q)
{
	size_t *idx = xcalloc(n, sizeof(*idx)), m = 0, i, ns = 0, nr;
	double *y = xcalloc(n, sizeof(*y)), *w = xcalloc(n, sizeof(*w)), best = 0;
	struct steps_opts so = { 0 };
	struct step *st = NULL;
	int ret = 0;

	for (i = 0; i < n; i++) {
		if (!pt[i].tried)
			continue;
		y[m] = level(&pt[i], func, &nr);
		w[m] = isfinite(y[m]) ? (double)nr : 0;
		if (!isfinite(y[m]))
			y[m] = 0;
		idx[m++] = i;
	}
	so.min_points = 2;
	so.threshold = threshold;
	if (steps_detect_opts(y, w, m, &so, &st, &ns, NULL) < 0) {
		ret = -1;
		goto out;
	}
	for (i = 0; i < ns; i++) {
		size_t a = st[i].start;
		if (!(st[i].rel > best))
			continue;
		while (a > 0 && w[a - 1] <= 0)
			a--;
		if (a == 0)
			continue;
		best = st[i].rel;
		*p = idx[a - 1];
		*q = idx[st[i].start];
		ret = 1;
	}
	if (ret)
		goto out;
	for (i = 0; i + 1 < m; i++) {
		size_t j = i + 1;
		if (w[i] <= 0)
			continue;
		while (j < m && w[j] <= 0)
			j++;
		if (j < m && y[i] > 0 && y[j] / y[i] - 1 >= threshold && y[j] / y[i] - 1 > best) {
			best = y[j] / y[i] - 1;
			*p = idx[i];
			*q = idx[j];
			ret = 1;
		}
	}
out:
	free(st);
	free(idx);
	free(y);
	free(w);
	return ret;
}

int run_bisect(struct runner *r, const char *good, const char *bad, const char *func,
	       size_t job, double threshold, struct bisect_result *out)
{
	char (*commits)[41] = NULL, (*range)[41] = NULL;
	struct bisect b = { NULL, 0 };
	struct profile here = { NULL };
	struct minor_version mv;
	size_t nr = 0, n, i, p = 0, q = 0, nruns;
	const struct run_job *jobs = r->jobs;
	size_t njobs = r->njobs;
	int ret = -1, f;

	memset(out, 0, sizeof(*out));
	if (job >= njobs)
		return pr_error("there is no job %zu: local.yml makes %zu", job + 1, njobs);
	if (vcs_range(r->repo->worktree, good, bad, &range, &nr) < 0)
		return -1;
	if (!nr) {
		free(range);
		return pr_error("no commit after %.7s up to %.7s: give the older revision first "
				"(perun bisect GOOD BAD)",
				good, bad);
	}
	if (vcs_minor_info(r->repo->worktree, range[0], &mv) < 0) {
		free(range);
		return -1;
	}
	f = mv.nparents >= 1 && !strcmp(mv.parents[0], good);
	minor_version_release(&mv);
	if (!f) {
		free(range);
		return pr_error("%.7s is not on the first-parent line of %.7s: bisect needs the "
				"older revision to be an ancestor of the newer one",
				good, bad);
	}
	n = nr + 1;
	commits = xcalloc(n, sizeof(*commits));
	snprintf(commits[0], 41, "%s", good);
	memcpy(commits + 1, range, nr * sizeof(*range));
	free(range);
	out->ncommits = n;
	b.pt = xcalloc(n, sizeof(*b.pt));
	r->jobs = jobs + job;
	r->njobs = 1;
	r->on_profile = on_profile;
	r->ctx = &b;
	here.root = json_object_new_object();
	json_object_object_add(here.root, "machine", machine_region(NULL));

	/* the ends; then a binary search led by the step the detection finds */
	if (collect_point(r, &b, commits, 0, out, &here) < 0 ||
	    collect_point(r, &b, commits, n - 1, out, &here) < 0)
		goto out;
	if (!func) {
		double ratio;
		func = steepest(&b.pt[0], &b.pt[n - 1], &ratio);
		if (!func || ratio - 1 < threshold) {
			pr_error("no function got slower by %.0f %% or more from %.7s to %.7s%s",
				 threshold * 100, good, bad,
				 func ? "" : " (no function was traced at both)");
			ret = 1;
			goto out;
		}
	}
	out->func = xstrdup(func);
	for (;;) {
		size_t mid, best = 0, k;
		int s = find_step(b.pt, n, func, threshold, &p, &q);
		if (s < 0)
			goto out;
		if (s == 0) {
			double la = level(&b.pt[0], func, &nruns), lb = level(&b.pt[n - 1], func, &nruns);
			pr_error("%s does not step up by %.0f %% or more from %.7s to %.7s (median %.0f "
				 "ns, then %.0f ns)",
				 func, threshold * 100, good, bad, la, lb);
			ret = 1;
			goto out;
		}
		if (q == p + 1)
			break;
		/* the untried commit nearest the middle; those that failed are skipped */
		mid = p + (q - p) / 2;
		for (k = p + 1; k < q; k++)
			if (!b.pt[k].tried &&
			    (!best || (k > mid ? k - mid : mid - k) < (best > mid ? best - mid : mid - best)))
				best = k;
		if (!best) {
			pr_error("the step of %s lies after %.7s and at or before %.7s, but no commit "
				 "between could be collected (said above)",
				 func, commits[p], commits[q]);
			ret = 1;
			goto out;
		}
		if (collect_point(r, &b, commits, best, out, &here) < 0)
			goto out;
	}
	snprintf(out->sha, sizeof(out->sha), "%s", commits[q]);
	out->before = level(&b.pt[p], func, &nruns);
	out->after = level(&b.pt[q], func, &nruns);
	ret = 0;
out:
	r->jobs = jobs;
	r->njobs = njobs;
	r->on_profile = NULL;
	r->ctx = NULL;
	for (i = 0; i < n && b.pt; i++) {
		size_t k;
		for (k = 0; k < b.pt[i].nf; k++) {
			free(b.pt[i].f[k].name);
			free(b.pt[i].f[k].v);
		}
		free(b.pt[i].f);
	}
	free(b.pt);
	free(commits);
	profile_release(&here);
	return ret;
}

void bisect_result_release(struct bisect_result *b)
{
	free(b->func);
	memset(b, 0, sizeof(*b));
}
