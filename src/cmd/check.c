/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun check [BASELINE] [TARGET]: loads the runs of both sides, calls
 * check_compare() (analysis/check.h) and prints its result
 * (report/check-output.h).  */
#include "config.h"

#define PR_FMT "perun check"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "cmd/cmd.h"
#include "profile/machine.h"
#include "profile/profile.h"
#include "report/check-output.h"
#include "store/localyml.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/parse-options.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

static const char usage[] =
    "usage: perun check [BASELINE] [TARGET] [--threshold R] [--confidence C]\n"
    "                   [--method M] [--statistic S] [--format text|json|junit|markdown]\n"
    "                   [--all] [--any-machine]\n\n"
    "Compares the runs registered for TARGET (default HEAD) with those of BASELINE\n"
    "(default: the nearest ancestor of TARGET with runs of the same job on the same\n"
    "machine).  Either may also be profile files, comma-separated (one run each).\n"
    "A job is a collector, command, arguments and workload; each registered\n"
    "profile of it is one run.\n"
    "Per calling context (main;parse;alloc) and for self and inclusive time apart,\n"
    "each run gives the p10 of its call times, the probes' cost taken out, and the\n"
    "runs of the two sides are compared: a degradation when the target is slower\n"
    "by the threshold or more and\n"
    "the confidence interval of the ratio lies above 1.  With too few runs or too\n"
    "much spread between runs the change is undecided.  The threshold is 0.1, and\n"
    "0.25 (Perun's) for the regression methods and local-statistics; thresholds\n"
    "per function come from regressions_thresholds in .perun/local.yml.\n\n"
    "Methods (--method M): runs (default: Welch's t over the logs of the runs' p10s)\n"
    "or mann-whitney (asv's rank test over the runs' p10s), or one of Perun's, per\n"
    "function, on the models postprocessby fitted (regression-analysis;\n"
    "local-statistics also regressogram and moving-average):\n"
    "  best-model-order-equality  the best form grows faster\n"
    "  linear-regression, polynomial-regression, fast-check\n"
    "                             the curves of the best models differ by the\n"
    "                             threshold (they name the change's shape apart)\n"
    "  local-statistics           statistics of the curves per window\n"
    "or on the calls:\n"
    "  exclusive-time-outliers    a function's change in total exclusive time is\n"
    "                             an outlier among all functions' changes\n\n"
    "Exit status: 0 no degradation, 1 a degradation (or a failure), 2 usage.\n";

/* One side: the runs of a minor version, or one file.  */
struct side {
	char sha[41];
	char **labels;
	struct profile *p;
	size_t n;
};

static void side_release(struct side *s)
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

static void side_push(struct side *s, struct profile *p, char *label)
{
	s->p = xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
	s->labels = xrealloc(s->labels, (s->n + 1) * sizeof(*s->labels));
	s->p[s->n] = *p;
	s->labels[s->n++] = label;
}

/* The registered profiles of sha; 0 with s->n = 0 when there are none.  */
static int side_load_minor(const struct repo *r, const char *sha, struct side *s)
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
	const struct side *target;
	struct side *base;
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
			if (check_same_job(&f->base->p[i], &f->target->p[j])) {
				if (f->any_machine || machine_same(&f->base->p[i], &f->target->p[j])) {
					f->found = 1;
					return 1;
				}
				elsewhere = 1;
			}
	f->other_machine += elsewhere;
	side_release(f->base);
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
static int side_from_arg(struct repo *r, int *have_repo, const char *arg, struct side *s)
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
	if (!*have_repo) {
		if (repo_find(r) < 0)
			return -1;
		*have_repo = 1;
	}
	if (vcs_massage(r->worktree, arg, sha) < 0)
		return -1;
	return side_load_minor(r, sha, s);
}

/* A number strictly between lo and hi, for --threshold and --confidence:
 * where it goes, and a flag set when it is given (NULL: none).  */
struct ratio_arg {
	double lo, hi;
	double *out;
	int *given;
};

/* --threshold R, --confidence C into the struct ratio_arg o->value.  */
static int parse_ratio(const struct popt *o, const char *v)
{
	struct ratio_arg *a = o->value;
	char *end;
	double d = strtod(v, &end);

	if (!*v || *end || !(d > a->lo && d < a->hi))
		return popt_error(o, "--%s wants a number in (%g, %g), not '%s'", o->long_name,
				  a->lo, a->hi, v);
	*a->out = d;
	if (a->given)
		*a->given = 1;
	return 0;
}

/* --method M into the enum check_method o->value.  */
static int parse_method(const struct popt *o, const char *v)
{
	int m = check_method_parse(v);

	if (m < 0)
		return popt_error(o, "unknown method '%s': runs, mann-whitney, "
				     "best-model-order-equality, linear-regression, "
				     "polynomial-regression, fast-check, local-statistics or "
				     "exclusive-time-outliers",
				  v);
	*(enum check_method *)o->value = (enum check_method)m;
	return 0;
}

/* --statistic S into the double o->value: the quantile of a run's calls.  */
static int parse_statistic(const struct popt *o, const char *v)
{
	if (check_statistic_parse(v, o->value) < 0)
		return popt_error(o, "unknown statistic '%s': p10, median, min or pN (0 < N < 100)",
				  v);
	return 0;
}

/* --format FORMAT into the int o->value.  */
static int parse_format(const struct popt *o, const char *v)
{
	int f = check_format_parse(v);

	if (f < 0)
		return popt_error(o, "unknown format '%s': text, json, junit or markdown", v);
	*(int *)o->value = f;
	return 0;
}

/* regressions_thresholds of .perun/local.yml, when there is a repository.  */
static int load_thresholds(struct repo *r, int *have_repo, struct check_threshold **out,
			   size_t *n)
{
	char **re = NULL, *path;
	double *thr = NULL;
	size_t i;
	int ret;

	*out = NULL;
	*n = 0;
	if (!*have_repo) {
		char *dir = repo_locate();
		if (!dir)
			return 0;
		free(dir);
		if (repo_find(r) < 0)
			return -1;
		*have_repo = 1;
	}
	path = xstrfmt("%s/local.yml", r->dir);
	ret = config_read_thresholds(path, &re, &thr, n);
	free(path);
	if (ret < 0)
		return -1;
	*out = xcalloc(*n ? *n : 1, sizeof(**out));
	for (i = 0; i < *n; i++) {
		(*out)[i].regex = re[i];
		(*out)[i].threshold = thr[i];
	}
	free(re);
	free(thr);
	return 0;
}

int cmd_check(int argc, char **argv, struct ctx *ctx)
{
	const char *args[2] = {NULL, NULL};
	struct check_opts o;
	struct check_result res;
	struct check_threshold *thr = NULL;
	size_t nthr = 0, k;
	struct side base, target;
	struct repo r;
	struct strbuf out = STRBUF_INIT;
	int i, nargs, all = 0, have_repo = 0, fmt = CHECK_FORMAT_TEXT, ret = EXIT_FAIL;
	int threshold_given = 0;
	const char *bname, *tname;
	struct ratio_arg thr_arg = {0, 1e9, &o.threshold, &threshold_given};
	struct ratio_arg conf_arg = {0, 1, &o.confidence, NULL};
	struct popt opts[] = {
		OPT_CALLBACK(0, "threshold", &thr_arg, "R",
			     "relative change that counts (default 0.1 or 0.25: above)",
			     parse_ratio),
		OPT_CALLBACK(0, "confidence", &conf_arg, "C",
			     "confidence of the interval or test (default 0.99)", parse_ratio),
		OPT_CALLBACK(0, "method", &o.method, "M",
			     "runs (default), mann-whitney or one of Perun's (above)",
			     parse_method),
		OPT_CALLBACK(0, "statistic", &o.statistic, "S",
			     "what stands for a run: p10 (default), median, min or pN",
			     parse_statistic),
		OPT_CALLBACK('f', "format", &fmt, "FORMAT",
			     "text (default), json, junit (for CI) or markdown", parse_format),
		OPT_BOOL(0, "all", &all, "list unchanged contexts too"),
		OPT_BOOL(0, "any-machine", &o.any_machine, "compare runs from other machines too"),
		OPT_END(),
	};

	(void)ctx;
	check_opts_init(&o);
	memset(&res, 0, sizeof(res));
	memset(&base, 0, sizeof(base));
	memset(&target, 0, sizeof(target));
	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	nargs = parse_options(argc, argv, "check", usage, opts);
	if (nargs < 0)
		return POPT_EXIT(nargs);
	if (nargs > 2) {
		fprintf(stderr, "perun check: at most BASELINE and TARGET\n");
		return EXIT_USAGE;
	}
	for (i = 0; i < nargs; i++)
		args[i] = argv[i];
	if (!threshold_given)
		o.threshold = check_method_threshold(o.method);
	/* one argument is the baseline; the target is HEAD */
	if (side_from_arg(&r, &have_repo, nargs == 2 ? args[1] : "HEAD", &target) < 0)
		goto out;
	if (!target.n) {
		pr_error("no profiles registered for %.7s: collect and 'perun add' some first",
			 target.sha);
		goto out;
	}
	if (nargs >= 1) {
		if (side_from_arg(&r, &have_repo, args[0], &base) < 0)
			goto out;
	} else {
		struct find_base fb = {&r, &target, &base, o.any_machine, 0, 0, 0};
		if (vcs_walk(r.worktree, target.sha, 1000, find_base_one, &fb) < 0 || fb.failed)
			goto out;
		if (fb.other_machine)
			pr_warn("passed over %zu ancestor%s whose runs of these jobs ran on another "
				"machine (--any-machine compares them)",
				fb.other_machine, fb.other_machine == 1 ? "" : "s");
		if (!fb.found) {
			pr_error("no ancestor of %.7s has runs of the same collector, command, "
				 "arguments and workload%s: name a BASELINE",
				 target.sha, o.any_machine ? "" : " on this machine");
			goto out;
		}
	}
	if (load_thresholds(&r, &have_repo, &thr, &nthr) < 0)
		goto out;
	o.thresholds = thr;
	o.nthresholds = nthr;
	/* two single files are compared whatever their jobs */
	if (base.n == 1 && target.n == 1 && !base.sha[0] && !target.sha[0] &&
	    !check_same_job(&base.p[0], &target.p[0])) {
		pr_warn("%s and %s are runs of different jobs: compared anyway", base.labels[0],
			target.labels[0]);
		o.any_job = 1;
	}
	if (check_compare(base.p, (const char *const *)base.labels, base.n, target.p,
			  (const char *const *)target.labels, target.n, &o, &res) < 0)
		goto out;
	if (check_method_models(o.method)) {
		size_t nf = 0;
		for (k = 0; k < res.njobs; k++)
			nf += res.jobs[k].nf;
		if (res.njobs && !nf) {
			pr_error("%s needs the models of a function on both sides, and no function "
				 "has them: fit them with 'perun postprocessby PROFILE "
				 "regression-analysis' (or postprocessors in .perun/local.yml)",
				 check_method_name(o.method));
			goto out;
		}
	}
	if (res.skipped_machine)
		pr_warn("left out %zu baseline run%s from another machine (--any-machine compares "
			"them)",
			res.skipped_machine, res.skipped_machine == 1 ? "" : "s");
	if (!res.njobs) {
		pr_error("no run of %s has the collector, command, arguments and workload%s of one "
			 "of %s",
			 base.sha[0] ? base.sha : base.labels[0],
			 o.any_machine ? "" : " (and machine)",
			 target.sha[0] ? target.sha : target.labels[0]);
		goto out;
	}
	bname = base.sha[0] ? base.sha : base.labels[0];
	tname = target.sha[0] ? target.sha : target.labels[0];
	check_output(&res, &o, (enum check_format)fmt, all, bname, tname, &out);
	fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
	ret = res.degradations ? EXIT_FAIL : EXIT_OK;
out:
	check_result_release(&res);
	for (k = 0; k < nthr; k++)
		free(thr[k].regex);
	free(thr);
	strbuf_release(&out);
	side_release(&base);
	side_release(&target);
	if (have_repo)
		repo_release(&r);
	return ret;
}
