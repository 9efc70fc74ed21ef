/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun status [--short] and perun log [--short] [-n N] [REV]  */
#include "config.h"

#define PR_FMT "perun"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "profile/profile.h"
#include "store/repo.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"
#include "vcs/vcs.h"

static void when(time_t t, char *buf, size_t n)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Prints one line: every field from a profile or an index entry as a
 * terminal may show it (strbuf_add_printable).  */
static void describe(const struct profile *p, const char *tag, const char *name, time_t t,
		     int short_form)
{
	struct strbuf line = STRBUF_INIT, what = STRBUF_INIT;
	char tb[32];
	const char *cmd = profile_str(p, "header.cmd"), *args = profile_str(p, "header.args");
	const char *wl = profile_str(p, "header.workload");
	const char *coll = profile_str(p, "collector_info.name");
	char *type, *collector;

	when(t, tb, sizeof(tb));
	strbuf_addf(&line, "  %-5s ", tag);
	if (!short_form) {
		type = xstrdup_printable(p ? profile_type(p) : "");
		collector = xstrdup_printable(coll ? coll : "?");
		strbuf_addf(&line, "%-7s %-8s ", type, collector);
		free(type);
		free(collector);
		strbuf_add_printable(&what, cmd ? cmd : "");
		if (args && *args) {
			strbuf_addch(&what, ' ');
			strbuf_add_printable(&what, args);
		}
		if (wl && *wl) {
			strbuf_addch(&what, ' ');
			strbuf_add_printable(&what, wl);
		}
		strbuf_addf(&line, "%s  %s  ", strbuf_str(&what), tb);
	}
	strbuf_add_printable(&line, name);
	puts(line.buf);
	strbuf_release(&line);
	strbuf_release(&what);
}

/* "  TAG   (why) NAME" for a profile that cannot be read.  */
static void unusable(const char *tag, const char *why, const char *name)
{
	char *shown = xstrdup_printable(name);

	printf("  %-5s (%s) %s\n", tag, why, shown);
	free(shown);
}

int cmd_status(int argc, char **argv, struct ctx *ctx)
{
	struct repo r;
	struct minor_version mv;
	struct pidx index;
	struct pending *pend = NULL;
	size_t npend = 0, i;
	char head[41], tb[32], *major;
	int short_form = 0, dirty, unborn, bad_index = 0, ret = EXIT_FAIL, n;
	static const char usage[] =
		"usage: perun status [--short]\n\nThe major version (branch), the HEAD minor "
		"version, whether the work tree is\ndirty, pending profiles (N@p) and profiles "
		"registered for HEAD (N@i).\n";
	struct popt opts[] = {
		OPT_BOOL('s', "short", &short_form, "leave out each profile's type and collector"),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "status", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n > 0) {
		fprintf(stderr, "perun status: unknown argument '%s'\n", argv[0]);
		return EXIT_USAGE;
	}
	if (repo_find(&r) < 0)
		return EXIT_FAIL;
	pidx_init(&index);
	unborn = vcs_unborn(r.worktree);
	if (unborn < 0)
		goto out;
	if (unborn) {
		/* like git: a repository without commits has a status too */
		major = vcs_major_version(r.worktree);
		printf("On major version %s: no commits yet (commit once, then 'perun add' "
		       "registers profiles for it)\n",
		       major ? major : "?");
		free(major);
	} else {
		if (vcs_head(r.worktree, head) < 0 || vcs_minor_info(r.worktree, head, &mv) < 0)
			goto out;
		major = vcs_major_version(r.worktree);
		dirty = vcs_is_dirty(r.worktree);
		when((time_t)mv.date, tb, sizeof(tb));
		printf("On major version %s (minor %.7s%s)\n", major ? major : "?", head,
		       dirty > 0 ? ", dirty: uncommitted changes may skew profiles" : "");
		if (!short_form) {
			char *au = xstrdup_printable(mv.author), *em = xstrdup_printable(mv.email);
			char *su = xstrdup_printable(mv.subject);
			printf("  %s <%s>, %s\n  %s\n", au, em, tb, su);
			free(au);
			free(em);
			free(su);
		}
		free(major);
		minor_version_release(&mv);
		/* a damaged index (reported) still leaves the pending profiles to list */
		bad_index = store_read_index(r.dir, head, &index) < 0;
	}
	repo_pending(&r, &pend, &npend);
	printf("\n%zu pending profile%s%s\n", npend, npend == 1 ? "" : "s", npend ? ":" : "");
	for (i = 0; i < npend; i++) {
		struct profile p;
		char tag[24];
		const char *name = strrchr(pend[i].path, '/') + 1;
		snprintf(tag, sizeof(tag), "%zu@p", i);
		if (profile_load(&p, pend[i].path) < 0) {
			unusable(tag, "unreadable", name);
			continue;
		}
		describe(&p, tag, name, pend[i].mtime, short_form);
		profile_release(&p);
	}
	if (bad_index)
		printf("\nthe index of %.7s is damaged: 'perun fsck' says how, 'perun fsck --repair' "
		       "rebuilds it\n", head);
	else if (!unborn)
		printf("\n%zu profile%s registered for %.7s%s\n", index.n, index.n == 1 ? "" : "s",
		       head, index.n ? ":" : "");
	for (i = 0; i < index.n; i++) {
		struct profile p;
		struct lookup l = { 1, i, NULL };
		char tag[24];
		snprintf(tag, sizeof(tag), "%zu@i", i);
		if (repo_load(&r, &index, &l, &p) < 0) {
			unusable(tag, "corrupted object", index.entries[i].path);
			continue;
		}
		describe(&p, tag, index.entries[i].path, (time_t)index.entries[i].time, short_form);
		profile_release(&p);
	}
	ret = bad_index ? EXIT_FAIL : EXIT_OK;
out:
	pidx_release(&index);
	pending_free(pend, npend);
	repo_release(&r);
	return ret;
}

struct log_ctx {
	struct repo *r;
	int short_form;
	int failed;
};

/* One minor version: its commit and the types of its profiles.  */
static void log_one(struct log_ctx *c, const struct minor_version *mv)
{
	char tb[32], *types;
	size_t n;

	if (repo_minor_types(c->r, mv->sha, &types, &n) < 0)
		c->failed = 1;
	when((time_t)mv->date, tb, sizeof(tb));
	if (c->short_form)
		printf("%.7s %2zu profile%s%s%s%s  %s\n", mv->sha, n, n == 1 ? "" : "s",
		       *types ? " [" : "", types, *types ? "]" : "", mv->subject);
	else
		printf("minor %s\nAuthor: %s <%s>\nDate:   %s\nProfiles: %zu%s%s%s\n\n    %s\n\n",
		       mv->sha, mv->author, mv->email, tb, n, *types ? " (" : "", types,
		       *types ? ")" : "", mv->subject);
	free(types);
}

/* -n N of perun log.  */
struct log_max {
	size_t n;
	int given;
};

/* -n N: a count of minor versions into the struct log_max o->value.  */
static int parse_max(const struct popt *o, const char *v)
{
	uint64_t m;

	if (parse_count(v, SIZE_MAX, &m) < 0)
		return popt_error(o, "-n wants a count of minor versions, not '%s'", v);
	((struct log_max *)o->value)->n = (size_t)m;
	((struct log_max *)o->value)->given = 1;
	return 0;
}

int cmd_log(int argc, char **argv, struct ctx *ctx)
{
	struct repo r;
	struct log_ctx c = { &r, 0, 0 };
	const char *rev = "HEAD";
	static const char usage[] =
		"usage: perun log [--short] [-n N] [REV]\n\nWalks the minor versions from REV "
		"(default HEAD), newest first, with the\ncount and types of the profiles "
		"registered for each.\n";
	struct log_max max = { 0, 0 };
	struct minor_version *mvs = NULL;
	size_t nmv = 0, i;
	char sha[41];
	int n;
	struct popt opts[] = {
		OPT_BOOL('s', "short", &c.short_form, "one line per minor version"),
		OPT_CALLBACK('n', NULL, &max, "N", "at most N minor versions", parse_max),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "log", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n > 1) {
		fprintf(stderr, "perun log: one REV at most, not '%s' and '%s'\n", argv[0], argv[1]);
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	if (n > 0)
		rev = argv[0];
	if (max.given && !max.n) /* -n 0: nothing, as in git */
		return EXIT_OK;
	if (repo_find(&r) < 0)
		return EXIT_FAIL;
	if (!strcmp(rev, "HEAD") && vcs_unborn(r.worktree) == 1) {
		printf("no commits yet: nothing to walk\n");
		repo_release(&r);
		return EXIT_OK;
	}
	if (vcs_massage(r.worktree, rev, sha) < 0 || vcs_log(r.worktree, sha, max.n, &mvs, &nmv) < 0) {
		repo_release(&r);
		return EXIT_FAIL;
	}
	for (i = 0; i < nmv; i++)
		log_one(&c, &mvs[i]);
	vcs_log_release(mvs, nmv);
	repo_release(&r);
	return c.failed ? EXIT_FAIL : EXIT_OK;
}
