/* The only module that starts processes.  A run goes through a supervisor
 * child that is a subreaper for everything below it: when the run ends,
 * times out, is interrupted, or perun itself dies (even by SIGKILL), the
 * supervisor kills what is left, removes uprobe events the runtime leaked,
 * and removes the run's temp dir.  */
#ifndef PERUN_DRIVER_H
#define PERUN_DRIVER_H

#include <sys/types.h>

struct run_spec {
	char **argv;		/* argv[0] is a path */
	char **env_extra;	/* NAME=VALUE added to the environment, NULL-terminated */
	const char *cwd;	/* or NULL */
	double timeout;		/* seconds, 0 = none */
	const char *cleanup_dir;	/* removed if perun dies mid-run, or NULL */
	int target_fd_err;	/* passed to the child as fd 3 (target stderr), or -1 */
	int target_fd_out;	/* passed to the child as fd 4 (target stdout), or -1 */
	int stdout_null;	/* the child's stdout goes to /dev/null */
};

struct run_result {
	int exited;		/* 1 when the child exited normally */
	int status;		/* exit code, or signal number when !exited */
	int timed_out;
	int interrupted;	/* SIGINT/SIGTERM reached perun */
	int leaked_uprobes;	/* uprobe events removed after the runtime */
};

/* Called for each line the child writes to stderr (without the newline).  */
typedef void (*line_fn)(void *ctx, const char *line);

int driver_run(const struct run_spec *spec, struct run_result *res, line_fn on_stderr, void *ctx);

/* Quotes one word for /bin/sh and wordexp(3).  */
void driver_shell_quote(char **out_append, const char *word);
/* Removes every uprobe event named stapprobe_PID_*; returns how many.  */
int driver_remove_uprobes(pid_t pid);
/* Path of tracefs uprobe_events, or NULL.  */
const char *driver_uprobe_events_path(void);
/* Installs SIGINT/SIGTERM handlers that only set a flag.  */
void driver_install_signals(void);
/* The signal perun received, or 0.  */
int driver_signal_received(void);

#endif
