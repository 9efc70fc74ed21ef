#include "config.h"

#define PR_FMT "vcs"

#include <git2.h>
#include <stdlib.h>
#include <unistd.h>
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

static int git_fail(const char *call, const char *what)
{
	const git_error *e = git_error_last();

	return pr_error("%s %s: %s", call, what, e && e->message ? e->message : "failed");
}

/* git_repository_open_ext(), with git's ownership refusal (safe.directory) explained
 * and its fix named: libgit2 reports it as GIT_EOWNER, or, when no safe.directory is
 * configured at all, as that config value missing.  */
static int open_ext(git_repository **repo, const char *path, unsigned flags)
{
	static int told;	/* say it once per process */
	const git_error *e;
	char *abs;
	int r;

	git_init_once();
	r = git_repository_open_ext(repo, path, flags, NULL);
	if (r == 0)
		return 0;
	e = git_error_last();
	if (r != GIT_EOWNER && !(e && e->message && strstr(e->message, "safe.directory")))
		return r;
	if (told++)
		return GIT_EOWNER;
	abs = realpath(path, NULL);
	pr_error("git refuses the repository at %s: it is not owned by you (uid %d) and git's "
		 "safe.directory does not list it; if you trust it: git config --global --add "
		 "safe.directory %s",
		 abs ? abs : path, (int)geteuid(), abs ? abs : path);
	free(abs);
	return GIT_EOWNER;
}

static git_repository *open_repo(const char *worktree)
{
	git_repository *repo = NULL;
	int r = open_ext(&repo, worktree, 0);

	if (r < 0) {
		if (r != GIT_EOWNER)
			git_fail("git_repository_open", worktree);
		return NULL;
	}
	return repo;
}

static char *git_find_worktree(const char *path)
{
	git_repository *repo = NULL;
	char *out = NULL;

	if (open_ext(&repo, path, 0) < 0)
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

static int git_init_repo(const char *path)
{
	git_repository *repo = NULL;

	git_init_once();
	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0) {
		git_repository_free(repo);
		return 0;
	}
	if (git_repository_init(&repo, path, 0) < 0)
		return git_fail("git_repository_init", path);
	git_repository_free(repo);
	return 0;
}

static int git_massage(const char *worktree, const char *rev, char out[41])
{
	git_repository *repo = open_repo(worktree);
	git_object *obj = NULL, *commit = NULL;
	int ret = -1;

	if (!repo)
		return -1;
	if (git_revparse_single(&obj, repo, rev) < 0) {
		const git_error *e = git_error_last();
		pr_error("'%s' is not a revision of %s: %s", rev, worktree,
			 e && e->message ? e->message : "unknown");
		goto out;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		pr_error("'%s' does not name a commit", rev);
		goto out;
	}
	git_oid_tostr(out, 41, git_object_id(commit));
	ret = 0;
out:
	git_object_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	return ret;
}

static int git_unborn(const char *worktree)
{
	git_repository *repo = open_repo(worktree);
	int r;

	if (!repo)
		return -1;
	r = git_repository_head_unborn(repo);
	git_repository_free(repo);
	return r < 0 ? git_fail("git_repository_head_unborn", worktree) : r;
}

static char *git_major_version(const char *worktree)
{
	git_repository *repo = open_repo(worktree);
	git_reference *head = NULL;
	char *out;

	if (!repo)
		return NULL;
	if (git_repository_head(&head, repo) < 0) {
		/* an unborn branch: HEAD still names it */
		const char *t;
		out = NULL;
		if (git_reference_lookup(&head, repo, "HEAD") == 0 &&
		    (t = git_reference_symbolic_target(head)) != NULL)
			out = xstrdup(!strncmp(t, "refs/heads/", 11) ? t + 11 : t);
		git_reference_free(head);
		git_repository_free(repo);
		return out ? out : xstrdup("(no commits)");
	}
	out = git_reference_is_branch(head) ? xstrdup(git_reference_shorthand(head))
					    : xstrdup("HEAD (detached)");
	git_reference_free(head);
	git_repository_free(repo);
	return out;
}

static void fill_minor(struct minor_version *mv, const git_commit *c)
{
	const git_signature *a = git_commit_author(c);
	const char *summary = git_commit_summary((git_commit *)c);
	size_t i;

	memset(mv, 0, sizeof(*mv));
	git_oid_tostr(mv->sha, sizeof(mv->sha), git_commit_id(c));
	mv->author = xstrdup(a && a->name ? a->name : "");
	mv->email = xstrdup(a && a->email ? a->email : "");
	mv->subject = xstrdup(summary ? summary : "");
	mv->date = (int64_t)git_commit_time(c);
	mv->nparents = git_commit_parentcount(c);
	for (i = 0; i < mv->nparents && i < 4; i++)
		git_oid_tostr(mv->parents[i], 41, git_commit_parent_id(c, (unsigned)i));
}

static int git_minor_info(const char *worktree, const char *sha, struct minor_version *mv)
{
	git_repository *repo = open_repo(worktree);
	git_commit *c = NULL;
	git_oid oid;
	int ret = -1;

	if (!repo)
		return -1;
	if (git_oid_fromstr(&oid, sha) < 0 || git_commit_lookup(&c, repo, &oid) < 0) {
		git_fail("git_commit_lookup", sha);
		goto out;
	}
	fill_minor(mv, c);
	ret = 0;
out:
	git_commit_free(c);
	git_repository_free(repo);
	return ret;
}

static int git_walk(const char *worktree, const char *sha, size_t max, vcs_walk_fn fn,
		    void *ctx)
{
	git_repository *repo = open_repo(worktree);
	git_revwalk *walk = NULL;
	git_oid oid;
	size_t n = 0;
	int ret = -1;

	if (!repo)
		return -1;
	if (git_revwalk_new(&walk, repo) < 0 || git_oid_fromstr(&oid, sha) < 0 ||
	    git_revwalk_push(walk, &oid) < 0) {
		git_fail("git_revwalk", sha);
		goto out;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	while ((max == 0 || n < max) && git_revwalk_next(&oid, walk) == 0) {
		git_commit *c = NULL;
		struct minor_version mv;
		int stop;
		if (git_commit_lookup(&c, repo, &oid) < 0)
			continue;
		fill_minor(&mv, c);
		git_commit_free(c);
		stop = fn(ctx, &mv);
		minor_version_release(&mv);
		n++;
		if (stop)
			break;
	}
	ret = 0;
out:
	git_revwalk_free(walk);
	git_repository_free(repo);
	return ret;
}

static int git_is_dirty(const char *worktree)
{
	git_repository *repo = open_repo(worktree);
	git_status_list *list = NULL;
	git_status_options opts = GIT_STATUS_OPTIONS_INIT;
	int dirty;

	if (!repo)
		return -1;
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;	/* untracked files do not count */
	if (git_status_list_new(&list, repo, &opts) < 0) {
		git_repository_free(repo);
		return git_fail("git_status_list_new", worktree);
	}
	dirty = git_status_list_entrycount(list) > 0;
	git_status_list_free(list);
	git_repository_free(repo);
	return dirty;
}

static int git_detect(const char *path)
{
	char *wt = git_find_worktree(path);

	free(wt);
	return wt != NULL;
}

static int git_save_state(const char *worktree, int *saved)
{
	git_repository *repo = open_repo(worktree);
	git_signature *sig = NULL;
	git_oid oid;
	int r;

	*saved = 0;
	if (!repo)
		return -1;
	if (git_signature_default(&sig, repo) < 0 &&
	    git_signature_now(&sig, "perun", "perun@localhost") < 0) {
		git_repository_free(repo);
		return git_fail("git_signature", worktree);
	}
	r = git_stash_save(&oid, repo, sig, "perun: saved state", GIT_STASH_DEFAULT);
	git_signature_free(sig);
	git_repository_free(repo);
	if (r == GIT_ENOTFOUND)
		return 0;	/* nothing to save */
	if (r < 0)
		return git_fail("git_stash_save", worktree);
	*saved = 1;
	return 0;
}

static int git_restore_state(const char *worktree, int saved)
{
	git_repository *repo;
	int r;

	if (!saved)
		return 0;
	if (!(repo = open_repo(worktree)))
		return -1;
	r = git_stash_pop(repo, 0, NULL);
	git_repository_free(repo);
	return r < 0 ? git_fail("git_stash_pop", worktree) : 0;
}

static int git_checkout_minor(const char *worktree, const char *sha)
{
	git_repository *repo = open_repo(worktree);
	git_object *obj = NULL;
	git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
	git_oid oid;
	int ret = -1;

	if (!repo)
		return -1;
	opts.checkout_strategy = GIT_CHECKOUT_SAFE;
	if (git_oid_fromstr(&oid, sha) < 0 || git_object_lookup(&obj, repo, &oid, GIT_OBJECT_COMMIT) < 0 ||
	    git_checkout_tree(repo, obj, &opts) < 0 || git_repository_set_head_detached(repo, &oid) < 0)
		git_fail("git checkout", sha);
	else
		ret = 0;
	git_object_free(obj);
	git_repository_free(repo);
	return ret;
}

struct diff_ctx {
	vcs_diff_fn fn;
	void *ctx;
	int stopped;
};

static int diff_hunk_cb(const git_diff_delta *d, const git_diff_hunk *h, void *payload)
{
	struct diff_ctx *c = payload;
	const char *path = d->new_file.path ? d->new_file.path : d->old_file.path;

	if (c->fn(c->ctx, path, 'h', h->header, h->header_len) != 0) {
		c->stopped = 1;
		return 1;
	}
	return 0;
}

static int diff_line_cb(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
			void *payload)
{
	struct diff_ctx *c = payload;
	const char *path = d->new_file.path ? d->new_file.path : d->old_file.path;

	(void)h;
	if (l->origin != GIT_DIFF_LINE_ADDITION && l->origin != GIT_DIFF_LINE_DELETION &&
	    l->origin != GIT_DIFF_LINE_CONTEXT)
		return 0;
	if (c->fn(c->ctx, path, l->origin, l->content, l->content_len) != 0) {
		c->stopped = 1;
		return 1;
	}
	return 0;
}

static int tree_of(git_repository *repo, const char *sha, git_tree **out)
{
	git_oid oid;
	git_commit *c = NULL;
	int r;

	if (git_oid_fromstr(&oid, sha) < 0 || git_commit_lookup(&c, repo, &oid) < 0)
		return git_fail("git_commit_lookup", sha);
	r = git_commit_tree(out, c);
	git_commit_free(c);
	return r < 0 ? git_fail("git_commit_tree", sha) : 0;
}

static int git_diff_versions(const char *worktree, const char *from, const char *to,
			     unsigned context, vcs_diff_fn fn, void *ctx)
{
	git_repository *repo = open_repo(worktree);
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	struct diff_ctx c = { fn, ctx, 0 };
	int ret = -1, r;

	if (!repo)
		return -1;
	opts.context_lines = context;
	if (tree_of(repo, from, &a) < 0 || (to && tree_of(repo, to, &b) < 0))
		goto out;
	r = to ? git_diff_tree_to_tree(&diff, repo, a, b, &opts)
	       : git_diff_tree_to_workdir_with_index(&diff, repo, a, &opts);
	if (r < 0) {
		git_fail("git_diff", from);
		goto out;
	}
	r = git_diff_foreach(diff, NULL, NULL, diff_hunk_cb, diff_line_cb, &c);
	if (r < 0 && !c.stopped) {
		git_fail("git_diff_foreach", from);
		goto out;
	}
	ret = c.stopped ? 1 : 0;
out:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_repository_free(repo);
	return ret;
}

const struct vcs_backend vcs_git = {
	.name = "git",
	.detect = git_detect,
	.find_worktree = git_find_worktree,
	.init = git_init_repo,
	.massage = git_massage,
	.unborn = git_unborn,
	.major_version = git_major_version,
	.minor_info = git_minor_info,
	.walk = git_walk,
	.is_dirty = git_is_dirty,
	.save_state = git_save_state,
	.restore_state = git_restore_state,
	.checkout = git_checkout_minor,
	.diff = git_diff_versions,
};
