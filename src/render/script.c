/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "script"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/script.h"
#include "util/log.h"

int script_quote(struct strbuf *out, const char *s, const char *what)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return pr_error("%s '%s' contains a control character: rename or symlink it",
					what, s);
		/* globs would widen the probe to other files */
		if (strchr("*?[]{}", *p))
			return pr_error("%s '%s' contains '%c', which SystemTap would treat as a "
					"wildcard: rename or symlink it",
					what, s, *p);
		if (*p == '"' || *p == '\\')
			strbuf_addch(out, '\\');
		strbuf_addch(out, (char)*p);
	}
	return 0;
}

int script_valid_mark(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

struct tmpl {
	const char *name;
	char *text;
};

enum { T_HEADER, T_PAIR, T_PAIR_SAMPLED, T_POINT, T_POINT_SAMPLED, T_HEADER_AGG, T_PAIR_AGG,
       T_POINT_AGG, T_HEADER_REC, T_PAIR_GATED, T_POINT_GATED, T_OPT_TIMED, T_OPT_TIMED_END,
       T_OPT_PROBING, T_OPT_PROBING_END, T_OPT_REATTACH, T_OPT_REATTACH_END, T_OPT_PROBING_COND,
       T_OPT_REATTACH_WAKE, T_PAIR_COND, T_POINT_COND, T_OPT_BUDGET, T_OPT_BUDGET_END, T_PRINT_SENT, T_COUNT };

static int load_templates(struct tmpl *t, const char *dir)
{
	static const char *const names[T_COUNT] = {
		"header",	 "pair",	"pair_sampled",	 "point",
		"point_sampled", "header_agg",	"pair_agg",	 "point_agg",
		"header_rec",	 "pair_gated",	"point_gated",	 "opt_timed",
		"opt_timed_end", "opt_probing", "opt_probing_end",
		"opt_reattach",	 "opt_reattach_end", "opt_probing_cond", "opt_reattach_wake",
		"pair_cond",	 "point_cond",	"opt_budget",	 "opt_budget_end",
		"print_sent",
	};
	int i;

	for (i = 0; i < T_COUNT; i++) {
		struct strbuf sb = STRBUF_INIT;
		char *path = xstrfmt("%s/%s.stp.in", dir, names[i]);
		if (strbuf_read_file(&sb, path) < 0) {
			pr_error_errno("template %s (set PERUN_DATADIR or reinstall perun)", path);
			free(path);
			strbuf_release(&sb);
			return -1;
		}
		free(path);
		t[i].name = names[i];
		t[i].text = strbuf_detach(&sb);
	}
	return 0;
}

/* Every "pid() == target()" of text becomes "__perun_ours()" (--follow).  */
static void follow_text(struct tmpl *t)
{
	static const char from[] = "pid() == target()", to[] = "__perun_ours()";
	struct strbuf sb = STRBUF_INIT;
	const char *s = t->text, *m;

	while ((m = strstr(s, from))) {
		strbuf_add(&sb, s, (size_t)(m - s));
		strbuf_addstr(&sb, to);
		s = m + sizeof(from) - 1;
	}
	strbuf_addstr(&sb, s);
	free(t->text);
	t->text = strbuf_detach(&sb);
}

/* --follow's part of the script: the target's process tree, kept from the
 * fork tracepoint, which runs in the parent before the child is first
 * scheduled; the child's memory is a copy of its parent's, breakpoints
 * included (the runtime's uprobe filter accepts the target's descendants),
 * so its first call is recorded.  A process leaves the tree when its task
 * is freed (sched_process_free), so that a reused pid is not taken for it;
 * tracepoints only: kprocess.release is a kernel function probe, which
 * needs the kernel's debuginfo.  A thread's first event names its process
 * (p TID PID), a new process is said as followed from its first
 * instruction (j CHILD PARENT 0 1), as perun's loader writes them.  */
static void follow_code(struct strbuf *out)
{
	strbuf_addf(out,
		    "// --follow: the target and every process it starts, from its first\n"
		    "// instruction (the fork tracepoint runs before the child does)\n"
		    "global __perun_tree[%d]\n"
		    "global __perun_tids[%d]\n"
		    "probe begin { __perun_tree[target()] = 1 }\n"
		    "probe kernel.trace(\"sched:sched_process_fork\") {\n"
		    "\tif (task_pid($child) != pid() && pid() in __perun_tree) {\n"
		    "\t\t__perun_tree[task_pid($child)] = 1\n"
		    "\t\tprintf(\"j %%x %%x 0 1\\n\", task_pid($child), pid())\n"
		    "\t}\n"
		    "}\n"
		    "probe kernel.trace(\"sched:sched_process_free\") {\n"
		    "\tdelete __perun_tids[task_tid($p)]\n"
		    "\tif (task_tid($p) == task_pid($p))\n"
		    "\t\tdelete __perun_tree[task_pid($p)]\n"
		    "}\n"
		    "function __perun_ours:long () {\n"
		    "\tif (!(pid() in __perun_tree))\n"
		    "\t\treturn 0\n"
		    "\tif (!(tid() in __perun_tids)) {\n"
		    "\t\t__perun_tids[tid()] = 1\n"
		    "\t\tprintf(\"p %%x %%x\\n\", (tid() - target()) & 0xffffffff, pid())\n"
		    "\t}\n"
		    "\treturn 1\n"
		    "}\n",
		    SCRIPT_FOLLOW_TREE_SLOTS, SCRIPT_FOLLOW_TIDS_SLOTS);
}

struct var {
	const char *key;
	const char *val;
};

/* Expands @KEY@ once; values are never rescanned.  */
static int expand(struct strbuf *out, const char *text, const struct var *vars, size_t n)
{
	const char *p = text;

	while (*p) {
		const char *at = strchr(p, '@'), *end;
		size_t i;

		if (!at) {
			strbuf_addstr(out, p);
			break;
		}
		strbuf_add(out, p, (size_t)(at - p));
		end = strchr(at + 1, '@');
		for (i = 0; end && i < n; i++)
			if (strlen(vars[i].key) == (size_t)(end - at - 1) &&
			    !strncmp(at + 1, vars[i].key, (size_t)(end - at - 1)))
				break;
		if (!end || i == n) {
			strbuf_addch(out, '@');
			p = at + 1;
			continue;
		}
		strbuf_addstr(out, vars[i].val);
		p = end + 1;
	}
	return 0;
}

/* A function probe point by address when DWARF has a subprogram there
 * (exact, even among same-named static functions), else by symbol name:
 * stap resolves .function("name") through the symbol table when the binary
 * or that function has no DWARF (no -g, static libc, stripped libraries).  */
static int func_point(struct strbuf *out, const char *bin, const struct probe *pr,
		      const char *suffix)
{
	if (!(pr->flags & PROBE_F_SYMBOL)) {
		strbuf_addf(out, "process(\"%s\").function(0x%llx).%s?", bin,
			    (unsigned long long)pr->addr, suffix);
		return 0;
	}
	/* '@' and ':' would read as a file or line qualifier */
	if (!pr->sym || !*pr->sym || strpbrk(pr->sym, "@:\"\\"))
		return pr_error("function '%s' has no symbol SystemTap can address",
				pr->name);
	strbuf_addf(out, "process(\"%s\").function(\"", bin);
	/* a symbol is a pattern to stap: glob characters in names such as Go's
	 * fmt.(*pp).doPrintf or type..eq.[2]int are escaped for fnmatch (stap
	 * keeps the backslash of an escape it does not know) */
	for (const unsigned char *c = (const unsigned char *)pr->sym; *c; c++) {
		if (*c < 0x20 || *c == 0x7f)
			return pr_error("symbol '%s' contains a control character", pr->sym);
		if (strchr("*?[]", *c))
			strbuf_addch(out, '\\');
		strbuf_addch(out, (char)*c);
	}
	strbuf_addf(out, "\").%s?", suffix);
	return 0;
}

static int probe_point_pair(const struct probe *pr, struct strbuf *entry, struct strbuf *exit)
{
	struct strbuf bin = STRBUF_INIT;
	int ret = -1;

	if (script_quote(&bin, pr->binary, "binary path") < 0)
		goto out;
	switch (pr->kind) {
	case PROBE_FUNC:
		if (func_point(entry, bin.buf, pr, "call") < 0)
			goto out;
		if (!(pr->flags & PROBE_F_ENTRY_ONLY) && func_point(exit, bin.buf, pr, "return") < 0)
			goto out;
		break;
	case PROBE_USDT_PAIR:
	case PROBE_USDT_POINT:
		if (!script_valid_mark(pr->mark) ||
		    (pr->mark_end && !script_valid_mark(pr->mark_end))) {
			pr_error("USDT probe '%s' has a name SystemTap cannot address", pr->name);
			goto out;
		}
		strbuf_addf(entry, "process(\"%s\").mark(\"%s\")?", bin.buf, pr->mark);
		if (pr->mark_end)
			strbuf_addf(exit, "process(\"%s\").mark(\"%s\")?", bin.buf, pr->mark_end);
		break;
	case PROBE_LINE: {
		struct strbuf file = STRBUF_INIT;
		if (script_quote(&file, pr->file, "source file") < 0) {
			strbuf_release(&file);
			goto out;
		}
		strbuf_addf(entry, "process(\"%s\").statement(\"*@%s:%d\")?", bin.buf, file.buf,
			    pr->line);
		strbuf_release(&file);
		break;
	}
	}
	ret = 0;
out:
	strbuf_release(&bin);
	return ret;
}

int script_generate(const struct plan *p, const char *templates_dir, int aggregate,
		    struct strbuf *out)
{
	return script_generate_mode(p, templates_dir, aggregate ? SCRIPT_AGGREGATE : SCRIPT_PRINT,
				    0, out);
}

int script_generate_mode(const struct plan *p, const char *templates_dir, enum script_mode mode,
			 size_t buffer, struct strbuf *out)
{
	return script_generate_opt(p, templates_dir, mode, buffer, NULL, out);
}

/* The condition under which a gated probe records a call (k is its key).  */
static void gate_condition(struct strbuf *c, const struct probe *pr, const struct script_opt *so)
{
	if (so && so->select_slots)
		strbuf_addf(c, "%s__perun_sel[%d]", c->len ? " && " : "", pr->id);
	if (so && so->probing_threshold)
		strbuf_addf(c, "%s__perun_armed(%d)", c->len ? " && " : "", pr->id);
	if (so && so->timed_period_ms)
		strbuf_addf(c, "%s__perun_dormant == 0", c->len ? " && " : "");
	if (pr->sampling > 1)
		strbuf_addf(c, "%s__perun_cnt[k]++ %% %u == 0", c->len ? " && " : "",
			    pr->sampling);
	/* last: the budget counts the calls that are recorded; a point is about
	 * half a pair (one probe hit) */
	if (so && so->budget_allowed_ns) {
		uint64_t ns = probe_is_point(pr) ? (so->budget_call_ns + 1) / 2 : so->budget_call_ns;
		if (so->budget_stepped && pr->id >= 0 && (size_t)pr->id < so->budget_nstepped &&
		    so->budget_stepped[pr->id])
			ns += so->budget_stepped_ns;
		strbuf_addf(c, "%s__perun_budget(%d, %llu)", c->len ? " && " : "", pr->id,
			    (unsigned long long)ns);
	}
	if (!c->len)
		strbuf_addstr(c, "1");
}

/* Slots of a map with one entry per probe id: never the recorder's size
 * nor 2048/65536.  */
static size_t id_slots(const struct plan *p)
{
	return p->n < 16384 ? (size_t)16384 : p->n + 1;
}

/* __perun_wake's body for probes [lo, hi) of p, ordered by id: a binary
 * search, so a wake costs log2(n) statements of stap's MAXACTION.  */
static void wake_tree(struct strbuf *out, const struct plan *p, size_t lo, size_t hi, int depth)
{
	size_t mid = lo + (hi - lo) / 2;

	if (hi == lo)
		return;
	if (hi - lo == 1) {
		/* read too: stap prints a global only ever written at the end, as
		 * this one would be when its probe point did not resolve */
		strbuf_addf(out, "%*sif (!__perun_live_%d) __perun_live_%d = 1\n", depth, "",
			    p->probes[lo].id, p->probes[lo].id);
		return;
	}
	strbuf_addf(out, "%*sif (id < %d) {\n", depth, "", p->probes[mid].id);
	wake_tree(out, p, lo, mid, depth + 1);
	strbuf_addf(out, "%*s} else {\n", depth, "");
	wake_tree(out, p, mid, hi, depth + 1);
	strbuf_addf(out, "%*s}\n", depth, "");
}

/* Dynamic probing's globals, its gate __perun_armed and, on the kernel
 * runtime (so->probing_cond), what re-registers a disarmed probe; *end gets
 * its part of the end probe.  */
static void probing_code(struct strbuf *out, struct strbuf *end, const struct tmpl *t,
			 const struct plan *p, const struct script_opt *so)
{
	unsigned first = so->probing_reattach_ms, tick = first < 10 ? first : 10;
	char thr[32], slots[32], tms[24], fticks[24];

	snprintf(thr, sizeof(thr), "%llu", (unsigned long long)so->probing_threshold);
	snprintf(slots, sizeof(slots), "%zu", id_slots(p));
	snprintf(tms, sizeof(tms), "%u", tick);
	snprintf(fticks, sizeof(fticks), "%u", tick ? (first + tick - 1) / tick : 0);
	struct var v[] = { { "THRESHOLD", thr }, { "SLOTS", slots }, { "TICK_MS", tms },
			   { "FIRST_TICKS", fticks } };
	expand(out, t[first ? T_OPT_REATTACH : T_OPT_PROBING].text, v, 4);
	expand(end, t[first ? T_OPT_REATTACH_END : T_OPT_PROBING_END].text, v, 4);
	if (!so->probing_cond)
		return;
	expand(out, t[T_OPT_PROBING_COND].text, v, 4);
	if (!first || so->probing_cond != PROBING_COND_KERNEL)
		return;
	expand(out, t[T_OPT_REATTACH_WAKE].text, v, 4);
	strbuf_addstr(out, "function __perun_wake (id:long) {\n");
	wake_tree(out, p, 0, p->n, 1);
	strbuf_addstr(out, "}\n");
}

int script_generate_opt(const struct plan *p, const char *templates_dir, enum script_mode mode,
			size_t buffer, const struct script_opt *so, struct strbuf *out)
{
	struct tmpl t[T_COUNT] = { { NULL, NULL } };
	char nprobes[32], bufsize[32];
	struct strbuf opt_end = STRBUF_INIT, probing = STRBUF_INIT;
	/* dynamic probing's conditional probes; the budget's too where the
	 * kernel runtime unregisters a disarmed probe */
	int conditional = so && so->probing_cond &&
			  (so->probing_threshold ||
			   (so->budget_allowed_ns && so->probing_cond == PROBING_COND_KERNEL));
	int gated = so && (so->timed_period_ms || so->probing_threshold || so->select_slots ||
			   so->budget_allowed_ns);
	/* the kernel runtime's print transport counts what it printed */
	int count_sent = so && so->count_sent && mode == SCRIPT_PRINT;
	const char *ev = mode == SCRIPT_RECORD ? "__perun_put" : count_sent ? "__perun_evc"
									     : "__perun_ev";
	int aggregate = mode == SCRIPT_AGGREGATE;
	size_t i;
	int ret = -1;

	if (mode == SCRIPT_RECORD && 2 * p->n > SCRIPT_RECORD_MAX_CODES)
		return pr_error("%zu probes are more than the recorder's %d: trace fewer functions "
				"or use --aggregate",
				p->n, SCRIPT_RECORD_MAX_CODES / 2);
	if (mode == SCRIPT_RECORD && buffer == 0)
		return pr_error("the recorder needs a buffer of at least one event");
	if (load_templates(t, templates_dir) < 0)
		goto out;
	if (gated && aggregate) {
		pr_error("timed sampling, dynamic probing, --max-overhead and --one-module gate "
			 "per-call records: not with --aggregate");
		goto out;
	}
	if (so && so->follow && aggregate) {
		pr_error("--follow on the kernel runtime records per call: not with --aggregate");
		goto out;
	}
	if (so && so->follow)
		for (i = 0; i < T_COUNT; i++)
			follow_text(&t[i]);
	snprintf(nprobes, sizeof(nprobes), "%zu", plan_probe_points(p));
	snprintf(bufsize, sizeof(bufsize), "%zu", buffer);
	if (so && so->timed_period_ms)
		strbuf_addstr(&opt_end, t[T_OPT_TIMED_END].text);
	if (so && so->probing_threshold)
		probing_code(&probing, &opt_end, t, p, so);
	if (so && so->budget_allowed_ns)
		strbuf_addstr(&opt_end, t[T_OPT_BUDGET_END].text);
	/* the counts before the end marker */
	if (count_sent)
		strbuf_addstr(&opt_end, "__perun_sent_dump(); ");
	{
		struct var v[] = { { "NPROBES", nprobes }, { "BUFFER", bufsize },
				   { "OPT_END", strbuf_str(&opt_end) } };
		expand(out,
		       t[aggregate		 ? T_HEADER_AGG
			 : mode == SCRIPT_RECORD ? T_HEADER_REC
						 : T_HEADER]
			       .text,
		       v, 3);
	}
	if (count_sent) {
		char slots[32];
		/* one per probe id, no more: a per-CPU map is allocated whole
		 * on every CPU (kernel runtime only: no map is found by size) */
		snprintf(slots, sizeof(slots), "%zu", p->n + 1);
		struct var v[] = { { "SLOTS", slots } };
		expand(out, t[T_PRINT_SENT].text, v, 1);
	}
	if (so && so->follow)
		follow_code(out);
	if (so && so->timed_period_ms) {
		char period[32], freq[32];
		snprintf(period, sizeof(period), "%u", so->timed_period_ms);
		snprintf(freq, sizeof(freq), "%g", so->timed_freq);
		struct var v[] = { { "PERIOD_MS", period }, { "FREQ", freq } };
		expand(out, t[T_OPT_TIMED].text, v, 2);
	}
	if (so && so->select_slots)
		strbuf_addf(out, "// the selection (--one-module): a probe records only when its\n"
				 "// id is set here; perun fills it before the command starts\n"
				 "global __perun_sel[%zu]\n"
				 "probe begin { delete __perun_sel[-1] }\n",
			    so->select_slots);
	if (so && so->select_slots && so->select_procfs)
		strbuf_addstr(out, "// the kernel runtime: perun writes one id per write()\n"
				   "probe procfs(\"perun_sel\").write {\n"
				   "\t__perun_sel[strtol($value, 10)] = 1\n"
				   "}\n");
	if (probing.len)
		strbuf_add(out, probing.buf, probing.len);
	if (conditional && !so->probing_threshold)	/* the budget's alone */
		strbuf_addf(out, "// conditional probes: a probe stays live while a call it "
				 "recorded is open\nglobal __perun_open[%zu]\n",
			    id_slots(p));
	if (so && so->budget_allowed_ns) {
		char pct[32], cost[32], window[32], allowed[32], slots[32];
		snprintf(pct, sizeof(pct), "%g", so->budget_pct);
		snprintf(cost, sizeof(cost), "%llu", (unsigned long long)so->budget_call_ns);
		snprintf(window, sizeof(window), "%u", so->budget_window_ms);
		snprintf(allowed, sizeof(allowed), "%llu", (unsigned long long)so->budget_allowed_ns);
		snprintf(slots, sizeof(slots), "%zu", id_slots(p));
		struct var v[] = { { "PCT", pct },
				   { "COST_NS", cost },
				   { "COST_WHY", so->budget_calibrated ? "calibrated on this host"
								       : "not calibrated: a default" },
				   { "WINDOW_MS", window },
				   { "ALLOWED_NS", allowed },
				   { "SLOTS", slots } };
		expand(out, t[T_OPT_BUDGET].text, v, sizeof(v) / sizeof(v[0]));
	}
	for (i = 0; i < p->n; i++) {
		const struct probe *pr = &p->probes[i];
		struct strbuf entry = STRBUF_INIT, exit = STRBUF_INIT;
		char id[24], ce[24], cx[24], sampling[24];
		struct strbuf cond = STRBUF_INIT, live = STRBUF_INIT, armed = STRBUF_INIT;
		int pair = !probe_is_point(pr);
		int which;

		if (probe_point_pair(pr, &entry, &exit) < 0) {
			strbuf_release(&entry);
			strbuf_release(&exit);
			goto out;
		}
		snprintf(id, sizeof(id), "%d", pr->id);
		snprintf(ce, sizeof(ce), "%d", pr->id * 2);
		snprintf(cx, sizeof(cx), "%d", pr->id * 2 + 1);
		snprintf(sampling, sizeof(sampling), "%u", pr->sampling);
		gate_condition(&cond, pr, so);
		if (conditional) {
			if (so->probing_threshold)
				strbuf_addf(&armed, "!__perun_off[%d]", pr->id);
			if (so->budget_allowed_ns)
				strbuf_addf(&armed, "%s!__perun_boff[%d]", armed.len ? " && " : "",
					    pr->id);
			strbuf_addf(&live, "__perun_live_%d", pr->id);
			/* stapbpf has no timer to wake it: a due probe lets itself in */
			if (so->probing_reattach_ms && so->probing_cond != PROBING_COND_KERNEL)
				strbuf_addf(&live, " || __perun_wait[%d] <= __perun_tick", pr->id);
		}
		if (aggregate)	/* every call is counted: sampling does not apply */
			which = pair ? T_PAIR_AGG : T_POINT_AGG;
		else if (conditional)	/* probe ... if (live): see probing_cond */
			which = pair ? T_PAIR_COND : T_POINT_COND;
		else if (gated)
			which = pair ? T_PAIR_GATED : T_POINT_GATED;
		else if (pair)
			which = pr->sampling > 1 ? T_PAIR_SAMPLED : T_PAIR;
		else
			which = pr->sampling > 1 ? T_POINT_SAMPLED : T_POINT;
		{
			struct var v[] = { { "ENTRY", strbuf_str(&entry) },
					   { "EXIT", strbuf_str(&exit) },
					   { "ID", id },
					   { "CODE_ENTRY", ce },
					   { "CODE_EXIT", cx },
					   { "SAMPLING", sampling },
					   { "EV", ev },
					   { "COND", cond.buf },
					   { "LIVE", strbuf_str(&live) },
					   { "ARMED", strbuf_str(&armed) } };
			expand(out, t[which].text, v, sizeof(v) / sizeof(v[0]));
		}
		strbuf_release(&entry);
		strbuf_release(&exit);
		strbuf_release(&cond);
		strbuf_release(&live);
		strbuf_release(&armed);
	}
	ret = 0;
out:
	strbuf_release(&opt_end);
	strbuf_release(&probing);
	for (i = 0; i < T_COUNT; i++)
		free(t[i].text);
	return ret;
}
