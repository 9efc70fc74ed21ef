/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun calibrate [--runtime R] [--loader L] [--calls N] [--force] [-q]: measures the
 * probe effect on this host and runtime and caches it (src/collect/calibration.h);
 * collect uses it for calibrated amounts in the summaries.  */
#include "config.h"

#define PR_FMT "perun"

#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/calibration.h"
#include "util/log.h"

static void usage(FILE *f)
{
	fputs("usage: perun calibrate [--runtime R] [--loader L] [--calls N] [--force] [-q]\n"
	      "\n"
	      "Measures what an empty traced call costs on this host: perun traces\n"
	      "perun-calib, which calls an empty function and an untraced twin N times each,\n"
	      "and caches the result per runtime and kernel release in the module cache\n"
	      "directory.  collect subtracts it for the calibrated_* summary fields.\n"
	      "\n"
	      "  --runtime R   auto | kernel | bpf (default auto, as collect chooses)\n"
	      "  --loader L    on the bpf runtime, whose cost: perun (its own loader, the\n"
	      "                default) or stapbpf (what --aggregate and the optimizations\n"
	      "                run on); collect subtracts the one of the loader it ran\n"
	      "  --calls N     traced calls to measure (default 20000)\n"
	      "  --force       measure again even when a calibration is cached\n"
	      "  -q, --quiet   print nothing but errors\n",
	      f);
}

int cmd_calibrate(int argc, char **argv, struct ctx *ctx)
{
	static const struct option longopts[] = {
		{ "runtime", required_argument, NULL, 'r' },
		{ "loader", required_argument, NULL, 'l' },
		{ "calls", required_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'F' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum runtime rt = RUNTIME_AUTO;
	unsigned long calls = CALIBRATION_CALLS;
	int c, force = 0, quiet = 0, r;
	struct calibration cal;
	char *path = NULL, *end;
	const char *loader = "perun";

	(void)ctx;
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (runtime_parse(optarg, &rt) < 0) {
				fprintf(stderr, "perun calibrate: --runtime is auto, kernel or bpf, "
						"not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'l':
			if (strcmp(optarg, "perun") && strcmp(optarg, "stapbpf")) {
				fprintf(stderr, "perun calibrate: --loader is perun or stapbpf, "
						"not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			loader = optarg;
			break;
		case 'n':
			calls = strtoul(optarg, &end, 10);
			if (*end || !*optarg || *optarg == '-' || calls < 100 || calls > 10000000) {
				fprintf(stderr, "perun calibrate: --calls wants 100 to 10000000, "
						"not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'F': force = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return EXIT_OK;
		default:
			fprintf(stderr, "see 'perun calibrate --help'\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "perun calibrate: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	r = calibration_obtain(rt, loader, calls, force, &cal, &path);
	if (r == 1 && !quiet)
		calibration_say(&cal, path);
	if (r == 1) {
		struct json_object *o = calibration_json(&cal);
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	free(path);
	return r == 1 ? EXIT_OK : EXIT_FAIL;
}
