/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The phases before the module (analyse, strategy, pre-optimize, plan,
 * script), the session's life, and the pipeline that runs every phase in
 * order.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collect/session.h"
#include "plan/strategy.h"
#include "render/script.h"
#include "runtime/driver.h"
#include "runtime/kruntime.h"
#include "runtime/runtime.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"

void session_init(struct session *s, struct collect_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->t_start = collect_now();
	s->wd.t0 = s->t_start;
	s->cache_state = "off";
	s->result.outcome = COLLECT_FAILED;
	s->log.messages = json_object_new_array();
	s->log.quiet = o->quiet;
	s->log.detach_ms = -1;
	strbuf_init(&s->script, 0);
	strbuf_init(&s->log.all, 0);
}

void session_release(struct session *s)
{
	struct collect_opts *o = s->o;

	if (s->tmpdir) {
		if (o->zip_temps) {
			char *pd = repo_locate(), *logdir;
			char stamp[32];
			time_t now = time(NULL);
			struct tm tm;
			localtime_r(&now, &tm);
			strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
			logdir = pd ? xstrfmt("%s/logs", pd) : xstrdup("perun-logs");
			collect_zip_temps(s->tmpdir, logdir, stamp, o->quiet);
			free(pd);
			free(logdir);
		}
		if (s->wd.f)
			fclose(s->wd.f);
		if (o->keep_temps) {
			fs_keep_temp_dir(s->tmpdir);
			log_msg(0, "perun", "temp files kept in %s", s->tmpdir);
		} else
			fs_remove_tree(s->tmpdir);
		free(s->tmpdir);
	}
	if (s->cache_open)
		cache_close(&s->cache);
	target_release(&s->target);
	plan_release(&s->plan);
	collect_diff_release(s);
	free(s->selection_path);
	strbuf_release(&s->script);
	strbuf_release(&s->log.all);
	json_object_put(s->log.messages);
	strv_clear(&s->cmdv);
	free(s->tapset_text);
	free(s->module);
	free(s->raw);
	free(s->rec);
	free(s->attached_path);
	free(s->runtime_prog);
	free(s->uprobes);
	free(s->below_min);
	free(s->points);
	free(s->stepped);
	free(s->ret_insn);
	json_object_put(s->probes_j);
	json_object_put(s->pre_opt);
	free(s->stap);
	free(s->stapbpf);
	free(s->staprun);
	free(s->release);
	kruntime_release(&s->kr);
	free(s->cache_dir);
	free(s->result.output);
	strv_clear(&s->result.notes);
	memset(s, 0, sizeof(*s));
}

/* The runtime (--runtime, or auto) and the programs that run it.  */
static int choose_runtime(struct session *s)
{
	const char *why = NULL;
	int kernel_ok = kruntime_usable(&why);

	s->runtime = s->o->runtime;
	if (s->runtime == RUNTIME_AUTO) {
		s->runtime = kernel_ok ? RUNTIME_KERNEL : RUNTIME_BPF;
		/* a kernel without modules is a fact of the machine ('perun doctor' says
		 * it); a missing build tree has a fix worth repeating */
		int tell = !kernel_ok && access("/proc/modules", F_OK) == 0;
		if (!s->o->quiet && !s->o->script_only)
			pr_info("perun: runtime %s%s%s", runtime_name(s->runtime), tell ? ": " : "",
				tell ? why : "");
	} else if (s->runtime == RUNTIME_KERNEL && !s->o->script_only && !s->o->compile_only &&
		   !kruntime_can_load(&why)) {
		/* a build tree is needed only to compile: a cached module runs without */
		return pr_error("the kernel runtime cannot run here: %s; use --runtime bpf", why);
	}
	if (s->runtime == RUNTIME_KERNEL) {
		struct utsname u;
		uname(&u);
		s->release = xstrdup(s->o->kernel_release ? s->o->kernel_release : u.release);
		kruntime_select(&s->kr);
	}
	s->stap = runtime_find_program("PERUN_STAP", "stap", STAP_PATH);
	s->stapbpf = runtime_find_program("PERUN_STAPBPF", "stapbpf", STAPBPF_PATH);
	s->staprun = runtime_find_program("PERUN_STAPRUN", "staprun", STAPRUN_PATH);
	if (s->o->script_only)
		return 0;
	if ((s->runtime == RUNTIME_BPF && !s->stapbpf) ||
	    (s->runtime == RUNTIME_KERNEL && !s->staprun && !s->o->compile_only)) {
		char *msg = s->runtime == RUNTIME_BPF
				    ? runtime_program_missing("PERUN_STAPBPF", "stapbpf", STAPBPF_PATH,
							      "systemtap", NULL)
				    : runtime_program_missing("PERUN_STAPRUN", "staprun", STAPRUN_PATH,
							      "systemtap-runtime", NULL);
		pr_error("%s", msg);
		free(msg);
		return -1;
	}
	return 0;
}

/* The path under which perun reads and probes the binary process pid runs
 * (exe, as its /proc/PID/exe names it): exe itself when that is the same
 * file here, else the same path through /proc/PID/root (a process in
 * another mount namespace, a container: its path may name another file in
 * perun's, a decoy).  Refused when neither is the file the process runs.  */
static int attach_binary(struct session *s, const char *link, const char *exe)
{
	struct stat want, st;
	char *root;

	if (stat(link, &want) < 0)
		return pr_error_errno("%s", link);
	if (stat(exe, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino) {
		strv_push(&s->cmdv, exe);
		return 0;
	}
	root = xstrfmt("/proc/%ld/root%s", s->o->pid, exe);
	if (stat(root, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino) {
		if (!s->o->quiet)
			fprintf(stderr, "perun: process %ld runs %s of another mount namespace (%s "
					"is another file here): its binary is read and probed as %s\n",
				s->o->pid, exe, exe, root);
		strv_push(&s->cmdv, root);
		free(root);
		return 0;
	}
	free(root);
	s->result.outcome = COLLECT_REFUSED;
	return pr_error("process %ld runs a file that is not %s as perun sees it, nor through "
			"/proc/%ld/root: it was replaced since the process started, or is out of "
			"reach",
			s->o->pid, exe, s->o->pid);
}

/* --pid: the process's binary (its /proc/PID/exe) becomes the command that
 * is analysed and named in the profile; nothing is done to the process.  */
static int prepare_attach(struct session *s)
{
	char link[64], exe[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%ld/exe", s->o->pid);
	if (kill((pid_t)s->o->pid, 0) < 0 && errno == ESRCH) {
		s->result.outcome = COLLECT_REFUSED;
		return pr_error("--pid %ld: no such process", s->o->pid);
	}
	if (s->o->pid == (long)getpid() || s->o->pid == (long)getppid()) {
		s->result.outcome = COLLECT_REFUSED;
		return pr_error("--pid %ld is perun itself or its parent", s->o->pid);
	}
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n < 0) {
		s->result.outcome = errno == ENOENT ? COLLECT_REFUSED : COLLECT_FAILED;
		return pr_error("%s: %s (a kernel thread, or a process that already ended)", link,
				strerror(errno));
	}
	exe[n] = '\0';
	if (n > 10 && !strcmp(exe + n - 10, " (deleted)"))
		return pr_error("process %ld runs %s, which was replaced or removed since it "
				"started: its probes cannot be placed (restart it, or trace a "
				"newer process)",
				s->o->pid, exe);
	return attach_binary(s, link, exe);
}

/* Says why the command cmd cannot be run: a path names a file that is
 * missing or no program (where it looked, for a relative one), a name is in
 * no directory of PATH.  Returns -1.  */
static int command_missing(const char *cmd)
{
	struct stat st;
	char *cwd;
	int ret;

	if (!strchr(cmd, '/'))
		return pr_error("%s: command not found in PATH (give its path, e.g. ./%s)", cmd,
				cmd);
	if (stat(cmd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* a FIFO, a device: said as every reader of a binary says it,
		 * opened without blocking */
		int fd = fs_open_regular(cmd, 0, 1);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (stat(cmd, &st) == 0)
		return pr_error("%s: %s", cmd,
				S_ISDIR(st.st_mode) ? "is a directory" : "not executable");
	if (cmd[0] == '/')
		return pr_error("%s: no such file", cmd);
	cwd = fs_realpath(".");
	ret = pr_error("%s: no such file in %s", cmd, cwd ? cwd : "the working directory");
	free(cwd);
	return ret;
}

int collect_prepare(struct session *s)
{
	struct collect_opts *o = s->o;
	char *p;

	if (o->pid > 0) {
		if (prepare_attach(s) < 0)
			return -1;
		goto runtime;
	}
	strv_push(&s->cmdv, o->cmd);
	if (collect_split_words(o->args, &s->cmdv, "arguments") < 0 ||
	    collect_split_words(o->workload, &s->cmdv, "workload") < 0) {
		s->result.outcome = COLLECT_REFUSED;
		return -1;
	}
	p = fs_which(o->cmd);
	if (!p)
		return command_missing(o->cmd);
	s->cmdv.v[0] = (free(s->cmdv.v[0]), p);
runtime:
	if (choose_runtime(s) < 0)
		return -1;
	if (!o->script_only) {
		s->tmpdir = fs_mkdtemp("perun-collect");
		if (!s->tmpdir)
			return -1;
		if (o->watchdog) {
			p = xstrfmt("%s/watchdog.log", s->tmpdir);
			s->wd.f = fopen(p, "wxe");
			free(p);
		}
	}
	return 0;
}

int collect_analyse(struct session *s)
{
	struct collect_opts *o = s->o;

	s->cache_dir = cache_default_dir();
	if (!o->cache_off && cache_check_dir(s->cache_dir) < 0)
		return -1;
	if (o->opt.reset_cache && collect_reset_optimization_cache(s) < 0)
		return -1;
	/* the binary's analysis is what the optimization resources (call graph,
	 * CFG) are made of: --optimization-cache-off reads it afresh */
	if (target_load(&s->target, o->binary ? o->binary : s->cmdv.v[0],
			o->cache_off || o->opt.cache_off ? NULL : s->cache_dir) < 0)
		return -1;
	if (s->target.syms == TARGET_SYMS_DEBUGINFO)
		pr_info("perun: %s is stripped: its functions come from its debuginfo %s",
			s->target.path, s->target.debug_path);
	else if (s->target.syms == TARGET_SYMS_MINIDEBUGINFO)
		pr_info("perun: %s is stripped: its functions come from its MiniDebugInfo "
			"(.gnu_debugdata), placed by symbol",
			s->target.path);
	collect_wd(&s->wd, "target: %s, %zu functions, %zu USDT notes, build-id %s",
		   s->target.path, s->target.nfuncs, s->target.nusdts,
		   s->target.build_id[0] ? s->target.build_id : "none");
	return 0;
}

/* The strategy's options, from the collect's.  */
static void strategy_opts_of(struct session *s, struct strategy_opts *so)
{
	struct collect_opts *o = s->o;

	*so = (struct strategy_opts){
		.strategy = o->strategy,
		.funcs = o->funcs.v,
		.nfuncs = o->funcs.n,
		.usdts = o->usdts.v,
		.nusdts = o->usdts.n,
		.dyns = o->dyns.v,
		.ndyns = o->dyns.n,
		.global_sampling = o->global_sampling,
		.with_usdt = o->with_usdt,
		.include = o->include,
		.exclude = o->exclude,
		.cache_dir = o->cache_off ? NULL : s->cache_dir,
		.entry_only = o->entry_only,
	};
}

void collect_returns_fallback(struct session *s)
{
	struct strategy_opts so;

	if (!s->returns_exact)
		return;
	s->returns_exact = 0;
	strategy_opts_of(s, &so);
	strategy_entry_only(&s->plan, &s->target, &so);
}

int collect_strategy(struct session *s)
{
	struct collect_opts *o = s->o;
	struct strategy_opts so;

	strategy_opts_of(s, &so);
	/* perun's loader probes return instructions where unwinding could
	 * meet them: C++ exceptions and longjmp need no entry-only there */
	so.returns_exact = s->returns_exact = !o->script_only && collect_loader_expected(s);
	if (strategy_build(&s->plan, &s->target, &so) < 0)
		return -1;
	if (o->aggregate) {
		/* the summaries count every call (as the stap script always
		 * did): a profile that said "sampled" would claim what it is not */
		size_t i, n = 0;
		for (i = 0; i < s->plan.n; i++)
			if (s->plan.probes[i].sampling > 1) {
				s->plan.probes[i].sampling = 1;
				n++;
			}
		if (n)
			pr_info("perun: --aggregate counts and times every call: per-function "
				"sampling (NAME#N, -g) does not apply to the %zu probe%s that "
				"asked for it",
				n, n == 1 ? "" : "s");
	}
	return 0;
}

int collect_script(struct session *s)
{
	char *tp = xstrfmt("%s/templates", runtime_datadir());
	char *ts = xstrfmt("%s/tapsets/perun.stp", runtime_datadir());
	struct strbuf tb = STRBUF_INIT;
	int r;

	/* what each entry probe's breakpoint costs (module.c places them) */
	calibrate_plan_entries(&s->plan, !s->target.go);
	if (s->sopt.budget_stepped_ns) {	/* --max-overhead: which probes cost a step more */
		free(s->stepped);
		s->stepped = plan_stepped(&s->plan);
		s->sopt.budget_stepped = s->stepped;
		s->sopt.budget_nstepped = s->stepped ? s->plan.n : 0;
	}
	/* the kernel runtime's relay drops output when full: count per probe
	 * what was printed, so the parser can say per function what it lost */
	s->sopt.count_sent = s->runtime == RUNTIME_KERNEL;
	/* the kernel runtime follows children in the script itself */
	s->sopt.follow = s->o->follow && s->runtime == RUNTIME_KERNEL;
	/* made again when the runtime's choice changed the plan or the cost */
	strbuf_reset(&s->script);
	r = script_generate_opt(&s->plan, tp, collect_script_mode(s),
				collect_recorder_slots(s->o->buffer_size), &s->sopt, &s->script);
	if (r == 0 && strbuf_read_file(&tb, ts) < 0)
		r = pr_error_errno("tapset %s (set PERUN_DATADIR or reinstall perun)", ts);
	free(s->tapset_text);
	s->tapset_text = strbuf_detach(&tb);
	free(tp);
	free(ts);
	if (r < 0)
		return -1;
	collect_wd(&s->wd, "plan: %zu probes, %zu probe points, script %zu bytes", s->plan.n,
		   plan_probe_points(&s->plan), s->script.len);
	return 0;
}

enum collect_outcome collect_pipeline(struct session *s, enum collect_until until)
{
	static int (*const before_trace[])(struct session *) = {
		collect_prepare, collect_analyse, collect_strategy, collect_pre_optimize,
		collect_budget,	 collect_select,  collect_script,
	};
	size_t i;
	int again;

	s->result.outcome = COLLECT_FAILED;
	target_set_cancel(driver_signal_received);
	for (i = 0; i < sizeof(before_trace) / sizeof(before_trace[0]); i++) {
		int err = before_trace[i](s);
		/* a signal ends a collect before anything is attached: a
		 * blocking call it interrupted (a debuginfod download, a FIFO
		 * swapped in) must not let the next phase go on */
		if (driver_signal_received()) {
			pr_error("interrupted by signal %d before the trace started: nothing "
				 "was traced",
				 driver_signal_received());
			s->result.outcome = COLLECT_SIGNALED;
			s->result.signal = driver_signal_received();
			return s->result.outcome;
		}
		if (err < 0)
			return s->result.outcome;
	}
	if (until == COLLECT_UNTIL_SCRIPT)
		return s->result.outcome = COLLECT_OK;
	if (collect_loader(s) < 0)
		return s->result.outcome;
	again = collect_budget_loader(s);
	/* the strategy counted on perun's loader for its return probes, and
	 * stap runs: the plan and the script as for stap */
	if (!s->uprobes && s->returns_exact) {
		collect_returns_fallback(s);
		again = again < 0 ? again : 1;
	}
	if (again < 0 || (again > 0 && collect_script(s) < 0))
		return s->result.outcome;
	if (!s->uprobes && collect_module(s) < 0) {
		if (driver_signal_received()) {
			s->result.outcome = COLLECT_SIGNALED;
			s->result.signal = driver_signal_received();
		}
		return s->result.outcome;
	}
	if (until == COLLECT_UNTIL_MODULE)
		return s->result.outcome = COLLECT_OK;
	if (collect_run(s) < 0)
		return s->result.outcome;
	return collect_profile(s);
}

int collect_build_module(int argc, char **argv, const char *kernel_release,
			 struct collect_opts *o, struct session *s)
{
	int ret;

	/* as if the trace options ended in --compile-only [--kernel-release R]:
	 * checked with the others, and R over a -r given */
	o->compile_only = 1;
	if (kernel_release)
		o->kernel_release = kernel_release;
	ret = collect_args_parse(argc, argv, o);
	o->compile_only = 1;
	if (kernel_release)
		o->kernel_release = kernel_release;
	session_init(s, o);
	if (ret)
		return ret;
	if (o->script_only) {
		fprintf(stderr, "perun cache build: --script-only builds no module: use perun "
				"collect --script-only\n");
		return EXIT_USAGE;
	}
	driver_install_signals();
	if (o->quiet)
		log_level = 0;
	collect_pipeline(s, COLLECT_UNTIL_MODULE);
	return collect_exit_code(&s->result);
}

int collect_exit_code(const struct collect_result *r)
{
	switch (r->outcome) {
	case COLLECT_OK:
		return EXIT_OK;
	case COLLECT_INCOMPLETE:
		return EXIT_INCOMPLETE;
	case COLLECT_REFUSED:
		return EXIT_USAGE;
	case COLLECT_SIGNALED:
		return EXIT_SIGNAL_BASE + r->signal;
	case COLLECT_FAILED:
		break;
	}
	return EXIT_FAIL;
}
