/* perun __exec STATUS MODE -- CMD ARGS...: the wrapper the runtime starts as
 * its target.  It gives the target its own stdout/stderr (fds 4 and 3 from
 * the driver), runs it, and records how it ended and how long it ran.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/log.h"

int cmd_exec(int argc, char **argv, struct ctx *ctx)
{
	const char *status_path, *mode;
	struct timespec t0, t1;
	pid_t pid;
	int st, fd;
	FILE *f;

	(void)ctx;
	if (argc < 5 || strcmp(argv[3], "--"))
		return EXIT_USAGE;
	status_path = argv[1];
	mode = argv[2];
	if (fcntl(3, F_GETFD) >= 0) {
		dup2(3, 2);
		close(3);
	}
	if (fcntl(4, F_GETFD) >= 0) {
		dup2(4, 1);
		close(4);
	}
	if (!strcmp(mode, "suppress") && (fd = open("/dev/null", O_WRONLY)) >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	/* the runtime's memlock shim is not the target's business */
	{
		const char *orig = getenv("PERUN_ORIG_LD_PRELOAD");
		if (orig) {
			if (*orig)
				setenv("LD_PRELOAD", orig, 1);
			else
				unsetenv("LD_PRELOAD");
			unsetenv("PERUN_ORIG_LD_PRELOAD");
		}
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("perun: fork");
		return 126;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[4], argv + 4);
		fprintf(stderr, "perun: cannot run %s: %s\n", argv[4], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 126;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f = fopen(status_path, "we");
	if (f) {
		fprintf(f, "%s %d %lld %d\n", WIFEXITED(st) ? "exit" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			(long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec),
			(int)pid);
		fclose(f);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
