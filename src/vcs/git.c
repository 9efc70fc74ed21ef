#include "config.h"

#define PR_FMT "vcs"

#include <git2.h>
#include <string.h>

#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* libgit2 is initialised once per process.  */
static int git_ready;

static void git_init_once(void)
{
	if (!git_ready) {
		git_libgit2_init();
		git_ready = 1;
	}
}

char *vcs_find_worktree(const char *path)
{
	git_repository *repo = NULL;
	char *out = NULL;

	git_init_once();
	if (git_repository_open_ext(&repo, path, 0, NULL) < 0)
		return NULL;
	if (!git_repository_is_bare(repo) && git_repository_workdir(repo)) {
		size_t n;
		out = xstrdup(git_repository_workdir(repo));
		n = strlen(out);
		if (n > 1 && out[n - 1] == '/')
			out[n - 1] = '\0';
	}
	git_repository_free(repo);
	return out;
}

int vcs_head(const char *worktree, char out[41])
{
	git_repository *repo = NULL;
	git_oid oid;
	int ret = -1;

	git_init_once();
	if (git_repository_open(&repo, worktree) < 0) {
		const git_error *e = git_error_last();
		return pr_error("git_repository_open %s: %s", worktree, e ? e->message : "failed");
	}
	if (git_reference_name_to_id(&oid, repo, "HEAD") < 0) {
		const git_error *e = git_error_last();
		pr_error("git HEAD of %s: %s (make a first commit)", worktree,
			 e ? e->message : "unborn");
		goto out;
	}
	git_oid_tostr(out, 41, &oid);
	ret = 0;
out:
	git_repository_free(repo);
	return ret;
}
