/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun history FUNCTION|--all [-n N] [-m REV] [--cmd CMD] [--args ARGS]
 *               [--workload W] [--collector C] [--threshold R] [--format text|json]  */
#include "config.h"

#define PR_FMT "perun history"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "report/history-args.h"
#include "report/history.h"
#include "store/repo.h"
#include "util/log.h"
#include "util/parse-options.h"

static const char usage[] =
	"usage: perun history FUNCTION|--all [-n N] [-m REV] [--format text|json]\n"
	"                     [--cmd CMD] [--args ARGS] [--workload W] [--collector C]\n"
	"                     [--threshold R] [--any-machine]\n"
	"\n"
	"Per-function series over the first-parent history of REV (default HEAD):\n"
	"for each of the last N commits (default 100, 0: all) that has profiles of\n"
	"the same collector, command, arguments and workload (given, or those of the\n"
	"newest profile), the median and p95 of the call times and the calls per\n"
	"profile.  Steps in the median and in the p95 are found as asv does (an L1\n"
	"Potts fit whose penalty the information criterion picks, AR(1) noise), with\n"
	"the noise each commit's runs and calls show as the floor, so that 3 commits\n"
	"can show a step; each is named by the commit where the new level starts.\n"
	"--threshold R (default 0.05) drops steps smaller than R relative to the level\n"
	"before.  Only profiles of the newest profile's machine count, unless\n"
	"--any-machine.  Exit 0 whether or not steps were found.\n";

/* --format text|json into the const char * o->value.  */
static int parse_format(const struct popt *o, const char *v)
{
	if (strcmp(v, "text") && strcmp(v, "json"))
		return popt_error(o, "--format text or json, not '%s'", v);
	*(const char **)o->value = v;
	return 0;
}

static void print_amount(double v, char *buf, size_t n)
{
	if (!isfinite(v))
		snprintf(buf, n, "-");
	else if (v >= 1e9)
		snprintf(buf, n, "%.3g s", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, n, "%.3g ms", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, n, "%.3g us", v / 1e3);
	else
		snprintf(buf, n, "%.3g ns", v);
}

static void print_series(const struct history *h, const struct history_series *s, int table)
{
	char a[32], b[32], day[16];
	size_t i;

	printf("%s: %zu step%s over %zu commit%s\n", s->name, s->nsteps, s->nsteps == 1 ? "" : "s",
	       h->nc, h->nc == 1 ? "" : "s");
	for (i = 0; i < s->nsteps; i++) {
		const struct history_step *st = &s->steps[i];
		print_amount(st->before, a, sizeof(a));
		print_amount(st->after, b, sizeof(b));
		printf("  step at %.7s %s -> %s (%+.1f%%)  %s\n", h->c[st->index].sha, a, b,
		       100.0 * st->rel, h->c[st->index].subject);
	}
	for (i = 0; i < s->np95_steps; i++) {
		const struct history_step *st = &s->p95_steps[i];
		print_amount(st->before, a, sizeof(a));
		print_amount(st->after, b, sizeof(b));
		printf("  p95 step at %.7s %s -> %s (%+.1f%%)  %s\n", h->c[st->index].sha, a, b,
		       100.0 * st->rel, h->c[st->index].subject);
	}
	if (!table)
		return;
	printf("  %-7s  %-10s  %10s  %10s  %10s  %s\n", "commit", "date", "calls", "median", "p95",
	       "subject");
	for (i = h->nc; i-- > 0;) {
		time_t t = (time_t)h->c[i].date;
		struct tm tm;
		size_t k;
		int mark = 0;
		for (k = 0; k < s->nsteps; k++)
			mark |= s->steps[k].index == i;
		gmtime_r(&t, &tm);
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
		print_amount(s->median[i], a, sizeof(a));
		print_amount(s->p95[i], b, sizeof(b));
		if (isfinite(s->calls[i]))
			printf("%c %.7s  %-10s  %10.1f  %10s  %10s  %s\n",
			       mark ? '*' : h->c[i].incomplete ? '!' : ' ',
			       h->c[i].sha, day, s->calls[i], a, b, h->c[i].subject);
		else
			printf("%c %.7s  %-10s  %10s  %10s  %10s  %s\n",
			       mark ? '*' : h->c[i].incomplete ? '!' : ' ',
			       h->c[i].sha, day, "-", a, b, h->c[i].subject);
	}
}

int cmd_history(int argc, char **argv, struct ctx *ctx)
{
	const char *func = NULL, *format = "text";
	struct history_args ha;
	struct history h;
	struct repo r;
	size_t i;
	int all = 0, ret = EXIT_FAIL, n;
	struct popt opts[] = {
		OPT_BOOL(0, "all", &all, "every function, not one FUNCTION"),
		OPT_CALLBACK(0, "format", &format, "FMT", "text (default) or json", parse_format),
		OPT_HISTORY_ARGS(&ha),
		OPT_END(),
	};

	(void)ctx;
	history_args_init(&ha);
	n = parse_options(argc, argv, "history", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n > 1) {
		fprintf(stderr, "perun history: unexpected argument '%s'\n", argv[1]);
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	if (n)
		func = argv[0];
	if (!!func == all) {
		fprintf(stderr, "perun history: name one FUNCTION or --all\n");
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	if (repo_find(&r) < 0)
		return EXIT_FAIL;
	if (history_build(&r, ha.rev, ha.max, &ha.f, &h) < 0 || history_steps(&h, &ha.so) < 0)
		goto out;
	if (!h.nc) {
		pr_error("no commit among the last %zu first parents of %s has matching profiles: "
			 "register some with 'perun add'",
			 ha.max, ha.rev);
		goto out;
	}
	if (h.skipped_machine)
		pr_warn("left out %zu profile%s from another machine than %s (--any-machine counts "
			"them)",
			h.skipped_machine, h.skipped_machine == 1 ? "" : "s", h.machine);
	if (func && !history_find(&h, func)) {
		pr_error("no profile in this history has calls of '%s': see 'perun history --all'",
			 func);
		goto out;
	}
	if (!strcmp(format, "json")) {
		struct strbuf sb = STRBUF_INIT;
		history_to_json(&h, func, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	} else {
		printf("%zu commit%s with profiles of %s%s%s%s%s (collector %s)\n", h.nc,
		       h.nc == 1 ? "" : "s", h.cmd, *h.args ? " " : "", h.args,
		       *h.workload ? " " : "", h.workload, h.collector);
		/* incomplete profiles say so before the numbers made of them */
		for (i = h.nc; i-- > 0;) {
			const char *line = h.c[i].incomplete, *nl;
			for (; line && (nl = strchr(line, '\n')); line = nl + 1)
				printf("! %.7s %.*s\n", h.c[i].sha, (int)(nl - line), line);
		}
		if (func)
			print_series(&h, history_find(&h, func), 1);
		else
			for (i = 0; i < h.ns; i++)
				print_series(&h, &h.s[i], 0);
	}
	ret = EXIT_OK;
out:
	history_release(&h);
	repo_release(&r);
	return ret;
}
