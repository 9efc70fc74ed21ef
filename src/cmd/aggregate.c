/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun aggregate --release REV --shard HOST [--time-box SECONDS] [--dir DIR]
 *                 [-m REV] PROFILE...
 * perun aggregate [--release REV] --expire-before TIME [--dir DIR]
 * Per-release, per-shard, time-boxed aggregates (store/aggregate-dir.h).  */
#include "config.h"

#define PR_FMT "perun aggregate"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "store/aggregate-dir.h"
#include "store/aggregate.h"
#include "util/log.h"

#define USAGE                                                                                      \
	"usage: perun aggregate --release REV --shard HOST [--time-box SECONDS] [--dir DIR]\n"     \
	"                       [-m REV] PROFILE...\n"                                             \
	"   or: perun aggregate [--release REV] --expire-before TIME [--dir DIR]\n"

static void usage_aggregate(FILE *f)
{
	fprintf(f, USAGE
		"\n"
		"Merges profiles (N@i, N@p, names, paths, or other aggregates) into\n"
		"DIR/REV/aggregate/report.TIMEBOX.HOST, one file per time box of SECONDS\n"
		"(default 86400) holding per function calls, total, exclusive, min, max and a\n"
		"log2 histogram for quantiles.  Each input is keyed by its object id, so the\n"
		"same profile aggregated twice counts once.  DIR defaults to\n"
		".perun/aggregates.  --expire-before TIME (seconds since the epoch, or\n"
		"YYYY-MM-DD) deletes the time boxes that end before TIME: only report files\n"
		"perun wrote.  'perun show FILE|DIR/REV' prints an aggregate.\n");
}

/* TIME: seconds since the epoch, or YYYY-MM-DD (UTC).  */
static int parse_time(const char *s, int64_t *t)
{
	struct tm tm;
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s && !*end) {
		*t = v;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (!end || *end)
		return -1;
	*t = (int64_t)timegm(&tm);
	return 0;
}

int cmd_aggregate(int argc, char **argv, struct ctx *ctx)
{
	const char *release = NULL, *shard = NULL, *dir_opt = NULL, *rev = "HEAD";
	int64_t box = 86400, before = 0;
	int have_before = 0, explicit_rev = 0, ret = EXIT_FAIL, i;
	char **specs = NULL;
	size_t nspecs = 0;
	struct agg_job job;
	struct agg_job_result res;

	(void)ctx;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage_aggregate(stdout);
			free(specs);
			return EXIT_OK;
		} else if (!strcmp(a, "--release") && i + 1 < argc) {
			release = argv[++i];
		} else if (!strcmp(a, "--shard") && i + 1 < argc) {
			shard = argv[++i];
		} else if (!strcmp(a, "--dir") && i + 1 < argc) {
			dir_opt = argv[++i];
		} else if (!strcmp(a, "-m") && i + 1 < argc) {
			rev = argv[++i];
			explicit_rev = 1;
		} else if (!strcmp(a, "--time-box") && i + 1 < argc) {
			char *end;
			long long v = strtoll(argv[++i], &end, 10);
			if (*end || v <= 0) {
				fprintf(stderr,
					"perun aggregate: --time-box takes a positive number "
					"of seconds, not '%s'\n",
					argv[i]);
				free(specs);
				return EXIT_USAGE;
			}
			box = v;
		} else if (!strcmp(a, "--expire-before") && i + 1 < argc) {
			if (parse_time(argv[++i], &before) < 0) {
				fprintf(stderr,
					"perun aggregate: --expire-before takes seconds since "
					"the epoch or YYYY-MM-DD, not '%s'\n",
					argv[i]);
				free(specs);
				return EXIT_USAGE;
			}
			have_before = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr,
				"perun aggregate: unknown option or missing value '%s'\n" USAGE, a);
			free(specs);
			return EXIT_USAGE;
		} else {
			specs = xrealloc(specs, (nspecs + 1) * sizeof(*specs));
			specs[nspecs++] = argv[i];
		}
	}
	if ((release && !agg_valid_id(release)) || (shard && !agg_valid_id(shard))) {
		fprintf(stderr, "perun aggregate: release and shard ids name files: no '/', no "
				"leading '.', no spaces\n");
		free(specs);
		return EXIT_USAGE;
	}
	if (!have_before && (!release || !shard || !nspecs)) {
		fprintf(stderr, "perun aggregate: --release, --shard and at least one PROFILE are "
				"needed (or --expire-before)\n" USAGE);
		free(specs);
		return EXIT_USAGE;
	}
	if (nspecs && (!release || !shard)) {
		fprintf(stderr, "perun aggregate: profiles need --release and --shard\n" USAGE);
		free(specs);
		return EXIT_USAGE;
	}
	memset(&job, 0, sizeof(job));
	job.dir = dir_opt;
	job.release = release;
	job.shard = shard;
	job.box = box;
	job.rev = rev;
	job.explicit_rev = explicit_rev;
	job.specs = specs;
	job.nspecs = nspecs;
	job.expire = have_before;
	job.before = before;
	if (agg_job_run(&job, &res) == 0)
		ret = EXIT_OK;
	if (res.stored)
		printf("release %s shard %s: %zu input%s added, %zu already aggregated, %zu time "
		       "box%s written under %s/%s\n",
		       release, shard, res.added, res.added == 1 ? "" : "s", res.already,
		       res.written, res.written == 1 ? "" : "es", res.dir, release);
	if (res.expired >= 0)
		printf("expired %ld time box%s ending before %lld\n", res.expired,
		       res.expired == 1 ? "" : "es", (long long)before);
	agg_job_result_release(&res);
	free(specs);
	return ret;
}
