/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The directory of dynamic statistics (store/stats-dir.h) without a
 * repository's history: its index, clean and delete, which remove only
 * what perun wrote and name the rest.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/repo.h"
#include "store/stats-dir.h"
#include "store/stats.h"
#include "tap.h"
#include "util/fs.h"
#include "util/strv.h"

#define A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define C "cccccccccccccccccccccccccccccccccccccccc"

/* Stats of cmd with one function; its file's name back (caller frees).  */
static char *save(const struct repo *r, const char *minor, const char *cmd)
{
	struct fn_stats fn;
	struct stats s;
	char *path = NULL, *name;

	memset(&fn, 0, sizeof(fn));
	fn.name = (char *)"work";
	fn.sampled_count = fn.count = fn.sample = 1;
	memset(&s, 0, sizeof(s));
	s.cmd = (char *)cmd;
	s.args = s.workload = (char *)"";
	s.collector = (char *)"trace";
	s.profile = (char *)"test";
	s.fn = &fn;
	s.n = 1;
	if (stats_save(r, minor, &s, &path) < 0)
		exit(99);
	name = xstrdup(strrchr(path, '/') + 1);
	free(path);
	return name;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		exit(99);
}

/* The notes joined, the directory shown as DIR; clears them.  */
static char *joined(struct strv *notes, const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, dlen = strlen(dir);

	for (i = 0; i < notes->n; i++) {
		const char *t = notes->v[i], *p = strstr(t, dir);
		if (p) {
			strbuf_add(&sb, t, (size_t)(p - t));
			strbuf_addstr(&sb, "DIR");
			t = p + dlen;
		}
		strbuf_addf(&sb, "%s\n", t);
	}
	strv_clear(notes);
	return strbuf_detach(&sb);
}

int main(void)
{
	char *top = fs_mkdtemp("perun-t-stats-dir"), *dir, *a_name, *b_name, *path, *got;
	struct strv notes = STRV_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct repo r;
	size_t n, removed, custom, deleted;
	int missing;

	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	r.dir = xstrfmt("%s/.perun", top);
	if (!top || fs_mkdir_p(r.dir, 0755) < 0)
		return 99;
	ok(!stats_dir_path(&r, &missing) && missing, "no stats directory: none, quietly");
	a_name = save(&r, A, "/usr/bin/app");
	b_name = save(&r, B, "/usr/bin/other");
	dir = stats_dir_path(&r, &missing);
	ok(dir && !missing, "the stats directory, trusted");
	if (!dir)
		return 99;
	/* what perun did not write: a file in A, a directory, an empty minor */
	path = xstrfmt("%s/%s/notes", dir, A);
	write_file(path, "mine\n");
	free(path);
	path = xstrfmt("%s/junk", dir);
	if (mkdir(path, 0755) < 0)
		return 99;
	free(path);
	path = xstrfmt("%s/%s", dir, C);
	if (mkdir(path, 0755) < 0)
		return 99;
	free(path);

	is_int(stats_sync_index(dir, &n, &notes), 0, "sync: the index is written");
	is_int((int)n, 2, "two stats files perun wrote");
	got = joined(&notes, dir);
	is_str(got, "not a minor version directory, left alone: DIR/junk\n", "sync names junk");
	free(got);
	path = xstrfmt("%s/index", dir);
	if (strbuf_read_file(&sb, path) < 0)
		return 99;
	free(path);
	ok(!strncmp(strbuf_str(&sb), A " ", 41) && strstr(strbuf_str(&sb), a_name) &&
	   strstr(strbuf_str(&sb), "\n" B " ") && strstr(strbuf_str(&sb), b_name) &&
	   !strstr(strbuf_str(&sb), "notes"),
	   "index: A's then B's file, not the foreign one");
	strbuf_release(&sb);

	is_int(stats_clean(dir, 0, &removed, &custom, &notes), 0, "clean");
	ok(removed == 1 && custom == 2, "the empty minor removed; 2 entries perun did not write");
	path = xstrfmt("%s/%s", dir, C);
	ok(!fs_exists(path), "the empty minor is gone");
	free(path);
	got = joined(&notes, dir);
	ok(strstr(got, "not perun's, left alone: DIR/junk\n") &&
	   strstr(got, "not perun's, left alone: DIR/" A "/notes\n"), "clean names both");
	free(got);

	is_int(stats_delete(dir, A, NULL, 0, &deleted, &notes), 0, "delete minor A");
	is_int((int)deleted, 1, "one file deleted");
	got = joined(&notes, dir);
	is_str(got, "not written by perun, left alone: DIR/" A "/notes\n", "the foreign one named");
	free(got);
	path = xstrfmt("%s/%s/notes", dir, A);
	ok(fs_exists(path), "and kept, with its directory");
	free(path);

	is_int(stats_delete(dir, NULL, b_name, 0, &deleted, &notes), 0, "delete B's file in every minor");
	path = xstrfmt("%s/%s", dir, B);
	ok(deleted == 1 && !fs_exists(path), "deleted, and the emptied directory removed");
	free(path);
	is_int(stats_sync_index(dir, &n, NULL), 0, "sync again");
	is_int((int)n, 0, "no stats files perun wrote are left");

	fs_remove_tree(top);
	free(top);
	free(dir);
	free(a_name);
	free(b_name);
	free(r.dir);
	return tap_done();
}
