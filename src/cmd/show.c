/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun show PROFILE [--format json|summary|folded|flamegraph] [--expand|--compact] [-m REV]  */
#include "config.h"

#define PR_FMT "perun"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "profile/profile.h"
#include "profile/writer.h"
#include "report/aggregate-table.h"
#include "store/aggregate-dir.h"
#include "store/aggregate.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/parse-options.h"
#include "vcs/vcs.h"

/* An aggregate report file or release directory: its table or JSON.  */
static int show_aggregate(const char *path, const char *format)
{
	struct strbuf out = STRBUF_INIT;
	struct agg a;

	if (strcmp(format, "summary") && strcmp(format, "json")) {
		fprintf(stderr,
			"perun show: an aggregate holds no call stacks: use --format summary "
			"or json\n");
		return EXIT_USAGE;
	}
	if (agg_load_path(path, &a) < 0)
		return EXIT_FAIL;
	if (!strcmp(format, "json"))
		agg_to_json(&a, &out);
	else
		agg_summary(&a, &out);
	fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
	strbuf_release(&out);
	agg_release(&a);
	return EXIT_OK;
}

static const char usage[] =
	"usage: perun show PROFILE [--format json|summary|folded|flamegraph]\n"
	"                  [--expand|--compact] [-m REV]\n\n"
	"PROFILE is N@i, N@p, a name registered for REV (default HEAD), a path,\n"
	"or part of a name in .perun/jobs.  summary: a table per function;\n"
	"folded: stacks with exclusive amounts, for flame graph tools;\n"
	"flamegraph: a self-contained interactive SVG (click to zoom).\n"
	"json --expand: one object per call (the per-call form of perun 0.1, and\n"
	"of collect --per-call); json --compact: columns per function and\n"
	"thread (what collect writes).  Either reads both forms.\n";

/* --format FMT into the const char * o->value.  */
static int parse_format(const struct popt *o, const char *v)
{
	if (strcmp(v, "json") && strcmp(v, "summary") && strcmp(v, "folded") &&
	    strcmp(v, "flamegraph"))
		return popt_error(o, "unknown format '%s': json, summary, folded or flamegraph", v);
	*(const char **)o->value = v;
	return 0;
}

int cmd_show(int argc, char **argv, struct ctx *ctx)
{
	const char *rev = NULL, *format = "summary", *spec;
	struct repo r;
	struct pidx index;
	struct lookup l;
	struct profile p = { NULL };
	struct strbuf out = STRBUF_INIT, inc = STRBUF_INIT;
	char minor[41], *pd = NULL;
	int n, explicit_rev, unborn, ret = EXIT_FAIL, form = 0, expand = 0, compact = 0;
	struct popt opts[] = {
		OPT_CALLBACK('f', "format", &format, "FMT",
			     "summary (default), json, folded or flamegraph", parse_format),
		OPT_BOOL(0, "expand", &expand,
			    "with --format json: one object per call"),
		OPT_BOOL(0, "compact", &compact,
			    "with --format json: columns per function and thread"),
		OPT_STRING('m', "minor", &rev, "REV",
			   "the minor version (a commit) whose index it is (default HEAD)"),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "show", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n > 1) {
		fprintf(stderr, "perun show: one profile at a time\n");
		return EXIT_USAGE;
	}
	if (!n) {
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	spec = argv[0];
	explicit_rev = rev != NULL;
	if (!rev)
		rev = "HEAD";
	if (expand && compact) {
		fprintf(stderr, "perun show: --expand or --compact, not both\n");
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	form = expand ? PROFILE_PER_CALL : compact ? PROFILE_COMPACT : 0;
	if (form && strcmp(format, "json")) {
		fprintf(stderr, "perun show: --expand and --compact go with --format json\n");
		return EXIT_USAGE;
	}
	if (fs_exists(spec) && agg_is_aggregate_path(spec))
		return show_aggregate(spec, format);
	pidx_init(&index);
	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	memset(&l, 0, sizeof(l));
	snprintf(minor, sizeof(minor), "HEAD");
	/* a path, or a name outside any repository (where it can only be a
	 * file), is shown as it is: no repository, commit or lookup needed */
	if (strchr(spec, '/') ||
	    (!explicit_rev && (fs_exists(spec) || !strchr(spec, '@')) && !(pd = repo_locate()))) {
		if (profile_load(&p, spec) < 0)
			goto out;
	} else {
		free(pd);
		if (repo_find(&r) < 0)
			goto out;
		unborn = explicit_rev ? 0 : vcs_unborn(r.worktree);
		if (unborn < 0 || (!unborn && (vcs_massage(r.worktree, rev, minor) < 0 ||
					       store_read_index(r.dir, minor, &index) < 0)))
			goto out;
		if (repo_lookup(&r, minor, &index, spec, &l) < 0 || repo_load(&r, &index, &l, &p) < 0)
			goto out;
	}
	/* an incomplete profile says so first: in the table, or on stderr where
	 * stdout is a format other programs read */
	if (profile_incomplete(&p, "", &inc) && strcmp(format, "summary")) {
		const char *line = inc.buf, *nl;
		for (; (nl = strchr(line, '\n')); line = nl + 1)
			fprintf(stderr, "perun show: %.*s\n", (int)(nl - line), line);
	} else {
		strbuf_add(&out, inc.buf ? inc.buf : "", inc.len);
	}
	if (form) {
		fflush(stdout);
		if (profile_write_form(&p, stdout, form, spec) < 0)
			goto out;
	} else if (!strcmp(format, "json"))
		printf("%s\n", json_object_to_json_string_ext(p.root, JSON_C_TO_STRING_PRETTY |
									      JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (!strcmp(format, "summary"))
		profile_summary(&p, &out);
	else if (!strcmp(format, "folded"))
		profile_folded(&p, &out);
	else {
		struct strbuf folded = STRBUF_INIT, title = STRBUF_INIT;
		const char *cmd = profile_str(&p, "header.cmd");
		profile_folded(&p, &folded);
		strbuf_addf(&title, "%s (%.7s)%s", cmd && *cmd ? cmd : spec, minor,
			    inc.len ? ": an incomplete profile (events lost or probes not attached)"
				    : "");
		profile_flamegraph(strbuf_str(&folded), title.buf, &out);
		strbuf_release(&folded);
		strbuf_release(&title);
	}
	fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
	ret = EXIT_OK;
out:
	free(l.path);
	profile_release(&p);
	pidx_release(&index);
	strbuf_release(&out);
	strbuf_release(&inc);
	repo_release(&r);
	return ret;
}
