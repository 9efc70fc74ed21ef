#include "config.h"

#define PR_FMT "driver"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace/driver.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Seconds between SIGTERM and SIGKILL.  */
#define GRACE_SECONDS 2.0

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

void driver_shell_quote(char **out, const char *word)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	if (*out) {
		strbuf_addstr(&sb, *out);
		strbuf_addch(&sb, ' ');
		free(*out);
	}
	strbuf_addch(&sb, '\'');
	for (p = word; *p; p++) {
		if (*p == '\'')
			strbuf_addstr(&sb, "'\\''");
		else
			strbuf_addch(&sb, *p);
	}
	strbuf_addch(&sb, '\'');
	*out = strbuf_detach(&sb);
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

int driver_remove_uprobes(pid_t pid)
{
	const char *path = driver_uprobe_events_path();
	struct strbuf sb = STRBUF_INIT;
	char prefix[64];
	char *line, *save = NULL;
	int n = 0;

	if (!path || strbuf_read_file(&sb, path) < 0)
		return 0;
	snprintf(prefix, sizeof(prefix), "stapprobe_%d_", (int)pid);
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *name = strchr(line, ':'), *sp;
		int fd;
		if (!name || !(sp = strchr(name, ' ')))
			continue;
		*sp = '\0';
		name++;	/* group/event */
		if (!strstr(name, prefix))
			continue;
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
		int fd;
		ssize_t len;
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
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

static int reap(pid_t child, int *child_status, int *child_done)
{
	int st, any = 0;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		any = 1;
		if (p == child) {
			*child_status = st;
			*child_done = 1;
		}
	}
	if (p < 0 && errno == ECHILD)
		return -1;	/* nothing left */
	return any;
}

/* The supervisor: never returns.  */
static _Noreturn void supervise(const struct run_spec *spec, int ctl, int stw, int errw)
{
	pid_t self = getpid(), child;
	double deadline = spec->timeout > 0 ? now_s() + spec->timeout : 0, kill_at = 0;
	int status = 0, done = 0, stage = 0, orphaned = 0, timed_out = 0, interrupted = 0;
	char msg[128];
	size_t i;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGINT, SIG_IGN);	/* a terminal's Ctrl-C reaches the run itself */
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	child = fork();
	if (child < 0)
		_exit(126);
	if (child == 0) {
		struct rlimit rl;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		/* dup2 onto the same number would keep FD_CLOEXEC: go through a spare fd */
		if (spec->target_fd_err >= 0)
			dup2(spec->target_fd_err == 3 ? dup(3) : spec->target_fd_err, 3);
		if (spec->target_fd_out >= 0)
			dup2(spec->target_fd_out == 4 ? dup(4) : spec->target_fd_out, 4);
		if (errw >= 0)
			dup2(errw, 2);
		if (spec->stdout_null) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0 && fd != 1) {
				dup2(fd, 1);
				close(fd);
			}
		}
		close(ctl);
		close(stw);
		if (spec->cwd && chdir(spec->cwd) < 0)
			_exit(126);
		for (i = 0; spec->env_extra && spec->env_extra[i]; i++)
			putenv(spec->env_extra[i]);
		execv(spec->argv[0], spec->argv);
		fprintf(stderr, "exec %s: %s\n", spec->argv[0], strerror(errno));
		_exit(127);
	}
	if (errw >= 0)
		close(errw);
	for (;;) {
		struct pollfd pfd = { ctl, POLLIN, 0 };
		int r = reap(child, &status, &done);
		double t = now_s();

		if (r < 0)
			break;	/* child and every orphan gone */
		if (done && stage == 0) {
			/* the runtime ended; kill what the target left behind */
			signal_tree(self, 0, SIGTERM);
			stage = 2;
			kill_at = t + GRACE_SECONDS;
		}
		if (!orphaned && poll(&pfd, 1, 50) > 0) {
			char c;
			ssize_t n = read(ctl, &c, 1);
			if (n <= 0) {
				orphaned = 1;	/* perun is gone */
				signal_tree(self, 0, SIGTERM);
				stage = 2;
				kill_at = t + GRACE_SECONDS;
			} else if (c == 'i') {
				interrupted = 1;
				signal_tree(self, 0, SIGINT);
				if (stage == 0) {
					stage = 1;
					kill_at = t + 2 * GRACE_SECONDS;
				}
			}
		} else if (orphaned) {
			usleep(50000);
		}
		if (deadline && stage == 0 && t >= deadline) {
			/* the target first, so the runtime can flush what it has */
			timed_out = 1;
			signal_tree(self, child, SIGTERM);
			stage = 1;
			kill_at = t + GRACE_SECONDS;
		}
		if (stage == 1 && t >= kill_at) {
			signal_tree(self, child, SIGKILL);
			kill(child, SIGTERM);
			stage = 2;
			kill_at = t + GRACE_SECONDS;
		} else if (stage == 2 && t >= kill_at) {
			signal_tree(self, 0, SIGKILL);
			stage = 3;
		}
	}
	{
		int leaked = driver_remove_uprobes(child);
		snprintf(msg, sizeof(msg), "%d %d %d %d %d\n", WIFEXITED(status) ? 1 : 0,
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), timed_out,
			 interrupted, leaked);
	}
	if (orphaned && spec->cleanup_dir)
		fs_remove_tree(spec->cleanup_dir);
	if (!orphaned) {
		ssize_t ignored = write(stw, msg, strlen(msg));
		(void)ignored;
	}
	_exit(0);
}

int driver_run(const struct run_spec *spec, struct run_result *res, line_fn on_stderr, void *ctx)
{
	int ctl[2], st[2], er[2], sp[2];
	pid_t sup;
	struct strbuf line = STRBUF_INIT, status = STRBUF_INIT;
	int err_open = 1, st_open = 1, forwarded = 0, ret = 0;

	memset(res, 0, sizeof(*res));
	if (pipe2(ctl, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0 ||
	    pipe2(sp, O_CLOEXEC | O_NONBLOCK) < 0)
		return pr_error_errno("pipe");
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
		supervise(spec, ctl[0], st[1], er[1]);
	}
	close(ctl[0]);
	close(st[1]);
	close(er[1]);
	signal_pipe_w = sp[1];
	if (got_signal) {
		ssize_t ignored = write(ctl[1], "i", 1);
		(void)ignored;
		forwarded = 1;
	}
	while (err_open || st_open) {
		struct pollfd pfd[3] = { { er[0], err_open ? POLLIN : 0, 0 },
					 { st[0], st_open ? POLLIN : 0, 0 },
					 { sp[0], POLLIN, 0 } };
		char buf[4096];
		ssize_t n;

		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			break;
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
	waitpid(sup, NULL, 0);
	if (sscanf(strbuf_str(&status), "%d %d %d %d %d", &res->exited, &res->status,
		   &res->timed_out, &res->interrupted, &res->leaked_uprobes) != 5)
		ret = pr_error("supervisor of %s ended without a status", spec->argv[0]);
	if (got_signal)
		res->interrupted = 1;
	strbuf_release(&line);
	strbuf_release(&status);
	return ret;
}
