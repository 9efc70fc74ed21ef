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
#define F(x) offsetof(struct opt_values, x)
const struct opt_param opt_params[] = {
	{ "diff-keep-leaf", OPT_T_BOOL, "false", NULL, 0, 0, M(OPT_DIFF_TRACING),
	  F(diff_keep_leaf), 0, NULL },
	{ "diff-inspect-all", OPT_T_BOOL, "true", NULL, 0, 0, M(OPT_DIFF_TRACING),
	  F(diff_inspect_all), 0, NULL },
	{ "diff-cfg-mode", OPT_T_ENUM, "semistrict", "soft|semistrict|strict", 0, 0,
	  M(OPT_DIFF_TRACING), F(diff_cfg_mode), 0, NULL },
	/* the baseline: a binary built at diff-version (collect/apply-difftrace.c) */
	{ "diff-baseline", OPT_T_PATHS, "", NULL, 0, 0, M(OPT_DIFF_TRACING), F(diff_baseline), 0,
	  NULL },
	{ "diff-version", OPT_T_PATHS, "HEAD~1", NULL, 0, 0, M(OPT_DIFF_TRACING), F(diff_version),
	  0, NULL },
	{ "source-files", OPT_T_PATHS, "", NULL, 0, 0, M(OPT_BASELINE_STATIC), F(source_files), 0,
	  NULL },
	{ "source-dirs", OPT_T_PATHS, "", NULL, 0, 0, M(OPT_BASELINE_STATIC), F(source_dirs), 0,
	  NULL },
	{ "static-complexity", OPT_T_ENUM, "constant",
	  "constant|linear|quadratic|cubic|quartic", 0, 0, M(OPT_BASELINE_STATIC),
	  F(static_complexity), 0, NULL },
	{ "static-keep-top", OPT_T_INT, "1", NULL, 0, 1e6, M(OPT_BASELINE_STATIC),
	  F(static_keep_top), 1, NULL },
	{ "cg-mode", OPT_T_ENUM, "match", "match|soft|strict|prune", 0, 0, M(OPT_CG_SHAPING),
	  F(cg_mode), 0, NULL },
	{ "cg-keep-top", OPT_T_INT, "2", NULL, 0, 1e6, M(OPT_CG_SHAPING), F(cg_keep_top), 1, NULL },
	{ "cg-trim-min-functions", OPT_T_INT, "10", NULL, 0, 1e9, M(OPT_CG_SHAPING),
	  F(cg_trim_min_functions), 1, NULL },
	{ "cg-trim-keep-leaf", OPT_T_BOOL, "false", NULL, 0, 0, M(OPT_CG_SHAPING),
	  F(cg_trim_keep_leaf), 1, NULL },
	{ "cg-prune-chain-length", OPT_T_INT, "1", NULL, 0, 1e6, M(OPT_CG_SHAPING),
	  F(cg_prune_chain_length), 1, NULL },
	{ "dyn-sample-step", OPT_T_REAL, "2", NULL, 1, 1e6, M(OPT_DYNAMIC_SAMPLING),
	  F(dyn_sample_step), 0, NULL },
	{ "dyn-sample-threshold", OPT_T_INT, "10000", NULL, 1, 1e12, M(OPT_DYNAMIC_SAMPLING),
	  F(dyn_sample_threshold), 0, "1000" },
	{ "probing-threshold", OPT_T_INT, "100000", NULL, 1, 4294967295.0,
	  M(OPT_DYNAMIC_PROBING), F(probing_threshold), 0, NULL },
	{ "probing-reattach", OPT_T_BOOL, "false", NULL, 0, 0, M(OPT_DYNAMIC_PROBING),
	  F(probing_reattach), 0, NULL },
	/* not in the thesis, which gives no interval: the first re-arm, doubling */
	{ "probing-reattach-ms", OPT_T_INT, "100", NULL, 1, 3600000, M(OPT_DYNAMIC_PROBING),
	  F(probing_reattach_ms), 0, NULL },
	{ "timed-sample-freq", OPT_T_REAL, "1", NULL, 0.001, 1000, M(OPT_TIMED_SAMPLING),
	  F(timed_sample_freq), 0, NULL },
	{ "dyn-base-soft-threshold", OPT_T_INT, "10000", NULL, 1, 1e12, M(OPT_BASELINE_DYNAMIC),
	  F(dyn_base_soft_threshold), 0, "1000" },
	{ "dyn-base-hard-threshold", OPT_T_INT, "1000000", NULL, 1, 1e15,
	  M(OPT_BASELINE_DYNAMIC), F(dyn_base_hard_threshold), 0, "100000" },
	{ "threshold-mode", OPT_T_ENUM, "soft", "soft|strict", 0, 0,
	  M(OPT_DYNAMIC_SAMPLING) | M(OPT_BASELINE_DYNAMIC), F(threshold_mode), 0, NULL },
};
#undef F
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
	opt_fill(s);
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

/* The place of v among choices ("a|b|c"), or -1.  */
static int choice_index(const char *choices, const char *v)
{
	size_t n = strlen(v);
	const char *p = choices;
	int i = 0;

	while (p && *p) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, v, n))
			return i;
		p = bar ? bar + 1 : NULL;
		i++;
	}
	return -1;
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
		if (choice_index(pa->choices, value) < 0)
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

/* The row of the parameter struct opt_values holds at field.  */
static size_t row_of_field(size_t field)
{
	size_t i;

	for (i = 0; i < opt_nparams; i++)
		if (opt_params[i].field == field)
			return i;
	BUG("no optimization parameter at that field");
}

/* Parameter i's value as -oa would give it: -oa, else what the pipeline
 * predicts, else the default of Table A.4.  */
static const char *value_text(const struct opt_selection *s, size_t i)
{
	const struct pipeline *p = pipeline_find(s->pipeline);
	size_t k;
	int b = 0;

	if (s->values && s->values[i])
		return s->values[i];
	/* Table A.4: probing_threshold * probing_reattach_coefficient (0.2) */
	if (opt_params[i].field == offsetof(struct opt_values, probing_threshold) &&
	    parse_bool(value_text(s, row_of_field(offsetof(struct opt_values, probing_reattach))),
		       &b) == 0 &&
	    b)
		return "20000";
	for (k = 0; p && p->values[k]; k += 2)
		if (!strcmp(p->values[k], opt_params[i].name))
			return p->values[k + 1];
	return opt_params[i].def;
}

/* Stores text, of parameter pa's type, into its field of v.  */
static void store(const struct opt_param *pa, const char *text, struct opt_values *v)
{
	char *at = (char *)v + pa->field;
	long long ll;
	double d;
	int b = 0;

	switch (pa->type) {
	case OPT_T_BOOL:
		if (strcmp(text, "-1"))
			parse_bool(text, &b);
		else
			b = -1; /* predicted */
		memcpy(at, &b, sizeof(b));
		break;
	case OPT_T_INT:
		ll = (long long)strtod(text, NULL);
		memcpy(at, &ll, sizeof(ll));
		break;
	case OPT_T_REAL:
		d = strtod(text, NULL);
		memcpy(at, &d, sizeof(d));
		break;
	case OPT_T_ENUM:
		b = choice_index(pa->choices, text); /* checked by opt_set() */
		memcpy(at, &b, sizeof(b));
		break;
	case OPT_T_PATHS:
		memcpy(at, &text, sizeof(text));
		break;
	}
}

/* An enum parameter is stored as an int.  */
_Static_assert(sizeof(enum opt_cg_mode) == sizeof(int) &&
		       sizeof(enum opt_cfg_mode) == sizeof(int) &&
		       sizeof(enum opt_threshold_mode) == sizeof(int),
	       "enum parameters are ints");

void opt_fill(struct opt_selection *s)
{
	size_t i;

	for (i = 0; i < opt_nparams; i++) {
		const struct opt_param *pa = &opt_params[i];
		if (s->values && s->values[i])
			store(pa, s->values[i], &s->v);
		else if (pa->predicted)
			store(pa, "-1", &s->v);
		else
			store(pa, value_text(s, i), &s->v);
	}
	/* the thresholds, once threshold-mode is known */
	for (i = 0; i < opt_nparams; i++)
		if (opt_params[i].strict && !(s->values && s->values[i]) &&
		    s->v.threshold_mode == OPT_THRESHOLD_STRICT)
			store(&opt_params[i], opt_params[i].strict, &s->v);
}

const char *opt_cg_mode_name(enum opt_cg_mode m)
{
	static const char *const names[] = { "match", "soft", "strict", "prune" };

	return names[m];
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
						       param_json(&opt_params[i], value_text(s, i)));
		json_object_object_add(j, "params", pj);
		json_object_array_add(ms, j);
	}
	json_object_object_add(o, "methods", ms);
	json_object_object_add(o, "switched_off", off);
	json_object_object_add(o, "cache_off", json_object_new_boolean(s->cache_off));
	return o;
}
