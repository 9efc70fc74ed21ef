/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect's options, shared by the commands that collect (collect, and cache
 * build for --compile-only): the top-level ones (-c, -a, -w, -o, --pid), then
 * the collector's through collect_parse_trace; their --help; and what a
 * module build prints.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/session.h"
#include "runtime/runtime.h"
#include "store/output.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"

/* The rows of collect's own options, filling *o, and *help on --help (the
 * help lists them with the trace level's).  */
#define COLLECT_ROWS(o, help)                                                                      \
	OPT_GROUP("collect options:"),                                                             \
	OPT_STRING('c', "cmd", &(o)->cmd, "CMD", "the command to profile"),                        \
	OPT_STRING('a', "args", &(o)->args, "ARGS",                                                \
		   "its arguments (split like a shell, no expansion)"),                            \
	OPT_STRING('w', "workload", &(o)->workload, "WORKLOAD", "its input, appended after ARGS"), \
	OPT_STRING('o', "output", &(o)->output, "FILE",                                            \
		   "write the profile to FILE (default: .perun/jobs/)"),                           \
	OPT_CALLBACK('p', "pid", &(o)->pid, "PID",                                                 \
		     "attach to a running process and all its threads;\n"                          \
		     "the trace ends on Ctrl-C, after -t SECONDS, or when\n"                        \
		     "the process exits; perun never signals it",                                  \
		     pid_cb),                                                                      \
	OPT_BOOL(0, "follow", &(o)->follow,                                                        \
		 "trace the processes the command (or PID) starts,\n"                              \
		 "and theirs, each from when its fork is seen"),                                   \
	OPT_BOOL('h', "help", (help), NULL)

/* What --help says after the options.  */
static const char usage_tail[] =
	"The profile's amounts are nanoseconds (header.units).  Exit status: 0 when the\n"
	"profile was written and is complete, 1 on failure, 2 on a usage error, 3 when\n"
	"the profile was written but events were lost (it says how many, per function),\n"
	"128+N when the command was killed by signal N (the profile is still written).\n";

static int pid_cb(const struct popt *opt, const char *value)
{
	long *pid = opt->value;
	uint64_t v;

	if (parse_count(value, 0x3fffffff, &v) < 0 || !v)
		return popt_error(opt, "--pid wants a process id, not '%s'", value);
	*pid = (long)v;
	return 0;
}

void usage_collect(FILE *f)
{
	struct collect_opts o;
	int help;
	struct popt rows[] = { COLLECT_ROWS(&o, &help), OPT_END() };
	struct popt *trace, *all;

	collect_opts_init(&o);
	trace = collect_trace_options(&o, &help);
	all = popt_concat(rows, trace);
	usage_with_options(f, COLLECT_SYNOPSIS, all);
	fprintf(f, "\n%s", usage_tail);
	free(all);
	free(trace);
	collect_opts_release(&o);
}

/* The row of opts that the option word w names ("-t", "-t5", "--timeout",
 * "--timeout=5", "-oa"), or NULL.  */
static const struct popt *row_of(const struct popt *opts, const char *w)
{
	const struct popt *p;
	size_t n;

	for (p = opts; p->kind != POPT_END; p++) {
		if (p->kind == POPT_GROUP)
			continue;
		if (p->kind == POPT_ALIAS) {
			if (!strcmp(w + 1, p->alias))
				return p;
			continue;
		}
		if (w[1] == '-' && p->long_name) {
			n = strlen(p->long_name);
			if (!strncmp(w + 2, p->long_name, n) && (!w[2 + n] || w[2 + n] == '='))
				return p;
		} else if (w[1] != '-' && p->short_name && w[1] == p->short_name) {
			return p;
		}
	}
	return NULL;
}

/* An option of trace given before 'trace' (argv[1..trace_at)): said, with
 * where it goes.  EXIT_USAGE, or 0 when there is none.  */
static int trace_option_before_trace(int trace_at, char **argv, const struct popt *opts,
				     struct collect_opts *o)
{
	int help = 0, i, ret = 0;
	struct popt *trace = collect_trace_options(o, &help);

	for (i = 1; i < trace_at; i++) {
		const char *w = argv[i];
		const struct popt *mine, *theirs;

		if (!strcmp(w, "--"))
			break;
		if (w[0] != '-' || !w[1])
			continue;
		mine = row_of(opts, w);
		if (mine) {
			/* its value, when it is the next word */
			if (mine->argh && !strchr(w, '=') && (w[1] == '-' || !w[2]))
				i++;
			continue;
		}
		theirs = row_of(trace, w);
		if (theirs && theirs->kind != POPT_ALIAS) {
			ret = collect_usage_error("%s is an option of trace: put it after 'trace' "
						  "(perun collect -c CMD trace %s ...)",
						  w, w);
			break;
		}
	}
	free(trace);
	return ret;
}

int collect_args_parse(int argc, char **argv, struct collect_opts *o)
{
	int help = 0;
	struct popt opts[] = { COLLECT_ROWS(o, &help), OPT_END() };
	/* the collect level ends at "trace": the rest is the collector's */
	int trace_at = popt_find_word(argc, argv, opts, "trace");
	int c = trace_option_before_trace(trace_at, argv, opts, o);

	if (c)
		return c;
	c = parse_options(trace_at, argv, "collect", COLLECT_SYNOPSIS, opts);

	if (c < 0)
		return EXIT_USAGE;
	if (help) {
		usage_collect(stdout);
		return -1;
	}
	if (c > 0)
		return collect_usage_error("unknown collector '%s': perun has 'trace'", argv[0]);
	if (trace_at >= argc)
		return collect_usage_error("%s", "missing collector: 'trace'");
	c = collect_parse_trace(argc - trace_at, argv + trace_at, o);
	if (c == 1) {
		usage_collect(stdout);
		return -1;
	}
	if (c)
		return c;
	if (o->pid && (o->cmd || o->args || o->workload))
		return collect_usage_error("%s", "--pid traces a process that runs: not with -c, -a or -w");
	if (!o->cmd && !o->pid)
		return collect_usage_error("%s", "nothing to run: give the command with -c, or a running "
					   "process with --pid (-b names the binary to probe when it "
					   "differs)");
	/* -o is checked now, not after the target ran: a bad one lost the trace */
	if (o->output && !o->script_only && output_check(o->output) < 0)
		return EXIT_USAGE;
	return 0;
}

void collect_say_module(const struct session *s)
{
	/* stdout: KEY RUNTIME RELEASE, for scripts that fill fleets' caches */
	printf("%s %s %s\n", s->key, runtime_name(s->runtime), s->release ? s->release : "-");
	if (!s->o->quiet)
		fprintf(stderr, "perun: %s module in the cache (%s): %s\n", runtime_name(s->runtime),
			s->cache_state, s->module);
}
