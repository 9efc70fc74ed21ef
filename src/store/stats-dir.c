/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The directory of dynamic statistics (store/stats-dir.h).  */
#include "config.h"

#define PR_FMT "stats"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/profile.h"
#include "store/repo.h"
#include "store/stats-dir.h"
#include "store/stats.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "vcs/vcs.h"

char *stats_dir_path(const struct repo *r, int *missing)
{
	char *dir = xstrfmt("%s/stats", r->dir);
	struct stat st;

	*missing = 0;
	if (lstat(dir, &st) < 0 && errno == ENOENT) {
		*missing = 1;
		free(dir);
		return NULL;
	}
	if (fs_trust_dir(dir, 0, "remove it; perun init makes a new one") < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* A line for the caller to print, when it wants them (notes not NULL).  */
__attribute__((format(printf, 2, 3)))
static void note(struct strv *notes, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (!notes)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strv_push(notes, strbuf_str(&sb));
	strbuf_release(&sb);
}

/* Opens a minor version directory without following a link and checks it
 * is a directory of ours that no one else can write: the names in it are
 * then ours to judge and delete.  -1 with errno (EPERM: not trusted).  */
static int open_minor(const char *dir, const char *minor)
{
	char *path = xstrfmt("%s/%s", dir, minor);
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	free(path);
	if (dfd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			errno = EPERM;
		return -1;
	}
	if (fstat(dfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(dfd);
		errno = EPERM;
		return -1;
	}
	return dfd;
}

/* Files of the minor version directory open on dfd (which stays open).  */
static int scan_minor_fd(int dfd, const char *minor, struct stats_file **out, size_t *n)
{
	int fd = dup(dfd);
	DIR *d;
	struct dirent *de;

	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.' || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		memcpy((*out)[*n].minor, minor, 41);
		(*out)[*n].name = xstrdup(de->d_name);
		(*out)[*n].size = st.st_size;
		(*out)[*n].ours = S_ISREG(st.st_mode) && stats_is_ours(dfd, de->d_name);
		(*n)++;
	}
	closedir(d);
	return 0;
}

/* Files of one minor version directory; -1 when it is not one we trust.  */
static int scan_minor(const char *dir, const char *minor, struct stats_file **out, size_t *n)
{
	int dfd = open_minor(dir, minor), ret;

	if (dfd < 0)
		return -1;
	ret = scan_minor_fd(dfd, minor, out, n);
	close(dfd);
	return ret;
}

void stats_files_free(struct stats_file *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

void stats_versions_free(struct stats_version *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].subject);
	free(v);
}

struct walk_ctx {
	const char *dir;
	struct stats_version *v;
	size_t n, top;
};

static int walk_one(void *ctx, const struct minor_version *mv)
{
	struct walk_ctx *c = ctx;
	char *path = xstrfmt("%s/%s", c->dir, mv->sha);
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		c->v = xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
		memset(&c->v[c->n], 0, sizeof(*c->v));
		memcpy(c->v[c->n].minor, mv->sha, 41);
		c->v[c->n].subject = xstrdup(mv->subject ? mv->subject : "");
		c->n++;
	}
	free(path);
	return c->top && c->n >= c->top;
}

int stats_resolve_minor(const struct repo *r, const char *rev, char sha[41])
{
	return rev ? vcs_massage(r->worktree, rev, sha) : vcs_head(r->worktree, sha);
}

int stats_list_versions(const struct repo *r, const char *dir, const char *rev, size_t top,
			struct stats_version **out, size_t *n)
{
	struct walk_ctx c = { dir, NULL, 0, top };
	char sha[41];
	size_t i, j;

	*out = NULL;
	*n = 0;
	if (rev) {
		if (vcs_massage(r->worktree, rev, sha) < 0)
			return -1;
	} else if (vcs_unborn(r->worktree) == 1) {
		return 0;
	} else if (vcs_head(r->worktree, sha) < 0) {
		return -1;
	}
	if (vcs_walk(r->worktree, sha, 0, walk_one, &c) < 0) {
		stats_versions_free(c.v, c.n);
		return -1;
	}
	for (i = 0; i < c.n; i++) {
		struct stats_file *f = NULL;
		size_t nf = 0;
		scan_minor(dir, c.v[i].minor, &f, &nf);
		c.v[i].files = nf;
		for (j = 0; j < nf; j++)
			c.v[i].size += f[j].size;
		stats_files_free(f, nf);
	}
	*out = c.v;
	*n = c.n;
	return 0;
}

void stats_list_files(const char *dir, const struct stats_version *v, size_t nv,
		      struct stats_file **out, size_t *n)
{
	size_t i;

	*out = NULL;
	*n = 0;
	for (i = 0; i < nv; i++)
		scan_minor(dir, v[i].minor, out, n);
}

/* Every entry directly under the stats directory.  */
static size_t all_minors(const char *dir, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "index"))
			continue;
		*out = xrealloc(*out, (n + 1) * sizeof(**out));
		(*out)[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int stats_sync_index(const char *dir, size_t *nfiles, struct strv *notes)
{
	char **m;
	size_t n = all_minors(dir, &m), i, j, count = 0;
	struct strbuf sb = STRBUF_INIT;
	char *path;
	int ret;

	if (n > 1)
		qsort(m, n, sizeof(*m), cmp_str);
	for (i = 0; i < n; i++) {
		struct stats_file *f = NULL;
		size_t nf = 0;
		if (!stats_valid_minor(m[i]) || scan_minor(dir, m[i], &f, &nf) < 0) {
			note(notes, "not a minor version directory, left alone: %s/%s", dir, m[i]);
			free(m[i]);
			continue;
		}
		for (j = 0; j < nf; j++) {
			if (!f[j].ours)
				continue;
			strbuf_addf(&sb, "%s %s %lld\n", m[i], f[j].name, (long long)f[j].size);
			count++;
		}
		stats_files_free(f, nf);
		free(m[i]);
	}
	free(m);
	path = xstrfmt("%s/index", dir);
	ret = fs_write_atomic(path, sb.buf ? sb.buf : "", sb.len, 0644);
	free(path);
	strbuf_release(&sb);
	if (nfiles)
		*nfiles = count;
	return ret;
}

/* Removes the perun stats files of one minor version (name NULL: all of
 * them), and the directory when it is then empty and !keep_dir.  */
static int delete_in_minor(const char *dir, const char *minor, const char *name, int keep_dir,
			   size_t *deleted, struct strv *notes)
{
	char *path = xstrfmt("%s/%s", dir, minor);
	int dfd = open_minor(dir, minor), ret = 0;
	struct stats_file *f = NULL;
	size_t nf = 0, i, left = 0;

	if (dfd < 0) {
		if (errno == EPERM)
			note(notes, "not perun's, left alone: %s (a symbolic link, not a directory, "
				    "or writable by others)",
			     path);
		else if (errno != ENOENT)
			ret = pr_error_errno("open %s", path);
		free(path);
		return ret;
	}
	/* the names judged are those unlinked: the same directory, by descriptor */
	if (scan_minor_fd(dfd, minor, &f, &nf) < 0)
		ret = pr_error_errno("read %s", path);
	for (i = 0; i < nf; i++) {
		if (name && strcmp(f[i].name, name)) {
			left++;
			continue;
		}
		if (!f[i].ours) {
			note(notes, "not written by perun, left alone: %s/%s", path, f[i].name);
			left++;
			continue;
		}
		if (unlinkat(dfd, f[i].name, 0) < 0) {
			ret = pr_error_errno("unlink %s/%s", path, f[i].name);
			left++;
			continue;
		}
		(*deleted)++;
	}
	close(dfd);
	if (!left && !ret && !keep_dir && rmdir(path) < 0 && errno != ENOENT && errno != ENOTEMPTY)
		ret = pr_error_errno("rmdir %s", path);
	stats_files_free(f, nf);
	free(path);
	return ret;
}

int stats_clean(const char *dir, int keep_empty, size_t *removed, size_t *custom,
		struct strv *notes)
{
	int ret = 0;
	char **m;
	size_t n, i, j;

	*removed = *custom = 0;
	n = all_minors(dir, &m);
	for (i = 0; i < n; i++) {
		struct stats_file *f = NULL;
		size_t nf = 0;
		char *path = xstrfmt("%s/%s", dir, m[i]);
		if (!stats_valid_minor(m[i]) || scan_minor(dir, m[i], &f, &nf) < 0) {
			(*custom)++;
			note(notes, "not perun's, left alone: %s", path);
		} else {
			for (j = 0; j < nf; j++) {
				if (f[j].ours)
					continue;
				(*custom)++;
				note(notes, "not perun's, left alone: %s/%s", path, f[j].name);
			}
			if (!nf && !keep_empty) {
				if (rmdir(path) == 0)
					(*removed)++;
				else if (errno != ENOTEMPTY)
					ret = pr_error_errno("rmdir %s", path);
			}
		}
		stats_files_free(f, nf);
		free(path);
		free(m[i]);
	}
	free(m);
	if (stats_sync_index(dir, NULL, NULL) < 0)
		ret = -1;
	return ret;
}

int stats_delete(const char *dir, const char *minor, const char *name, int keep_dir,
		 size_t *deleted, struct strv *notes)
{
	char **m;
	size_t n, i;
	int ret = 0;

	*deleted = 0;
	if (minor) {
		ret = delete_in_minor(dir, minor, name, keep_dir, deleted, notes);
	} else {
		n = all_minors(dir, &m);
		for (i = 0; i < n; i++) {
			if (stats_valid_minor(m[i]) &&
			    delete_in_minor(dir, m[i], name, keep_dir, deleted, notes) < 0)
				ret = -1;
			free(m[i]);
		}
		free(m);
	}
	if (stats_sync_index(dir, NULL, NULL) < 0)
		ret = -1;
	return ret;
}

int stats_profile_minor(const struct repo *r, const struct profile *p, const char *from,
			char sha[41])
{
	const char *origin = profile_str(p, "origin");

	if (from)
		return vcs_massage(r->worktree, from, sha);
	if (origin && stats_valid_minor(origin)) {
		memcpy(sha, origin, 41);
		return 0;
	}
	return vcs_head(r->worktree, sha);
}


static int cmp_file_size(const void *a, const void *b)
{
	const struct stats_file *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : strcmp(x->name, y->name);
}

static int cmp_version_size(const void *a, const void *b)
{
	const struct stats_version *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : strcmp(x->minor, y->minor);
}

int stats_listing(const struct repo *r, const char *rev, size_t top, int with_files, int by_size,
		  struct stats_listing *out)
{
	int missing;
	char *dir = stats_dir_path(r, &missing);

	memset(out, 0, sizeof(*out));
	if (!dir)
		return missing ? 1 : -1;
	if (stats_list_versions(r, dir, rev, top, &out->v, &out->nv) < 0) {
		free(dir);
		return -1;
	}
	if (with_files)
		stats_list_files(dir, out->v, out->nv, &out->f, &out->nf);
	if (by_size && out->nv > 1)
		qsort(out->v, out->nv, sizeof(*out->v), cmp_version_size);
	if (by_size && out->nf > 1)
		qsort(out->f, out->nf, sizeof(*out->f), cmp_file_size);
	free(dir);
	return 0;
}

void stats_listing_release(struct stats_listing *l)
{
	stats_files_free(l->f, l->nf);
	stats_versions_free(l->v, l->nv);
	memset(l, 0, sizeof(*l));
}

int stats_delete_which(const struct repo *r, const char *what, const char *arg, const char *rev,
		       char sha[41], const char **minor, const char **name)
{
	*minor = sha;
	*name = NULL;
	if (!strcmp(what, "file")) {
		*name = arg;
		/* -m .: every version */
		if (rev && !strcmp(rev, "."))
			*minor = NULL;
		else if (stats_resolve_minor(r, rev, sha) < 0)
			return -1;
	} else if (!strcmp(what, "minor")) {
		if (stats_resolve_minor(r, arg, sha) < 0)
			return -1;
	} else {
		*minor = NULL;
	}
	return 0;
}

int stats_compute(struct repo *r, const char *path, const char *rev, char **out)
{
	struct profile p;
	struct stats s;
	char sha[41];
	int ret = -1;

	*out = NULL;
	if (profile_load(&p, path) < 0)
		return -1;
	if (stats_profile_minor(r, &p, rev, sha) == 0 && stats_from_profile(&p, &s) == 0) {
		s.profile = xstrdup(path);
		if (repo_lock(r) == 0 && stats_save(r, sha, &s, out) == 0) {
			int missing;
			char *dir = stats_dir_path(r, &missing);
			if (dir)
				stats_sync_index(dir, NULL, NULL);
			free(dir);
			ret = 0;
		}
		stats_release(&s);
	}
	profile_release(&p);
	if (ret < 0) {
		free(*out);
		*out = NULL;
	}
	return ret;
}
