/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun collect's trace options (thesis Table A.1, and perun's own) into
 * struct collect_opts: what perun collect parses after 'trace', and what
 * perun run makes of a collector's params in local.yml.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/session.h"
#include "trace/runtime.h"
#include "trace/strategy.h"
#include "util/log.h"

void collect_opts_init(struct collect_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->engine = "stap";
	o->strategy = "userspace";
	o->output_handling = "default";
	o->with_usdt = 1;
	o->buffer_size = DEFAULT_BUFFER_SIZE;
	o->calibrate = -1;
	opt_selection_init(&o->opt);
}

void collect_opts_release(struct collect_opts *o)
{
	strv_clear(&o->funcs);
	strv_clear(&o->usdts);
	strv_clear(&o->dyns);
	opt_selection_release(&o->opt);
}

enum {
	OPT_WITH_USDT = 256, OPT_NO_USDT, OPT_RUNTIME, OPT_INCLUDE, OPT_EXCLUDE, OPT_AGGREGATE,
	OPT_METRICS, OPT_VERBOSE_TRACE, OPT_CACHE_OFF, OPT_SCRIPT_ONLY, OPT_TRANSPORT,
	OPT_LOADER, OPT_FOLLOW, OPT_MIN_DURATION, OPT_BUFFER_SIZE, OPT_STRICT, OPT_COMPILE_ONLY, OPT_ENTRY_ONLY, OPT_CALIBRATE,
	OPT_NO_CALIBRATE, OPT_PER_CALL, OPT_OPT_PIPELINE, OPT_OPT_ON, OPT_OPT_OFF, OPT_OPT_ARGS, OPT_OPT_CACHE_OFF,
	OPT_OPT_RESET_CACHE, OPT_ONE_MODULE, OPT_MAX_OVERHEAD,
};

int collect_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perun collect: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee 'perun collect --help'\n");
	return EXIT_USAGE;
}

/* -vt and -sc are Perun's two-letter short options; getopt wants them long.  */
static void rewrite_two_letter(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-vt"))
			argv[i] = (char *)"--verbose-trace";
		else if (!strcmp(argv[i], "-sc"))
			argv[i] = (char *)"--stap-cache-off";
		else if (!strcmp(argv[i], "-op"))
			argv[i] = (char *)"--optimization-pipeline";
		else if (!strcmp(argv[i], "-on"))
			argv[i] = (char *)"--optimization-on";
		else if (!strcmp(argv[i], "-off"))
			argv[i] = (char *)"--optimization-off";
		else if (!strcmp(argv[i], "-oa"))
			argv[i] = (char *)"--optimization-args";
		else if (!strcmp(argv[i], "--"))
			break;
	}
}

/* Largest sampling period: the generated BPF compares against a 32-bit immediate.  */
#define SAMPLING_MAX 2147483647
/* Longest -t, in seconds (a year): a bound that stays exact as nanoseconds.  */
#define TIMEOUT_MAX 31536000

/* Parses a sampling period, 1..SAMPLING_MAX, digits only.  */
static int parse_sampling(const char *s, unsigned *out)
{
	unsigned long long v = 0;
	const char *p;

	if (!*s)
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
		if (v > SAMPLING_MAX)
			return -1;
	}
	if (!v)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* A rule [lib#]name[#sampling]: when its last '#' part is all digits (a sampling, as
 * the strategy reads it), that number must be in range.  */
static int check_rule_sampling(const char *rule)
{
	const char *hash = strrchr(rule, '#'), *p;
	unsigned v;

	if (!hash || !hash[1])
		return 0;
	for (p = hash + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return parse_sampling(hash + 1, &v);
}

/* -d [lib#]file:line[#sampling]: -1 when line is all digits but not 1 to
 * INT_MAX (atoi made 4294967297 line 1 and 99999999999999999999 line -1);
 * other malformed rules are said when the plan is made.  */
static int check_dyn_line(const char *rule)
{
	char *lib, *loc, *colon, *end;
	unsigned sampling;
	unsigned long v;
	int ret = 0;

	if (strategy_split_rule(rule, &lib, &loc, &sampling) < 0)
		return 0;
	colon = strrchr(loc, ':');
	if (colon && colon[1] >= '0' && colon[1] <= '9' &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		errno = 0;
		v = strtoul(colon + 1, &end, 10);
		if (errno || v < 1 || v > INT_MAX)
			ret = -1;
	}
	free(lib);
	free(loc);
	return ret;
}

/* "10us", "2ms", "1.5s", "500ns" (or a bare number of ns) into *ns.  */
static int parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 } };
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0) || *s == '-')
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			if (v * units[i].scale > 1e18)
				return -1;
			*ns = (uint64_t)(v * units[i].scale + 0.5);
			return *ns ? 0 : -1;
		}
	}
	return -1;
}

int collect_parse_trace(int argc, char **argv, struct collect_opts *o)
{
	static const struct option longopts[] = {
		{ "engine", required_argument, NULL, 'e' },
		{ "strategy", required_argument, NULL, 's' },
		{ "func", required_argument, NULL, 'f' },
		{ "usdt", required_argument, NULL, 'u' },
		{ "dynamic", required_argument, NULL, 'd' },
		{ "global-sampling", required_argument, NULL, 'g' },
		{ "with-usdt", no_argument, NULL, OPT_WITH_USDT },
		{ "no-usdt", no_argument, NULL, OPT_NO_USDT },
		{ "binary", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 't' },
		{ "zip-temps", no_argument, NULL, 'z' },
		{ "keep-temps", no_argument, NULL, 'k' },
		{ "verbose-trace", no_argument, NULL, OPT_VERBOSE_TRACE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "watchdog", no_argument, NULL, 'w' },
		{ "output-handling", required_argument, NULL, 'o' },
		{ "diagnostics", no_argument, NULL, 'i' },
		{ "stap-cache-off", no_argument, NULL, OPT_CACHE_OFF },
		{ "runtime", required_argument, NULL, OPT_RUNTIME },
		{ "include", required_argument, NULL, OPT_INCLUDE },
		{ "exclude", required_argument, NULL, OPT_EXCLUDE },
		{ "aggregate", no_argument, NULL, OPT_AGGREGATE },
		{ "one-module", no_argument, NULL, OPT_ONE_MODULE },
		{ "max-overhead", required_argument, NULL, OPT_MAX_OVERHEAD },
		{ "per-call", no_argument, NULL, OPT_PER_CALL },
		{ "metrics", no_argument, NULL, OPT_METRICS },
		{ "script-only", no_argument, NULL, OPT_SCRIPT_ONLY },
		{ "entry-only", no_argument, NULL, OPT_ENTRY_ONLY },
		{ "transport", required_argument, NULL, OPT_TRANSPORT },
		{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "compile-only", no_argument, NULL, OPT_COMPILE_ONLY },
		{ "kernel-release", required_argument, NULL, 'r' },
		{ "calibrate", no_argument, NULL, OPT_CALIBRATE },
		{ "loader", required_argument, NULL, OPT_LOADER },
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "min-duration", required_argument, NULL, OPT_MIN_DURATION },
		{ "no-calibrate", no_argument, NULL, OPT_NO_CALIBRATE },
		{ "optimization-pipeline", required_argument, NULL, OPT_OPT_PIPELINE },
		{ "optimization-on", required_argument, NULL, OPT_OPT_ON },
		{ "optimization-off", required_argument, NULL, OPT_OPT_OFF },
		{ "optimization-args", required_argument, NULL, OPT_OPT_ARGS },
		{ "optimization-cache-off", no_argument, NULL, OPT_OPT_CACHE_OFF },
		{ "optimization-reset-cache", no_argument, NULL, OPT_OPT_RESET_CACHE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end;

	rewrite_two_letter(argc, argv);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:s:f:u:d:g:b:t:zkqwo:ihr:", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->engine = optarg;
			if (!strcmp(optarg, "ebpf"))
				return collect_usage_error("the ebpf engine is SystemTap's BPF runtime here: "
						   "use '-e stap --runtime bpf'");
			if (strcmp(optarg, "stap"))
				return collect_usage_error("unknown engine '%s': use stap", optarg);
			break;
		case 's':
			if (!strategy_valid(optarg))
				return collect_usage_error("unknown strategy '%s': use userspace, all, "
						   "u_sampled, a_sampled or custom",
						   optarg);
			o->strategy = optarg;
			break;
		case 'f':
		case 'u':
		case 'd':
			if (check_rule_sampling(optarg) < 0)
				return collect_usage_error("-%c %s: the sampling after the last '#' is an "
						   "integer from 1 to %d",
						   c, optarg, SAMPLING_MAX);
			if (c == 'd' && check_dyn_line(optarg) < 0)
				return collect_usage_error("-d %s: the line after the last ':' is an integer "
						   "from 1 to %d",
						   optarg, INT_MAX);
			strv_push(c == 'f' ? &o->funcs : c == 'u' ? &o->usdts : &o->dyns, optarg);
			break;
		case 'g':
			if (parse_sampling(optarg, &o->global_sampling) < 0)
				return collect_usage_error("-g wants an integer from 1 to %d, not '%s'",
						   SAMPLING_MAX, optarg);
			break;
		case OPT_WITH_USDT: o->with_usdt = 1; break;
		case OPT_NO_USDT: o->with_usdt = 0; break;
		case 'b': o->binary = optarg; break;
		case 't':
			errno = 0;
			o->timeout = strtod(optarg, &end);
			if (*end || !*optarg || errno || !isfinite(o->timeout) || o->timeout <= 0 ||
			    o->timeout > TIMEOUT_MAX)
				return collect_usage_error("-t wants a number of seconds above 0 and at most "
						   "%d, not '%s'",
						   TIMEOUT_MAX, optarg);
			break;
		case 'z': o->zip_temps = 1; break;
		case 'k': o->keep_temps = 1; break;
		case OPT_VERBOSE_TRACE: o->verbose_trace = 1; break;
		case 'q': o->quiet = 1; break;
		case 'w': o->watchdog = 1; break;
		case 'o':
			if (strcmp(optarg, "default") && strcmp(optarg, "capture") &&
			    strcmp(optarg, "suppress"))
				return collect_usage_error("-o/--output-handling is default, capture or "
						   "suppress, not '%s'; to write the profile to '%s', "
						   "put -o before 'trace': perun collect -o %s -c CMD "
						   "trace ...",
						   optarg, optarg, optarg);
			o->output_handling = optarg;
			break;
		case 'i':
			o->diagnostics = o->watchdog = o->verbose_trace = o->zip_temps = 1;
			o->output_handling = "capture";
			break;
		case OPT_CACHE_OFF: o->cache_off = 1; break;
		case OPT_RUNTIME:
			if (runtime_parse(optarg, &o->runtime) < 0)
				return collect_usage_error("--runtime is auto, kernel or bpf, not '%s'", optarg);
			break;
		case OPT_INCLUDE: o->include = optarg; break;
		case OPT_EXCLUDE: o->exclude = optarg; break;
		case OPT_AGGREGATE: o->aggregate = 1; break;
		case OPT_ONE_MODULE: o->one_module = 1; break;
		case OPT_MAX_OVERHEAD:
			errno = 0;
			o->max_overhead = strtod(optarg, &end);
			if (*end == '%')
				end++;
			if (*end || !*optarg || errno || !isfinite(o->max_overhead) ||
			    o->max_overhead <= 0 || o->max_overhead > 10000)
				return collect_usage_error("--max-overhead wants a percentage above 0 and at "
						   "most 10000, not '%s'",
						   optarg);
			break;
		case OPT_PER_CALL: o->per_call = 1; break;	/* the object-per-call form */
		case OPT_METRICS: o->metrics = 1; break;
		case OPT_SCRIPT_ONLY: o->script_only = 1; break;
		case OPT_ENTRY_ONLY: o->entry_only = 1; break;
		case OPT_TRANSPORT:
			if (strcmp(optarg, "record") && strcmp(optarg, "print"))
				return collect_usage_error("--transport is record or print, not '%s'", optarg);
			o->transport = optarg;
			break;
		case OPT_BUFFER_SIZE: {
			unsigned long long v;
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-' || v == 0 ||
			    v > MAX_BUFFER_SIZE)
				return collect_usage_error("--buffer-size wants a number of events from 1 to "
						   "%d, not '%s'",
						   MAX_BUFFER_SIZE, optarg);
			o->buffer_size = (size_t)v;
			break;
		}
		case OPT_STRICT: o->strict = 1; break;
		case OPT_COMPILE_ONLY: o->compile_only = 1; break;
		case 'r':
			if (!*optarg || strchr(optarg, '/') || strchr(optarg, ' '))
				return collect_usage_error("-r wants a kernel release like 6.1.0-56-amd64, "
						   "not '%s'",
						   optarg);
			o->kernel_release = optarg;
			break;
		case OPT_CALIBRATE: o->calibrate = 1; break;
		case OPT_FOLLOW: o->follow = 1; break;
		case OPT_MIN_DURATION:
			if (parse_duration_ns(optarg, &o->min_duration_ns) < 0)
				return collect_usage_error("--min-duration wants a time like 10us, 2ms or 500ns, "
						   "not '%s'", optarg);
			break;
		case OPT_LOADER:
			if (strcmp(optarg, "auto") && strcmp(optarg, "perun") && strcmp(optarg, "stapbpf"))
				return collect_usage_error("--loader is auto, perun or stapbpf, not '%s'", optarg);
			o->loader = optarg;
			break;
		case OPT_NO_CALIBRATE: o->calibrate = 0; break;
		case OPT_OPT_PIPELINE:
			if (!opt_pipeline_valid(optarg))
				return collect_usage_error("-op is basic, advanced or full, not '%s'", optarg);
			o->opt.pipeline = optarg;
			break;
		case OPT_OPT_ON:
		case OPT_OPT_OFF:
			if (opt_toggle(&o->opt, optarg, c == OPT_OPT_ON) < 0)
				return EXIT_USAGE;
			break;
		case OPT_OPT_ARGS:
			/* two arguments: NAME VALUE */
			if (optind >= argc)
				return collect_usage_error("-oa %s: give its value too (-oa NAME VALUE)", optarg);
			if (opt_set(&o->opt, optarg, argv[optind]) < 0)
				return EXIT_USAGE;
			optind++;
			break;
		case OPT_OPT_CACHE_OFF: o->opt.cache_off = 1; break;
		case OPT_OPT_RESET_CACHE: o->opt.reset_cache = 1; break;
		case 'h': return 1;
		default: return collect_usage_error("%s", "bad trace option");
		}
	}
	if (optind < argc)
		return collect_usage_error("unexpected argument '%s' after the trace options", argv[optind]);
	if (o->compile_only && o->cache_off)
		return collect_usage_error("%s", "--compile-only fills the module cache: not with -sc");
	if (o->kernel_release) {
		if (o->runtime == RUNTIME_BPF)
			return collect_usage_error("%s", "-r builds kernel modules: not with --runtime bpf");
		o->runtime = RUNTIME_KERNEL;
	}
	return 0;
}

