/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect's trace options (collect/options.c): the one-dash names of several
 * letters, -oa NAME VALUE, --help for the caller, and the checks' exit code.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/session.h"
#include "util/log.h"
#include "util/parse-options.h"
#include "tap.h"

/* collect_parse_trace on args into a fresh o, stderr to /dev/null when
 * silent.  */
static int parse(struct collect_opts *o, char **args, int silent)
{
	int argc = 0, r, saved = -1;

	while (args[argc])
		argc++;
	collect_opts_init(o);
	if (silent) {
		fflush(stderr);
		saved = dup(2);
		if (!freopen("/dev/null", "w", stderr))
			return -99;
	}
	r = collect_parse_trace(argc, args, o);
	if (silent) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	return r;
}

/* One bad command line: EXIT_USAGE.  */
static void refused(char **args, const char *what)
{
	struct collect_opts o;

	is_int(parse(&o, args, 1), EXIT_USAGE, "%s", what);
	collect_opts_release(&o);
}

int main(void)
{
	struct collect_opts o;
	char *a1[] = { "trace", "-vt", "-sc", "-s", "custom", "-f", "main", "-op", "full",
		       "-on", "dynamic-probing", "-off", "cg-shaping", "-oa", "probing-threshold",
		       "1000", "--func=lib#g#4", "-t", "2.5", NULL };
	char *a2[] = { "trace", "-i", "-g", "7", "--buffer-size", "10", "--no-usdt", NULL };
	char *a3[] = { "trace", "-r", "6.1.0-56-amd64", NULL };
	char *h1[] = { "trace", "-q", "--help", NULL };
	char *h2[] = { "trace", "-h", NULL };
	char *b1[] = { "trace", "-oa", "probing-threshold", NULL };
	char *b2[] = { "trace", "-s", "custom", "stray", NULL };
	char *b3[] = { "trace", "-s", "everything", NULL };
	char *b4[] = { "trace", "-x", NULL };
	char *b5[] = { "trace", "--compile-only", "-sc", NULL };
	char *b6[] = { "trace", "-r", "6.1.0", "--runtime", "bpf", NULL };
	char *b7[] = { "trace", "-f", "main#0", NULL };
	char *b8[] = { "trace", "-op", NULL };
	char *b9[] = { "trace", "-on", "nosuch", NULL };
	char *b10[] = { "trace", "-o", "out.perf", NULL };
	int help;
	struct popt *t;
	FILE *f;
	char buf[16384];
	size_t n;

	is_int(parse(&o, a1, 0), 0, "a trace command line with every kind of option");
	ok(o.verbose_trace && o.cache_off, "-vt and -sc");
	is_str(o.strategy, "custom", "-s");
	ok(o.funcs.n == 2 && !strcmp(o.funcs.v[0], "main") && !strcmp(o.funcs.v[1], "lib#g#4"),
	   "-f twice, short and long");
	is_str(o.opt.pipeline, "full", "-op");
	ok(o.opt.ntoggles == 2 && o.opt.toggles[0].on && !o.opt.toggles[1].on, "-on, then -off");
	ok(o.opt.values && o.opt.values[opt_param_find("probing-threshold")] &&
		   !strcmp(o.opt.values[opt_param_find("probing-threshold")], "1000"),
	   "-oa NAME VALUE");
	is_int(o.opt.v.probing_threshold, 1000, "filled into the typed parameters");
	ok(o.timeout == 2.5, "-t");
	collect_opts_release(&o);

	is_int(parse(&o, a2, 0), 0, "-i, -g, --buffer-size, --no-usdt");
	ok(o.diagnostics && o.watchdog && o.verbose_trace && o.zip_temps &&
		   !strcmp(o.output_handling, "capture"),
	   "-i is watchdog, verbose trace, capture and zip temps");
	ok(o.global_sampling == 7 && o.buffer_size == 10 && !o.with_usdt, "their values");
	collect_opts_release(&o);

	is_int(parse(&o, a3, 0), 0, "-r");
	ok(o.runtime == RUNTIME_KERNEL, "-r implies the kernel runtime");
	collect_opts_release(&o);

	is_int(parse(&o, h1, 0), 1, "--help: 1, for the caller to print collect's help");
	collect_opts_release(&o);
	is_int(parse(&o, h2, 0), 1, "-h too");
	collect_opts_release(&o);

	refused(b1, "-oa NAME without its VALUE");
	refused(b2, "a word after the trace options");
	refused(b3, "an unknown strategy");
	refused(b4, "an unknown option");
	refused(b5, "--compile-only with -sc");
	refused(b6, "-r with --runtime bpf");
	refused(b7, "a sampling of 0");
	refused(b8, "-op without its value");
	refused(b9, "-on an unknown method");
	refused(b10, "-o FILE after trace (the profile's -o is collect's)");

	/* the table collect --help lists */
	collect_opts_init(&o);
	t = collect_trace_options(&o, &help);
	f = tmpfile();
	usage_with_options(f, "", t);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	ok(strstr(buf, "trace options (thesis Table A.1") != NULL, "the trace options' heading");
	ok(strstr(buf, "\n  -vt, --verbose-trace ") && strstr(buf, "\n  -sc, --stap-cache-off ") &&
		   strstr(buf, "\n  -off, --optimization-off NAME\n"),
	   "the one-dash names beside the long ones");
	ok(strstr(buf, "\n  -oa, --optimization-args NAME VALUE\n") != NULL, "-oa's two words");
	ok(!strstr(buf, "--help"), "no --help row");
	free(t);
	collect_opts_release(&o);

	return tap_done();
}
