/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "history"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/robust.h"
#include "analysis/runscale.h"
#include "analysis/samples.h"
#include "profile/job.h"
#include "profile/machine.h"
#include "profile/profile.h"
#include "report/history.h"
#include "store/repo.h"
#include "store/store.h"
#include "util/log.h"
#include "vcs/vcs.h"

history_detect_fn history_detect = steps_detect_opts;

/* The calls of one function at one commit, pooled over its profiles, and
 * each profile's (run's) own median and p95.  */
struct pool {
	char *name;
	double *v;
	size_t n, alloc;
	double *run_median, *run_p95;
	size_t runs;
};

/* One profile (run) of a commit: per function its median call time and
 * the median of its self times (NAN: none), for the in-run control.  */
struct run_row {
	char **names;
	double *median, *self;
	double *median_se;	/* the median's standard error from its calls */
	size_t n;
};

struct commit_pool {
	struct pool *f;
	size_t n;
	struct run_row *runs;
	size_t nruns;
	size_t profiles;
	char first[41];
	struct strbuf incomplete;	/* profile_incomplete of each pooled profile */
};

static struct pool *pool_get(struct commit_pool *cp, const char *name)
{
	size_t i;

	for (i = 0; i < cp->n; i++)
		if (!strcmp(cp->f[i].name, name))
			return &cp->f[i];
	cp->f = xrealloc(cp->f, (cp->n + 1) * sizeof(*cp->f));
	memset(&cp->f[cp->n], 0, sizeof(cp->f[0]));
	cp->f[cp->n].name = xstrdup(name);
	return &cp->f[cp->n++];
}

static void pool_release(struct commit_pool *cp)
{
	size_t i;

	for (i = 0; i < cp->n; i++) {
		free(cp->f[i].name);
		free(cp->f[i].v);
		free(cp->f[i].run_median);
		free(cp->f[i].run_p95);
	}
	free(cp->f);
	for (i = 0; i < cp->nruns; i++) {
		size_t j;
		for (j = 0; j < cp->runs[i].n; j++)
			free(cp->runs[i].names[j]);
		free(cp->runs[i].names);
		free(cp->runs[i].median);
		free(cp->runs[i].self);
		free(cp->runs[i].median_se);
	}
	free(cp->runs);
	strbuf_release(&cp->incomplete);
	memset(cp, 0, sizeof(*cp));
}

/* Whether p belongs to the series: the fields of its job given must match
 * (its postprocessors are not compared); those not given are taken from the
 * first (the newest) profile that matches.  */
static int matches(struct history *h, const struct profile *p)
{
	struct job j;
	char *machine;

	job_from_profile(p, &j);
	if ((h->collector && strcmp(j.collector, h->collector)) ||
	    (h->cmd && strcmp(j.cmd, h->cmd)) || (h->args && strcmp(j.args, h->args)) ||
	    (h->workload && strcmp(j.workload, h->workload)))
		return 0;
	/* one machine: that of the newest profile with a machine region */
	machine = machine_describe(p);
	if (!h->any_machine && *machine && h->machine && *h->machine &&
	    strcmp(machine, h->machine)) {
		h->skipped_machine++;
		free(machine);
		return 0;
	}
	if (!h->any_machine && *machine && (!h->machine || !*h->machine)) {
		free(h->machine);
		h->machine = machine;
	} else {
		free(machine);
	}
	if (!h->collector)
		h->collector = xstrdup(j.collector);
	if (!h->cmd)
		h->cmd = xstrdup(j.cmd);
	if (!h->args)
		h->args = xstrdup(j.args);
	if (!h->workload)
		h->workload = xstrdup(j.workload);
	return 1;
}

static int cmp_double(const void *a, const void *b);
static double quantile_se(const double *v, size_t n, double q, const double *runs, size_t nruns);

/* A run's row: each function's median (with its standard error from the
 * calls) and median self time.  */
static void run_row_fill(struct run_row *row, const struct func_table *t)
{
	double *tmp = xmalloc((t->n ? 1 : 1) * sizeof(*tmp));
	size_t j, k, m;

	row->n = t->n;
	row->names = xcalloc(t->n ? t->n : 1, sizeof(*row->names));
	row->median = xcalloc(t->n ? t->n : 1, sizeof(double));
	row->self = xcalloc(t->n ? t->n : 1, sizeof(double));
	row->median_se = xcalloc(t->n ? t->n : 1, sizeof(double));
	for (j = 0; j < t->n; j++) {
		const struct func_samples *f = &t->f[j];
		row->names[j] = xstrdup(f->uid);
		row->median[j] = f->median;
		tmp = xrealloc(tmp, (f->n ? f->n : 1) * sizeof(*tmp));
		for (k = 0, m = 0; k < f->n; k++)
			if (isfinite(f->amount[k]))
				tmp[m++] = f->amount[k];
		row->median_se[j] = NAN;
		if (m && !f->binned) {
			qsort(tmp, m, sizeof(*tmp), cmp_double);
			row->median_se[j] = quantile_se(tmp, m, 0.5, NULL, 0);
		}
		for (k = 0, m = 0; k < f->n; k++)
			if (f->exclusive && isfinite(f->exclusive[k]))
				tmp[m++] = f->exclusive[k];
		if (m && !f->binned) {
			qsort(tmp, m, sizeof(*tmp), cmp_double);
			row->self[j] = stats_quantile_sorted(tmp, m, 0.5);
		} else {
			row->self[j] = NAN;
		}
	}
	free(tmp);
}

/* Pools the matching profiles of one commit; 0 with cp->profiles 0 when none.  */
static int pool_commit(struct repo *r, struct history *h, const char *sha, struct commit_pool *cp)
{
	struct pidx index;
	size_t i, j, k;
	int ret = 0;

	if (store_read_index(r->dir, sha, &index) < 0)
		return -1;
	for (i = 0; i < index.n && ret == 0; i++) {
		struct strbuf json = STRBUF_INIT;
		struct profile p = {0};
		struct func_table t;
		char hex[SHA1_HEXSZ + 1];
		repo_entry_hex(&index, i, hex);
		if (store_read_object(r->dir, hex, &json, NULL) < 0 ||
		    profile_read(&p, json.buf, json.len, hex) < 0) {
			ret = -1;
		} else if (matches(h, &p)) {
			char pre[16];
			if (!cp->profiles)
				snprintf(cp->first, sizeof(cp->first), "%s", hex);
			snprintf(pre, sizeof(pre), "%.7s: ", hex);
			profile_incomplete(&p, pre, &cp->incomplete);
			samples_read(&p, NULL, &t);
			cp->runs = xrealloc(cp->runs, (cp->nruns + 1) * sizeof(*cp->runs));
			run_row_fill(&cp->runs[cp->nruns++], &t);
			for (j = 0; j < t.n; j++) {
				struct pool *pl = pool_get(cp, t.f[j].uid);
				if (pl->n + t.f[j].n > pl->alloc) {
					pl->alloc = 2 * (pl->n + t.f[j].n);
					pl->v = xrealloc(pl->v, pl->alloc * sizeof(*pl->v));
				}
				for (k = 0; k < t.f[j].n; k++)
					pl->v[pl->n++] = t.f[j].amount[k];
				pl->run_median = xrealloc(pl->run_median,
							  (pl->runs + 1) * sizeof(double));
				pl->run_p95 =
				    xrealloc(pl->run_p95, (pl->runs + 1) * sizeof(double));
				pl->run_median[pl->runs] = t.f[j].median;
				pl->run_p95[pl->runs++] = t.f[j].p95;
			}
			samples_release(&t);
			cp->profiles++;
		}
		profile_release(&p);
		strbuf_release(&json);
	}
	pidx_release(&index);
	return ret;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The standard error of the q-quantile of sorted v[0..n): half the span
 * of the order statistics one standard deviation of the binomial rank
 * away (distribution-free); with runs >= 2, at least the standard error of
 * the mean of the runs' own quantiles, since a run's state moves all its
 * calls.  */
static double quantile_se(const double *v, size_t n, double q, const double *runs, size_t nruns)
{
	double sd = sqrt((double)n * q * (1 - q)), se, lo, hi;

	lo = stats_quantile_sorted(v, n, (q * (double)n - sd) / (double)n);
	hi = stats_quantile_sorted(v, n, (q * (double)n + sd) / (double)n);
	se = (hi - lo) / 2;
	if (nruns >= 2) {
		double m = 0, ss = 0, r;
		size_t i;
		for (i = 0; i < nruns; i++)
			m += runs[i];
		m /= (double)nruns;
		for (i = 0; i < nruns; i++)
			ss += (runs[i] - m) * (runs[i] - m);
		r = sqrt(ss / (double)(nruns - 1) / (double)nruns);
		se = r > se ? r : se;
	}
	return se;
}

static struct history_series *series_get(struct history *h, const char *name)
{
	size_t i;

	for (i = 0; i < h->ns; i++)
		if (!strcmp(h->s[i].name, name))
			return &h->s[i];
	h->s = xrealloc(h->s, (h->ns + 1) * sizeof(*h->s));
	memset(&h->s[h->ns], 0, sizeof(h->s[0]));
	h->s[h->ns].name = xstrdup(name);
	return &h->s[h->ns++];
}

static int cmp_series(const void *a, const void *b)
{
	return strcmp(((const struct history_series *)a)->name,
		      ((const struct history_series *)b)->name);
}

/* The commits gathered newest first, with their pools.  */
struct gathered {
	struct history_commit c;
	struct commit_pool pool;
};

/* The in-run control (analysis/runscale.h): each run's speed from its
 * functions' median self times (told again within groups of runs of like
 * speed), and per series and commit the median of its runs' medians with
 * their run's speed taken out (norm) and that median's standard error
 * (norm_noise: the runs' robust spread, at least the pooled median's own
 * from its calls).  Runs whose functions disagreed weigh less
 * (runscale_weights(), across groups): the point is then the weighted mean
 * of the logs.  Without a control norm is the median.  */
static void normalise(struct history *h, struct gathered *g, size_t ng)
{
	size_t nr = 0, r, i, j, k, q;
	double *x, *scale, *v, *tmp, *wr, *wv, *se, unit = 0;
	int *group;

	for (i = 0; i < ng; i++)
		nr += g[i].pool.nruns;
	x = xmalloc((nr * h->ns > 0 ? nr * h->ns : 1) * sizeof(*x));
	scale = xcalloc(nr ? nr : 1, sizeof(*scale));
	v = xmalloc((nr ? nr : 1) * sizeof(*v));
	tmp = xmalloc((nr ? nr : 1) * sizeof(*tmp));
	for (k = 0; k < nr * h->ns; k++)
		x[k] = NAN;
	for (i = 0, r = 0; i < ng; i++)
		for (q = 0; q < g[i].pool.nruns; q++, r++) {
			const struct run_row *row = &g[i].pool.runs[q];
			for (j = 0; j < row->n; j++) {
				const struct history_series *s = history_find(h, row->names[j]);
				if (s && row->self[j] > 0)
					x[r * h->ns + (size_t)(s - h->s)] = log(row->self[j]);
			}
		}
	h->control = runscale_estimate(x, nr, h->ns, scale);
	wr = xmalloc((nr ? nr : 1) * sizeof(*wr));
	wv = xmalloc((nr ? nr : 1) * sizeof(*wv));
	se = xmalloc((nr ? nr : 1) * sizeof(*se));
	group = xmalloc((nr ? nr : 1) * sizeof(*group));
	if (h->control) {
		size_t ngr = runscale_groups(scale, nr, group);
		runscale_group_scale(x, nr, h->ns, group, ngr, scale);
		h->runs_weighed = runscale_weights(x, nr, h->ns, scale, group, ngr, 1, wr, &unit);
	} else
		for (r = 0; r < nr; r++)
			wr[r] = 1;
	for (k = 0; k < h->ns; k++) {
		struct history_series *s = &h->s[k];
		s->norm = xcalloc(h->nc ? h->nc : 1, sizeof(double));
		s->norm_noise = xcalloc(h->nc ? h->nc : 1, sizeof(double));
		for (i = 0, r = 0; i < h->nc; i++) {
			const struct commit_pool *cp = &g[h->nc - 1 - i].pool;
			size_t n = 0, base = 0;
			double m, sd = 0;
			for (q = 0; q < h->nc - 1 - i; q++)
				base += g[q].pool.nruns;
			r = base; /* x's rows run newest commit first */
			for (q = 0; q < cp->nruns; q++)
				for (j = 0; j < cp->runs[q].n; j++)
					if (!strcmp(cp->runs[q].names[j], s->name) &&
					    isfinite(cp->runs[q].median[j]) && cp->runs[q].median[j] > 0) {
						wv[n] = wr[r + q];
						se[n] = cp->runs[q].median_se[j] / cp->runs[q].median[j];
						v[n++] = cp->runs[q].median[j] / exp(scale[r + q]);
					}
			if (!h->control || !n) {
				s->norm[i] = s->median[i];
				s->norm_noise[i] = s->median_noise[i];
				continue;
			}
			for (q = 0; q < n && wv[q] == 1; q++)
				;
			if (q < n) {
				/* a run whose functions disagreed (runscale_weights())
				 * weighs less: the weighted mean of the logs, its error
				 * the runs' bound over their weight, at least that of
				 * their medians' own from their calls, so weighed (not
				 * the pooled median's: the calls of the runs that
				 * weigh little would set it) */
				double sw = 0, sl = 0, sc = 0, e;
				for (q = 0; q < n; q++) {
					sw += wv[q];
					sl += wv[q] * log(v[q]);
					if (isfinite(se[q]))
						sc += wv[q] * wv[q] * se[q] * se[q];
				}
				e = sqrt(unit / sw);
				if (sqrt(sc) / sw > e)
					e = sqrt(sc) / sw;
				s->norm[i] = exp(sl / sw);
				s->norm_noise[i] = s->norm[i] * e;
				continue;
			}
			qsort(v, n, sizeof(*v), cmp_double);
			m = stats_quantile_sorted(v, n, 0.5);
			/* the median's error from the runs' spread about it, robust
			 * (1.4826 MAD / sqrt(n)) as the median itself is: one run
			 * that met a busy spell neither moves the point nor makes
			 * its error larger than its value */
			if (n >= 2) {
				for (q = 0; q < n; q++)
					tmp[q] = fabs(v[q] - m);
				qsort(tmp, n, sizeof(*tmp), cmp_double);
				sd = 1.4826 * stats_quantile_sorted(tmp, n, 0.5) / sqrt((double)n);
			}
			/* floored by the pooled median's own error from its calls,
			 * not by the spread of the raw runs' medians: that spread is
			 * the host's speed the control took out */
			s->norm[i] = m;
			s->norm_noise[i] = sd;
			if (isfinite(s->median_calls_noise[i]) && s->median[i] > 0 &&
			    s->median_calls_noise[i] * m / s->median[i] > sd)
				s->norm_noise[i] = s->median_calls_noise[i] * m / s->median[i];
		}
	}
	free(x);
	free(scale);
	free(v);
	free(tmp);
	free(wr);
	free(wv);
	free(se);
	free(group);
}

int history_build(struct repo *r, const char *rev, size_t max, const struct history_filter *f,
		  struct history *h)
{
	struct gathered *g = NULL;
	size_t ng = 0, walked = 0, i, j, k;
	char sha[41];
	int ret = -1;

	memset(h, 0, sizeof(*h));
	if (f) {
		h->any_machine = f->any_machine;
		h->collector = f->collector ? xstrdup(f->collector) : NULL;
		h->cmd = f->cmd ? xstrdup(f->cmd) : NULL;
		h->args = f->args ? xstrdup(f->args) : NULL;
		h->workload = f->workload ? xstrdup(f->workload) : NULL;
	}
	if (vcs_massage(r->worktree, rev, sha) < 0)
		goto out;
	while (sha[0] && (max == 0 || walked < max)) {
		struct minor_version mv;
		struct commit_pool cp = {NULL, 0, NULL, 0, 0, "", STRBUF_INIT};
		if (vcs_minor_info(r->worktree, sha, &mv) < 0)
			goto out;
		walked++;
		if (pool_commit(r, h, sha, &cp) < 0) {
			pool_release(&cp);
			minor_version_release(&mv);
			goto out;
		}
		if (cp.profiles) {
			g = xrealloc(g, (ng + 1) * sizeof(*g));
			memset(&g[ng], 0, sizeof(g[0]));
			snprintf(g[ng].c.sha, sizeof(g[ng].c.sha), "%s", sha);
			g[ng].c.date = mv.date;
			g[ng].c.subject = xstrdup(mv.subject ? mv.subject : "");
			g[ng].c.profiles = cp.profiles;
			memcpy(g[ng].c.first, cp.first, sizeof(cp.first));
			g[ng].c.incomplete = cp.incomplete.len ? strbuf_detach(&cp.incomplete) : NULL;
			g[ng].pool = cp;
			ng++;
		} else {
			pool_release(&cp);
		}
		/* first parents only: a merged branch's own commits are not this line */
		if (mv.nparents)
			snprintf(sha, sizeof(sha), "%s", mv.parents[0]);
		else
			sha[0] = '\0';
		minor_version_release(&mv);
	}
	/* oldest first */
	h->nc = ng;
	h->c = xcalloc(ng ? ng : 1, sizeof(*h->c));
	for (i = 0; i < ng; i++)
		h->c[i] = g[ng - 1 - i].c;
	for (i = 0; i < ng; i++)
		for (j = 0; j < g[ng - 1 - i].pool.n; j++)
			series_get(h, g[ng - 1 - i].pool.f[j].name);
	if (h->ns)
		qsort(h->s, h->ns, sizeof(*h->s), cmp_series);
	for (k = 0; k < h->ns; k++) {
		struct history_series *s = &h->s[k];
		s->median = xcalloc(ng ? ng : 1, sizeof(double));
		s->p95 = xcalloc(ng ? ng : 1, sizeof(double));
		s->calls = xcalloc(ng ? ng : 1, sizeof(double));
		s->median_noise = xcalloc(ng ? ng : 1, sizeof(double));
		s->p95_noise = xcalloc(ng ? ng : 1, sizeof(double));
		s->median_calls_noise = xcalloc(ng ? ng : 1, sizeof(double));
		for (i = 0; i < ng; i++) {
			struct commit_pool *cp = &g[ng - 1 - i].pool;
			struct pool *pl = NULL;
			for (j = 0; j < cp->n; j++)
				if (!strcmp(cp->f[j].name, s->name))
					pl = &cp->f[j];
			if (!pl || !pl->n) {
				s->median[i] = s->p95[i] = s->calls[i] = NAN;
				s->median_noise[i] = s->p95_noise[i] = NAN;
				s->median_calls_noise[i] = NAN;
				continue;
			}
			qsort(pl->v, pl->n, sizeof(double), cmp_double);
			s->median[i] = stats_quantile_sorted(pl->v, pl->n, 0.5);
			s->p95[i] = stats_quantile_sorted(pl->v, pl->n, 0.95);
			s->median_noise[i] = quantile_se(pl->v, pl->n, 0.5, pl->run_median, pl->runs);
			s->median_calls_noise[i] = quantile_se(pl->v, pl->n, 0.5, NULL, 0);
			s->p95_noise[i] = quantile_se(pl->v, pl->n, 0.95, pl->run_p95, pl->runs);
			s->calls[i] = (double)pl->n / (double)cp->profiles;
		}
	}
	normalise(h, g, ng);
	ret = 0;
out:
	for (i = 0; i < ng; i++)
		pool_release(&g[i].pool);
	if (ret < 0)
		for (i = 0; i < ng; i++) {
			free(g[i].c.subject);
			free(g[i].c.incomplete);
		}
	free(g);
	return ret;
}

static int detect_into(const double *y, const double *noise, int floor_only, size_t n,
		       const struct steps_opts *opts, struct history_step **out, size_t *nout)
{
	struct steps_opts o;
	struct step *st = NULL;
	size_t ns = 0, i, nw = 0;
	double *w = xcalloc(n ? n : 1, sizeof(*w)), *tmp = xmalloc((n ? n : 1) * sizeof(*tmp));
	double *e = xcalloc(n ? n : 1, sizeof(*e)), wmed;

	if (opts)
		o = *opts;
	else
		memset(&o, 0, sizeof(o));
	o.noise = noise ? e : NULL;
	o.noise_floor_only = floor_only;
	free(*out);
	*out = NULL;
	*nout = 0;
	/* each point weighs as the inverse of its own noise (asv's weights), at
	 * most as a point known to 1 %: a noisy commit moves the fit, and the
	 * floor of the criterion, by its own share only; the detector is told
	 * that noise too */
	for (i = 0; i < n; i++) {
		double lo = 0.01 * fabs(y[i]), ei = noise && isfinite(noise[i]) ? noise[i] : 0;
		e[i] = NAN; /* not measured */
		if (!isfinite(y[i]))
			continue;
		if (ei > 0)
			e[i] = ei > lo ? ei : lo;
		ei = ei > lo ? ei : lo;
		w[i] = ei > 0 ? 1 / ei : 0;
		if (w[i] > 0)
			tmp[nw++] = w[i];
	}
	if (nw) {
		qsort(tmp, nw, sizeof(*tmp), cmp_double);
		wmed = stats_quantile_sorted(tmp, nw, 0.5);
		for (i = 0; i < n; i++)
			w[i] = w[i] > 0 ? w[i] / wmed : isfinite(y[i]) ? 1 : 0;
	} else {
		for (i = 0; i < n; i++)
			w[i] = 1;
	}
	free(tmp);
	if (history_detect(y, w, n, &o, &st, &ns, NULL) < 0) {
		free(w);
		free(e);
		return -1;
	}
	free(w);
	free(e);
	*out = xcalloc(ns ? ns : 1, sizeof(**out));
	for (i = 0; i < ns; i++) {
		(*out)[i].index = st[i].start;
		(*out)[i].before = st[i].before;
		(*out)[i].after = st[i].after;
		(*out)[i].rel = st[i].rel;
	}
	*nout = ns;
	free(st);
	return 0;
}

int history_steps(struct history *h, const struct steps_opts *opts)
{
	size_t k;

	for (k = 0; k < h->ns; k++) {
		struct history_series *s = &h->s[k];
		const double *y = h->control ? s->norm : s->median;
		const double *noise = h->control ? s->norm_noise : s->median_noise;
		/* the p95's noise from 3 runs' tails is too rough to take as
		 * known: it floors the criterion only */
		if (detect_into(y, noise, 0, h->nc, opts, &s->steps, &s->nsteps) < 0 ||
		    detect_into(s->p95, s->p95_noise, 1, h->nc, opts, &s->p95_steps,
				&s->np95_steps) < 0)
			return -1;
	}
	return 0;
}

void history_release(struct history *h)
{
	size_t i;

	for (i = 0; i < h->nc; i++) {
		free(h->c[i].subject);
		free(h->c[i].incomplete);
	}
	free(h->c);
	for (i = 0; i < h->ns; i++) {
		free(h->s[i].name);
		free(h->s[i].median);
		free(h->s[i].p95);
		free(h->s[i].calls);
		free(h->s[i].median_noise);
		free(h->s[i].median_calls_noise);
		free(h->s[i].p95_noise);
		free(h->s[i].norm);
		free(h->s[i].norm_noise);
		free(h->s[i].steps);
		free(h->s[i].p95_steps);
	}
	free(h->s);
	free(h->collector);
	free(h->cmd);
	free(h->args);
	free(h->workload);
	free(h->machine);
	memset(h, 0, sizeof(*h));
}

const struct history_series *history_find(const struct history *h, const char *name)
{
	size_t i;

	for (i = 0; i < h->ns; i++)
		if (!strcmp(h->s[i].name, name))
			return &h->s[i];
	return NULL;
}

static void num(struct strbuf *sb, double v)
{
	if (isfinite(v))
		strbuf_addf(sb, "%.17g", v);
	else
		strbuf_addstr(sb, "null");
}

static void array(struct strbuf *sb, const char *key, const double *v, size_t n)
{
	size_t i;

	strbuf_addf(sb, "\"%s\":[", key);
	for (i = 0; i < n; i++) {
		if (i)
			strbuf_addch(sb, ',');
		num(sb, v[i]);
	}
	strbuf_addch(sb, ']');
}

static void steps_json(const struct history *h, const struct history_step *steps, size_t n,
		       struct strbuf *out)
{
	size_t i;

	strbuf_addch(out, '[');
	for (i = 0; i < n; i++) {
		const struct history_step *st = &steps[i];
		strbuf_addf(out, "%s{\"index\":%zu,\"commit\":\"%s\",\"before\":", i ? "," : "",
			    st->index, h->c[st->index].sha);
		num(out, st->before);
		strbuf_addstr(out, ",\"after\":");
		num(out, st->after);
		strbuf_addstr(out, ",\"rel\":");
		num(out, st->rel);
		strbuf_addch(out, '}');
	}
	strbuf_addch(out, ']');
}

void history_series_json(const struct history *h, const struct history_series *s,
			 struct strbuf *out)
{
	strbuf_addstr(out, "{\"function\":");
	strbuf_add_json_str(out, s->name);
	strbuf_addch(out, ',');
	array(out, "median", s->median, h->nc);
	strbuf_addch(out, ',');
	array(out, "p95", s->p95, h->nc);
	strbuf_addch(out, ',');
	array(out, "calls", s->calls, h->nc);
	if (h->control) {
		strbuf_addch(out, ',');
		array(out, "normalised", s->norm, h->nc);
		strbuf_addch(out, ',');
		array(out, "normalised_noise", s->norm_noise, h->nc);
	}
	strbuf_addf(out, ",\"steps_of\":\"%s\"", h->control ? "normalised" : "median");
	strbuf_addstr(out, ",\"steps\":");
	steps_json(h, s->steps, s->nsteps, out);
	strbuf_addstr(out, ",\"p95_steps\":");
	steps_json(h, s->p95_steps, s->np95_steps, out);
	strbuf_addch(out, '}');
}

void history_to_json(const struct history *h, const char *only, struct strbuf *out)
{
	size_t i, k = 0;

	strbuf_addstr(out, "{\"collector\":");
	strbuf_add_json_str(out, h->collector ? h->collector : "");
	strbuf_addstr(out, ",\"cmd\":");
	strbuf_add_json_str(out, h->cmd ? h->cmd : "");
	strbuf_addstr(out, ",\"args\":");
	strbuf_add_json_str(out, h->args ? h->args : "");
	strbuf_addstr(out, ",\"workload\":");
	strbuf_add_json_str(out, h->workload ? h->workload : "");
	strbuf_addstr(out, ",\"machine\":");
	strbuf_add_json_str(out, h->machine ? h->machine : "");
	strbuf_addf(out, ",\"skipped_other_machine\":%zu", h->skipped_machine);
	strbuf_addf(out, ",\"control\":%zu,\"runs_weighed\":%zu", h->control, h->runs_weighed);
	strbuf_addstr(out, ",\"commits\":[");
	for (i = 0; i < h->nc; i++) {
		strbuf_addf(out, "%s{\"sha\":\"%s\",\"date\":%lld,\"profiles\":%zu,\"subject\":",
			    i ? "," : "", h->c[i].sha, (long long)h->c[i].date, h->c[i].profiles);
		strbuf_add_json_str(out, h->c[i].subject);
		if (h->c[i].incomplete) {
			strbuf_addstr(out, ",\"incomplete\":");
			strbuf_add_json_str(out, h->c[i].incomplete);
		}
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "],\"series\":[");
	for (i = 0; i < h->ns; i++) {
		if (only && strcmp(only, h->s[i].name))
			continue;
		if (k++)
			strbuf_addch(out, ',');
		history_series_json(h, &h->s[i], out);
	}
	strbuf_addstr(out, "]}\n");
}
