/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running collection jobs over revisions, as Perun's 'perun run matrix' and
 * 'perun run job' do: each revision is written into a temporary work tree
 * (the user's checkout is never touched), execute.pre_run builds it there,
 * each job is collected there --repeat times through the collect pipeline,
 * each profile is postprocessed by the matrix's postprocessors, and the
 * profiles are registered for the revision.  perun bisect drives the
 * same runner.  */
#ifndef PERUN_RUN_H
#define PERUN_RUN_H

#include <stddef.h>

#include "store/localyml.h"
#include "util/strbuf.h"
#include "util/strv.h"

struct repo;

/* One job: a command line collected by one collector (the trace options).  */
struct run_job {
	char *cmd, *args, *workload;	/* args and workload: NULL for none */
	struct strv trace;		/* "trace" and its options */
	char *label;			/* "cmd args workload", for messages */
};

/* The jobs of a matrix: every cmd x args x workload x collector, in that
 * order (Perun's).  A collector's params become trace options (key: value ->
 * --key value, a list -> the option once per item, true -> --key, false ->
 * left out).  -1 (reported) on a collector other than trace or a param
 * collect refuses.  */
int run_jobs_from_matrix(const struct job_matrix *m, struct run_job **jobs, size_t *n);
/* Checks trace options (argv after 'trace') as perun collect parses them:
 * 0 good, 1 when they ask for --help (nothing said), -1 after saying what
 * is wrong.  */
int run_check_trace(char *const *argv, size_t argc);
/* Sets every job's trace options to argv[0..argc) ("trace" first), checked
 * as perun collect checks them: 0, or -1 (said).  */
int run_jobs_set_trace(struct run_job *jobs, size_t n, char *const *argv, size_t argc);
void run_jobs_free(struct run_job *jobs, size_t n);
/* The jobs of perun run job: every cmd with every args and workload, traced
 * with trace[0..ntrace) ("trace" and its options; none: collect's
 * defaults).  0; -1 (reported) when they make no job; -2 (said) when
 * collect refuses the trace options.  */
int run_jobs_from_args(const struct strv *cmds, const struct strv *args, const struct strv *wls,
		       char *const *trace, size_t ntrace, struct run_job **jobs, size_t *n);

/* local.yml of the repository into *m: 1 read, 0 missing (*m empty), -1
 * bad (reported).  */
int run_read_matrix(const struct repo *r, struct job_matrix *m);

struct pp_opts;
/* The postprocessors of a matrix (name and params, Perun's or postprocessby's
 * names) as options for postprocess_profile(), in order; they point into m.
 * -1 (reported, naming the postprocessor) on an unknown name or param.  */
int run_postprocessors_from_matrix(const struct job_matrix *m, struct pp_opts **out, size_t *n);

/* What one collected profile gives the runner's caller before it is
 * registered (perun bisect reads its times here).  Non-zero stops nothing;
 * the profile is registered either way.  */
typedef void (*run_profile_fn)(void *ctx, const char *sha, size_t job, const char *path);

/* How many times a collect that the runtime broke is tried again, unless
 * --retries or local.yml says otherwise: two spurious failures in a row are
 * rare (about 2 collects in 300 failed on a busy host), a third attempt costs
 * one run's time only when the first two failed.  */
#define RUN_DEFAULT_RETRIES 2

struct runner {
	/* in */
	struct repo *repo;
	const struct run_job *jobs;
	size_t njobs;
	const struct strv *pre_run;	/* shell commands run before the jobs */
	const struct pp_opts *post;	/* applied in order to each collected profile */
	size_t npost;
	unsigned repeat;		/* collects per job (>= 1) */
	int interleave;			/* rounds: run k of every revision, then run k + 1
					   (default); 0: each revision's runs back to back */
	unsigned retries;		/* a collect the runtime broke is tried again this
					   many times (RUN_DEFAULT_RETRIES) */
	const char *machine;		/* the name the profiles' machine region carries, or
					   NULL */
	int progress;			/* progress lines on stderr */
	int quiet;			/* no round lines either */
	int verbose;			/* collect's own messages too */
	run_profile_fn on_profile;	/* or NULL */
	void *ctx;
	/* state */
	char *subdir;		/* the working directory under the work tree ("" its top) */
	char *tmp;		/* private temp dir: build logs */
	char *wt;		/* the temporary work tree's path: every revision is built
				   and collected there, and parked beside it (wt.rN)
				   while another revision's rounds run */
	int lock_fd;		/* held while wt is ours */
	size_t failed;		/* revisions or jobs that failed */
	size_t registered;	/* profiles registered */
	size_t retried;		/* collects tried again (each said on stderr) */
	size_t at;		/* the revision being built or collected (its index) */
	int interrupted;	/* a signal stopped the run */
};

/* Sets up r for repo: the temporary work tree's place (a stable path in the
 * module cache when it is free, so unchanged binaries keep their build-id
 * and hit the module cache across revisions and runs).  0, or -1 (reported).  */
int runner_init(struct runner *r, struct repo *repo);
/* Removes what the runner made (the temp dir and any parked work tree).  */
void runner_release(struct runner *r);

/* One revision of a run.  */
struct run_rev {
	char sha[41];		/* the commit; "" for the work tree as it is (for HEAD) */
	unsigned runs;		/* collects of each job to make */
	/* out */
	size_t registered;	/* profiles registered */
	int failed;		/* its build, or a collect or register, failed (said) */
	/* the runner's */
	char origin[41];	/* the commit its profiles are registered for, once known */
	int built;		/* pre_run ran: its collects may run */
	char *parked;		/* its work tree while another revision's run goes */
	char *dir;		/* where its jobs run */
	struct strbuf *reg;	/* per job: the entries registered (" 0@i 1@i") */
};

/* Builds every revision of revs[0..n) (its tree written into the work tree,
 * pre_run there) and collects runs of every job: in rounds when
 * r->interleave and n > 1 (round k collects run k of every revision that
 * wants k + 1 runs; each revision's build is kept, parked under another
 * name, between its turns, so it is built once and always runs from the same
 * path), else each revision's runs back to back.  A collect the runtime
 * broke (the runtime died or never armed, the trace is incomplete) is tried
 * again up to r->retries times, each retry said; a failed build or target is
 * not.  Prints one line per revision and job with the profiles registered,
 * in the order of revs.  0 when everything ran, 1 when a revision had a
 * failure (each said, then a count), -1 when a signal stopped the run (said;
 * r->interrupted) or a work tree could not be made.  */
int run_rounds(struct runner *r, struct run_rev *revs, size_t n);
/* run_rounds() over revs[0..nrevs) with r->repeat runs each, or over the
 * work tree as it is when nrevs is 0.  */
int run_revisions(struct runner *r, char (*revs)[41], size_t nrevs);

/* Revision arguments (REV, or A..B: the commits after A up to B, first
 * parents, oldest first) into 40-hex commits, duplicates dropped, in order
 * into *out (caller frees).  0, or -1 (reported).  */
int run_resolve_revisions(const char *worktree, char *const *args, size_t nargs,
			  char (**out)[41], size_t *n);

/* perun bisect: the first commit between good and bad (bad reachable from
 * good by first parents) where perun check flags func as slower.  */
struct bisect_result {
	char sha[41];		/* the first slower commit */
	char *func;		/* the function (chosen when none was given) */
	double before, after;	/* check's per-call time of a typical run (ns) either side */
	double ratio;		/* check's ratio, after / before */
	double threshold;	/* the threshold that applied */
	int metric;		/* enum check_metric: self or inclusive time */
	size_t nbase, ntarget;	/* runs compared either side */
	size_t ncommits;	/* commits from good to bad, both counted */
	size_t collected;	/* revisions that had runs collected */
	size_t reused;		/* revisions whose registered runs of the job (same job,
				   this machine, as many as repeat asks) were enough */
	size_t runs_collected;	/* runs collected in all */
	size_t undecided;	/* halves check could not decide even with more runs
				   (warned): a step there may be missed */
};
struct check_opts;
/* Collects good and bad in rounds (only the runs each lacks of repeat:
 * those registered for the job on this machine count), then, binary search,
 * the commit nearest the middle of the interval whose ends perun check
 * (check_input_compare() with opts, as perun check compares two revisions)
 * flags func as slower between, until they are neighbours.  Without func,
 * the function check flags most from good to bad.  Runs the runner's job
 * number job only.  0 found, 1 nothing flagged or the step cannot be
 * narrowed (said), -1 error (reported).  */
int run_bisect(struct runner *r, const char *good, const char *bad, const char *func,
	       size_t job, const struct check_opts *opts, struct bisect_result *out);
void bisect_result_release(struct bisect_result *b);

#endif
