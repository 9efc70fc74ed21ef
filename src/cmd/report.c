/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun report -o DIR [-n N] [-m REV] [--cmd CMD] [--args ARGS] [--workload W]
 *              [--collector C] [--threshold R]  */
#include "config.h"

#define PR_FMT "perun report"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "report/history-args.h"
#include "report/history.h"
#include "report/site.h"
#include "store/aggregate-dir.h"
#include "store/aggregate.h"
#include "store/repo.h"
#include "util/log.h"
#include "util/parse-options.h"

static const char usage[] =
	"usage: perun report -o DIR [-n N] [-m REV] [--cmd CMD] [--args ARGS]\n"
	"                    [--workload W] [--collector C] [--threshold R]\n"
	"                    [--aggregates DIR] [--any-machine]\n"
	"\n"
	"Writes a static site into DIR, as asv's publish does: index.html (a graph\n"
	"per function over the commits, median and p95, with the commit where each\n"
	"step starts marked, a table of the regressions, and the newest commit's\n"
	"p50, p90, p99 and p99.9 per function, as show --format hist), index.json,\n"
	"graphs/FUNCTION.json (one series each) and graphs/flame/COMMIT.svg (a flame\n"
	"graph of each commit's first profile).  The series are those of 'perun\n"
	"history --all' with the same options.  The releases perun aggregate wrote\n"
	"into DIR (default .perun/aggregates) get a table each, every shard and time\n"
	"box merged, and aggregates/RELEASE.json.  The page needs no network.\n";

int cmd_report(int argc, char **argv, struct ctx *ctx)
{
	const char *adir_opt = NULL;
	struct agg *aggs = NULL;
	size_t naggs = 0;
	const char *dir = NULL;
	struct history_args ha;
	struct history h;
	struct repo r;
	size_t i;
	int ret = EXIT_FAIL, replaced, n;
	struct popt opts[] = {
		OPT_STRING('o', "output", &dir, "DIR", "where the site goes"),
		OPT_HISTORY_ARGS(&ha),
		OPT_STRING(0, "aggregates", &adir_opt, "DIR",
			   "the releases perun aggregate wrote (default .perun/aggregates)"),
		OPT_END(),
	};

	(void)ctx;
	history_args_init(&ha);
	memset(&h, 0, sizeof(h));
	n = parse_options(argc, argv, "report", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n) {
		fprintf(stderr, "perun report: unexpected argument '%s'\n", argv[0]);
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	if (!dir) {
		fprintf(stderr, "perun report: say where the site goes with -o DIR\n");
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
	{
		char *adir = adir_opt ? xstrdup(adir_opt) : xstrfmt("%s/aggregates", r.dir);
		int bad = agg_load_releases(adir, &aggs, &naggs) < 0;
		free(adir);
		if (bad)
			goto out;
	}
	if ((replaced = site_write(&h, &r, dir, aggs, naggs)) < 0)
		goto out;
	printf("wrote %s/index.html: %zu function%s over %zu commit%s, %zu aggregated "
	       "release%s%s\n",
	       dir, h.ns, h.ns == 1 ? "" : "s", h.nc, h.nc == 1 ? "" : "s", naggs,
	       naggs == 1 ? "" : "s", replaced ? " (replacing the report perun wrote there)" : "");
	ret = EXIT_OK;
out:
	for (i = 0; i < naggs; i++)
		agg_release(&aggs[i]);
	free(aggs);
	history_release(&h);
	repo_release(&r);
	return ret;
}
