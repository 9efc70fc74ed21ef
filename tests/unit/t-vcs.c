/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The VCS API on a temporary git repository made with the git CLI.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

static int count_fn(void *ctx, const struct minor_version *mv)
{
	(void)mv;
	(*(int *)ctx)++;
	return 0;
}

static int sh(const char *dir, const char *cmd)
{
	char *full = xstrfmt("cd '%s' && { %s; } >/dev/null 2>&1", dir, cmd);
	int r = system(full);
	free(full);
	return r;
}

int main(void)
{
	char *dir = fs_mkdtemp("perun-t-vcs"), *wt, *major, head[41], prev[41], again[41];
	struct minor_version mv;
	struct strbuf sb = STRBUF_INIT;
	int n = 0, saved = -1;

	ok(vcs_find_worktree(dir) == NULL || 1, "a bare temp dir may sit in no work tree");
	ok(vcs_init(dir) == 0, "init creates a repository");
	ok(vcs_init(dir) == 0, "init again is harmless");
	sh(dir, "git config user.email t@example.com && git config user.name Tester && "
		"echo one >f && git add f && git commit -q -m first && "
		"echo two >>f && git commit -q -am second && git tag v2");
	wt = vcs_find_worktree(dir);
	ok(wt != NULL, "the work tree is found");
	is_str(vcs_name(dir), "git", "the backend is git");
	ok(vcs_head(dir, head) == 0 && strlen(head) == 40, "HEAD massaged to 40 hex");
	ok(vcs_massage(dir, "HEAD~1", prev) == 0 && strcmp(prev, head), "HEAD~1 is another commit");
	ok(vcs_massage(dir, "v2", again) == 0 && !strcmp(again, head), "a tag");
	{
		char shortid[8];
		memcpy(shortid, head, 7);
		shortid[7] = '\0';
		ok(vcs_massage(dir, shortid, again) == 0 && !strcmp(again, head), "a short id");
	}
	ok(vcs_massage(dir, "nope~3", again) < 0, "a bad revision is refused");
	ok(vcs_minor_info(dir, head, &mv) == 0 && !strcmp(mv.subject, "second") &&
	   !strcmp(mv.author, "Tester") && mv.nparents == 1 && !strcmp(mv.parents[0], prev),
	   "minor info: subject, author, parent");
	minor_version_release(&mv);
	ok(vcs_walk(dir, head, 0, count_fn, &n) == 0 && n == 2, "walk sees two minor versions");
	{
		struct minor_version *v = NULL;
		size_t nv = 0;
		ok(vcs_log(dir, head, 0, &v, &nv) == 0 && nv == 2 && !strcmp(v[0].sha, head) &&
		   !strcmp(v[1].sha, prev) && v[0].subject && !strcmp(v[0].author, "Tester"),
		   "log: both minor versions, newest first, their texts kept");
		vcs_log_release(v, nv);
		ok(vcs_log(dir, head, 1, &v, &nv) == 0 && nv == 1 && !strcmp(v[0].sha, head),
		   "log: at most max");
		vcs_log_release(v, nv);
	}
	{
		char (*list)[41] = NULL, *into = xstrfmt("%s-export", dir), *f = xstrfmt("%s/f", into);
		size_t nl = 0;
		ok(vcs_range(dir, NULL, head, &list, &nl) == 0 && nl == 2 && !strcmp(list[0], prev) &&
		   !strcmp(list[1], head), "range of every ancestor, oldest first");
		free(list);
		ok(vcs_range(dir, prev, head, &list, &nl) == 0 && nl == 1 && !strcmp(list[0], head),
		   "range A..B leaves A out");
		free(list);
		sh(dir, "echo local >>f");
		ok(vcs_export_tree(dir, prev, into) == 0, "export the first commit into a directory");
		strbuf_reset(&sb);
		strbuf_read_file(&sb, f);
		is_str(sb.buf, "one\n", "the exported file is the first commit's");
		strbuf_reset(&sb);
		free(f);
		f = xstrfmt("%s/f", dir);
		strbuf_read_file(&sb, f);
		is_str(sb.buf, "one\ntwo\nlocal\n", "the work tree's file is untouched");
		strbuf_reset(&sb);
		ok(vcs_head(dir, again) == 0 && !strcmp(again, head), "HEAD did not move");
		sh(dir, "git checkout -q f");
		is_int(vcs_is_dirty(dir), 0, "the index still matches HEAD");
		fs_remove_tree(into);
		free(into);
		free(f);
	}
	major = vcs_major_version(dir);
	ok(major && (!strcmp(major, "master") || !strcmp(major, "main")), "major version is the branch");
	free(major);
	is_int(vcs_is_dirty(dir), 0, "clean");
	sh(dir, "echo three >>f");
	is_int(vcs_is_dirty(dir), 1, "dirty after a change to a tracked file");
	ok(vcs_save_state(dir, &saved) == 0 && saved == 1, "save state stashes it");
	is_int(vcs_is_dirty(dir), 0, "clean after saving");
	ok(vcs_checkout(dir, prev) == 0, "check out the first commit");
	ok(vcs_head(dir, again) == 0 && !strcmp(again, prev), "HEAD moved");
	ok(vcs_checkout(dir, head) == 0 && vcs_restore_state(dir, saved) == 0, "back and restore");
	is_int(vcs_is_dirty(dir), 1, "the change is back");
	{
		char *f = xstrfmt("%s/f", dir);
		strbuf_read_file(&sb, f);
		free(f);
	}
	is_str(sb.buf, "one\ntwo\nthree\n", "with its content");
	fs_remove_tree(dir);
	strbuf_release(&sb);
	free(wt);
	free(dir);
	return tap_done();
}
