/* perun add PROFILE... [--keep-profile] [-m REV]
 * perun rm PROFILE... [-m REV] | perun rm --pending  */
#include "config.h"

#define PR_FMT "perun"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "profile/profile.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "vcs/vcs.h"

static int add_one(struct repo *r, const char *minor, int explicit_rev, const char *spec,
		   int keep)
{
	struct pidx index;
	struct lookup l;
	struct profile p = { NULL };
	struct stat st;
	char hex[SHA1_HEXSZ + 1], *origin = NULL, *jobs = NULL;
	unsigned char raw[SHA1_RAWSZ];
	const char *json;
	size_t i;
	int ret = -1;

	if (store_read_index(r->dir, minor, &index) < 0)
		return -1;
	if (repo_lookup(r, minor, &index, spec, &l) < 0)
		goto out;
	if (l.registered) {
		pr_error("%s is already registered for %.7s as %zu@i", spec, minor, l.entry);
		goto out;
	}
	if (profile_load(&p, l.path) < 0 || profile_validate(&p, l.path) < 0)
		goto out;
	origin = profile_take_origin(&p);
	if (!origin && !explicit_rev) {
		pr_error("%s has no origin: collect it inside the repository, or say which minor "
			 "version it belongs to with -m REV",
			 l.path);
		goto out;
	}
	if (origin && strcmp(origin, minor)) {
		pr_error("%s was collected at %.7s, not %.7s: check that commit out, or give "
			 "-m %.7s",
			 l.path, origin, minor, origin);
		goto out;
	}
	json = profile_to_json(&p);
	if (store_write_object(r->dir, profile_type(&p), json, strlen(json), hex) < 0)
		goto out;
	for (i = 0; i < SHA1_RAWSZ; i++)
		sscanf(hex + 2 * i, "%2hhx", &raw[i]);
	if (repo_lock(r) < 0)
		goto out;
	/* re-read under the lock: another add may have written it meanwhile */
	pidx_release(&index);
	if (store_read_index(r->dir, minor, &index) < 0)
		goto unlock;
	for (i = 0; i < index.n; i++)
		if (!memcmp(index.entries[i].id, raw, SHA1_RAWSZ)) {
			pr_error("%s: the same profile is already registered for %.7s as %zu@i (%s)",
				 l.path, minor, i, index.entries[i].path);
			goto unlock;
		}
	stat(l.path, &st);
	pidx_append(&index, (uint32_t)st.st_mtime, raw, fs_basename(l.path));
	if (store_write_index(r->dir, minor, &index) < 0)
		goto unlock;
	printf("registered %s for %.7s as %zu@i (object %.12s)\n", fs_basename(l.path), minor,
	       index.n - 1, hex);
	jobs = xstrfmt("%s/jobs/", r->dir);
	{
		char *abs = realpath(l.path, NULL);
		if (!keep && abs && !strncmp(abs, jobs, strlen(jobs)) && unlink(abs) < 0)
			pr_error_errno("cannot remove %s", abs);
		free(abs);
	}
	ret = 0;
unlock:
	repo_unlock(r);
out:
	free(jobs);
	free(origin);
	free(l.path);
	profile_release(&p);
	pidx_release(&index);
	return ret;
}

/* Parses the options of add and rm and collects the PROFILE arguments into
 * *names (caller frees); 1 after --help, 2 on a usage error.  */
static int parse_common(int argc, char **argv, const char *usage, int *keep, int *pending,
			const char **rev, const char ***names, int *n)
{
	int i;

	*names = xcalloc((size_t)argc, sizeof(**names));
	*n = 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--keep-profile") && keep) {
			*keep = 1;
		} else if (!strcmp(argv[i], "--pending") && pending) {
			*pending = 1;
		} else if ((!strcmp(argv[i], "-m") || !strcmp(argv[i], "--minor")) && i + 1 < argc) {
			*rev = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s: unknown option '%s'\n%s", argv[0], argv[i], usage);
			return 2;
		} else {
			(*names)[(*n)++] = argv[i];
		}
	}
	return 0;
}

int cmd_add(int argc, char **argv, struct ctx *ctx)
{
	static const char usage[] =
		"usage: perun add PROFILE... [--keep-profile] [-m REV]\n\n"
		"Validates each profile, checks its origin against REV (default HEAD), stores\n"
		"it as a zlib object and registers it in REV's index.  PROFILE is N@p, a\n"
		"path, or part of a name in .perun/jobs.  The jobs file is removed unless\n"
		"--keep-profile.\n";
	const char *rev = "HEAD", **names;
	struct repo r;
	char minor[41];
	int keep = 0, n, i, ret = EXIT_OK, pr;

	(void)ctx;
	pr = parse_common(argc, argv, usage, &keep, NULL, &rev, &names, &n);
	if (pr) {
		free(names);
		return pr == 1 ? EXIT_OK : EXIT_USAGE;
	}
	if (!n) {
		free(names);
		fprintf(stderr, "%s", usage);
		return EXIT_USAGE;
	}
	if (repo_find(&r) < 0 || vcs_massage(r.worktree, rev, minor) < 0) {
		free(names);
		repo_release(&r);
		return EXIT_FAIL;
	}
	for (i = 0; i < n; i++)
		if (add_one(&r, minor, strcmp(rev, "HEAD") != 0, names[i], keep) < 0)
			ret = EXIT_FAIL;
	free(names);
	repo_release(&r);
	return ret;
}

int cmd_rm(int argc, char **argv, struct ctx *ctx)
{
	static const char usage[] =
		"usage: perun rm PROFILE... [-m REV]\n       perun rm --pending\n\n"
		"Removes profiles from REV's index (default HEAD); their objects stay.\n"
		"--pending deletes every profile in .perun/jobs.\n";
	const char *rev = "HEAD", **names;
	struct repo r;
	struct pidx index;
	char minor[41];
	int pending = 0, n, i, ret = EXIT_OK, pr;

	(void)ctx;
	pr = parse_common(argc, argv, usage, NULL, &pending, &rev, &names, &n);
	if (pr) {
		free(names);
		return pr == 1 ? EXIT_OK : EXIT_USAGE;
	}
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
		size_t np, k;
		repo_pending(&r, &p, &np);
		for (k = 0; k < np; k++)
			if (unlink(p[k].path) < 0)
				ret = EXIT_FAIL, pr_error_errno("cannot remove %s", p[k].path);
		printf("removed %zu pending profiles\n", np);
		pending_free(p, np);
	}
	if (n && (vcs_massage(r.worktree, rev, minor) < 0 || repo_lock(&r) < 0 ||
		  store_read_index(r.dir, minor, &index) < 0)) {
		free(names);
		repo_release(&r);
		return EXIT_FAIL;
	}
	if (n) {
		size_t *drop = calloc((size_t)n, sizeof(*drop)), k;
		int nd = 0;
		for (i = 0; i < n; i++) {
			struct lookup l;
			if (repo_lookup(&r, minor, &index, names[i], &l) < 0 || !l.registered) {
				if (!l.registered && l.path)
					pr_error("%s is not registered for %.7s", names[i], minor);
				free(l.path);
				ret = EXIT_FAIL;
				continue;
			}
			drop[nd++] = l.entry;
		}
		/* remove from the highest index down so numbers stay valid */
		for (k = index.n; k-- > 0;) {
			int j, hit = 0;
			for (j = 0; j < nd; j++)
				hit |= drop[j] == k;
			if (hit) {
				printf("removed %s from %.7s\n", index.entries[k].path, minor);
				pidx_remove(&index, k);
			}
		}
		if (nd && store_write_index(r.dir, minor, &index) < 0)
			ret = EXIT_FAIL;
		free(drop);
		pidx_release(&index);
	}
	free(names);
	repo_release(&r);
	return ret;
}
