/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One collect as a pipeline of phases (DESIGN.md): analyse -> strategy ->
 * pre-optimize -> plan -> script -> module (cache) -> run -> parse ->
 * post-optimize -> profile.  Each phase reads and fills a part of struct
 * session; src/cmd/collect.c parses the options into struct collect_opts and
 * runs the phases in turn.  */
#ifndef PERUN_COLLECT_SESSION_H
#define PERUN_COLLECT_SESSION_H

#include <stdint.h>
#include <stdio.h>

#include "binary/target.h"
#include "optimize/optimize.h"
#include "plan/plan.h"
#include "render/script.h"
#include "runtime/cache.h"
#include "runtime/calibrate.h"
#include "runtime/driver.h"
#include "runtime/kruntime.h"
#include "runtime/runtime.h"
#include "util/sha1.h"
#include "util/strbuf.h"
#include "util/strv.h"

struct json_object;

/* Messages from stap/stapbpf kept in the profile, at most.  */
#define MAX_STAP_MESSAGES 100

/* What the user asked for: perun collect's options (thesis Table A.1).  */
struct collect_opts {
	const char *cmd, *args, *workload, *output;
	const char *engine, *strategy, *binary, *output_handling, *include, *exclude;
	struct strv funcs, usdts, dyns;
	unsigned global_sampling;
	int with_usdt;
	double timeout;
	int zip_temps, keep_temps, verbose_trace, quiet, watchdog, diagnostics, cache_off;
	int no_progress;	/* no progress line while tracing, even on a terminal */
	int aggregate, metrics, script_only, strict, entry_only, per_call;
	const char *transport;	/* record | print, or NULL: the runtime's default */
	size_t buffer_size;	/* events the recorder keeps */
	enum runtime runtime;
	const char *kernel_release;	/* -r: build for this kernel (kernel runtime) */
	int compile_only;	/* fill the module cache, run nothing */
	int one_module;		/* --one-module: every function probed, a selection gates */
	int calibrate;		/* --calibrate 1, --no-calibrate 0, else -1: a cached one */
	struct opt_selection opt;	/* -op, -on, -off, -oa (Table A.2) */
	double max_overhead;	/* --max-overhead PCT, or 0 */
	const char *machine;	/* the machine's name for its profiles' machine region, or
				   NULL */
	const char *origin;	/* the commit the profile is for (40 hex), or NULL: the
				 * HEAD of the work tree around the working directory */
	long pid;		/* --pid: trace this running process, not -c */
	int follow;		/* --follow: the processes it starts too */
	const char *loader;	/* --loader auto | perun | stapbpf (the bpf runtime) */
	uint64_t min_duration_ns;	/* --min-duration: keep only slower calls, or 0 */
};

/* Default events the recorder keeps, and the most it may be asked for.  */
#define DEFAULT_BUFFER_SIZE 1000000
#define MAX_BUFFER_SIZE 100000000

/* o holds collect's defaults.  */
void collect_opts_init(struct collect_opts *o);
/* Frees the lists o holds (not the strings: they are the caller's).  */
void collect_opts_release(struct collect_opts *o);
/* perun collect's synopsis: the usage its errors end with, and its --help
 * starts with.  */
#define COLLECT_SYNOPSIS                                                                           \
	"usage: perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]\n"        \
	"   or: perun collect --pid PID [-o FILE] trace [options]\n"
struct popt;
/* The table of the trace options (util/parse-options.h), filling o, and
 * *help on --help: what collect_parse_trace parses, and what perun collect's
 * --help lists.  The caller frees it.  */
struct popt *collect_trace_options(struct collect_opts *o, int *help);
/* Parses the trace options argv[1..argc) (argv[0] is 'trace') into o, which
 * keeps pointers to argv's strings (argv's order changes): 0, EXIT_USAGE
 * after saying why on stderr, or 1 when --help was asked (the caller prints
 * collect's help).  */
int collect_parse_trace(int argc, char **argv, struct collect_opts *o);
/* "perun collect: MESSAGE" and the synopsis on stderr, as parse_options says
 * a usage error; returns EXIT_USAGE.  */
int collect_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints collect's man-page-like usage; used by --help.  */
void usage_collect(FILE *f);
/* Parses perun collect's arguments (argv[0] is "collect") into o, which
 * keeps pointers into argv, and checks what they ask for together: 0; -1
 * when --help was printed; EXIT_USAGE after saying why on stderr.  */
int collect_args_parse(int argc, char **argv, struct collect_opts *o);

/* -w: every step of the collection, timed, in the temp dir.  */
struct watchdog {
	FILE *f;
	double t0;
};

/* What stap and stapbpf said on stderr.  */
struct stap_log {
	struct json_object *messages;
	uint64_t lost_events;
	uint64_t transport_errors;	/* the runtime's reader gave up on its buffers */
	int errors;
	int progress;		/* show pass progress on the terminal */
	int trace_progress;	/* show the loader's progress lines on the terminal */
	int progress_shown;	/* a progress line without its newline is on the terminal */
	double detach_ms;	/* perun's loader: how long its links took to close, or -1 */
	uint64_t progress_events;	/* the events and time of the last progress line */
	double progress_s;
	int pass;
	size_t nprobes;
	int quiet;
	int debuginfo_warned;	/* "cannot find module ... debuginfo" lines seen */
	struct strbuf all;	/* everything, for error reports */
};

/* How a collect ended, as data: the command turns it into its exit status
 * (collect_exit_code).  */
enum collect_outcome {
	COLLECT_OK,		/* done: what was asked is made, a profile complete */
	COLLECT_INCOMPLETE,	/* the profile was written, but events were lost */
	COLLECT_FAILED,		/* a phase failed, or the profile is not what was asked */
	COLLECT_REFUSED,	/* the options ask for what cannot be: a usage error */
	COLLECT_SIGNALED,	/* the command, or perun, ended by a signal (signal) */
};

/* What one collect made and how it ended.  The phases before the profile
 * set only outcome (and signal); collect_profile fills the rest.  */
struct collect_result {
	enum collect_outcome outcome;
	int signal;		/* COLLECT_SIGNALED: the signal's number */
	char *output;		/* the profile written, or NULL: none */
	int in_jobs;		/* output is a pending profile in .perun/jobs */
	int rescued;		/* output is a rescue file, not where it was asked for */
	int complete;		/* no event lost, every probe attached, the end seen */
	uint64_t lost;		/* the events known lost */
	uint64_t calls;		/* calls and points traced (--aggregate: counted) */
	size_t functions;	/* functions with calls in the summary */
	size_t threads;		/* threads that recorded calls */
	int metrics;		/* --metrics, and the profile's size was read: */
	size_t probe_points;	/* PL: probe locations */
	size_t reached;		/* PLR: those reached */
	uint64_t raw_bytes;	/* RDV: the raw stream */
	uint64_t events;	/* its events */
	uint64_t profile_bytes;	/* PS: the profile's size */
	double cpt_s;		/* CPT: the collect's run, from arming to the end */
	double prt_s;		/* PRT: the command's run time */
	double pt_s;		/* PT: perun's time, from its start to the profile */
	struct strv notes;	/* what the collect says after the profile is written
				 * (stats, the trace's warnings, how the command
				 * ended): lines for stderr, which the command prints
				 * after the line that names the profile */
};

/* The exit status perun collect ends with for r: 0 ok, 1 failed, 2 usage,
 * 3 written but incomplete, 128+N by signal N.  */
int collect_exit_code(const struct collect_result *r);

/* One collect: the options, and what each phase found.  */
struct session {
	struct collect_opts *o;	/* in: the options */
	struct watchdog wd;
	double t_start, t_collect0, t_collect1;
	struct collect_result result;	/* out: how it ended (the phases set outcome) */
	struct stap_log log;	/* what stap and the runtime said, over all phases */

	/* prepare */
	struct strv cmdv;	/* the command and its arguments */
	char *tmpdir;
	char *stap, *stapbpf, *staprun;
	enum runtime runtime;
	const char *runtime_why;
	char *release;		/* kernel release the module is for */
	struct kruntime kr;	/* kernel runtime: the runtime sources stap -R uses */

	/* analyse */
	char *cache_dir;	/* the module and analysis cache */
	struct target target;

	/* strategy, pre-optimize, plan */
	struct plan plan;
	struct script_opt sopt;	/* run-optimize code the methods put in the script */
	struct json_object *pre_opt;	/* what the pre-optimize methods did, or NULL */
	char **protected_funcs;	/* diff-tracing: the changed functions, sorted */
	size_t nprotected;
	struct json_object *diff_j;	/* what diff-tracing found, or NULL */
	char *selection_path;	/* --one-module: the ids the run records, or NULL */

	/* script */
	struct strbuf script;
	char *tapset_text;

	/* module */
	char key[SHA1_HEXSZ + 1];
	struct cache cache;
	int cache_open;
	const char *cache_state;
	char *module;		/* path of the module to run */

	/* run */
	struct run_result res;	/* what the runtime and the command did */
	char *raw;		/* trace.raw: the runtime's output */
	char *rec;		/* trace.rec: the recorder, from the fast read (may not exist) */
	char *runtime_prog;	/* the runtime program that ran */
	char *uprobes;		/* perun's own loader (perun-uprobes) when it runs, or NULL */
	const char *loader_why;	/* why stapbpf runs instead, or NULL */
	char *attached_path;	/* the run's uprobe_events lines, or NULL */
	struct json_object *probes_j;	/* {planned, attached, failed}, or NULL */
	size_t attached;	/* probe points attached (with attached_path) */
	int returns_exact;	/* the plan assumed perun's loader's return probes */
	unsigned char *ret_insn;	/* perun's loader: per probe, its returns probed on
					 * their instructions (else a uretprobe); or NULL */

	/* parse */
	int have_cal;		/* 1 when cal holds the probe cost */
	struct calibration cal;
	unsigned char *stepped;	/* per probe: its cost is calibrated stepwise */
	int budget_perun;	/* --max-overhead: the cost is perun's loader's */
	int budget_have;	/* --max-overhead: the cost is calibrated */
	unsigned char *points;	/* per probe: a point (no duration) */
	uint64_t *below_min;	/* --min-duration: per probe, the faster calls dropped */
};

/* Seconds on the monotonic clock.  */
double collect_now(void);
/* Ends the progress line on the terminal, when one is shown, so that what
 * follows starts on a line of its own.  */
void collect_progress_end(struct stap_log *l);
/* Writes one timed line to the watchdog log, when there is one.  */
void collect_wd(struct watchdog *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Identity of a file for the cache key: size and mtime ("-" when missing).  */
char *collect_file_identity(const char *path);
/* Splits s into words like a shell, without expanding anything; what names s
 * in the error.  */
int collect_split_words(const char *s, struct strv *out, const char *what);
/* A driver line callback: one line stap or stapbpf wrote (ctx: struct stap_log).  */
void collect_stap_line(void *ctx, const char *line);
/* The script's transport: --aggregate, else --transport, else record on bpf
 * and print on the kernel runtime.  */
enum script_mode collect_script_mode(const struct session *s);
/* The expected detach of n probe points on the kernel runtime, in seconds
 * (what "perun: attached" says; measured by bench/kernel-attach.sh).  */
double collect_kernel_detach_estimate(size_t points);
/* The recorder's map size in the script for --buffer-size n.  */
size_t collect_recorder_slots(size_t n);

/* s is empty, for the options o (which must outlive it).  */
void session_init(struct session *s, struct collect_opts *o);
/* Frees what the phases made; gzips (-z) or removes the temp files.  */
void session_release(struct session *s);

/* Where collect_pipeline stops.  */
enum collect_until {
	COLLECT_UNTIL_SCRIPT,	/* --script-only: s->script */
	COLLECT_UNTIL_MODULE,	/* --compile-only: s->module in the cache, s->key */
	COLLECT_UNTIL_PROFILE,	/* the whole collect */
};

/* Runs the phases in order, up to until; returns s->result.outcome: the
 * failed phase's, or collect_profile's (COLLECT_OK when until is reached).  */
enum collect_outcome collect_pipeline(struct session *s, enum collect_until until);

/* perun cache build: collect's arguments argv[1..argc) parsed as perun
 * collect --compile-only parses them (with --kernel-release kernel_release
 * when not NULL), and the module that collect would run compiled into the
 * cache; nothing runs.  s is initialised for o whatever the result (the
 * caller releases both): 0 with s->key and s->module; -1 when --help was
 * printed; else the exit status, said on stderr.  */
int collect_build_module(int argc, char **argv, const char *kernel_release,
			 struct collect_opts *o, struct session *s);

/* --- the phases, in order; each returns 0, or -1 after pr_error() ------------ */

/* prepare: s->o -> s->cmdv (the command, found on PATH), the runtime and its
 * programs, the temp dir and the watchdog log.  */
int collect_prepare(struct session *s);
/* analyse: the binary (-b, else the command) -> s->target (ELF/DWARF).  */
int collect_analyse(struct session *s);
/* strategy: s->target and the options -> s->plan, the candidate probes.  */
int collect_strategy(struct session *s);
/* --optimization-reset-cache: removes the cached analyses of binaries and
 * the methods' data from s->cache_dir.  */
int collect_reset_optimization_cache(struct session *s);
/* pre-optimize: resolves s->o->opt against what this collect has (a method
 * whose requirement is missing is switched off, with a notice), then the
 * methods rewrite s->plan and choose their run-optimize code (s->sopt).  */
int collect_pre_optimize(struct session *s);
/* pre-optimize, diff-tracing (collect/apply-difftrace.c): when active, compares
 * the binary with the baseline (-oa diff-baseline, diff-version) and fills
 * s->protected_funcs and s->diff_j; standalone, cuts s->plan to the changed
 * functions.  0, or -1 (reported).  */
int collect_diff_tracing(struct session *s);
/* True when diff-tracing protects the function name: a method that drops
 * probes must keep it.  */
int collect_protected(const struct session *s, const char *name);
void collect_diff_release(struct session *s);
struct parser;
/* --max-overhead (collect/budget.c): the probe cost per recorded call (the
 * calibration of the loader expected to run, else a default) and the
 * budget's window into s->sopt.  */
int collect_budget(struct session *s);
/* Once the loader is chosen: when it is not the one collect_budget
 * expected, the cost again; says when the cost is not calibrated.  1 when
 * the script must be made again with the new cost, 0, or -1.  */
int collect_budget_loader(struct session *s);
/* What the budget disarmed, from the run's o lines, into extra's
 * optimization.max_overhead; marks those summaries in sum partial and says
 * so on stderr.  1 when it disarmed a probe, else 0.  */
int collect_budget_report(struct session *s, const struct parser *parser,
			  struct json_object *extra, struct json_object *sum);
/* --one-module (collect/select.c): replaces s->plan by a probe for every
 * function of the binary and writes the ids of the old plan's probes to
 * s->selection_path; s->sopt.select_slots gates the script on them.  */
int collect_select(struct session *s);
/* script: s->plan -> s->script (templates/) and s->tapset_text.  */
int collect_script(struct session *s);

/* module: s->script (with s->plan, s->target, the runtime) -> s->module, a
 * private copy of the module from the cache (s->cache_state hit or miss), or
 * compiled afresh with -sc (off); s->key is the cache key.  */
int collect_module(struct session *s);

/* loader: on the bpf runtime, perun's own loader (s->uprobes) when the
 * kernel has uprobe_multi links and the trace needs nothing of a stap
 * script (no sampling or dynamic probing with --aggregate, no source
 * lines); then no module is built.  --loader perun makes a reason not to an error; with
 * stapbpf, a plan past the probe points it can open is refused.  */
int collect_loader(struct session *s);
/* Whether collect_loader is expected to choose perun's loader, before the
 * plan is made (what the plan alone refuses is not known yet).  */
int collect_loader_expected(struct session *s);

/* When the strategy assumed perun's loader (s->returns_exact) and it does
 * not run: what the strategy does for a target whose return probes break
 * (entry-only for the userspace strategy, a warning otherwise).  */
void collect_returns_fallback(struct session *s);
/* On perun's loader: PROBE_F_RET_UPROBE on the plan's functions whose
 * returns a uretprobe can time (collect/returns.c says which).  */
void collect_plan_returns(struct session *s);

/* run: s->module around s->cmdv -> s->res, s->raw (and s->rec), the attach
 * report; -1 when the runtime failed before the command ran (s->result:
 * how).  */
int collect_run(struct session *s);

struct profile_writer;
struct profile_column;
struct parser;
/* The profile's columns of plan's probes (new array of plan->n; the names
 * are the plan's).  */
struct profile_column *collect_columns(const struct plan *plan);
/* perun __parse: the raw stream raw of the plan stored at plan_path through
 * the parser into a profile out of form (profile/writer.h enum
 * profile_form); *result (new) says what it did: bytes, events, calls,
 * seconds, max_rss_kb.  */
int collect_reparse(const char *plan_path, const char *raw, const char *out, int form,
		    struct json_object **result);
/* parse: s->raw and s->rec through a parser into the profile writer w opened
 * on path (shown: its name in messages) with header and ci; *parser is the
 * caller's to free, also on failure.  -1: the profile could not be written.  */
int collect_parse(struct session *s, struct profile_writer *w, const char *path,
		  const char *shown, const char *origin, struct json_object *header,
		  struct json_object *ci, struct parser **parser);
/* How dynamic probing and the budget disarm a probe on this runtime
 * (script_opt.probing_cond): PROBING_COND_KERNEL, PROBING_COND_INLINE, or 0
 * when PERUN_PROBING_COND=0 keeps the gate in the handler's body.  */
int collect_probing_cond(const struct session *s);
/* Marks name's summary in sum partial (its count is not every call) and
 * adds key: val (taken; dropped when sum has no such function).  */
void collect_mark_partial(struct json_object *sum, const char *name, const char *key,
			  struct json_object *val);
/* True when the command line asked for optimization methods.  */
int collect_optimizing(const struct session *s);
/* post-optimize: what the methods did, from the run (parser's o lines), into
 * extra.optimization; marks the summaries in sum whose counts are partial
 * (disarmed, sampled) and says so on stderr.  */
void collect_post_optimize(struct session *s, const struct parser *parser,
			   struct json_object *extra, struct json_object *sum);
/* profile: where the profile goes, then parse and the profile's extra
 * (anomalies, summaries, metrics), with the warnings before it is written on
 * stderr; what was written, how the collect ended and what is to be said
 * after it (result.notes) into s->result, whose outcome it returns.  Prints
 * nothing of the result itself: that is the command's.  */
enum collect_outcome collect_profile(struct session *s);

/* "exit N" or "signal N (NAME)" into buf.  */
const char *collect_exit_desc(int exited, int status, char *buf, size_t n);

/* -z: gzips the temp files of tmpdir into logdir, names with stamp.  */
void collect_zip_temps(const char *tmpdir, const char *logdir, const char *stamp, int quiet);

#endif
