/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun aggregate --release REV --shard HOST [--time-box SECONDS] [--dir DIR]
 *                 [-m REV] PROFILE...
 * perun aggregate [--release REV] --expire-before TIME [--dir DIR]
 * Per-release, per-shard, time-boxed aggregates (store/aggregate-dir.h).  */
#include "config.h"

#define PR_FMT "perun aggregate"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "store/aggregate-dir.h"
#include "store/aggregate.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"

static const char usage[] =
	"usage: perun aggregate --release REV --shard HOST [--time-box SECONDS] [--dir DIR]\n"
	"                       [-m REV] PROFILE...\n"
	"   or: perun aggregate [--release REV] --expire-before TIME [--dir DIR]\n"
	"\n"
	"Merges profiles (N@i, N@p, names, paths, or other aggregates) into\n"
	"DIR/REV/aggregate/report.TIMEBOX.HOST, one file per time box of SECONDS\n"
	"(default 86400) holding per function calls, total, exclusive, min, max and a\n"
	"log2 histogram for quantiles.  Each input is keyed by its object id, so the\n"
	"same profile aggregated twice counts once.  DIR defaults to\n"
	".perun/aggregates.  --expire-before TIME (seconds since the epoch, or\n"
	"YYYY-MM-DD) deletes the time boxes that end before TIME: only report files\n"
	"perun wrote.  'perun show FILE|DIR/REV' prints an aggregate.\n";

/* TIME: seconds since the epoch, or YYYY-MM-DD (UTC).  */
static int parse_time(const char *s, int64_t *t)
{
	struct tm tm;
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	/* not when strtoll clamped an overflow to LLONG_MAX or LLONG_MIN */
	if (*s && !*end && !errno) {
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

/* --time-box SECONDS into the int64_t o->value.  */
static int parse_box(const struct popt *o, const char *v)
{
	uint64_t n;

	if (parse_count(v, INT64_MAX, &n) < 0 || !n)
		return popt_error(o, "--time-box takes a positive number of seconds, not '%s'", v);
	*(int64_t *)o->value = (int64_t)n;
	return 0;
}

/* The time --expire-before gives: the TIME and that it was given.  */
struct expire_arg {
	int64_t before;
	int given;
};

static int parse_expire(const struct popt *o, const char *v)
{
	struct expire_arg *e = o->value;

	if (parse_time(v, &e->before) < 0)
		return popt_error(o,
				  "--expire-before takes seconds since the epoch or YYYY-MM-DD, "
				  "not '%s'",
				  v);
	e->given = 1;
	return 0;
}

int cmd_aggregate(int argc, char **argv, struct ctx *ctx)
{
	const char *release = NULL, *shard = NULL, *dir_opt = NULL, *rev = NULL;
	int64_t box = 86400;
	struct expire_arg expire = { 0, 0 };
	int ret = EXIT_FAIL, n;
	size_t nspecs;
	struct agg_job job;
	struct agg_job_result res;
	struct popt opts[] = {
		OPT_STRING(0, "release", &release, "REV", "the release the profiles are of"),
		OPT_STRING(0, "shard", &shard, "HOST", "the shard (host) they come from"),
		OPT_CALLBACK(0, "time-box", &box, "SECONDS",
			     "the length of a time box (default 86400)", parse_box),
		OPT_STRING(0, "dir", &dir_opt, "DIR",
			   "where the aggregates are (default .perun/aggregates)"),
		OPT_STRING('m', NULL, &rev, "REV",
			   "the minor version N@i and names are of (default HEAD)"),
		OPT_CALLBACK(0, "expire-before", &expire, "TIME",
			     "delete the time boxes that end before TIME", parse_expire),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "aggregate", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	nspecs = (size_t)n;
	if ((release && !agg_valid_id(release)) || (shard && !agg_valid_id(shard))) {
		fprintf(stderr, "perun aggregate: release and shard ids name files: no '/', no "
				"leading '.', no spaces\n");
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	if (!expire.given && (!release || !shard || !nspecs)) {
		fprintf(stderr, "perun aggregate: --release, --shard and at least one PROFILE are "
				"needed (or --expire-before)\n");
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	if (nspecs && (!release || !shard)) {
		fprintf(stderr, "perun aggregate: profiles need --release and --shard\n");
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	memset(&job, 0, sizeof(job));
	job.dir = dir_opt;
	job.release = release;
	job.shard = shard;
	job.box = box;
	job.rev = rev ? rev : "HEAD";
	job.explicit_rev = rev != NULL;
	job.specs = argv;
	job.nspecs = nspecs;
	job.expire = expire.given;
	job.before = expire.before;
	if (agg_job_run(&job, &res) == 0)
		ret = EXIT_OK;
	if (res.stored)
		printf("release %s shard %s: %zu input%s added, %zu already aggregated, %zu time "
		       "box%s written under %s/%s\n",
		       release, shard, res.added, res.added == 1 ? "" : "s", res.already,
		       res.written, res.written == 1 ? "" : "es", res.dir, release);
	if (res.expired >= 0)
		printf("expired %ld time box%s ending before %lld\n", res.expired,
		       res.expired == 1 ? "" : "es", (long long)expire.before);
	agg_job_result_release(&res);
	return ret;
}
