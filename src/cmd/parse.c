/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun __parse PLAN RAW OUT [--aggregate|--per-call]: the parser and profile writer
 * alone, on a recorded stream; for benchmarks and for re-parsing a raw
 * stream kept with -vt.  Prints what it did as JSON.  */
#include "config.h"

#define PR_FMT "perun __parse"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cmd/cmd.h"
#include "profile/writer.h"
#include "trace/parse.h"
#include "trace/plan.h"
#include "util/log.h"
#include "util/strbuf.h"

int cmd_parse(int argc, char **argv, struct ctx *ctx)
{
	struct plan plan;
	struct profile_writer w;
	struct parser *p;
	struct json_object *h, *ci, *out;
	struct timespec t0, t1;
	struct rusage ru;
	unsigned char *points;
	size_t i;
	int aggregate = argc > 4 && !strcmp(argv[4], "--aggregate"), ret = EXIT_FAIL;
	int per_call = argc > 4 && !strcmp(argv[4], "--per-call");
	double secs;

	(void)ctx;
	if (argc < 4) {
		fprintf(stderr, "usage: perun __parse PLAN RAW OUT [--aggregate|--per-call]\n");
		return EXIT_USAGE;
	}
	if (plan_load(&plan, argv[1]) < 0)
		return EXIT_FAIL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	points = xcalloc(plan.n ? plan.n : 1, 1);
	for (i = 0; i < plan.n; i++)
		points[i] = plan.probes[i].kind == PROBE_USDT_POINT || plan.probes[i].kind == PROBE_LINE;
	h = json_object_new_object();
	json_object_object_add(h, "type", json_object_new_string("mixed"));
	ci = json_object_new_object();
	json_object_object_add(ci, "name", json_object_new_string("trace"));
	if (profile_writer_open(&w, argv[3], &plan, NULL, h, ci, NULL,
				aggregate  ? PROFILE_SUMMARIES
				: per_call ? PROFILE_PER_CALL
					   : PROFILE_COMPACT) < 0)
		goto out;
	p = parser_new(plan.n, points, profile_writer_call, &w);
	if (parser_feed_file(p, argv[2]) < 0 || parser_finish(p) < 0 ||
	    profile_writer_close(&w, parser_stats(p), NULL) < 0) {
		profile_writer_abort(&w);
		parser_free(p);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	getrusage(RUSAGE_SELF, &ru);
	out = json_object_new_object();
	json_object_object_add(out, "bytes", json_object_new_int64((int64_t)parser_stats(p)->bytes));
	json_object_object_add(out, "events", json_object_new_int64((int64_t)parser_stats(p)->events));
	json_object_object_add(out, "calls", json_object_new_int64((int64_t)parser_stats(p)->calls));
	json_object_object_add(out, "seconds", json_object_new_double(secs));
	json_object_object_add(out, "max_rss_kb", json_object_new_int64(ru.ru_maxrss));
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	json_object_put(out);
	parser_free(p);
	ret = EXIT_OK;
out:
	json_object_put(h);
	json_object_put(ci);
	free(points);
	plan_release(&plan);
	return ret;
}
