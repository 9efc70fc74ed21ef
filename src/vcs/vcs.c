/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Dispatch of the VCS API to a backend.  */
#include "config.h"

#define PR_FMT "vcs"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* Known backends, tried in order by detection.  */
static const struct vcs_backend *const backends[] = { &vcs_git, NULL };

static const struct vcs_backend *backend_for(const char *path)
{
	size_t i;

	for (i = 0; backends[i]; i++)
		if (backends[i]->detect(path))
			return backends[i];
	return backends[0];	/* git: its errors say what is missing */
}

const char *vcs_name(const char *worktree)
{
	return backend_for(worktree)->name;
}

char *vcs_find_worktree(const char *path)
{
	size_t i;

	for (i = 0; backends[i]; i++) {
		char *wt = backends[i]->find_worktree(path);
		if (wt)
			return wt;
	}
	return NULL;
}

int vcs_init(const char *path)
{
	return backends[0]->init(path);
}

int vcs_head(const char *worktree, char out[41])
{
	return backend_for(worktree)->massage(worktree, "HEAD", out);
}

int vcs_unborn(const char *worktree)
{
	return backend_for(worktree)->unborn(worktree);
}

int vcs_massage(const char *worktree, const char *rev, char out[41])
{
	return backend_for(worktree)->massage(worktree, rev, out);
}

char *vcs_major_version(const char *worktree)
{
	return backend_for(worktree)->major_version(worktree);
}

int vcs_minor_info(const char *worktree, const char *sha, struct minor_version *mv)
{
	return backend_for(worktree)->minor_info(worktree, sha, mv);
}

void minor_version_release(struct minor_version *mv)
{
	free(mv->author);
	free(mv->email);
	free(mv->subject);
	mv->author = mv->email = mv->subject = NULL;
}

int vcs_walk(const char *worktree, const char *sha, size_t max, vcs_walk_fn fn, void *ctx)
{
	return backend_for(worktree)->walk(worktree, sha, max, fn, ctx);
}

struct log_list {
	struct minor_version *v;
	size_t n, alloc;
};

static int log_keep_one(void *ctx, const struct minor_version *mv)
{
	struct log_list *l = ctx;
	struct minor_version *c;

	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 32;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	c = &l->v[l->n++];
	*c = *mv;
	c->author = xstrdup(mv->author ? mv->author : "");
	c->email = xstrdup(mv->email ? mv->email : "");
	c->subject = xstrdup(mv->subject ? mv->subject : "");
	return 0;
}

int vcs_log(const char *worktree, const char *sha, size_t max, struct minor_version **out,
	    size_t *n)
{
	struct log_list l = { NULL, 0, 0 };

	*out = NULL;
	*n = 0;
	if (vcs_walk(worktree, sha, max, log_keep_one, &l) < 0) {
		vcs_log_release(l.v, l.n);
		return -1;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

void vcs_log_release(struct minor_version *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		minor_version_release(&v[i]);
	free(v);
}

int vcs_is_dirty(const char *worktree)
{
	return backend_for(worktree)->is_dirty(worktree);
}

int vcs_ignore(const char *worktree, const char *pattern)
{
	return backend_for(worktree)->ignore(worktree, pattern);
}

int vcs_save_state(const char *worktree, int *saved)
{
	return backend_for(worktree)->save_state(worktree, saved);
}

int vcs_restore_state(const char *worktree, int saved)
{
	return backend_for(worktree)->restore_state(worktree, saved);
}

int vcs_checkout(const char *worktree, const char *sha)
{
	return backend_for(worktree)->checkout(worktree, sha);
}

int vcs_export_tree(const char *worktree, const char *sha, const char *dir)
{
	return backend_for(worktree)->export_tree(worktree, sha, dir);
}

int vcs_range(const char *worktree, const char *from, const char *to, char (**out)[41],
	      size_t *n)
{
	return backend_for(worktree)->range(worktree, from, to, out, n);
}

int vcs_sync_fetch(const char *worktree, const char *remote, vcs_file_fn fn, void *ctx,
		   char tip[41])
{
	return backend_for(worktree)->fetch_ref(worktree, remote, fn, ctx, tip);
}

int vcs_sync_push(const char *worktree, const char *remote, vcs_read_fn read_fn, void *ctx,
		  char *const *paths, size_t n, const char *remote_tip)
{
	return backend_for(worktree)->push_ref(worktree, remote, read_fn, ctx, paths, n,
					      remote_tip);
}

int vcs_diff(const char *worktree, const char *from, const char *to, unsigned context,
	     vcs_diff_fn fn, void *ctx)
{
	return backend_for(worktree)->diff(worktree, from, to, context, fn, ctx);
}
