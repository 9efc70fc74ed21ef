/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun calibrate [--runtime R] [--loader L] [--calls N] [--force] [-q]: measures the
 * probe effect on this host and runtime and caches it (src/collect/calibration.h);
 * collect uses it for calibrated amounts in the summaries.  */
#include "config.h"

#define PR_FMT "perun"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/calibration.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"

static const char usage[] =
	"usage: perun calibrate [--runtime R] [--loader L] [--calls N] [--force] [-q]\n"
	"\n"
	"Measures what an empty traced call costs on this host: perun traces\n"
	"perun-calib, which calls an empty function and an untraced twin N times each,\n"
	"and caches the result per runtime and kernel release in the module cache\n"
	"directory.  collect subtracts it for the calibrated_* summary fields.\n"
	"On the bpf runtime --loader says whose cost: perun (its own loader, the\n"
	"default) or stapbpf (what --aggregate and the optimizations run on);\n"
	"collect subtracts the one of the loader it ran.\n";

/* --runtime R into the enum runtime o->value.  */
static int parse_runtime(const struct popt *o, const char *v)
{
	if (runtime_parse(v, o->value) < 0)
		return popt_error(o, "--runtime is auto, kernel or bpf, not '%s'", v);
	return 0;
}

/* --loader L into the const char * o->value.  */
static int parse_loader(const struct popt *o, const char *v)
{
	if (strcmp(v, "perun") && strcmp(v, "stapbpf"))
		return popt_error(o, "--loader is perun or stapbpf, not '%s'", v);
	*(const char **)o->value = v;
	return 0;
}

/* --calls N into the unsigned long o->value.  */
static int parse_calls(const struct popt *o, const char *v)
{
	uint64_t calls;

	if (parse_count(v, 10000000, &calls) < 0 || calls < 100)
		return popt_error(o, "--calls wants 100 to 10000000, not '%s'", v);
	*(unsigned long *)o->value = (unsigned long)calls;
	return 0;
}

int cmd_calibrate(int argc, char **argv, struct ctx *ctx)
{
	enum runtime rt = RUNTIME_AUTO;
	unsigned long calls = CALIBRATION_CALLS;
	int force = 0, quiet = 0, r, n;
	struct calibration cal;
	char *path = NULL;
	const char *loader = "perun";
	struct popt opts[] = {
		OPT_CALLBACK(0, "runtime", &rt, "R",
			     "auto, kernel or bpf (default auto, as collect chooses)",
			     parse_runtime),
		OPT_CALLBACK(0, "loader", &loader, "L",
			     "on the bpf runtime, whose cost: perun (default) or stapbpf",
			     parse_loader),
		OPT_CALLBACK(0, "calls", &calls, "N", "traced calls to measure (default 20000)",
			     parse_calls),
		OPT_BOOL(0, "force", &force, "measure again even when a calibration is cached"),
		OPT_BOOL('q', "quiet", &quiet, "print nothing but errors"),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "calibrate", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n) {
		fprintf(stderr, "perun calibrate: unexpected argument '%s'\n", argv[0]);
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
