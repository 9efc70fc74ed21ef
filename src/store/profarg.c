/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun"

#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "store/profarg.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

int profile_arg_load(const char *spec, struct profile *p, char **label, char minor[41])
{
	struct repo r;
	struct pidx index;
	struct lookup l;
	const char *colon = strchr(spec, ':'), *what = spec;
	char *rev = NULL, *pd = NULL;
	int ret = -1, unborn;

	minor[0] = 0;
	*label = NULL;
	if (fs_exists(spec) && !strchr(spec, '@')) {
		if (profile_load(p, spec) < 0)
			return -1;
		*label = xstrdup(spec);
		if (profile_str(p, "origin"))
			snprintf(minor, 41, "%s", profile_str(p, "origin"));
		return 0;
	}
	if (!(pd = repo_locate()))
		return pr_error("%s: no such file, and no perun repository here to look it up in "
				"(perun init)",
				spec);
	free(pd);
	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	memset(&l, 0, sizeof(l));
	pidx_init(&index);
	if (colon) {
		rev = xstrdup(spec);
		rev[colon - spec] = 0;
		what = colon + 1;
	}
	if (repo_find(&r) < 0)
		goto out;
	unborn = rev ? 0 : vcs_unborn(r.worktree);
	if (unborn < 0)
		goto out;
	if (!unborn && (vcs_massage(r.worktree, rev ? rev : "HEAD", minor) < 0 ||
			store_read_index(r.dir, minor, &index) < 0))
		goto out;
	if (repo_lookup(&r, minor, &index, what, &l) < 0 || repo_load(&r, &index, &l, p) < 0)
		goto out;
	*label = xstrfmt("%.7s:%s", minor, what);
	ret = 0;
out:
	free(rev);
	free(l.path);
	pidx_release(&index);
	repo_release(&r);
	return ret;
}
