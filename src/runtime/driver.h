/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The only module that starts processes.  A run goes through a supervisor
 * child that is a subreaper for everything below it: when the run ends,
 * times out, is interrupted, or perun itself dies (even by SIGKILL), the
 * supervisor kills what is left, removes uprobe events the runtime leaked,
 * and removes the run's temp dir.  */
#ifndef PERUN_DRIVER_H
#define PERUN_DRIVER_H

#include <sys/types.h>

/* The argv element replaced by the target's pid.  */
#define DRIVER_PID_ARG "@PID@"

struct run_spec {
	char **argv;		/* the runtime or compiler; argv[0] is a path */
	char **env_extra;	/* NAME=VALUE added for argv only, NULL-terminated */
	const char *cwd;	/* or NULL */
	const char *cleanup_dir;	/* removed if perun dies mid-run, or NULL */
	int stdout_null;	/* argv's stdout goes to /dev/null */
	int stdout_to_stderr;	/* argv's stdout reaches on_stderr too (stap -V) */

	/* With a target, the supervisor forks it first and holds it before
	 * exec; argv gets its pid (DRIVER_PID_ARG); once ready_path holds a
	 * line "r" (the runtime's probes are armed) the target is released;
	 * when it ends the runtime is stopped with SIGINT.  */
	char **target_argv;	/* or NULL: argv is the only process */
	/* Or a process that already runs (--pid): argv gets its pid, "r" in
	 * ready_path marks the probes armed, and the runtime is stopped with
	 * SIGINT when the process exits, after timeout seconds (a detach,
	 * timed_out stays 0), or on Ctrl-C.  The process itself is never
	 * signalled, stopped or waited for.  0: none.  */
	pid_t attach_pid;
	/* Written to stderr when the runtime's probes are armed, or NULL.  */
	const char *ready_message;
	/* Or this, called then in the supervisor with the seconds from the
	 * runtime's start to its probes armed: a malloc'ed message (NULL: none).  */
	char *(*ready_message_fn)(void *ctx, double ready_s);
	void *ready_ctx;
	const char *ready_path;
	/* --one-module: once ready, the runtime's selection (a bpf map, or the
	 * kernel module's procfs file) is filled from this file before the
	 * target is released; a failure stops the run (never_ready).  Or NULL.  */
	const char *selection_path;
	const char *output_mode;	/* default, capture (tee to capture_path), suppress */
	const char *capture_path;
	double timeout;		/* seconds for the target, 0 = none */
	double ready_timeout;	/* seconds to wait for "r", 0 = 600 */
	double stop_timeout;	/* seconds the runtime gets to detach and flush after
				 * SIGINT before SIGKILL; 0 = 10; extended while it
				 * still writes to ready_path or removes its uprobe
				 * events (detaching) */
	/* Substrings of a runtime's stderr line saying it can no longer deliver
	 * events: the target is stopped (TERM, then KILL) and runtime_died set.
	 * NULL-terminated, or NULL.  */
	const char *const *fatal_lines;

	/* Kernel runtime: the module staprun -R loads is named module_prefix...
	 * "_" the runtime's pid.  If perun dies, the runtime gets SIGTERM
	 * (it unloads the module itself) before SIGKILL, and if the module is still
	 * loaded once the runtime has ended, cleanup_argv runs with DRIVER_MOD_ARG
	 * replaced by its name (staprun -d NAME).  */
	const char *module_prefix;	/* or NULL */
	char **cleanup_argv;
	const char *attached_path;	/* when ready: the runtime's uprobe_events lines
					 * are written here (what it attached), or NULL */

	/* Called in the supervisor once the target has ended and before the
	 * runtime gets SIGINT, while the runtime still holds its state (it may
	 * read the runtime's maps and write a file).  What it returns becomes
	 * run_result.before_stop.  NULL: nothing.  */
	int (*before_stop)(pid_t runtime_pid, void *ctx);
	void *before_stop_ctx;
};

/* The cleanup_argv element replaced by the loaded module's name.  */
#define DRIVER_MOD_ARG "@MODULE@"


struct run_result {
	int exited;		/* 1 when argv exited normally */
	int status;		/* its exit code, or signal number */
	int target_known;	/* the target was started and reaped */
	int target_exited;
	int target_status;	/* exit code, or signal number */
	long target_pid;
	unsigned long long target_ns;	/* from release to exit */
	unsigned long long ready_ns;	/* from the runtime's start to the release */
	int never_ready;	/* the runtime ended before arming its probes */
	int runtime_died;	/* the runtime ended while the target still ran */
	size_t forked;		/* child processes of the target seen (not traced) */
	int timed_out;
	int interrupted;	/* SIGINT/SIGTERM reached perun */
	int leaked_uprobes;	/* uprobe events removed after the runtime */
	int before_stop;	/* what spec->before_stop returned; -1 when not called */
	int target_gone;	/* attach_pid exited while it was traced */
	int detached_at_timeout;	/* attach_pid: the timeout ended the trace */
	unsigned long long stop_ns;	/* attach_pid: from SIGINT to the runtime's end
					 * (its detach), or 0 */
	double killed_at_stop;	/* the runtime was killed this many seconds after it
				 * was asked to stop (it neither ended nor showed work),
				 * or 0 */
};

/* Called for each line the child writes to stderr (without the newline).  */
typedef void (*line_fn)(void *ctx, const char *line);

int driver_run(const struct run_spec *spec, struct run_result *res, line_fn on_stderr, void *ctx);

/* Removes every uprobe event named stapprobe_PID_*; returns how many.  */
int driver_remove_uprobes(pid_t pid);
/* Writes the uprobe_events lines of events named stapprobe_PID_* to path;
 * returns how many, or -1.  */
int driver_save_uprobes(pid_t pid, const char *path);
/* Path of tracefs uprobe_events, or NULL.  */
const char *driver_uprobe_events_path(void);
/* Installs SIGINT/SIGTERM handlers that only set a flag.  */
void driver_install_signals(void);
/* The signal perun received, or 0.  */
int driver_signal_received(void);

#endif
