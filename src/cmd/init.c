/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun init [PATH] [--init-vcs]  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "vcs/vcs.h"

int cmd_init(int argc, char **argv, struct ctx *ctx)
{
	const char *path = ".";
	int init_vcs = 0, i;
	char *wt, *abs;

	(void)ctx;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--init-vcs")) {
			init_vcs = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: perun init [PATH] [--init-vcs]\n\n"
			       "Creates .perun/ (objects, jobs, logs, stats, local.yml) at the top of the\n"
			       "git work tree containing PATH (default: here).  --init-vcs creates the git\n"
			       "repository first when there is none.  Running it again is safe.\n");
			return EXIT_OK;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "perun init: unknown option '%s'\n", argv[i]);
			return EXIT_USAGE;
		} else {
			path = argv[i];
		}
	}
	if (fs_mkdir_p(path, 0755) < 0)
		return EXIT_FAIL;
	abs = fs_realpath(path);
	if (!abs)
		return pr_error_errno("%s", path), EXIT_FAIL;
	wt = vcs_find_worktree(abs);
	if (!wt && init_vcs) {
		if (vcs_init(abs) < 0) {
			free(abs);
			return EXIT_FAIL;
		}
		wt = vcs_find_worktree(abs);
	}
	if (!wt) {
		pr_error("%s is not in a git work tree: run 'git init' or 'perun init --init-vcs'", abs);
		free(abs);
		return EXIT_FAIL;
	}
	if (repo_init(wt) < 0) {
		free(abs);
		free(wt);
		return EXIT_FAIL;
	}
	printf("perun repository in %s/.perun\n", wt);
	free(abs);
	free(wt);
	return EXIT_OK;
}
