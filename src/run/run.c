/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The job runner: jobs from the matrix, the temporary work tree of a
 * revision, pre_run there, the collects through the collect pipeline, and
 * registering their profiles for the revision.  */
#include "config.h"

#define PR_FMT "perun run"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "analysis/postprocess.h"
#include "collect/session.h"
#include "profile/profile.h"
#include "report/collect-output.h"
#include "run/run.h"
#include "runtime/cache.h"
#include "runtime/driver.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/sha1.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* --- jobs --------------------------------------------------------------------- */

static int is_true(const char *v)
{
	return !strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "yes") || !strcmp(v, "on");
}

static int is_false(const char *v)
{
	return !strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "no") || !strcmp(v, "off");
}

/* A collector's params as trace options: key -> --key (or -k), '_' -> '-'.  */
static void params_to_trace(const struct job_unit *u, struct strv *out)
{
	size_t i;

	strv_push(out, "trace");
	for (i = 0; i < u->nparams; i++) {
		const char *k = u->params[i].key, *v = u->params[i].value;
		char *opt, *p;
		if (is_false(v))
			continue;
		opt = strlen(k) == 1 ? xstrfmt("-%s", k) : xstrfmt("--%s", k);
		for (p = opt + 2; *p; p++)
			if (*p == '_')
				*p = '-';
		strv_push(out, opt);
		if (!is_true(v))
			strv_push(out, v);
		free(opt);
	}
}

/* Checks the trace options as collect would take them.  */
static int check_trace(const struct strv *trace, size_t idx)
{
	struct collect_opts o;
	char **argv = xcalloc(trace->n + 1, sizeof(*argv));
	int r;

	memcpy(argv, trace->v, trace->n * sizeof(*argv));
	collect_opts_init(&o);
	r = collect_parse_trace((int)trace->n, argv, &o);
	collect_opts_release(&o);
	free(argv);
	if (r && idx == (size_t)-1)
		return -1;
	if (r)
		return pr_error("local.yml: collector %zu (trace): %s: change its params to "
				"trace options perun collect takes (see 'perun collect --help')",
				idx + 1, r == 1 ? "'help' is not a param" : "a param is refused (above)");
	return 0;
}

int run_check_trace(char *const *argv, size_t argc)
{
	struct collect_opts o;
	/* a copy: parse_options moves the pointers */
	char **v = xcalloc(argc + 1, sizeof(*v));
	int r;

	memcpy(v, argv, argc * sizeof(*v));
	collect_opts_init(&o);
	r = collect_parse_trace((int)argc, v, &o);
	collect_opts_release(&o);
	free(v);
	return r == 1 ? 1 : r ? -1 : 0;
}

static char *job_label(const char *cmd, const char *args, const char *wl)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, cmd);
	if (args && *args)
		strbuf_addf(&sb, " %s", args);
	if (wl && *wl)
		strbuf_addf(&sb, " %s", wl);
	return strbuf_detach(&sb);
}

int run_jobs_from_matrix(const struct job_matrix *m, struct run_job **jobs, size_t *n)
{
	size_t c, a, w, k, na = m->args.n ? m->args.n : 1, nw = m->workloads.n ? m->workloads.n : 1;

	*jobs = NULL;
	*n = 0;
	if (!m->cmds.n)
		return pr_error("local.yml has no cmds: nothing to run; list the commands to profile "
				"(cmds: [./app]) and a collector (collectors: [{name: trace}])");
	if (!m->ncollectors)
		return pr_error("local.yml has no collectors: add one (collectors: [{name: trace}])");
	for (k = 0; k < m->ncollectors; k++) {
		if (strcmp(m->collectors[k].name, "trace"))
			return pr_error("local.yml: collector %zu is '%s': perun has the trace "
					"collector only (name: trace)",
					k + 1, m->collectors[k].name);
	}
	for (c = 0; c < m->cmds.n; c++)
		for (a = 0; a < na; a++)
			for (w = 0; w < nw; w++)
				for (k = 0; k < m->ncollectors; k++) {
					const char *args = m->args.n ? m->args.v[a] : NULL;
					const char *wl = m->workloads.n ? m->workloads.v[w] : NULL;
					struct run_job *j;
					*jobs = xrealloc(*jobs, (*n + 1) * sizeof(**jobs));
					j = &(*jobs)[(*n)++];
					memset(j, 0, sizeof(*j));
					j->cmd = xstrdup(m->cmds.v[c]);
					j->args = args ? xstrdup(args) : NULL;
					j->workload = wl ? xstrdup(wl) : NULL;
					j->label = job_label(j->cmd, args, wl);
					params_to_trace(&m->collectors[k], &j->trace);
					if (check_trace(&j->trace, k) < 0) {
						run_jobs_free(*jobs, *n);
						*jobs = NULL;
						*n = 0;
						return -1;
					}
				}
	return 0;
}

int run_jobs_set_trace(struct run_job *jobs, size_t n, char *const *argv, size_t argc)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		strv_clear(&jobs[i].trace);
		for (k = 0; k < argc; k++)
			strv_push(&jobs[i].trace, argv[k]);
		if (check_trace(&jobs[i].trace, (size_t)-1) < 0)
			return -1;
	}
	return 0;
}

void run_jobs_free(struct run_job *jobs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(jobs[i].cmd);
		free(jobs[i].args);
		free(jobs[i].workload);
		free(jobs[i].label);
		strv_clear(&jobs[i].trace);
	}
	free(jobs);
}

int run_jobs_from_args(const struct strv *cmds, const struct strv *args, const struct strv *wls,
		       char *const *trace, size_t ntrace, struct run_job **jobs, size_t *n)
{
	struct job_matrix jm;
	size_t k;
	int err;

	memset(&jm, 0, sizeof(jm));
	for (k = 0; k < cmds->n; k++)
		strv_push(&jm.cmds, cmds->v[k]);
	for (k = 0; k < args->n; k++)
		strv_push(&jm.args, args->v[k]);
	for (k = 0; k < wls->n; k++)
		strv_push(&jm.workloads, wls->v[k]);
	jm.ncollectors = 1;
	jm.collectors = xcalloc(1, sizeof(*jm.collectors));
	jm.collectors[0].name = xstrdup("trace");
	err = run_jobs_from_matrix(&jm, jobs, n);
	job_matrix_release(&jm);
	if (err < 0)
		return -1;
	if (ntrace && run_jobs_set_trace(*jobs, *n, trace, ntrace) < 0)
		return -2;
	return 0;
}

int run_read_matrix(const struct repo *r, struct job_matrix *m)
{
	char *path = xstrfmt("%s/local.yml", r->dir);
	int ret = fs_exists(path) ? (config_read_jobs(path, m) < 0 ? -1 : 1) : 0;

	if (!ret)
		memset(m, 0, sizeof(*m));
	free(path);
	return ret;
}

/* --- revisions ---------------------------------------------------------------- */

static void add_unique(char (**out)[41], size_t *n, const char *sha)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*out)[i], sha))
			return;
	*out = xrealloc(*out, (*n + 1) * sizeof(**out));
	snprintf((*out)[(*n)++], 41, "%s", sha);
}

int run_resolve_revisions(const char *worktree, char *const *args, size_t nargs,
			  char (**out)[41], size_t *n)
{
	size_t i, k;

	*out = NULL;
	*n = 0;
	for (i = 0; i < nargs; i++) {
		const char *dots = strstr(args[i], "..");
		char a[41], b[41], (*range)[41] = NULL;
		size_t nr = 0;
		if (!dots) {
			if (vcs_massage(worktree, args[i], a) < 0)
				goto fail;
			add_unique(out, n, a);
			continue;
		}
		{
			char *from = xstrfmt("%.*s", (int)(dots - args[i]), args[i]);
			const char *to = dots[2] ? dots + 2 : "HEAD";
			int r = vcs_massage(worktree, *from ? from : "HEAD", a) < 0 ||
				vcs_massage(worktree, to, b) < 0 ||
				vcs_range(worktree, a, b, &range, &nr) < 0;
			free(from);
			if (r)
				goto fail;
		}
		if (!nr)
			pr_warn("%s names no commit (nothing after %.7s up to %.7s)", args[i], a, b);
		for (k = 0; k < nr; k++)
			add_unique(out, n, range[k]);
		free(range);
	}
	return 0;
fail:
	free(*out);
	*out = NULL;
	*n = 0;
	return -1;
}

/* --- the runner --------------------------------------------------------------- */

/* The working directory relative to the work tree: "" at its top.  */
static char *relative_cwd(const char *worktree)
{
	char *cwd = fs_realpath("."), *top = fs_realpath(worktree), *rel;
	size_t n = top ? strlen(top) : 0;

	if (cwd && top && !strncmp(cwd, top, n) && (cwd[n] == '/' || !cwd[n]))
		rel = xstrdup(cwd[n] ? cwd + n + 1 : "");
	else
		rel = xstrdup("");
	free(cwd);
	free(top);
	return rel;
}

/* The name a revision's work tree is parked under between its turns.  */
static char *parked_path(const char *wt, size_t i)
{
	return xstrfmt("%s.r%zu", wt, i + 1);
}

/* Removes the parked work trees wt.rN a killed run left.  */
static void remove_parked(const char *wt)
{
	const char *slash = strrchr(wt, '/');
	char *dir = xstrfmt("%.*s", (int)(slash - wt), wt), *prefix = xstrfmt("%s.r", slash + 1);
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *path;
		if (strncmp(e->d_name, prefix, strlen(prefix)) ||
		    strspn(e->d_name + strlen(prefix), "0123456789") !=
			    strlen(e->d_name + strlen(prefix)))
			continue;
		path = xstrfmt("%s/%s", dir, e->d_name);
		fs_remove_tree(path);
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
	free(prefix);
}

int runner_init(struct runner *r, struct repo *repo)
{
	char *cache = cache_default_dir(), *base = NULL, *lock = NULL, id[SHA1_HEXSZ + 1];
	char *top = fs_realpath(repo->worktree);
	int fd, ret = -1;

	memset(r, 0, sizeof(*r));
	r->repo = repo;
	r->repeat = 1;
	r->interleave = 1;
	r->retries = RUN_DEFAULT_RETRIES;
	r->lock_fd = -1;
	r->subdir = relative_cwd(repo->worktree);
	if (!(r->tmp = fs_mkdtemp("perun-run")) || cache_check_dir(cache) < 0)
		goto out;
	/* one place per repository: the same path at every revision and every run
	 * keeps an unchanged binary byte for byte (its build-id and the script's
	 * paths), so the module cache hits */
	base = xstrfmt("%s/worktrees", cache);
	if ((fd = fs_open_private_dir(base, 0700)) < 0)
		goto out;
	close(fd);
	sha1_hex(top ? top : repo->worktree, strlen(top ? top : repo->worktree), id);
	r->wt = xstrfmt("%s/%.16s", base, id);
	lock = xstrfmt("%s.lock", r->wt);
	r->lock_fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r->lock_fd < 0) {
		pr_error_errno("cannot open %s", lock);
		goto out;
	}
	if (flock(r->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		/* another run of this repository works there: a place of our own,
		 * where the module cache cannot hit what changed path */
		char hex[17];
		close(r->lock_fd);
		r->lock_fd = -1;
		fs_random_hex(hex, 16);
		free(r->wt);
		r->wt = xstrfmt("%s/%.16s-%s", base, id, hex);
		pr_warn("another perun run of this repository holds %s.lock: this one works in %s, "
			"so its modules are compiled afresh",
			lock, r->wt);
	} else {
		/* left by a run of perun that was killed: only perun makes them */
		remove_parked(r->wt);
		if (fs_exists(r->wt))
			fs_remove_tree(r->wt);
	}
	ret = 0;
out:
	free(cache);
	free(base);
	free(lock);
	free(top);
	return ret;
}

void runner_release(struct runner *r)
{
	if (r->wt && r->lock_fd >= 0)
		fs_remove_tree(r->wt);
	if (r->tmp) {
		fs_remove_tree(r->tmp);
		free(r->tmp);
	}
	if (r->lock_fd >= 0)
		close(r->lock_fd);
	free(r->wt);
	free(r->subdir);
	memset(r, 0, sizeof(*r));
	r->lock_fd = -1;
}

/* Prints the last lines of the file path to stderr, indented.  */
static void print_tail(const char *path, size_t lines)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, seen = 0;

	if (strbuf_read_file(&sb, path) < 0 || !sb.len)
		goto out;
	for (i = sb.len; i > 0; i--)
		if (sb.buf[i - 1] == '\n' && i != sb.len && ++seen == lines)
			break;
	{
		const char *p = sb.buf + i, *nl;
		while (*p) {
			nl = strchr(p, '\n');
			fprintf(stderr, "    %.*s\n", (int)(nl ? nl - p : (long)strlen(p)), p);
			if (!nl)
				break;
			p = nl + 1;
		}
	}
out:
	strbuf_release(&sb);
}

/* Runs cmd with /bin/sh in dir, its output into log; the exit status as
 * waitpid gives it, or -1 (reported).  A signal perun receives meanwhile
 * is passed on as SIGTERM to the command's process group.  */
static int run_shell(const char *dir, const char *cmd, const char *log)
{
	pid_t pid;
	int status, fd, sent = 0;

	fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return pr_error_errno("cannot create %s", log);
	pid = fork();
	if (pid < 0) {
		close(fd);
		return pr_error_errno("fork");
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		if (chdir(dir) < 0)
			_exit(126);
		if (null >= 0)
			dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fd);
	/* its own process group, so that a signal to perun stops the whole build */
	setpgid(pid, pid);
	for (;;) {
		if (driver_signal_received() && !sent) {
			kill(-pid, SIGTERM);
			sent = 1;
		}
		if (waitpid(pid, &status, 0) >= 0)
			break;
		if (errno != EINTR)
			return pr_error_errno("waitpid");
	}
	return status;
}

static const char *status_desc(int status, char *buf, size_t n)
{
	if (WIFEXITED(status))
		snprintf(buf, n, "exit %d", WEXITSTATUS(status));
	else
		snprintf(buf, n, "signal %d", WTERMSIG(status));
	return buf;
}

/* What one collect gave.  */
enum collect_try {
	TRY_INTERRUPTED = -1,
	TRY_OK = 0,		/* the profile is written */
	TRY_FAILED,		/* the target, the options or the project failed: said */
	TRY_RUNTIME,		/* the runtime broke it, no profile: worth another try */
	TRY_INCOMPLETE,		/* the profile is written but the trace is incomplete:
				   worth another try */
};

/* Why the runtime, not the project, broke a collect that did not end well,
 * or NULL when it was the project (the target failed, a refused option, a
 * build of the script).  */
static const char *runtime_fault(const struct session *s)
{
	const struct run_result *res = &s->res;

	if (res->interrupted)
		return NULL;
	if (res->never_ready)
		return "the runtime ended before it armed its probes";
	if (res->runtime_died)
		return "the runtime died while the command ran";
	if (s->result.outcome == COLLECT_INCOMPLETE)
		return "the trace is incomplete (said above)";
	if (s->result.outcome == COLLECT_FAILED && res->target_known && res->target_exited &&
	    res->target_status == 0)
		return "the collect failed after the command ran well (said above)";
	return NULL;
}

/* One collect of job j in dir for origin: TRY_OK or TRY_INCOMPLETE with the
 * profile in *path (caller frees), TRY_RUNTIME with the reason in *why,
 * TRY_FAILED (said), TRY_INTERRUPTED.  */
static enum collect_try collect_one(struct runner *r, const char *dir, const char *origin,
				    const char *rev, size_t ji, unsigned k, char **path,
				    const char **why)
{
	const struct run_job *j = &r->jobs[ji];
	struct collect_opts o;
	struct session s;
	char **argv = xcalloc(j->trace.n + 1, sizeof(*argv)), *jobs, *base;
	int cwd_fd, status;
	enum collect_try ret = TRY_FAILED;

	memcpy(argv, j->trace.v, j->trace.n * sizeof(*argv));
	collect_opts_init(&o);
	*path = NULL;
	*why = NULL;
	if (collect_parse_trace((int)j->trace.n, argv, &o) != 0)
		goto out_opts;	/* checked when the jobs were read */
	o.cmd = j->cmd;
	o.args = j->args;
	o.workload = j->workload;
	o.quiet = !r->verbose;
	o.origin = origin;
	o.machine = r->machine;
	if (o.calibrate > 0)
		o.calibrate = -1;	/* a cached calibration only: no measuring between jobs */
	jobs = xstrfmt("%s/jobs", r->repo->dir);
	fs_mkdir_p(jobs, 0755);
	base = strrchr(j->cmd, '/') ? strrchr(j->cmd, '/') + 1 : j->cmd;
	*path = xstrfmt("%s/%s-trace-%.7s-job%zu-run%u-%d.perf", jobs, base, origin, ji + 1, k + 1,
			(int)getpid());
	free(jobs);
	o.output = *path;
	if (strchr(j->cmd, '/') && j->cmd[0] != '/') {
		/* the job runs in the revision's own checkout, not where perun run
		 * was started: an untracked binary of the working directory is not
		 * there */
		char *in = xstrfmt("%s/%s", dir, j->cmd);
		int missing = access(in, F_OK) < 0;
		free(in);
		if (missing) {
			pr_error("%s: job %zu (%s): %s: no such file in %s, the checkout of %s that "
				 "the job runs in: build it there with pre_run in .perun/local.yml",
				 rev, ji + 1, j->label, j->cmd, dir, rev);
			goto out_opts;
		}
	}
	cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd < 0 || chdir(dir) < 0) {
		pr_error_errno("%s: cannot enter %s", rev, dir);
		if (cwd_fd >= 0)
			close(cwd_fd);
		goto out_opts;
	}
	session_init(&s, &o);
	collect_pipeline(&s, COLLECT_UNTIL_PROFILE);
	/* as perun collect says it: --metrics, where the profile is (unless
	 * quiet), what the collect noted after it */
	collect_output_say_written(&s.result, o.quiet);
	status = collect_exit_code(&s.result);
	if (s.result.rescued) {
		struct strbuf sb = STRBUF_INIT;
		collect_output_rescued(&s.result, &sb);
		fputs(strbuf_str(&sb), stderr);
		strbuf_release(&sb);
	}
	if (status != EXIT_OK && !s.result.rescued)
		*why = runtime_fault(&s);
	session_release(&s);
	if (fchdir(cwd_fd) < 0)
		pr_error_errno("cannot return to the working directory");
	close(cwd_fd);
	if (driver_signal_received()) {
		r->interrupted = 1;
		ret = TRY_INTERRUPTED;
	} else if (status == EXIT_OK) {
		ret = TRY_OK;
	} else if (status == EXIT_INCOMPLETE) {
		ret = TRY_INCOMPLETE;
		if (!*why)
			*why = "the trace is incomplete (said above)";
	} else if (*why) {
		ret = TRY_RUNTIME;
	} else {
		pr_error("%s: job %zu (%s), run %u: the collect failed (exit %d, said above)", rev,
			 ji + 1, j->label, k + 1, status);
	}
out_opts:
	if (ret != TRY_OK && ret != TRY_INCOMPLETE && *path) {
		/* a failed collect may have left its file: it is ours */
		if (fs_exists(*path))
			unlink(*path);
		free(*path);
		*path = NULL;
	}
	collect_opts_release(&o);
	free(argv);
	return ret;
}

/* Records in the profile at path the attempts the runtime broke before it
 * (why[0..n)), as "retries": [{"attempt", "reason"}].  0, or -1 (reported).  */
static int note_retries(const char *path, const char *const *why, size_t n)
{
	struct profile p = {NULL};
	struct json_object *a;
	const char *json;
	size_t i;
	int ret = -1;

	if (profile_load(&p, path) < 0)
		goto out;
	a = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "attempt", json_object_new_int64((int64_t)i + 1));
		json_object_object_add(o, "reason", json_object_new_string(why[i]));
		json_object_array_add(a, o);
	}
	json_object_object_add(p.root, "retries", a);
	json = profile_to_json(&p);
	ret = fs_write_atomic(path, json, strlen(json), 0644);
out:
	profile_release(&p);
	return ret;
}

/* Collects run k of job ji, trying again what the runtime broke, up to
 * r->retries times: TRY_OK or TRY_INCOMPLETE (the last attempt's, said) with
 * the profile in *path, TRY_FAILED (said), TRY_INTERRUPTED.  */
static enum collect_try collect_retrying(struct runner *r, const char *dir, const char *origin,
					 const char *rev, size_t ji, unsigned k, char **path)
{
	const char **whys = xcalloc(r->retries + 1, sizeof(*whys));
	const struct run_job *j = &r->jobs[ji];
	enum collect_try c;
	unsigned a;

	for (a = 0;; a++) {
		c = collect_one(r, dir, origin, rev, ji, k, path, &whys[a]);
		if (c != TRY_RUNTIME && c != TRY_INCOMPLETE)
			break;
		if (a == r->retries) {
			if (c == TRY_RUNTIME)
				pr_error("%s: job %zu (%s), run %u: the collect failed %u time%s: %s",
					 rev, ji + 1, j->label, k + 1, a + 1, a ? "s" : "",
					 whys[a]);
			else
				pr_warn("%s: job %zu (%s), run %u: the profile is incomplete (events "
					"lost, said above)%s; registered all the same",
					rev, ji + 1, j->label, k + 1,
					a ? " after every retry" : "");
			break;
		}
		r->retried++;
		pr_warn("%s: job %zu (%s), run %u: %s: retry %u of %u", rev, ji + 1, j->label, k + 1,
			whys[a], a + 1, r->retries);
		if (*path) {
			unlink(*path);
			free(*path);
			*path = NULL;
		}
	}
	if (c == TRY_RUNTIME)
		c = TRY_FAILED;
	if ((c == TRY_OK || c == TRY_INCOMPLETE) && a && note_retries(*path, whys, a) < 0)
		pr_warn("%s: job %zu (%s), run %u: its retries are not recorded in the profile",
			rev, ji + 1, j->label, k + 1);
	free(whys);
	return c;
}

int run_postprocessors_from_matrix(const struct job_matrix *m, struct pp_opts **out, size_t *n)
{
	size_t i, j;
	int k;

	*out = xcalloc(m->npostprocessors ? m->npostprocessors : 1, sizeof(**out));
	*n = 0;
	for (i = 0; i < m->npostprocessors; i++) {
		const struct job_unit *u = &m->postprocessors[i];
		if ((k = pp_method_parse(u->name)) < 0) {
			pr_error("local.yml: unknown postprocessor '%s': regression_analysis, "
				 "regressogram or moving_average",
				 u->name);
			goto fail;
		}
		pp_opts_init(&(*out)[i], (enum pp_method)k);
		for (j = 0; j < u->nparams; j++) {
			struct strbuf err = STRBUF_INIT;
			if (pp_opts_set(&(*out)[i], u->params[j].key, u->params[j].value,
					u->params[j].key, &err) < 0) {
				pr_error("local.yml: postprocessor %s: %s", u->name, strbuf_str(&err));
				strbuf_release(&err);
				goto fail;
			}
		}
		(*n)++;
	}
	return 0;
fail:
	free(*out);
	*out = NULL;
	*n = 0;
	return -1;
}

/* Applies the runner's postprocessors to the profile at path, in place.
 * 0, or -1 (reported).  */
static int postprocess_one(struct runner *r, const char *path, const char *what)
{
	struct profile p = {NULL};
	const char *json;
	size_t i, nm, nf;
	int ret = -1;

	if (profile_load(&p, path) < 0)
		goto out;
	for (i = 0; i < r->npost; i++)
		if (postprocess_profile(&p, &r->post[i], what, &nm, &nf) < 0)
			goto out;
	json = profile_to_json(&p);
	if (fs_write_atomic(path, json, strlen(json), 0644) < 0)
		goto out;
	ret = 0;
out:
	profile_release(&p);
	return ret;
}

/* "abc1234", or "abc1234 (work tree)".  */
static void rev_name(const struct run_rev *v, const char *origin, char *buf, size_t n)
{
	snprintf(buf, n, "%.7s%s", origin, *v->sha ? "" : " (work tree)");
}

/* The commit profiles of v are registered for into origin: 0, or -1
 * (reported once: v->origin keeps what was found).  */
static int rev_origin(struct runner *r, struct run_rev *v, char origin[41])
{
	if (!*v->origin) {
		if (*v->sha)
			snprintf(v->origin, sizeof(v->origin), "%s", v->sha);
		else if (vcs_head(r->repo->worktree, v->origin) < 0)
			return pr_error("the work tree has no commit to register profiles for: "
					"commit once, or name revisions");
	}
	snprintf(origin, 41, "%s", v->origin);
	return 0;
}

/* Writes revision v into the work tree and runs pre_run there.  0 built,
 * 1 failed (said, counted), -1 a signal or no work tree (said).  */
static int rev_build(struct runner *r, struct run_rev *v, size_t index, size_t total)
{
	char origin[41], rev[64], desc[32];
	size_t i;

	r->at = index;
	v->reg = xcalloc(r->njobs ? r->njobs : 1, sizeof(*v->reg));
	for (i = 0; i < r->njobs; i++)
		strbuf_init(&v->reg[i], 0);
	if (rev_origin(r, v, origin) < 0) {
		v->failed = 1;
		r->failed++;
		return 1;
	}
	rev_name(v, origin, rev, sizeof(rev));
	if (r->progress)
		fprintf(stderr, "perun run: [%zu/%zu] %s\n", index + 1, total, rev);
	if (*v->sha) {
		if (vcs_export_tree(r->repo->worktree, v->sha, r->wt) < 0) {
			fs_remove_tree(r->wt);
			v->failed = 1;
			r->failed++;
			pr_error("%s: cannot write the revision into %s (said above)", rev, r->wt);
			return 1;
		}
		v->dir = *r->subdir ? xstrfmt("%s/%s", r->wt, r->subdir) : xstrdup(r->wt);
		if (!fs_exists(v->dir)) {
			pr_error("%s: the directory %s, where perun run was started, does not exist at "
				 "this revision: its jobs were not run",
				 rev, r->subdir);
			v->failed = 1;
			r->failed++;
			return 1;
		}
	} else {
		v->dir = fs_realpath(".");
	}
	for (i = 0; r->pre_run && i < r->pre_run->n; i++) {
		char *log = xstrfmt("%s/pre_run-%.7s-%zu.log", r->tmp, origin, i + 1);
		int st;
		if (r->progress)
			fprintf(stderr, "perun run: [%zu/%zu] %s: %s\n", index + 1, total, rev,
				r->pre_run->v[i]);
		st = run_shell(v->dir, r->pre_run->v[i], log);
		if (driver_signal_received()) {
			r->interrupted = 1;
			free(log);
			return -1;
		}
		if (st != 0) {
			if (st > 0)
				pr_error("%s: pre_run '%s' failed (%s): the jobs of this revision were "
					 "not run; its output ends:",
					 rev, r->pre_run->v[i], status_desc(st, desc, sizeof(desc)));
			print_tail(log, 15);
			unlink(log);
			free(log);
			v->failed = 1;
			r->failed++;
			return 1;
		}
		unlink(log);
		free(log);
	}
	v->built = 1;
	return 0;
}

/* Collects run k of every job of the built revision v, postprocesses and
 * registers each profile.  0, 1 something failed (said, counted), -1 a
 * signal.  */
static int rev_collect(struct runner *r, struct run_rev *v, unsigned k, size_t index,
		       size_t total)
{
	char origin[41], rev[64];
	size_t ji;
	int ret = 0;

	r->at = index;
	if (rev_origin(r, v, origin) < 0)
		return 1; /* read before the build */
	rev_name(v, origin, rev, sizeof(rev));
	for (ji = 0; ji < r->njobs; ji++) {
		char *path = NULL, hex[SHA1_HEXSZ + 1];
		size_t entry;
		enum collect_try c;
		if (r->progress)
			fprintf(stderr, "perun run: [%zu/%zu] %s: job %zu/%zu %s, run %u/%u\n",
				index + 1, total, rev, ji + 1, r->njobs, r->jobs[ji].label, k + 1,
				v->runs);
		c = collect_retrying(r, v->dir, origin, rev, ji, k, &path);
		if (c == TRY_INTERRUPTED)
			return -1;
		if (c == TRY_FAILED) {
			v->failed = 1;
			r->failed++;
			ret = 1;
			continue;
		}
		if (r->npost) {
			char *what = xstrfmt("%s: job %zu (%s), run %u", rev, ji + 1, r->jobs[ji].label,
					     k + 1);
			int pc = postprocess_one(r, path, what);
			free(what);
			if (pc < 0) {
				pr_error("%s: job %zu (%s), run %u: the postprocessors failed (said "
					 "above): the profile was not registered",
					 rev, ji + 1, r->jobs[ji].label, k + 1);
				unlink(path); /* ours: collect_one wrote it */
				free(path);
				v->failed = 1;
				r->failed++;
				ret = 1;
				continue;
			}
		}
		if (r->on_profile)
			r->on_profile(r->ctx, origin, ji, path);
		if (repo_register(r->repo, origin, 0, path, 0, &entry, hex) < 0) {
			pr_error("%s: job %zu (%s), run %u: the profile was not registered (said "
				 "above); it stays in %s",
				 rev, ji + 1, r->jobs[ji].label, k + 1, path);
			v->failed = 1;
			r->failed++;
			ret = 1;
		} else {
			strbuf_addf(&v->reg[ji], " %zu@i", entry);
			v->registered++;
			r->registered++;
		}
		free(path);
	}
	return ret;
}

/* Prints what v registered, one line per job, and removes its work tree
 * (wherever it is) and its state.  */
static void rev_finish(struct runner *r, struct run_rev *v)
{
	char origin[41];
	size_t ji;

	if (v->reg && *v->origin && rev_origin(r, v, origin) == 0)
		for (ji = 0; ji < r->njobs; ji++)
			if (v->reg[ji].len)
				printf("%.7s %s: registered%s\n", origin, r->jobs[ji].label,
				       v->reg[ji].buf);
	fflush(stdout);
	if (v->parked) {
		if (fs_remove_tree(v->parked) < 0)
			pr_error("%.7s: the temporary work tree %s could not be removed", v->sha,
				 v->parked);
	} else if (*v->sha && fs_exists(r->wt) && fs_remove_tree(r->wt) < 0) {
		pr_error("%.7s: the temporary work tree %s could not be removed", v->sha, r->wt);
	}
	for (ji = 0; v->reg && ji < r->njobs; ji++)
		strbuf_release(&v->reg[ji]);
	free(v->reg);
	free(v->parked);
	free(v->dir);
	v->reg = NULL;
	v->parked = NULL;
	v->dir = NULL;
	v->built = 0;
}

/* Moves the work tree of v aside (i its place in the run), or back.  0, or
 * -1 (reported).  */
static int park(struct runner *r, struct run_rev *v, size_t i)
{
	if (!*v->sha)
		return 0;
	v->parked = parked_path(r->wt, i);
	if (rename(r->wt, v->parked) < 0) {
		pr_error_errno("rename %s to %s", r->wt, v->parked);
		free(v->parked);
		v->parked = NULL;
		return -1;
	}
	return 0;
}

static int unpark(struct runner *r, struct run_rev *v)
{
	if (!v->parked)
		return 0;
	if (rename(v->parked, r->wt) < 0)
		return pr_error_errno("rename %s to %s", v->parked, r->wt);
	free(v->parked);
	v->parked = NULL;
	return 0;
}

/* The revisions back to back: build, its runs, removed.  */
static int rounds_back_to_back(struct runner *r, struct run_rev *revs, size_t n)
{
	size_t i;
	unsigned k;
	int b;

	for (i = 0; i < n; i++) {
		b = rev_build(r, &revs[i], i, n);
		for (k = 0; b == 0 && k < revs[i].runs; k++)
			if (rev_collect(r, &revs[i], k, i, n) < 0)
				b = -1;
		rev_finish(r, &revs[i]);
		if (b < 0)
			return -1;
	}
	return 0;
}

/* The revisions in rounds: all built (each parked), then run k of each in
 * turn, then removed.  */
static int rounds_interleaved(struct runner *r, struct run_rev *revs, size_t n)
{
	unsigned k, nrounds = 0;
	size_t i;
	int ret = 0;

	for (i = 0; i < n; i++)
		if (revs[i].runs > nrounds)
			nrounds = revs[i].runs;
	for (i = 0; i < n && !ret; i++) {
		int b = rev_build(r, &revs[i], i, n);
		if (b < 0 || (b == 0 && park(r, &revs[i], i) < 0))
			ret = -1;
		else if (b > 0 && *revs[i].sha && fs_exists(r->wt))
			fs_remove_tree(r->wt);
	}
	for (k = 0; k < nrounds && !ret; k++) {
		if (!r->quiet && nrounds > 1)
			fprintf(stderr, "perun run: round %u of %u\n", k + 1, nrounds);
		for (i = 0; i < n && !ret; i++) {
			if (!revs[i].built || k >= revs[i].runs)
				continue;
			if (unpark(r, &revs[i]) < 0 || rev_collect(r, &revs[i], k, i, n) < 0 ||
			    park(r, &revs[i], i) < 0)
				ret = -1;
		}
	}
	for (i = 0; i < n; i++)
		rev_finish(r, &revs[i]);
	return ret;
}

int run_rounds(struct runner *r, struct run_rev *revs, size_t n)
{
	size_t i, failed_revs = 0;
	int err;

	for (i = 0; i < n; i++) {
		revs[i].failed = 0;
		revs[i].registered = 0;
	}
	err = r->interleave && n > 1 ? rounds_interleaved(r, revs, n)
				     : rounds_back_to_back(r, revs, n);
	if (err < 0) {
		if (r->interrupted)
			pr_error("interrupted at revision %zu of %zu; %zu profile%s registered",
				 r->at + 1, n, r->registered, r->registered == 1 ? "" : "s");
		return -1;
	}
	for (i = 0; i < n; i++)
		failed_revs += revs[i].failed != 0;
	if (r->retried)
		pr_warn("%zu collect%s the runtime broke %s tried again (each said above)",
			r->retried, r->retried == 1 ? "" : "s", r->retried == 1 ? "was" : "were");
	if (failed_revs) {
		pr_error("%zu of %zu revision%s had a failure (named above); %zu profile%s "
			 "registered",
			 failed_revs, n, n == 1 ? "" : "s", r->registered,
			 r->registered == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

int run_revisions(struct runner *r, char (*revs)[41], size_t nrevs)
{
	size_t i, n = nrevs ? nrevs : 1;
	struct run_rev *v = xcalloc(n, sizeof(*v));
	int ret;

	for (i = 0; i < n; i++) {
		if (nrevs)
			snprintf(v[i].sha, sizeof(v[i].sha), "%s", revs[i]);
		v[i].runs = r->repeat;
	}
	ret = run_rounds(r, v, n);
	free(v);
	return ret;
}
