/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun run matrix [options] [REV | A..B]...
 * perun run job -c CMD [-a ARGS]... [-w WORKLOAD]... [options] [REV | A..B]... [trace [options]]
 * perun bisect [options] GOOD BAD [FUNCTION]  */
#include "config.h"

#define PR_FMT "perun run"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/check.h"
#include "analysis/postprocess.h"
#include "cmd/cmd.h"
#include "collect/session.h"
#include "run/run.h"
#include "runtime/driver.h"
#include "store/repo.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"
#include "vcs/vcs.h"

static const char usage_run[] =
	"usage: perun run matrix [--repeat N] [--[no-]interleave-rounds] [--retries N]\n"
	"                        [--machine NAME] [-q] [-v] [REV | A..B]...\n"
	"       perun run job -c CMD [-a ARGS]... [-w WORKLOAD]... [--repeat N]\n"
	"                     [--[no-]interleave-rounds] [--retries N] [--machine NAME]\n"
	"                     [-q] [-v] [REV | A..B]... [trace [trace options]]\n"
	"\n"
	"Collects jobs and registers their profiles for each revision.  'matrix' runs\n"
	"the job matrix of .perun/local.yml: every cmd with every args and workload,\n"
	"collected by every collector (name: trace, params: trace options).  'job'\n"
	"runs the one job given: every -c with every -a and -w, traced with the\n"
	"options after 'trace' (as perun collect takes them).\n"	"Each collected profile is postprocessed by local.yml's postprocessors (e.g.\n"
	"regression_analysis) before it is registered.\n"
	"\n"
	"Each revision (REV, or A..B: the commits after A up to B on the first-parent\n"
	"line) is written into a temporary work tree, execute.pre_run of local.yml\n"
	"runs there (e.g. make), the jobs run there from the directory perun run was\n"
	"started in, and the work tree is removed; the checkout is not touched.\n"
	"Without a revision the jobs run in the work tree as it is, for HEAD.\n"
	"\n"
	"Several revisions are collected in rounds (asv's --interleave-rounds): each\n"
	"is built once, then round k collects run k of every revision, so a slow\n"
	"spell of the host touches one run of each, not every run of one.  Each\n"
	"build is kept between its turns (moved aside, and back to the same path to\n"
	"run); --no-interleave-rounds runs each revision's runs back to back.  A\n"
	"collect the runtime broke (it died, never armed its probes, or the trace is\n"
	"incomplete) is tried again up to --retries times (default 2), each retry\n"
	"said and recorded in the profile (\"retries\"); a failing build or target\n"
	"is not retried.  --machine NAME names this machine in the profiles, and\n"
	"check, history and bisect compare profiles of one name as one machine,\n"
	"whatever the host is called.\n"
	"\n"
	"Prints one line per revision and job with the profiles registered.  Exit\n"
	"status: 0 when every build and collect succeeded, 1 when one failed (each\n"
	"is named with its revision and job; the rest still ran), 2 on a usage error.\n";

static const char usage_bisect[] =
	"usage: perun bisect [--repeat N] [--job N] [--threshold PCT]\n"
	"                    [--[no-]interleave-rounds] [--retries N] [--machine NAME]\n"
	"                    [-q] [-v] GOOD BAD [FUNCTION]\n"
	"\n"
	"Finds the first commit after GOOD up to BAD where perun check flags\n"
	"FUNCTION as slower: the same comparison, statistic and threshold (its\n"
	"default, local.yml's thresholds, or --threshold) that 'perun check A B'\n"
	"makes.  Revisions are collected as perun run matrix collects them (a\n"
	"temporary work tree, execute.pre_run, the job, its profiles registered):\n"
	"GOOD and BAD first, in rounds, then the commit nearest the middle of the\n"
	"interval whose ends check tells apart, until they are neighbours: about\n"
	"log2(commits) + 2 revisions.  When check cannot decide between two\n"
	"revisions, each gets --repeat more runs, up to three times --repeat.\n"
	"Without FUNCTION, the function check flags most from GOOD to BAD.  A\n"
	"revision collects only the runs it lacks of\n"
	"--repeat (default: local.yml's repeat, else 3): the registered runs of the\n"
	"job on this machine (the same command, arguments, workload and\n"
	"postprocessors) count.\n"
	"\n"
	"Exit status: 0 when a commit is named, 1 when check flags nothing from GOOD\n"
	"to BAD, the step cannot be narrowed to one commit, or a collect failed at\n"
	"GOOD or BAD, 2 on a usage error.\n";

/* Runs per revision bisect collects when neither --repeat nor local.yml
 * says: perun check's run-level comparison wants at least 2 runs a side,
 * and 3 keep one run caught by a busy spell from deciding.  */
#define BISECT_DEFAULT_REPEAT 3

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perun %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee 'perun %s --help'\n", cmd);
	return EXIT_USAGE;
}

static int parse_runs(const char *s, unsigned max, unsigned *out)
{
	uint64_t v;

	if (parse_count(s, max, &v) < 0 || v < 1)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* The options both run and bisect take.  */
struct common {
	unsigned repeat;
	int quiet, verbose;
	int interleave;		/* 1 --interleave-rounds, -1 --no-interleave-rounds, 0 unsaid */
	int retries;		/* --retries N, or -1 */
	const char *machine;	/* --machine NAME, or NULL */
};

/* --retries N into the int o->value.  */
static int parse_retries(const struct popt *o, const char *v)
{
	uint64_t n;

	if (parse_count(v, 100, &n) < 0)
		return popt_error(o, "--retries wants a number of retries from 0 to 100, not '%s'",
				  v);
	*(int *)o->value = (int)n;
	return 0;
}

/* --machine NAME into the const char * o->value.  */
static int parse_machine(const struct popt *o, const char *v)
{
	if (!config_machine_name_ok(v))
		return popt_error(o, "--machine wants a name of letters, digits, '.', '_' and '-' "
				     "(at most 64), not '%s'",
				  v);
	*(const char **)o->value = v;
	return 0;
}

/* The runner's settings from the command line, else local.yml, else the
 * defaults.  */
static void runner_settings(struct runner *rn, const struct common *c, const struct job_matrix *m)
{
	rn->repeat = c->repeat ? c->repeat : m->repeat ? m->repeat : 1;
	rn->interleave = c->interleave ? c->interleave > 0
			 : m->interleave_rounds ? m->interleave_rounds > 0
						: 1;
	rn->retries = c->retries >= 0 ? (unsigned)c->retries
		      : m->has_retries ? m->retries
				       : RUN_DEFAULT_RETRIES;
	rn->machine = c->machine ? c->machine : m->machine;
	rn->progress = !c->quiet && isatty(2);
	rn->quiet = c->quiet;
	rn->verbose = c->verbose;
}

/* The rows both run and bisect have, after --repeat.  */
#define COMMON_ROWS(c)                                                                             \
	OPT_SET_INT(0, "interleave-rounds", &(c).interleave, 1,                                    \
		    "collect in rounds: run k of every revision, then run k + 1 (the default; "    \
		    "local.yml: interleave_rounds)"),                                              \
	OPT_SET_INT(0, "no-interleave-rounds", &(c).interleave, -1,                                \
		    "collect each revision's runs back to back"),                                  \
	OPT_SET_INT(0, "no-interleave", &(c).interleave, -1, NULL),                                \
	OPT_CALLBACK(0, "retries", &(c).retries, "N",                                              \
		     "try a collect the runtime broke again up to N times (default 2; local.yml: " \
		     "retries)",                                                                   \
		     parse_retries),                                                               \
	OPT_CALLBACK(0, "machine", &(c).machine, "NAME",                                           \
		     "the machine's name in the profiles' machine region, which comparisons "      \
		     "select by (local.yml: machine)",                                             \
		     parse_machine)

/* --repeat N into the unsigned o->value.  */
static int parse_repeat(const struct popt *o, const char *v)
{
	if (parse_runs(v, 1000, o->value) < 0)
		return popt_error(o, "--repeat wants a number of runs from 1 to 1000, not '%s'", v);
	return 0;
}

/* --job N into the unsigned o->value.  */
static int parse_job(const struct popt *o, const char *v)
{
	if (parse_runs(v, 100000, o->value) < 0)
		return popt_error(o, "--job wants a job number from 1, not '%s'", v);
	return 0;
}

/* --threshold PCT (a trailing % allowed) into the double o->value, as a
 * ratio.  */
static int parse_threshold(const struct popt *o, const char *v)
{
	double t;

	if (parse_percent(v, &t) < 0 || (t /= 100) <= 0 || t > 100)
		return popt_error(o, "--threshold wants a percentage above 0 and at most 10000, "
				     "not '%s'",
				  v);
	*(double *)o->value = t;
	return 0;
}

/* -c, -a, -w: one more value into the struct strv o->value.  */
static int push_value(const struct popt *o, const char *v)
{
	strv_push(o->value, v);
	return 0;
}

int cmd_run(int argc, char **argv, struct ctx *ctx)
{
	struct common c = { 0, 0, 0, 0, -1, NULL };
	struct strv cmds = STRV_INIT, args = STRV_INIT, wls = STRV_INIT;
	struct job_matrix m;
	struct run_job *jobs = NULL;
	struct runner rn;
	struct repo r = { NULL, NULL, -1 };
	char (*revs)[41] = NULL;
	struct pp_opts *post = NULL;
	size_t njobs = 0, nrevs = 0, npost = 0;
	int err, is_job, have_matrix = 0, runner_ok = 0, ret = EXIT_FAIL, trace_at, nrevargs;
	/* run job's rows last: run matrix ends the table before them */
	struct popt opts[] = {
		OPT_CALLBACK(0, "repeat", &c.repeat, "N",
			     "collect each job N times (default: repeat in local.yml, else 1)",
			     parse_repeat),
		COMMON_ROWS(c),
		OPT_BOOL('q', "quiet", &c.quiet,
			 "no progress lines (they go to stderr on a terminal)"),
		OPT_BOOL('v', "verbose", &c.verbose, "collect's own messages too"),
		OPT_CALLBACK('c', "cmd", &cmds, "CMD",
			     "job: the command (again: every -c with every -a and -w)", push_value),
		OPT_CALLBACK('a', "args", &args, "ARGS", "job: its arguments (again: more jobs)",
			     push_value),
		OPT_CALLBACK('w', "workload", &wls, "WORKLOAD",
			     "job: its workload (again: more jobs)", push_value),
		OPT_END(),
	};

	(void)ctx;
	memset(&m, 0, sizeof(m));
	if (argc < 2) {
		usage_with_options(stderr, usage_run, opts);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage_with_options(stdout, usage_run, opts);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "matrix") && strcmp(argv[1], "job"))
		return usage_error("run", "unknown subcommand '%s': use matrix or job", argv[1]);
	is_job = !strcmp(argv[1], "job");
	if (!is_job)
		opts[8] = (struct popt)OPT_END();
	/* run job's own arguments end at 'trace': collect's trace options follow */
	trace_at = is_job ? popt_find_word(argc - 1, argv + 1, opts, "trace") + 1 : argc;
	nrevargs = parse_options(trace_at - 1, argv + 1, "run", usage_run, opts);
	if (nrevargs < 0) {
		ret = POPT_EXIT(nrevargs);
		goto out;
	}
	if (is_job && !cmds.n) {
		ret = usage_error("run", "%s", "run job needs the command: -c CMD");
		goto out;
	}
	/* the trace options before the repository is looked for: '--help' there
	 * prints collect's help (it exited 2 saying nothing), a bad one is a
	 * usage error anywhere */
	if (is_job && trace_at < argc) {
		err = run_check_trace(argv + trace_at, (size_t)(argc - trace_at));
		if (err == 1)
			usage_collect(stdout);
		if (err) {
			ret = err == 1 ? EXIT_OK : EXIT_USAGE;
			goto out;
		}
	}
	if (repo_find(&r) < 0)
		goto out;
	have_matrix = run_read_matrix(&r, &m);
	if (have_matrix < 0)
		goto out;
	if (!is_job && !have_matrix) {
		pr_error("%s/local.yml is missing: perun init writes it; list cmds and collectors "
			 "there",
			 r.dir);
		goto out;
	}
	if (is_job) {
		/* the job of the command line, with local.yml's pre_run, repeat and
		 * postprocessors */
		err = run_jobs_from_args(&cmds, &args, &wls, argv + trace_at,
					 (size_t)(argc - trace_at), &jobs, &njobs);
		if (err < 0) {
			ret = err == -2 ? EXIT_USAGE : EXIT_FAIL;
			goto out;
		}
	} else {
		if (run_jobs_from_matrix(&m, &jobs, &njobs) < 0)
			goto out;
	}
	if (run_postprocessors_from_matrix(&m, &post, &npost) < 0)
		goto out;
	if (run_resolve_revisions(r.worktree, argv + 1, (size_t)nrevargs, &revs, &nrevs) < 0)
		goto out;
	if (nrevargs && !nrevs) {
		pr_error("the revisions given name no commit: nothing to run");
		goto out;
	}
	if (runner_init(&rn, &r) < 0)
		goto out;
	runner_ok = 1;
	rn.jobs = jobs;
	rn.njobs = njobs;
	rn.pre_run = &m.pre_run;
	rn.post = post;
	rn.npost = npost;
	runner_settings(&rn, &c, &m);
	driver_install_signals();
	err = run_revisions(&rn, revs, nrevs);
	ret = err < 0 ? EXIT_SIGNAL_BASE + driver_signal_received() : err ? EXIT_FAIL : EXIT_OK;
out:
	free(post);
	if (runner_ok)
		runner_release(&rn);
	run_jobs_free(jobs, njobs);
	job_matrix_release(&m);
	free(revs);
	strv_clear(&cmds);
	strv_clear(&args);
	strv_clear(&wls);
	repo_release(&r);
	return ret;
}

int cmd_bisect(int argc, char **argv, struct ctx *ctx)
{
	struct common c = { 0, 0, 0, 0, -1, NULL };
	struct job_matrix m;
	struct run_job *jobs = NULL;
	struct runner rn;
	struct repo r = { NULL, NULL, -1 };
	struct bisect_result res;
	struct minor_version mv;
	char good[41], bad[41], stat[32];
	struct pp_opts *post = NULL;
	size_t njobs = 0, npost = 0;
	unsigned job = 1;
	double threshold = 0;
	struct check_opts co;
	int npos, have, runner_ok = 0, ret = EXIT_FAIL, b;
	struct popt opts[] = {
		OPT_CALLBACK(0, "repeat", &c.repeat, "N",
			     "collect each revision N times (default: local.yml's repeat, else 3)",
			     parse_repeat),
		COMMON_ROWS(c),
		OPT_CALLBACK(0, "job", &job, "N", "the job of local.yml's matrix to run (default 1)",
			     parse_job),
		OPT_CALLBACK(0, "threshold", &threshold, "PCT",
			     "the smallest slowdown that counts (default: perun check's, 10, and "
			     "local.yml's thresholds)",
			     parse_threshold),
		OPT_BOOL('q', "quiet", &c.quiet, "no progress lines"),
		OPT_BOOL('v', "verbose", &c.verbose, "collect's own messages too"),
		OPT_END(),
	};

	(void)ctx;
	memset(&m, 0, sizeof(m));
	memset(&res, 0, sizeof(res));
	npos = parse_options(argc, argv, "bisect", usage_bisect, opts);
	if (npos < 0)
		return POPT_EXIT(npos);
	if (npos < 2 || npos > 3) {
		ret = usage_error("bisect", "%s", "give GOOD and BAD revisions, and a FUNCTION if you "
						  "like");
		goto out;
	}
	if (repo_find(&r) < 0)
		goto out;
	have = run_read_matrix(&r, &m);
	if (have <= 0) {
		if (!have)
			pr_error("%s/local.yml is missing: bisect runs its job matrix; list cmds and "
				 "collectors there",
				 r.dir);
		goto out;
	}
	if (run_jobs_from_matrix(&m, &jobs, &njobs) < 0 ||
	    run_postprocessors_from_matrix(&m, &post, &npost) < 0)
		goto out;
	if (job > njobs) {
		char num[32];
		snprintf(num, sizeof(num), "%u", job);
		ret = usage_error("bisect", "--job %s: local.yml's matrix has fewer jobs", num);
		goto out;
	}
	if (vcs_massage(r.worktree, argv[0], good) < 0 || vcs_massage(r.worktree, argv[1], bad) < 0)
		goto out;
	if (runner_init(&rn, &r) < 0)
		goto out;
	runner_ok = 1;
	rn.jobs = jobs;
	rn.njobs = njobs;
	rn.pre_run = &m.pre_run;
	rn.post = post;
	rn.npost = npost;
	runner_settings(&rn, &c, &m);
	if (!c.repeat && !m.repeat)
		rn.repeat = BISECT_DEFAULT_REPEAT;
	check_opts_init(&co);
	if (threshold > 0)
		co.threshold = threshold;
	driver_install_signals();
	b = run_bisect(&rn, good, bad, npos > 2 ? argv[2] : NULL, job - 1, &co, &res);
	if (rn.interrupted) {
		ret = EXIT_SIGNAL_BASE + driver_signal_received();
		goto out;
	}
	if (b != 0)
		goto out;
	memset(&mv, 0, sizeof(mv));
	vcs_minor_info(r.worktree, res.sha, &mv);
	printf("%s is the first commit where %s steps up: %s\n", res.sha, res.func,
	       mv.subject ? mv.subject : "");
	check_statistic_name(co.statistic, stat, sizeof(stat));
	printf("%s: %s time per call %.0f ns before, %.0f ns after (%+.0f %%), as perun check "
	       "compares them (%s of each run's calls, %zu and %zu runs, threshold %.0f %%)\n",
	       res.func, check_metric_name((enum check_metric)res.metric), res.before, res.after,
	       (res.ratio - 1) * 100, stat, res.nbase, res.ntarget, res.threshold * 100);
	printf("collected %zu of %zu revisions (%zu run%s)", res.collected, res.ncommits,
	       res.runs_collected, res.runs_collected == 1 ? "" : "s");
	if (res.reused)
		printf("; the registered runs of %zu more reused", res.reused);
	printf("\n");
	if (res.undecided)
		printf("note: %zu comparison%s on the way stayed undecided (warned above): an "
		       "earlier step may be missed\n",
		       res.undecided, res.undecided == 1 ? "" : "s");
	minor_version_release(&mv);
	ret = EXIT_OK;
	if (rn.failed)
		fprintf(stderr, "perun bisect: %zu build or collect failure%s on the way (named "
				"above): those commits were skipped\n",
			rn.failed, rn.failed == 1 ? "" : "s");
out:
	if (runner_ok)
		runner_release(&rn);
	bisect_result_release(&res);
	free(post);
	run_jobs_free(jobs, njobs);
	job_matrix_release(&m);
	repo_release(&r);
	return ret;
}
