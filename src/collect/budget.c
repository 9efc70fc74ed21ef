/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The overhead budget (--max-overhead PCT): instead of SystemTap's overload
 * abort, which ends the whole trace, the script disarms the hottest probes
 * once what the recorded calls cost (the calibrated cost per call times the
 * calls of a window) passes PCT % of the window's wall time, and says which
 * and when (templates/opt_budget.stp.in).  The estimate counts recorded
 * calls only: a disarmed probe's hit still costs its trap where the runtime
 * keeps the uprobe; perun's loader removes a disarmed probe from the kernel
 * (bench/disarm.sh measures what disarming saves).  */
#include "config.h"

#define PR_FMT "perun collect"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/calibration.h"
#include "collect/session.h"
#include "parse/parse.h"
#include "util/log.h"
#include "util/strbuf.h"

/* The window the budget is checked over.  */
#define BUDGET_WINDOW_MS 20
/* A recorded call's cost when perun calibrate has not measured it: about
 * what a pair of uprobes with the recorder costs on our machines (bpf). */
#define BUDGET_DEFAULT_NS 2000
/* Disarmed probes named on stderr, at most.  */
#define BUDGET_SHOWN 5

/* The cost per recorded call into s->sopt: the calibration of the loader
 * expected to run (perun's own, or stapbpf), else the default.  */
static void budget_cost(struct session *s, int perun)
{
	struct collect_opts *o = s->o;
	struct calibration cal;
	double ns = BUDGET_DEFAULT_NS;
	int have = 0;

	memset(&cal, 0, sizeof(cal));
	s->sopt.budget_stepped_ns = 0;
	s->sopt.budget_insn_ns = 0;
	/* the calibration is this host's: a module built for another kernel
	 * (-r) gets the default, like the host that runs it without one */
	if (o->calibrate && !o->kernel_release)
		have = calibration_get(s->runtime, perun ? "perun" : "stapbpf", o->calibrate, 1,
				       &cal) > 0;
	if (have && cal.pair_ns >= 1) {
		ns = cal.pair_ns;
		/* a function whose first instruction is stepped out of line costs
		 * a trap more per call (collect_script marks which) */
		if (cal.stepped_ns > cal.probe_ns)
			s->sopt.budget_stepped_ns = (uint64_t)(cal.stepped_ns - cal.probe_ns + 0.5);
		/* perun's loader: a return on its instructions costs a trap more
		 * than a uretprobe (the loader knows which functions have them) */
		if (perun && cal.insn_pair_ns > cal.pair_ns)
			s->sopt.budget_insn_ns = (uint64_t)(cal.insn_pair_ns - cal.pair_ns + 0.5);
	} else {
		have = 0;
	}
	/* to 100 ns: the cost is in the script, so in the module cache key, and
	 * a calibration run again should not make every module anew */
	s->sopt.budget_call_ns = ns < 100 ? 100 : (uint64_t)(ns / 100 + 0.5) * 100;
	s->sopt.budget_stepped_ns = (s->sopt.budget_stepped_ns + 50) / 100 * 100;
	s->sopt.budget_insn_ns = (s->sopt.budget_insn_ns + 50) / 100 * 100;
	s->sopt.budget_calibrated = have;
	s->budget_perun = perun;
	s->budget_have = have;
}

int collect_budget(struct session *s)
{
	struct collect_opts *o = s->o;

	if (o->max_overhead <= 0)
		return 0;
	if (o->aggregate)
		return pr_error("--max-overhead disarms probes that record each call: not with "
				"--aggregate");
	budget_cost(s, collect_loader_expected(s));
	s->sopt.budget_pct = o->max_overhead;
	s->sopt.budget_window_ms = BUDGET_WINDOW_MS;
	/* PCT of the time the run would take untraced: probe time c in a
	 * window w is an overhead of c / (w - c), at most PCT / 100 when c is
	 * at most w * PCT / (100 + PCT) */
	s->sopt.budget_allowed_ns = (uint64_t)(o->max_overhead / (100.0 + o->max_overhead) *
						       BUDGET_WINDOW_MS * 1e6 +
					       0.5);
	if (!s->sopt.budget_allowed_ns)
		s->sopt.budget_allowed_ns = 1;
	/* the kernel runtime unregisters a probe whose condition turns false:
	 * a disarmed probe then costs nothing (bench/disarm.sh); stapbpf would
	 * only test it in the handler, like the budget's own gate */
	if (collect_probing_cond(s) == PROBING_COND_KERNEL)
		s->sopt.probing_cond = PROBING_COND_KERNEL;
	return 0;
}

int collect_budget_loader(struct session *s)
{
	struct collect_opts *o = s->o;
	int again = 0;

	if (!s->sopt.budget_allowed_ns)
		return 0;
	/* a plan the loader refused: the cost is stapbpf's, and in its script */
	if (s->budget_perun != (s->uprobes != NULL)) {
		budget_cost(s, s->uprobes != NULL);
		again = !s->uprobes;
	}
	if (!s->budget_have && !o->quiet)
		pr_info("perun: --max-overhead: the probe cost of this host is not calibrated, "
			"so the budget assumes %d ns per recorded call; run 'perun calibrate%s' "
			"once for a measured one",
			BUDGET_DEFAULT_NS,
			s->runtime == RUNTIME_KERNEL ? "" : s->uprobes ? ""
								: " --loader stapbpf");
	collect_wd(&s->wd, "budget: %g %% of %u ms windows, %" PRIu64 " ns per call (%s, %s)",
		   o->max_overhead, BUDGET_WINDOW_MS, s->sopt.budget_call_ns,
		   s->budget_have ? "calibrated" : "default",
		   s->runtime != RUNTIME_BPF ? "kernel runtime"
		   : s->uprobes ? "perun's loader" : "stapbpf");
	return again;
}

/* Marks a function's summary: the budget disarmed it.  */
static void mark(struct json_object *sum, const char *name, uint64_t calls, double at_s)
{
	collect_mark_partial(sum, name, "disarmed_after", json_object_new_int64((int64_t)calls));
	collect_mark_partial(sum, name, "disarmed_by", json_object_new_string("max-overhead"));
	collect_mark_partial(sum, name, "disarmed_at_s", json_object_new_double(at_s));
}

int collect_budget_report(struct session *s, const struct parser *parser,
			  struct json_object *extra, struct json_object *sum)
{
	const struct parse_opt_record *r;
	struct json_object *b, *dis, *opt;
	struct strbuf names = STRBUF_INIT;
	uint64_t *calls, *at, *after, over = 0, nafter = 0;
	size_t n, i, ndis = 0;
	int unregister;

	if (!s->sopt.budget_allowed_ns)
		return 0;
	/* perun's loader removes a disarmed probe from the kernel once no call
	 * it recorded is open */
	unregister = s->sopt.probing_cond == PROBING_COND_KERNEL || s->uprobes;
	r = parser_opt_records(parser, &n);
	calls = xcalloc(s->plan.n + 1, sizeof(*calls));
	at = xcalloc(s->plan.n + 1, sizeof(*at));
	after = xcalloc(s->plan.n + 1, sizeof(*after));
	for (i = 0; i < n; i++) {
		if (r[i].method == PARSE_OPT_BUDGET_OVER)
			over = r[i].value;
		else if (r[i].id >= s->plan.n)
			continue;
		else if (r[i].method == PARSE_OPT_BUDGET_CALLS)
			calls[r[i].id] = r[i].value;
		else if (r[i].method == PARSE_OPT_BUDGET_AT_MS && r[i].value)
			at[r[i].id] = r[i].value;
		else if (r[i].method == PARSE_OPT_BUDGET_AFTER)
			after[r[i].id] = r[i].value;
	}
	dis = json_object_new_object();
	for (i = 0; i < s->plan.n; i++) {
		const char *name = s->plan.probes[i].name;
		struct json_object *d;
		double at_s;

		if (!at[i])
			continue;
		at_s = (double)(at[i] - 1) / 1000.0;
		d = json_object_new_object();
		json_object_object_add(d, "recorded", json_object_new_int64((int64_t)calls[i]));
		json_object_object_add(d, "at_s", json_object_new_double(at_s));
		if (!unregister) {	/* every later call still reached it */
			json_object_object_add(d, "calls_after",
					       json_object_new_int64((int64_t)after[i]));
			json_object_object_add(d, "calls",
					       json_object_new_int64((int64_t)(calls[i] + after[i])));
			nafter += after[i];
		}
		json_object_object_add(dis, name, d);
		mark(sum, name, calls[i], at_s);
		if (ndis < BUDGET_SHOWN)
			strbuf_addf(&names, "%s%s after %" PRIu64 " calls at %.2f s",
				    ndis ? ", " : "", name, calls[i], at_s);
		else if (ndis == BUDGET_SHOWN)
			strbuf_addstr(&names, ", ...");
		ndis++;
	}
	b = json_object_new_object();
	json_object_object_add(b, "max_overhead_pct", json_object_new_double(s->sopt.budget_pct));
	json_object_object_add(b, "call_ns", json_object_new_int64((int64_t)s->sopt.budget_call_ns));
	json_object_object_add(b, "calibrated", json_object_new_boolean(s->sopt.budget_calibrated));
	json_object_object_add(b, "window_ms", json_object_new_int64(s->sopt.budget_window_ms));
	json_object_object_add(b, "windows_over", json_object_new_int64((int64_t)over));
	json_object_object_add(b, "disarmed", dis);
	json_object_object_add(b, "disarm_by",
			       json_object_new_string(s->uprobes ? "remove"
						      : unregister ? "unregister" : "handler-gate"));
	if (!json_object_object_get_ex(extra, "optimization", &opt)) {
		opt = json_object_new_object();
		json_object_object_add(extra, "optimization", opt);
	}
	json_object_object_add(opt, "max_overhead", b);
	if (ndis)
		log_msg(0, "perun",
			"the overhead budget (%g %%) disarmed %zu probe%s, so their counts are "
			"partial: %s",
			s->sopt.budget_pct, ndis, ndis == 1 ? "" : "s", names.buf);
	if (nafter)
		log_msg(0, "perun",
			"the disarmed probes saw %" PRIu64 " later calls, and each still trapped "
			"into the kernel (its uprobe stays attached): where that is too slow, "
			"leave those functions out (--exclude)",
			nafter);
	strbuf_release(&names);
	free(calls);
	free(at);
	free(after);
	return ndis > 0;
}
