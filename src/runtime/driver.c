/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "driver"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/bpfmap.h"
#include "runtime/driver.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Seconds between SIGTERM and SIGKILL.  */
#define GRACE_SECONDS 2.0
/* A runtime that shows work after it was asked to stop (it runs, waits in
 * the kernel, writes, detaches) gets this much beyond its stop grace
 * before it is killed anyway.  */
#define STOP_CAP_SECONDS 300.0

/* The last SIGINT/SIGTERM perun received; set by the handler only.  */
static volatile sig_atomic_t got_signal;
/* Write end of the self-pipe that wakes the poll loop on a signal.  */
static int signal_pipe_w = -1;

static void on_signal(int sig)
{
	int saved = errno;

	got_signal = sig;
	if (signal_pipe_w >= 0) {
		ssize_t ignored = write(signal_pipe_w, "s", 1);
		(void)ignored;
	}
	errno = saved;
}

void driver_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int driver_signal_received(void)
{
	return got_signal;
}

const char *driver_uprobe_events_path(void)
{
	static const char *const paths[] = { "/sys/kernel/tracing/uprobe_events",
					     "/sys/kernel/debug/tracing/uprobe_events", NULL };
	size_t i;

	for (i = 0; paths[i]; i++)
		if (access(paths[i], F_OK) == 0)
			return paths[i];
	return NULL;
}

static int own_uprobes(pid_t pid, struct strbuf *keep);

int driver_remove_uprobes(pid_t pid)
{
	const char *path = driver_uprobe_events_path();
	struct strbuf sb = STRBUF_INIT;
	char *line, *save = NULL;
	int n = 0;

	if (!path || !own_uprobes(pid, &sb)) {
		strbuf_release(&sb);
		return 0;
	}
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *name = strchr(line, ':'), *sp;
		int fd;
		if (!name || !(sp = strchr(name, ' ')))
			continue;
		*sp = '\0';
		name++;	/* group/event */
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			char *cmd = xstrfmt("-:%s\n", name);
			if (write(fd, cmd, strlen(cmd)) > 0)
				n++;
			free(cmd);
			close(fd);
		}
	}
	strbuf_release(&sb);
	return n;
}

/* The uprobe events of the runtime pid (their event name holds
 * /stapprobe_PID_): how many, and their lines appended to keep (or NULL).
 * stapbpf removes its own one by one as it detaches.  uprobe_events is
 * read a page at a time, each read starting at a line number: when another
 * tracer removes events listed earlier between two reads, the next one
 * starts that many lines too far and skips lines of ours (concurrent
 * collects said probes they had traced had not attached).  So the list is
 * read again until one read shows every line of ours that any read showed.  */
static int own_uprobes(pid_t pid, struct strbuf *keep)
{
	const char *path = driver_uprobe_events_path();
	struct strbuf sb = STRBUF_INIT, seen = STRBUF_INIT;
	char prefix[64];
	int n = 0, round;

	snprintf(prefix, sizeof(prefix), "/stapprobe_%d_", (int)pid);
	strbuf_addch(&seen, '\n');
	for (round = 0; path && round < 10; round++) {
		char *line, *save = NULL;
		int shown = 0;
		strbuf_reset(&sb);
		if (strbuf_read_file(&sb, path) < 0)
			break;
		for (line = strtok_r(sb.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *sp = strchr(line, ' '), *hit = strstr(line, prefix), *at;
			size_t len = strlen(line);
			if (!hit || !sp || hit > sp)
				continue;
			shown++;
			for (at = strstr(seen.buf, line); at; at = strstr(at + 1, line))
				if (at[-1] == '\n' && at[len] == '\n')
					break;
			if (!at) {
				strbuf_addf(&seen, "%s\n", line);
				n++;
			}
		}
		if (round > 0 && shown == n)
			break;
	}
	if (keep)
		strbuf_addstr(keep, seen.buf + 1);
	strbuf_release(&sb);
	strbuf_release(&seen);
	return n;
}

int driver_save_uprobes(pid_t pid, const char *out)
{
	struct strbuf keep = STRBUF_INIT;
	int n = own_uprobes(pid, &keep);

	if (fs_write_atomic(out, strbuf_str(&keep), keep.len, 0600) < 0)
		n = -1;
	strbuf_release(&keep);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads up to n - 1 bytes of a small file (a /proc entry) into buf, NUL
 * terminated; returns the length, or -1.  */
static ssize_t read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -1;
	len = read(fd, buf, n - 1);
	close(fd);
	if (len >= 0)
		buf[len] = '\0';
	return len;
}

/* Every process whose ancestry reaches root, found through /proc.  */
static size_t descendants(pid_t root, pid_t *out, size_t max)
{
	pid_t pids[4096], ppids[4096];
	size_t n = 0, k = 0, i, changed = 1;
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < 4096) {
		char path[300], buf[512], *rp;
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		rp = strrchr(buf, ')');
		if (!rp)
			continue;
		pids[n] = (pid_t)atoi(de->d_name);
		ppids[n] = (pid_t)atoi(rp + 4);	/* ") S PPID" */
		n++;
	}
	closedir(d);
	while (changed) {
		changed = 0;
		for (i = 0; i < n; i++) {
			size_t j;
			int known = 0, parent_in = ppids[i] == root;
			for (j = 0; j < k; j++) {
				if (out[j] == pids[i])
					known = 1;
				if (out[j] == ppids[i])
					parent_in = 1;
			}
			if (!known && parent_in && k < max) {
				out[k++] = pids[i];
				changed = 1;
			}
		}
	}
	return k;
}

static void signal_tree(pid_t self, pid_t except, int sig)
{
	pid_t d[1024];
	size_t i, n = descendants(self, d, 1024);

	for (i = 0; i < n; i++)
		if (d[i] != except)
			kill(d[i], sig);
}

/* Adds the children of every thread of pid that seen[] does not hold yet;
 * returns how many there are now (seen keeps the first max).  */
static size_t note_children(pid_t pid, pid_t *seen, size_t n, size_t max, size_t *total)
{
	char path[64];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return n;
	while ((de = readdir(d))) {
		char cp[300], buf[1024], *tok, *save = NULL;
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(cp, sizeof(cp), "/proc/%d/task/%s/children", (int)pid, de->d_name);
		if (read_small(cp, buf, sizeof(buf)) <= 0)
			continue;
		for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			pid_t c = (pid_t)atoi(tok);
			size_t i;
			for (i = 0; i < n && seen[i] != c; i++)
				;
			if (i < n)
				continue;
			(*total)++;
			if (n < max)
				seen[n++] = c;
		}
	}
	closedir(d);
	return n;
}

/* A selection file (--one-module): "slots N", then one probe id per line;
 * *ids (caller frees) gets the ids.  */
static int read_selection(const char *path, unsigned long long *slots, uint64_t **ids, size_t *n,
			  struct bpfmap_err *err)
{
	FILE *f = fopen(path, "r");
	unsigned long long id;
	size_t alloc = 0;

	*ids = NULL;
	*n = 0;
	if (!f || fscanf(f, "slots %llu", slots) != 1) {
		snprintf(err->msg, sizeof(err->msg), "%s: %s", path,
			 f ? "no slots line" : strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	while (fscanf(f, "%llu", &id) == 1) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			*ids = xrealloc(*ids, alloc * sizeof(**ids));
		}
		(*ids)[(*n)++] = id;
	}
	fclose(f);
	return 0;
}

/* The loaded module staprun -R named for runtime pid: "PREFIX..._PID"
 * (staprun shortens the name before the suffix), or NULL; caller frees.  */
static char *loaded_module(const char *prefix, long pid)
{
	struct strbuf sb = STRBUF_INIT;
	char *line, *save = NULL, *found = NULL, suffix[32];
	size_t n = strlen(prefix), ns;

	snprintf(suffix, sizeof(suffix), "_%ld", pid);
	ns = strlen(suffix);
	if (strbuf_read_file(&sb, "/proc/modules") < 0)
		return NULL;
	for (line = strtok_r(sb.buf, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strcspn(line, " ");
		if (len > n + ns && !strncmp(line, prefix, n) && !strncmp(line + len - ns, suffix, ns))
			found = xstrfmt("%.*s", (int)len, line);
	}
	strbuf_release(&sb);
	return found;
}

/* The kernel runtime: each id written to the module's
 * /proc/systemtap/NAME/perun_sel, one per write.  */
static int fill_selection_procfs(const struct run_spec *spec, pid_t rt, const uint64_t *ids,
				 size_t n, struct bpfmap_err *err)
{
	char *name = loaded_module(spec->module_prefix, (long)rt), *proc;
	size_t i;
	int fd, ret = -1;

	if (!name) {
		snprintf(err->msg, sizeof(err->msg), "the loaded module %s_%ld was not found",
			 spec->module_prefix, (long)rt);
		return -1;
	}
	proc = xstrfmt("/proc/systemtap/%s/perun_sel", name);
	fd = open(proc, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err->msg, sizeof(err->msg), "%s: %s", proc, strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++) {
		char buf[32];
		int len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)ids[i]);
		if (write(fd, buf, (size_t)len) != len) {
			snprintf(err->msg, sizeof(err->msg), "%s: %s", proc, strerror(errno));
			goto out;
		}
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(proc);
	free(name);
	return ret;
}

/* --one-module: the runtime rt's selection (its bpf map, or the kernel
 * module's procfs file) from spec->selection_path; says why not.  */
static int fill_selection(const struct run_spec *spec, pid_t rt)
{
	struct bpfmap_err err = { "" };
	unsigned long long slots;
	uint64_t *ids;
	size_t n;
	int r = read_selection(spec->selection_path, &slots, &ids, &n, &err);

	if (r == 0)
		r = spec->module_prefix ? fill_selection_procfs(spec, rt, ids, n, &err)
					: bpfmap_fill_selection(rt, slots, ids, n, &err);
	free(ids);
	if (r == 0)
		return 0;
	fprintf(stderr, "perun: cannot fill the probe selection of the module (%s): %s; "
			"collect without --one-module\n",
		spec->selection_path, err.msg);
	return -1;
}

/* 1 when path holds a line that is exactly "r".  */
static int ready_seen(const char *path)
{
	char buf[4096];

	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	return !strncmp(buf, "r\n", 2) || strstr(buf, "\nr\n") != NULL;
}

static void reset_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
}

/* The target: set up its output, wait for the go byte, exec.  */
static _Noreturn void target_child(const struct run_spec *spec, int go, int capw)
{
	char c;

	reset_signals();
	if (spec->output_mode && !strcmp(spec->output_mode, "suppress")) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
	} else if (capw >= 0) {
		dup2(capw, 1);
		dup2(capw, 2);
	}
	if (read(go, &c, 1) != 1)
		_exit(125);	/* never released: the run was abandoned */
	close(go);
	execvp(spec->target_argv[0], spec->target_argv);
	fprintf(stderr, "perun: cannot run %s: %s\n", spec->target_argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static pid_t start_runtime(const struct run_spec *spec, int errw, pid_t target)
{
	pid_t pid = fork();
	char pidbuf[32], **argv;
	size_t i, n = 0;

	if (pid != 0)
		return pid;
	reset_signals();
	{
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if (errw >= 0)
		dup2(errw, 2);
	if (spec->stdout_null) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0 && fd != 1) {
			dup2(fd, 1);
			close(fd);
		}
	}
	if (spec->stdout_to_stderr)
		dup2(2, 1);
	if (spec->cwd && chdir(spec->cwd) < 0)
		_exit(126);
	for (i = 0; spec->env_extra && spec->env_extra[i]; i++)
		putenv(spec->env_extra[i]);
	while (spec->argv[n])
		n++;
	argv = xcalloc(n + 1, sizeof(*argv));
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)target);
	for (i = 0; i < n; i++)
		argv[i] = strcmp(spec->argv[i], DRIVER_PID_ARG) ? spec->argv[i] : pidbuf;
	execv(argv[0], argv);
	fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Kernel runtime: when the module staprun -R loaded (module_prefix..._PID)
 * is still loaded after staprun ended, removes it with cleanup_argv.  */
static void remove_module(const struct run_spec *spec, pid_t rt)
{
	char *name = loaded_module(spec->module_prefix, (long)rt), *argv[32];
	pid_t p;
	size_t i;

	if (!name)
		return;
	for (i = 0; spec->cleanup_argv[i] && i < 31; i++)
		argv[i] = strcmp(spec->cleanup_argv[i], DRIVER_MOD_ARG) ? spec->cleanup_argv[i] : name;
	argv[i] = NULL;
	p = fork();
	if (p == 0) {
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		reset_signals();
		execv(argv[0], argv);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
	free(name);
}

enum phase { P_READY, P_RUN, P_STOP, P_KILL, P_DONE };

/* What the supervisor sends back fits one atomic pipe write.  */
_Static_assert(sizeof(struct run_result) <= PIPE_BUF, "struct run_result exceeds PIPE_BUF");

/* The supervisor's state: the run's processes, its phase, and the times
 * that move it on.  Times are now_s() seconds; 0 is "not set".  */
struct sup {
	const struct run_spec *spec;
	enum phase phase;
	pid_t self, rt, tg;	/* the supervisor, the runtime, the target (-1: none) */
	int ctl;		/* perun's control pipe: 'i' Ctrl-C, 'd' dead runtime, EOF */
	int go;			/* write end of the target's go pipe, or -1 */
	int pidfd;		/* an attached process, or -1 */
	double t;		/* now, at this turn of the loop */
	double t_rt;		/* the runtime started */
	double t_release;	/* the target released; then how long it ran */
	double ready_s;		/* the runtime took this long to be ready */
	double ready_by;	/* P_READY gives up here */
	double deadline;	/* P_RUN: the timeout, or the Ctrl-C grace */
	double kill_at;		/* P_STOP: SIGKILL everything here */
	double tg_kill_at;	/* P_STOP: SIGKILL a target that ignored SIGTERM */
	double stop_grace;	/* how long a runtime may take to stop */
	double next_size_check;
	double t_stop, t_rt_end;	/* an attach: SIGINT to the runtime, its end */
	double t_asked;		/* the runtime was asked to stop (P_STOP began) */
	double stop_cap;	/* P_STOP: not beyond this, whatever work it shows */
	double killed_at_stop;	/* see struct run_result */
	int rt_status, rt_done, tg_status, tg_done;
	int orphaned;		/* perun is gone: end everything */
	int timed_out, interrupted, never_ready, tg_termed;
	int rt_first;		/* the runtime ended before the target */
	int rt_died;		/* the runtime failed while the target ran */
	int before_stop;	/* spec->before_stop's result, or -1 */
	int target_gone, detached;
	int nuprobes;		/* the runtime's uprobe events at the last check */
	off_t out_size;		/* the ready file's size at the last check */
	pid_t kids[64];		/* children of the target seen so far */
	size_t nkids, forked;
};

/* P_STOP begins: the runtime has stop_grace to end, and more while it
 * shows work (sup_stopping), up to the cap.  */
static void sup_enter_stop(struct sup *s)
{
	s->phase = P_STOP;
	s->t_asked = s->t;
	s->kill_at = s->t + s->stop_grace;
	s->stop_cap = s->t + s->stop_grace + STOP_CAP_SECONDS;
}

static void sup_close_go(struct sup *s)
{
	if (s->go >= 0)
		close(s->go);
	s->go = -1;
}

/* Stops the runtime with SIGINT (it runs its end probe and flushes), and
 * kills everything if it has not ended by the stop grace.  */
static void sup_stop_runtime(struct sup *s)
{
	kill(s->rt, SIGINT);
	sup_enter_stop(s);
}

/* Forks the target (held until the go byte) and starts the runtime.  */
static void sup_start(struct sup *s, int stw, int errw, int capw)
{
	const struct run_spec *spec = s->spec;
	int go[2];

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGINT, SIG_IGN);	/* a terminal's Ctrl-C reaches the run itself */
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (spec->target_argv) {
		if (pipe2(go, O_CLOEXEC) < 0)
			_exit(126);
		s->tg = fork();
		if (s->tg < 0)
			_exit(126);
		if (s->tg == 0) {
			close(go[1]);
			close(s->ctl);
			close(stw);
			if (errw >= 0)
				close(errw);
			target_child(spec, go[0], capw);
		}
		close(go[0]);
		s->go = go[1];
	}
	if (capw >= 0)
		close(capw);
	if (spec->attach_pid > 0)
		s->pidfd = (int)syscall(SYS_pidfd_open, spec->attach_pid, 0);
	s->t_rt = now_s();
	s->rt = start_runtime(spec, errw, spec->attach_pid > 0 ? spec->attach_pid : s->tg);
	if (s->rt < 0)
		_exit(126);
	if (errw >= 0)
		close(errw);
}

/* Reaps what ended: the runtime, the target, orphans the target left
 * (reparented to the subreaper).  1 when every process of the run is gone.  */
static int sup_reap(struct sup *s)
{
	pid_t p;
	int st, gone;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == s->rt) {
			s->rt_status = st;
			s->rt_done = 1;
			s->t_rt_end = now_s();
		} else if (p == s->tg) {
			s->tg_status = st;
			s->tg_done = 1;
			if (s->t_release > 0)
				s->t_release = now_s() - s->t_release;
		} else {
			size_t i;
			for (i = 0; i < s->nkids && s->kids[i] != p; i++)
				;
			if (i == s->nkids)
				s->forked++;
		}
	}
	gone = p < 0 && errno == ECHILD;
	/* the target's own children run untraced: count them, to say so */
	if (s->phase == P_RUN && s->tg > 0 && !s->tg_done)
		s->nkids = note_children(s->tg, s->kids, s->nkids, 64, &s->forked);
	return gone;
}

/* perun is gone (its end of the control pipe closed): end everything.  */
static void sup_orphaned(struct sup *s)
{
	s->orphaned = 1;
	sup_close_go(s);
	if (s->spec->module_prefix && !s->rt_done) {
		/* staprun unloads its module on SIGTERM; SIGKILL would leave it
		 * loaded */
		signal_tree(s->self, s->rt, SIGKILL);
		kill(s->rt, SIGTERM);
		s->phase = P_STOP;
		s->kill_at = s->t + s->stop_grace;
	} else {
		signal_tree(s->self, 0, SIGKILL);
		s->phase = P_KILL;
	}
}

/* Ctrl-C: release nothing more, stop the target (or detach), and give the
 * run two grace times to end.  */
static void sup_interrupt(struct sup *s)
{
	s->interrupted = 1;
	if (s->phase == P_READY) {
		sup_close_go(s);
		sup_stop_runtime(s);
	} else if (s->tg > 0 && !s->tg_done) {
		kill(s->tg, SIGINT);
	} else if (s->spec->attach_pid > 0 && s->phase == P_RUN) {
		/* detach; a second Ctrl-C kills the runtime */
		sup_stop_runtime(s);
		s->t_stop = now_s();
		s->t_release = s->t_release > 0 ? now_s() - s->t_release : 0;
	} else {
		kill(s->rt, SIGINT);
	}
	if (!s->deadline || s->deadline > s->t + 2 * GRACE_SECONDS)
		s->deadline = s->t + 2 * GRACE_SECONDS;
}

/* One byte from perun, or its end.  */
static void sup_control(struct sup *s)
{
	char c;

	if (read(s->ctl, &c, 1) <= 0) {
		sup_orphaned(s);
	} else if (c == 'i' && s->phase == P_STOP && s->interrupted) {
		/* a second Ctrl-C: do not wait for the detach */
		signal_tree(s->self, 0, SIGKILL);
		s->phase = P_KILL;
	} else if (c == 'd') {
		/* the runtime said it can no longer deliver events: stop the
		 * target rather than run it untraced */
		if (s->phase == P_RUN && s->tg > 0 && !s->tg_done) {
			s->rt_died = s->rt_first = 1;
			kill(s->tg, SIGTERM);
			s->tg_kill_at = s->t + GRACE_SECONDS;
			sup_stop_runtime(s);
		}
	} else if (c == 'i') {
		sup_interrupt(s);
	}
}

/* P_READY: release the target once the runtime says it is attached; give
 * up if it ends or takes too long.  */
static void sup_ready(struct sup *s)
{
	const struct run_spec *spec = s->spec;

	if (s->rt_done) {
		s->never_ready = 1;
		sup_close_go(s);
		s->phase = P_KILL;
	} else if (ready_seen(spec->ready_path)) {
		if (spec->attached_path)
			driver_save_uprobes(s->rt, spec->attached_path);
		if (spec->selection_path && fill_selection(spec, s->rt) < 0) {
			s->never_ready = 1;
			sup_close_go(s);
			s->phase = P_KILL;
			return;
		}
		s->t_release = now_s();
		s->ready_s = s->t_release - s->t_rt;
		if (spec->ready_message || spec->ready_message_fn) {
			char *m = spec->ready_message_fn
					  ? spec->ready_message_fn(spec->ready_ctx, s->ready_s)
					  : NULL;
			const char *say = m ? m : spec->ready_message;
			ssize_t ignored = say ? write(2, say, strlen(say)) : 0;
			(void)ignored;
			free(m);
		}
		if (s->go >= 0 && write(s->go, "g", 1) != 1)
			s->never_ready = 1;
		sup_close_go(s);
		s->phase = P_RUN;
		if (spec->timeout > 0)
			s->deadline = s->t + spec->timeout;
	} else if (s->t >= s->ready_by) {
		s->never_ready = 1;
		sup_close_go(s);
		kill(s->rt, SIGTERM);
		s->phase = P_STOP;
		s->kill_at = s->t + GRACE_SECONDS;
	}
}

/* P_RUN of an attach: detach when the process ends or the timeout comes.  */
static void sup_run_attached(struct sup *s)
{
	struct pollfd pp = { s->pidfd, POLLIN, 0 };

	if (s->rt_done)
		s->phase = P_DONE;
	else if (s->pidfd >= 0 && poll(&pp, 1, 0) > 0)
		s->target_gone = 1;
	else if (s->deadline && s->t >= s->deadline)
		s->detached = 1;
	else
		return;
	if (!s->rt_done) {
		sup_stop_runtime(s);
		s->t_stop = now_s();
	}
	s->t_release = s->t_release > 0 ? now_s() - s->t_release : 0;
}

/* P_RUN: stop the runtime when the target ends (or the target when the
 * runtime dies); end the target at the timeout.  */
static void sup_run(struct sup *s)
{
	const struct run_spec *spec = s->spec;

	if (!spec->target_argv && spec->attach_pid > 0) {
		sup_run_attached(s);
	} else if (!spec->target_argv) {
		if (s->rt_done)
			s->phase = P_DONE;
	} else if (s->tg_done || s->rt_done) {
		if (s->tg_done && !s->rt_done && spec->before_stop)
			s->before_stop = spec->before_stop(s->rt, spec->before_stop_ctx);
		if (!s->rt_done)
			kill(s->rt, SIGINT);
		if (!s->tg_done) {
			/* not when perun itself ended the target (timeout) */
			s->rt_first = !s->interrupted && !s->tg_termed;
			s->rt_died = s->rt_first;
			kill(s->tg, SIGTERM);
			s->tg_kill_at = s->t + GRACE_SECONDS;
		}
		sup_enter_stop(s);
	} else if (s->deadline && s->t >= s->deadline) {
		if (!s->tg_termed) {
			s->timed_out = !s->interrupted;
			kill(s->tg, SIGTERM);
			s->tg_termed = 1;
			s->deadline = s->t + GRACE_SECONDS;
		} else {
			kill(s->tg, SIGKILL);
			s->deadline = s->t + 3600;
		}
	}
}

/* The state letter of process pid (R running or runnable, D waiting in the
 * kernel, S asleep, ...), from /proc/PID/stat; 0 when it cannot be read.  */
static char task_state(pid_t pid)
{
	char path[64], buf[512], *rp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || !(rp = strrchr(buf, ')')) || !rp[1])
		return 0;
	return rp[2];
}

/* P_STOP: wait for the runtime's end, longer while it still works (writes
 * its output, as perun's loader does at each step of its end, removes its
 * uprobes, waits in the kernel as a detach does); then kill what is left.  A runtime killed while it
 * was ending its trace leaves the trace without its end: on a busy host
 * the stop grace alone was too short.  */
static void sup_stopping(struct sup *s)
{
	if (s->rt_done && (s->tg < 0 || s->tg_done)) {
		s->phase = P_DONE;
		return;
	}
	if (s->rt_died && s->tg > 0 && !s->tg_done && s->tg_kill_at && s->t >= s->tg_kill_at) {
		kill(s->tg, SIGKILL);	/* it ignored SIGTERM */
		s->tg_kill_at = 0;
	}
	if (!s->rt_done && s->spec->ready_path && s->t >= s->next_size_check) {
		struct stat sb;
		int nu = s->rt > 0 ? own_uprobes(s->rt, NULL) : 0, working = 0;
		char state = s->rt > 0 ? task_state(s->rt) : 0;

		s->next_size_check = s->t + 1;
		/* a runtime still writing (the recorder's end probe dumps its
		 * map, the loader drains its ring) */
		if (stat(s->spec->ready_path, &sb) == 0 && sb.st_size != s->out_size) {
			s->out_size = sb.st_size;
			working = 1;
		}
		/* one still detaching: on a busy host the kernel takes far more
		 * than the 0.2 s per probe point stop_timeout allows */
		if (s->nuprobes >= 0 && nu < s->nuprobes)
			working = 1;
		s->nuprobes = nu;
		/* one that waits in the kernel (closing links and unregistering
		 * uprobes wait for grace periods, long on a busy host) */
		if (state == 'D')
			working = 1;
		if (working && s->kill_at < s->t + GRACE_SECONDS * 5)
			s->kill_at = s->t + GRACE_SECONDS * 5;
		if (s->t_asked > 0 && s->kill_at > s->stop_cap)
			s->kill_at = s->stop_cap;
	}
	if (s->t >= s->kill_at) {
		if (!s->rt_done && s->t_asked > 0)
			s->killed_at_stop = s->t - s->t_asked;
		signal_tree(s->self, 0, SIGKILL);
		s->phase = P_KILL;
	}
}

/* How the run went, after every process of it ended.  */
static void sup_result(struct sup *s, int leaked, struct run_result *res)
{
	const struct run_spec *spec = s->spec;
	pid_t tg = s->tg;

	if (spec->attach_pid > 0) {
		tg = spec->attach_pid;
		if (s->pidfd >= 0) {
			struct pollfd pp = { s->pidfd, POLLIN, 0 };
			s->target_gone = s->target_gone || poll(&pp, 1, 0) > 0;
		}
	}
	memset(res, 0, sizeof(*res));
	res->exited = WIFEXITED(s->rt_status) ? 1 : 0;
	res->status = WIFEXITED(s->rt_status) ? WEXITSTATUS(s->rt_status) : WTERMSIG(s->rt_status);
	res->target_known = tg > 0 && s->tg_done && !s->never_ready;
	res->target_exited = WIFEXITED(s->tg_status) ? 1 : 0;
	res->target_status =
	    WIFEXITED(s->tg_status) ? WEXITSTATUS(s->tg_status) : WTERMSIG(s->tg_status);
	res->target_pid = (long)tg;
	res->target_ns = (unsigned long long)(s->t_release > 0 &&
						      (s->tg_done || spec->attach_pid > 0)
						  ? s->t_release * 1e9
						  : 0);
	res->ready_ns = (unsigned long long)(s->ready_s * 1e9);
	res->never_ready = s->never_ready;
	res->timed_out = s->timed_out;
	res->interrupted = s->interrupted;
	res->leaked_uprobes = leaked;
	res->runtime_died = s->rt_first;
	res->forked = s->forked;
	res->before_stop = s->before_stop;
	res->killed_at_stop = s->killed_at_stop;
	res->target_gone = s->target_gone;
	res->detached_at_timeout = s->detached;
	res->stop_ns = (unsigned long long)(s->t_stop > 0 && s->t_rt_end > s->t_stop
						    ? (s->t_rt_end - s->t_stop) * 1e9
						    : 0);
}

/* The supervisor: runs the runtime and the target, then writes how the run
 * went, one struct run_result, to stw (unless perun is gone).  Never
 * returns.  */
static _Noreturn void supervise(const struct run_spec *spec, int ctl, int stw, int errw, int capw)
{
	struct sup s = {
		.spec = spec,
		.phase = spec->target_argv || spec->attach_pid > 0 ? P_READY : P_RUN,
		.self = getpid(),
		.tg = -1,
		.ctl = ctl,
		.go = -1,
		.pidfd = -1,
		.before_stop = -1,
		.nuprobes = -1,
		.out_size = -1,
		.stop_grace = spec->stop_timeout > 0 ? spec->stop_timeout : 5 * GRACE_SECONDS,
	};
	struct run_result res;

	s.t = now_s();
	s.ready_by = s.t + (spec->ready_timeout > 0 ? spec->ready_timeout : 600);
	sup_start(&s, stw, errw, capw);
	for (;;) {
		struct pollfd pfd = { ctl, POLLIN, 0 };

		if (sup_reap(&s))
			break;	/* every process of the run is gone */
		s.t = now_s();
		if (!s.orphaned && poll(&pfd, 1, s.phase == P_READY ? 5 : 20) > 0)
			sup_control(&s);
		else if (s.orphaned)
			usleep(20000);
		s.t = now_s();
		switch (s.phase) {
		case P_READY:
			sup_ready(&s);
			break;
		case P_RUN:
			sup_run(&s);
			break;
		case P_STOP:
			sup_stopping(&s);
			break;
		case P_KILL:
		case P_DONE:	/* orphans the target left behind */
			signal_tree(s.self, 0, SIGKILL);
			break;
		}
	}
	if (spec->module_prefix && spec->cleanup_argv)
		remove_module(spec, s.rt);
	sup_result(&s, driver_remove_uprobes(s.rt), &res);
	if (s.orphaned && spec->cleanup_dir)
		fs_remove_tree(spec->cleanup_dir);
	if (!s.orphaned) {
		/* one write of less than PIPE_BUF: driver_run reads it whole or not
		 * at all; the supervisor is a fork of perun, so the struct's
		 * layout is the reader's */
		ssize_t ignored = write(stw, &res, sizeof(res));
		(void)ignored;
	}
	_exit(0);
}

static int is_fatal(const struct run_spec *spec, const char *line)
{
	size_t i;

	for (i = 0; spec->fatal_lines && spec->fatal_lines[i]; i++)
		if (strstr(line, spec->fatal_lines[i]))
			return 1;
	return 0;
}

int driver_run(const struct run_spec *spec, struct run_result *res, line_fn on_stderr, void *ctx)
{
	int ctl[2], st[2], er[2], sp[2], cap[2] = { -1, -1 }, capfd = -1;
	pid_t sup;
	struct strbuf line = STRBUF_INIT, status = STRBUF_INIT;
	int err_open = 1, st_open = 1, forwarded = 0, ret = 0, cap_open, fatal_sent = 0;

	memset(res, 0, sizeof(*res));
	cap_open = 0;
	if (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0 ||
	    pipe2(sp, O_CLOEXEC | O_NONBLOCK) < 0)
		return pr_error_errno("pipe");
	if (spec->target_argv && spec->capture_path) {
		capfd = open(spec->capture_path,
			     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (capfd < 0 || pipe2(cap, O_CLOEXEC) < 0)
			return pr_error_errno("capture %s", spec->capture_path);
	}
	fflush(NULL);
	sup = fork();
	if (sup < 0)
		return pr_error_errno("fork");
	if (sup == 0) {
		close(ctl[1]);
		close(st[0]);
		close(er[0]);
		close(sp[0]);
		close(sp[1]);
		if (cap[0] >= 0)
			close(cap[0]);
		if (capfd >= 0)
			close(capfd);
		supervise(spec, ctl[0], st[1], er[1], cap[1]);
	}
	close(ctl[0]);
	close(st[1]);
	close(er[1]);
	if (cap[1] >= 0)
		close(cap[1]);
	cap_open = cap[0] >= 0;
	signal_pipe_w = sp[1];
	if (got_signal) {
		ssize_t ignored = write(ctl[1], "i", 1);
		(void)ignored;
		forwarded = 1;
	}
	while (err_open || st_open || cap_open) {
		/* a closed pipe leaves the set (fd -1): poll reports POLLHUP
		 * even for events 0, which would spin */
		struct pollfd pfd[4] = { { err_open ? er[0] : -1, POLLIN, 0 },
					 { st_open ? st[0] : -1, POLLIN, 0 },
					 { sp[0], POLLIN, 0 },
					 { cap_open ? cap[0] : -1, POLLIN, 0 } };
		char buf[4096];
		ssize_t n;

		if (poll(pfd, 4, -1) < 0 && errno != EINTR)
			break;
		if (cap_open && pfd[3].revents) {
			n = read(cap[0], buf, sizeof(buf));
			if (n <= 0) {
				cap_open = 0;
			} else {
				/* tee: the terminal and the capture file */
				ssize_t w1 = write(1, buf, (size_t)n), w2 = write(capfd, buf, (size_t)n);
				(void)w1;
				(void)w2;
			}
		}
		if (got_signal && !forwarded) {
			ssize_t ignored = write(ctl[1], "i", 1);
			(void)ignored;
			forwarded = 1;
		}
		if (pfd[2].revents) {
			while (read(sp[0], buf, sizeof(buf)) > 0)
				;
		}
		if (pfd[0].revents) {
			n = read(er[0], buf, sizeof(buf));
			if (n <= 0) {
				err_open = 0;
			} else {
				ssize_t i;
				for (i = 0; i < n; i++) {
					if (buf[i] == '\n') {
						if (!fatal_sent && is_fatal(spec, strbuf_str(&line))) {
							ssize_t ignored = write(ctl[1], "d", 1);
							(void)ignored;
							fatal_sent = 1;
						}
						if (on_stderr)
							on_stderr(ctx, strbuf_str(&line));
						strbuf_reset(&line);
					} else {
						strbuf_addch(&line, buf[i]);
					}
				}
			}
		}
		if (pfd[1].revents) {
			n = read(st[0], buf, sizeof(buf));
			if (n <= 0)
				st_open = 0;
			else
				strbuf_add(&status, buf, (size_t)n);
		}
	}
	if (line.len && on_stderr)
		on_stderr(ctx, line.buf);
	signal_pipe_w = -1;
	close(sp[0]);
	close(sp[1]);
	close(ctl[1]);
	close(st[0]);
	close(er[0]);
	if (cap[0] >= 0)
		close(cap[0]);
	if (capfd >= 0)
		close(capfd);
	waitpid(sup, NULL, 0);
	res->before_stop = -1;
	if (status.len == sizeof(*res))
		memcpy(res, status.buf, sizeof(*res));
	else
		ret = pr_error("supervisor of %s ended without a status", spec->argv[0]);
	if (got_signal)
		res->interrupted = 1;
	strbuf_release(&line);
	strbuf_release(&status);
	return ret;
}
