/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optimize/optimize.h"
#include "util/log.h"
#include "util/strbuf.h"

#define M(x) (1u << (x))

const struct opt_method_def opt_methods[OPT_NMETHODS] = {
	/* loads the call graphs of both versions itself (collect/apply-difftrace.c) */
	[OPT_DIFF_TRACING] = { "diff-tracing", OPT_PHASE_PRE, OPT_REQ_VCS, 1 },
	[OPT_CG_SHAPING] = { "cg-shaping", OPT_PHASE_PRE, OPT_REQ_CALLGRAPH, 1 },
	/* the CFG's complexity classes stand in for Loopus: no sources needed */
	[OPT_BASELINE_STATIC] = { "baseline-static", OPT_PHASE_PRE, OPT_REQ_CALLGRAPH, 1 },
	/* the call graph is optional: without it no wrapper filter */
	[OPT_BASELINE_DYNAMIC] = { "baseline-dynamic", OPT_PHASE_PRE | OPT_PHASE_POST,
				   OPT_REQ_STATS, 1 },
	/* stats are optional (7.2.5): without them, the initial phase */
	[OPT_DYNAMIC_SAMPLING] = { "dynamic-sampling", OPT_PHASE_PRE | OPT_PHASE_POST,
				   OPT_REQ_CALLGRAPH, 1 },
	[OPT_TIMED_SAMPLING] = { "timed-sampling", OPT_PHASE_RUN | OPT_PHASE_POST,
				 OPT_REQ_PER_CALL, 1 },
	[OPT_DYNAMIC_PROBING] = { "dynamic-probing", OPT_PHASE_RUN | OPT_PHASE_POST,
				  OPT_REQ_PER_CALL, 1 },
};

/* Table A.4; the constants it names are folded into the defaults.  */
const struct opt_param opt_params[] = {
	{ "diff-keep-leaf", OPT_T_BOOL, "false", NULL, 0, 0, M(OPT_DIFF_TRACING) },
	{ "diff-inspect-all", OPT_T_BOOL, "true", NULL, 0, 0, M(OPT_DIFF_TRACING) },
	{ "diff-cfg-mode", OPT_T_ENUM, "semistrict", "soft|semistrict|strict", 0, 0,
	  M(OPT_DIFF_TRACING) },
	/* the baseline: a binary built at diff-version (collect/apply-difftrace.c) */
	{ "diff-baseline", OPT_T_PATHS, "", NULL, 0, 0, M(OPT_DIFF_TRACING) },
	{ "diff-version", OPT_T_PATHS, "HEAD~1", NULL, 0, 0, M(OPT_DIFF_TRACING) },
	{ "source-files", OPT_T_PATHS, "", NULL, 0, 0, M(OPT_BASELINE_STATIC) },
	{ "source-dirs", OPT_T_PATHS, "", NULL, 0, 0, M(OPT_BASELINE_STATIC) },
	{ "static-complexity", OPT_T_ENUM, "constant",
	  "constant|linear|quadratic|cubic|quartic", 0, 0,
	  M(OPT_BASELINE_STATIC) },
	{ "static-keep-top", OPT_T_INT, "1", NULL, 0, 1e6, M(OPT_BASELINE_STATIC) },
	{ "cg-mode", OPT_T_ENUM, "match", "match|soft|strict|prune", 0, 0, M(OPT_CG_SHAPING) },
	{ "cg-keep-top", OPT_T_INT, "2", NULL, 0, 1e6, M(OPT_CG_SHAPING) },
	{ "cg-trim-min-functions", OPT_T_INT, "10", NULL, 0, 1e9, M(OPT_CG_SHAPING) },
	{ "cg-trim-keep-leaf", OPT_T_BOOL, "false", NULL, 0, 0, M(OPT_CG_SHAPING) },
	{ "cg-prune-chain-length", OPT_T_INT, "1", NULL, 0, 1e6, M(OPT_CG_SHAPING) },
	{ "dyn-sample-step", OPT_T_REAL, "2", NULL, 1, 1e6, M(OPT_DYNAMIC_SAMPLING) },
	{ "dyn-sample-threshold", OPT_T_INT, "10000", NULL, 1, 1e12, M(OPT_DYNAMIC_SAMPLING) },
	{ "probing-threshold", OPT_T_INT, "100000", NULL, 1, 4294967295.0,
	  M(OPT_DYNAMIC_PROBING) },
	{ "probing-reattach", OPT_T_BOOL, "false", NULL, 0, 0, M(OPT_DYNAMIC_PROBING) },
	/* not in the thesis, which gives no interval: the first re-arm, doubling */
	{ "probing-reattach-ms", OPT_T_INT, "100", NULL, 1, 3600000, M(OPT_DYNAMIC_PROBING) },
	{ "timed-sample-freq", OPT_T_REAL, "1", NULL, 0.001, 1000, M(OPT_TIMED_SAMPLING) },
	{ "dyn-base-soft-threshold", OPT_T_INT, "10000", NULL, 1, 1e12, M(OPT_BASELINE_DYNAMIC) },
	{ "dyn-base-hard-threshold", OPT_T_INT, "1000000", NULL, 1, 1e15,
	  M(OPT_BASELINE_DYNAMIC) },
	{ "threshold-mode", OPT_T_ENUM, "soft", "soft|strict", 0, 0,
	  M(OPT_DYNAMIC_SAMPLING) | M(OPT_BASELINE_DYNAMIC) },
};
const size_t opt_nparams = sizeof(opt_params) / sizeof(opt_params[0]);

/* The pipelines of 7.3: their methods, and the modes Table A.4 predicts for
 * them (the values a pipeline gives unless -oa says otherwise).  */
struct pipeline {
	const char *name;
	unsigned methods;
	const char *const *values;	/* name, value, ..., NULL */
};

static const char *const basic_values[] = { "cg-mode", "strict", "threshold-mode", "strict",
					    "diff-cfg-mode", "soft", NULL };
static const char *const advanced_values[] = { "cg-mode", "soft", "threshold-mode", "soft",
					       "diff-cfg-mode", "semistrict", NULL };
static const char *const full_values[] = { "cg-mode", "prune", "threshold-mode", "soft",
					   "diff-cfg-mode", "strict", "probing-reattach", "false",
					   NULL };

static const struct pipeline pipelines[] = {
	{ "basic", M(OPT_CG_SHAPING) | M(OPT_BASELINE_DYNAMIC), basic_values },
	{ "advanced",
	  M(OPT_DIFF_TRACING) | M(OPT_CG_SHAPING) | M(OPT_BASELINE_DYNAMIC) |
		  M(OPT_DYNAMIC_SAMPLING),
	  advanced_values },
	/* timed sampling left out: with dynamic sampling it cuts too much (7.3.3) */
	{ "full",
	  M(OPT_DIFF_TRACING) | M(OPT_CG_SHAPING) | M(OPT_BASELINE_STATIC) |
		  M(OPT_BASELINE_DYNAMIC) | M(OPT_DYNAMIC_SAMPLING) | M(OPT_DYNAMIC_PROBING),
	  full_values },
};

static const struct pipeline *pipeline_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(pipelines) / sizeof(pipelines[0]); i++)
		if (!strcmp(pipelines[i].name, name))
			return &pipelines[i];
	return NULL;
}

void opt_selection_init(struct opt_selection *s)
{
	memset(s, 0, sizeof(*s));
	s->values = xcalloc(opt_nparams, sizeof(*s->values));
}

void opt_selection_release(struct opt_selection *s)
{
	free(s->values);
	s->values = NULL;
}

int opt_method_find(const char *name)
{
	int i;

	for (i = 0; i < OPT_NMETHODS; i++)
		if (!strcmp(opt_methods[i].name, name))
			return i;
	return -1;
}

int opt_param_find(const char *name)
{
	size_t i;

	for (i = 0; i < opt_nparams; i++)
		if (!strcmp(opt_params[i].name, name))
			return (int)i;
	return -1;
}

int opt_pipeline_valid(const char *name)
{
	return pipeline_find(name) != NULL;
}

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int enum_has(const char *choices, const char *v)
{
	size_t n = strlen(v);
	const char *p = choices;

	while (p && *p) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, v, n))
			return 1;
		p = bar ? bar + 1 : NULL;
	}
	return 0;
}

static int parse_number(const struct opt_param *pa, const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(d) || d < pa->min || d > pa->max)
		return -1;
	if (pa->type == OPT_T_INT && d != (double)(long long)d)
		return -1;
	*out = d;
	return 0;
}

int opt_set(struct opt_selection *s, const char *name, const char *value)
{
	int i = opt_param_find(name), b;
	const struct opt_param *pa;
	double d;

	if (i < 0)
		return pr_error("-oa %s: no such optimization parameter (see perun collect "
				"--help, or man perun-collect)",
				name);
	pa = &opt_params[i];
	switch (pa->type) {
	case OPT_T_BOOL:
		if (parse_bool(value, &b) < 0)
			return pr_error("-oa %s wants true or false, not '%s'", name, value);
		break;
	case OPT_T_INT:
	case OPT_T_REAL:
		if (parse_number(pa, value, &d) < 0)
			return pr_error("-oa %s wants %s from %g to %g, not '%s'", name,
					pa->type == OPT_T_INT ? "an integer" : "a number", pa->min,
					pa->max, value);
		break;
	case OPT_T_ENUM:
		if (!enum_has(pa->choices, value))
			return pr_error("-oa %s is one of %s, not '%s'", name, pa->choices, value);
		break;
	case OPT_T_PATHS:
		break;
	}
	s->values[i] = value;
	return 0;
}

int opt_toggle(struct opt_selection *s, const char *name, int on)
{
	int m = opt_method_find(name);
	struct strbuf sb = STRBUF_INIT;
	int i;

	if (m < 0) {
		for (i = 0; i < OPT_NMETHODS; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", opt_methods[i].name);
		pr_error("%s %s: no such optimization method: use one of %s", on ? "-on" : "-off",
			 name, sb.buf);
		strbuf_release(&sb);
		return -1;
	}
	if (s->ntoggles == OPT_MAX_TOGGLES)
		return pr_error("more than %d -on/-off options", OPT_MAX_TOGGLES);
	s->toggles[s->ntoggles].m = (enum opt_method)m;
	s->toggles[s->ntoggles].on = on;
	s->ntoggles++;
	return 0;
}

const char *opt_requirement_name(unsigned bit)
{
	switch (bit) {
	case OPT_REQ_CALLGRAPH: return "call graph";
	case OPT_REQ_STATS: return "dynamic stats of an earlier collect";
	case OPT_REQ_VCS: return "git history";
	case OPT_REQ_PER_CALL: return "per-call records (not --aggregate)";
	case OPT_REQ_SOURCES: return "source files";
	}
	return "?";
}

int opt_resolve(struct opt_selection *s, unsigned have, FILE *notice)
{
	const struct pipeline *p = pipeline_find(s->pipeline);
	size_t i;
	int m, n = 0;

	for (m = 0; m < OPT_NMETHODS; m++) {
		s->on[m] = p && (p->methods & M(m));
		s->off_why[m] = NULL;
	}
	for (i = 0; i < s->ntoggles; i++)
		s->on[s->toggles[i].m] = (unsigned char)s->toggles[i].on;
	for (m = 0; m < OPT_NMETHODS; m++) {
		unsigned missing = opt_methods[m].requires & ~have, bit;
		s->missing[m] = s->on[m] ? missing : 0;
		s->unimplemented[m] = s->on[m] && !missing && !opt_methods[m].implemented;
		s->active[m] = s->on[m] && !missing && opt_methods[m].implemented;
		n += s->active[m];
		if (s->unimplemented[m] && notice)
			fprintf(notice, "perun: optimization %s switched off: not implemented yet\n",
				opt_methods[m].name);
		if (!s->on[m] || !missing || !notice)
			continue;
		fprintf(notice, "perun: optimization %s switched off: no ", opt_methods[m].name);
		for (bit = 1; bit <= missing; bit <<= 1)
			if (missing & bit)
				fprintf(notice, "%s%s", opt_requirement_name(bit),
					(missing & ~(bit | (bit - 1))) ? ", no " : "");
		fputc('\n', notice);
	}
	return n;
}

const char *opt_value(const struct opt_selection *s, const char *name)
{
	const struct pipeline *p = pipeline_find(s->pipeline);
	int i = opt_param_find(name);
	size_t k;

	if (i < 0)
		BUG("unknown optimization parameter");
	if (s->values && s->values[i])
		return s->values[i];
	/* Table A.4: probing_threshold * probing_reattach_coefficient (0.2) */
	if (!strcmp(name, "probing-threshold") && opt_value_bool(s, "probing-reattach"))
		return "20000";
	for (k = 0; p && p->values[k]; k += 2)
		if (!strcmp(p->values[k], name))
			return p->values[k + 1];
	return opt_params[i].def;
}

long long opt_value_int(const struct opt_selection *s, const char *name)
{
	return (long long)strtod(opt_value(s, name), NULL);
}

double opt_value_real(const struct opt_selection *s, const char *name)
{
	return strtod(opt_value(s, name), NULL);
}

int opt_value_bool(const struct opt_selection *s, const char *name)
{
	int b = 0;

	parse_bool(opt_value(s, name), &b);
	return b;
}

static struct json_object *param_json(const struct opt_param *pa, const char *v)
{
	int b = 0;

	switch (pa->type) {
	case OPT_T_BOOL:
		parse_bool(v, &b);
		return json_object_new_boolean(b);
	case OPT_T_INT:
		return json_object_new_int64((int64_t)strtod(v, NULL));
	case OPT_T_REAL:
		return json_object_new_double(strtod(v, NULL));
	default:
		return json_object_new_string(v);
	}
}

struct json_object *opt_json(const struct opt_selection *s)
{
	struct json_object *o = json_object_new_object(), *ms = json_object_new_array();
	struct json_object *off = json_object_new_object();
	size_t i;
	int m;

	json_object_object_add(o, "pipeline", s->pipeline ? json_object_new_string(s->pipeline)
							  : NULL);
	for (m = 0; m < OPT_NMETHODS; m++) {
		struct json_object *j, *ph, *pj;
		if (s->on[m] && !s->active[m] && s->off_why[m]) {
			json_object_object_add(off, opt_methods[m].name,
					       json_object_new_string(s->off_why[m]));
		} else if (s->on[m] && !s->active[m]) {
			struct strbuf sb = STRBUF_INIT;
			unsigned bit;
			for (bit = 1; bit <= s->missing[m]; bit <<= 1)
				if (s->missing[m] & bit)
					strbuf_addf(&sb, "%sno %s", sb.len ? ", " : "",
						    opt_requirement_name(bit));
			if (s->unimplemented[m])
				strbuf_addstr(&sb, "not implemented yet");
			json_object_object_add(off, opt_methods[m].name,
					       json_object_new_string(sb.buf));
			strbuf_release(&sb);
		}
		if (!s->active[m])
			continue;
		j = json_object_new_object();
		ph = json_object_new_array();
		pj = json_object_new_object();
		json_object_object_add(j, "name", json_object_new_string(opt_methods[m].name));
		if (opt_methods[m].phases & OPT_PHASE_PRE)
			json_object_array_add(ph, json_object_new_string("pre-optimize"));
		if (opt_methods[m].phases & OPT_PHASE_RUN)
			json_object_array_add(ph, json_object_new_string("run-optimize"));
		if (opt_methods[m].phases & OPT_PHASE_POST)
			json_object_array_add(ph, json_object_new_string("post-optimize"));
		json_object_object_add(j, "phases", ph);
		for (i = 0; i < opt_nparams; i++)
			if (opt_params[i].methods & M(m))
				json_object_object_add(pj, opt_params[i].name,
						       param_json(&opt_params[i],
								  opt_value(s, opt_params[i].name)));
		json_object_object_add(j, "params", pj);
		json_object_array_add(ms, j);
	}
	json_object_object_add(o, "methods", ms);
	json_object_object_add(o, "switched_off", off);
	json_object_object_add(o, "cache_off", json_object_new_boolean(s->cache_off));
	return o;
}
