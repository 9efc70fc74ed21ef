/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun push [REMOTE] | perun fetch [REMOTE]: profiles between hosts
 * through git (store/sync.h).  */
#include "config.h"

#define PR_FMT "perun"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "store/repo.h"
#include "store/sync.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/parse-options.h"

/* Pushes overtaken by another host before perun push gives up.  */
#define PUSH_TRIES 20

static const char usage_push[] =
	"usage: perun push [REMOTE] [-q]\n\n"
	"Publishes this repository's perun objects and indexes to REMOTE (a git\n"
	"remote's name, a URL or a path; default origin) under refs/perun/profiles.\n"
	"What the remote holds is fetched and merged first (a union: every profile\n"
	"of both, each once), so no host's profiles are lost; when another host\n"
	"pushes meanwhile, perun fetches and merges again and retries.\n";

static const char usage_fetch[] =
	"usage: perun fetch [REMOTE] [-q]\n\n"
	"Fetches REMOTE's refs/perun/profiles (REMOTE: a git remote's name, a URL\n"
	"or a path; default origin) and merges its objects and indexes into .perun:\n"
	"profiles registered on other hosts then show in status, log and show.\n"
	"Every object and index is verified first; when one is damaged nothing is\n"
	"stored and perun fetch fails, naming it.\n";

static int cmd_sync(int argc, char **argv, int push)
{
	const char *remote = NULL, *name = push ? "push" : "fetch";
	char *abs = NULL;
	struct sync_stats st;
	struct repo r;
	const char *usage = push ? usage_push : usage_fetch;
	int n, quiet = 0, ret;
	struct popt opts[] = {
		OPT_BOOL('q', "quiet", &quiet, "print nothing but errors"),
		OPT_END(),
	};

	n = parse_options(argc, argv, name, usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n > 1) {
		fprintf(stderr, "perun %s: unexpected argument '%s'\n%s", name, argv[1], usage);
		return EXIT_USAGE;
	}
	if (n == 1)
		remote = argv[0];
	if (!remote)
		remote = "origin";
	/* a path given here is from here; a remote's relative URL is from the
	 * top of the work tree, as git reads it */
	if (access(remote, F_OK) == 0 && (abs = fs_realpath(remote)))
		remote = abs;
	if (repo_find(&r) < 0) {
		free(abs);
		return EXIT_FAIL;
	}
	if (chdir(r.worktree) < 0) {
		pr_error_errno("chdir %s", r.worktree);
		repo_release(&r);
		free(abs);
		return EXIT_FAIL;
	}
	if (repo_lock(&r) < 0) {
		repo_release(&r);
		free(abs);
		return EXIT_FAIL;
	}
	memset(&st, 0, sizeof(st));
	ret = push ? sync_push(&r, remote, PUSH_TRIES, &st) : sync_fetch(&r, remote, &st);
	repo_unlock(&r);
	repo_release(&r);
	if (ret < 0) {
		free(abs);
		return EXIT_FAIL;
	}
	if (quiet) {
		free(abs);
		return EXIT_OK;
	}
	if (st.tip[0]) {
		printf("fetched %.7s from %s: %zu new object%s, %zu new index entr%s%s", st.tip,
		       remote, st.objects, st.objects == 1 ? "" : "s", st.entries,
		       st.entries == 1 ? "y" : "ies", st.removed ? ", " : "\n");
		if (st.removed)
			printf("%zu entr%s removed (perun rm on another host)\n", st.removed,
			       st.removed == 1 ? "y" : "ies");
	} else
		printf("%s has no perun profiles yet\n", remote);
	if (push)
		printf("pushed %zu file%s to %s (%u attempt%s)\n", st.files,
		       st.files == 1 ? "" : "s", remote, st.attempts, st.attempts == 1 ? "" : "s");
	free(abs);
	return EXIT_OK;
}

int cmd_push(int argc, char **argv, struct ctx *ctx)
{
	(void)ctx;
	return cmd_sync(argc, argv, 1);
}

int cmd_fetch(int argc, char **argv, struct ctx *ctx)
{
	(void)ctx;
	return cmd_sync(argc, argv, 0);
}
