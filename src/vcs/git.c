/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "vcs"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include "util/fs.h"
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

static int git_ignore(const char *worktree, const char *pattern)
{
	git_repository *repo = open_repo(worktree);
	struct strbuf sb = STRBUF_INIT;
	char *info, *path;
	const char *line;
	size_t len = strlen(pattern);
	int fd, ret = 0;

	if (!repo)
		return -1;
	/* the common directory: a linked work tree shares its exclude file */
	info = xstrfmt("%sinfo", git_repository_commondir(repo));
	path = xstrfmt("%s/exclude", info);
	git_repository_free(repo);
	if (fs_mkdir_p(info, 0755) < 0) {
		ret = -1;
		goto out;
	}
	fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0 && geteuid() == 0) {
		/* root in a user's repository: a file it made there is the user's */
		struct stat dst, fst;
		if (stat(info, &dst) == 0 && fstat(fd, &fst) == 0 && fst.st_uid != dst.st_uid &&
		    fst.st_size == 0 && fchown(fd, dst.st_uid, dst.st_gid) < 0)
			pr_warn("chown %s: %s", path, strerror(errno));
	}
	if (fd < 0 || fs_read_fd(fd, &sb) < 0) {
		ret = pr_error_errno("%s", path);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	for (line = strbuf_str(&sb); *line; line += strcspn(line, "\n"), line += *line == '\n')
		if (!strncmp(line, pattern, len) && (line[len] == '\n' || !line[len]))
			break;
	if (!*line) {
		struct strbuf add = STRBUF_INIT;
		if (sb.len && sb.buf[sb.len - 1] != '\n')
			strbuf_addch(&add, '\n');
		strbuf_addf(&add, "%s\n", pattern);
		if (write(fd, add.buf, add.len) != (ssize_t)add.len)
			ret = pr_error_errno("write %s", path);
		strbuf_release(&add);
	}
	if (close(fd) < 0 && !ret)
		ret = pr_error_errno("close %s", path);
out:
	strbuf_release(&sb);
	free(info);
	free(path);
	return ret;
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

static int git_export(const char *worktree, const char *sha, const char *dir)
{
	git_repository *repo = open_repo(worktree);
	git_object *obj = NULL;
	git_tree *tree = NULL;
	git_index *empty = NULL;
	git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
	git_oid oid;
	int ret = -1;

	if (!repo)
		return -1;
	/* into dir only: the repository's index, HEAD and work tree stay as they are */
	opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DONT_UPDATE_INDEX;
	opts.target_directory = dir;
	if (git_oid_fromstr(&oid, sha) < 0 || git_object_lookup(&obj, repo, &oid, GIT_OBJECT_COMMIT) < 0 ||
	    git_commit_tree(&tree, (git_commit *)obj) < 0) {
		git_fail("git_commit_tree", sha);
		goto out;
	}
	/* against an empty baseline: every file of the tree is written */
	if (git_index_new(&empty) < 0) {
		git_fail("git_index_new", sha);
		goto out;
	}
	opts.baseline_index = empty;
	if (git_checkout_tree(repo, (git_object *)tree, &opts) < 0)
		git_fail("git checkout into", dir);
	else
		ret = 0;
out:
	git_index_free(empty);
	git_tree_free(tree);
	git_object_free(obj);
	git_repository_free(repo);
	return ret;
}

static int git_range(const char *worktree, const char *from, const char *to, char (**out)[41],
		     size_t *n)
{
	git_repository *repo = open_repo(worktree);
	git_revwalk *walk = NULL;
	git_oid oid;
	size_t alloc = 0;
	int ret = -1, r;

	*out = NULL;
	*n = 0;
	if (!repo)
		return -1;
	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) < 0 ||
	    git_revwalk_simplify_first_parent(walk) < 0) {
		git_fail("git_revwalk_new", worktree);
		goto out;
	}
	if (git_oid_fromstr(&oid, to) < 0 || git_revwalk_push(walk, &oid) < 0) {
		git_fail("git_revwalk_push", to);
		goto out;
	}
	if (from && (git_oid_fromstr(&oid, from) < 0 || git_revwalk_hide(walk, &oid) < 0)) {
		git_fail("git_revwalk_hide", from);
		goto out;
	}
	while ((r = git_revwalk_next(&oid, walk)) == 0) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		git_oid_tostr((*out)[(*n)++], 41, &oid);
	}
	if (r != GIT_ITEROVER) {
		git_fail("git_revwalk_next", to);
		free(*out);
		*out = NULL;
		*n = 0;
		goto out;
	}
	ret = 0;
out:
	git_revwalk_free(walk);
	git_repository_free(repo);
	return ret;
}

/* --- perun push / perun fetch ------------------------------------------------- */

/* ssh remotes: the agent's keys, as git would offer them.  */
static int sync_credentials(git_credential **out, const char *url, const char *user,
			    unsigned int allowed, void *payload)
{
	(void)url;
	(void)payload;
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, user ? user : "git");
	return GIT_PASSTHROUGH;
}

/* A remote by name, or an anonymous one for a URL or path; *track gets the
 * local ref that holds what was fetched from it (caller frees).  */
static int sync_remote(git_repository *repo, const char *name, git_remote **out, char **track)
{
	size_t i;

	if (git_remote_lookup(out, repo, name) == 0) {
		*track = xstrfmt("refs/perun/remotes/%s/profiles", name);
		return 0;
	}
	if (!strchr(name, ':') && !strchr(name, '/') && access(name, F_OK) != 0)
		return pr_error("'%s' is neither a remote of this repository nor a URL or path: "
				"add it with 'git remote add %s URL', or give its URL",
				name, name);
	if (git_remote_create_anonymous(out, repo, name) < 0)
		return git_fail("git_remote_create_anonymous", name);
	/* one tracking ref per URL: its characters that refs refuse become '_' */
	*track = xstrfmt("refs/perun/remotes/url-%s/profiles", name);
	for (i = strlen("refs/perun/remotes/url-"); (*track)[i]; i++)
		if (!strncmp(*track + i, "/profiles", 9) && !(*track)[i + 9])
			break;
		else if (!((*track)[i] >= 'a' && (*track)[i] <= 'z') &&
			 !((*track)[i] >= 'A' && (*track)[i] <= 'Z') &&
			 !((*track)[i] >= '0' && (*track)[i] <= '9') && (*track)[i] != '-')
			(*track)[i] = '_';
	return 0;
}

/* The local path of a remote's URL, or NULL when it is reached over a network.  */
static char *sync_local_path(const char *url)
{
	if (!strncmp(url, "file://", 7))
		return xstrdup(url + 7);
	if (strstr(url, "://") || (strchr(url, ':') && !strchr(url, '/')) ||
	    (strchr(url, ':') && strchr(url, ':') < strchr(url, '/')))
		return NULL;	/* scheme://, or scp-like host:path */
	return xstrdup(url);
}

/* The largest file a fetched tree may hold (a perun object inflates to at
 * most 1 GiB and compresses smaller).  */
#define SYNC_MAX_BLOB ((size_t)1 << 30)

struct sync_walk {
	git_repository *repo;
	vcs_file_fn fn;
	void *ctx;
	int stopped;
};

static int sync_walk_cb(const char *root, const git_tree_entry *e, void *payload)
{
	struct sync_walk *w = payload;
	git_blob *blob = NULL;
	char *path;
	int r;

	git_odb *odb = NULL;
	git_object_t otype;
	size_t osize = 0;

	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	/* The remote is not trusted: its size is asked before it is read.  */
	if (git_repository_odb(&odb, w->repo) < 0 ||
	    git_odb_read_header(&osize, &otype, odb, git_tree_entry_id(e)) < 0) {
		git_odb_free(odb);
		git_fail("git_odb_read_header", git_tree_entry_name(e));
		w->stopped = -1;
		return -1;
	}
	git_odb_free(odb);
	if (osize > SYNC_MAX_BLOB) {
		pr_error("%s%s fetched: %zu bytes, more than a perun object may hold (%zu; "
			 "refused, nothing was stored): is the remote written by perun push?",
			 root, git_tree_entry_name(e), osize, SYNC_MAX_BLOB);
		w->stopped = -1;
		return -1;
	}
	if (git_blob_lookup(&blob, w->repo, git_tree_entry_id(e)) < 0) {
		git_fail("git_blob_lookup", git_tree_entry_name(e));
		w->stopped = -1;
		return -1;
	}
	path = xstrfmt("%s%s", root, git_tree_entry_name(e));
	r = w->fn(w->ctx, path, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	free(path);
	git_blob_free(blob);
	if (r) {
		w->stopped = r;
		return -1;
	}
	return 0;
}

static int git_fetch_ref(const char *worktree, const char *name, vcs_file_fn fn, void *ctx,
			 char tip[41])
{
	git_repository *repo = open_repo(worktree);
	git_fetch_options opts = GIT_FETCH_OPTIONS_INIT;
	git_remote *remote = NULL;
	git_reference *old = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	char *track = NULL, *spec = NULL;
	git_strarray specs;
	git_oid oid;
	struct sync_walk w;
	int ret = -1, r, k;

	tip[0] = '\0';
	if (!repo)
		return -1;
	if (sync_remote(repo, name, &remote, &track) < 0)
		goto out;
	/* what the remote lacks must not look fetched: start from no tracking ref */
	if (git_reference_lookup(&old, repo, track) == 0)
		git_reference_delete(old);
	spec = xstrfmt("+%s:%s", VCS_SYNC_REF, track);
	specs.strings = &spec;
	specs.count = 1;
	opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	opts.update_fetchhead = 0;
	opts.callbacks.credentials = sync_credentials;
	/* another host deleting its incoming ref (sync_push_local) rewrites the
	 * remote's packed refs while libgit2's local transport lists them
	 * ("reference ... not found"): listing them again is safe */
	for (k = 0; (r = git_remote_fetch(remote, &specs, &opts, "perun fetch")) < 0; k++) {
		const git_error *e = git_error_last();
		if ((r != GIT_ENOTFOUND && !(e && e->klass == GIT_ERROR_REFERENCE)) || k == 4) {
			git_fail("git_remote_fetch", name);
			goto out;
		}
		usleep(20000 * (unsigned)(k + 1));
	}
	r = git_reference_name_to_id(&oid, repo, track);
	if (r == GIT_ENOTFOUND) {
		ret = 0;	/* the remote has no profiles yet */
		goto out;
	}
	if (r < 0 || git_commit_lookup(&commit, repo, &oid) < 0 ||
	    git_commit_tree(&tree, commit) < 0) {
		git_fail("git_commit_tree", track);
		goto out;
	}
	git_oid_tostr(tip, 41, &oid);
	w.repo = repo;
	w.fn = fn;
	w.ctx = ctx;
	w.stopped = 0;
	if (git_tree_walk(tree, GIT_TREEWALK_PRE, sync_walk_cb, &w) < 0 && !w.stopped) {
		git_fail("git_tree_walk", track);
		goto out;
	}
	ret = w.stopped ? -1 : 0;
out:
	git_tree_free(tree);
	git_commit_free(commit);
	git_reference_free(old);
	git_remote_free(remote);
	git_repository_free(repo);
	free(track);
	free(spec);
	return ret;
}

/* Collects the refs the remote refused.  */
static int sync_push_update(const char *ref, const char *status, void *payload)
{
	struct strbuf *refused = payload;

	if (status)
		strbuf_addf(refused, "%s%s: %s", refused->len ? "; " : "", ref, status);
	return 0;
}

/* Creates VCS_SYNC_REF in the repository at gitdir only while it is absent,
 * as git itself does: its lock file taken with O_EXCL, the ref looked up
 * under that lock, then the lock renamed into place.  libgit2 checks that a
 * ref is absent before it takes the lock, so two first pushes at once could
 * both create it and one would be lost.  0 created, 1 when another host
 * holds the lock or created the ref first, -1 on error.  */
static int create_ref_exclusive(git_repository *rrepo, const char *gitdir, const git_oid *commit)
{
	char *lock = xstrfmt("%s/%s.lock", gitdir, VCS_SYNC_REF);
	char *final = xstrfmt("%s/%s", gitdir, VCS_SYNC_REF), line[GIT_OID_HEXSZ + 2];
	git_reference *ref = NULL;
	int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644), ret = -1, r;

	if (fd < 0) {
		ret = errno == EEXIST ? 1 : pr_error_errno("open %s", lock);
		goto out;
	}
	r = git_reference_lookup(&ref, rrepo, VCS_SYNC_REF);
	git_reference_free(ref);
	if (r == 0) {
		ret = 1;
		goto drop;
	}
	snprintf(line, sizeof(line), "%s\n", git_oid_tostr_s(commit));
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line) || fsync(fd) < 0) {
		pr_error_errno("write %s", lock);
		goto drop;
	}
	close(fd);
	fd = -1;
	if (rename(lock, final) < 0) {
		pr_error_errno("rename %s", lock);
		goto drop;
	}
	ret = 0;
	goto out;
drop:
	if (fd >= 0)
		close(fd);
	unlink(lock);
out:
	free(lock);
	free(final);
	return ret;
}

/* Updates the ref of a remote on this machine by compare-and-swap: libgit2's
 * local transport overwrites a ref it has read, so two pushes at once could
 * lose one.  The commit travels under a private name first.  1 when the ref
 * moved.  */
/* libgit2's local transport pushes into bare repositories only: a remote
 * path with a work tree is refused here, saying what to do.  */
static int refuse_work_tree(git_remote *remote, const char *path)
{
	git_repository *rrepo = NULL, *self = git_remote_owner(remote);
	const char *w;
	char *here;
	size_t n;
	int bare;

	if (git_repository_open_ext(&rrepo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return 0;	/* the push says what is wrong */
	bare = git_repository_is_bare(rrepo);
	git_repository_free(rrepo);
	if (bare)
		return 0;
	w = git_repository_workdir(self);
	here = xstrdup(w ? w : git_repository_path(self));
	n = strlen(here);
	while (n > 1 && here[n - 1] == '/')
		here[--n] = '\0';
	pr_error("%s: a repository with a work tree, which perun cannot push into: push to a bare "
		 "repository (git clone --bare), or run 'perun fetch %s' there",
		 path, here);
	free(here);
	return -1;
}

static int sync_push_local(git_remote *remote, const char *path, const git_oid *commit,
			   const char *remote_tip, git_push_options *opts)
{
	git_repository *rrepo = NULL;
	git_reference *ref = NULL;
	git_oid expect;
	char rnd[17], *tmp, *spec;
	git_strarray specs;
	int ret = -1, r;

	if (refuse_work_tree(remote, path) < 0)
		return -1;
	if (fs_random_hex(rnd, 16) < 0)
		return -1;
	tmp = xstrfmt("refs/perun/incoming/%s", rnd);
	spec = xstrfmt("+%s:%s", VCS_SYNC_REF, tmp);
	specs.strings = &spec;
	specs.count = 1;
	/* another host deleting its own incoming ref rewrites the remote's
	 * packed refs while libgit2 reads them ("reference ... not found"):
	 * the push of a private name is safe to try again */
	for (r = 0; git_remote_push(remote, &specs, opts) < 0; r++) {
		if (r == 4) {
			git_fail("git_remote_push", path);
			goto out;
		}
		usleep(20000 * (unsigned)(r + 1));
	}
	if (git_repository_open_ext(&rrepo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		git_fail("git_repository_open", path);
		goto out;
	}
	if (!remote_tip[0]) {
		/* the first push: the ref is created only if still absent */
		ret = create_ref_exclusive(rrepo, git_repository_path(rrepo), commit);
		goto drop_tmp;
	}
	if (git_oid_fromstr(&expect, remote_tip) < 0)
		goto out;
	r = git_reference_create_matching(&ref, rrepo, VCS_SYNC_REF, commit, 1, &expect,
					  "perun push");
	if (r == GIT_EMODIFIED || r == GIT_EEXISTS || r == GIT_ELOCKED)
		ret = 1;
	else if (r < 0)
		git_fail("git_reference_create_matching", path);
	else
		ret = 0;
drop_tmp:
	git_reference_free(ref);
	ref = NULL;
	if (git_reference_lookup(&ref, rrepo, tmp) == 0)
		git_reference_delete(ref);
out:
	git_reference_free(ref);
	git_repository_free(rrepo);
	free(tmp);
	free(spec);
	return ret;
}

static int git_push_ref(const char *worktree, const char *name, vcs_read_fn read_fn, void *ctx,
			char *const *paths, size_t n, const char *remote_tip)
{
	git_repository *repo = open_repo(worktree);
	git_push_options opts = GIT_PUSH_OPTIONS_INIT;
	git_remote *remote = NULL;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	const git_commit *parents[2];
	git_commit *pc[2] = { NULL, NULL };
	git_signature *sig = NULL;
	git_oid tree_oid, commit_oid, oid;
	struct strbuf refused = STRBUF_INIT;
	char *track = NULL, *spec = NULL, *local = NULL;
	git_strarray specs;
	size_t i, np = 0;
	int ret = -1, r;

	if (!repo)
		return -1;
	if (sync_remote(repo, name, &remote, &track) < 0)
		goto out;
	if (git_index_new(&idx) < 0) {
		git_fail("git_index_new", worktree);
		goto out;
	}
	for (i = 0; i < n; i++) {
		git_index_entry e;
		struct strbuf data = STRBUF_INIT;
		/* the blob is built from the bytes read checked: no second read of
		 * the file another process could have changed in between */
		if (read_fn(ctx, paths[i], &data) < 0) {
			strbuf_release(&data);
			goto out;
		}
		r = git_blob_create_from_buffer(&oid, repo, data.buf ? data.buf : "", data.len);
		strbuf_release(&data);
		if (r < 0) {
			git_fail("git_blob_create_from_buffer", paths[i]);
			goto out;
		}
		memset(&e, 0, sizeof(e));
		e.mode = GIT_FILEMODE_BLOB;
		e.id = oid;
		e.path = paths[i];
		if (git_index_add(idx, &e) < 0) {
			git_fail("git_index_add", paths[i]);
			goto out;
		}
	}
	if (git_index_write_tree_to(&tree_oid, idx, repo) < 0 ||
	    git_tree_lookup(&tree, repo, &tree_oid) < 0) {
		git_fail("git_index_write_tree_to", worktree);
		goto out;
	}
	if (git_reference_name_to_id(&oid, repo, VCS_SYNC_REF) == 0 &&
	    git_commit_lookup(&pc[np], repo, &oid) == 0)
		np++;
	if (remote_tip[0] && (np == 0 || strcmp(remote_tip, git_oid_tostr_s(&oid))) &&
	    git_oid_fromstr(&oid, remote_tip) == 0 && git_commit_lookup(&pc[np], repo, &oid) == 0)
		np++;
	/* the remote holds exactly these files already: nothing to push */
	if (remote_tip[0] && np > 0 && git_oid_equal(git_commit_tree_id(pc[np - 1]), &tree_oid) &&
	    !strcmp(git_oid_tostr_s(git_commit_id(pc[np - 1])), remote_tip)) {
		r = git_reference_create(NULL, repo, VCS_SYNC_REF, git_commit_id(pc[np - 1]), 1,
					 "perun push: up to date");
		ret = r < 0 ? git_fail("git_reference_create", VCS_SYNC_REF) : 0;
		goto out;
	}
	for (i = 0; i < np; i++)
		parents[i] = pc[i];
	if (git_signature_default(&sig, repo) < 0 &&
	    git_signature_now(&sig, "perun", "perun@localhost") < 0) {
		git_fail("git_signature", worktree);
		goto out;
	}
	if (git_commit_create(&commit_oid, repo, NULL, sig, sig, NULL, "perun push", tree, np,
			      parents) < 0 ||
	    git_reference_create(NULL, repo, VCS_SYNC_REF, &commit_oid, 1, "perun push") < 0) {
		git_fail("git_commit_create", VCS_SYNC_REF);
		goto out;
	}
	opts.callbacks.credentials = sync_credentials;
	opts.callbacks.push_update_reference = sync_push_update;
	opts.callbacks.payload = &refused;
	local = sync_local_path(git_remote_url(remote));
	if (local) {
		ret = sync_push_local(remote, local, &commit_oid, remote_tip, &opts);
		goto out;
	}
	spec = xstrfmt("%s:%s", VCS_SYNC_REF, VCS_SYNC_REF);
	specs.strings = &spec;
	specs.count = 1;
	r = git_remote_push(remote, &specs, &opts);
	if (r == GIT_ENONFASTFORWARD || (r == 0 && refused.len)) {
		ret = 1;	/* another host pushed first */
	} else if (r < 0) {
		const git_error *e = git_error_last();
		if (e && e->message && (strstr(e->message, "fast") || strstr(e->message, "fetch first")))
			ret = 1;
		else
			git_fail("git_remote_push", name);
	} else {
		ret = 0;
	}
out:
	strbuf_release(&refused);
	git_signature_free(sig);
	git_commit_free(pc[0]);
	git_commit_free(pc[1]);
	git_tree_free(tree);
	git_index_free(idx);
	git_remote_free(remote);
	git_repository_free(repo);
	free(track);
	free(spec);
	free(local);
	return ret;
}

/* --- diffs of two versions (diff tracing) ------------------------------------ */

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
	.ignore = git_ignore,
	.save_state = git_save_state,
	.restore_state = git_restore_state,
	.checkout = git_checkout_minor,
	.export_tree = git_export,
	.range = git_range,
	.fetch_ref = git_fetch_ref,
	.push_ref = git_push_ref,
	.diff = git_diff_versions,
};
