/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The directory of dynamic statistics, .perun/stats/<minor>/<name>
 * (store/stats.h writes and reads one file): listing its minor versions and
 * files, its index, and deleting what perun wrote.  A minor version's
 * directory is read only when it is ours and no one else can write it;
 * files perun did not write are never deleted: they are named in notes.  */
#ifndef PERUN_STATS_DIR_H
#define PERUN_STATS_DIR_H

#include <stddef.h>
#include <sys/types.h>

struct profile;
struct repo;
struct strv;

struct stats_file {
	char minor[41];
	char *name;
	off_t size;
	int ours;	/* a regular file perun wrote */
};

struct stats_version {
	char minor[41];
	char *subject;	/* of its commit */
	off_t size;	/* of its files */
	size_t files;
};

/* .perun/stats of r, trusted (caller frees); NULL when it is missing
 * (*missing set, no message) or refused (a message).  */
char *stats_dir_path(const struct repo *r, int *missing);

/* The minor versions with a stats directory, newest first along the first
 * parents from rev (NULL: HEAD; none on an unborn HEAD), at most top of them
 * (0: all), each with its files counted.  */
int stats_list_versions(const struct repo *r, const char *dir, const char *rev, size_t top,
			struct stats_version **out, size_t *n);
void stats_versions_free(struct stats_version *v, size_t n);
/* The files of the versions v, version by version; a directory that is not
 * ours is skipped.  */
void stats_list_files(const char *dir, const struct stats_version *v, size_t nv,
		      struct stats_file **out, size_t *n);
void stats_files_free(struct stats_file *f, size_t n);

/* What perun stats list-files and list-versions show.  */
struct stats_listing {
	struct stats_version *v;
	size_t nv;
	struct stats_file *f; /* NULL unless the files were asked for */
	size_t nf;
};

/* The minor versions of stats_list_versions() and, with with_files, their
 * files; by_size: each largest first instead of in history order (ties by
 * name).  1 when there is no stats directory (nothing listed, no message),
 * 0, or -1 (reported).  */
int stats_listing(const struct repo *r, const char *rev, size_t top, int with_files, int by_size,
		  struct stats_listing *out);
void stats_listing_release(struct stats_listing *l);

/* The minor version rev names (NULL: HEAD), 40 hex digits and a NUL.  */
int stats_resolve_minor(const struct repo *r, const char *rev, char sha[41]);
/* The minor version a profile belongs to: rev when given, else its
 * origin, else HEAD.  */
int stats_profile_minor(const struct repo *r, const struct profile *p, const char *rev,
			char sha[41]);

/* Rewrites dir/index: "MINOR NAME SIZE" per stats file perun wrote;
 * *nfiles (when not NULL) gets their count; entries that are no minor
 * version's directory are named in notes (when not NULL).  */
int stats_sync_index(const char *dir, size_t *nfiles, struct strv *notes);
/* Deletes the stats files perun wrote named name (NULL: all) of minor (NULL:
 * of every minor version), and each emptied directory unless keep_dir;
 * *deleted counts them, what is left alone goes to notes.  0, or -1 when a
 * deletion failed (a message).  */
int stats_delete(const char *dir, const char *minor, const char *name, int keep_dir,
		 size_t *deleted, struct strv *notes);
/* What perun stats delete WHAT [ARG] deletes (what: "file" ARG in minor
 * version rev, '.' every one; "minor" ARG; "all"): the minor version into
 * sha with *minor pointing there (NULL: every minor version) and the file
 * name *name (NULL: every file), for stats_delete().  0, or -1 (reported)
 * when the minor version cannot be resolved.  */
int stats_delete_which(const struct repo *r, const char *what, const char *arg, const char *rev,
		       char sha[41], const char **minor, const char **name);
/* Removes the empty minor-version directories (unless keep_empty), counted
 * in *removed; each entry perun did not write is counted in *custom and
 * named in notes.  0, or -1 when a removal failed (a message).  */
int stats_clean(const char *dir, int keep_empty, size_t *removed, size_t *custom,
		struct strv *notes);

/* perun stats compute: the stats of the profile at path saved for its
 * minor version (stats_profile_minor()), under the repository's lock, and
 * the index rewritten; *out the file written (caller frees).  0, or -1
 * (reported).  */
int stats_compute(struct repo *r, const char *path, const char *rev, char **out);

#endif
