/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun stats: the dynamic statistics under .perun/stats (seeds/003 Table A.3):
 * list-files, list-versions, sync, clean, delete file|minor|all, plus show and
 * compute, over store/stats-dir.h; prints what they found and did.  */
#include "config.h"

#define PR_FMT "perun stats"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cmd/cmd.h"
#include "store/repo.h"
#include "store/stats-dir.h"
#include "store/stats.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"
#include "util/strv.h"

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
	"function.  collect writes them after every trace; optimization methods read them.\n"
	"For show and delete file, -m MINOR is the version the file is in; '.' with\n"
	"delete file: every version.\n"
	"Files perun did not write are never deleted: clean and delete name them and\n"
	"leave them.  Exit status: 0 ok, 1 failure, 2 usage.\n";

struct opts {
	size_t top;
	const char *from;
	int no_minor, no_file_size, no_dir_size, no_total, by_size, keep_custom, keep_empty,
		keep_dir, json;
};

static void human(char *buf, size_t len, off_t size)
{
	if (size < 1024)
		snprintf(buf, len, "%lld B", (long long)size);
	else if (size < 1024 * 1024)
		snprintf(buf, len, "%.1f KiB", (double)size / 1024);
	else
		snprintf(buf, len, "%.1f MiB", (double)size / (1024 * 1024));
}

static int list_files(const struct repo *r, const struct opts *o)
{
	struct stats_listing l;
	const struct stats_file *f;
	size_t i, j;
	off_t total = 0;
	char sz[32];
	int got = stats_listing(r, o->from, o->top, 1, o->by_size, &l);

	if (got)
		return got > 0 ? EXIT_OK : EXIT_FAIL;
	f = l.f;
	if (o->json) {
		struct json_object *a = json_object_new_array();
		for (i = 0; i < l.nf; i++) {
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
		for (i = 0; i < l.nf; i++) {
			if (!o->no_minor && !o->by_size && strcmp(last, f[i].minor)) {
				for (j = 0; j < l.nv && strcmp(l.v[j].minor, f[i].minor); j++)
					;
				printf("minor %.12s %s\n", f[i].minor, j < l.nv ? l.v[j].subject : "");
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
			printf("%zu file%s, %s in all\n", l.nf, l.nf == 1 ? "" : "s", sz);
		}
	}
	stats_listing_release(&l);
	return EXIT_OK;
}

static int list_versions(const struct repo *r, const struct opts *o)
{
	struct stats_listing l;
	const struct stats_version *v;
	size_t i;
	off_t total = 0;
	char sz[32];
	int got = stats_listing(r, o->from, o->top, 0, o->by_size, &l);

	if (got)
		return got > 0 ? EXIT_OK : EXIT_FAIL;
	v = l.v;
	if (o->json) {
		struct json_object *a = json_object_new_array();
		for (i = 0; i < l.nv; i++) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "minor", json_object_new_string(v[i].minor));
			json_object_object_add(e, "files", json_object_new_int64((int64_t)v[i].files));
			json_object_object_add(e, "size", json_object_new_int64((int64_t)v[i].size));
			json_object_array_add(a, e);
		}
		printf("%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY));
		json_object_put(a);
	} else {
		for (i = 0; i < l.nv; i++) {
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
			printf("%zu minor version%s, %s in all\n", l.nv, l.nv == 1 ? "" : "s", sz);
		}
	}
	stats_listing_release(&l);
	return EXIT_OK;
}

static void print_notes(struct strv *notes)
{
	size_t i;

	for (i = 0; i < notes->n; i++)
		printf("%s\n", notes->v[i]);
	strv_clear(notes);
}

static int delete_stats(const struct repo *r, int argc, char **argv, const struct opts *o)
{
	struct strv notes = STRV_INIT;
	int missing, ret;
	char *dir, sha[41];
	const char *minor, *name;
	size_t deleted = 0;

	/* the arguments first: a usage error whether or not there are stats */
	if (argc < 1 || (strcmp(argv[0], "all") && argc < 2)) {
		fprintf(stderr, "perun stats delete: say what: file NAME, minor MINOR or all\n");
		return EXIT_USAGE;
	}
	if (strcmp(argv[0], "file") && strcmp(argv[0], "minor") && strcmp(argv[0], "all")) {
		fprintf(stderr, "perun stats delete: '%s': expected file, minor or all\n", argv[0]);
		return EXIT_USAGE;
	}
	/* 'delete all x' or 'delete file A B' must not delete with x or B unread */
	if (argc > (strcmp(argv[0], "all") ? 2 : 1)) {
		fprintf(stderr, "perun stats delete %s: unexpected argument '%s'\n", argv[0],
			argv[strcmp(argv[0], "all") ? 2 : 1]);
		return EXIT_USAGE;
	}
	dir = stats_dir_path(r, &missing);
	if (!dir)
		return missing ? EXIT_OK : EXIT_FAIL;
	if (stats_delete_which(r, argv[0], argc > 1 ? argv[1] : NULL, o->from, sha, &minor,
			       &name) < 0) {
		free(dir);
		return EXIT_FAIL;
	}
	ret = stats_delete(dir, minor, name, o->keep_dir, &deleted, &notes);
	print_notes(&notes);
	printf("deleted %zu stats file%s\n", deleted, deleted == 1 ? "" : "s");
	free(dir);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}

static int clean_stats(const struct repo *r, const struct opts *o)
{
	struct strv notes = STRV_INIT;
	int missing, ret;
	char *dir = stats_dir_path(r, &missing);
	size_t removed, custom;

	if (!dir)
		return missing ? EXIT_OK : EXIT_FAIL;
	ret = stats_clean(dir, o->keep_empty, &removed, &custom, &notes);
	if (o->keep_custom)
		strv_clear(&notes);
	print_notes(&notes);
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

/* --top N into the size_t o->value.  */
static int parse_top(const struct popt *o, const char *v)
{
	uint64_t n;

	/* not " -5", which strtoul takes as ULONG_MAX - 4 */
	if (parse_count(v, ULONG_MAX, &n) < 0)
		return popt_error(o, "--top '%s': not a count", v);
	*(size_t *)o->value = (size_t)n;
	return 0;
}

/* --format text|json into the int o->value (1: json).  */
static int parse_format(const struct popt *o, const char *v)
{
	if (strcmp(v, "json") && strcmp(v, "text"))
		return popt_error(o, "--format '%s': text or json", v);
	*(int *)o->value = !strcmp(v, "json");
	return 0;
}

int cmd_stats(int argc, char **argv, struct ctx *ctx)
{
	struct opts o = { 20, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct popt opts[] = {
		OPT_CALLBACK('N', "top", &o.top, "N",
			     "list the newest N minor versions with stats (0: all; 20)", parse_top),
		OPT_STRING('m', "from-minor", &o.from, "MINOR",
			   "start at MINOR instead of HEAD (show, delete file: above)"),
		OPT_STRING(0, "in-minor", &o.from, "MINOR", NULL),
		OPT_BOOL('i', "no-minor", &o.no_minor, "no minor-version headers (list-files)"),
		OPT_BOOL('f', "no-file-size", &o.no_file_size,
			 "list-files: no sizes; list-versions: no file counts"),
		OPT_BOOL(0, "no-file-count", &o.no_file_size, NULL),
		OPT_BOOL('d', "no-dir-size", &o.no_dir_size, "list-versions: no directory sizes"),
		OPT_BOOL('t', "no-total-size", &o.no_total, "no total line"),
		OPT_BOOL('s', "sort-by-size", &o.by_size, "largest first instead of history order"),
		OPT_BOOL('c', "keep-custom", &o.keep_custom,
			 "clean: say nothing of files perun did not write"),
		OPT_BOOL('e', "keep-empty", &o.keep_empty,
			 "clean: keep empty minor-version directories"),
		OPT_BOOL('k', "keep-directory", &o.keep_dir,
			 "delete: keep the emptied minor-version directory"),
		OPT_CALLBACK(0, "format", &o.json, "FMT", "list-files, list-versions: text or json",
			     parse_format),
		OPT_END(),
	};
	struct repo r;
	const char *sub;
	int ret, npos;

	(void)ctx;
	npos = parse_options(argc, argv, "stats", usage_text, opts);
	if (npos < 0)
		return POPT_EXIT(npos);
	if (!npos) {
		fprintf(stderr, "perun stats: name a subcommand: list-files, list-versions, show, "
				"compute, sync, clean or delete\n");
		usage_synopsis(stderr, usage_text);
		return EXIT_USAGE;
	}
	/* the subcommand, then its arguments */
	sub = argv[0];
	argc = npos - 1;
	argv++;
	if (strcmp(sub, "list-files") && strcmp(sub, "list-versions") && strcmp(sub, "sync") &&
	    strcmp(sub, "clean") && strcmp(sub, "delete") && strcmp(sub, "show") &&
	    strcmp(sub, "compute")) {
		fprintf(stderr, "perun stats: unknown command '%s' (see perun stats --help)\n", sub);
		return EXIT_USAGE;
	}
	if (argc > 0 && (!strcmp(sub, "list-files") || !strcmp(sub, "list-versions") ||
			 !strcmp(sub, "sync") || !strcmp(sub, "clean"))) {
		fprintf(stderr, "perun stats %s: unexpected argument '%s'\n", sub, argv[0]);
		return EXIT_USAGE;
	}
	if (repo_find(&r) < 0)
		return EXIT_FAIL;
	if (!strcmp(sub, "list-files")) {
		ret = list_files(&r, &o);
	} else if (!strcmp(sub, "list-versions")) {
		ret = list_versions(&r, &o);
	} else if (!strcmp(sub, "sync")) {
		struct strv notes = STRV_INIT;
		int missing;
		char *dir = stats_dir_path(&r, &missing);
		size_t n = 0;
		ret = EXIT_OK;
		if (dir && stats_sync_index(dir, &n, &notes) == 0) {
			print_notes(&notes);
			printf("index: %zu stats file%s\n", n, n == 1 ? "" : "s");
		} else if (!missing) {
			print_notes(&notes);
			ret = EXIT_FAIL;
		}
		free(dir);
	} else if (!strcmp(sub, "clean")) {
		ret = repo_lock(&r) < 0 ? EXIT_FAIL : clean_stats(&r, &o);
	} else if (!strcmp(sub, "delete")) {
		ret = repo_lock(&r) < 0 ? EXIT_FAIL : delete_stats(&r, argc, argv, &o);
	} else if (!strcmp(sub, "show")) {
		struct stats s;
		char sha[41];
		if (argc != 1) {
			fprintf(stderr, "perun stats show: name one stats file (perun stats list-files)\n");
			repo_release(&r);
			return EXIT_USAGE;
		}
		ret = EXIT_FAIL;
		if (stats_resolve_minor(&r, o.from, sha) == 0) {
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
		char *path;
		if (argc != 1) {
			fprintf(stderr, "perun stats compute: name one profile file\n");
			repo_release(&r);
			return EXIT_USAGE;
		}
		ret = EXIT_FAIL;
		if (stats_compute(&r, argv[0], o.from, &path) == 0) {
			printf("%s\n", path);
			ret = EXIT_OK;
		}
		free(path);
	}
	repo_release(&r);
	return ret;
}
