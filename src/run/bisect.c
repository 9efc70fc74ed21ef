/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun bisect: binary search for the first commit where perun check flags a
 * function as slower, collecting revisions through the runner (only the runs
 * a revision lacks) and comparing them with check's own comparison
 * (analysis/check-input.h), so that bisect names the commit check flags.  */
#include "config.h"

#define PR_FMT "perun bisect"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "analysis/check-input.h"
#include "analysis/check.h"
#include "analysis/postprocess.h"
#include "profile/job.h"
#include "profile/machine.h"
#include "profile/profile.h"
#include "run/run.h"
#include "store/repo.h"
#include "store/store.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* One commit of the range.  */
struct point {
	int tried;		/* collected, or tried to */
	int collected;		/* bisect collected runs of it */
	int reused;		/* its registered runs were enough (so far) */
	unsigned have;		/* registered runs of the job on this machine */
};

/* When perun check cannot decide between two revisions (the runs vary too
 * much), bisect collects --repeat more runs of each and asks again, up to
 * this many times --repeat: an undecided comparison taken for "no step"
 * would send the search past the step it looks for.  */
#define BISECT_MAX_REPEATS 3

/* The runner's (only) job: its command, arguments, workload, the trace
 * collector and the runner's postprocessors in order (the trace options are
 * not part of it).  */
static void runner_job(const struct runner *r, struct job *j)
{
	const struct run_job *rj = r->jobs;
	size_t i;

	j->collector = "trace";
	j->cmd = rj->cmd;
	j->args = rj->args ? rj->args : "";
	j->workload = rj->workload ? rj->workload : "";
	j->postprocessors[0] = '\0';
	for (i = 0; i < r->npost; i++)
		job_add_postprocessor(j, pp_profile_name(r->post[i].method));
}

/* Whether p is a run of the runner's job on this machine.  */
static int same_job(const struct runner *r, const struct profile *p, const struct profile *here)
{
	struct job want, have;

	runner_job(r, &want);
	job_from_profile(p, &have);
	return job_same(&want, &have) && machine_same(p, here);
}

/* How many registered runs of the job on this machine sha has.  */
static unsigned registered_runs(struct runner *r, const char *sha, const struct profile *here)
{
	struct pidx index;
	size_t i;
	unsigned n = 0;

	pidx_init(&index);
	if (store_read_index(r->repo->dir, sha, &index) < 0)
		goto out; /* said; collected again */
	for (i = 0; i < index.n; i++) {
		struct lookup l = { 1, i, NULL };
		struct profile p = { NULL };
		if (repo_load(r->repo, &index, &l, &p) == 0 && same_job(r, &p, here))
			n++;
		profile_release(&p);
	}
out:
	pidx_release(&index);
	return n;
}

/* Collects what the points idx[0..n) lack of want runs (in rounds when
 * there are several), after reading how many each has.  0, or -1 (a
 * signal).  */
static int collect_points(struct runner *r, struct point *pt, char (*commits)[41],
			  const size_t *idx, size_t n, unsigned want, struct bisect_result *out,
			  const struct profile *here)
{
	struct run_rev *v = xcalloc(n, sizeof(*v));
	size_t i, nv = 0;
	int ret = 0;

	for (i = 0; i < n; i++) {
		struct point *p = &pt[idx[i]];
		p->tried = 1;
		p->have = registered_runs(r, commits[idx[i]], here);
		if (p->have >= want) {
			if (p->reused || p->collected)
				continue;
			if (r->progress)
				fprintf(stderr, "perun bisect: %.7s: %u registered run%s of the job "
						"reused\n",
					commits[idx[i]], p->have, p->have == 1 ? "" : "s");
			p->reused = 1;
			out->reused++;
			continue;
		}
		if (p->have && !r->quiet)
			fprintf(stderr, "perun bisect: %.7s: %u registered run%s of the job reused, "
					"%u more to collect\n",
				commits[idx[i]], p->have, p->have == 1 ? "" : "s", want - p->have);
		snprintf(v[nv].sha, sizeof(v[nv].sha), "%s", commits[idx[i]]);
		v[nv++].runs = want - p->have;
		if (p->reused) { /* its runs were enough until check could not decide */
			p->reused = 0;
			out->reused--;
		}
		if (!p->collected)
			out->collected++;
		p->collected = 1;
	}
	if (nv && run_rounds(r, v, nv) < 0 && r->interrupted)
		ret = -1;
	for (i = 0; i < n; i++)
		pt[idx[i]].have = registered_runs(r, commits[idx[i]], here);
	out->runs_collected += r->registered;
	r->registered = 0;
	free(v);
	return ret;
}

/* Whether the job's finding f is about func (the last frame of its
 * context).  */
static int about(const struct check_finding *f, const char *func)
{
	return func ? !strcmp(f->function, func) : 1;
}

/* Whether finding x says more than y of a slowdown: a degradation first;
 * for a named function its inclusive time (the function and what it calls)
 * before its self time; then the larger ratio.  */
static int says_more(const struct check_finding *x, const struct check_finding *y, int named)
{
	int dx = x->verdict == CHECK_DEGRADATION, dy = y->verdict == CHECK_DEGRADATION;

	if (dx != dy)
		return dx;
	if (named && x->metric != y->metric)
		return x->metric == CHECK_INCLUSIVE;
	return x->ratio > y->ratio;
}

/* Whether cj is the comparison of the runner's job (its command, arguments
 * and workload: check compared only runs of one job).  */
static int is_runner_job(const struct runner *r, const struct check_job *cj)
{
	struct job want;

	runner_job(r, &want);
	return !strcmp(cj->cmd ? cj->cmd : "", want.cmd) &&
	       !strcmp(cj->args ? cj->args : "", want.args) &&
	       !strcmp(cj->workload ? cj->workload : "", want.workload);
}

/* The function of the last finding check_step() returned (bisect runs one
 * comparison at a time).  */
static char step_function[512];

/* perun check's comparison of commit a with commit b for the job: whether
 * it flags func (any function when NULL) as slower, and the finding about
 * func that says most (a degradation, else the largest rise) into *f (its
 * context and function copied into *func_out when asked).  1 flagged, 0
 * not, -1 no comparison (said).  */
static int check_step(const struct runner *r, const char *a, const char *b, const char *func,
		      const struct check_opts *base_opts, struct check_finding *f, char **func_out)
{
	struct check_input in;
	struct check_result res;
	struct check_opts o = *base_opts;
	const struct check_finding *best = NULL;
	size_t ji, i;
	int ret = -1;

	check_input_init(&in);
	memset(&res, 0, sizeof(res));
	memset(f, 0, sizeof(*f));
	if (check_input_compare(&in, a, b, &o, &res) < 0)
		goto out;
	for (ji = 0; ji < res.njobs; ji++) {
		const struct check_job *cj = &res.jobs[ji];
		if (!is_runner_job(r, cj))
			continue;
		for (i = 0; i < cj->nf; i++)
			if (about(&cj->f[i], func) && isfinite(cj->f[i].ratio) &&
			    (!best || says_more(&cj->f[i], best, func != NULL)))
				best = &cj->f[i];
	}
	ret = 0;
	if (best) {
		*f = *best;
		f->context = NULL;
		f->cause = NULL;
		f->why = best->why;
		/* the name lives in the context the result frees */
		snprintf(step_function, sizeof(step_function), "%s", best->function);
		f->function = step_function;
		if (func_out)
			*func_out = xstrdup(best->function);
		ret = best->verdict == CHECK_DEGRADATION;
	}
out:
	check_result_release(&res);
	check_input_release(&in);
	return ret;
}

/* perun check's comparison of points a and b (check_step), with r->repeat
 * more runs of each collected while check cannot decide (the runs vary
 * too much, too few runs), up to BISECT_MAX_REPEATS times r->repeat.
 * *undecided says whether it still could not.  1 flagged, 0 not, -1 no
 * comparison or a signal.  */
static int step_between(struct runner *r, struct point *pt, char (*commits)[41], size_t a,
			size_t b, const char *func, const struct check_opts *co,
			struct check_finding *f, char **func_out, struct bisect_result *out,
			const struct profile *here, int *undecided)
{
	unsigned want = r->repeat, most = BISECT_MAX_REPEATS * r->repeat;

	for (;;) {
		size_t idx[2];
		int s;
		if (func_out) {
			free(*func_out);
			*func_out = NULL;
		}
		s = check_step(r, commits[a], commits[b], func, co, f, func_out);
		*undecided = s == 0 && f->function && f->verdict == CHECK_UNDECIDED;
		if (!*undecided)
			return s;
		if (pt[a].have > want)
			want = pt[a].have;
		if (pt[b].have > want)
			want = pt[b].have;
		if (want >= most)
			return 0;
		want = want + r->repeat < most ? want + r->repeat : most;
		/* said under -q too: it costs runs the user did not ask for */
		fprintf(stderr, "perun bisect: %.7s -> %.7s: check cannot tell whether %s steps "
				"up (%+.1f %%, %s): %u runs of each\n",
			commits[a], commits[b], f->function, (f->ratio - 1) * 100,
			f->why ? f->why : "undecided", want);
		idx[0] = a;
		idx[1] = b;
		if (collect_points(r, pt, commits, idx, 2, want, out, here) < 0)
			return -1;
		if (pt[a].have < want || pt[b].have < want)
			return 0; /* a collect failed (said): decide with what there is */
	}
}

static void fill_result(struct bisect_result *out, const struct check_finding *f)
{
	out->before = f->base;
	out->after = f->target;
	out->ratio = f->ratio;
	out->metric = f->metric;
	out->threshold = f->threshold;
	out->nbase = f->nbase;
	out->ntarget = f->ntarget;
}

int run_bisect(struct runner *r, const char *good, const char *bad, const char *func,
	       size_t job, const struct check_opts *co, struct bisect_result *out)
{
	char (*commits)[41] = NULL, (*range)[41] = NULL;
	struct point *pt = NULL;
	struct profile here = { NULL };
	struct minor_version mv;
	struct check_finding f;
	struct check_finding left;
	size_t nr = 0, n, lo, hi, ends[2];
	int undecided = 0, left_open;
	const struct run_job *jobs = r->jobs;
	size_t njobs = r->njobs;
	char *chosen = NULL;
	int ret = -1, s;

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
	s = mv.nparents >= 1 && !strcmp(mv.parents[0], good);
	minor_version_release(&mv);
	if (!s) {
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
	pt = xcalloc(n, sizeof(*pt));
	r->jobs = jobs + job;
	r->njobs = 1;
	here.root = json_object_new_object();
	json_object_object_add(here.root, "machine", machine_region(NULL, r->machine));

	/* the ends, in rounds; then a binary search on what perun check says
	 * between the ends of the interval that holds the step */
	ends[0] = 0;
	ends[1] = n - 1;
	if (collect_points(r, pt, commits, ends, 2, r->repeat, out, &here) < 0)
		goto out;
	if (!pt[0].have || !pt[n - 1].have) {
		pr_error("%.7s has no run of the job to compare (its collect failed, said above)",
			 !pt[0].have ? good : bad);
		ret = 1;
		goto out;
	}
	s = step_between(r, pt, commits, 0, n - 1, func, co, &f, func ? NULL : &chosen, out, &here,
			 &undecided);
	if (s < 0)
		goto out;
	if (!func && chosen)
		func = chosen;
	if (s == 0) {
		if (!func)
			pr_error("perun check flags no function of the job as slower from %.7s to "
				 "%.7s (no function was traced at both)",
				 good, bad);
		else if (f.function)
			pr_error("perun check does not flag %s as slower from %.7s to %.7s: %s, %s "
				 "%.0f ns, then %.0f ns (%+.1f %%; threshold %.0f %%)%s%s%s",
				 func, good, bad, check_verdict_name(f.verdict),
				 check_metric_name(f.metric), f.base, f.target, (f.ratio - 1) * 100,
				 f.threshold * 100, f.why ? ": " : "", f.why ? f.why : "",
				 undecided ? ", even with as many runs as bisect collects" : "");
		else
			pr_error("%s has no calls at both %.7s and %.7s to compare", func, good, bad);
		ret = 1;
		goto out;
	}
	out->func = xstrdup(func);
	lo = 0;
	hi = n - 1;
	fill_result(out, &f);
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, best = 0, k;
		/* the untried commit nearest the middle; those that failed are skipped */
		for (k = lo + 1; k < hi; k++)
			if (!pt[k].tried &&
			    (!best || (k > mid ? k - mid : mid - k) < (best > mid ? best - mid : mid - best)))
				best = k;
		if (!best) {
			pr_error("perun check flags %s after %.7s and at or before %.7s, but no commit "
				 "between could be collected (said above)",
				 func, commits[lo], commits[hi]);
			ret = 1;
			goto out;
		}
		if (collect_points(r, pt, commits, &best, 1, r->repeat, out, &here) < 0)
			goto out;
		if (!pt[best].have)
			continue;
		s = step_between(r, pt, commits, lo, best, func, co, &f, NULL, out, &here,
				 &undecided);
		if (s < 0)
			goto out;
		if (s) {
			hi = best;
			fill_result(out, &f);
			continue;
		}
		left_open = undecided;
		left = f;
		s = step_between(r, pt, commits, best, hi, func, co, &f, NULL, out, &here,
				 &undecided);
		if (s < 0)
			goto out;
		if (!s) {
			pr_error("perun check flags %s neither from %.7s to %.7s nor from there to "
				 "%.7s: %s",
				 func, commits[lo], commits[best], commits[hi],
				 left_open || undecided
					 ? "it cannot tell on one side or both, even with as many runs "
					   "as bisect collects (the runs vary too much: collect on a "
					   "quieter host, or with a larger --repeat)"
					 : "the slowdown is spread over several commits, each below "
					   "the threshold");
			ret = 1;
			goto out;
		}
		if (left_open) {
			/* a step may hide there as well: bisect goes on with the one
			 * check flags, and says so */
			pr_warn("from %.7s to %.7s perun check cannot tell whether %s steps up "
				"(%+.1f %%) with %u and %u runs: an earlier step there may be missed",
				commits[lo], commits[best], func, (left.ratio - 1) * 100,
				pt[lo].have, pt[best].have);
			out->undecided++;
		}
		lo = best;
		fill_result(out, &f);
	}
	snprintf(out->sha, sizeof(out->sha), "%s", commits[hi]);
	ret = 0;
out:
	r->jobs = jobs;
	r->njobs = njobs;
	free(chosen);
	free(pt);
	free(commits);
	profile_release(&here);
	return ret;
}

void bisect_result_release(struct bisect_result *b)
{
	free(b->func);
	memset(b, 0, sizeof(*b));
}
