/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The parse and profile phases: the raw stream into the Perun profile, its
 * header, collector_info and extra (anomalies, summaries, metrics), where it
 * goes, and how the collect ended (struct collect_result).  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/calibration.h"
#include "collect/session.h"
#include "parse/parse.h"
#include "profile/machine.h"
#include "profile/writer.h"
#include "runtime/calibrate.h"
#include "runtime/driver.h"
#include "store/localyml.h"
#include "store/output.h"
#include "store/repo.h"
#include "store/stats.h"
#include "util/fs.h"
#include "util/log.h"
#include "vcs/vcs.h"

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

/* obj[name] += v: probes that share a name are one function.  */
static void add_count(struct json_object *obj, const char *name, uint64_t v)
{
	struct json_object *old;

	if (json_object_object_get_ex(obj, name, &old))
		v += (uint64_t)json_object_get_int64(old);
	json_object_object_add(obj, name, json_object_new_int64((int64_t)v));
}

static int cmp_probe_name(const void *a, const void *b, void *ctx)
{
	const struct plan *plan = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(plan->probes[x].name, plan->probes[y].name);

	return c ? c : (x > y) - (x < y);
}

/* The summary of each function name with calls, in plan order: probes that
 * share a name (a static function in several files, the out-of-line copies
 * of an inline one) are one uid in the profile's resources, so their
 * summary holds the calls of them all, not the last one's alone.  */
static void summary_by_name(const struct plan *plan, const struct profile_writer *w,
			    struct json_object *out)
{
	size_t *idx = xcalloc(plan->n + 1, sizeof(*idx));
	size_t i, j;

	for (i = 0; i < plan->n; i++)
		idx[i] = i;
	qsort_r(idx, plan->n, sizeof(*idx), cmp_probe_name, (void *)plan);
	for (i = 0; i < plan->n; i = j) {
		struct json_object *js;
		for (j = i; j < plan->n && !strcmp(plan->probes[idx[j]].name, plan->probes[idx[i]].name);
		     j++)
			;
		/* idx[i] is the lowest id of the name (the sort's tie-break) */
		js = profile_writer_summary_json(w, idx + i, j - i);
		if (js)
			json_object_object_add(out, plan->probes[idx[i]].name, js);
	}
	free(idx);
}

static struct json_object *make_header(struct session *s)
{
	struct json_object *h = json_object_new_object(), *u = json_object_new_object();

	json_object_object_add(h, "type", json_object_new_string("mixed"));
	json_object_object_add(u, "mixed(time delta)", json_object_new_string("ns"));
	json_object_object_add(h, "units", u);
	json_object_object_add(h, "cmd", json_object_new_string(s->o->cmd ? s->o->cmd
								: s->cmdv.n ? s->cmdv.v[0] : ""));
	if (s->o->pid > 0) {
		/* --pid: a process perun attached to, and for how long */
		struct json_object *a = json_object_new_object();
		const struct run_result *r = &s->res;
		json_object_object_add(a, "pid", json_object_new_int64(s->o->pid));
		json_object_object_add(a, "duration_s",
				       json_object_new_double((double)r->target_ns / 1e9));
		/* the detach: perun's loader's links closed, or another
		 * runtime's end after SIGINT (as the closing line says it) */
		if (s->log.detach_ms >= 0)
			json_object_object_add(a, "detach_s",
					       json_object_new_double(s->log.detach_ms / 1e3));
		else if (r->stop_ns)
			json_object_object_add(a, "detach_s",
					       json_object_new_double((double)r->stop_ns / 1e9));
		json_object_object_add(a, "ended_by",
				       json_object_new_string(r->target_gone ? "process-exit"
							      : r->detached_at_timeout ? "timeout"
							      : r->interrupted ? "interrupt"
										: "runtime-end"));
		json_object_object_add(h, "attach", a);
	}
	json_object_object_add(h, "args", json_object_new_string(s->o->args ? s->o->args : ""));
	json_object_object_add(h, "workload",
			       json_object_new_string(s->o->workload ? s->o->workload : ""));
	return h;
}

static struct json_object *make_collector_info(struct session *s)
{
	struct collect_opts *o = s->o;
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
						      : collect_script_mode(s) == SCRIPT_RECORD ? "record"
											: "print"));
	json_object_object_add(p, "buffer_size", json_object_new_int64((int64_t)o->buffer_size));
	json_object_object_add(p, "strict", json_object_new_boolean(o->strict));
	if (collect_optimizing(s)) {
		struct json_object *oj = opt_json(&o->opt);
		if (s->pre_opt)	/* what the pre-optimize methods removed and sampled */
			json_object_object_add(oj, "pre_optimize", json_object_get(s->pre_opt));
		json_object_object_add(p, "optimization", oj);
	}
	json_object_object_add(ci, "params", p);
	return ci;
}

/* The machine's name for the machine region: collect's own (perun run's
 * --machine), else the machine key of the repository's local.yml, else
 * none.  Caller frees.  */
static char *machine_name(const struct collect_opts *o)
{
	char *pd, *path, *name = NULL;

	if (o->machine)
		return xstrdup(o->machine);
	if (!(pd = repo_locate()))
		return NULL;
	path = xstrfmt("%s/local.yml", pd);
	if (config_read_machine(path, &name) < 0)
		pr_warn("the profile carries no machine name: local.yml's machine is bad (said "
			"above)");
	free(path);
	free(pd);
	return name;
}

static char *default_output(struct session *s, int *in_jobs)
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

/* Whether the trace is an attach (--pid).  */
static int o_pid(const struct session *s)
{
	return s->o->pid > 0;
}

/* Calls whose return never came have no call record, only a count (the
 * summary's no_duration): say how many, and why, in s->result.notes.  */
static void warn_unfinished(struct session *s, const struct parse_stats *ps,
			    const uint64_t *unfinished)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, shown = 0;
	uint64_t missed = ps->missed_returns - ps->beyond_return_limit;
	uint64_t rest = ps->unmatched_entries - ps->missed_returns;

	for (i = 0; i < s->plan.n; i++)
		if (unfinished[i] && shown++ < 5)
			strbuf_addf(&sb, "%s%s %" PRIu64, shown > 1 ? ", " : "",
				    s->plan.probes[i].name, unfinished[i]);
	log_keep(&s->result.notes, "perun",
		 "%" PRIu64 " calls are counted without a duration (no_duration in the "
		 "summary): %s%s",
		 ps->unmatched_entries, strbuf_str(&sb), shown > 5 ? ", ..." : "");
	if (ps->beyond_return_limit)
		log_keep(&s->result.notes, "perun",
			 "%" PRIu64 " of them returned unseen: the kernel keeps at most %d return "
			 "probes pending per thread and these were entered deeper (a deep "
			 "recursion)%s",
			 ps->beyond_return_limit, PARSE_URETPROBE_DEPTH,
			 s->uprobes ? "; perun's loader gave them uretprobes, as the binary's call "
				      "graph shows no cycle through them (a callback from a library "
				      "function perun does not know to call back)"
				    : "; perun's loader (the bpf runtime on Linux 6.6 and later) "
				      "times calls at any depth");
	if (missed)
		log_keep(&s->result.notes, "perun",
			 "%" PRIu64 " of them returned unseen: the function left by a way its "
			 "return probes do not cover (an indirect jump, or a return that could "
			 "not be probed)",
			 missed);
	if (ps->unwound)
		log_keep(&s->result.notes, "perun",
			 "%" PRIu64 " of them never returned: a longjmp or C++ exception went past "
			 "them%s",
			 ps->unwound,
			 (s->target.longjmp || s->target.exceptions) && !s->uprobes
				 ? " (--entry-only counts such calls without return probes)"
				 : "");
	if (rest > ps->unwound)
		log_keep(&s->result.notes, "perun", "%" PRIu64 " of them were still running when %s",
			 rest - ps->unwound,
			 o_pid(s) ? "perun detached" : "the trace ended (the process exited inside them)");
	strbuf_release(&sb);
}

/* Appends the first five functions that lost events, with their losses.  */
static void add_lost_names(struct strbuf *sb, const struct session *s, const uint64_t *lost)
{
	size_t i, shown = 0;

	for (i = 0; i < s->plan.n; i++) {
		if (!lost[i])
			continue;
		if (shown++ == 5) {
			strbuf_addstr(sb, ", ...");
			break;
		}
		strbuf_addf(sb, "%s%s %" PRIu64, shown > 1 ? ", " : "", s->plan.probes[i].name,
			    lost[i]);
	}
}

/* Says how the trace is incomplete (in s->result.notes): always, even with -q.  */
static void warn_incomplete(struct session *s, const struct parse_stats *ps,
			    const uint64_t *lost)
{
	uint64_t total = s->log.lost_events + ps->lost_events + ps->missing_records;
	struct strbuf sb = STRBUF_INIT;

	if (ps->transport_lost) {
		strbuf_addf(&sb, "the relay was full and dropped %" PRIu64 " events (",
			    s->log.lost_events);
		add_lost_names(&sb, s, lost);
		strbuf_addstr(&sb, "; lost_by_function in the profile): trace fewer calls (-g N, "
				   "--include) or use --transport record");
	} else if (ps->lost_events) {
		strbuf_addf(&sb, "%" PRIu64 " events did not fit the recorder's buffer of %zu (",
			    ps->lost_events, s->o->buffer_size);
		add_lost_names(&sb, s, lost);
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
	} else if (s->res.killed_at_stop > 0) {
		strbuf_addf(&sb, "%s had not ended %.0f s after it was asked to stop, showing no "
				 "work (writing, detaching, waiting in the kernel), and was killed "
				 "before its end marker",
			    s->runtime_prog ? s->runtime_prog : "the runtime", s->res.killed_at_stop);
	} else {
		strbuf_addstr(&sb, "the runtime stopped before its end marker");
	}
	if (s->runtime == RUNTIME_KERNEL && !s->kr.txfix)
		strbuf_addstr(&sb, "; stap's stock relay transport loses events: prepare perun's "
				   "patched runtime (see perun doctor)");
	if (total)
		log_keep(&s->result.notes, "perun: warning",
			 "the trace is incomplete (%" PRIu64 " events lost): %s", total, sb.buf);
	else
		log_keep(&s->result.notes, "perun: warning",
			 "the trace is incomplete (how many events were lost is unknown): %s",
			 sb.buf);
	strbuf_release(&sb);
}

/* Writing *output (or *staged) failed: write the profile again, once, into
 * a rescue file, so a finished trace is never thrown away.  When writing the
 * rescue file fails too (a full disk), it is removed: an empty or cut
 * profile left in .perun/jobs would fail every later status and add.  */
static int to_rescue(char **output, char **staged, int *rescued)
{
	char *pd, *jobs = NULL, *r;

	if (*rescued) {
		if (unlink(*output) < 0 && errno != ENOENT)
			pr_error_errno("cannot remove %s", *output);
		else
			log_msg(0, "perun", "cannot write %s either: removed it, no profile was kept",
				*output);
		return -1;
	}
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
	log_msg(0, "perun", "cannot write %s: writing the profile to %s instead", *output, r);
	free(*output);
	*output = r;
	return 0;
}

/* --min-duration: a call faster than the threshold is counted, not kept.  */
struct min_filter {
	struct profile_writer *w;
	uint64_t min_ns;
	uint64_t *below;
};

static int min_filter_call(void *ctx, const struct call_record *r)
{
	struct min_filter *m = ctx;

	if (!r->point && r->amount < m->min_ns) {
		m->below[r->probe]++;
		return 0;
	}
	return profile_writer_call(m->w, r);
}

struct profile_column *collect_columns(const struct plan *plan)
{
	struct profile_column *c = xcalloc(plan->n ? plan->n : 1, sizeof(*c));
	size_t i;

	for (i = 0; i < plan->n; i++) {
		const struct probe *pr = &plan->probes[i];
		c[i].name = pr->name;
		c[i].sampling = pr->sampling;
		c[i].entry = pr->flags & PROBE_F_ENTRY_STEPPED	  ? 2
			     : pr->flags & PROBE_F_ENTRY_EMULATED ? 1
								  : 0;
	}
	return c;
}

int collect_reparse(const char *plan_path, const char *raw, const char *out, int form,
		    struct json_object **result)
{
	struct plan plan;
	struct profile_writer w;
	struct profile_column *cols;
	struct parser *p;
	struct json_object *h, *ci;
	struct timespec t0, t1;
	struct rusage ru;
	unsigned char *points;
	size_t i;
	int ret = -1;

	if (plan_load(&plan, plan_path) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	points = xcalloc(plan.n ? plan.n : 1, 1);
	for (i = 0; i < plan.n; i++)
		points[i] = plan.probes[i].kind == PROBE_USDT_POINT || plan.probes[i].kind == PROBE_LINE;
	cols = collect_columns(&plan);
	h = json_object_new_object();
	json_object_object_add(h, "type", json_object_new_string("mixed"));
	ci = json_object_new_object();
	json_object_object_add(ci, "name", json_object_new_string("trace"));
	if (profile_writer_open(&w, out, cols, plan.n, NULL, h, ci, NULL, form) < 0)
		goto out;
	p = parser_new(plan.n, points, profile_writer_call, &w);
	if (parser_feed_file(p, raw) < 0 || parser_finish(p) < 0 ||
	    profile_writer_close(&w, parser_stats(p), NULL) < 0) {
		profile_writer_abort(&w);
		parser_free(p);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru);
	*result = json_object_new_object();
	json_object_object_add(*result, "bytes", json_object_new_int64((int64_t)parser_stats(p)->bytes));
	json_object_object_add(*result, "events", json_object_new_int64((int64_t)parser_stats(p)->events));
	json_object_object_add(*result, "calls", json_object_new_int64((int64_t)parser_stats(p)->calls));
	json_object_object_add(*result, "seconds",
			       json_object_new_double((double)(t1.tv_sec - t0.tv_sec) +
						      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9));
	json_object_object_add(*result, "max_rss_kb", json_object_new_int64(ru.ru_maxrss));
	parser_free(p);
	ret = 0;
out:
	json_object_put(h);
	json_object_put(ci);
	free(cols);
	free(points);
	plan_release(&plan);
	return ret;
}

int collect_parse(struct session *s, struct profile_writer *w, const char *path,
		  const char *shown, const char *origin, struct json_object *header,
		  struct json_object *ci, struct parser **parserp)
{
	struct collect_opts *o = s->o;
	struct probe_cost cost;
	struct parser *parser;
	/* where it ran, and the probe cost its calibrated amounts subtract */
	char *mname = machine_name(o);
	struct json_object *machine =
	    machine_region(s->have_cal > 0 ? calibration_json(&s->cal) : NULL, mname);
	struct profile_column *cols = collect_columns(&s->plan);
	int opened = profile_writer_open(w, path, cols, s->plan.n, origin, header, ci, machine,
					 o->aggregate  ? PROFILE_SUMMARIES
					 : o->per_call ? PROFILE_PER_CALL
						       : PROFILE_COMPACT);

	free(cols);
	free(mname);
	json_object_put(machine);
	if (opened < 0) {
		profile_writer_abort(w);	/* frees what open kept */
		return -1;
	}
	if (s->have_cal > 0 && !o->aggregate) {
		cost.probe_ns = s->cal.probe_ns;
		cost.pair_ns = s->cal.pair_ns;
		cost.stepped_ns = s->cal.stepped_ns;
		cost.insn_probe_ns = s->cal.insn_probe_ns;
		cost.insn_pair_ns = s->cal.insn_pair_ns;
		if (!s->stepped)
			s->stepped = plan_stepped(&s->plan);
		profile_writer_calibrate(w, &cost, s->stepped);
	}
	static struct min_filter mf;
	if (o->min_duration_ns && !o->aggregate) {
		free(s->below_min);
		s->below_min = xcalloc(s->plan.n ? s->plan.n : 1, sizeof(*s->below_min));
		mf = (struct min_filter){ w, o->min_duration_ns, s->below_min };
		parser = *parserp = parser_new(s->plan.n, s->points, min_filter_call, &mf);
	} else {
		parser = *parserp = parser_new(s->plan.n, s->points, profile_writer_call, w);
	}
	/* both runtimes trace through the kernel's uprobes and uretprobes */
	parser_set_return_limit(parser, PARSE_URETPROBE_DEPTH);
	/* perun's loader: which returns were probed on their instructions */
	if (s->ret_insn) {
		parser_set_insn(parser, s->ret_insn);
		if (!o->aggregate)
			profile_writer_set_returns(w, s->ret_insn);
	}
	/* trace.rec, from the fast read, after trace.raw: the recorder's events
	 * are held until parser_finish, and one read twice counts once */
	if (parser_feed_file(parser, s->raw) < 0 ||
	    (fs_exists(s->rec) && parser_feed_file(parser, s->rec) < 0) ||
	    parser_finish(parser) < 0) {
		profile_writer_abort(w);
		return pr_error("writing %s failed", shown);
	}
	if (o->aggregate) {
		size_t na, k;
		const struct agg_record *ag = parser_aggregates(parser, &na);
		for (k = 0; k < na; k++)
			if (profile_writer_aggregate(w, &ag[k]) < 0) {
				profile_writer_abort(w);
				return pr_error("writing %s failed", shown);
			}
	}
	return 0;
}

/* A count per probe of the plan as {function: count}, the zeros left out.  */
static struct json_object *by_function(const struct session *s, const uint64_t *counts)
{
	struct json_object *lf = json_object_new_object();
	size_t i;

	for (i = 0; i < s->plan.n; i++)
		if (counts[i])
			add_count(lf, s->plan.probes[i].name, counts[i]);
	return lf;
}

/* The run as the profile records it: the runtime, the module, the probe
 * count, how the run ended and the target's exit.  */
static struct json_object *run_json(const struct session *s, const struct run_result *res)
{
	struct json_object *extra = json_object_new_object(), *tg = json_object_new_object();

	json_object_object_add(extra, "runtime", json_object_new_string(runtime_name(s->runtime)));
	/* who attached the probes, and on the bpf runtime why not perun's own
	 * loader when it did not */
	json_object_object_add(extra, "loader",
			       json_object_new_string(s->uprobes		   ? "perun-uprobes"
						      : s->runtime == RUNTIME_BPF ? "stapbpf"
										  : "staprun"));
	if (!s->uprobes && s->runtime == RUNTIME_BPF && s->loader_why)
		json_object_object_add(extra, "loader_reason", json_object_new_string(s->loader_why));
	if (s->runtime == RUNTIME_KERNEL) {
		json_object_object_add(extra, "kernel_release", json_object_new_string(s->release));
		json_object_object_add(extra, "kernel_runtime", json_object_new_string(s->kr.id));
	}
	json_object_object_add(extra, "module_cache", json_object_new_string(s->cache_state));
	json_object_object_add(extra, "cache_key", json_object_new_string(s->key));
	json_object_object_add(extra, "probes", json_object_new_int64((int64_t)plan_probe_points(&s->plan)));
	json_object_object_add(extra, "timed_out", json_object_new_boolean(res->timed_out));
	json_object_object_add(extra, "interrupted", json_object_new_boolean(res->interrupted));
	json_object_object_add(extra, "runtime_died", json_object_new_boolean(res->runtime_died));
	if (s->runtime == RUNTIME_BPF && collect_script_mode(s) == SCRIPT_RECORD)
		json_object_object_add(extra, "recorder_read",
				       json_object_new_string(res->before_stop == 0 ? "batch"
										   : "end-probe"));
	if (res->target_known) {
		json_object_object_add(tg, res->target_exited ? "exit" : "signal",
				       json_object_new_int(res->target_status));
		json_object_object_add(tg, "run_time_ns", json_object_new_int64((int64_t)res->target_ns));
		json_object_object_add(tg, "pid", json_object_new_int64(res->target_pid));
	}
	json_object_object_add(extra, "target", tg);
	return extra;
}

/* What went wrong on the way from the probes to the profile, counted.  */
static struct json_object *anomalies_json(const struct session *s, const struct parse_stats *ps,
					  struct parser *parser)
{
	struct json_object *an = json_object_new_object();

	json_object_object_add(an, "unmatched_entries", json_object_new_int64((int64_t)ps->unmatched_entries));
	json_object_object_add(an, "unwound", json_object_new_int64((int64_t)ps->unwound));
	json_object_object_add(an, "missed_returns",
			       json_object_new_int64((int64_t)ps->missed_returns));
	json_object_object_add(an, "beyond_return_limit",
			       json_object_new_int64((int64_t)ps->beyond_return_limit));
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
	json_object_object_add(an, "lost_by_function", by_function(s, parser_lost(parser)));
	json_object_object_add(an, "unfinished_by_function",
			       by_function(s, parser_unfinished(parser)));
	json_object_object_add(an, "unstarted_by_function",
			       by_function(s, parser_unstarted(parser)));
	json_object_object_add(an, "transport_errors",
			       json_object_new_int64((int64_t)s->log.transport_errors));
	json_object_object_add(an, "missing_begin", json_object_new_boolean(!ps->saw_begin));
	json_object_object_add(an, "missing_end", json_object_new_boolean(!ps->saw_end));
	return an;
}

/* Whether probe i saw a call, with or without a duration.  */
static int seen(const struct profile_writer *w, size_t i)
{
	return w->sum[i].count || w->sum[i].untimed || w->sum[i].below_min;
}

/* A command that died early explains its own missing calls: says, for each
 * function named on the command line that recorded no call, that the
 * command never reached it.  Returns how many.  */
static size_t say_named_zero(const struct session *s, const struct profile_writer *w,
			     const struct run_result *res, int incomplete)
{
	const struct collect_opts *o = s->o;
	size_t i, n = 0;

	if (o->opt.active[OPT_TIMED_SAMPLING]) {
		/* a function without a call may have run only in dormant windows:
		 * only a profile with no call at all is known to be wrong */
		uint64_t all = 0;
		for (i = 0; i < s->plan.n; i++)
			all += seen(w, i);
		if (all || !res->target_known || !res->target_exited || res->interrupted)
			return 0;
		log_msg(0, "perun: error",
			"timed sampling recorded no call: the command ran only while the probes "
			"were dormant, or called none of the %zu functions traced (a higher "
			"timed-sample-freq records more)",
			s->plan.n);
		return 1;
	}
	/* a sampled function records its first call: no call is never called */
	for (i = 0; res->target_known && res->target_exited && !res->interrupted &&
		    i < s->plan.n && (!s->attached_path || s->attached); i++) {
		const struct probe *pr = &s->plan.probes[i];
		size_t j, k;
		if (!(pr->flags & PROBE_F_NAMED) || seen(w, i))
			continue;
		if (pr->flags & PROBE_F_ALTERNATIVE) {
			/* an IFUNC's implementations: one of them is enough */
			for (j = i; j > 0 && (s->plan.probes[j - 1].flags & PROBE_F_ALTERNATIVE); j--)
				;
			for (k = j; k < s->plan.n && (s->plan.probes[k].flags & PROBE_F_ALTERNATIVE) &&
				    !seen(w, k); k++)
				;
			if (k < s->plan.n && (s->plan.probes[k].flags & PROBE_F_ALTERNATIVE))
				continue;
			if (i != j)
				continue;	/* said once for the group */
		}
		log_msg(0, "perun: error",
			"%s (%s), named on the command line, recorded no call: the command "
			"never reached it%s",
			pr->name, pr->binary,
			res->timed_out ? " before the timeout"
			: incomplete   ? " (or its events were lost: see the warning)"
				       : "");
		n++;
	}
	return n;
}

/* The processes of the trace into extra (perun's loader): each thread's
 * process, and the processes the traced ones started, followed or not.
 * *untraced gets how many were not followed, *late how many were followed
 * only from some time after their fork (their first calls are missing).  */
static void add_processes(struct json_object *extra, struct parser *parser, size_t *untraced,
			  size_t *late)
{
	size_t np, nc, ne, k;
	const struct parse_exec *pe;
	const struct parse_proc *pp = parser_processes(parser, &np);
	const struct parse_child *pc = parser_children(parser, &nc);
	struct json_object *procs = json_object_new_object(), *kids = json_object_new_array();

	*untraced = *late = 0;
	for (k = 0; k < np; k++) {
		char key[32];
		struct json_object *arr;
		snprintf(key, sizeof(key), "%" PRId64, pp[k].pid);
		if (!json_object_object_get_ex(procs, key, &arr)) {
			arr = json_object_new_array();
			json_object_object_add(procs, key, arr);
		}
		json_object_array_add(arr, json_object_new_int64(pp[k].thread));
	}
	for (k = 0; k < nc; k++) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "pid", json_object_new_int64(pc[k].pid));
		json_object_object_add(c, "parent", json_object_new_int64(pc[k].parent));
		json_object_object_add(c, "followed", json_object_new_boolean(pc[k].followed));
		if (pc[k].followed)
			json_object_object_add(c, "traced_after_ns",
					       json_object_new_int64((int64_t)pc[k].attach_ns));
		json_object_array_add(kids, c);
		if (!pc[k].followed)
			(*untraced)++;
		else if (pc[k].attach_ns)
			(*late)++;
	}
	if (np)
		json_object_object_add(extra, "threads_by_process", procs);
	else
		json_object_put(procs);
	json_object_object_add(extra, "children", kids);
	pe = parser_execs(parser, &ne);
	if (ne) {
		struct json_object *execs = json_object_new_array();
		for (k = 0; k < ne; k++) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "pid", json_object_new_int64(pe[k].pid));
			json_object_object_add(e, "probed", json_object_new_boolean(pe[k].probed));
			json_object_array_add(execs, e);
		}
		json_object_object_add(extra, "execs", execs);
	}
}

/* How long perun took before the target ran: preparing, arming, both.  */
static struct json_object *timing_json(const struct session *s, const struct run_result *res)
{
	struct json_object *tm = json_object_new_object();
	double before = s->t_collect0 - s->t_start;

	json_object_object_add(tm, "prepare_s", json_object_new_double(before));
	json_object_object_add(tm, "arm_s", json_object_new_double((double)res->ready_ns / 1e9));
	json_object_object_add(tm, "startup_s",
			       json_object_new_double(before + (double)res->ready_ns / 1e9));
	return tm;
}

/* One profile being written: what the steps of collect_profile share.  */
struct pwrite {
	struct session *s;
	char *output;		/* where the profile goes (its final name) */
	char *staged;		/* written here first, then published (NULL: at output) */
	int in_jobs;		/* output is in .perun/jobs */
	int rescued;		/* output is a rescue file, not what was asked for */
	char origin[41];	/* the commit it is filed against, when have_origin */
	int have_origin;
	char *origin_dir;	/* the work tree origin was read in */
	struct json_object *header, *ci, *extra; /* the profile's regions (owned) */
	struct json_object *sum; /* extra's summary (borrowed) */
	struct profile_writer w;
	struct parser *parser;
	double t_parse0;	/* when the parse began */
	size_t forked;		/* children the driver saw (perun's loader counts its own) */
	size_t untraced_kids;	/* children not followed */
	size_t late_kids;	/* children followed only from later than their fork */
	size_t reached;		/* probes with calls: a point 1, a function 2 */
	size_t unattached;	/* probe points that did not attach */
	size_t named_zero;	/* functions -f named that were never called */
	int incomplete;		/* events lost, returns unseen, probes or children missed */
	uint64_t traced;	/* calls and points in the profile written */
};

/* Where the profile goes (o->output, else .perun/jobs, never over another
 * profile) and the commit it is filed against.  0, or -1 (said).  */
static int pw_destination(struct pwrite *p)
{
	const struct collect_opts *o = p->s->o;

	if (o->output) {
		p->output = xstrdup(o->output);
	} else {
		p->output = default_output(p->s, &p->in_jobs);
		/* never replace a profile: write beside, then take a free name */
		if (!(p->staged = output_stage(p->output)) &&
		    to_rescue(&p->output, &p->staged, &p->rescued) < 0)
			return -1;
	}
	if (o->origin) {
		snprintf(p->origin, sizeof(p->origin), "%s", o->origin);
		p->have_origin = 1;
	} else {
		p->origin_dir = vcs_find_worktree(".");
		if (p->origin_dir && vcs_head(p->origin_dir, p->origin) == 0)
			p->have_origin = 1;
	}
	return 0;
}

/* The header and collector_info regions, with the probe calibration of the
 * loader that ran (for calibrated amounts; a failed measurement leaves them
 * out), and which probes are points.  */
static void pw_regions(struct pwrite *p)
{
	struct session *s = p->s;
	const struct collect_opts *o = s->o;
	size_t i;

	p->t_parse0 = collect_now();
	p->header = make_header(s);
	p->ci = make_collector_info(s);
	if (s->probes_j) {
		json_object_object_add(p->ci, "probes", s->probes_j);
		s->probes_j = NULL;
	}
	s->have_cal = calibration_get(s->runtime, s->uprobes ? "perun" : "stapbpf",
				      o->aggregate && o->calibrate ? -1 : o->calibrate, o->quiet,
				      &s->cal);
	json_object_object_add(json_object_object_get(p->ci, "params"), "calibration",
			       s->have_cal > 0 ? calibration_json(&s->cal) : NULL);
	free(s->points);
	s->points = xcalloc(s->plan.n ? s->plan.n : 1, 1);
	for (i = 0; i < s->plan.n; i++)
		s->points[i] = probe_is_point(&s->plan.probes[i]);
}

/* A new extra region: the run, its processes, timing, anomalies and the
 * parse's counts.  */
static void pw_extra(struct pwrite *p, const struct parse_stats *ps)
{
	struct session *s = p->s;
	struct json_object *extra;

	/* the relay's losses: its failure count (one per dropped output)
	 * or, when more, the events the script printed and the stream
	 * lacks (w lines; stock stap 4.8's stapio also drops silently) */
	if (ps->transport_lost > s->log.lost_events)
		s->log.lost_events = ps->transport_lost;
	json_object_put(p->extra);
	extra = p->extra = run_json(s, &s->res);
	add_processes(extra, p->parser, &p->untraced_kids, &p->late_kids);
	json_object_object_add(extra, "untraced_children",
			       json_object_new_int64((int64_t)(p->forked + p->untraced_kids)));
	json_object_object_add(extra, "timing", timing_json(s, &s->res));
	json_object_object_add(extra, "anomalies", anomalies_json(s, ps, p->parser));
	json_object_object_add(extra, "events", json_object_new_int64((int64_t)ps->events));
	json_object_object_add(extra, "calls", json_object_new_int64((int64_t)ps->calls));
	json_object_object_add(extra, "threads", json_object_new_int64((int64_t)ps->threads));
	json_object_object_add(extra, "max_depth", json_object_new_int64(ps->max_depth));
	json_object_object_add(extra, "raw_bytes", json_object_new_int64((int64_t)ps->bytes));
	json_object_object_add(extra, "bytes_per_event",
			       json_object_new_double(ps->events ? (double)ps->bytes / (double)ps->events : 0));
}

/* The per-function summary into sum, and how many probes were reached.  */
static void pw_summary(struct pwrite *p, struct json_object *sum)
{
	struct session *s = p->s;
	const struct parse_opt_record *r;
	size_t i, n;

	p->reached = 0;
	/* the loader counted every call of a sampled function */
	r = parser_opt_records(p->parser, &n);
	for (i = 0; i < n; i++)
		if (r[i].method == PARSE_OPT_SAMPLE_SEEN && r[i].id < s->plan.n &&
		    p->w.sum[r[i].id].sampled > 1)
			p->w.sum[r[i].id].counted = r[i].value;
	for (i = 0; i < s->plan.n; i++) {
		/* calls without a duration count with the others */
		p->w.sum[i].untimed = parser_unfinished(p->parser)[i];
		p->w.sum[i].below_min = s->below_min ? s->below_min[i] : 0;
		if (p->w.sum[i].count || p->w.sum[i].untimed || p->w.sum[i].below_min)
			p->reached += s->points[i] ? 1 : 2;
	}
	summary_by_name(&s->plan, &p->w, sum);
}

/* --min-duration: the functions whose faster calls were counted, not kept,
 * marked partial, and said.  */
static void pw_min_duration(struct pwrite *p, struct json_object *sum)
{
	struct session *s = p->s;
	const struct collect_opts *o = s->o;
	struct collect_result *r = &s->result;
	uint64_t dropped = 0;
	size_t i, untimed = 0;

	if (!s->below_min) {
		if (o->min_duration_ns && o->aggregate)
			log_keep(&r->notes, "perun",
				 "--min-duration cannot apply with --aggregate (the script keeps "
				 "summaries, not calls): every call is in them");
		return;
	}
	for (i = 0; i < s->plan.n; i++) {
		if (probe_is_point(&s->plan.probes[i]) && s->plan.probes[i].kind == PROBE_FUNC)
			untimed++;
		if (!s->below_min[i])
			continue;
		/* the summary counts them (below_min_duration) */
		collect_mark_partial(sum, s->plan.probes[i].name, "partial",
				     json_object_new_boolean(1));
		dropped += s->below_min[i];
	}
	json_object_object_add(p->extra, "min_duration_ns",
			       json_object_new_int64((int64_t)o->min_duration_ns));
	json_object_object_add(p->extra, "below_min_duration",
			       json_object_new_int64((int64_t)dropped));
	if (!o->quiet)
		pr_info("perun: --min-duration: kept the calls of %" PRIu64 " ns or "
			"more; %" PRIu64 " faster calls counted per function "
			"(below_min_duration), not kept",
			o->min_duration_ns, dropped);
	/* a call seen at its entry only has no duration to compare */
	if (untimed)
		log_keep(&r->notes, "perun",
			 "--min-duration cannot apply to the %zu function%s probed "
			 "at entry only (no duration): all their calls are kept",
			 untimed, untimed == 1 ? "" : "s");
}

/* --pid: an attach cuts calls in flight at both ends: their functions'
 * counts are partial, which is no loss.  */
static void pw_in_flight(struct pwrite *p, struct json_object *sum)
{
	const struct session *s = p->s;
	const uint64_t *a, *d;
	size_t i;

	if (s->o->pid <= 0)
		return;
	a = parser_unstarted(p->parser);
	d = parser_unfinished(p->parser);
	for (i = 0; i < s->plan.n; i++) {
		if (a[i])
			collect_mark_partial(sum, s->plan.probes[i].name, "in_flight_at_attach",
					     json_object_new_int64((int64_t)a[i]));
		if (d[i])
			collect_mark_partial(sum, s->plan.probes[i].name, "in_flight_at_detach",
					     json_object_new_int64((int64_t)d[i]));
	}
}

/* Whether the trace is complete: nothing lost, every probe point attached,
 * every child followed from its fork, every return seen (returns that came
 * unseen are counted, their durations missing).  */
static void pw_completeness(struct pwrite *p, const struct parse_stats *ps)
{
	const struct session *s = p->s;
	const struct collect_opts *o = s->o;

	p->unattached = s->attached_path && s->attached < plan_probe_points(&s->plan)
				? plan_probe_points(&s->plan) - s->attached
				: 0;
	/* --follow promises every child from its first instruction: one
	 * not traced, or traced from later, lacks calls */
	if (!o->follow)
		p->late_kids = 0;
	p->incomplete = s->log.transport_errors || s->log.lost_events || ps->lost_events ||
			ps->missing_records || !ps->saw_end || p->unattached ||
			(o->follow && p->untraced_kids) || p->late_kids || ps->missed_returns;
	json_object_object_add(p->extra, "complete", json_object_new_boolean(!p->incomplete));
}

/* --metrics into extra: the thesis' PL, PLR, RDV, CPT, PRT, PT.  */
static void pw_metrics(struct pwrite *p, const struct parse_stats *ps)
{
	const struct session *s = p->s;
	struct json_object *met;
	double pt;

	if (!s->o->metrics)
		return;
	pt = collect_now() - s->t_start;
	met = json_object_new_object();
	json_object_object_add(met, "PL", json_object_new_int64((int64_t)plan_probe_points(&s->plan)));
	json_object_object_add(met, "PLR", json_object_new_int64((int64_t)p->reached));
	json_object_object_add(met, "RDV_bytes", json_object_new_int64((int64_t)ps->bytes));
	json_object_object_add(met, "CPT_s", json_object_new_double(s->t_collect1 - s->t_collect0));
	json_object_object_add(met, "PRT_s", json_object_new_double((double)s->res.target_ns / 1e9));
	json_object_object_add(met, "PT_s_before_write", json_object_new_double(pt));
	json_object_object_add(met, "parse_s", json_object_new_double(collect_now() - p->t_parse0));
	json_object_object_add(p->extra, "metrics", met);
}

/* The raw stream parsed into the profile and its extra region completed
 * and written; a profile that cannot be written goes to a rescue file
 * instead.  0, or -1 (said).  */
static int pw_write(struct pwrite *p)
{
	struct session *s = p->s;
	const struct parse_stats *ps;
	struct json_object *sum;

	for (;;) {
		if (p->parser)
			parser_free(p->parser);
		p->parser = NULL;
		if (collect_parse(s, &p->w, p->staged ? p->staged : p->output, p->output,
				  p->have_origin ? p->origin : NULL, p->header, p->ci,
				  &p->parser) < 0) {
			if (to_rescue(&p->output, &p->staged, &p->rescued) == 0)
				continue;
			return -1;
		}
		ps = parser_stats(p->parser);
		sum = json_object_new_object();
		pw_extra(p, ps);
		pw_summary(p, sum);
		pw_min_duration(p, sum);
		pw_in_flight(p, sum);
		pw_completeness(p, ps);
		collect_post_optimize(s, p->parser, p->extra, sum);
		if (collect_budget_report(s, p->parser, p->extra, sum))
			json_object_object_add(p->extra, "sampled", json_object_new_boolean(1));
		json_object_object_add(p->extra, "summary", sum);
		p->sum = sum;
		json_object_object_add(p->extra, "stap_messages", json_object_get(s->log.messages));
		pw_metrics(p, ps);
		p->named_zero = say_named_zero(s, &p->w, &s->res, p->incomplete);
		if (profile_writer_close(&p->w, ps, p->extra) == 0)
			return 0;
		if (to_rescue(&p->output, &p->staged, &p->rescued) < 0)
			return -1;
	}
}

/* A staged profile renamed to its name (else it stays a rescue under the
 * staged name), and where it is in the result.  */
static void pw_publish(struct pwrite *p)
{
	struct collect_result *r = &p->s->result;

	if (p->staged) {
		char *final = output_publish(p->staged, p->output);
		free(p->output);
		p->output = final ? final : xstrdup(p->staged);
		p->rescued |= !final;
		free(p->staged);
		p->staged = NULL;
	}
	r->output = xstrdup(p->output);
	r->in_jobs = p->in_jobs;
	r->rescued = p->rescued;
}

/* What the profile holds, into the result (--metrics, calls, threads,
 * functions, completeness, losses).  */
static void pw_result(struct pwrite *p, const struct parse_stats *ps)
{
	const struct session *s = p->s;
	const struct collect_opts *o = s->o;
	struct collect_result *r = &p->s->result;
	struct stat st;

	if (o->metrics && stat(p->output, &st) == 0) {
		r->metrics = 1;
		r->probe_points = plan_probe_points(&s->plan);
		r->reached = p->reached;
		r->raw_bytes = ps->bytes;
		r->events = ps->events;
		r->profile_bytes = (uint64_t)st.st_size;
		r->cpt_s = s->t_collect1 - s->t_collect0;
		r->prt_s = (double)s->res.target_ns / 1e9;
		r->pt_s = collect_now() - s->t_start;
	}
	r->calls = ps->calls + ps->points + ps->unmatched_entries;
	r->threads = ps->threads;
	if (o->aggregate) {
		size_t na, k, j;
		const struct agg_record *ag = parser_aggregates(p->parser, &na);
		for (k = 0, r->threads = 0; k < na; k++) {
			r->calls += ag[k].count;
			for (j = 0; j < k && ag[j].thread != ag[k].thread; j++)
				;
			r->threads += j == k;
		}
	}
	r->functions = p->reached ? (size_t)json_object_object_length(p->sum) : 0;
	r->complete = !p->incomplete;
	r->lost = s->log.lost_events + ps->lost_events + ps->missing_records;
	p->traced = ps->calls + ps->points + ps->unmatched_entries;
}

/* post-optimize: dynamic stats for the next run (seeds/003 7.1.2), only
 * from a run that ended as it should: the counts of an interrupted, killed
 * or incomplete one would steer the next run wrong.  */
static void pw_stats(struct pwrite *p, const struct parse_stats *ps)
{
	const struct session *s = p->s;
	const struct run_result *res = &s->res;
	const struct collect_opts *o = s->o;
	struct collect_result *r = &p->s->result;

	if (res->interrupted || res->runtime_died || p->incomplete ||
	    (res->target_known && !res->target_exited)) {
		if (!o->quiet && p->have_origin)
			log_keep(&r->notes, "perun",
				 "stats: none stored: the run was %s, so its counts are not "
				 "the command's",
				 res->interrupted	   ? "interrupted"
				 : res->runtime_died ? "cut short by the runtime's end"
				 : p->incomplete	   ? "incomplete"
				 : res->timed_out	   ? "stopped at its timeout"
						   : "ended by a signal");
	} else {
		stats_after_collect(p->output, p->header, "trace", p->sum, ps->calls + ps->points,
				    p->have_origin ? p->origin : NULL, o->quiet, &r->notes);
	}
}

/* Why the trace is incomplete, said once by its main cause, and the
 * parse's anomalies.  */
static void pw_say_incomplete(struct pwrite *p, const struct parse_stats *ps)
{
	struct session *s = p->s;
	const struct collect_opts *o = s->o;
	struct collect_result *r = &s->result;
	size_t nkids = 0;
	int lost = s->log.transport_errors || s->log.lost_events || ps->lost_events ||
		   ps->missing_records || !ps->saw_end;

	parser_children(p->parser, &nkids);
	if (p->incomplete && (p->late_kids || (o->follow && p->untraced_kids)) &&
	    !(lost || p->unattached))
		log_keep(&r->notes, "perun: warning",
			 "the trace is incomplete: of the %zu child process%s --follow saw, "
			 "%zu could not be traced and %zu were traced only from some time "
			 "after their fork (trace.children[].traced_after_ns), so their "
			 "calls are missing or begin late",
			 nkids, nkids == 1 ? "" : "es", p->untraced_kids, p->late_kids);
	else if (p->incomplete && !p->unattached && ps->missed_returns && !lost)
		log_keep(&r->notes, "perun: warning",
			 "the trace is incomplete: %" PRIu64 " calls returned unseen, so "
			 "they are counted without a duration (said below)",
			 ps->missed_returns);
	else if (p->incomplete && p->unattached && !lost)
		log_keep(&r->notes, "perun: warning",
			 "the trace is incomplete: %zu of %zu probe points did not attach "
			 "(named above), so their calls are missing",
			 p->unattached, plan_probe_points(&s->plan));
	else if (p->incomplete)
		warn_incomplete(s, ps, parser_lost(p->parser));
	if (o->quiet)
		return;
	if (ps->unmatched_entries || ps->unmatched_exits || ps->truncated_lines ||
	    ps->malformed_lines || ps->duplicates || s->log.lost_events || ps->lost_events ||
	    ps->missing_records)
		log_keep(&r->notes, "perun",
			 "anomalies: %" PRIu64 " unfinished calls, %" PRIu64
			 " unmatched returns, %" PRIu64 " truncated and %" PRIu64
			 " malformed lines, %" PRIu64 " duplicates, %" PRIu64 " lost events",
			 ps->unmatched_entries, ps->unmatched_exits, ps->truncated_lines,
			 ps->malformed_lines, ps->duplicates,
			 s->log.lost_events + ps->lost_events + ps->missing_records);
	if (ps->unmatched_entries)
		warn_unfinished(s, ps, parser_unfinished(p->parser));
}

/* -vt: the raw stream kept beside the profile, the fast read's events too
 * (the stream as the end probe writes it).  */
static void pw_keep_raw(const struct pwrite *p)
{
	const struct session *s = p->s;
	char *keep;
	struct strbuf sb = STRBUF_INIT;

	if (!s->o->verbose_trace)
		return;
	keep = xstrfmt("%s.raw", p->output);
	if (strbuf_read_file(&sb, s->raw) == 0 &&
	    (!fs_exists(s->rec) || strbuf_read_file(&sb, s->rec) == 0))
		fs_write_atomic(keep, sb.buf, sb.len, 0644);
	strbuf_release(&sb);
	free(keep);
}

/* How the traced command or process ended, said; the outcome it makes of
 * a written profile's.  */
static enum collect_outcome pw_say_run_end(struct pwrite *p, enum collect_outcome ret)
{
	struct session *s = p->s;
	const struct collect_opts *o = s->o;
	const struct run_result *res = &s->res;
	struct collect_result *r = &s->result;
	char desc[64];

	if (!o->follow && (p->forked || p->untraced_kids) && !o->quiet)
		log_keep(&r->notes, "perun",
			 "the %s started %zu child process%s; only its own process was traced "
			 "(--follow traces them too)",
			 o->pid > 0 ? "process" : "command", p->forked + p->untraced_kids,
			 p->forked + p->untraced_kids == 1 ? "" : "es");
	if (res->timed_out && !o->quiet)
		log_keep(&r->notes, "perun", "timeout of %.1f s reached: the command was terminated",
			 o->timeout);
	if (res->runtime_died) {
		if (p->traced)
			log_keep(&r->notes, "perun",
				 "%s ended (%s) while the command ran, so perun stopped the "
				 "command; the profile holds the %" PRIu64 " call%s traced before",
				 s->runtime_prog,
				 collect_exit_desc(res->exited, res->status, desc, sizeof(desc)),
				 p->traced, p->traced == 1 ? "" : "s");
		else
			log_keep(&r->notes, "perun",
				 "%s ended (%s) while the command ran, so perun stopped the "
				 "command; the profile holds no call: what was traced was lost "
				 "with the runtime",
				 s->runtime_prog,
				 collect_exit_desc(res->exited, res->status, desc, sizeof(desc)));
		ret = COLLECT_FAILED;
	} else if (res->target_known && res->target_exited && res->target_status != 0) {
		log_keep(&r->notes, "perun", "target exited with status %d", res->target_status);
	} else if (res->target_known && !res->target_exited && !res->timed_out &&
		   !res->interrupted) {
		log_keep(&r->notes, "perun",
			 "the command was killed by signal %d (%s); the profile records what ran",
			 res->target_status, strsignal(res->target_status));
		if (res->target_status == SIGABRT && s->target.exceptions &&
		    plan_probe_points(&s->plan) > s->plan.n)
			log_keep(&r->notes, "perun: hint",
				 "%s throws C++ exceptions, which abort when they unwind through a "
				 "return probe: trace with --entry-only",
				 s->target.path);
		ret = COLLECT_SIGNALED;
		r->signal = res->target_status;
	}
	return ret;
}

/* --pid: from which process perun detached, after how long, why, and what
 * the detach took.  */
static void pw_say_detach(const struct pwrite *p)
{
	struct session *s = p->s;
	const struct collect_opts *o = s->o;
	const struct run_result *res = &s->res;
	char took[64] = "";

	if (o->pid <= 0 || o->quiet)
		return;
	/* perun's loader measured its own detach (the links closed: the
	 * process runs free); another runtime's is its end after SIGINT */
	if (s->log.detach_ms >= 0)
		snprintf(took, sizeof(took),
			 s->log.detach_ms >= 10 ? "; the detach took %.0f ms"
			 : s->log.detach_ms >= 1 ? "; the detach took %.1f ms"
						 : "; the detach took %.2f ms",
			 s->log.detach_ms);
	else if (res->stop_ns)
		snprintf(took, sizeof(took), "; the detach took %.1f s", (double)res->stop_ns / 1e9);
	log_keep(&s->result.notes, "perun", "detached from process %ld after %.1f s (%s)%s",
		 o->pid, (double)res->target_ns / 1e9,
		 res->target_gone ? "it exited" : res->detached_at_timeout ? "-t reached"
		 : res->interrupted ? "interrupted" : "the runtime ended", took);
}

/* The outcome of a collect whose profile was written: complete or not, how
 * the run ended, and what makes it a failure after all (nothing attached, a
 * named function never called, the profile not where it was asked for).  */
static enum collect_outcome pw_outcome(struct pwrite *p)
{
	struct session *s = p->s;
	const struct collect_opts *o = s->o;
	struct collect_result *r = &s->result;
	enum collect_outcome ret;

	ret = !p->incomplete ? COLLECT_OK : o->strict ? COLLECT_FAILED : COLLECT_INCOMPLETE;
	ret = pw_say_run_end(p, ret);
	pw_say_detach(p);
	/* Ctrl-C is how an attached trace ends: not a failure */
	if (s->res.interrupted && o->pid <= 0) {
		ret = COLLECT_SIGNALED;
		r->signal = driver_signal_received() ? driver_signal_received() : 2;
	}
	if ((ret == COLLECT_OK || ret == COLLECT_INCOMPLETE) && s->attached_path && !s->attached) {
		log_keep(&r->notes, "perun: error",
			 "no probe attached, so nothing was traced (see the probes named above)");
		ret = COLLECT_FAILED;
	}
	if (p->named_zero && (ret == COLLECT_OK || ret == COLLECT_INCOMPLETE))
		ret = COLLECT_FAILED;
	/* a profile not where it was asked for is not what was asked */
	if (p->rescued && (ret == COLLECT_OK || ret == COLLECT_INCOMPLETE))
		ret = COLLECT_FAILED;
	return ret;
}

static void pw_release(struct pwrite *p)
{
	if (p->staged)
		unlink(p->staged);
	free(p->staged);
	if (p->parser)
		parser_free(p->parser);
	json_object_put(p->header);
	json_object_put(p->ci);
	json_object_put(p->extra);
	free(p->output);
	free(p->origin_dir);
}

enum collect_outcome collect_profile(struct session *s)
{
	struct pwrite p;
	enum collect_outcome ret = COLLECT_FAILED;

	memset(&p, 0, sizeof(p));
	p.s = s;
	/* perun's loader counts the children itself (j lines), also --follow's;
	 * so does the kernel runtime's script with --follow */
	p.forked = s->uprobes || s->sopt.follow ? 0 : s->res.forked;
	if (pw_destination(&p) == 0) {
		pw_regions(&p);
		if (pw_write(&p) == 0) {
			const struct parse_stats *ps = parser_stats(p.parser);
			pw_publish(&p);
			pw_result(&p, ps);
			pw_stats(&p, ps);
			pw_say_incomplete(&p, ps);
			pw_keep_raw(&p);
			ret = pw_outcome(&p);
		}
	}
	s->result.outcome = ret;
	pw_release(&p);
	return ret;
}
