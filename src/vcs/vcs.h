/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Version control, for origins and the store (seeds/000 "VCS API").  The
 * only file that includes git2.h is vcs/git.c; another backend would be
 * one more file behind this header.  */
#ifndef PERUN_VCS_H
#define PERUN_VCS_H

#include <stddef.h>
#include <stdint.h>

struct minor_version {
	char sha[41];
	char *author, *email, *subject;
	int64_t date;		/* seconds since the epoch */
	size_t nparents;
	char parents[4][41];
};

/* Finds the work tree containing path; caller frees; NULL when none.  */
char *vcs_find_worktree(const char *path);
/* Creates a git repository at path unless one is there.  */
int vcs_init(const char *path);
/* Writes the 40-hex HEAD commit of the repository at worktree; -1 when none.  */
int vcs_head(const char *worktree, char out[41]);
/* 1 when the repository has no commit yet (an unborn branch), 0 when HEAD
 * names a commit, -1 on error.  */
int vcs_unborn(const char *worktree);
/* Anything git accepts (HEAD~2, tags, short ids) to a 40-hex commit id.  */
int vcs_massage(const char *worktree, const char *rev, char out[41]);
/* The branch HEAD is on, or "HEAD (detached)"; caller frees.  */
char *vcs_major_version(const char *worktree);
int vcs_minor_info(const char *worktree, const char *sha, struct minor_version *mv);
void minor_version_release(struct minor_version *mv);
/* Walks first parents and merges from sha, newest first; stops after max (0 =
 * all) or when fn returns non-zero.  */
typedef int (*vcs_walk_fn)(void *ctx, const struct minor_version *mv);
int vcs_walk(const char *worktree, const char *sha, size_t max, vcs_walk_fn fn, void *ctx);
/* The minor versions vcs_walk visits from sha (at most max, 0 = all), newest
 * first, copied into *out (*n of them): for a caller that goes through them
 * itself.  Free with vcs_log_release.  0, or -1 reported (*out NULL).  */
int vcs_log(const char *worktree, const char *sha, size_t max, struct minor_version **out,
	    size_t *n);
void vcs_log_release(struct minor_version *v, size_t n);
/* 1 when tracked files or the index differ from HEAD, 0 clean, -1 error.  */
int vcs_is_dirty(const char *worktree);
/* Has the repository ignore pattern in this clone only (git's
 * .git/info/exclude), unless it does already.  */
int vcs_ignore(const char *worktree, const char *pattern);
/* Stashes uncommitted changes; *saved says whether there were any.  */
int vcs_save_state(const char *worktree, int *saved);
/* Pops what vcs_save_state stashed, when saved.  */
int vcs_restore_state(const char *worktree, int saved);
/* Checks out a minor version (detached HEAD).  */
int vcs_checkout(const char *worktree, const char *sha);
/* Writes the files of commit sha into the directory dir (created when
 * missing), as a checkout would: the repository's HEAD, index and work tree
 * are not touched.  */
int vcs_export_tree(const char *worktree, const char *sha, const char *dir);
/* The commits from..to as git names them (reachable from to, not from from;
 * from NULL: every ancestor), first parents only, oldest first, into *out
 * (caller frees) and *n.  */
int vcs_range(const char *worktree, const char *from, const char *to, char (**out)[41],
	      size_t *n);

/* Profiles travel between hosts in one ref, refs/perun/profiles, whose tree
 * holds files by their path under .perun (objects/xx/yyyy...): perun push
 * and perun fetch.  */
#define VCS_SYNC_REF "refs/perun/profiles"
/* Called for each file of the fetched tree; non-zero stops the walk.  */
typedef int (*vcs_file_fn)(void *ctx, const char *path, const unsigned char *data, size_t len);
/* Fetches remote's VCS_SYNC_REF (remote: a configured remote's name, a URL
 * or a path) and calls fn for each of its files.  tip receives the fetched
 * commit, or "" when the remote has no profiles yet.  */
int vcs_sync_fetch(const char *worktree, const char *remote, vcs_file_fn fn, void *ctx,
		   char tip[41]);
/* Reads the file path (as stored) into data and checks it: 0, or -1 when it
 * must not be pushed (reported).  */
struct strbuf;
typedef int (*vcs_read_fn)(void *ctx, const char *path, struct strbuf *data);
/* Commits the files paths[i], each given by read (so what is pushed is the
 * very bytes read checked, not a second read of the file), with the local ref
 * and remote_tip ("" for none) as parents, moves the local ref there, and
 * updates the remote's ref from remote_tip to it.  0 done, 1 the remote ref
 * moved since remote_tip was fetched (fetch and retry), -1 error.  */
int vcs_sync_push(const char *worktree, const char *remote, vcs_read_fn read_fn, void *ctx,
		  char *const *paths, size_t n, const char *remote_tip);
/* One piece of a diff: kind 'h' is a hunk header ("@@ -1,2 +1,3 @@ int
 * f(void)\n": git's function context after the second @@), '+', '-' and ' '
 * a line of the hunk; text is not NUL-terminated.  Non-zero stops.  */
typedef int (*vcs_diff_fn)(void *ctx, const char *path, char kind, const char *text,
			   size_t len);
/* Diffs the commit from against the commit to, or against the work tree
 * (with the index) when to is NULL, with context lines around each change;
 * calls fn for every hunk and line.  0, 1 when fn stopped it, -1 (reported).  */
int vcs_diff(const char *worktree, const char *from, const char *to, unsigned context,
	     vcs_diff_fn fn, void *ctx);

/* A version control backend: one table per system.  Adding one means a new
 * vcs/NAME.c defining its table and a line in vcs.c's list.  */
struct vcs_backend {
	const char *name;
	int (*detect)(const char *path);	/* 1 when path is in such a repository */
	char *(*find_worktree)(const char *path);
	int (*init)(const char *path);
	int (*massage)(const char *worktree, const char *rev, char out[41]);
	int (*unborn)(const char *worktree);
	char *(*major_version)(const char *worktree);
	int (*minor_info)(const char *worktree, const char *sha, struct minor_version *mv);
	int (*walk)(const char *worktree, const char *sha, size_t max, vcs_walk_fn fn, void *ctx);
	int (*is_dirty)(const char *worktree);
	int (*ignore)(const char *worktree, const char *pattern);
	int (*save_state)(const char *worktree, int *saved);
	int (*restore_state)(const char *worktree, int saved);
	int (*checkout)(const char *worktree, const char *sha);
	int (*export_tree)(const char *worktree, const char *sha, const char *dir);
	int (*range)(const char *worktree, const char *from, const char *to, char (**out)[41],
		     size_t *n);
	int (*fetch_ref)(const char *worktree, const char *remote, vcs_file_fn fn, void *ctx,
			 char tip[41]);
	int (*push_ref)(const char *worktree, const char *remote, vcs_read_fn read_fn, void *ctx,
			char *const *paths, size_t n, const char *remote_tip);
	int (*diff)(const char *worktree, const char *from, const char *to, unsigned context,
		    vcs_diff_fn fn, void *ctx);
};

extern const struct vcs_backend vcs_git;
/* The backend named in local.yml (or found by detection), for messages.  */
const char *vcs_name(const char *worktree);

#endif
