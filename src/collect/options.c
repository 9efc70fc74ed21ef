/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun collect's trace options (thesis Table A.1, and perun's own) into
 * struct collect_opts: what perun collect parses after 'trace', and what
 * perun run makes of a collector's params in local.yml.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/session.h"
#include "plan/strategy.h"
#include "runtime/runtime.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"

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

int collect_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perun collect: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", COLLECT_SYNOPSIS);
	return EXIT_USAGE;
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
	size_t i, n = strlen(s);

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t u = strlen(units[i].unit);
		char num[64];
		double v;

		if (n <= u || n - u >= sizeof(num) || strcmp(s + n - u, units[i].unit))
			continue;
		memcpy(num, s, n - u);
		num[n - u] = '\0';
		/* the number before the unit as typed: no sign, space or hex */
		if (num[0] == '-' || parse_decimal(num, &v) < 0 || !(v > 0) ||
		    v * units[i].scale > 1e18)
			return -1;
		*ns = (uint64_t)(v * units[i].scale + 0.5);
		return *ns ? 0 : -1;
	}
	return -1;
}

/* --- the trace level's options: one callback per option that checks its value --- */

static int engine_cb(const struct popt *p, const char *v)
{
	*(const char **)p->value = v;
	if (!strcmp(v, "ebpf"))
		return popt_error(p, "the ebpf engine is SystemTap's BPF runtime here: "
				     "use '-e stap --runtime bpf'");
	if (strcmp(v, "stap"))
		return popt_error(p, "unknown engine '%s': use stap", v);
	return 0;
}

static int strategy_cb(const struct popt *p, const char *v)
{
	if (!strategy_valid(v))
		return popt_error(p, "unknown strategy '%s': use userspace, all, u_sampled, "
				     "a_sampled or custom",
				  v);
	*(const char **)p->value = v;
	return 0;
}

/* -f, -u, -d: a rule, into the list p->value.  */
static int rule_cb(const struct popt *p, const char *v)
{
	if (check_rule_sampling(v) < 0)
		return popt_error(p, "-%c %s: the sampling after the last '#' is an integer from 1 "
				     "to %d",
				  p->short_name, v, SAMPLING_MAX);
	if (p->short_name == 'd' && check_dyn_line(v) < 0)
		return popt_error(p, "-d %s: the line after the last ':' is an integer from 1 "
				     "to %d",
				  v, INT_MAX);
	strv_push(p->value, v);
	return 0;
}

static int global_sampling_cb(const struct popt *p, const char *v)
{
	if (parse_sampling(v, p->value) < 0)
		return popt_error(p, "-g wants an integer from 1 to %d, not '%s'", SAMPLING_MAX, v);
	return 0;
}

static int timeout_cb(const struct popt *p, const char *v)
{
	double *t = p->value;

	if (parse_decimal(v, t) < 0 || *t <= 0 || *t > TIMEOUT_MAX)
		return popt_error(p, "-t wants a number of seconds above 0 and at most %d, "
				     "not '%s'",
				  TIMEOUT_MAX, v);
	return 0;
}

static int output_handling_cb(const struct popt *p, const char *v)
{
	if (strcmp(v, "default") && strcmp(v, "capture") && strcmp(v, "suppress"))
		return popt_error(p, "-o/--output-handling is default, capture or suppress, not "
				     "'%s'; to write the profile to '%s', put -o before 'trace': "
				     "perun collect -o %s -c CMD trace ...",
				  v, v, v);
	*(const char **)p->value = v;
	return 0;
}

/* -i: what a diagnosis wants, all at once.  */
static int diagnostics_cb(const struct popt *p, const char *v)
{
	struct collect_opts *o = p->value;

	o->diagnostics = o->watchdog = o->verbose_trace = o->zip_temps = 1;
	o->output_handling = "capture";
	return 0;
}

static int runtime_cb(const struct popt *p, const char *v)
{
	if (runtime_parse(v, p->value) < 0)
		return popt_error(p, "--runtime is auto, kernel or bpf, not '%s'", v);
	return 0;
}

static int loader_cb(const struct popt *p, const char *v)
{
	if (strcmp(v, "auto") && strcmp(v, "perun") && strcmp(v, "stapbpf"))
		return popt_error(p, "--loader is auto, perun or stapbpf, not '%s'", v);
	*(const char **)p->value = v;
	return 0;
}

static int transport_cb(const struct popt *p, const char *v)
{
	if (strcmp(v, "record") && strcmp(v, "print"))
		return popt_error(p, "--transport is record or print, not '%s'", v);
	*(const char **)p->value = v;
	return 0;
}

static int buffer_size_cb(const struct popt *p, const char *v)
{
	uint64_t n;

	if (parse_count(v, MAX_BUFFER_SIZE, &n) < 0 || n == 0)
		return popt_error(p, "--buffer-size wants a number of events from 1 to %d, "
				     "not '%s'",
				  MAX_BUFFER_SIZE, v);
	*(size_t *)p->value = (size_t)n;
	return 0;
}

static int max_overhead_cb(const struct popt *p, const char *v)
{
	double *pct = p->value;

	if (parse_percent(v, pct) < 0 || *pct <= 0 || *pct > 10000)
		return popt_error(p, "--max-overhead wants a percentage above 0 and at most 10000, "
				     "not '%s'",
				  v);
	return 0;
}

static int kernel_release_cb(const struct popt *p, const char *v)
{
	if (!*v || strchr(v, '/') || strchr(v, ' '))
		return popt_error(p, "-r wants a kernel release like 6.1.0-56-amd64, not '%s'", v);
	*(const char **)p->value = v;
	return 0;
}

static int min_duration_cb(const struct popt *p, const char *v)
{
	if (parse_duration_ns(v, p->value) < 0)
		return popt_error(p, "--min-duration wants a time like 10us, 2ms or 500ns, "
				     "not '%s'",
				  v);
	return 0;
}

static int pipeline_cb(const struct popt *p, const char *v)
{
	if (!opt_pipeline_valid(v))
		return popt_error(p, "-op is basic, advanced or full, not '%s'", v);
	((struct opt_selection *)p->value)->pipeline = v;
	return 0;
}

/* -on and -off: said by opt_toggle when refused.  */
static int method_on_cb(const struct popt *p, const char *v)
{
	return opt_toggle(p->value, v, 1) < 0 ? -1 : 0;
}

static int method_off_cb(const struct popt *p, const char *v)
{
	return opt_toggle(p->value, v, 0) < 0 ? -1 : 0;
}

/* -oa NAME VALUE: the VALUE is the word after NAME.  */
static int method_arg_cb(const struct popt *p, const char *name, int argc, char **argv)
{
	if (!argc)
		return popt_error(p, "-oa %s: give its value too (-oa NAME VALUE)", name);
	return opt_set(p->value, name, argv[0]) < 0 ? -1 : 1;
}

struct popt *collect_trace_options(struct collect_opts *o, int *help)
{
	struct popt t[] = {
		OPT_GROUP("trace options (thesis Table A.1, and perun's own):"),
		OPT_CALLBACK('e', "engine", &o->engine, "stap",
			     "the collection engine (only stap; see --runtime)", engine_cb),
		OPT_CALLBACK('s', "strategy", &o->strategy, "S",
			     "userspace | all | u_sampled | a_sampled | custom", strategy_cb),
		OPT_CALLBACK('f', "func", &o->funcs, "[lib#]name[#sampling]",
			     "probe a function (repeatable)", rule_cb),
		OPT_CALLBACK('u', "usdt", &o->usdts, "[lib#]name[#sampling]",
			     "probe a USDT probe (repeatable)", rule_cb),
		OPT_CALLBACK('d', "dynamic", &o->dyns, "[lib#]file:line[#sampling]",
			     "probe a source line (repeatable)", rule_cb),
		OPT_CALLBACK('g', "global-sampling", &o->global_sampling, "N",
			     "record one call in N unless a rule says otherwise",
			     global_sampling_cb),
		OPT_SET_INT(0, "with-usdt", &o->with_usdt, 1,
			    "also probe the target's USDT probes (the default)"),
		OPT_SET_INT(0, "no-usdt", &o->with_usdt, 0, "not its USDT probes"),
		OPT_STRING('b', "binary", &o->binary, "PATH",
			   "the binary to probe (default: the command)"),
		OPT_CALLBACK('t', "timeout", &o->timeout, "SECONDS",
			     "terminate the command after SECONDS (with --pid:\n"
			     "detach after SECONDS)",
			     timeout_cb),
		OPT_BOOL('z', "zip-temps", &o->zip_temps,
			 "keep gzipped temp files in the log directory"),
		OPT_BOOL('k', "keep-temps", &o->keep_temps, "do not delete the temp files"),
		OPT_BOOL(0, "verbose-trace", &o->verbose_trace,
			 "keep the raw stream beside the profile (FILE.raw)"),
		OPT_ALIAS("vt", "verbose-trace"),
		OPT_BOOL('q', "quiet", &o->quiet, "fewer messages"),
		OPT_SET_INT(0, "no-progress", &o->no_progress, 1,
			    "no progress line on the terminal while tracing"),
		OPT_BOOL('w', "watchdog", &o->watchdog,
			 "log every step of the collection to the temp dir"),
		OPT_CALLBACK('o', "output-handling", &o->output_handling, "M",
			     "default | capture | suppress the command's output",
			     output_handling_cb),
		OPT_CALLBACK('i', "diagnostics", o, NULL,
			     "watchdog, verbose trace, capture and zip temps", diagnostics_cb),
		OPT_BOOL(0, "stap-cache-off", &o->cache_off,
			 "compile afresh and do not use the module cache"),
		OPT_ALIAS("sc", "stap-cache-off"),
		OPT_CALLBACK(0, "runtime", &o->runtime, "R",
			     "auto | kernel | bpf (auto: kernel when a build tree\n"
			     "for the running kernel exists, else bpf)",
			     runtime_cb),
		OPT_CALLBACK(0, "loader", &o->loader, "L",
			     "the bpf runtime's loader: auto (perun's own, with\n"
			     "uprobe_multi links bound to the traced process and a\n"
			     "ring buffer drained while it runs, where the kernel\n"
			     "and the trace allow; else stapbpf) | perun | stapbpf",
			     loader_cb),
		OPT_STRING(0, "include", &o->include, "REGEX",
			   "probe only functions whose name matches (PCRE2)"),
		OPT_STRING(0, "exclude", &o->exclude, "REGEX",
			   "never probe functions whose name matches"),
		OPT_BOOL(0, "aggregate", &o->aggregate,
			 "per-function summaries instead of one record per call"),
		OPT_BOOL(0, "per-call", &o->per_call,
			 "one object per call, not columns (perun show --expand)"),
		OPT_BOOL(0, "entry-only", &o->entry_only,
			 "entry probes only: call counts, no durations (for\n"
			 "programs that throw C++ exceptions or longjmp)"),
		OPT_BOOL(0, "metrics", &o->metrics,
			 "print and record PL, PLR, RDV, PS, CPT, PRT, PT"),
		OPT_BOOL(0, "script-only", &o->script_only,
			 "print the generated SystemTap script and stop"),
		OPT_BOOL(0, "one-module", &o->one_module,
			 "one module per binary probing every function, the\n"
			 "selection filled in at start: another -f set or\n"
			 "optimization runs without stap"),
		OPT_CALLBACK(0, "transport", &o->transport, "T",
			     "record (keep events in a map, write them at the end;\n"
			     "the default) or print (one printf per event)",
			     transport_cb),
		OPT_CALLBACK(0, "buffer-size", &o->buffer_size, "N",
			     "events the recorder keeps (default 1000000, about\n"
			     "70 bytes of kernel memory each); the rest is counted\n"
			     "as lost, per function",
			     buffer_size_cb),
		OPT_BOOL(0, "strict", &o->strict, "any lost event makes the collect fail (exit 1)"),
		OPT_CALLBACK(0, "max-overhead", &o->max_overhead, "PCT",
			     "disarm the hottest probes while the recorded calls\n"
			     "slow the run by more than PCT % (calibrated cost)",
			     max_overhead_cb),
		OPT_CALLBACK(0, "min-duration", &o->min_duration_ns, "TIME",
			     "keep only calls of TIME or longer (10us, 2ms); the\n"
			     "faster ones are counted per function",
			     min_duration_cb),
		/* listed with collect's options, taken here too */
		OPT_BOOL(0, "follow", &o->follow, NULL),
		OPT_BOOL(0, "compile-only", &o->compile_only,
			 "build the module into the cache and stop"),
		OPT_CALLBACK('r', "kernel-release", &o->kernel_release, "R",
			     "build the kernel module for release R (a build host\n"
			     "serving hosts that run R; implies --runtime kernel)",
			     kernel_release_cb),
		OPT_SET_INT(0, "calibrate", &o->calibrate, 1,
			    "calibrated amounts in the summaries: measure the\n"
			    "probe cost first when none is cached (default: use\n"
			    "the one 'perun calibrate' cached, if any)"),
		OPT_SET_INT(0, "no-calibrate", &o->calibrate, 0, "no calibrated amounts"),
		OPT_GROUP("optimization options (thesis Table A.2):"),
		OPT_CALLBACK(0, "optimization-pipeline", &o->opt, "P", "basic | advanced | full",
			     pipeline_cb),
		OPT_ALIAS("op", "optimization-pipeline"),
		OPT_CALLBACK(0, "optimization-on", &o->opt, "NAME",
			     "switch a method on: diff-tracing, cg-shaping,\n"
			     "baseline-static, baseline-dynamic, dynamic-sampling,\n"
			     "timed-sampling, dynamic-probing; one whose requirement\n"
			     "(a call graph, stats of an earlier collect, git\n"
			     "history) is missing here switches itself off with a\n"
			     "notice",
			     method_on_cb),
		OPT_ALIAS("on", "optimization-on"),
		OPT_CALLBACK(0, "optimization-off", &o->opt, "NAME", "switch a method off",
			     method_off_cb),
		OPT_ALIAS("off", "optimization-off"),
		OPT_CALLBACK_MORE(0, "optimization-args", &o->opt, "NAME VALUE",
				  "a method's parameter (Table A.4), e.g.\n"
				  "-oa probing-threshold 1000, -oa timed-sample-freq 10",
				  method_arg_cb),
		OPT_ALIAS("oa", "optimization-args"),
		OPT_BOOL(0, "optimization-cache-off", &o->opt.cache_off,
			 "ignore cached optimization data"),
		OPT_BOOL(0, "optimization-reset-cache", &o->opt.reset_cache,
			 "remove the cached optimization data first"),
		/* perun collect prints the help, with its own options */
		OPT_BOOL('h', "help", help, NULL),
		OPT_END(),
	};
	struct popt *copy = xmalloc(sizeof(t));

	memcpy(copy, t, sizeof(t));
	return copy;
}

int collect_parse_trace(int argc, char **argv, struct collect_opts *o)
{
	int help = 0, n;
	struct popt *opts = collect_trace_options(o, &help);

	n = parse_options(argc, argv, "collect", COLLECT_SYNOPSIS, opts);
	free(opts);
	if (n < 0)
		return EXIT_USAGE;
	if (help)
		return 1;
	if (n > 0)
		return collect_usage_error("unexpected argument '%s' after the trace options", argv[0]);
	if (o->compile_only && o->cache_off)
		return collect_usage_error("%s", "--compile-only fills the module cache: not with -sc");
	if (o->kernel_release) {
		if (o->runtime == RUNTIME_BPF)
			return collect_usage_error("%s", "-r builds kernel modules: not with --runtime bpf");
		o->runtime = RUNTIME_KERNEL;
	}
	return 0;
}
