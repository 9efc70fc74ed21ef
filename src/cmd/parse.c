/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun __parse PLAN RAW OUT [--aggregate|--per-call]: the parser and profile writer
 * alone, on a recorded stream; for benchmarks and for re-parsing a raw
 * stream kept with -vt.  Prints what it did as JSON.  */
#include "config.h"

#define PR_FMT "perun __parse"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/session.h"
#include "profile/writer.h"
#include "util/log.h"

int cmd_parse(int argc, char **argv, struct ctx *ctx)
{
	struct json_object *out = NULL;
	int form = PROFILE_COMPACT;

	(void)ctx;
	if (argc < 4) {
		fprintf(stderr, "usage: perun __parse PLAN RAW OUT [--aggregate|--per-call]\n");
		return EXIT_USAGE;
	}
	if (argc > 4 && !strcmp(argv[4], "--aggregate"))
		form = PROFILE_SUMMARIES;
	else if (argc > 4 && !strcmp(argv[4], "--per-call"))
		form = PROFILE_PER_CALL;
	if (collect_reparse(argv[1], argv[2], argv[3], form, &out) < 0)
		return EXIT_FAIL;
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	json_object_put(out);
	return EXIT_OK;
}
