/* SPDX-License-Identifier: GPL-3.0-or-later */
/* check's outputs: text, JSON, JUnit XML, Markdown.  */
#include "config.h"

#define PR_FMT "check"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "report/check-output.h"
#include "util/log.h"

int check_format_parse(const char *s)
{
	static const char *const names[] = {"text", "json", "junit", "markdown"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

/* A ratio as a change: x1.25 -> "+25.0%".  */
static void fmt_change(struct strbuf *sb, double ratio)
{
	if (!isfinite(ratio))
		strbuf_addstr(sb, "-");
	else
		strbuf_addf(sb, "%+.1f%%", 100 * (ratio - 1));
}

static void fmt_ci(struct strbuf *sb, const struct check_finding *f)
{
	if (isnan(f->ci_low)) {
		strbuf_addstr(sb, "-");
		return;
	}
	strbuf_addch(sb, '[');
	fmt_change(sb, f->ci_low);
	strbuf_addstr(sb, ", ");
	fmt_change(sb, f->ci_high);
	strbuf_addch(sb, ']');
}

static void job_title(struct strbuf *sb, const struct check_job *j)
{
	strbuf_addf(sb, "%s %s%s%s%s%s", j->collector, j->cmd, *j->args ? " " : "", j->args,
		    *j->workload ? " " : "", j->workload);
}

static int shown(const struct check_finding *f, int all)
{
	return all || f->verdict != CHECK_NO_CHANGE;
}

/* --- text ------------------------------------------------------------------ */

static void text_finding_shown(struct strbuf *out, const struct check_finding *f,
			       const struct check_opts *o)
{
	struct strbuf col = STRBUF_INIT;

	strbuf_addf(out, "  %-12s %-9s ", check_verdict_name(f->verdict),
		    check_metric_name(f->metric));
	if (o->method == CHECK_MODEL_ORDER && f->base_model) {
		strbuf_addf(out, "%s -> %s (r2 %.3f -> %.3f)  %s\n", f->base_model, f->target_model,
			    f->base, f->target, f->context);
		return;
	}
	if (f->verdict != CHECK_NEW && f->verdict != CHECK_REMOVED &&
	    o->method > CHECK_MODEL_ORDER) {
		/* Perun's methods: the change, the forms, Perun's confidence */
		fmt_change(&col, f->ratio);
		strbuf_addf(out, "%8s ", col.buf);
		strbuf_reset(&col);
		if (f->base_model)
			strbuf_addf(&col, "%s -> %s", f->base_model, f->target_model);
		strbuf_addf(out, "%-26s ", col.buf ? col.buf : "");
		strbuf_reset(&col);
		if (f->rate_name && isfinite(f->rate))
			strbuf_addf(&col, "%s %.3g", f->rate_name, f->rate);
		strbuf_addf(out, "%-20s ", col.buf ? col.buf : "");
		strbuf_reset(&col);
		strbuf_add_ns(&col, f->base);
		strbuf_addstr(&col, " -> ");
		strbuf_add_ns(&col, f->target);
		strbuf_addf(out, "%-22s %zu/%zu runs  %s", col.buf, f->nbase, f->ntarget, f->context);
		if (f->shape)
			strbuf_addf(out, "  (%s)", f->shape);
		if (f->why)
			strbuf_addf(out, "  (%s)", f->why);
		strbuf_addch(out, '\n');
		strbuf_release(&col);
		return;
	}
	if (f->verdict == CHECK_NEW || f->verdict == CHECK_REMOVED) {
		strbuf_addf(out, "%.1f -> %.1f calls per run  %s\n", f->calls_base,
			    f->calls_target, f->context);
		return;
	}
	fmt_change(&col, f->ratio);
	strbuf_addf(out, "%8s ", col.buf);
	strbuf_reset(&col);
	if (o->method == CHECK_RUNS) {
		fmt_ci(&col, f);
		strbuf_addf(out, "%-20s ", col.buf);
	} else {
		strbuf_addf(out, "p %-8.2g ", f->p);
	}
	strbuf_reset(&col);
	strbuf_add_ns(&col, f->base);
	strbuf_addstr(&col, " -> ");
	strbuf_add_ns(&col, f->target);
	strbuf_addf(out, "%-22s %zu/%zu runs  %s", col.buf, f->nbase, f->ntarget, f->context);
	if (f->cause && strcmp(f->cause, f->context))
		strbuf_addf(out, "  (callee %s)", f->cause);
	if (f->why)
		strbuf_addf(out, "  (%s)", f->why);
	strbuf_addch(out, '\n');
	strbuf_release(&col);
}

/* A finding for a terminal: its contexts with control characters as \xNN.  */
static void text_finding(struct strbuf *out, const struct check_finding *f,
			 const struct check_opts *o)
{
	struct check_finding e = *f;

	e.context = xstrdup_printable(f->context);
	e.cause = f->cause ? xstrdup_printable(f->cause) : NULL;
	text_finding_shown(out, &e, o);
	free(e.context);
	free(e.cause);
}

/* Which comparison decides the job's changes: the in-run control (and
 * how the runs moved as a whole), or the runs alone and why.  */
static void control_line(struct strbuf *out, const struct check_job *j,
			 const struct check_opts *o)
{
	if (o->method != CHECK_RUNS && o->method != CHECK_MANN_WHITNEY)
		return;
	if (j->control) {
		strbuf_addf(out, "  decided by the in-run control: the speed of each run, from the "
				 "self times of its %zu functions%s, taken out (the target runs ran ",
			    j->control,
			    j->control_raw ? " with the probes' cost in them (too few were above it)"
					   : "");
		fmt_change(out, j->host_ratio);
		strbuf_addstr(out, " as a whole");
		if (isfinite(j->control_sd))
			strbuf_addf(out, "; one run a side, spread of the control %.1f%%",
				    100 * (exp(j->control_sd) - 1));
		if (j->speed_groups > 1)
			strbuf_addf(out, "; the sides compared within %zu groups of runs of "
					 "like speed, whose functions the host slowed apart",
				    j->speed_groups);
		/* past the 2 % a quiet host's functions keep */
		if (isfinite(j->apart_sd) && j->apart_sd > 0.02)
			strbuf_addf(out, "; its functions moved %.1f%% apart between the sides, "
					 "and no change is told closer",
				    100 * (exp(j->apart_sd) - 1));
		if (j->runs_weighed)
			strbuf_addf(out, "; %zu run%s weighed less, %s own functions "
					 "disagreed",
				    j->runs_weighed, j->runs_weighed > 1 ? "s" : "",
				    j->runs_weighed > 1 ? "their" : "its");
		strbuf_addstr(out, ")\n");
	} else if (o->no_control) {
		strbuf_addstr(out, "  decided by the runs alone (--no-control)\n");
	} else {
		strbuf_addf(out, "  decided by the runs alone: %s\n",
			    j->binned ? "histograms carry no in-run control"
				      : "fewer than 3 functions with self times above the "
					"probe cost in every run form no in-run control");
	}
}

static void text(const struct check_result *r, const struct check_opts *o, int all,
		 struct strbuf *out)
{
	size_t i, k;

	for (i = 0; i < r->njobs; i++) {
		const struct check_job *j = &r->jobs[i];
		{
			/* file names and a command line: control characters as \xNN */
			struct strbuf t = STRBUF_INIT;
			strbuf_addf(&t, "%s%s -> %s%s: ", j->base_labels[0],
				    j->nbase > 1 ? ",..." : "", j->target_labels[0],
				    j->ntarget > 1 ? ",..." : "");
			job_title(&t, j);
			strbuf_add_printable(out, strbuf_str(&t));
			strbuf_addch(out, '\n');
			strbuf_release(&t);
		}
		if (j->incomplete && *j->incomplete)
			strbuf_addstr(out, j->incomplete);	/* names escaped by profile_incomplete */
		strbuf_addf(out, "  %zu run%s -> %zu run%s", j->nbase, j->nbase == 1 ? "" : "s",
			    j->ntarget, j->ntarget == 1 ? "" : "s");
		if (*j->machine) {
			strbuf_addstr(out, " on ");
			strbuf_add_printable(out, j->machine);
		}
		if (check_method_models(o->method))
			strbuf_addf(out, "; %s over the fitted models, per function\n",
				    check_method_name(o->method));
		else if (o->method == CHECK_EXCLUSIVE_TIME_OUTLIERS)
			strbuf_addstr(out, "; exclusive-time-outliers: total exclusive time of a "
					   "run, per function\n");
		else
		{
			char stat[32];
			check_statistic_name(o->statistic, stat, sizeof(stat));
			strbuf_addf(out, "; per-call %s of each run, %s, %s, %.0f%% confidence\n",
				    stat,
				    j->calibrated ? "probe cost taken out"
						  : "raw times (a run has no calibration)",
				    o->method == CHECK_RUNS ? "ratio of geometric means (Welch t)"
							    : "Mann-Whitney over runs",
				    100 * o->confidence);
		}
		if (j->binned)
			strbuf_addstr(out, "  (call times read from --aggregate log2 histograms: "
					   "small changes go unseen)\n");
		control_line(out, j, o);
		for (k = 0; k < j->nf; k++)
			if (shown(&j->f[k], all))
				text_finding(out, &j->f[k], o);
	}
	strbuf_addf(out, "%zu degradation%s, %zu optimization%s, %zu undecided\n", r->degradations,
		    r->degradations == 1 ? "" : "s", r->optimizations,
		    r->optimizations == 1 ? "" : "s", r->undecided);
}

/* --- JSON ------------------------------------------------------------------ */

static void jnum(struct strbuf *sb, double v)
{
	if (isfinite(v))
		strbuf_addf(sb, "%.17g", v);
	else
		strbuf_addstr(sb, "null");
}

static void jkey(struct strbuf *sb, const char *k)
{
	strbuf_add_json_str(sb, k);
	strbuf_addch(sb, ':');
}

static void jlabels(struct strbuf *sb, char **v, size_t n)
{
	size_t i;

	strbuf_addch(sb, '[');
	for (i = 0; i < n; i++) {
		if (i)
			strbuf_addch(sb, ',');
		strbuf_add_json_str(sb, v[i]);
	}
	strbuf_addch(sb, ']');
}

static void json_finding(struct strbuf *sb, const struct check_finding *f)
{
	strbuf_addstr(sb, "{\"context\":");
	strbuf_add_json_str(sb, f->context);
	strbuf_addstr(sb, ",\"function\":");
	strbuf_add_json_str(sb, f->function);
	strbuf_addf(sb, ",\"time\":\"%s\",\"change\":\"%s\",\"runs\":[%zu,%zu],",
		    check_metric_name(f->metric), check_verdict_name(f->verdict), f->nbase,
		    f->ntarget);
	jkey(sb, "baseline");
	jnum(sb, f->base);
	strbuf_addch(sb, ',');
	jkey(sb, "target");
	jnum(sb, f->target);
	strbuf_addch(sb, ',');
	jkey(sb, "ratio");
	jnum(sb, f->ratio);
	strbuf_addstr(sb, ",\"ci\":[");
	jnum(sb, f->ci_low);
	strbuf_addch(sb, ',');
	jnum(sb, f->ci_high);
	strbuf_addstr(sb, "],");
	jkey(sb, "p");
	jnum(sb, f->p);
	strbuf_addch(sb, ',');
	jkey(sb, "effect");
	jnum(sb, f->effect);
	strbuf_addch(sb, ',');
	jkey(sb, "threshold");
	jnum(sb, f->threshold);
	strbuf_addch(sb, ',');
	jkey(sb, "resolution_ns");
	jnum(sb, f->resolution);
	strbuf_addstr(sb, ",\"calls\":[");
	jnum(sb, f->calls_base);
	strbuf_addch(sb, ',');
	jnum(sb, f->calls_target);
	strbuf_addf(sb, "],\"decided_by\":\"%s\"", check_basis_name(f->basis));
	if (f->why) {
		strbuf_addstr(sb, ",\"why\":");
		strbuf_add_json_str(sb, f->why);
	}
	if (f->cause) {
		strbuf_addstr(sb, ",\"cause\":");
		strbuf_add_json_str(sb, f->cause);
	}
	if (f->base_model)
		strbuf_addf(sb, ",\"models\":[\"%s\",\"%s\"]", f->base_model, f->target_model);
	if (f->shape) {
		strbuf_addstr(sb, ",\"shape\":");
		strbuf_add_json_str(sb, f->shape);
	}
	if (f->rate_name) {
		strbuf_addstr(sb, ",\"confidence\":{\"kind\":");
		strbuf_add_json_str(sb, f->rate_name);
		strbuf_addstr(sb, ",\"rate\":");
		jnum(sb, f->rate);
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, '}');
}

static void json(const struct check_result *r, const struct check_opts *o, const char *base,
		 const char *target, struct strbuf *sb)
{
	size_t i, k;

	strbuf_addstr(sb, "{\"baseline\":");
	strbuf_add_json_str(sb, base);
	strbuf_addstr(sb, ",\"target\":");
	strbuf_add_json_str(sb, target);
	strbuf_addf(sb, ",\"method\":\"%s\",", check_method_name(o->method));
	jkey(sb, "threshold");
	jnum(sb, o->threshold);
	strbuf_addch(sb, ',');
	jkey(sb, "confidence");
	jnum(sb, o->confidence);
	strbuf_addch(sb, ',');
	jkey(sb, "statistic");
	jnum(sb, o->statistic);
	strbuf_addf(sb,
		    ",\"degradations\":%zu,\"optimizations\":%zu,\"undecided\":%zu,"
		    "\"skipped_other_machine\":%zu,\"unpaired\":%zu,\"jobs\":[",
		    r->degradations, r->optimizations, r->undecided, r->skipped_machine,
		    r->unpaired);
	for (i = 0; i < r->njobs; i++) {
		const struct check_job *j = &r->jobs[i];
		strbuf_addstr(sb, i ? ",{" : "{");
		strbuf_addstr(sb, "\"collector\":");
		strbuf_add_json_str(sb, j->collector);
		strbuf_addstr(sb, ",\"cmd\":");
		strbuf_add_json_str(sb, j->cmd);
		strbuf_addstr(sb, ",\"args\":");
		strbuf_add_json_str(sb, j->args);
		strbuf_addstr(sb, ",\"workload\":");
		strbuf_add_json_str(sb, j->workload);
		strbuf_addstr(sb, ",\"machine\":");
		strbuf_add_json_str(sb, j->machine);
		strbuf_addstr(sb, ",\"baseline_runs\":");
		jlabels(sb, j->base_labels, j->nbase);
		strbuf_addstr(sb, ",\"target_runs\":");
		jlabels(sb, j->target_labels, j->ntarget);
		strbuf_addf(sb, ",\"degradations\":%zu,\"optimizations\":%zu,\"undecided\":%zu",
			    j->degradations, j->optimizations, j->undecided);
		strbuf_addf(sb, ",\"calibrated\":%s", j->calibrated ? "true" : "false");
		strbuf_addf(sb, ",\"control\":{\"functions\":%zu,\"host_ratio\":", j->control);
		jnum(sb, j->host_ratio);
		strbuf_addstr(sb, ",\"spread\":");
		jnum(sb, isfinite(j->control_sd) ? exp(j->control_sd) - 1 : NAN);
		strbuf_addf(sb, ",\"speed_groups\":%zu,\"runs_weighed\":%zu", j->speed_groups,
			    j->runs_weighed);
		strbuf_addf(sb, ",\"raw_times\":%s", j->control_raw ? "true" : "false");
		strbuf_addstr(sb, ",\"apart\":");
		jnum(sb, isfinite(j->apart_sd) ? exp(j->apart_sd) - 1 : NAN);
		strbuf_addch(sb, '}');
		strbuf_addstr(sb, ",\"changes\":[");
		for (k = 0; k < j->nf; k++) {
			if (k)
				strbuf_addch(sb, ',');
			json_finding(sb, &j->f[k]);
		}
		strbuf_addstr(sb, "]}");
	}
	strbuf_addstr(sb, "]}\n");
}

/* --- JUnit ----------------------------------------------------------------- */

static void xml_str(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			strbuf_addstr(sb, "&amp;");
			break;
		case '<':
			strbuf_addstr(sb, "&lt;");
			break;
		case '>':
			strbuf_addstr(sb, "&gt;");
			break;
		case '"':
			strbuf_addstr(sb, "&quot;");
			break;
		case '\'':
			strbuf_addstr(sb, "&apos;");
			break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n')
				strbuf_addch(sb, '?');
			else
				strbuf_addch(sb, *s);
		}
	}
}

static void finding_sentence(struct strbuf *sb, const struct check_finding *f,
			     const struct check_opts *o)
{
	if (o->method == CHECK_MODEL_ORDER && f->base_model) {
		strbuf_addf(sb, "best model %s -> %s", f->base_model, f->target_model);
		return;
	}
	if (o->method > CHECK_MODEL_ORDER) {
		strbuf_addf(sb, "%s time ", check_metric_name(f->metric));
		fmt_change(sb, f->ratio);
		strbuf_addstr(sb, " (");
		strbuf_add_ns(sb, f->base);
		strbuf_addstr(sb, " -> ");
		strbuf_add_ns(sb, f->target);
		if (f->base_model)
			strbuf_addf(sb, ", models %s -> %s", f->base_model, f->target_model);
		if (f->shape)
			strbuf_addf(sb, ", %s", f->shape);
		if (f->rate_name && isfinite(f->rate))
			strbuf_addf(sb, ", %s %.3g", f->rate_name, f->rate);
		strbuf_addf(sb, ", threshold %.0f%%)", 100 * f->threshold);
		return;
	}
	strbuf_addf(sb, "%s time ", check_metric_name(f->metric));
	fmt_change(sb, f->ratio);
	strbuf_addstr(sb, " (");
	strbuf_add_ns(sb, f->base);
	strbuf_addstr(sb, " -> ");
	strbuf_add_ns(sb, f->target);
	strbuf_addf(sb, " per call, %zu -> %zu runs", f->nbase, f->ntarget);
	if (!isnan(f->ci_low)) {
		strbuf_addf(sb, ", %.0f%% interval ", 100 * o->confidence);
		fmt_ci(sb, f);
	}
	if (!isnan(f->p))
		strbuf_addf(sb, ", p %.2g", f->p);
	strbuf_addf(sb, ", threshold %.0f%%, decided by %s)", 100 * f->threshold,
		    f->basis == CHECK_BY_CONTROL ? "the in-run control" : "the runs");
	if (f->cause && strcmp(f->cause, f->context))
		strbuf_addf(sb, ", in callee %s", f->cause);
}

static void junit(const struct check_result *r, const struct check_opts *o, struct strbuf *sb)
{
	size_t i, k, m, tests = 0, failures = 0;
	struct strbuf body = STRBUF_INIT;

	for (i = 0; i < r->njobs; i++) {
		const struct check_job *j = &r->jobs[i];
		struct strbuf name = STRBUF_INIT, cases = STRBUF_INIT;
		size_t jt = 0, jf = 0, js = 0;
		job_title(&name, j);
		/* one test case per context: findings of one context are
		 * adjacent once sorted by context */
		for (k = 0; k < j->nf; k++) {
			struct strbuf fail = STRBUF_INIT, skip = STRBUF_INIT;
			int seen = 0;
			for (m = 0; m < k && !seen; m++)
				seen = !strcmp(j->f[m].context, j->f[k].context);
			if (seen)
				continue;
			for (m = k; m < j->nf; m++) {
				const struct check_finding *f = &j->f[m];
				if (strcmp(f->context, j->f[k].context))
					continue;
				if (f->verdict == CHECK_DEGRADATION) {
					if (fail.len)
						strbuf_addstr(&fail, "; ");
					finding_sentence(&fail, f, o);
				} else if (f->verdict == CHECK_UNDECIDED) {
					if (skip.len)
						strbuf_addstr(&skip, "; ");
					strbuf_addf(&skip, "%s time undecided: %s",
						    check_metric_name(f->metric), f->why);
				}
			}
			jt++;
			strbuf_addstr(&cases, "    <testcase classname=\"");
			xml_str(&cases, name.buf);
			strbuf_addstr(&cases, "\" name=\"");
			xml_str(&cases, j->f[k].context);
			strbuf_addstr(&cases, "\" time=\"0\"");
			if (fail.len) {
				jf++;
				strbuf_addstr(&cases, ">\n      <failure type=\"degradation\" message=\"");
				xml_str(&cases, fail.buf);
				strbuf_addstr(&cases, "\">");
				xml_str(&cases, fail.buf);
				strbuf_addstr(&cases, "</failure>\n    </testcase>\n");
			} else if (skip.len) {
				js++;
				strbuf_addstr(&cases, ">\n      <skipped message=\"");
				xml_str(&cases, skip.buf);
				strbuf_addstr(&cases, "\"/>\n    </testcase>\n");
			} else {
				strbuf_addstr(&cases, "/>\n");
			}
			strbuf_release(&fail);
			strbuf_release(&skip);
		}
		strbuf_addstr(&body, "  <testsuite name=\"");
		xml_str(&body, name.buf);
		strbuf_addf(&body, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
			    jt, jf, js);
		if (*j->machine) {
			strbuf_addstr(&body, "    <properties>\n      <property name=\"machine\" "
					     "value=\"");
			xml_str(&body, j->machine);
			strbuf_addstr(&body, "\"/>\n    </properties>\n");
		}
		strbuf_add(&body, cases.buf ? cases.buf : "", cases.len);
		strbuf_addstr(&body, "  </testsuite>\n");
		tests += jt;
		failures += jf;
		strbuf_release(&name);
		strbuf_release(&cases);
	}
	strbuf_addf(sb,
		    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<testsuites name=\"perun check\" tests=\"%zu\" failures=\"%zu\" "
		    "errors=\"0\">\n",
		    tests, failures);
	strbuf_add(sb, body.buf ? body.buf : "", body.len);
	strbuf_addstr(sb, "</testsuites>\n");
	strbuf_release(&body);
}

/* --- Markdown -------------------------------------------------------------- */

/* s inside a table row or a code span: a control character (a newline
 * would end the row and the span) as \xNN, '|' escaped, '`' as '.  */
static void md_cell(struct strbuf *sb, const char *s)
{
	char *shown = xstrdup_printable(s), *p;

	for (p = shown; *p; p++)
		if (*p == '|')
			strbuf_addstr(sb, "\\|");
		else if (*p == '`')
			strbuf_addch(sb, '\'');
		else
			strbuf_addch(sb, *p);
	free(shown);
}

/* The job's title on one line of Markdown.  */
static void md_job_title(struct strbuf *sb, const struct check_job *j)
{
	struct strbuf t = STRBUF_INIT;

	job_title(&t, j);
	md_cell(sb, strbuf_str(&t));
	strbuf_release(&t);
}

static void markdown(const struct check_result *r, const struct check_opts *o, int all,
		     const char *base, const char *target, struct strbuf *sb)
{
	size_t i, k;

	strbuf_addf(sb, "### perun check: %zu degradation%s, %zu optimization%s, %zu undecided\n\n",
		    r->degradations, r->degradations == 1 ? "" : "s", r->optimizations,
		    r->optimizations == 1 ? "" : "s", r->undecided);
	{
		/* a commit, or the name of a profile file */
		struct strbuf b = STRBUF_INIT, t = STRBUF_INIT;
		strbuf_addf(&b, "%.12s", base);
		strbuf_addf(&t, "%.12s", target);
		strbuf_addch(sb, '`');
		md_cell(sb, strbuf_str(&b));
		strbuf_addstr(sb, "` → `");
		md_cell(sb, strbuf_str(&t));
		strbuf_addf(sb, "`, threshold %.0f%%, confidence %.0f%% (%s)\n",
			    100 * o->threshold, 100 * o->confidence, check_method_name(o->method));
		strbuf_release(&b);
		strbuf_release(&t);
	}
	for (i = 0; i < r->njobs; i++) {
		const struct check_job *j = &r->jobs[i];
		size_t rows = 0;
		strbuf_addstr(sb, "\n#### ");
		md_job_title(sb, j);
		strbuf_addf(sb, "\n\n%zu → %zu runs", j->nbase, j->ntarget);
		if (*j->machine) {
			strbuf_addstr(sb, " on ");
			md_cell(sb, j->machine);
		}
		strbuf_addstr(sb, "\n\n");
		for (k = 0; k < j->nf; k++) {
			const struct check_finding *f = &j->f[k];
			if (!shown(f, all))
				continue;
			if (!rows++)
				strbuf_addstr(sb, "| change | time | context | ratio | interval | "
						  "baseline | target | runs | decided by |\n"
						  "|---|---|---|---:|---|---:|---:|---:|---|\n");
			strbuf_addf(sb, "| %s%s%s | %s | `", f->verdict == CHECK_DEGRADATION ? "**" : "",
				    check_verdict_name(f->verdict),
				    f->verdict == CHECK_DEGRADATION ? "**" : "",
				    check_metric_name(f->metric));
			md_cell(sb, f->context);
			strbuf_addstr(sb, "` | ");
			fmt_change(sb, f->ratio);
			strbuf_addstr(sb, " | ");
			fmt_ci(sb, f);
			strbuf_addstr(sb, " | ");
			strbuf_add_ns(sb, f->base);
			strbuf_addstr(sb, " | ");
			strbuf_add_ns(sb, f->target);
			strbuf_addf(sb, " | %zu/%zu | %s |\n", f->nbase, f->ntarget,
				    check_basis_name(f->basis));
		}
		if (!rows)
			strbuf_addstr(sb, "No change past the threshold.\n");
	}
}

void check_output(const struct check_result *r, const struct check_opts *o, enum check_format f,
		  int all, const char *base, const char *target, struct strbuf *out)
{
	switch (f) {
	case CHECK_FORMAT_JSON:
		json(r, o, base, target, out);
		break;
	case CHECK_FORMAT_JUNIT:
		junit(r, o, out);
		break;
	case CHECK_FORMAT_MARKDOWN:
		markdown(r, o, all, base, target, out);
		break;
	default:
		text(r, o, all, out);
	}
}
