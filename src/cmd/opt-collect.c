/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect's options, shared by the commands that collect (collect, and cache
 * build for --compile-only): the top-level ones (-c, -a, -w, -o, --pid), then
 * the collector's through collect_parse_trace; and what a module build
 * prints.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/session.h"
#include "store/output.h"
#include "trace/runtime.h"
#include "util/log.h"
#include "util/parse-options.h"

/* The whole of --help: the table's options have no help line of their own,
 * since the trace level's options (parsed by collect_parse_trace) are listed
 * here with them.  */
static const char usage_text[] =
	"usage: perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]\n"
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
	"128+N when the command was killed by signal N (the profile is still written).\n";

void usage_collect(FILE *f)
{
	fputs(usage_text, f);
}


static int pid_cb(const struct popt *opt, const char *value)
{
	long *pid = opt->value;
	char *end;

	errno = 0;
	*pid = strtol(value, &end, 10);
	if (errno || *end || end == value || *pid <= 0 || *pid > 0x3fffffff)
		return popt_error(opt, "--pid wants a process id, not '%s'", value);
	return 0;
}

int collect_args_parse(int argc, char **argv, struct collect_opts *o)
{
	struct popt opts[] = {
		OPT_STRING('c', "cmd", &o->cmd, "CMD", NULL),
		OPT_STRING('a', "args", &o->args, "ARGS", NULL),
		OPT_STRING('w', "workload", &o->workload, "WORKLOAD", NULL),
		OPT_STRING('o', "output", &o->output, "FILE", NULL),
		OPT_CALLBACK('p', "pid", &o->pid, "PID", NULL, pid_cb),
		OPT_BOOL(0, "follow", &o->follow, NULL),
		OPT_END(),
	};
	/* the collect level ends at "trace": the rest is the collector's */
	int trace_at = popt_find_word(argc, argv, opts, "trace");
	int c = parse_options(trace_at, argv, "collect", usage_text, opts);

	if (c < 0)
		return c == POPT_HELP ? -1 : EXIT_USAGE;
	if (c > 0)
		return collect_usage_error("unknown collector '%s': perun has 'trace'", argv[0]);
	if (trace_at >= argc)
		return collect_usage_error("%s", "missing collector: 'trace'");
	c = collect_parse_trace(argc - trace_at, argv + trace_at, o);
	if (c == 1)
		usage_collect(stdout);
	if (c)
		return c == 1 ? -1 : c;
	if (o->pid && (o->cmd || o->args || o->workload))
		return collect_usage_error("%s", "--pid traces a process that runs: not with -c, -a or -w");
	if (!o->cmd && !o->pid)
		return collect_usage_error("%s", "nothing to run: give the command with -c, or a running "
					   "process with --pid (-b names the binary to probe when it "
					   "differs)");
	/* -o is checked now, not after the target ran: a bad one lost the trace */
	if (o->output && !o->script_only && output_check(o->output) < 0)
		return EXIT_USAGE;
	return 0;
}

void collect_say_module(const struct session *s)
{
	/* stdout: KEY RUNTIME RELEASE, for scripts that fill fleets' caches */
	printf("%s %s %s\n", s->key, runtime_name(s->runtime), s->release ? s->release : "-");
	if (!s->o->quiet)
		fprintf(stderr, "perun: %s module in the cache (%s): %s\n", runtime_name(s->runtime),
			s->cache_state, s->module);
}
