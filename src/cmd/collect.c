/* perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cmd/cmd.h"
#include "profile/writer.h"
#include "store/output.h"
#include "store/stats.h"
#include "store/repo.h"
#include "target/target.h"
#include "trace/bpfmap.h"
#include "trace/cache.h"
#include "trace/calibrate.h"
#include "trace/driver.h"
#include "trace/kruntime.h"
#include "trace/parse.h"
#include "trace/plan.h"
#include "trace/runtime.h"
#include "trace/script.h"
#include "trace/strategy.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* Messages from stap/stapbpf kept in the profile, at most.  */
#define MAX_STAP_MESSAGES 100

struct strv {
	char **v;
	size_t n;
};

static void strv_push(struct strv *s, const char *x)
{
	s->v = xrealloc(s->v, (s->n + 2) * sizeof(*s->v));
	s->v[s->n++] = xstrdup(x);
	s->v[s->n] = NULL;
}

static void strv_clear(struct strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

struct opts {
	const char *cmd, *args, *workload, *output;
	const char *engine, *strategy, *binary, *output_handling, *include, *exclude;
	struct strv funcs, usdts, dyns;
	unsigned global_sampling;
	int with_usdt;
	double timeout;
	int zip_temps, keep_temps, verbose_trace, quiet, watchdog, diagnostics, cache_off;
	int aggregate, metrics, script_only, strict, entry_only, per_call;
	const char *transport;	/* record | print, or NULL: the runtime's default */
	size_t buffer_size;	/* events the recorder keeps */
	enum runtime runtime;
	const char *kernel_release;	/* -r: build for this kernel (kernel runtime) */
	int compile_only;	/* fill the module cache, run nothing */
	int calibrate;		/* --calibrate 1, --no-calibrate 0, else -1: a cached one */
};

void usage_collect(FILE *f)
{
	fputs("usage: perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]\n"
	      "\n"
	      "collect options:\n"
	      "  -c, --cmd CMD            the command to profile\n"
	      "  -a, --args ARGS          its arguments (split like a shell, no expansion)\n"
	      "  -w, --workload WORKLOAD  its input, appended after ARGS\n"
	      "  -o, --output FILE        write the profile to FILE (default: .perun/jobs/)\n"
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
	      "  -t, --timeout SECONDS    terminate the command after SECONDS\n"
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
	      "      --include REGEX      probe only functions whose name matches (PCRE2)\n"
	      "      --exclude REGEX      never probe functions whose name matches\n"
	      "      --aggregate          per-function summaries instead of one record per call\n"
	      "      --per-call           one object per call, not columns (perun show --expand)\n"
	      "      --entry-only         entry probes only: call counts, no durations (for\n"
	      "                           programs that throw C++ exceptions or longjmp)\n"
	      "      --metrics            print and record PL, PLR, RDV, PS, CPT, PRT, PT\n"
	      "      --script-only        print the generated SystemTap script and stop\n"
	      "      --transport T        record (keep events in a map, write them at the end;\n"
	      "                           the bpf default) or print (one printf per event)\n"
	      "      --buffer-size N      events the recorder keeps (default 1000000, about\n"
	      "                           70 bytes of kernel memory each); the rest is counted\n"
	      "                           as lost, per function\n"
	      "      --strict             any lost event makes the collect fail (exit 1)\n"
	      "      --compile-only       build the module into the cache and stop\n"
	      "  -r, --kernel-release R   build the kernel module for release R (a build host\n"
	      "                           serving hosts that run R; implies --runtime kernel)\n"
	      "      --calibrate, --no-calibrate  calibrated amounts in the summaries: measure\n"
	      "                           the probe cost first when none is cached (default:\n"
	      "                           use the one 'perun calibrate' cached, if any)\n"
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
	OPT_BUFFER_SIZE, OPT_STRICT, OPT_COMPILE_ONLY, OPT_ENTRY_ONLY, OPT_CALIBRATE,
	OPT_NO_CALIBRATE, OPT_PER_CALL,
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

static int parse_trace_opts(int argc, char **argv, struct opts *o)
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
		{ "no-calibrate", no_argument, NULL, OPT_NO_CALIBRATE },
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
		case OPT_NO_CALIBRATE: o->calibrate = 0; break;
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

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "cmd", required_argument, NULL, 'c' },
		{ "args", required_argument, NULL, 'a' },
		{ "workload", required_argument, NULL, 'w' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+c:a:w:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->cmd = optarg; break;
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

/* --- helpers --------------------------------------------------------------- */

/* Splits S into words like a shell, without expanding anything: blanks separate
 * words; '...' keeps everything literally; "..." keeps everything but \\, \", \$ and
 * \` escapes; a backslash outside quotes keeps the next character.  $VAR, ~, globs and
 * command substitution stay as written, and | ; & < > are ordinary characters.  */
static int split_words(const char *s, struct strv *out, const char *what)
{
	struct strbuf w = STRBUF_INIT;
	const char *p = s;
	int in_word = 0;

	if (!s)
		return 0;
	for (;;) {
		char c = *p;
		if (!c || c == ' ' || c == '\t' || c == '\n') {
			if (in_word)
				strv_push(out, strbuf_str(&w));
			strbuf_reset(&w);
			in_word = 0;
			if (!c)
				break;
			p++;
			continue;
		}
		in_word = 1;
		if (c == '\'') {
			const char *q = strchr(p + 1, '\'');
			if (!q)
				goto unterminated;
			strbuf_add(&w, p + 1, (size_t)(q - p - 1));
			p = q + 1;
		} else if (c == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1] && strchr("\\\"$`", p[1]))
					p++;
				strbuf_addch(&w, *p);
			}
			if (!*p)
				goto unterminated;
			p++;
		} else if (c == '\\' && p[1]) {
			strbuf_addch(&w, p[1]);
			p += 2;
		} else {
			strbuf_addch(&w, c);
			p++;
		}
	}
	strbuf_release(&w);
	return 0;
unterminated:
	strbuf_release(&w);
	return pr_error("cannot split %s '%s': a quote is not closed", what, s);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Identity of a file for the cache key: size and mtime.  */
static char *file_identity(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) < 0)
		return xstrdup("-");
	return xstrfmt("%s:%lld:%lld.%09ld", path, (long long)st.st_size,
		       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

struct watchdog {
	FILE *f;
	double t0;
};

static void wd(struct watchdog *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wd(struct watchdog *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->f)
		return;
	fprintf(w->f, "[%10.6f] ", now_s() - w->t0);
	va_start(ap, fmt);
	vfprintf(w->f, fmt, ap);
	va_end(ap);
	fputc('\n', w->f);
	fflush(w->f);
}

/* What stap and stapbpf said on stderr.  */
struct stap_log {
	struct json_object *messages;
	uint64_t lost_events;
	uint64_t transport_errors;	/* the runtime's reader gave up on its buffers */
	int errors;
	int progress;		/* show pass progress on the terminal */
	int pass;
	size_t nprobes;
	int quiet;
	int debuginfo_warned;	/* "cannot find module ... debuginfo" lines seen */
	struct strbuf all;	/* everything, for error reports */
};

static void on_stap_line(void *ctx, const char *line)
{
	struct stap_log *l = ctx;
	unsigned long long lost;
	int cpu;

	if (!*line)
		return;
	strbuf_addstr(&l->all, line);
	strbuf_addch(&l->all, '\n');
	if (!strncmp(line, "Pass ", 5) && line[5] >= '1' && line[5] <= '5') {
		l->pass = line[5] - '0';
		if (l->progress)
			fprintf(stderr, "\rperun: compiling %zu probes: pass %d/4 done ", l->nprobes,
				l->pass);
		return;
	}
	if (sscanf(line, "WARNING: lost %llu perf_events on cpu %d", &lost, &cpu) == 2)
		l->lost_events += lost;
	/* kernel runtime: each failure is one probe's output the relay dropped (a
	 * lower bound: stock stap 4.8's stapio also drops data silently) */
	if (sscanf(line, "WARNING: There were %llu transport failures", &lost) == 1)
		l->lost_events += lost;
	/* stapbpf sends a printf as several perf records; when its 32 KB per-CPU
	 * rings overflow mid-printf its reader aborts with one of these */
	if (strstr(line, "printf already started") || strstr(line, "printf not started") ||
	    strstr(line, "wrong number of printf args") || strstr(line, "printf format is missing") ||
	    strstr(line, "could not read from perf_event buffer") ||
	    strstr(line, "transport failure") || strstr(line, "unknown perf_event type"))
		l->transport_errors++;
	if (strstr(line, "ERROR") || strstr(line, "error:"))
		l->errors++;
	if (json_object_array_length(l->messages) < MAX_STAP_MESSAGES)
		json_object_array_add(l->messages, json_object_new_string(line));
	/* stap -v says it once per probe of a binary without DWARF */
	if (strstr(line, "WARNING: cannot find module") && strstr(line, "debuginfo")) {
		if (l->debuginfo_warned++)
			return;
	}
	if (!l->quiet && (strstr(line, "WARNING") || strstr(line, "ERROR")) && !l->progress)
		fprintf(stderr, "stap: %s\n", line);
}

/* Compresses src into a new file name in the directory dfd: created with
 * O_EXCL|O_NOFOLLOW (never through a link, never over a file).  */
static int gzip_file(const char *src, int dfd, const char *name, const char *shown)
{
	struct strbuf sb = STRBUF_INIT;
	gzFile gz;
	int fd, ret = -1;

	if (strbuf_read_file(&sb, src) < 0)
		return -1;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_error_errno("create %s", shown);
	} else if (!(gz = gzdopen(fd, "wb9"))) {
		pr_error("gzdopen %s: out of memory", shown);
		close(fd);
	} else {
		if (sb.len == 0 || gzwrite(gz, sb.buf, (unsigned)sb.len) > 0)
			ret = 0;
		if (gzclose(gz) != Z_OK)
			ret = -1;
	}
	strbuf_release(&sb);
	return ret;
}

static void zip_temps(const char *tmpdir, const char *logdir, const char *stamp, int quiet)
{
	static const char *const files[] = { "trace.raw", "trace.rec", "stap.log", "watchdog.log",
					     "output.log", "script.stp", "plan", NULL };
	char rnd[9];
	size_t i;
	int dfd;

	/* a directory of ours no one else can write; names no one can guess */
	if (fs_random_hex(rnd, 8) < 0)
		return;
	dfd = fs_open_private_dir(logdir, 0755);
	if (dfd < 0) {
		pr_error("temp files not kept (-z): %s is not a safe place for them", logdir);
		return;
	}
	for (i = 0; files[i]; i++) {
		char *src = xstrfmt("%s/%s", tmpdir, files[i]);
		char *name = xstrfmt("trace-%s-%s-%s.gz", stamp, rnd, files[i]);
		char *dst = xstrfmt("%s/%s", logdir, name);
		if (fs_exists(src) && gzip_file(src, dfd, name, dst) == 0 && !quiet)
			fprintf(stderr, "perun: kept %s\n", dst);
		free(src);
		free(name);
		free(dst);
	}
	close(dfd);
}

/* --- the collect ------------------------------------------------------------ */

struct run_state {
	struct opts *o;
	struct watchdog wd;
	double t_start, t_collect0, t_collect1;
	char *tmpdir;
	char *stap, *stapbpf, *staprun;
	enum runtime runtime;
	const char *runtime_why;
	struct target target;
	struct plan plan;
	struct strbuf script;
	char *tapset_text;
	char key[SHA1_HEXSZ + 1];
	struct cache cache;
	int cache_open;
	const char *cache_state;
	char *module;		/* path of the module to run */
	struct stap_log log;
	struct strv cmdv;
	char *release;		/* kernel release the module is for */
	struct kruntime kr;	/* kernel runtime: the runtime sources stap -R uses */
};

static enum script_mode script_mode(const struct run_state *s);

/* stap -r RELEASE [-R COPY] for the kernel runtime, once the build tree is
 * known to be there; warns when stap needs perun's patched runtime.  */
static int kernel_compile_args(struct run_state *s, struct strv *argv)
{
	char *why = NULL, *ver, *cmd;

	if (!kruntime_can_build(s->release, &why)) {
		pr_error("cannot build the kernel module: %s", why);
		free(why);
		return -1;
	}
	if (!s->kr.dir) {
		ver = kruntime_stap_version(s->stap);
		if (kruntime_has_patches(ver) && !s->o->quiet) {
			cmd = kruntime_prepare_command();
			fprintf(stderr,
				"perun: warning: stap %s's stock kernel runtime cannot build modules "
				"for current 6.1.y kernels and loses per-event output at high rates: "
				"run '%s' once (as root)\n",
				ver, cmd);
			free(cmd);
		}
		free(ver);
	}
	if (script_mode(s) == SCRIPT_RECORD) {
		/* the end probe writes the whole recorder map out; the kernel runtime
		 * stops a probe after MAXACTION (1000) statements, the bpf one does
		 * not (its end probe runs in user space) */
		char *d = xstrfmt("-DMAXACTION=%zu", s->o->buffer_size * 8 + 10000);
		strv_push(argv, d);
		free(d);
	}
	strv_push(argv, "-r");
	strv_push(argv, s->release);
	if (s->kr.dir) {
		strv_push(argv, "-R");
		strv_push(argv, s->kr.dir);
	}
	wd(&s->wd, "compile: kernel %s, %s", s->release, s->kr.why);
	return 0;
}

static int compile_module(struct run_state *s, const char *outdir, const char *name)
{
	struct strv argv = { NULL, 0 };
	char *script_path = xstrfmt("%s/script.stp", outdir);
	char *tapsets = xstrfmt("%s/tapsets", runtime_datadir());
	struct run_spec spec;
	struct run_result res;
	int ret = -1;
	double t0 = now_s();

	if (fs_write_atomic(script_path, s->script.buf, s->script.len, 0600) < 0)
		goto out;
	strv_push(&argv, s->stap);
	strv_push(&argv, "-p4");
	strv_push(&argv, "-v");
	if (s->runtime == RUNTIME_BPF)
		strv_push(&argv, "--runtime=bpf");
	if (s->runtime == RUNTIME_KERNEL && kernel_compile_args(s, &argv) < 0)
		goto out;
	strv_push(&argv, "-m");
	strv_push(&argv, name);
	strv_push(&argv, "-I");
	strv_push(&argv, tapsets);
	strv_push(&argv, script_path);
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv.v;
	spec.cwd = outdir;
	spec.cleanup_dir = s->o->keep_temps ? NULL : s->tmpdir;
	spec.stdout_null = 1;
	s->log.progress = !s->o->quiet && isatty(2);
	s->log.nprobes = plan_probe_points(&s->plan);
	if (s->log.progress)
		fprintf(stderr, "perun: compiling %zu probes ", s->log.nprobes);
	wd(&s->wd, "compile: %s (runtime %s) in %s", s->stap, runtime_name(s->runtime), outdir);
	if (driver_run(&spec, &res, on_stap_line, &s->log) < 0)
		goto out;
	if (s->log.progress)
		fprintf(stderr, "\rperun: compiled %zu probes in %.1f s              \n",
			s->log.nprobes, now_s() - t0);
	wd(&s->wd, "compile: ended (%s %d) after %.3f s", res.exited ? "exit" : "signal",
	   res.status, now_s() - t0);
	if (res.interrupted) {
		pr_error("interrupted while compiling");
		goto out;
	}
	if (!res.exited || res.status != 0) {
		pr_error("stap -p4 failed (%s %d); what it said:\n%s", res.exited ? "exit" : "signal",
			 res.status, strbuf_str(&s->log.all));
		goto out;
	}
	free(s->module);
	s->module = xstrfmt("%s/%s.%s", outdir, name, s->runtime == RUNTIME_BPF ? "bo" : "ko");
	if (!fs_exists(s->module)) {
		pr_error("stap -p4 succeeded but wrote no %s", s->module);
		goto out;
	}
	ret = 0;
out:
	strv_clear(&argv);
	free(script_path);
	free(tapsets);
	return ret;
}

/* Finds or builds the module for the script.  */
static int get_module(struct run_state *s)
{
	struct utsname u;
	char *ids[8], name[32], *stap_id = NULL;
	struct cache_entry e;
	int r, ret = -1;
	size_t i;
	struct strbuf bids = STRBUF_INIT;
	char *plan_text = plan_serialize(&s->plan);

	memset(&e, 0, sizeof(e));
	uname(&u);
	/* build ids of every binary in the plan */
	for (i = 0; i < s->plan.n; i++) {
		const char *b = s->plan.probes[i].binary;
		if (i && !strcmp(b, s->plan.probes[i - 1].binary))
			continue;
		if (!strcmp(b, s->target.path) && s->target.build_id[0]) {
			strbuf_addf(&bids, "%s=%s;", b, s->target.build_id);
		} else {
			char *id = file_identity(b);
			strbuf_addf(&bids, "%s;", id);
			free(id);
		}
	}
	/* stap's own identity is not in the key (a hit must work without stap);
	 * the entry records it and a changed stap makes the entry stale */
	ids[0] = s->script.buf;
	ids[1] = s->tapset_text;
	ids[2] = file_identity(s->runtime == RUNTIME_BPF ? s->stapbpf : s->staprun);
	ids[3] = (char *)runtime_name(s->runtime);
	ids[4] = s->runtime == RUNTIME_KERNEL && s->release ? s->release : u.release;
	ids[5] = bids.buf;
	cache_key(s->key, (const char *const *)ids, 6);
	free(ids[2]);
	stap_id = s->stap ? file_identity(s->stap) : NULL;	/* never run stap for it */
	if (stap_id && s->runtime == RUNTIME_KERNEL) {
		/* a module built from other runtime sources (stock, patched) is stale */
		char *k = xstrfmt("%s runtime=%s", stap_id, s->kr.id);
		free(stap_id);
		stap_id = k;
	}
	snprintf(name, sizeof(name), "perun_%.16s", s->key);
	if (s->o->cache_off) {
		s->cache_state = "off";
		goto compile_fresh;
	}
	{
		char *dir = cache_default_dir();
		r = cache_open(&s->cache, dir);
		free(dir);
		if (r < 0)
			goto out;
		s->cache_open = 1;
	}
	r = cache_lookup(&s->cache, s->key, stap_id, &e);
	if (r < 0)
		goto out;
	if (r == 0) {
		/* miss: compile under the lock, unless another collect just did */
		if (cache_lock(&s->cache) < 0)
			goto out;
		r = cache_lookup(&s->cache, s->key, stap_id, &e);
		if (r < 0) {
			cache_unlock(&s->cache);
			goto out;
		}
		if (r == 0) {
			if (!s->stap) {
				cache_unlock(&s->cache);
				pr_error("stap not found and the module is not cached: install the "
					 "systemtap package");
				goto out;
			}
			if (compile_module(s, s->tmpdir, name) < 0) {
				cache_unlock(&s->cache);
				goto out;
			}
			r = cache_store(&s->cache, s->key, s->module, runtime_name(s->runtime),
					s->target.path, plan_probe_points(&s->plan), stap_id,
					plan_text, s->script.buf, &e);
			cache_unlock(&s->cache);
			if (r < 0)
				goto out;
			{
				size_t removed;
				cache_prune(&s->cache, cache_max_size(), s->key, &removed);
			}
			s->cache_state = "miss";
		} else {
			cache_unlock(&s->cache);
			s->cache_state = "hit";
		}
	} else {
		s->cache_state = "hit";
	}
	/* the runtime gets a private copy of the verified bytes, not the cache's path */
	free(s->module);
	if (cache_export_module(&e, s->tmpdir, &s->module) < 0)
		goto out;
	wd(&s->wd, "cache %s: %s", s->cache_state, e.dir);
	ret = 0;
	goto out;
compile_fresh:
	if (!s->stap) {
		pr_error("stap not found: install the systemtap package");
		goto out;
	}
	ret = compile_module(s, s->tmpdir, name);
out:
	free(stap_id);
	cache_entry_release(&e);
	strbuf_release(&bids);
	free(plan_text);
	return ret;
}

static const char *exit_desc(int exited, int status, char *buf, size_t n)
{
	if (exited)
		snprintf(buf, n, "exit %d", status);
	else
		snprintf(buf, n, "signal %d (%s)", status, strsignal(status));
	return buf;
}

static struct json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *jstrv(const struct strv *v)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < v->n; i++)
		json_object_array_add(a, json_object_new_string(v->v[i]));
	return a;
}

static struct json_object *make_header(struct run_state *s)
{
	struct json_object *h = json_object_new_object(), *u = json_object_new_object();

	json_object_object_add(h, "type", json_object_new_string("mixed"));
	json_object_object_add(u, "mixed(time delta)", json_object_new_string("ns"));
	json_object_object_add(h, "units", u);
	json_object_object_add(h, "cmd", json_object_new_string(s->o->cmd ? s->o->cmd : ""));
	json_object_object_add(h, "args", json_object_new_string(s->o->args ? s->o->args : ""));
	json_object_object_add(h, "workload",
			       json_object_new_string(s->o->workload ? s->o->workload : ""));
	return h;
}

static enum script_mode script_mode(const struct run_state *s);

static struct json_object *make_collector_info(struct run_state *s)
{
	struct opts *o = s->o;
	struct json_object *ci = json_object_new_object(), *p = json_object_new_object();

	json_object_object_add(ci, "name", json_object_new_string("trace"));
	json_object_object_add(p, "engine", json_object_new_string(o->engine));
	json_object_object_add(p, "strategy", json_object_new_string(o->strategy));
	json_object_object_add(p, "func", jstrv(&o->funcs));
	json_object_object_add(p, "usdt", jstrv(&o->usdts));
	json_object_object_add(p, "dynamic", jstrv(&o->dyns));
	json_object_object_add(p, "global_sampling", json_object_new_int((int)o->global_sampling));
	json_object_object_add(p, "with_usdt", json_object_new_boolean(o->with_usdt));
	json_object_object_add(p, "binary", jstr(s->target.path));
	json_object_object_add(p, "timeout", json_object_new_double(o->timeout));
	json_object_object_add(p, "zip_temps", json_object_new_boolean(o->zip_temps));
	json_object_object_add(p, "keep_temps", json_object_new_boolean(o->keep_temps));
	json_object_object_add(p, "verbose_trace", json_object_new_boolean(o->verbose_trace));
	json_object_object_add(p, "quiet", json_object_new_boolean(o->quiet));
	json_object_object_add(p, "watchdog", json_object_new_boolean(o->watchdog));
	json_object_object_add(p, "output_handling", json_object_new_string(o->output_handling));
	json_object_object_add(p, "diagnostics", json_object_new_boolean(o->diagnostics));
	json_object_object_add(p, "stap_cache_off", json_object_new_boolean(o->cache_off));
	json_object_object_add(p, "runtime", json_object_new_string(runtime_name(s->runtime)));
	json_object_object_add(p, "include", jstr(o->include));
	json_object_object_add(p, "exclude", jstr(o->exclude));
	json_object_object_add(p, "aggregate", json_object_new_boolean(o->aggregate));
	json_object_object_add(p, "metrics", json_object_new_boolean(o->metrics));
	json_object_object_add(p, "entry_only", json_object_new_boolean(o->entry_only));
	json_object_object_add(p, "transport",
			       json_object_new_string(o->aggregate ? "aggregate"
						      : script_mode(s) == SCRIPT_RECORD ? "record"
											: "print"));
	json_object_object_add(p, "buffer_size", json_object_new_int64((int64_t)o->buffer_size));
	json_object_object_add(p, "strict", json_object_new_boolean(o->strict));
	json_object_object_add(ci, "params", p);
	return ci;
}

static char *default_output(struct run_state *s, int *in_jobs)
{
	char *perun_dir = repo_locate(), *base, *out;
	const char *cmd = s->cmdv.n ? s->cmdv.v[0] : s->target.path;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H-%M-%S", &tm);
	base = strrchr(cmd, '/') ? xstrdup(strrchr(cmd, '/') + 1) : xstrdup(cmd);
	if (perun_dir) {
		char *jobs = xstrfmt("%s/jobs", perun_dir);
		fs_mkdir_p(jobs, 0755);
		out = xstrfmt("%s/%s-trace-%s-%d.perf", jobs, base, stamp, (int)getpid());
		free(jobs);
		*in_jobs = 1;
	} else {
		out = xstrfmt("%s-trace-%s.perf", base, stamp);
		*in_jobs = 0;
	}
	free(perun_dir);
	free(base);
	return out;
}

/* Most failed probes named on stderr (all of them go to the profile).  */
#define MAX_FAILED_SHOWN 10

/* What the runtime attached, from its uprobe_events lines saved when it was
 * ready: prints "attached A of P probes" and the failures, and returns
 * {planned, attached, failed: [...]} for collector_info.  */
static struct json_object *report_attached(struct run_state *s, const char *path,
					   size_t *attached)
{
	struct strbuf sb = STRBUF_INIT;
	struct probe_attach *att = xcalloc(s->plan.n ? s->plan.n : 1, sizeof(*att));
	struct json_object *j = json_object_new_object(), *fl = json_object_new_array();
	size_t planned = plan_probe_points(&s->plan), nfail, i;
	char **lines;

	strbuf_read_file(&sb, path);
	*attached = plan_match_uprobe_events(&s->plan, strbuf_str(&sb), -1, att);
	nfail = plan_attach_failures(&s->plan, att, &lines);
	if (!s->o->quiet || *attached < planned)
		fprintf(stderr, "perun: attached %zu of %zu probes%s\n", *attached, planned,
			nfail ? "; not attached:" : "");
	for (i = 0; i < nfail; i++) {
		if (i < MAX_FAILED_SHOWN)
			fprintf(stderr, "perun:   %s\n", lines[i]);
		json_object_array_add(fl, json_object_new_string(lines[i]));
		free(lines[i]);
	}
	if (nfail > MAX_FAILED_SHOWN)
		fprintf(stderr, "perun:   ... and %zu more (collector_info.probes.failed)\n",
			nfail - MAX_FAILED_SHOWN);
	free(lines);
	free(att);
	strbuf_release(&sb);
	json_object_object_add(j, "planned", json_object_new_int64((int64_t)planned));
	json_object_object_add(j, "attached", json_object_new_int64((int64_t)*attached));
	json_object_object_add(j, "failed", fl);
	return j;
}

/* What stapbpf prints when its perf reader gave up: nothing more arrives.  */
static const char *const runtime_fatal_lines[] = {
	"printf already started", "printf not started", "wrong number of printf args",
	"printf format is missing", "could not read from perf_event buffer",
	"unknown perf_event type", NULL,
};

/* Says on stderr how the trace is incomplete: always, even with -q.  */
static void warn_incomplete(const struct run_state *s, const struct parse_stats *ps,
			    const uint64_t *lost)
{
	uint64_t total = s->log.lost_events + ps->lost_events + ps->missing_records;
	struct strbuf sb = STRBUF_INIT;
	size_t i, shown = 0;

	if (ps->lost_events) {
		strbuf_addf(&sb, "%" PRIu64 " events did not fit the recorder's buffer of %zu (",
			    ps->lost_events, s->o->buffer_size);
		for (i = 0; i < s->plan.n; i++) {
			if (!lost[i])
				continue;
			if (shown++ == 5) {
				strbuf_addstr(&sb, ", ...");
				break;
			}
			strbuf_addf(&sb, "%s%s %" PRIu64, shown > 1 ? ", " : "", s->plan.probes[i].name,
				    lost[i]);
		}
		strbuf_addstr(&sb, "): raise --buffer-size, or trace fewer calls (-g N, --include)");
	} else if (s->log.transport_errors) {
		strbuf_addstr(&sb, "the runtime's event buffers overflowed and its reader stopped: "
				   "use --transport record, -g N or --aggregate");
	} else if (s->log.lost_events) {
		strbuf_addf(&sb, "the runtime dropped %" PRIu64 " events: use --transport record, "
				 "-g N or --aggregate",
			    s->log.lost_events);
	} else if (ps->missing_records) {
		strbuf_addf(&sb, "%" PRIu64 " recorded events never reached perun (the runtime "
				 "stopped while writing them out)",
			    ps->missing_records);
	} else {
		strbuf_addstr(&sb, "the runtime stopped before its end marker");
	}
	if (s->runtime == RUNTIME_KERNEL && !s->kr.txfix)
		strbuf_addstr(&sb, "; stap's stock relay transport loses events: prepare perun's "
				   "patched runtime (see perun doctor)");
	if (total)
		fprintf(stderr, "perun: warning: the trace is incomplete (%" PRIu64 " events lost): %s\n",
			total, sb.buf);
	else
		fprintf(stderr, "perun: warning: the trace is incomplete (how many events were lost is "
				"unknown): %s\n",
			sb.buf);
	strbuf_release(&sb);
}

/* The recorder's map size in the script: --buffer-size, moved off the sizes
 * of stap's other maps (its default 2048, the tapset's 16384 and 65536) so
 * that the fast read below finds the map by its size alone.  */
static size_t recorder_slots(size_t n)
{
	return n == 2048 || n == 16384 || n == 65536 ? n + 1 : n;
}

/* The fast read of the bpf recorder: in the supervisor, once the target has
 * ended, perun reads and deletes the runtime's __perun_buf in batches and
 * writes "v TID SEQ HI LO" lines to trace.rec, as the end probe would (its
 * foreach then finds the map empty).  Any failure leaves the rest to the end
 * probe and is said in the watchdog log only.  */
struct fast_read {
	char *path;		/* <tmpdir>/trace.rec */
	size_t slots;		/* max_entries of __perun_buf */
	struct watchdog *wd;
	FILE *f;
};

/* v in lowercase hex without leading zeros, then c; returns the end.  */
static char *put_hex(char *p, uint32_t v, char c)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 28;

	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(v >> shift) & 0xf];
	*p++ = c;
	return p;
}

/* "v TID SEQ HI LO" per entry, as the end probe's printf("%x") writes them;
 * by hand, as fprintf costs more than the batch read itself.  */
static int fast_read_batch(void *ctx, const uint64_t *keys, const uint64_t *vals, size_t n)
{
	struct fast_read *fr = ctx;
	char buf[64 * 256], *p = buf;
	size_t i;

	for (i = 0; i < n; i++) {
		*p++ = 'v';
		*p++ = ' ';
		p = put_hex(p, (uint32_t)(keys[i] >> 32), ' ');
		p = put_hex(p, (uint32_t)keys[i], ' ');
		p = put_hex(p, (uint32_t)(vals[i] >> 32), ' ');
		p = put_hex(p, (uint32_t)vals[i], '\n');
		if (p - buf > (ptrdiff_t)sizeof(buf) - 64 || i + 1 == n) {
			if (fwrite(buf, 1, (size_t)(p - buf), fr->f) != (size_t)(p - buf))
				return -1;
			p = buf;
		}
	}
	return 0;
}

static int fast_read(pid_t runtime_pid, void *ctx)
{
	struct fast_read *fr = ctx;
	struct bpfmap_err err = { "" };
	struct bpfmap_info *maps = NULL;
	const struct bpfmap_info *m = NULL;
	const char *how = "-";
	size_t n = 0, count = 0;
	double t0 = now_s();
	int mfd = -1, ofd, ret = 1;

	if (bpfmap_list(runtime_pid, &maps, &n, &err) < 0 ||
	    !(m = bpfmap_find_u64_hash(maps, n, (unsigned)fr->slots, &err)) ||
	    (mfd = bpfmap_open_id(m->id, &err)) < 0)
		goto out;
	ofd = open(fr->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (ofd < 0 || !(fr->f = fdopen(ofd, "w"))) {
		snprintf(err.msg, sizeof(err.msg), "open %s: %s", fr->path, strerror(errno));
		if (ofd >= 0)
			close(ofd);
		goto out;
	}
	setvbuf(fr->f, NULL, _IOFBF, 1 << 20);
	ret = bpfmap_drain_u64(mfd, fast_read_batch, fr, &count, &how, &err) < 0;
	if (fclose(fr->f) != 0 && !ret) {
		snprintf(err.msg, sizeof(err.msg), "write %s: %s", fr->path, strerror(errno));
		ret = 1;
	}
	fr->f = NULL;
out:
	if (ret)
		wd(fr->wd, "fast read: %s; %zu entries read (%s), the end probe writes the rest",
		   err.msg, count, how);
	else
		wd(fr->wd, "fast read: %zu entries of map %u read and deleted in %.3f s (%s)", count,
		   m->id, now_s() - t0, how);
	if (mfd >= 0)
		close(mfd);
	free(maps);
	return ret;
}

/* Writing *output (or *staged) failed: write the profile again, once, into
 * a rescue file, so a finished trace is never thrown away.  */
static int to_rescue(char **output, char **staged, int *rescued)
{
	char *pd, *jobs = NULL, *r;

	if (*rescued)
		return -1;
	pd = repo_locate();
	if (pd)
		jobs = xstrfmt("%s/jobs", pd);
	r = output_rescue(jobs, *output);
	free(pd);
	free(jobs);
	if (!r)
		return -1;
	if (*staged)
		unlink(*staged);
	free(*staged);
	*staged = NULL;
	*rescued = 1;
	fprintf(stderr, "perun: cannot write %s: writing the profile to %s instead\n", *output, r);
	free(*output);
	*output = r;
	return 0;
}

static int run_and_write(struct run_state *s)
{
	struct opts *o = s->o;
	char *raw = xstrfmt("%s/trace.raw", s->tmpdir);
	struct fast_read fr = { xstrfmt("%s/trace.rec", s->tmpdir), recorder_slots(o->buffer_size),
				&s->wd, NULL };
	const char *no_fast = getenv("PERUN_NO_FAST_READ");
	char *stap_log_path = xstrfmt("%s/stap.log", s->tmpdir);
	char *attached_path = NULL;
	struct json_object *probes_j = NULL;
	size_t attached = 0, named_zero = 0, unattached = 0;
	char *shim = NULL, *output = NULL, *origin_dir = NULL, *capture = NULL, *staged = NULL;
	struct strv argv = { NULL, 0 }, env = { NULL, 0 }, cleanup = { NULL, 0 };
	struct run_spec spec;
	struct run_result res;
	struct profile_writer w;
	struct parser *parser = NULL;
	struct json_object *header = NULL, *ci = NULL, *extra = NULL;
	unsigned char *points = NULL;
	char origin[41], desc[64];
	int have_origin = 0, in_jobs = 0, rescued = 0, ret = EXIT_FAIL, incomplete = 0, have_cal;
	struct calibration cal;
	struct probe_cost cost;
	unsigned char *stepped = NULL;
	size_t i;
	double t_parse0;
	struct stat st;

	/* the runtime, its target, its output */
	if (s->runtime == RUNTIME_BPF) {
		strv_push(&argv, s->stapbpf);
		if (runtime_needs_memlock_shim()) {
			shim = runtime_shim_path();
			if (!shim) {
				pr_error("RLIMIT_MEMLOCK cannot be raised here and perun-memlock-shim.so "
					 "is not installed: reinstall perun or set PERUN_LIBDIR");
				goto out;
			}
			{
				const char *old = getenv("LD_PRELOAD");
				char *e = xstrfmt("LD_PRELOAD=%s%s%s", shim, old ? ":" : "", old ? old : "");
				strv_push(&env, e);
				free(e);
				e = xstrfmt("PERUN_ORIG_LD_PRELOAD=%s", old ? old : "");
				strv_push(&env, e);
				free(e);
				strv_push(&env, "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0");
			}
		}
	} else {
		strv_push(&argv, s->staprun);
		/* -R: a name of its own (perun_PID), so concurrent runs of one cached
		 * module do not collide and a leftover is known to be this run's */
		strv_push(&argv, "-R");
		strv_push(&cleanup, s->staprun);
		strv_push(&cleanup, "-d");
		strv_push(&cleanup, DRIVER_MOD_ARG);
	}
	strv_push(&argv, "-x");
	strv_push(&argv, DRIVER_PID_ARG);
	strv_push(&argv, "-o");
	strv_push(&argv, raw);
	strv_push(&argv, s->module);
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv.v;
	spec.env_extra = env.v;
	if (s->runtime == RUNTIME_KERNEL) {
		spec.module_prefix = "perun_";	/* what staprun -R makes of perun_KEY */
		spec.cleanup_argv = cleanup.v;
	}
	spec.timeout = o->timeout;
	spec.cleanup_dir = o->keep_temps ? NULL : s->tmpdir;
	spec.target_argv = s->cmdv.v;
	spec.ready_path = raw;
	if (s->runtime == RUNTIME_BPF && driver_uprobe_events_path() &&
	    access(driver_uprobe_events_path(), R_OK) == 0) {
		attached_path = xstrfmt("%s/attached", s->tmpdir);
		spec.attached_path = attached_path;
	}
	spec.fatal_lines = runtime_fatal_lines;
	if (s->runtime == RUNTIME_BPF && script_mode(s) == SCRIPT_RECORD) {
		if (no_fast && *no_fast && strcmp(no_fast, "0")) {
			wd(&s->wd, "fast read: off (PERUN_NO_FAST_READ), the end probe writes the buffer");
		} else {
			spec.before_stop = fast_read;
			spec.before_stop_ctx = &fr;
		}
	}
	/* detaching is slow: the kernel waits an RCU grace period per probe point
	 * (about 60 ms each here), and stapbpf runs its end probe only after */
	spec.stop_timeout = 10 + 0.2 * (double)plan_probe_points(&s->plan);
	/* perun's patched kernel runtime lets stapio read all output before the
	 * module exits, waiting up to 60 s (_stp_exit_drain_ms) */
	if (s->runtime == RUNTIME_KERNEL && s->kr.txfix)
		spec.stop_timeout += 60;
	if (!o->quiet && plan_probe_points(&s->plan) > 200)
		fprintf(stderr, "perun: detaching %zu probes takes the kernel about %.0f s after "
				"the command ends (Ctrl-C twice to skip it)\n",
			plan_probe_points(&s->plan), 0.06 * (double)plan_probe_points(&s->plan));
	spec.output_mode = o->output_handling;
	if (!strcmp(o->output_handling, "capture")) {
		capture = xstrfmt("%s/output.log", s->tmpdir);
		spec.capture_path = capture;
	}
	if (!o->quiet)
		fprintf(stderr, "perun: tracing %zu probes with the %s runtime (module cache: %s)\n",
			plan_probe_points(&s->plan), runtime_name(s->runtime), s->cache_state);
	wd(&s->wd, "run: %s -x PID %s, target %s", argv.v[0], s->module, s->cmdv.v[0]);
	s->t_collect0 = now_s();
	if (driver_run(&spec, &res, on_stap_line, &s->log) < 0)
		goto out;
	s->t_collect1 = now_s();
	wd(&s->wd, "run: runtime ended (%s), timed out %d, interrupted %d, leaked uprobes %d",
	   exit_desc(res.exited, res.status, desc, sizeof(desc)), res.timed_out, res.interrupted,
	   res.leaked_uprobes);
	fs_write_atomic(stap_log_path, strbuf_str(&s->log.all), s->log.all.len, 0600);
	if (res.never_ready || stat(raw, &st) < 0) {
		pr_error("%s failed (%s) before the command ran%s; what it said:\n%s", argv.v[0],
			 exit_desc(res.exited, res.status, desc, sizeof(desc)),
			 res.interrupted ? " (interrupted)" : "", strbuf_str(&s->log.all));
		if (res.interrupted)
			ret = EXIT_SIGNAL_BASE + (driver_signal_received() ? driver_signal_received() : 2);
		goto out;
	}
	if (attached_path)
		probes_j = report_attached(s, attached_path, &attached);

	/* where the profile goes, and its origin */
	if (o->output) {
		output = xstrdup(o->output);
	} else {
		output = default_output(s, &in_jobs);
		/* never replace a profile: write beside, then take a free name */
		if (!(staged = output_stage(output)) && to_rescue(&output, &staged, &rescued) < 0)
			goto out;
	}
	origin_dir = vcs_find_worktree(".");
	if (origin_dir && vcs_head(origin_dir, origin) == 0)
		have_origin = 1;

	/* parse into the profile */
	t_parse0 = now_s();
	header = make_header(s);
	ci = make_collector_info(s);
	if (probes_j) {
		json_object_object_add(ci, "probes", probes_j);
		probes_j = NULL;
	}
	/* the probe cost, for calibrated amounts; a failed measurement leaves them out */
	have_cal = calibration_get((int)s->runtime, o->aggregate && o->calibrate ? -1 : o->calibrate,
				   o->quiet, &cal);
	json_object_object_add(json_object_object_get(ci, "params"), "calibration",
			       have_cal > 0 ? calibration_json(&cal) : NULL);
	points = xcalloc(s->plan.n ? s->plan.n : 1, 1);
	for (i = 0; i < s->plan.n; i++)
		points[i] = probe_is_point(&s->plan.probes[i]);
write_again:
	if (parser)
		parser_free(parser);
	parser = NULL;
	if (profile_writer_open(&w, staged ? staged : output, &s->plan,
				have_origin ? origin : NULL, header, ci,
				o->aggregate ? PROFILE_SUMMARIES : o->per_call ? PROFILE_PER_CALL : PROFILE_COMPACT) < 0) {
		profile_writer_abort(&w);	/* frees what open kept */
		if (to_rescue(&output, &staged, &rescued) == 0)
			goto write_again;
		goto out;
	}
	if (have_cal > 0 && !o->aggregate) {
		cost.probe_ns = cal.probe_ns;
		cost.pair_ns = cal.pair_ns;
		cost.stepped_ns = cal.stepped_ns;
		if (!stepped)
			stepped = calibrate_plan_stepped(&s->plan);
		profile_writer_calibrate(&w, &cost, stepped);
	}
	parser = parser_new(s->plan.n, points, profile_writer_call, &w);
	/* trace.rec, from the fast read, after trace.raw: the recorder's events
	 * are held until parser_finish, and one read twice counts once */
	if (parser_feed_file(parser, raw) < 0 ||
	    (fs_exists(fr.path) && parser_feed_file(parser, fr.path) < 0) ||
	    parser_finish(parser) < 0) {
		profile_writer_abort(&w);
		pr_error("writing %s failed", output);
		if (to_rescue(&output, &staged, &rescued) == 0)
			goto write_again;
		goto out;
	}
	if (o->aggregate) {
		size_t na, k;
		const struct agg_record *ag = parser_aggregates(parser, &na);
		for (k = 0; k < na; k++)
			if (profile_writer_aggregate(&w, &ag[k]) < 0) {
				profile_writer_abort(&w);
				pr_error("writing %s failed", output);
				if (to_rescue(&output, &staged, &rescued) == 0)
					goto write_again;
				goto out;
			}
	}
	{
		const struct parse_stats *ps = parser_stats(parser);
		struct json_object *an = json_object_new_object(), *sum = json_object_new_object();
		struct json_object *tg = json_object_new_object(), *met = NULL;
		size_t reached = 0;

		json_object_put(extra);
		extra = json_object_new_object();
		json_object_object_add(extra, "runtime", json_object_new_string(runtime_name(s->runtime)));
		if (s->runtime == RUNTIME_KERNEL) {
			json_object_object_add(extra, "kernel_release", json_object_new_string(s->release));
			json_object_object_add(extra, "kernel_runtime", json_object_new_string(s->kr.id));
		}
		json_object_object_add(extra, "module_cache", json_object_new_string(s->cache_state));
		json_object_object_add(extra, "cache_key", json_object_new_string(s->key));
		json_object_object_add(extra, "probes", json_object_new_int64((int64_t)plan_probe_points(&s->plan)));
		json_object_object_add(extra, "timed_out", json_object_new_boolean(res.timed_out));
		json_object_object_add(extra, "interrupted", json_object_new_boolean(res.interrupted));
		json_object_object_add(extra, "runtime_died", json_object_new_boolean(res.runtime_died));
		if (s->runtime == RUNTIME_BPF && script_mode(s) == SCRIPT_RECORD)
			json_object_object_add(extra, "recorder_read",
					       json_object_new_string(res.before_stop == 0 ? "batch"
											   : "end-probe"));
		if (res.target_known) {
			json_object_object_add(tg, res.target_exited ? "exit" : "signal",
					       json_object_new_int(res.target_status));
			json_object_object_add(tg, "run_time_ns", json_object_new_int64((int64_t)res.target_ns));
			json_object_object_add(tg, "pid", json_object_new_int64(res.target_pid));
		}
		json_object_object_add(extra, "target", tg);
		json_object_object_add(extra, "untraced_children", json_object_new_int64((int64_t)res.forked));
		{
			struct json_object *tm = json_object_new_object();
			double before = s->t_collect0 - s->t_start;
			json_object_object_add(tm, "prepare_s", json_object_new_double(before));
			json_object_object_add(tm, "arm_s", json_object_new_double((double)res.ready_ns / 1e9));
			json_object_object_add(tm, "startup_s",
					       json_object_new_double(before + (double)res.ready_ns / 1e9));
			json_object_object_add(extra, "timing", tm);
		}
		json_object_object_add(an, "unmatched_entries", json_object_new_int64((int64_t)ps->unmatched_entries));
		json_object_object_add(an, "unmatched_exits", json_object_new_int64((int64_t)ps->unmatched_exits));
		json_object_object_add(an, "truncated_lines", json_object_new_int64((int64_t)ps->truncated_lines));
		json_object_object_add(an, "malformed_lines", json_object_new_int64((int64_t)ps->malformed_lines));
		json_object_object_add(an, "duplicates", json_object_new_int64((int64_t)ps->duplicates));
		json_object_object_add(an, "reordered", json_object_new_int64((int64_t)ps->reordered));
		json_object_object_add(an, "unknown_probes", json_object_new_int64((int64_t)ps->unknown_probes));
		json_object_object_add(an, "lost_events",
				       json_object_new_int64((int64_t)(s->log.lost_events + ps->lost_events +
								       ps->missing_records)));
		json_object_object_add(an, "lost_in_buffer", json_object_new_int64((int64_t)ps->lost_events));
		json_object_object_add(an, "lost_in_transport", json_object_new_int64((int64_t)s->log.lost_events));
		json_object_object_add(an, "missing_records", json_object_new_int64((int64_t)ps->missing_records));
		{
			const uint64_t *lost = parser_lost(parser);
			struct json_object *lf = json_object_new_object();
			for (i = 0; i < s->plan.n; i++)
				if (lost[i])
					json_object_object_add(lf, s->plan.probes[i].name,
							       json_object_new_int64((int64_t)lost[i]));
			json_object_object_add(an, "lost_by_function", lf);
		}
		json_object_object_add(an, "transport_errors",
				       json_object_new_int64((int64_t)s->log.transport_errors));
		json_object_object_add(an, "missing_begin", json_object_new_boolean(!ps->saw_begin));
		json_object_object_add(an, "missing_end", json_object_new_boolean(!ps->saw_end));
		json_object_object_add(extra, "anomalies", an);
		json_object_object_add(extra, "events", json_object_new_int64((int64_t)ps->events));
		json_object_object_add(extra, "calls", json_object_new_int64((int64_t)ps->calls));
		json_object_object_add(extra, "threads", json_object_new_int64((int64_t)ps->threads));
		json_object_object_add(extra, "max_depth", json_object_new_int64(ps->max_depth));
		json_object_object_add(extra, "raw_bytes", json_object_new_int64((int64_t)ps->bytes));
		json_object_object_add(extra, "bytes_per_event",
				       json_object_new_double(ps->events ? (double)ps->bytes / (double)ps->events : 0));
		for (i = 0; i < s->plan.n; i++) {
			if (!w.sum[i].count)
				continue;
			reached += points[i] ? 1 : 2;
			json_object_object_add(sum, s->plan.probes[i].name, probe_summary_json(&w.sum[i]));
		}
		unattached = attached_path && attached < plan_probe_points(&s->plan) ?
				     plan_probe_points(&s->plan) - attached : 0;
		incomplete = s->log.transport_errors || s->log.lost_events || ps->lost_events ||
			     ps->missing_records || !ps->saw_end || unattached;
		json_object_object_add(extra, "complete", json_object_new_boolean(!incomplete));
		json_object_object_add(extra, "summary", sum);
		json_object_object_add(extra, "stap_messages", json_object_get(s->log.messages));
		if (o->metrics) {
			double pt = now_s() - s->t_start;
			met = json_object_new_object();
			json_object_object_add(met, "PL", json_object_new_int64((int64_t)plan_probe_points(&s->plan)));
			json_object_object_add(met, "PLR", json_object_new_int64((int64_t)reached));
			json_object_object_add(met, "RDV_bytes", json_object_new_int64((int64_t)ps->bytes));
			json_object_object_add(met, "CPT_s", json_object_new_double(s->t_collect1 - s->t_collect0));
			json_object_object_add(met, "PRT_s", json_object_new_double((double)res.target_ns / 1e9));
			json_object_object_add(met, "PT_s_before_write", json_object_new_double(pt));
			json_object_object_add(met, "parse_s", json_object_new_double(now_s() - t_parse0));
			json_object_object_add(extra, "metrics", met);
		}
		/* a command that died early explains its own missing calls */
		for (i = 0; res.target_known && res.target_exited && !res.interrupted &&
			    i < s->plan.n && (!attached_path || attached); i++) {
			const struct probe *pr = &s->plan.probes[i];
			size_t j, k;
			if (!(pr->flags & PROBE_F_NAMED) || w.sum[i].count ||
			    (pr->sampling > 1 && !o->aggregate))
				continue;
			if (pr->flags & PROBE_F_ALTERNATIVE) {
				/* an IFUNC's implementations: one of them is enough */
				for (j = i; j > 0 && (s->plan.probes[j - 1].flags & PROBE_F_ALTERNATIVE); j--)
					;
				for (k = j; k < s->plan.n && (s->plan.probes[k].flags & PROBE_F_ALTERNATIVE) &&
					    !w.sum[k].count; k++)
					;
				if (k < s->plan.n && (s->plan.probes[k].flags & PROBE_F_ALTERNATIVE))
					continue;
				if (i != j)
					continue;	/* said once for the group */
			}
			fprintf(stderr, "perun: error: %s (%s), named on the command line, recorded "
					"no call: the command never reached it%s\n",
				pr->name, pr->binary,
				res.timed_out ? " before the timeout"
				: incomplete  ? " (or its events were lost: see the warning)"
					      : "");
			named_zero++;
		}
		if (profile_writer_close(&w, ps, extra) < 0) {
			if (to_rescue(&output, &staged, &rescued) == 0)
				goto write_again;
			goto out;
		}
		if (staged) {
			char *final = output_publish(staged, output);
			free(output);
			output = final ? final : xstrdup(staged);
			rescued |= !final;
			free(staged);
			staged = NULL;
		}
		if (o->metrics && stat(output, &st) == 0) {
			double pt = now_s() - s->t_start;
			printf("metrics:\n  PL   %zu probe locations\n  PLR  %zu reached\n"
			       "  RDV  %.3f MB raw (%" PRIu64 " events, %.1f B/event)\n  PS   %.3f MB profile\n"
			       "  CPT  %.3f s\n  PRT  %.3f s\n  PT   %.3f s\n",
			       plan_probe_points(&s->plan), reached, (double)ps->bytes / 1e6, ps->events,
			       ps->events ? (double)ps->bytes / (double)ps->events : 0.0,
			       (double)st.st_size / 1e6, s->t_collect1 - s->t_collect0,
			       (double)res.target_ns / 1e9, pt);
		}
		if (!o->quiet) {
			uint64_t ncalls = ps->calls + ps->points;
			size_t nthreads = ps->threads;
			if (o->aggregate) {
				size_t na, k, j;
				const struct agg_record *ag = parser_aggregates(parser, &na);
				for (k = 0, nthreads = 0; k < na; k++) {
					ncalls += ag[k].count;
					for (j = 0; j < k && ag[j].thread != ag[k].thread; j++)
						;
					nthreads += j == k;
				}
			}
			size_t nf = reached ? (size_t)json_object_object_length(sum) : 0;
			fprintf(stderr, "perun: %" PRIu64 " call%s of %zu function%s in %zu thread%s -> %s%s\n",
				ncalls, ncalls == 1 ? "" : "s", nf, nf == 1 ? "" : "s", nthreads,
				nthreads == 1 ? "" : "s", output, in_jobs ? " (pending: perun add)" : "");
		}
		/* post-optimize: dynamic stats for the next run (seeds/003 7.1.2) */
		stats_after_collect(output, header, "trace", sum, ps->calls + ps->points,
				    have_origin ? origin : NULL, o->quiet);
		if (incomplete && unattached && !(s->log.transport_errors || s->log.lost_events ||
						  ps->lost_events || ps->missing_records || !ps->saw_end))
			fprintf(stderr, "perun: warning: the trace is incomplete: %zu of %zu probe points "
					"did not attach (named above), so their calls are missing\n",
				unattached, plan_probe_points(&s->plan));
		else if (incomplete)
			warn_incomplete(s, ps, parser_lost(parser));
		if (!o->quiet) {
			if (ps->unmatched_entries || ps->unmatched_exits || ps->truncated_lines ||
			    ps->malformed_lines || ps->duplicates || s->log.lost_events ||
			    ps->lost_events || ps->missing_records)
				fprintf(stderr,
					"perun: anomalies: %" PRIu64 " unfinished calls, %" PRIu64
					" unmatched returns, %" PRIu64 " truncated and %" PRIu64
					" malformed lines, %" PRIu64 " duplicates, %" PRIu64 " lost events\n",
					ps->unmatched_entries, ps->unmatched_exits, ps->truncated_lines,
					ps->malformed_lines, ps->duplicates,
					s->log.lost_events + ps->lost_events + ps->missing_records);
		}
	}
	if (o->verbose_trace) {
		char *keep = xstrfmt("%s.raw", output);
		struct strbuf sb = STRBUF_INIT;
		/* the fast read's events too: the stream as the end probe writes it */
		if (strbuf_read_file(&sb, raw) == 0 &&
		    (!fs_exists(fr.path) || strbuf_read_file(&sb, fr.path) == 0))
			fs_write_atomic(keep, sb.buf, sb.len, 0644);
		strbuf_release(&sb);
		free(keep);
	}
	ret = !incomplete ? EXIT_OK : o->strict ? EXIT_FAIL : EXIT_INCOMPLETE;
	if (res.forked && !o->quiet)
		fprintf(stderr, "perun: the command started %zu child process%s; only its own process "
				"was traced (collect a child with -c on its own)\n",
			res.forked, res.forked == 1 ? "" : "es");
	if (res.timed_out && !o->quiet)
		fprintf(stderr, "perun: timeout of %.1f s reached: the command was terminated\n",
			o->timeout);
	if (res.runtime_died) {
		fprintf(stderr, "perun: %s ended (%s) while the command ran, so perun stopped the "
				"command; the profile holds what was traced before\n",
			argv.v[0], exit_desc(res.exited, res.status, desc, sizeof(desc)));
		ret = EXIT_FAIL;
	} else if (res.target_known && res.target_exited && res.target_status != 0) {
		fprintf(stderr, "perun: target exited with status %d\n", res.target_status);
	} else if (res.target_known && !res.target_exited && !res.timed_out && !res.interrupted) {
		fprintf(stderr, "perun: the command was killed by signal %d (%s); the profile "
				"records what ran\n",
			res.target_status, strsignal(res.target_status));
		if (res.target_status == SIGABRT && s->target.exceptions &&
		    plan_probe_points(&s->plan) > s->plan.n)
			fprintf(stderr, "perun: hint: %s throws C++ exceptions, which abort when they "
					"unwind through a return probe: trace with --entry-only\n",
				s->target.path);
		ret = EXIT_SIGNAL_BASE + res.target_status;
	}
	if (res.interrupted)
		ret = EXIT_SIGNAL_BASE + (driver_signal_received() ? driver_signal_received() : 2);
	if ((ret == EXIT_OK || ret == EXIT_INCOMPLETE) && attached_path && !attached) {
		fprintf(stderr, "perun: error: no probe attached, so nothing was traced (see the "
				"probes named above)\n");
		ret = EXIT_FAIL;
	}
	if (named_zero && (ret == EXIT_OK || ret == EXIT_INCOMPLETE))
		ret = EXIT_FAIL;
	if (rescued) {
		fprintf(stderr, "perun: the profile is in %s, not where it was asked for\n", output);
		if (ret == EXIT_OK || ret == EXIT_INCOMPLETE)
			ret = EXIT_FAIL;
	}
out:
	free(fr.path);
	if (staged)
		unlink(staged);
	free(staged);
	json_object_put(probes_j);
	free(attached_path);
	if (parser)
		parser_free(parser);
	json_object_put(header);
	json_object_put(ci);
	json_object_put(extra);
	free(points);
	free(stepped);
	strv_clear(&argv);
	strv_clear(&env);
	strv_clear(&cleanup);
	free(raw);
	free(stap_log_path);
	free(capture);
	free(shim);
	free(output);
	free(origin_dir);
	return ret;
}

/* --aggregate, else --transport, else record on bpf (whose perf rings drop
 * per-event printfs) and print on the kernel runtime.  */
static enum script_mode script_mode(const struct run_state *s)
{
	if (s->o->aggregate)
		return SCRIPT_AGGREGATE;
	if (s->o->transport)
		return strcmp(s->o->transport, "record") ? SCRIPT_PRINT : SCRIPT_RECORD;
	return s->runtime == RUNTIME_BPF ? SCRIPT_RECORD : SCRIPT_PRINT;
}

static int choose_runtime(struct run_state *s)
{
	const char *why = NULL;
	int kernel_ok = runtime_kernel_usable(&why);

	s->runtime = s->o->runtime;
	if (s->runtime == RUNTIME_AUTO) {
		s->runtime = kernel_ok ? RUNTIME_KERNEL : RUNTIME_BPF;
		/* a kernel without modules is a fact of the machine ('perun doctor' says
		 * it); a missing build tree has a fix worth repeating */
		int tell = !kernel_ok && access("/proc/modules", F_OK) == 0;
		if (!s->o->quiet && !s->o->script_only)
			fprintf(stderr, "perun: runtime %s%s%s\n", runtime_name(s->runtime),
				tell ? ": " : "", tell ? why : "");
	} else if (s->runtime == RUNTIME_KERNEL && !s->o->script_only && !s->o->compile_only &&
		   !kruntime_can_load(&why)) {
		/* a build tree is needed only to compile: a cached module runs without */
		return pr_error("the kernel runtime cannot run here: %s; use --runtime bpf", why);
	}
	if (s->runtime == RUNTIME_KERNEL) {
		struct utsname u;
		uname(&u);
		s->release = xstrdup(s->o->kernel_release ? s->o->kernel_release : u.release);
		kruntime_select(&s->kr);
	}
	s->stap = runtime_find_program("PERUN_STAP", "stap", STAP_PATH);
	s->stapbpf = runtime_find_program("PERUN_STAPBPF", "stapbpf", STAPBPF_PATH);
	s->staprun = runtime_find_program("PERUN_STAPRUN", "staprun", STAPRUN_PATH);
	if (s->o->script_only)
		return 0;
	if ((s->runtime == RUNTIME_BPF && !s->stapbpf) ||
	    (s->runtime == RUNTIME_KERNEL && !s->staprun && !s->o->compile_only)) {
		char *msg = s->runtime == RUNTIME_BPF
				    ? runtime_program_missing("PERUN_STAPBPF", "stapbpf", STAPBPF_PATH,
							      "systemtap", NULL)
				    : runtime_program_missing("PERUN_STAPRUN", "staprun", STAPRUN_PATH,
							      "systemtap-runtime", NULL);
		pr_error("%s", msg);
		free(msg);
		return -1;
	}
	return 0;
}

int cmd_collect(int argc, char **argv, struct ctx *ctx)
{
	(void)ctx;
	struct opts o;
	struct run_state s;
	struct strategy_opts so;
	char *cache_dir = NULL;
	int ret = EXIT_FAIL, r, parsed;
	const char *binary;

	memset(&o, 0, sizeof(o));
	o.engine = "stap";
	o.strategy = "userspace";
	o.output_handling = "default";
	o.with_usdt = 1;
	o.buffer_size = DEFAULT_BUFFER_SIZE;
	o.calibrate = -1;
	parsed = parse_opts(argc, argv, &o);
	if (parsed) {
		ret = parsed < 0 ? EXIT_OK : parsed;
		goto out_opts;
	}
	memset(&s, 0, sizeof(s));
	s.o = &o;
	s.t_start = now_s();
	s.wd.t0 = s.t_start;
	s.cache_state = "off";
	s.log.messages = json_object_new_array();
	s.log.quiet = o.quiet;
	strbuf_init(&s.script, 0);
	strbuf_init(&s.log.all, 0);
	driver_install_signals();
	if (o.quiet)
		log_level = 0;
	if (!o.cmd) {
		ret = usage_error("%s", "nothing to run: give the command with -c (-b names the "
					"binary to probe when it differs)");
		goto out;
	}
	/* -o is checked now, not after the target ran: a bad one lost the trace */
	if (o.output && !o.script_only && output_check(o.output) < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (o.cmd) {
		strv_push(&s.cmdv, o.cmd);
		if (split_words(o.args, &s.cmdv, "arguments") < 0 ||
		    split_words(o.workload, &s.cmdv, "workload") < 0) {
			ret = EXIT_USAGE;
			goto out;
		}
	}
	{
		char *p = fs_which(o.cmd);
		if (!p) {
			pr_error("%s: command not found (give a path)", o.cmd);
			goto out;
		}
		s.cmdv.v[0] = (free(s.cmdv.v[0]), p);
	}
	binary = o.binary ? o.binary : s.cmdv.v[0];
	if (choose_runtime(&s) < 0)
		goto out;
	if (!o.script_only) {
		s.tmpdir = fs_mkdtemp("perun-collect");
		if (!s.tmpdir)
			goto out;
		if (o.watchdog) {
			char *p = xstrfmt("%s/watchdog.log", s.tmpdir);
			s.wd.f = fopen(p, "wxe");
			free(p);
		}
	}
	cache_dir = cache_default_dir();
	if (!o.cache_off && cache_check_dir(cache_dir) < 0)
		goto out;
	if (target_load(&s.target, binary, o.cache_off ? NULL : cache_dir) < 0)
		goto out;
	wd(&s.wd, "target: %s, %zu functions, %zu USDT notes, build-id %s", s.target.path,
	   s.target.nfuncs, s.target.nusdts, s.target.build_id[0] ? s.target.build_id : "none");
	memset(&so, 0, sizeof(so));
	so.strategy = o.strategy;
	so.funcs = o.funcs.v;
	so.nfuncs = o.funcs.n;
	so.usdts = o.usdts.v;
	so.nusdts = o.usdts.n;
	so.dyns = o.dyns.v;
	so.ndyns = o.dyns.n;
	so.global_sampling = o.global_sampling;
	so.with_usdt = o.with_usdt;
	so.include = o.include;
	so.exclude = o.exclude;
	so.cache_dir = o.cache_off ? NULL : cache_dir;
	so.entry_only = o.entry_only;
	if (strategy_build(&s.plan, &s.target, &so) < 0)
		goto out;
	if (s.runtime == RUNTIME_BPF && plan_probe_points(&s.plan) > runtime_bpf_probe_limit() &&
	    !o.script_only) {
		pr_error("%zu probe points exceed what stapbpf can open here (about %zu with an "
			 "open-file limit of %lu): narrow them with --include/--exclude or -s custom",
			 plan_probe_points(&s.plan), runtime_bpf_probe_limit(), runtime_nofile_limit());
		goto out;
	}
	{
		char *tp = xstrfmt("%s/templates", runtime_datadir());
		char *ts = xstrfmt("%s/tapsets/perun.stp", runtime_datadir());
		struct strbuf tb = STRBUF_INIT;
		r = script_generate_mode(&s.plan, tp, script_mode(&s), recorder_slots(o.buffer_size),
					 &s.script);
		if (r == 0 && strbuf_read_file(&tb, ts) < 0)
			r = pr_error_errno("tapset %s (set PERUN_DATADIR or reinstall perun)", ts);
		s.tapset_text = strbuf_detach(&tb);
		free(tp);
		free(ts);
		if (r < 0)
			goto out;
	}
	wd(&s.wd, "plan: %zu probes, %zu probe points, script %zu bytes", s.plan.n,
	   plan_probe_points(&s.plan), s.script.len);
	if (o.script_only) {
		fwrite(s.script.buf, 1, s.script.len, stdout);
		ret = EXIT_OK;
		goto out;
	}
	if (get_module(&s) < 0) {
		if (driver_signal_received())
			ret = EXIT_SIGNAL_BASE + driver_signal_received();
		goto out;
	}
	if (o.compile_only) {
		/* stdout: KEY RUNTIME RELEASE, for scripts that fill fleets' caches */
		printf("%s %s %s\n", s.key, runtime_name(s.runtime), s.release ? s.release : "-");
		if (!o.quiet)
			fprintf(stderr, "perun: %s module in the cache (%s): %s\n",
				runtime_name(s.runtime), s.cache_state, s.module);
		ret = EXIT_OK;
		goto out;
	}
	{
		char *pp = xstrfmt("%s/plan", s.tmpdir);
		plan_save(&s.plan, pp);
		free(pp);
	}
	ret = run_and_write(&s);
out:
	if (s.tmpdir) {
		if (o.zip_temps) {
			char *pd = repo_locate(), *logdir;
			char stamp[32];
			time_t now = time(NULL);
			struct tm tm;
			localtime_r(&now, &tm);
			strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
			logdir = pd ? xstrfmt("%s/logs", pd) : xstrdup("perun-logs");
			zip_temps(s.tmpdir, logdir, stamp, o.quiet);
			free(pd);
			free(logdir);
		}
		if (s.wd.f)
			fclose(s.wd.f);
		if (o.keep_temps)
			fprintf(stderr, "perun: temp files kept in %s\n", s.tmpdir);
		else
			fs_remove_tree(s.tmpdir);
		free(s.tmpdir);
	}
	if (s.cache_open)
		cache_close(&s.cache);
	target_release(&s.target);
	plan_release(&s.plan);
	strbuf_release(&s.script);
	strbuf_release(&s.log.all);
	json_object_put(s.log.messages);
	strv_clear(&s.cmdv);
	free(s.tapset_text);
	free(s.module);
	free(s.stap);
	free(s.stapbpf);
	free(s.staprun);
	free(s.release);
	kruntime_release(&s.kr);
	free(cache_dir);
out_opts:
	strv_clear(&o.funcs);
	strv_clear(&o.usdts);
	strv_clear(&o.dyns);
	return ret;
}
