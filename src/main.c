/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "runtime/runtime.h"
#include "store/repo.h"
#include "util/log.h"
#include "util/owner.h"
#include "util/strbuf.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct ctx *ctx);
	const char *help;	/* NULL: hidden */
};

static const struct command commands[] = {
	{ "init", cmd_init, "create a perun repository (.perun) in a git work tree" },
	{ "status", cmd_status, "show the minor version and its pending and registered profiles" },
	{ "log", cmd_log, "walk minor versions with the profiles of each" },
	{ "add", cmd_add, "register profiles for a minor version" },
	{ "rm", cmd_rm, "unregister profiles, or drop pending ones" },
	{ "fsck", cmd_fsck, "check objects and indexes of .perun; --repair rebuilds damaged indexes" },
	{ "show", cmd_show, "print a profile: json, a summary table, or folded stacks" },
	{ "push", cmd_push, "publish perun objects and indexes to a git remote (refs/perun/*)" },
	{ "fetch", cmd_fetch, "fetch and merge perun objects and indexes from a git remote" },
	{ "history", cmd_history, "per-function series over the commits, with the steps in them" },
	{ "report", cmd_report, "write a static HTML site of the history: graphs, steps, regressions" },
	{ "aggregate", cmd_aggregate, "merge profiles into per-release, per-host, time-boxed aggregates" },
	{ "collect", cmd_collect, "trace a command and write a performance profile" },
	{ "run", cmd_run, "run the jobs of local.yml (matrix) or one job over revisions, and register" },
	{ "bisect", cmd_bisect, "find the first commit where a function's time steps up" },
	{ "cache", cmd_cache, "list, verify, prune or clear compiled SystemTap modules" },
	{ "calibrate", cmd_calibrate, "measure the probe cost on this host for calibrated amounts" },
	{ "postprocessby", cmd_postprocessby, "fit models of call time per function into a new profile" },
	{ "check", cmd_check, "find degradations and optimizations between two minor versions" },
	{ "diff", cmd_diff, "compare two profiles function by function" },
	{ "stats", cmd_stats, "dynamic statistics of earlier collections, per minor version" },
	{ "callgraph", cmd_callgraph, "show a binary's call graph, levels and control-flow loops" },
	{ "doctor", cmd_doctor, "check that this machine can trace, and say how to fix it" },
	{ "__parse", cmd_parse, NULL },
};

static void usage(FILE *f)
{
	size_t i;
	char *man;

	fprintf(f, "usage: perun [--version] [--help] <command> [<args>]\n\n"
		   "A performance version system built on SystemTap.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].help)
			fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].help);
	man = xstrfmt("%s/man/perun-collect.1", runtime_datadir());
	/* run from its source tree, perun's man pages are not where man looks */
	if (access(man, R_OK) == 0)
		fprintf(f, "\n'perun <command> --help' describes one command; 'man -l "
			   "%s/man/perun-<command>.1' too\n(from this source tree; 'man "
			   "perun-<command>' after make install).\n",
			runtime_datadir());
	else
		fprintf(f, "\n'perun <command> --help' describes one command; 'man "
			   "perun-<command>' too.\n");
	fprintf(f, "Exit status: 0 success, 1 failure, 2 usage error, 128+N killed by signal N.\n");
	free(man);
}

static char *self_path(const char *argv0)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n > 0) {
		buf[n] = '\0';
		return xstrdup(buf);
	}
	return xstrdup(argv0);
}

/* Whether standard output is a pipe or socket whose reader is gone.  */
static int reader_gone(void)
{
	struct pollfd p = { STDOUT_FILENO, POLLOUT, 0 };
	struct stat st;

	if (errno == EPIPE)
		return 1;
	return fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) &&
	       poll(&p, 1, 0) > 0 && (p.revents & POLLERR);
}

static int finish(int code)
{
	char *perun_dir = geteuid() == 0 ? repo_locate() : NULL;

	/* root in a user's repository: what it wrote there stays the user's */
	if (perun_dir) {
		owner_restore(perun_dir);
		free(perun_dir);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		/* a reader that went away (perun show | head) is no error: perun
		 * ends as git does, quietly, by the SIGPIPE it was spared */
		if (reader_gone()) {
			signal(SIGPIPE, SIG_DFL);
			raise(SIGPIPE);
			return EXIT_SIGNAL_BASE + SIGPIPE;
		}
		fprintf(stderr, "perun: write error on standard output\n");
		return EXIT_FAIL;
	}
	return code;
}

int main(int argc, char **argv)
{
	struct ctx ctx = { argv[0], NULL };
	size_t i;
	int ret;

	setlinebuf(stderr);
	/* a reader that goes away (perun ... | head) must not kill perun before it
	 * cleans up: writes fail with EPIPE instead, and finish() reports stdout's.
	 * The driver restores SIGPIPE for the programs it runs.  */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			char *args[] = { argv[2], (char *)"--help", NULL };
			for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (commands[i].help && !strcmp(commands[i].name, argv[2])) {
					ctx.self = self_path(argv[0]);
					ret = commands[i].fn(2, args, &ctx);
					free(ctx.self);
					return finish(ret);
				}
			fprintf(stderr, "perun: '%s' is not a perun command: see 'perun help'\n",
				argv[2]);
			return EXIT_USAGE;
		}
		usage(stdout);
		return finish(EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("perun %s\n"
		       "License GPL-3.0-or-later <https://gnu.org/licenses/gpl.html>: you may\n"
		       "change and redistribute it; there is NO WARRANTY (see COPYING).\n",
		       PACKAGE_VERSION);
		return finish(EXIT_OK);
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, argv[1]))
			continue;
		ctx.self = self_path(argv[0]);
		ret = commands[i].fn(argc - 1, argv + 1, &ctx);
		free(ctx.self);
		return finish(ret);
	}
	fprintf(stderr, "perun: '%s' is not a perun command: see 'perun help'\n", argv[1]);
	return EXIT_USAGE;
}
