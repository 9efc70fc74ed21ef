/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun show PROFILE [FUNC] [--format json|summary|folded|flamegraph|tree|graph|chrome|hist]
 *            [--expand|--compact] [filters] [-o FILE] [-m REV]  */
#include "config.h"

#define PR_FMT "perun"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "profile/processes.h"
#include "profile/profile.h"
#include "profile/writer.h"
#include "report/calls-view.h"
#include "report/aggregate-table.h"
#include "store/aggregate-dir.h"
#include "store/aggregate.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"
#include "util/strv.h"
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

/* The heading of a process's table: its pid and command, and where it
 * came from.  */
static void process_heading(const struct profile *p, const struct profile_process *pr,
			    struct strbuf *out)
{
	const char *cmd = profile_str(p, "header.cmd");
	char *shown = xstrdup_printable(cmd && *cmd ? cmd : "?");

	strbuf_addf(out, "process %" PRId64 ": %s", pr->pid, shown);
	/* the traced process's own start is an execve too: only a child's says
	 * its command is another */
	if (pr->parent > 0)
		strbuf_addf(out, " (forked by %" PRId64 "%s)", pr->parent,
			    pr->exec ? ", then execve" : "");
	strbuf_addstr(out, "\n");
	free(shown);
}

/* The pids of v, "1, 2, 3".  */
static void pid_list(const struct profile_process *v, size_t n, struct strbuf *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		strbuf_addf(out, "%s%" PRId64, i ? ", " : "", v[i].pid);
}

/* --pid PID (only that process's calls) and --per-process (a table per
 * process), or, for the merged summary of several processes, a line saying
 * so.  Sets p's view for --pid; *done when the tables are in out already.
 * 0, or an exit status.  */
static int show_processes(struct profile *p, const char *spec, int pid, int per_process,
			  const char *format, struct profile_process **procs, size_t *nprocs,
			  struct strbuf *out, int *done)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	*done = 0;
	if (profile_processes(p, spec, procs, nprocs) < 0)
		return EXIT_FAIL;
	if ((pid > 0 || per_process) && !*nprocs) {
		fprintf(stderr, "perun show: %s records no processes (trace.threads_by_process): "
				"it was not collected by perun's loader; --pid and --per-process "
				"need them\n", spec);
		return EXIT_FAIL;
	}
	if (pid > 0) {
		for (i = 0; i < *nprocs && (*procs)[i].pid != pid; i++)
			;
		if (i == *nprocs) {
			pid_list(*procs, *nprocs, &sb);
			fprintf(stderr, "perun show: process %d is not in %s: it holds %s\n", pid,
				spec, sb.buf);
			strbuf_release(&sb);
			return EXIT_FAIL;
		}
		profile_view_process(p, &(*procs)[i]);
		if (!strcmp(format, "summary"))
			process_heading(p, &(*procs)[i], out);
		return 0;
	}
	if (per_process) {
		for (i = 0; i < *nprocs; i++) {
			if (i)
				strbuf_addstr(out, "\n");
			process_heading(p, &(*procs)[i], out);
			profile_view_process(p, &(*procs)[i]);
			profile_summary(p, out);
		}
		profile_view_process(p, NULL);
		*done = 1;
		return 0;
	}
	if (*nprocs > 1 && !strcmp(format, "summary")) {
		pid_list(*procs, *nprocs, &sb);
		strbuf_addf(out, "%zu processes merged (%s): --per-process shows a table for each, "
				 "--pid PID one of them\n", *nprocs, sb.buf);
	}
	strbuf_release(&sb);
	return 0;
}

static const char usage[] =
	"usage: perun show PROFILE [FUNC] [--format json|summary|folded|flamegraph|\n"
	"                  tree|graph|chrome|hist] [--expand|--compact] [--include FUNC]\n"
	"                  [--depth N] [--thread TID] [--min-duration TIME] [-o FILE]\n"
	"                  [--pid PID|--per-process] [-m REV]\n\n"
	"PROFILE is N@i, N@p, a name registered for REV (default HEAD), a path,\n"
	"or part of a name in .perun/jobs.  summary: a table per function;\n"
	"folded: stacks with exclusive amounts, for flame graph tools;\n"
	"flamegraph: a self-contained interactive SVG (click to zoom).\n"
	"json --expand: one object per call (the per-call form of perun 0.1, and\n"
	"of collect --per-call); json --compact: columns per function and\n"
	"thread (what collect writes).  Either reads both forms.\n"
	"tree: every call per thread, nested, with entry time, duration and self\n"
	"time; graph FUNC: the callers and callees of FUNC with counts and times;\n"
	"chrome: Chrome trace-event JSON (Perfetto, chrome://tracing, speedscope);\n"
	"hist: p50, p90, p99, p99.9 and a log2 histogram per function.  FUNC after\n"
	"PROFILE is the graph's function, or --include FUNC for the others.\n"
	"A profile of several processes (collect --follow) is shown merged;\n"
	"--pid PID shows one of them, --per-process a table for each.\n";

/* The formats of show, and whether they are views of the calls one by one.  */
static const struct {
	const char *name;
	int calls;		/* 1 + enum calls_format, 0 for the others */
} formats[] = {
	{ "summary", 0 }, { "json", 0 }, { "folded", 0 }, { "flamegraph", 0 },
	{ "tree", 1 + CALLS_TREE }, { "graph", 1 + CALLS_GRAPH }, { "chrome", 1 + CALLS_CHROME },
	{ "hist", 1 + CALLS_HIST },
};

/* --format FMT into the const char * o->value.  */
static int parse_format(const struct popt *o, const char *v)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(v, formats[i].name)) {
			*(const char **)o->value = v;
			return 0;
		}
	return popt_error(o, "unknown format '%s': summary, json, folded, flamegraph, tree, "
			     "graph, chrome or hist", v);
}

static int calls_format_of(const char *v)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(v, formats[i].name))
			return formats[i].calls;
	return 0;
}

/* --include FUNC, repeatable, into the struct strv o->value.  */
static int parse_include(const struct popt *o, const char *v)
{
	if (!*v)
		return popt_error(o, "--include wants a function name");
	strv_push(o->value, v);
	return 0;
}

/* --min-duration TIME into the uint64_t o->value.  */
static int parse_min_duration(const struct popt *o, const char *v)
{
	if (parse_duration_ns(v, o->value) < 0)
		return popt_error(o, "--min-duration wants a time like 10us, 2ms or 500ns, not '%s'",
				  v);
	return 0;
}

/* --thread TID into the struct calls_filter o->value.  */
static int parse_thread(const struct popt *o, const char *v)
{
	struct calls_filter *f = o->value;
	uint64_t tid;

	if (parse_count(v, INT64_MAX, &tid) < 0)
		return popt_error(o, "--thread wants a thread id, not '%s'", v);
	f->thread = (int64_t)tid;
	f->has_thread = 1;
	return 0;
}

/* --depth N into the unsigned o->value.  */
static int parse_depth(const struct popt *o, const char *v)
{
	uint64_t d;

	if (parse_count(v, 1u << 20, &d) < 0 || !d)
		return popt_error(o, "--depth wants a number of levels from 1, not '%s'", v);
	*(unsigned *)o->value = (unsigned)d;
	return 0;
}

/* Writes text to path, or to stdout when path is NULL or "-".  */
static int write_output(const char *path, const struct strbuf *text)
{
	if (!path || !strcmp(path, "-")) {
		fwrite(text->buf ? text->buf : "", 1, text->len, stdout);
		return 0;
	}
	/* never through a link, nor over a file of someone else's */
	if (!fs_replaceable(path))
		return pr_error("%s: not a regular file of ours writable by no one else: refusing "
				"to replace it",
				path);
	return fs_write_atomic(path, text->buf ? text->buf : "", text->len, 0644);
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
	int n, explicit_rev, unborn, ret = EXIT_FAIL, form = 0, expand = 0, compact = 0, view;
	struct strv include = STRV_INIT;
	struct calls_filter filter = { NULL };
	const char *output = NULL;
	int pid = -1, per_process = 0, done = 0;
	struct profile_process *procs = NULL;
	size_t nprocs = 0;
	struct popt opts[] = {
		OPT_CALLBACK('f', "format", &format, "FMT",
			     "summary (default), json, folded, flamegraph, tree, graph, chrome or hist",
			     parse_format),
		OPT_BOOL(0, "expand", &expand,
			    "with --format json: one object per call"),
		OPT_BOOL(0, "compact", &compact,
			    "with --format json: columns per function and thread"),
		OPT_INT(0, "pid", &pid, "PID",
			"only the calls of process PID (of a profile collected with --follow)"),
		OPT_BOOL(0, "per-process", &per_process,
			 "with --format summary: a table for each process"),
		OPT_STRING('m', "minor", &rev, "REV",
			   "the minor version (a commit) whose index it is (default HEAD)"),
		OPT_GROUP("Views of the calls one by one (tree, graph, chrome, hist):"),
		OPT_CALLBACK(0, "include", &include, "FUNC",
			     "only calls of FUNC (a name, repeatable) and the calls inside them",
			     parse_include),
		OPT_CALLBACK(0, "depth", &filter.depth, "N",
			     "tree, chrome: N levels from the outermost call shown", parse_depth),
		OPT_CALLBACK(0, "thread", &filter, "TID", "only the calls of thread TID",
			     parse_thread),
		OPT_CALLBACK(0, "min-duration", &filter.min_ns, "TIME",
			     "tree, chrome, graph: only calls at least TIME long (10us, 2ms)",
			     parse_min_duration),
		OPT_STRING('o', "output", &output, "FILE", "write the view to FILE, not stdout"),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "show", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	view = calls_format_of(format);
	if (n > 2 || (n == 2 && !view)) {
		fprintf(stderr, "perun show: one profile at a time\n");
		ret = EXIT_USAGE;
		goto out_usage;
	}
	if (!n) {
		usage_synopsis(stderr, usage);
		ret = EXIT_USAGE;
		goto out_usage;
	}
	if (view == 1 + CALLS_GRAPH) {
		if (n < 2 && include.n != 1) {
			fprintf(stderr, "perun show: --format graph wants a function: show PROFILE "
					"FUNC --format graph\n");
			ret = EXIT_USAGE;
			goto out_usage;
		}
		filter.function = n == 2 ? argv[1] : include.v[0];
	} else if (n == 2) {
		strv_push(&include, argv[1]);
	}
	if (!view && (include.n || filter.depth || filter.has_thread || filter.min_ns)) {
		fprintf(stderr, "perun show: --include, --depth, --thread and --min-duration go "
				"with --format tree, graph, chrome or hist\n");
		ret = EXIT_USAGE;
		goto out_usage;
	}
	if (output && view != 1 + CALLS_CHROME) {
		fprintf(stderr, "perun show: -o goes with --format chrome\n");
		ret = EXIT_USAGE;
		goto out_usage;
	}
	if (view != 1 + CALLS_GRAPH)
		filter.include = include.n ? include.v : NULL;
	spec = argv[0];
	explicit_rev = rev != NULL;
	if (!rev)
		rev = "HEAD";
	if (expand && compact) {
		fprintf(stderr, "perun show: --expand or --compact, not both\n");
		usage_synopsis(stderr, usage);
		ret = EXIT_USAGE;
		goto out_usage;
	}
	form = expand ? PROFILE_PER_CALL : compact ? PROFILE_COMPACT : 0;
	if (form && strcmp(format, "json")) {
		fprintf(stderr, "perun show: --expand and --compact go with --format json\n");
		ret = EXIT_USAGE;
		goto out_usage;
	}
	if (fs_exists(spec) && agg_is_aggregate_path(spec)) {
		ret = show_aggregate(spec, format);
		goto out_usage;
	}
	if (pid != -1 && pid <= 0) {
		fprintf(stderr, "perun show: --pid wants a process id, not %d\n", pid);
		ret = EXIT_USAGE;
		goto out_usage;
	}
	if (per_process && (pid > 0 || strcmp(format, "summary"))) {
		fprintf(stderr, "perun show: --per-process goes with --format summary, not --pid\n");
		ret = EXIT_USAGE;
		goto out_usage;
	}
	if (pid > 0 && !strcmp(format, "json")) {
		fprintf(stderr, "perun show: --pid goes with --format summary, folded or "
				"flamegraph\n");
		ret = EXIT_USAGE;
		goto out_usage;
	}
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
	 * stdout is a format other programs read (json, folded, flamegraph,
	 * chrome: the export says it in its metadata too) */
	if (profile_incomplete(&p, "", &inc) && strcmp(format, "summary") &&
	    (!view || view == 1 + CALLS_CHROME)) {
		const char *line = inc.buf, *nl;
		for (; (nl = strchr(line, '\n')); line = nl + 1)
			fprintf(stderr, "perun show: %.*s\n", (int)(nl - line), line);
	} else {
		strbuf_add(&out, inc.buf ? inc.buf : "", inc.len);
	}
	ret = show_processes(&p, spec, pid, per_process, format, &procs, &nprocs, &out, &done);
	if (ret)
		goto out;
	ret = EXIT_FAIL;
	if (done) {
		; /* the tables of --per-process */
	} else if (view) {
		if (calls_view(&p, spec, view - 1, &filter, &out) < 0 || write_output(output, &out) < 0)
			goto out;
		strbuf_reset(&out);
	} else if (form) {
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
	profile_processes_free(procs, nprocs);
	profile_release(&p);
	pidx_release(&index);
	strbuf_release(&out);
	strbuf_release(&inc);
	repo_release(&r);
out_usage:
	strv_clear(&include);
	return ret;
}
