/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun stats: the dynamic statistics under .perun/stats (seeds/003 Table A.3):
 * list-files, list-versions, sync, clean, delete file|minor|all, plus show and
 * compute.  Only files perun wrote are ever deleted.  */
#include "config.h"

#define PR_FMT "perun stats"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "profile/profile.h"
#include "store/repo.h"
#include "store/stats.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

static const char usage_text[] =
	"usage: perun stats list-files [-N N] [-m MINOR] [-i] [-f] [-t] [-s] [--format json]\n"
	"       perun stats list-versions [-N N] [-m MINOR] [-d] [-f] [-t] [-s] [--format json]\n"
	"       perun stats show [-m MINOR] NAME\n"
	"       perun stats compute PROFILE [-m MINOR]\n"
	"       perun stats sync\n"
	"       perun stats clean [-c] [-e]\n"
	"       perun stats delete file NAME [-m MINOR|-m .] [-k]\n"
	"       perun stats delete minor MINOR [-k]\n"
	"       perun stats delete all [-k]\n\n"
	"Dynamic statistics of earlier collections, per minor version under .perun/stats/\n"
	"and named by command, arguments and workload: calls recorded (sampled_count),\n"
	"sampling, estimated calls, total, min, max, avg, median, Q1, Q3, IQR per\n"
	"function.  collect writes them after every trace; optimization methods read them.\n\n"
	"  -N, --top N          list the newest N minor versions with stats (0: all; 20)\n"
	"  -m, --from-minor REV start at REV instead of HEAD (for show, delete file: the\n"
	"                       version; '.' with delete file: every version)\n"
	"  -i, --no-minor       no minor-version headers (list-files)\n"
	"  -f, --no-file-size   list-files: no sizes; list-versions: no file counts\n"
	"  -d, --no-dir-size    list-versions: no directory sizes\n"
	"  -t, --no-total-size  no total line\n"
	"  -s, --sort-by-size   largest first instead of history order\n"
	"  -c, --keep-custom    clean: say nothing of files perun did not write\n"
	"  -e, --keep-empty     clean: keep empty minor-version directories\n"
	"  -k, --keep-directory delete: keep the emptied minor-version directory\n\n"
	"Files perun did not write are never deleted: clean and delete name them and\n"
	"leave them.  Exit status: 0 ok, 1 failure, 2 usage.\n";

struct opts {
	size_t top;
	const char *from;
	int no_minor, no_file_size, no_dir_size, no_total, by_size, keep_custom, keep_empty,
		keep_dir, json;
};

struct file_entry {
	char minor[41];
	char *name;
	off_t size;
	int ours;
};

struct version_entry {
	char minor[41];
	char *subject;
	off_t size;
	size_t files;
};

/* The stats directory, trusted; NULL when it is missing (quiet) or refused.  */
static char *stats_dir(const struct repo *r, int *missing)
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
static int scan_minor_fd(int dfd, const char *minor, struct file_entry **out, size_t *n)
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
static int scan_minor(const char *dir, const char *minor, struct file_entry **out, size_t *n)
{
	int dfd = open_minor(dir, minor), ret;

	if (dfd < 0)
		return -1;
	ret = scan_minor_fd(dfd, minor, out, n);
	close(dfd);
	return ret;
}

static void files_free(struct file_entry *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

/* Minor versions with a stats directory, newest first along the history from
 * o->from (or HEAD), at most o->top of them (0: all).  Directories of
 * versions not in that history come last, in name order.  */
struct walk_ctx {
	const char *dir;
	struct version_entry *v;
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

static int versions(const struct repo *r, const char *dir, const struct opts *o,
		    struct version_entry **out, size_t *n)
{
	struct walk_ctx c = { dir, NULL, 0, o->top };
	char sha[41];

	*out = NULL;
	*n = 0;
	if (o->from) {
		if (vcs_massage(r->worktree, o->from, sha) < 0)
			return -1;
	} else if (vcs_unborn(r->worktree) == 1) {
		return 0;
	} else if (vcs_head(r->worktree, sha) < 0) {
		return -1;
	}
	if (vcs_walk(r->worktree, sha, 0, walk_one, &c) < 0) {
		free(c.v);
		return -1;
	}
	*out = c.v;
	*n = c.n;
	return 0;
}

static void versions_free(struct version_entry *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].subject);
	free(v);
}

static void human(char *buf, size_t len, off_t size)
{
	if (size < 1024)
		snprintf(buf, len, "%lld B", (long long)size);
	else if (size < 1024 * 1024)
		snprintf(buf, len, "%.1f KiB", (double)size / 1024);
	else
		snprintf(buf, len, "%.1f MiB", (double)size / (1024 * 1024));
}

static int cmp_file_size(const void *a, const void *b)
{
	const struct file_entry *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : strcmp(x->name, y->name);
}

static int cmp_version_size(const void *a, const void *b)
{
	const struct version_entry *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : strcmp(x->minor, y->minor);
}

static int list_files(const struct repo *r, const struct opts *o)
{
	struct version_entry *v = NULL;
	struct file_entry *f = NULL;
	size_t nv = 0, nf = 0, i, j;
	off_t total = 0;
	int missing;
	char *dir = stats_dir(r, &missing), sz[32];

	if (!dir)
		return missing ? EXIT_OK : EXIT_FAIL;
	if (versions(r, dir, o, &v, &nv) < 0) {
		free(dir);
		return EXIT_FAIL;
	}
	for (i = 0; i < nv; i++)
		scan_minor(dir, v[i].minor, &f, &nf);
	if (o->by_size && nf > 1)
		qsort(f, nf, sizeof(*f), cmp_file_size);
	if (o->json) {
		struct json_object *a = json_object_new_array();
		for (i = 0; i < nf; i++) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "minor", json_object_new_string(f[i].minor));
			json_object_object_add(e, "name", json_object_new_string(f[i].name));
			json_object_object_add(e, "size", json_object_new_int64((int64_t)f[i].size));
			json_object_object_add(e, "perun", json_object_new_boolean(f[i].ours));
			json_object_array_add(a, e);
		}
		printf("%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY));
		json_object_put(a);
	} else {
		const char *last = "";
		for (i = 0; i < nf; i++) {
			if (!o->no_minor && !o->by_size && strcmp(last, f[i].minor)) {
				for (j = 0; j < nv && strcmp(v[j].minor, f[i].minor); j++)
					;
				printf("minor %.12s %s\n", f[i].minor, j < nv ? v[j].subject : "");
				last = f[i].minor;
			}
			human(sz, sizeof(sz), f[i].size);
			if (!o->no_file_size)
				printf("  %10s", sz);
			if (o->no_minor || o->by_size)
				printf(" | %.12s", f[i].minor);
			printf(" | %s%s\n", f[i].name, f[i].ours ? "" : "  (not perun's)");
			total += f[i].size;
		}
		if (!o->no_total) {
			human(sz, sizeof(sz), total);
			printf("%zu file%s, %s in all\n", nf, nf == 1 ? "" : "s", sz);
		}
	}
	files_free(f, nf);
	versions_free(v, nv);
	free(dir);
	return EXIT_OK;
}

static int list_versions(const struct repo *r, const struct opts *o)
{
	struct version_entry *v = NULL;
	size_t nv = 0, i, j;
	off_t total = 0;
	int missing;
	char *dir = stats_dir(r, &missing), sz[32];

	if (!dir)
		return missing ? EXIT_OK : EXIT_FAIL;
	if (versions(r, dir, o, &v, &nv) < 0) {
		free(dir);
		return EXIT_FAIL;
	}
	for (i = 0; i < nv; i++) {
		struct file_entry *f = NULL;
		size_t nf = 0;
		scan_minor(dir, v[i].minor, &f, &nf);
		v[i].files = nf;
		for (j = 0; j < nf; j++)
			v[i].size += f[j].size;
		files_free(f, nf);
	}
	if (o->by_size && nv > 1)
		qsort(v, nv, sizeof(*v), cmp_version_size);
	if (o->json) {
		struct json_object *a = json_object_new_array();
		for (i = 0; i < nv; i++) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "minor", json_object_new_string(v[i].minor));
			json_object_object_add(e, "files", json_object_new_int64((int64_t)v[i].files));
			json_object_object_add(e, "size", json_object_new_int64((int64_t)v[i].size));
			json_object_array_add(a, e);
		}
		printf("%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY));
		json_object_put(a);
	} else {
		for (i = 0; i < nv; i++) {
			human(sz, sizeof(sz), v[i].size);
			if (!o->no_dir_size)
				printf("%10s | ", sz);
			printf("%.12s", v[i].minor);
			if (!o->no_file_size)
				printf(" | %zu file%s", v[i].files, v[i].files == 1 ? "" : "s");
			printf("  %s\n", v[i].subject);
			total += v[i].size;
		}
		if (!o->no_total) {
			human(sz, sizeof(sz), total);
			printf("%zu minor version%s, %s in all\n", nv, nv == 1 ? "" : "s", sz);
		}
	}
	versions_free(v, nv);
	free(dir);
	return EXIT_OK;
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

/* Rewrites .perun/stats/index: "MINOR NAME SIZE" per perun stats file.  */
static int sync_index(const char *dir, size_t *nfiles, int quiet)
{
	char **m;
	size_t n = all_minors(dir, &m), i, j, count = 0;
	struct strbuf sb = STRBUF_INIT;
	char *path;
	int ret;

	if (n > 1)
		qsort(m, n, sizeof(*m), cmp_str);
	for (i = 0; i < n; i++) {
		struct file_entry *f = NULL;
		size_t nf = 0;
		if (!stats_valid_minor(m[i]) || scan_minor(dir, m[i], &f, &nf) < 0) {
			if (!quiet)
				printf("not a minor version directory, left alone: %s/%s\n", dir, m[i]);
			free(m[i]);
			continue;
		}
		for (j = 0; j < nf; j++) {
			if (!f[j].ours)
				continue;
			strbuf_addf(&sb, "%s %s %lld\n", m[i], f[j].name, (long long)f[j].size);
			count++;
		}
		files_free(f, nf);
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
			   size_t *deleted)
{
	char *path = xstrfmt("%s/%s", dir, minor);
	int dfd = open_minor(dir, minor), ret = 0;
	struct file_entry *f = NULL;
	size_t nf = 0, i, left = 0;

	if (dfd < 0) {
		if (errno == EPERM)
			printf("not perun's, left alone: %s (a symbolic link, not a directory, or "
			       "writable by others)\n",
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
			printf("not written by perun, left alone: %s/%s\n", path, f[i].name);
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
	files_free(f, nf);
	free(path);
	return ret;
}

static int cmd_delete(const struct repo *r, int argc, char **argv, const struct opts *o)
{
	int missing, ret = 0;
	char *dir = stats_dir(r, &missing), sha[41];
	size_t deleted = 0, i;

	if (!dir)
		return missing ? EXIT_OK : EXIT_FAIL;
	if (argc < 1 || (strcmp(argv[0], "all") && argc < 2)) {
		fprintf(stderr, "perun stats delete: say what: file NAME, minor MINOR or all\n");
		free(dir);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "file")) {
		if (o->from && !strcmp(o->from, ".")) {
			char **m;
			size_t n = all_minors(dir, &m);
			for (i = 0; i < n; i++) {
				if (stats_valid_minor(m[i]) &&
				    delete_in_minor(dir, m[i], argv[1], o->keep_dir, &deleted) < 0)
					ret = -1;
				free(m[i]);
			}
			free(m);
		} else {
			if (o->from ? vcs_massage(r->worktree, o->from, sha) < 0
				    : vcs_head(r->worktree, sha) < 0) {
				free(dir);
				return EXIT_FAIL;
			}
			ret = delete_in_minor(dir, sha, argv[1], o->keep_dir, &deleted);
		}
	} else if (!strcmp(argv[0], "minor")) {
		if (vcs_massage(r->worktree, argv[1], sha) < 0) {
			free(dir);
			return EXIT_FAIL;
		}
		ret = delete_in_minor(dir, sha, NULL, o->keep_dir, &deleted);
	} else if (!strcmp(argv[0], "all")) {
		char **m;
		size_t n = all_minors(dir, &m);
		for (i = 0; i < n; i++) {
			if (stats_valid_minor(m[i]) && delete_in_minor(dir, m[i], NULL, o->keep_dir, &deleted) < 0)
				ret = -1;
			free(m[i]);
		}
		free(m);
	} else {
		fprintf(stderr, "perun stats delete: '%s': expected file, minor or all\n", argv[0]);
		free(dir);
		return EXIT_USAGE;
	}
	if (sync_index(dir, NULL, 1) < 0)
		ret = -1;
	printf("deleted %zu stats file%s\n", deleted, deleted == 1 ? "" : "s");
	free(dir);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}

static int cmd_clean(const struct repo *r, const struct opts *o)
{
	int missing, ret = 0;
	char *dir = stats_dir(r, &missing), **m;
	size_t n, i, j, removed = 0, custom = 0;

	if (!dir)
		return missing ? EXIT_OK : EXIT_FAIL;
	n = all_minors(dir, &m);
	for (i = 0; i < n; i++) {
		struct file_entry *f = NULL;
		size_t nf = 0;
		char *path = xstrfmt("%s/%s", dir, m[i]);
		if (!stats_valid_minor(m[i]) || scan_minor(dir, m[i], &f, &nf) < 0) {
			custom++;
			if (!o->keep_custom)
				printf("not perun's, left alone: %s\n", path);
		} else {
			for (j = 0; j < nf; j++) {
				if (f[j].ours)
					continue;
				custom++;
				if (!o->keep_custom)
					printf("not perun's, left alone: %s/%s\n", path, f[j].name);
			}
			if (!nf && !o->keep_empty) {
				if (rmdir(path) == 0)
					removed++;
				else if (errno != ENOTEMPTY)
					ret = pr_error_errno("rmdir %s", path);
			}
		}
		files_free(f, nf);
		free(path);
		free(m[i]);
	}
	free(m);
	if (sync_index(dir, NULL, 1) < 0)
		ret = -1;
	printf("removed %zu empty minor-version director%s; %zu file%s perun did not write "
	       "left in place\n",
	       removed, removed == 1 ? "y" : "ies", custom, custom == 1 ? "" : "s");
	free(dir);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}

static void print_stats(const struct stats *s, const char *minor)
{
	size_t i;

	printf("stats of %s%s%s%s%s (minor %.12s)\n", s->cmd, *s->args ? " " : "", s->args,
	       *s->workload ? " " : "", s->workload, minor);
	printf("%-40s %10s %6s %10s %12s %10s %10s %10s %10s %10s\n", "function", "recorded",
	       "sample", "est.calls", "total", "avg", "median", "Q1", "Q3", "max");
	for (i = 0; i < s->n; i++) {
		const struct fn_stats *f = &s->fn[i];
		printf("%-40s %10llu %6llu %10llu %12.0f %10.1f %10.1f %10.1f %10.1f %10.0f\n",
		       f->name, (unsigned long long)f->sampled_count, (unsigned long long)f->sample,
		       (unsigned long long)f->count, f->total, f->avg, f->median, f->q1, f->q3,
		       f->max);
	}
}

/* The minor version a profile belongs to: its origin, else HEAD.  */
static int profile_minor(const struct repo *r, struct profile *p, const char *from, char sha[41])
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

int cmd_stats(int argc, char **argv, struct ctx *ctx)
{
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 'N' },
		{ "from-minor", required_argument, NULL, 'm' },
		{ "in-minor", required_argument, NULL, 'm' },
		{ "no-minor", no_argument, NULL, 'i' },
		{ "no-file-size", no_argument, NULL, 'f' },
		{ "no-file-count", no_argument, NULL, 'f' },
		{ "no-dir-size", no_argument, NULL, 'd' },
		{ "no-total-size", no_argument, NULL, 't' },
		{ "sort-by-size", no_argument, NULL, 's' },
		{ "keep-custom", no_argument, NULL, 'c' },
		{ "keep-empty", no_argument, NULL, 'e' },
		{ "keep-directory", no_argument, NULL, 'k' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { 20, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct repo r;
	const char *sub;
	int opt, ret;
	char *end;

	(void)ctx;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	sub = argv[1];
	optind = 1;
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "N:m:ifdtscekh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'N':
			errno = 0;
			o.top = (size_t)strtoul(optarg, &end, 10);
			if (errno || *end || *optarg == '-') {
				fprintf(stderr, "perun stats: --top '%s': not a count\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'm': o.from = optarg; break;
		case 'i': o.no_minor = 1; break;
		case 'f': o.no_file_size = 1; break;
		case 'd': o.no_dir_size = 1; break;
		case 't': o.no_total = 1; break;
		case 's': o.by_size = 1; break;
		case 'c': o.keep_custom = 1; break;
		case 'e': o.keep_empty = 1; break;
		case 'k': o.keep_dir = 1; break;
		case 'F':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				fprintf(stderr, "perun stats: --format '%s': text or json\n", optarg);
				return EXIT_USAGE;
			}
			o.json = !strcmp(optarg, "json");
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (strcmp(sub, "list-files") && strcmp(sub, "list-versions") && strcmp(sub, "sync") &&
	    strcmp(sub, "clean") && strcmp(sub, "delete") && strcmp(sub, "show") &&
	    strcmp(sub, "compute")) {
		fprintf(stderr, "perun stats: unknown command '%s' (see perun stats --help)\n", sub);
		return EXIT_USAGE;
	}
	if (repo_find(&r) < 0)
		return EXIT_FAIL;
	if (!strcmp(sub, "list-files")) {
		ret = list_files(&r, &o);
	} else if (!strcmp(sub, "list-versions")) {
		ret = list_versions(&r, &o);
	} else if (!strcmp(sub, "sync")) {
		int missing;
		char *dir = stats_dir(&r, &missing);
		size_t n = 0;
		ret = EXIT_OK;
		if (dir && sync_index(dir, &n, 0) == 0)
			printf("index: %zu stats file%s\n", n, n == 1 ? "" : "s");
		else if (!missing)
			ret = EXIT_FAIL;
		free(dir);
	} else if (!strcmp(sub, "clean")) {
		ret = repo_lock(&r) < 0 ? EXIT_FAIL : cmd_clean(&r, &o);
	} else if (!strcmp(sub, "delete")) {
		ret = repo_lock(&r) < 0 ? EXIT_FAIL : cmd_delete(&r, argc, argv, &o);
	} else if (!strcmp(sub, "show")) {
		struct stats s;
		char sha[41];
		if (argc != 1) {
			fprintf(stderr, "perun stats show: name one stats file (perun stats list-files)\n");
			repo_release(&r);
			return EXIT_USAGE;
		}
		ret = EXIT_FAIL;
		if ((o.from ? vcs_massage(r.worktree, o.from, sha) : vcs_head(r.worktree, sha)) == 0) {
			int got = stats_load(&r, sha, argv[0], &s);
			if (got == 1)
				pr_error("no stats file %s in minor version %.12s (perun stats list-files)",
					 argv[0], sha);
			if (got == 0) {
				print_stats(&s, sha);
				stats_release(&s);
				ret = EXIT_OK;
			}
		}
	} else {
		struct profile p;
		struct stats s;
		char sha[41], *path = NULL;
		if (argc != 1) {
			fprintf(stderr, "perun stats compute: name one profile file\n");
			repo_release(&r);
			return EXIT_USAGE;
		}
		ret = EXIT_FAIL;
		if (profile_load(&p, argv[0]) == 0) {
			if (profile_minor(&r, &p, o.from, sha) == 0 && stats_from_profile(&p, &s) == 0) {
				s.profile = xstrdup(argv[0]);
				if (repo_lock(&r) == 0 && stats_save(&r, sha, &s, &path) == 0) {
					int missing;
					char *dir = stats_dir(&r, &missing);
					if (dir)
						sync_index(dir, NULL, 1);
					free(dir);
					printf("%s\n", path);
					ret = EXIT_OK;
				}
				free(path);
				stats_release(&s);
			}
			profile_release(&p);
		}
	}
	repo_release(&r);
	return ret;
}
