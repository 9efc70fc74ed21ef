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

struct runner {
	/* in */
	struct repo *repo;
	const struct run_job *jobs;
	size_t njobs;
	const struct strv *pre_run;	/* shell commands run before the jobs */
	const struct pp_opts *post;	/* applied in order to each collected profile */
	size_t npost;
	unsigned repeat;		/* collects per job (>= 1) */
	int progress;			/* progress lines on stderr */
	int verbose;			/* collect's own messages too */
	run_profile_fn on_profile;	/* or NULL */
	void *ctx;
	/* state */
	char *subdir;		/* the working directory under the work tree ("" its top) */
	char *tmp;		/* private temp dir: build logs */
	char *wt;		/* the temporary work tree's path */
	int lock_fd;		/* held while wt is ours */
	size_t failed;		/* revisions or jobs that failed */
	size_t registered;	/* profiles registered */
	int interrupted;	/* a signal stopped the run */
};

/* Sets up r for repo: the temporary work tree's place (a stable path in the
 * module cache when it is free, so unchanged binaries keep their build-id
 * and hit the module cache across revisions and runs).  0, or -1 (reported).  */
int runner_init(struct runner *r, struct repo *repo);
/* Removes what the runner made (the temp dir; the work tree is removed after
 * each revision already).  */
void runner_release(struct runner *r);

/* Runs pre_run and every job at the commit sha (40 hex) in a temporary work
 * tree, or in the user's work tree as it is when sha is NULL (profiles then
 * go to HEAD); index and total number the revision in progress lines.  A
 * failed build or collect is said on stderr, naming the revision and the
 * job, and counted in r->failed; the rest still runs.  0 when everything ran,
 * 1 when something failed, -1 when the run must stop (a signal, or the work
 * tree cannot be made).  */
int runner_revision(struct runner *r, const char *sha, size_t index, size_t total);
/* runner_revision() over revs[0..nrevs) in order, or once over the work
 * tree as it is when nrevs is 0.  0 when everything ran; 1 when a revision
 * had a failure (each said, then a count); -1 when a signal stopped the run
 * (said; r->interrupted).  */
int run_revisions(struct runner *r, char (*revs)[41], size_t nrevs);

/* Revision arguments (REV, or A..B: the commits after A up to B, first
 * parents, oldest first) into 40-hex commits, duplicates dropped, in order
 * into *out (caller frees).  0, or -1 (reported).  */
int run_resolve_revisions(const char *worktree, char *const *args, size_t nargs,
			  char (**out)[41], size_t *n);

/* perun bisect: the first commit between good and bad (bad reachable from
 * good by first parents) where func's time steps up.  */
struct bisect_result {
	char sha[41];		/* the first slower commit */
	char *func;		/* the function (chosen when none was given) */
	double before, after;	/* its median call time (ns) either side */
	size_t ncommits;	/* commits from good to bad, both counted */
	size_t collected;	/* revisions collected */
	size_t reused;		/* revisions whose registered runs of the job were read
				   instead (as many as repeat asks, same job, this machine) */
};
/* Collects good and bad (or reads the runs of the job already registered
 * for them on this machine), then the middle of the interval holding the step up
 * that the step detection finds among the revisions collected so far, until
 * the step lies between two adjacent commits.  Runs the runner's job number
 * job only.  threshold: the smallest relative step that counts.  0 found, 1
 * no step up (said), -1 error (reported).  */
int run_bisect(struct runner *r, const char *good, const char *bad, const char *func,
	       size_t job, double threshold, struct bisect_result *out);
void bisect_result_release(struct bisect_result *b);

#endif
