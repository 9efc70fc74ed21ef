/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun add PROFILE... [--keep-profile] [-m REV]
 * perun rm PROFILE... [-m REV] | perun rm --pending  */
#include "config.h"

#define PR_FMT "perun"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/parse-options.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "vcs/vcs.h"

/* Parses the options of add and rm (keep, pending: NULL when the command has
 * none) and collects the PROFILE arguments into *names (caller frees);
 * returns parse_options' result.  */
static int parse_common(int argc, char **argv, const char *usage, int *keep, int *pending,
			const char **rev, int *explicit_rev, const char ***names, int *n)
{
	const char *minor = NULL;
	struct popt opts[] = {
		OPT_STRING('m', "minor", &minor, "REV",
			   "the minor version (a commit) whose index it is (default HEAD)"),
		OPT_BOOL(0, "keep-profile", keep, "keep the file in .perun/jobs"),
		OPT_BOOL(0, "pending", pending, "every profile in .perun/jobs"),
		OPT_END(),
	};
	int r;

	if (!keep) {
		opts[1] = opts[2];
		opts[2] = opts[3];
	}
	if (!pending)
		opts[2] = opts[3];
	*names = NULL;
	*n = 0;
	r = parse_options(argc, argv, argv[0], usage, opts);
	if (r < 0)
		return r;
	if (minor) {
		*rev = minor;
		*explicit_rev = 1;
	}
	*names = xcalloc((size_t)r + 1, sizeof(**names));
	memcpy(*names, argv, (size_t)r * sizeof(**names));
	*n = r;
	return 0;
}

int cmd_add(int argc, char **argv, struct ctx *ctx)
{
	static const char usage[] =
		"usage: perun add PROFILE... [--keep-profile] [-m REV]\n\n"
		"Validates each profile, checks its origin against REV (default HEAD), stores\n"
		"it as a zlib object and registers it in REV's index.  PROFILE is N@p, a\n"
		"path, or part of a name in .perun/jobs.  The jobs file is removed.\n";
	const char *rev = "HEAD", **names;
	struct repo r;
	char minor[41], **paths;
	int keep = 0, explicit_rev = 0, n, i, ret = EXIT_OK, pr, failed;

	(void)ctx;
	pr = parse_common(argc, argv, usage, &keep, NULL, &rev, &explicit_rev, &names, &n);
	if (pr < 0)
		return POPT_EXIT(pr);
	if (!n) {
		free(names);
		fprintf(stderr, "%s", usage);
		return EXIT_USAGE;
	}
	if (repo_find(&r) < 0 ||
	    (!explicit_rev && vcs_unborn(r.worktree) == 1 &&
	     pr_error("no commits yet: profiles are registered for a commit; commit once, then "
		      "'perun add' (pending profiles wait in .perun/jobs)") < 0) ||
	    vcs_massage(r.worktree, rev, minor) < 0) {
		free(names);
		repo_release(&r);
		return EXIT_FAIL;
	}
	/* every argument resolved first: adding renumbers the N@p after it */
	failed = repo_add_paths(&r, minor, names, (size_t)n, &paths);
	if (failed < 0) {
		free(names);
		repo_release(&r);
		return EXIT_FAIL;
	}
	if (failed)
		ret = EXIT_FAIL;
	for (i = 0; i < n; i++)
		if (paths[i]) {
			size_t entry;
			char hex[SHA1_HEXSZ + 1];
			if (repo_register(&r, minor, explicit_rev, paths[i], keep, &entry, hex) < 0)
				ret = EXIT_FAIL;
			else {
				char *shown = xstrdup_printable(fs_basename(paths[i]));
				printf("registered %s for %.7s as %zu@i (object %.12s)\n", shown,
				       minor, entry, hex);
				free(shown);
			}
		}
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(names);
	repo_release(&r);
	return ret;
}

int cmd_rm(int argc, char **argv, struct ctx *ctx)
{
	static const char usage[] =
		"usage: perun rm PROFILE... [-m REV]\n       perun rm --pending\n\n"
		"Removes profiles from REV's index (default HEAD); their objects stay.\n"
		"A pending profile (N@p, or a file in .perun/jobs) is deleted.\n";
	const char *rev = "HEAD", **names;
	struct repo r;
	struct strv dropped = STRV_INIT, deleted = STRV_INIT;
	char minor[41];
	size_t k;
	int pending = 0, explicit_rev = 0, unborn, n, ret = EXIT_OK, pr;

	(void)ctx;
	pr = parse_common(argc, argv, usage, NULL, &pending, &rev, &explicit_rev, &names, &n);
	if (pr < 0)
		return POPT_EXIT(pr);
	if (!n && !pending) {
		free(names);
		fprintf(stderr, "%s", usage);
		return EXIT_USAGE;
	}
	if (repo_find(&r) < 0) {
		free(names);
		return EXIT_FAIL;
	}
	if (pending) {
		struct pending *p;
		size_t np;
		repo_pending(&r, &p, &np);
		for (k = 0; k < np; k++)
			if (unlink(p[k].path) < 0)
				ret = EXIT_FAIL, pr_error_errno("cannot remove %s", p[k].path);
		printf("removed %zu pending profile%s\n", np, np == 1 ? "" : "s");
		pending_free(p, np);
	}
	if (!n)
		goto out;
	/* no commit yet: nothing is registered, pending profiles can still go */
	unborn = !explicit_rev ? vcs_unborn(r.worktree) : 0;
	if (unborn < 0 || (!unborn && vcs_massage(r.worktree, rev, minor) < 0) ||
	    repo_lock(&r) < 0) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (unborn)
		snprintf(minor, sizeof(minor), "HEAD");
	if (repo_remove(&r, minor, unborn, names, (size_t)n, &dropped, &deleted) < 0)
		ret = EXIT_FAIL;
	for (k = 0; k < dropped.n; k++)
		printf("removed %s from %.7s\n", dropped.v[k], minor);
	for (k = 0; k < deleted.n; k++)
		printf("removed pending profile %s\n", deleted.v[k]);
out:
	strv_clear(&dropped);
	strv_clear(&deleted);
	free(names);
	repo_release(&r);
	return ret;
}
