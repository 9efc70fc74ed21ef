/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What perun stats lists, deletes and computes (store/stats-dir.h) in a
 * repository with two commits: the minor versions with stats newest first
 * and their files, largest first on asking; what a delete names; a
 * profile's stats saved for the minor version asked.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/repo.h"
#include "store/stats-dir.h"
#include "store/stats.h"
#include "tap.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

static int sh(const char *dir, const char *cmd)
{
	char *full = xstrfmt("cd '%s' && { %s; } >/dev/null 2>&1", dir, cmd);
	int r = system(full);

	free(full);
	return r;
}

/* Stats of cmd with nfn functions in minor.  */
static void save(const struct repo *r, const char *minor, const char *cmd, size_t nfn)
{
	struct fn_stats fn[8];
	struct stats s;
	char *path = NULL, names[8][8];
	size_t i;

	memset(fn, 0, sizeof(fn));
	for (i = 0; i < nfn; i++) {
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
		fn[i].name = names[i];
		fn[i].sampled_count = fn[i].count = fn[i].sample = 1;
	}
	memset(&s, 0, sizeof(s));
	s.cmd = (char *)cmd;
	s.args = s.workload = (char *)"";
	s.collector = (char *)"trace";
	s.profile = (char *)"test";
	s.fn = fn;
	s.n = nfn;
	if (stats_save(r, minor, &s, &path) < 0)
		exit(99);
	free(path);
}

static const char profile[] =
    "{\"header\":{\"type\":\"mixed\",\"cmd\":\"./app\",\"args\":\"\",\"workload\":\"\","
    "\"units\":{\"mixed(time delta)\":\"ns\"}},\"collector_info\":{\"name\":\"trace\"},"
    "\"postprocessors\":[],\"snapshots\":[{\"resources\":["
    "{\"uid\":\"work\",\"amount\":500,\"exclusive\":500,\"call-id\":2,\"caller-id\":1,"
    "\"type\":\"mixed\",\"subtype\":\"time delta\"},"
    "{\"uid\":\"main\",\"amount\":600,\"exclusive\":100,\"call-id\":1,\"caller-id\":-1,"
    "\"type\":\"mixed\",\"subtype\":\"time delta\"}]}]}";

int main(void)
{
	char *top = fs_mkdtemp("perun-t-stats-list"), head[41], prev[41], sha[41], *path, *p;
	const char *minor, *name;
	struct stats_listing l;
	struct repo r;
	struct stats s;

	if (!top || vcs_init(top) < 0 ||
	    sh(top, "git config user.email t@example.com && git config user.name Tester && "
		    "echo one >f && git add f && git commit -q -m first && "
		    "echo two >>f && git commit -q -am second"))
		return 99;
	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	r.worktree = xstrdup(top);
	r.dir = xstrfmt("%s/.perun", top);
	if (fs_mkdir_p(r.dir, 0755) < 0 || vcs_head(top, head) < 0 ||
	    vcs_massage(top, "HEAD~1", prev) < 0)
		return 99;

	is_int(stats_listing(&r, NULL, 0, 1, 0, &l), 1, "no stats directory: nothing, quietly");
	save(&r, prev, "/usr/bin/big", 6);
	save(&r, head, "/usr/bin/small", 1);
	save(&r, head, "/usr/bin/mid", 3);

	is_int(stats_listing(&r, NULL, 0, 0, 0, &l), 0, "the minor versions");
	ok(l.nv == 2 && !strcmp(l.v[0].minor, head) && !strcmp(l.v[1].minor, prev), "newest first");
	ok(l.nv == 2 && l.v[0].files == 2 && l.v[1].files == 1, "their files counted");
	is_str(l.nv ? l.v[0].subject : NULL, "second", "with their subjects");
	ok(!l.f && !l.nf, "no files unless asked for");
	stats_listing_release(&l);

	is_int(stats_listing(&r, NULL, 1, 1, 0, &l), 0, "the newest one, with its files");
	ok(l.nv == 1 && l.nf == 2 && !strcmp(l.f[0].minor, head) && !strcmp(l.f[1].minor, head),
	   "HEAD's two files");
	stats_listing_release(&l);

	is_int(stats_listing(&r, NULL, 0, 1, 1, &l), 0, "by size");
	ok(l.nv == 2 && !strcmp(l.v[0].minor, prev), "the larger minor version first");
	ok(l.nf == 3 && l.f[0].size >= l.f[1].size && l.f[1].size >= l.f[2].size &&
	       !strcmp(l.f[0].minor, prev),
	   "files largest first, whatever their minor version");
	stats_listing_release(&l);

	is_int(stats_listing(&r, "HEAD~1", 0, 1, 0, &l), 0, "from HEAD~1");
	ok(l.nv == 1 && l.nf == 1 && !strcmp(l.v[0].minor, prev), "only its stats");
	stats_listing_release(&l);

	is_int(stats_delete_which(&r, "minor", "HEAD~1", NULL, sha, &minor, &name), 0,
	       "delete minor HEAD~1");
	ok(minor == sha && !strcmp(sha, prev) && !name, "that minor version, every file");
	is_int(stats_delete_which(&r, "file", "x", ".", sha, &minor, &name), 0,
	       "delete file x -m .");
	ok(!minor && name && !strcmp(name, "x"), "x in every minor version");
	is_int(stats_delete_which(&r, "file", "x", NULL, sha, &minor, &name), 0, "delete file x");
	ok(minor == sha && !strcmp(sha, head), "in HEAD");
	is_int(stats_delete_which(&r, "all", NULL, NULL, sha, &minor, &name), 0, "delete all");
	ok(!minor && !name, "everything");
	ok(stats_delete_which(&r, "minor", "nosuchrev", NULL, sha, &minor, &name) < 0,
	   "an unknown revision fails");

	path = xstrfmt("%s/run.perf", top);
	if (fs_write_atomic(path, profile, strlen(profile), 0644) < 0)
		return 99;
	is_int(stats_compute(&r, path, "HEAD~1", &p), 0, "compute the stats of a profile");
	ok(p && fs_exists(p) && strstr(p, prev), "saved for the minor version asked: %s",
	   p ? p : "(none)");
	ok(p && stats_load(&r, prev, strrchr(p, '/') + 1, &s) == 0 && s.n == 2,
	   "its two functions read back");
	if (p)
		stats_release(&s);
	free(p);
	ok(stats_compute(&r, "/nonexistent.perf", NULL, &p) < 0 && !p, "no profile: fails");
	free(path);

	repo_release(&r);
	fs_remove_tree(top);
	free(top);
	return tap_done();
}
