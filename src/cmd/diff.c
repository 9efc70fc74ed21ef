/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun diff A B: two profiles function by function, side by side, the
 * biggest change of median call time first.  */
#include "config.h"

#define PR_FMT "perun diff"

#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/samples.h"
#include "cmd/cmd.h"
#include "profile/profile.h"
#include "report/calls-view.h"
#include "store/profarg.h"
#include "util/log.h"
#include "util/parse-options.h"
#include "util/strbuf.h"

static const char usage[] =
    "usage: perun diff A B [--format text|json|flamegraph|hist]\n\n"
    "A table per function of profiles A and B side by side: calls, median and\n"
    "p95 call time, share of the exclusive time, and the ratio of the medians\n"
    "(B / A), sorted by how much the median changed; functions in only one\n"
    "profile come last; calls marked * include calls without a duration.\n"
    "A and B are paths, N@i, N@p, names (for HEAD) or REV:SPEC (0@i of\n"
    "HEAD~1 is HEAD~1:0@i).  --format flamegraph draws a\n"
    "differential flame graph (SVG) of B's exclusive time, each frame red where\n"
    "its share grew since A, blue where it shrank.  --format hist: p50, p90,\n"
    "p99 and p99.9 per function of A and B, and the ratio of the p99s.\n";

/* --format FORMAT into the const char * o->value.  */
static int parse_format(const struct popt *o, const char *v)
{
	if (strcmp(v, "text") && strcmp(v, "json") && strcmp(v, "flamegraph") && strcmp(v, "hist"))
		return popt_error(o, "unknown format '%s': text, json, flamegraph or hist", v);
	*(const char **)o->value = v;
	return 0;
}

static void cell_ns(struct strbuf *sb, const struct func_samples *s, double v)
{
	char buf[32];

	if (!s)
		snprintf(buf, sizeof(buf), "-");
	else if (v >= 1e9)
		snprintf(buf, sizeof(buf), "%.3gs", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, sizeof(buf), "%.3gms", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, sizeof(buf), "%.3gus", v / 1e3);
	else
		snprintf(buf, sizeof(buf), "%.3gns", v);
	strbuf_addf(sb, " %9s", buf);
}

/* The calls of s in p: those with a duration (s->n) and those without.  */
static uint64_t calls_of(const struct profile *p, const struct func_samples *s, int *marked)
{
	uint64_t untimed, below;

	profile_untimed_calls(p, s->uid, &untimed, &below);
	*marked = untimed || below;
	return s->n + untimed + below;
}

static struct json_object *side_json(const struct profile *p, const struct func_samples *s,
				     double total)
{
	struct json_object *o;
	uint64_t untimed, below;
	int marked;

	if (!s)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "calls", json_object_new_int64((int64_t)calls_of(p, s, &marked)));
	profile_untimed_calls(p, s->uid, &untimed, &below);
	if (untimed)
		json_object_object_add(o, "no_duration", json_object_new_int64((int64_t)untimed));
	if (below)
		json_object_object_add(o, "below_min_duration", json_object_new_int64((int64_t)below));
	json_object_object_add(o, "median", json_object_new_double(s->median));
	json_object_object_add(o, "p95", json_object_new_double(s->p95));
	json_object_object_add(o, "mean", json_object_new_double(s->mean));
	json_object_object_add(o, "exclusive_share",
			       json_object_new_double(total > 0 ? s->sum_exclusive / total : 0));
	return o;
}

int cmd_diff(int argc, char **argv, struct ctx *ctx)
{
	const char *spec[2], *format = "text";
	struct profile p[2] = {{NULL}, {NULL}};
	struct func_table t[2];
	char *label[2] = {NULL, NULL}, minor[41];
	struct samples_pair *rows = NULL;
	struct strbuf out = STRBUF_INIT, inc[2] = {STRBUF_INIT, STRBUF_INIT};
	size_t i, n = 0, w = 8;
	int nspec, ret = EXIT_FAIL, loaded = 0;
	struct popt opts[] = {
		OPT_CALLBACK('f', "format", &format, "FORMAT",
			     "text (default), json, flamegraph (SVG) or hist", parse_format),
		OPT_END(),
	};

	(void)ctx;
	nspec = parse_options(argc, argv, "diff", usage, opts);
	if (nspec < 0)
		return POPT_EXIT(nspec);
	if (nspec != 2) {
		/* one profile alone got the whole help, with no word of what was wrong */
		fprintf(stderr, "perun diff: two profiles, A and B, not %d\n", nspec);
		usage_synopsis(stderr, usage);
		return EXIT_USAGE;
	}
	spec[0] = argv[0];
	spec[1] = argv[1];
	memset(t, 0, sizeof(t));
	for (i = 0; i < 2; i++)
		if (profile_arg_load(spec[i], &p[i], &label[i], minor) < 0)
			goto out;
	/* an incomplete profile says so before any comparison: in the table,
	 * else on stderr (and in the JSON) */
	for (i = 0; i < 2; i++) {
		char pre[8];
		snprintf(pre, sizeof(pre), "%c: ", i ? 'B' : 'A');
		if (profile_incomplete(&p[i], pre, &inc[i]) && strcmp(format, "text") &&
		    strcmp(format, "hist"))
			fputs(inc[i].buf, stderr);
	}
	if (!strcmp(format, "hist")) {
		strbuf_addstr(&out, inc[0].len ? inc[0].buf : "");
		strbuf_addstr(&out, inc[1].len ? inc[1].buf : "");
		if (calls_hist_diff(&p[0], spec[0], &p[1], spec[1], &out) < 0)
			goto out;
		fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
		ret = EXIT_OK;
		goto out;
	}
	if (!strcmp(format, "flamegraph")) {
		struct strbuf fa = STRBUF_INIT, fb = STRBUF_INIT, title = STRBUF_INIT;
		profile_folded(&p[0], &fa);
		profile_folded(&p[1], &fb);
		strbuf_addf(&title, "%s -> %s (red: a larger share of the time, blue: smaller)",
			    label[0], label[1]);
		profile_flamegraph_diff(strbuf_str(&fa), strbuf_str(&fb), title.buf, &out);
		fwrite(out.buf, 1, out.len, stdout);
		strbuf_release(&fa);
		strbuf_release(&fb);
		strbuf_release(&title);
		ret = EXIT_OK;
		goto out;
	}
	samples_read(&p[0], NULL, &t[0]);
	samples_read(&p[1], NULL, &t[1]);
	loaded = 1;
	rows = samples_pair(&t[0], &t[1], &n);
	for (i = 0; i < n; i++)
		if (strlen(rows[i].uid) > w)
			w = strlen(rows[i].uid);
	if (!strcmp(format, "json")) {
		struct json_object *root = json_object_new_object(), *arr = json_object_new_array();
		json_object_object_add(root, "a", json_object_new_string(label[0]));
		json_object_object_add(root, "b", json_object_new_string(label[1]));
		for (i = 0; i < n; i++) {
			struct json_object *o = json_object_new_object();
			json_object_object_add(o, "function", json_object_new_string(rows[i].uid));
			json_object_object_add(o, "a", side_json(&p[0], rows[i].a, t[0].total_exclusive));
			json_object_object_add(o, "b", side_json(&p[1], rows[i].b, t[1].total_exclusive));
			json_object_object_add(
			    o, "ratio",
			    isfinite(rows[i].ratio) ? json_object_new_double(rows[i].ratio) : NULL);
			json_object_array_add(arr, o);
		}
		json_object_object_add(root, "functions", arr);
		for (i = 0; i < 2; i++)
			if (inc[i].len)
				json_object_object_add(root, i ? "b_incomplete" : "a_incomplete",
						       json_object_new_string(inc[i].buf));
		printf("%s\n", json_object_to_json_string_ext(
				   root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
		ret = EXIT_OK;
		goto out;
	}
	strbuf_addstr(&out, "A: ");
	strbuf_add_printable(&out, label[0]);
	strbuf_addstr(&out, "\nB: ");
	strbuf_add_printable(&out, label[1]);
	strbuf_addch(&out, '\n');
	strbuf_addstr(&out, inc[0].len ? inc[0].buf : "");
	strbuf_addstr(&out, inc[1].len ? inc[1].buf : "");
	profile_untimed(&p[0], "A: ", &out);
	profile_untimed(&p[1], "B: ", &out);
	strbuf_addf(&out, "%-*s %8s %8s %9s %9s %9s %9s %7s %7s %7s\n", (int)w, "function",
		    "calls A", "calls B", "median A", "median B", "p95 A", "p95 B", "excl A",
		    "excl B", "ratio");
	for (i = 0; i < n; i++) {
		const struct samples_pair *r = &rows[i];
		char ca[24] = "-", cb[24] = "-", ea[16] = "-", eb[16] = "-", ra[16] = "-", *name;
		int marked;
		if (r->a) {
			uint64_t c = calls_of(&p[0], r->a, &marked);
			snprintf(ca, sizeof(ca), "%" PRIu64 "%s", c, marked ? "*" : "");
			snprintf(ea, sizeof(ea), "%.1f%%",
				 t[0].total_exclusive > 0
				     ? 100 * r->a->sum_exclusive / t[0].total_exclusive
				     : 0);
		}
		if (r->b) {
			uint64_t c = calls_of(&p[1], r->b, &marked);
			snprintf(cb, sizeof(cb), "%" PRIu64 "%s", c, marked ? "*" : "");
			snprintf(eb, sizeof(eb), "%.1f%%",
				 t[1].total_exclusive > 0
				     ? 100 * r->b->sum_exclusive / t[1].total_exclusive
				     : 0);
		}
		if (isfinite(r->ratio))
			snprintf(ra, sizeof(ra), "%.2fx", r->ratio);
		else if (r->a && r->b)
			snprintf(ra, sizeof(ra), "inf");
		name = xstrdup_printable(r->uid);
		strbuf_addf(&out, "%-*s %8s %8s", (int)w, name, ca, cb);
		free(name);
		cell_ns(&out, r->a, r->a ? r->a->median : 0);
		cell_ns(&out, r->b, r->b ? r->b->median : 0);
		cell_ns(&out, r->a, r->a ? r->a->p95 : 0);
		cell_ns(&out, r->b, r->b ? r->b->p95 : 0);
		strbuf_addf(&out, " %7s %7s %7s\n", ea, eb, ra);
	}
	fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
	ret = EXIT_OK;
out:
	free(rows);
	strbuf_release(&out);
	strbuf_release(&inc[0]);
	strbuf_release(&inc[1]);
	if (loaded) {
		samples_release(&t[0]);
		samples_release(&t[1]);
	}
	for (i = 0; i < 2; i++) {
		free(label[i]);
		profile_release(&p[i]);
	}
	return ret;
}
