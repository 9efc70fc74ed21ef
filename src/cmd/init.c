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
#include "util/parse-options.h"
#include "vcs/vcs.h"

int cmd_init(int argc, char **argv, struct ctx *ctx)
{
	static const char usage[] =
		"usage: perun init [PATH] [--init-vcs]\n\n"
		"Creates .perun/ (objects, jobs, logs, stats, local.yml) at the top of the\n"
		"git work tree containing PATH (default: here).  Running it again is safe.\n";
	const char *path = ".";
	int init_vcs = 0, n;
	char *wt, *abs;
	struct popt opts[] = {
		OPT_BOOL(0, "init-vcs", &init_vcs,
			 "create the git repository first when there is none"),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "init", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n > 1 || (n == 1 && !*argv[0])) {
		fprintf(stderr, n > 1 ? "perun init: one PATH at most, not %d\n"
				      : "perun init: PATH is empty\n", n);
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	if (n > 0)
		path = argv[0];
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
