/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The two sides of perun check and its thresholds, loaded from profile
 * files or from the store, then compared.  */
#include "config.h"

#define PR_FMT "perun check"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check-input.h"
#include "profile/job.h"
#include "profile/machine.h"
#include "profile/profile.h"
#include "store/localyml.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

void check_side_release(struct check_side *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->labels[i]);
		profile_release(&s->p[i]);
	}
	free(s->labels);
	free(s->p);
	memset(s, 0, sizeof(*s));
}

const char *check_side_name(const struct check_side *s)
{
	return s->sha[0] ? s->sha : s->labels[0];
}

static void side_push(struct check_side *s, struct profile *p, char *label)
{
	s->p = xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
	s->labels = xrealloc(s->labels, (s->n + 1) * sizeof(*s->labels));
	s->p[s->n] = *p;
	s->labels[s->n++] = label;
}

/* The registered profiles of sha; 0 with s->n = 0 when there are none.  */
static int side_load_minor(const struct repo *r, const char *sha, struct check_side *s)
{
	struct pidx index;
	size_t i;
	int ret = -1;

	memset(s, 0, sizeof(*s));
	snprintf(s->sha, sizeof(s->sha), "%s", sha);
	pidx_init(&index);
	if (store_read_index(r->dir, sha, &index) < 0)
		goto out;
	for (i = 0; i < index.n; i++) {
		struct lookup l = {1, i, NULL};
		struct profile p = {NULL};
		if (repo_load(r, &index, &l, &p) < 0)
			goto out;
		side_push(s, &p, xstrfmt("%.7s:%zu@i", sha, i));
	}
	ret = 0;
out:
	pidx_release(&index);
	return ret;
}

struct find_base {
	const struct repo *r;
	const struct check_side *target;
	struct check_side *base;
	int any_machine, found, failed;
	size_t other_machine; /* ancestors passed over: their runs ran elsewhere */
};

static int find_base_one(void *ctx, const struct minor_version *mv)
{
	struct find_base *f = ctx;
	size_t i, j;
	int elsewhere = 0;

	if (!strcmp(mv->sha, f->target->sha))
		return 0;
	if (side_load_minor(f->r, mv->sha, f->base) < 0) {
		f->failed = 1;
		return 1;
	}
	for (i = 0; i < f->base->n; i++)
		for (j = 0; j < f->target->n; j++)
			if (job_same_profiles(&f->base->p[i], &f->target->p[j])) {
				if (f->any_machine ||
				    machine_same(&f->base->p[i], &f->target->p[j])) {
					f->found = 1;
					return 1;
				}
				elsewhere = 1;
			}
	f->other_machine += elsewhere;
	check_side_release(f->base);
	return 0;
}

/* Whether arg is a comma-separated list of existing files.  */
static int file_list(const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL, *f;
	int all = strchr(arg, ',') != NULL;

	for (f = strtok_r(copy, ",", &save); f && all; f = strtok_r(NULL, ",", &save))
		all = fs_exists(f);
	free(copy);
	return all;
}

/* A side from an argument: a profile file, files separated by commas (one
 * run each), or a revision.  */
static int side_from_arg(struct check_input *in, const char *arg, struct check_side *s)
{
	struct profile p = {NULL};
	char sha[41];

	memset(s, 0, sizeof(*s));
	if (fs_exists(arg) || file_list(arg)) {
		char *copy = xstrdup(arg), *save = NULL, *f;
		for (f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
			memset(&p, 0, sizeof(p));
			if (profile_load(&p, f) < 0) {
				profile_release(&p);
				free(copy);
				return -1;
			}
			side_push(s, &p, xstrdup(f));
		}
		free(copy);
		return 0;
	}
	if (!in->have_repo) {
		if (repo_find(&in->repo) < 0)
			return -1;
		in->have_repo = 1;
	}
	if (vcs_massage(in->repo.worktree, arg, sha) < 0)
		return -1;
	return side_load_minor(&in->repo, sha, s);
}

/* The nearest ancestor of the target with runs of one of its jobs.  */
static int find_base(struct check_input *in, int any_machine)
{
	struct find_base fb = {&in->repo, &in->target, &in->base, any_machine, 0, 0, 0};

	if (vcs_walk(in->repo.worktree, in->target.sha, 1000, find_base_one, &fb) < 0 || fb.failed)
		return -1;
	if (fb.other_machine)
		pr_warn("passed over %zu ancestor%s whose runs of these jobs ran on another "
			"machine (--any-machine compares them)",
			fb.other_machine, fb.other_machine == 1 ? "" : "s");
	if (!fb.found)
		return pr_error("no ancestor of %.7s has runs of the same collector, command, "
				"arguments and workload%s: name a BASELINE",
				in->target.sha, any_machine ? "" : " on this machine");
	return 0;
}

/* regressions_thresholds of .perun/local.yml, when there is a repository.  */
static int load_thresholds(struct check_input *in)
{
	char **re = NULL, *path;
	double *thr = NULL;
	size_t i, n = 0;
	int ret;

	if (!in->have_repo) {
		char *dir = repo_locate();
		if (!dir)
			return 0;
		free(dir);
		if (repo_find(&in->repo) < 0)
			return -1;
		in->have_repo = 1;
	}
	path = xstrfmt("%s/local.yml", in->repo.dir);
	ret = config_read_thresholds(path, &re, &thr, &n);
	free(path);
	if (ret < 0)
		return -1;
	in->thresholds = xcalloc(n ? n : 1, sizeof(*in->thresholds));
	in->nthresholds = n;
	for (i = 0; i < n; i++) {
		in->thresholds[i].regex = re[i];
		in->thresholds[i].threshold = thr[i];
	}
	free(re);
	free(thr);
	return 0;
}

void check_input_init(struct check_input *in)
{
	memset(in, 0, sizeof(*in));
	in->repo.lock_fd = -1;
}

void check_input_release(struct check_input *in)
{
	size_t k;

	for (k = 0; k < in->nthresholds; k++)
		free(in->thresholds[k].regex);
	free(in->thresholds);
	check_side_release(&in->base);
	check_side_release(&in->target);
	if (in->have_repo)
		repo_release(&in->repo);
	check_input_init(in);
}

int check_input_load(struct check_input *in, const char *base_arg, const char *target_arg,
		     struct check_opts *o)
{
	if (side_from_arg(in, target_arg ? target_arg : "HEAD", &in->target) < 0)
		return -1;
	if (!in->target.n)
		return pr_error("no profiles registered for %.7s: collect and 'perun add' some "
				"first",
				in->target.sha);
	if (base_arg ? side_from_arg(in, base_arg, &in->base) < 0
		     : find_base(in, o->any_machine) < 0)
		return -1;
	if (load_thresholds(in) < 0)
		return -1;
	o->thresholds = in->thresholds;
	o->nthresholds = in->nthresholds;
	/* two single files are compared whatever their jobs */
	if (in->base.n == 1 && in->target.n == 1 && !in->base.sha[0] && !in->target.sha[0] &&
	    !job_same_profiles(&in->base.p[0], &in->target.p[0])) {
		pr_warn("%s and %s are runs of different jobs: compared anyway", in->base.labels[0],
			in->target.labels[0]);
		o->any_job = 1;
	}
	return 0;
}

int check_input_compare(struct check_input *in, const char *base_arg, const char *target_arg,
			struct check_opts *o, struct check_result *res)
{
	const struct check_side *b = &in->base, *t = &in->target;
	size_t k;

	if (check_input_load(in, base_arg, target_arg, o) < 0)
		return -1;
	if (check_compare(b->p, (const char *const *)b->labels, b->n, t->p,
			  (const char *const *)t->labels, t->n, o, res) < 0)
		return -1;
	if (check_method_models(o->method)) {
		size_t nf = 0;
		for (k = 0; k < res->njobs; k++)
			nf += res->jobs[k].nf;
		if (res->njobs && !nf)
			return pr_error("%s needs the models of a function on both sides, and no "
					"function has them: fit them with 'perun postprocessby "
					"PROFILE regression-analysis' (or postprocessors in "
					".perun/local.yml)",
					check_method_name(o->method));
	}
	if (res->skipped_machine)
		pr_warn("left out %zu baseline run%s from another machine (--any-machine compares "
			"them)",
			res->skipped_machine, res->skipped_machine == 1 ? "" : "s");
	if (!res->njobs)
		return pr_error("no run of %s has the collector, command, arguments and workload%s "
				"of one of %s",
				check_side_name(b), o->any_machine ? "" : " (and machine)",
				check_side_name(t));
	return 0;
}
