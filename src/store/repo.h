/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A perun repository: a git work tree with .perun/ (seeds/000).  */
#ifndef PERUN_REPO_H
#define PERUN_REPO_H

#include <stddef.h>
#include <time.h>

#include "store/store.h"

struct repo {
	char *worktree;
	char *dir;		/* worktree/.perun */
	int lock_fd;
};

/* Finds the repository around the current directory.  */
int repo_find(struct repo *r);
/* The .perun directory around the current directory, or NULL (no message).  */
char *repo_locate(void);
/* Creates .perun/ (objects, jobs, logs, stats, local.yml) in worktree; safe to repeat.  */
int repo_init(const char *worktree);
void repo_release(struct repo *r);
/* Serializes writers: flock on .perun/lock.  */
int repo_lock(struct repo *r);
void repo_unlock(struct repo *r);

struct pending {
	char *path;		/* .perun/jobs/NAME.perf */
	time_t mtime;
};
/* Pending profiles, oldest first: N@p numbers them from 0.  */
int repo_pending(const struct repo *r, struct pending **out, size_t *n);
void pending_free(struct pending *p, size_t n);

/* What a PROFILE argument names.  */
struct lookup {
	int registered;		/* 1: in the index of minor (entry), 0: a file (path) */
	size_t entry;
	char *path;
};
/* Lookup order of seeds/000: N@i, N@p, a name in minor's index, a path, a
 * partial name in .perun/jobs.  */
int repo_lookup(const struct repo *r, const char *minor, const struct pidx *index,
		const char *spec, struct lookup *out);

#endif

/* Stores the profile file path (validated; its origin, when it has one, must
 * be minor; without one, explicit_rev must be set) as an object and appends
 * it to minor's index under the lock.  The file is removed when it lies in
 * .perun/jobs, unless keep.  *entry (when not NULL) receives its number in
 * the index and hex the object id.  0, or -1 (reported).  */
int repo_register(struct repo *r, const char *minor, int explicit_rev, const char *path, int keep,
		  size_t *entry, char hex[SHA1_HEXSZ + 1]);

struct profile;
/* Loads what a lookup names: a registered object (verified) or a file.  */
int repo_load(const struct repo *r, const struct pidx *index, const struct lookup *l,
	      struct profile *p);
/* The 40-hex id of an index entry.  */
void repo_entry_hex(const struct pidx *index, size_t i, char hex[SHA1_HEXSZ + 1]);

/* The types of the profiles registered for minor, each once, separated by
 * commas ("mixed,time"; caller frees), and *n their count.  -1 when the
 * index cannot be read (reported; *n 0 and the types "").  */
int repo_minor_types(const struct repo *r, const char *minor, char **types, size_t *n);

/* What perun add registers for minor: per name, a regular file of that
 * name (a file is meant, not a registered profile of the same name), else
 * the file repo_lookup() finds unless it is registered already; NULL where
 * a name fails (reported).  Every name is resolved before any is added,
 * since adding removes jobs files and renumbers the N@p after it.  The
 * number of names that failed, or -1 when minor's index cannot be read
 * (*paths NULL).  Caller frees (*paths)[i] and *paths.  */
int repo_add_paths(const struct repo *r, const char *minor, const char *const *names, size_t n,
		   char ***paths);

struct strv;
/* perun rm, under the lock the caller holds: resolves every name
 * (repo_lookup) before removing anything, then removes the registered ones
 * from minor's index, highest entry first, each leaving tombstones of
 * the tags of its registrations held here (store.h) that push and fetch
 * carry, and deletes the pending ones (files in .perun/jobs
 * only, each once).  unborn: no commit yet, nothing is registered (minor
 * names no commit).  The index paths removed go to *dropped, in that order,
 * the names of the files deleted to *deleted.  0, or -1 when something
 * failed (reported; the rest is still done).  */
int repo_remove(struct repo *r, const char *minor, int unborn, const char *const *names, size_t n,
		struct strv *dropped, struct strv *deleted);
