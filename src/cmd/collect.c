/* perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/session.h"
#include "store/output.h"
#include "trace/driver.h"
#include "trace/runtime.h"
#include "trace/strategy.h"
#include "util/log.h"


void usage_collect(FILE *f)
{
	fputs("usage: perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]\n"
	      "   or: perun collect --pid PID [-o FILE] trace [options]\n"
	      "\n"
	      "collect options:\n"
	      "  -c, --cmd CMD            the command to profile\n"
	      "  -a, --args ARGS          its arguments (split like a shell, no expansion)\n"
	      "  -w, --workload WORKLOAD  its input, appended after ARGS\n"
	      "  -o, --output FILE        write the profile to FILE (default: .perun/jobs/)\n"
	      "  -p, --pid PID            attach to a running process and all its threads;\n"
	      "                           the trace ends on Ctrl-C, after -t SECONDS, or when\n"
	      "                           the process exits; perun never signals it\n"
	      "      --follow             trace the processes the command (or PID) starts,\n"
	      "                           and theirs, each from when its fork is seen\n"
	      "      --min-duration TIME  keep only calls of TIME or longer (10us, 2ms); the\n"
	      "                           faster ones are counted per function\n"
	      "\n"
	      "trace options (thesis Table A.1, and perun's own):\n"
	      "  -e, --engine stap        the collection engine (only stap; see --runtime)\n"
	      "  -s, --strategy S         userspace | all | u_sampled | a_sampled | custom\n"
	      "  -f, --func [lib#]name[#sampling]     probe a function (repeatable)\n"
	      "  -u, --usdt [lib#]name[#sampling]     probe a USDT probe (repeatable)\n"
	      "  -d, --dynamic [lib#]file:line[#sampling]  probe a source line\n"
	      "  -g, --global-sampling N  record one call in N unless a rule says otherwise\n"
	      "      --with-usdt, --no-usdt  also probe the target's USDT probes (default on)\n"
	      "  -b, --binary PATH        the binary to probe (default: the command)\n"
	      "  -t, --timeout SECONDS    terminate the command after SECONDS (with --pid:\n"
	      "                           detach after SECONDS)\n"
	      "  -z, --zip-temps          keep gzipped temp files in the log directory\n"
	      "  -k, --keep-temps         do not delete the temp files\n"
	      "  -vt, --verbose-trace     keep the raw stream beside the profile (FILE.raw)\n"
	      "  -q, --quiet              fewer messages\n"
	      "  -w, --watchdog           log every step of the collection to the temp dir\n"
	      "  -o, --output-handling M  default | capture | suppress the command's output\n"
	      "  -i, --diagnostics        watchdog, verbose trace, capture and zip temps\n"
	      "  -sc, --stap-cache-off    compile afresh and do not use the module cache\n"
	      "      --runtime R          auto | kernel | bpf (auto: kernel when a build tree\n"
	      "                           for the running kernel exists, else bpf)\n"
	      "      --loader L           the bpf runtime's loader: auto (perun's own, with\n"
	      "                           uprobe_multi links bound to the traced process and a\n"
	      "                           ring buffer drained while it runs, where the kernel\n"
	      "                           and the trace allow; else stapbpf) | perun | stapbpf\n"
	      "      --include REGEX      probe only functions whose name matches (PCRE2)\n"
	      "      --exclude REGEX      never probe functions whose name matches\n"
	      "      --aggregate          per-function summaries instead of one record per call\n"
	      "      --per-call           one object per call, not columns (perun show --expand)\n"
	      "      --entry-only         entry probes only: call counts, no durations (for\n"
	      "                           programs that throw C++ exceptions or longjmp)\n"
	      "      --metrics            print and record PL, PLR, RDV, PS, CPT, PRT, PT\n"
	      "      --script-only        print the generated SystemTap script and stop\n"
	      "      --one-module         one module per binary probing every function, the\n"
	      "                           selection filled in at start: another -f set or\n"
	      "                           optimization runs without stap\n"
	      "      --transport T        record (keep events in a map, write them at the end;\n"
	      "                           the default) or print (one printf per event)\n"
	      "      --buffer-size N      events the recorder keeps (default 1000000, about\n"
	      "                           70 bytes of kernel memory each); the rest is counted\n"
	      "                           as lost, per function\n"
	      "      --strict             any lost event makes the collect fail (exit 1)\n"
	      "      --max-overhead PCT   disarm the hottest probes while the recorded calls\n"
	      "                           slow the run by more than PCT % (calibrated cost)\n"
	      "      --compile-only       build the module into the cache and stop\n"
	      "  -r, --kernel-release R   build the kernel module for release R (a build host\n"
	      "                           serving hosts that run R; implies --runtime kernel)\n"
	      "      --calibrate, --no-calibrate  calibrated amounts in the summaries: measure\n"
	      "                           the probe cost first when none is cached (default:\n"
	      "                           use the one 'perun calibrate' cached, if any)\n"
	      "\n"
	      "optimization options (thesis Table A.2):\n"
	      "  -op, --optimization-pipeline P   basic | advanced | full\n"
	      "  -on, --optimization-on NAME      switch a method on: diff-tracing, cg-shaping,\n"
	      "                           baseline-static, baseline-dynamic, dynamic-sampling,\n"
	      "                           timed-sampling, dynamic-probing\n"
	      "  -off, --optimization-off NAME    switch a method off\n"
	      "  -oa, --optimization-args NAME VALUE  a method's parameter (Table A.4), e.g.\n"
	      "                           -oa probing-threshold 1000, -oa timed-sample-freq 10\n"
	      "      --optimization-cache-off     ignore cached optimization data\n"
	      "      --optimization-reset-cache   remove the cached optimization data first\n"
	      "  A method whose requirement is missing here (call graph, stats of an earlier\n"
	      "  collect, git history) switches itself off with a notice.\n"
	      "\n"
	      "The profile's amounts are nanoseconds (header.units).  Exit status: 0 when the\n"
	      "profile was written and is complete, 1 on failure, 2 on a usage error, 3 when\n"
	      "the profile was written but events were lost (it says how many, per function),\n"
	      "128+N when the command was killed by signal N (the profile is still written).\n",
	      f);
}

enum {
	OPT_WITH_USDT = 256, OPT_NO_USDT, OPT_RUNTIME, OPT_INCLUDE, OPT_EXCLUDE, OPT_AGGREGATE,
	OPT_METRICS, OPT_VERBOSE_TRACE, OPT_CACHE_OFF, OPT_SCRIPT_ONLY, OPT_TRANSPORT,
	OPT_LOADER, OPT_FOLLOW, OPT_MIN_DURATION, OPT_BUFFER_SIZE, OPT_STRICT, OPT_COMPILE_ONLY, OPT_ENTRY_ONLY, OPT_CALIBRATE,
	OPT_NO_CALIBRATE, OPT_PER_CALL, OPT_OPT_PIPELINE, OPT_OPT_ON, OPT_OPT_OFF, OPT_OPT_ARGS, OPT_OPT_CACHE_OFF,
	OPT_OPT_RESET_CACHE, OPT_ONE_MODULE, OPT_MAX_OVERHEAD,
};

/* Default events the recorder keeps, and the most it may be asked for.  */
#define DEFAULT_BUFFER_SIZE 1000000
#define MAX_BUFFER_SIZE 100000000

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
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

static int parse_trace_opts(int argc, char **argv, struct collect_opts *o)
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
				return usage_error("the ebpf engine is SystemTap's BPF runtime here: "
						   "use '-e stap --runtime bpf'");
			if (strcmp(optarg, "stap"))
				return usage_error("unknown engine '%s': use stap", optarg);
			break;
		case 's':
			if (!strategy_valid(optarg))
				return usage_error("unknown strategy '%s': use userspace, all, "
						   "u_sampled, a_sampled or custom",
						   optarg);
			o->strategy = optarg;
			break;
		case 'f':
		case 'u':
		case 'd':
			if (check_rule_sampling(optarg) < 0)
				return usage_error("-%c %s: the sampling after the last '#' is an "
						   "integer from 1 to %d",
						   c, optarg, SAMPLING_MAX);
			strv_push(c == 'f' ? &o->funcs : c == 'u' ? &o->usdts : &o->dyns, optarg);
			break;
		case 'g':
			if (parse_sampling(optarg, &o->global_sampling) < 0)
				return usage_error("-g wants an integer from 1 to %d, not '%s'",
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
				return usage_error("-t wants a number of seconds above 0 and at most "
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
				return usage_error("-o/--output-handling is default, capture or "
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
				return usage_error("--runtime is auto, kernel or bpf, not '%s'", optarg);
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
				return usage_error("--max-overhead wants a percentage above 0 and at "
						   "most 10000, not '%s'",
						   optarg);
			break;
		case OPT_PER_CALL: o->per_call = 1; break;	/* the object-per-call form */
		case OPT_METRICS: o->metrics = 1; break;
		case OPT_SCRIPT_ONLY: o->script_only = 1; break;
		case OPT_ENTRY_ONLY: o->entry_only = 1; break;
		case OPT_TRANSPORT:
			if (strcmp(optarg, "record") && strcmp(optarg, "print"))
				return usage_error("--transport is record or print, not '%s'", optarg);
			o->transport = optarg;
			break;
		case OPT_BUFFER_SIZE: {
			unsigned long long v;
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-' || v == 0 ||
			    v > MAX_BUFFER_SIZE)
				return usage_error("--buffer-size wants a number of events from 1 to "
						   "%d, not '%s'",
						   MAX_BUFFER_SIZE, optarg);
			o->buffer_size = (size_t)v;
			break;
		}
		case OPT_STRICT: o->strict = 1; break;
		case OPT_COMPILE_ONLY: o->compile_only = 1; break;
		case 'r':
			if (!*optarg || strchr(optarg, '/') || strchr(optarg, ' '))
				return usage_error("-r wants a kernel release like 6.1.0-56-amd64, "
						   "not '%s'",
						   optarg);
			o->kernel_release = optarg;
			break;
		case OPT_CALIBRATE: o->calibrate = 1; break;
		case OPT_FOLLOW: o->follow = 1; break;
		case OPT_MIN_DURATION:
			if (parse_duration_ns(optarg, &o->min_duration_ns) < 0)
				return usage_error("--min-duration wants a time like 10us, 2ms or 500ns, "
						   "not '%s'", optarg);
			break;
		case OPT_LOADER:
			if (strcmp(optarg, "auto") && strcmp(optarg, "perun") && strcmp(optarg, "stapbpf"))
				return usage_error("--loader is auto, perun or stapbpf, not '%s'", optarg);
			o->loader = optarg;
			break;
		case OPT_NO_CALIBRATE: o->calibrate = 0; break;
		case OPT_OPT_PIPELINE:
			if (!opt_pipeline_valid(optarg))
				return usage_error("-op is basic, advanced or full, not '%s'", optarg);
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
				return usage_error("-oa %s: give its value too (-oa NAME VALUE)", optarg);
			if (opt_set(&o->opt, optarg, argv[optind]) < 0)
				return EXIT_USAGE;
			optind++;
			break;
		case OPT_OPT_CACHE_OFF: o->opt.cache_off = 1; break;
		case OPT_OPT_RESET_CACHE: o->opt.reset_cache = 1; break;
		case 'h': usage_collect(stdout); return -1;
		default: return usage_error("%s", "bad trace option");
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s' after the trace options", argv[optind]);
	if (o->compile_only && o->cache_off)
		return usage_error("%s", "--compile-only fills the module cache: not with -sc");
	if (o->kernel_release) {
		if (o->runtime == RUNTIME_BPF)
			return usage_error("%s", "-r builds kernel modules: not with --runtime bpf");
		o->runtime = RUNTIME_KERNEL;
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct collect_opts *o)
{
	static const struct option longopts[] = {
		{ "cmd", required_argument, NULL, 'c' },
		{ "args", required_argument, NULL, 'a' },
		{ "workload", required_argument, NULL, 'w' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "follow", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+c:a:w:o:p:h", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'p':
			errno = 0;
			o->pid = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->pid <= 0 || o->pid > 0x3fffffff)
				return usage_error("--pid wants a process id, not '%s'", optarg);
			break;
		case 'c': o->cmd = optarg; break;
		case 'F': o->follow = 1; break;
		case 'a': o->args = optarg; break;
		case 'w': o->workload = optarg; break;
		case 'o': o->output = optarg; break;
		case 'h': usage_collect(stdout); return -1;
		default: return usage_error("%s", "bad option");
		}
	}
	if (optind >= argc)
		return usage_error("%s", "missing collector: 'trace'");
	if (strcmp(argv[optind], "trace"))
		return usage_error("unknown collector '%s': perun has 'trace'", argv[optind]);
	return parse_trace_opts(argc - optind, argv + optind, o);
}


int cmd_collect(int argc, char **argv, struct ctx *ctx)
{
	(void)ctx;
	struct collect_opts o;
	struct session s;
	int ret = EXIT_FAIL, parsed;

	memset(&o, 0, sizeof(o));
	o.engine = "stap";
	o.strategy = "userspace";
	o.output_handling = "default";
	o.with_usdt = 1;
	o.buffer_size = DEFAULT_BUFFER_SIZE;
	o.calibrate = -1;
	opt_selection_init(&o.opt);
	parsed = parse_opts(argc, argv, &o);
	if (parsed) {
		ret = parsed < 0 ? EXIT_OK : parsed;
		goto out_opts;
	}
	session_init(&s, &o);
	s.calibration_get = calibration_get;
	driver_install_signals();
	if (o.quiet)
		log_level = 0;
	if (o.pid && (o.cmd || o.args || o.workload)) {
		ret = usage_error("%s", "--pid traces a process that runs: not with -c, -a or -w");
		goto out;
	}
	if (!o.cmd && !o.pid) {
		ret = usage_error("%s", "nothing to run: give the command with -c, or a running "
					"process with --pid (-b names the binary to probe when it "
					"differs)");
		goto out;
	}
	/* -o is checked now, not after the target ran: a bad one lost the trace */
	if (o.output && !o.script_only && output_check(o.output) < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	ret = collect_pipeline(&s, o.script_only ? COLLECT_UNTIL_SCRIPT
				   : o.compile_only ? COLLECT_UNTIL_MODULE
						    : COLLECT_UNTIL_PROFILE);
	if (ret != EXIT_OK)
		goto out;
	if (o.script_only) {
		fwrite(s.script.buf, 1, s.script.len, stdout);
	} else if (o.compile_only) {
		/* stdout: KEY RUNTIME RELEASE, for scripts that fill fleets' caches */
		printf("%s %s %s\n", s.key, runtime_name(s.runtime), s.release ? s.release : "-");
		if (!o.quiet)
			fprintf(stderr, "perun: %s module in the cache (%s): %s\n",
				runtime_name(s.runtime), s.cache_state, s.module);
	}
out:
	session_release(&s);
out_opts:
	strv_clear(&o.funcs);
	strv_clear(&o.usdts);
	strv_clear(&o.dyns);
	opt_selection_release(&o.opt);
	return ret;
}
