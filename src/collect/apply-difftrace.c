/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Diff Tracing in the pre-optimize phase (thesis 7.2.4; the comparisons are
 * src/optimize/difftrace.c).
 *
 * The baseline is a binary built at the baseline version, given with -oa
 * diff-baseline PATH, and its revision, -oa diff-version REV (HEAD~1 by
 * default); the current version is the work tree the traced binary was
 * built from, so uncommitted changes count.  Perun does not build the
 * baseline itself: how a project builds is its own business.  Without
 * diff-baseline the method switches off with a notice.
 *
 * Standalone (no other plan-shaping method on): only the changed functions,
 * main and the -f named ones are traced.  Combined: the changed functions
 * are protected, and the other methods never drop them
 * (collect_protected).  */
#include "config.h"

#define PR_FMT "perun collect"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "binary/callgraph.h"
#include "binary/target.h"
#include "collect/session.h"
#include "optimize/difftrace.h"
#include "optimize/optimize.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int collect_protected(const struct session *s, const char *name)
{
	return s->nprotected &&
	       bsearch(&name, s->protected_funcs, s->nprotected, sizeof(*s->protected_funcs),
		       cmp_str) != NULL;
}

void collect_diff_release(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nprotected; i++)
		free(s->protected_funcs[i]);
	free(s->protected_funcs);
	s->protected_funcs = NULL;
	s->nprotected = 0;
	json_object_put(s->diff_j);
	s->diff_j = NULL;
}

/* True when another method that drops probes runs: then diff tracing
 * protects instead of selecting.  */
static int combined(const struct opt_selection *os)
{
	return os->active[OPT_CG_SHAPING] || os->active[OPT_BASELINE_STATIC] ||
	       os->active[OPT_BASELINE_DYNAMIC] || os->active[OPT_DYNAMIC_SAMPLING];
}

/* Standalone: keeps the probes of changed functions, main, the -f named
 * ones and every probe that is no function of the target.  Returns how
 * many function probes went.  */
static size_t keep_changed(struct session *s)
{
	struct plan *p = &s->plan;
	size_t i, k = 0, gone = 0;

	for (i = 0; i < p->n; i++) {
		struct probe *pr = &p->probes[i];
		int keep = pr->kind != PROBE_FUNC || (pr->flags & PROBE_F_NAMED) ||
			   strcmp(pr->binary, s->target.path) || !strcmp(pr->name, "main") ||
			   collect_protected(s, pr->name) ||
			   (pr->sym && collect_protected(s, pr->sym));
		if (!keep) {
			free(pr->binary);
			free(pr->name);
			free(pr->mark);
			free(pr->mark_end);
			free(pr->file);
			free(pr->sym);
			gone++;
			continue;
		}
		p->probes[k] = *pr;
		p->probes[k].id = (int)k;
		k++;
	}
	p->n = k;
	return gone;
}

static enum dt_cfg_mode cfg_mode(const char *v)
{
	return !strcmp(v, "soft") ? DT_CFG_SOFT : !strcmp(v, "strict") ? DT_CFG_STRICT
								       : DT_CFG_SEMISTRICT;
}

int collect_diff_tracing(struct session *s)
{
	struct opt_selection *os = &s->o->opt;
	const char *bpath = opt_value(os, "diff-baseline"), *rev = opt_value(os, "diff-version");
	const char *cache = s->o->cache_off || os->cache_off ? NULL : s->cache_dir;
	int quiet = s->o->quiet, ret = -1, standalone;
	struct target bt;
	struct callgraph cur, base;
	struct difftrace d;
	char *wt = NULL, from[41];
	size_t before = s->plan.n, gone = 0;

	if (!os->active[OPT_DIFF_TRACING])
		return 0;
	if (!*bpath) {
		os->active[OPT_DIFF_TRACING] = 0;
		os->off_why[OPT_DIFF_TRACING] = "no baseline binary (-oa diff-baseline PATH)";
		if (!quiet)
			pr_info("perun: optimization diff-tracing switched off: no baseline binary; "
				"build the baseline version (%s) and give it with -oa diff-baseline "
				"PATH",
				rev);
		return 0;
	}
	memset(&bt, 0, sizeof(bt));
	memset(&cur, 0, sizeof(cur));
	memset(&base, 0, sizeof(base));
	if (target_load(&bt, bpath, cache) < 0) {
		pr_error("-oa diff-baseline %s: cannot read the baseline binary: give the binary "
			 "built at %s",
			 bpath, rev);
		return -1;
	}
	if (callgraph_load(&cur, &s->target, cache, 0) < 0 ||
	    callgraph_load(&base, &bt, cache, 0) < 0)
		goto out;
	difftrace_init(&d, &cur, &base);
	difftrace_compare_cg(&d, opt_value_bool(os, "diff-inspect-all"));
	wt = vcs_find_worktree(".");
	if (!wt || vcs_massage(wt, rev, from) < 0) {
		if (!quiet)
			pr_info("perun: diff-tracing: no git version %s to diff against; the CFGs "
				"of every common function are compared instead",
				rev);
	} else if (difftrace_vcs(&d, wt, from, NULL) < 0 && !quiet) {
		pr_info("perun: diff-tracing: the git diff failed; the CFGs of every common "
			"function are compared instead");
	}
	difftrace_compare_cfg(&d, cfg_mode(opt_value(os, "diff-cfg-mode")));
	difftrace_finish(&d, opt_value_bool(os, "diff-keep-leaf"));
	collect_diff_release(s);
	s->diff_j = difftrace_json(&d);
	s->protected_funcs = d.protect;
	s->nprotected = d.nprotect;
	d.protect = NULL;
	d.nprotect = 0;
	standalone = !combined(os);
	if (standalone)
		gone = keep_changed(s);
	json_object_object_add(s->diff_j, "baseline", json_object_new_string(bt.path));
	json_object_object_add(s->diff_j, "baseline_version", json_object_new_string(rev));
	json_object_object_add(s->diff_j, "mode",
			       json_object_new_string(standalone ? "standalone" : "protect"));
	json_object_object_add(s->diff_j, "probes_removed", json_object_new_int64((int64_t)gone));
	if (!quiet) {
		struct strbuf sb = STRBUF_INIT;
		if (d.nchanged > s->nprotected)
			strbuf_addf(&sb, " (%zu changed leaves only with -oa diff-keep-leaf true)",
				    (size_t)d.nchanged - s->nprotected);
		if (standalone)
			strbuf_addf(&sb, "; standalone: %zu of %zu probes left (the kept, main, -f)",
				    s->plan.n, before);
		else
			strbuf_addstr(&sb, "; the other methods do not drop them");
		pr_info("perun: diff-tracing: %u function%s changed since %s (%u new, %u renamed, "
			"%u by code, %u by callees); %zu kept%s",
			d.nchanged, d.nchanged == 1 ? "" : "s", rev, d.nnew, d.nrenamed, d.ncfg,
			d.ncallees, s->nprotected, strbuf_str(&sb));
		strbuf_release(&sb);
	}
	collect_wd(&s->wd, "pre-optimize: diff-tracing: %u changed, %zu -> %zu probes", d.nchanged,
		   before, s->plan.n);
	difftrace_release(&d);
	ret = 0;
out:
	free(wt);
	callgraph_release(&cur);
	callgraph_release(&base);
	target_release(&bt);
	return ret;
}
