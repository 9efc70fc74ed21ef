/* perun check [BASELINE] [TARGET]: the degradation check of seeds/003 4.1.
 * Profiles of two minor versions are paired by collector, command,
 * arguments and workload; per function the call-time distributions are
 * compared by the Average Amount Threshold (the ratio of the means against
 * --threshold) together with the Mann-Whitney U test (analysis/robust.h says
 * why that test), and by the Integral Method on fitted models where both
 * profiles have them (perun postprocessby regression-analysis).  */
#include "config.h"

#define PR_FMT "perun check"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/models.h"
#include "analysis/samples.h"
#include "analysis/robust.h"
#include "cmd/cmd.h"
#include "profile/profile.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

static const char usage[] =
    "usage: perun check [BASELINE] [TARGET] [--threshold R] [--confidence C]\n"
    "                   [--format text|json] [--all] [--inclusive]\n\n"
    "Compares the profiles registered for TARGET (default HEAD) with those of\n"
    "BASELINE (default: the nearest ancestor of TARGET with profiles of the same\n"
    "collector, command, arguments and workload).  Either may also be a profile\n"
    "file.  Per function: a degradation (optimization) when its mean self time\n"
    "(exclusive of recorded callees) grew (shrank) by more than the threshold and\n"
    "the Mann-Whitney U test is that confident of the shift; where both profiles\n"
    "hold regression models, their integrals must agree.\n\n"
    "  --threshold R      relative change of the mean that counts (default 0.2)\n"
    "  --confidence C     confidence the test must reach (default 0.99)\n"
    "  --format FORMAT    text (default) or json\n"
    "  --all              list unchanged functions too\n"
    "  --inclusive        compare whole call times, callees included\n\n"
    "Exit status: 0 no degradation, 1 a degradation (or a failure), 2 usage.\n";

/* One side: the profiles of a minor version, or one file.  */
struct side {
	char sha[41];
	char **labels;
	struct profile *p;
	size_t n;
};

static void side_release(struct side *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->labels[i]);
		profile_release(&s->p[i]);
	}
	free(s->labels);
	free(s->p);
	memset(s, 0, sizeof(*s));
}

static void side_push(struct side *s, struct profile *p, char *label)
{
	s->p = xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
	s->labels = xrealloc(s->labels, (s->n + 1) * sizeof(*s->labels));
	s->p[s->n] = *p;
	s->labels[s->n++] = label;
}

/* The registered profiles of sha; 0 with s->n = 0 when there are none.  */
static int side_load_minor(const struct repo *r, const char *sha, struct side *s)
{
	struct pidx index;
	size_t i;
	int ret = -1;

	memset(s, 0, sizeof(*s));
	snprintf(s->sha, sizeof(s->sha), "%s", sha);
	pidx_init(&index);
	if (store_read_index(r->dir, sha, &index) < 0)
		goto out;
	for (i = 0; i < index.n; i++) {
		struct lookup l = {1, i, NULL};
		struct profile p = {NULL};
		if (repo_load(r, &index, &l, &p) < 0)
			goto out;
		side_push(s, &p, xstrfmt("%.7s:%zu@i", sha, i));
	}
	ret = 0;
out:
	pidx_release(&index);
	return ret;
}

static const char *hstr(const struct profile *p, const char *path)
{
	const char *v = profile_str(p, path);

	return v ? v : "";
}

static int same_config(const struct profile *a, const struct profile *b)
{
	return !strcmp(hstr(a, "collector_info.name"), hstr(b, "collector_info.name")) &&
	       !strcmp(hstr(a, "header.cmd"), hstr(b, "header.cmd")) &&
	       !strcmp(hstr(a, "header.args"), hstr(b, "header.args")) &&
	       !strcmp(hstr(a, "header.workload"), hstr(b, "header.workload"));
}

struct find_base {
	const struct repo *r;
	const struct side *target;
	struct side *base;
	int found, failed;
};

static int find_base_one(void *ctx, const struct minor_version *mv)
{
	struct find_base *f = ctx;
	size_t i, j;

	if (!strcmp(mv->sha, f->target->sha))
		return 0;
	if (side_load_minor(f->r, mv->sha, f->base) < 0) {
		f->failed = 1;
		return 1;
	}
	for (i = 0; i < f->base->n; i++)
		for (j = 0; j < f->target->n; j++)
			if (same_config(&f->base->p[i], &f->target->p[j])) {
				f->found = 1;
				return 1;
			}
	side_release(f->base);
	return 0;
}

/* --- one function ------------------------------------------------------- */

enum change {
	NO_CHANGE,
	DEGRADATION,
	OPTIMIZATION,
	MAYBE_DEGRADATION,
	MAYBE_OPTIMIZATION,
	NEW_FUNCTION,
	REMOVED_FUNCTION
};
static const char *const change_names[] = {
    "no-change",	  "degradation", "optimization", "maybe-degradation",
    "maybe-optimization", "new",	 "removed",
};

/* The call times compared: exclusive (self) time when every call has it,
 * so that a slower callee does not also flag its callers; else inclusive.  */
struct dist {
	double *v;
	size_t n;
	double mean, median, p95;
	int exclusive;
};

static void dist_of(const struct func_samples *s, int inclusive, struct dist *d)
{
	size_t i;
	double *tmp;

	memset(d, 0, sizeof(*d));
	if (!s)
		return;
	d->exclusive = !inclusive;
	for (i = 0; i < s->n && d->exclusive; i++)
		if (isnan(s->exclusive[i]))
			d->exclusive = 0;
	d->v = d->exclusive ? s->exclusive : s->amount;
	d->n = s->n;
	d->mean = stats_mean(d->v, d->n);
	tmp = xmalloc((d->n ? d->n : 1) * sizeof(*tmp));
	memcpy(tmp, d->v, d->n * sizeof(*tmp));
	d->median = stats_median(tmp, d->n);
	d->p95 = stats_quantile_sorted(tmp, d->n, 0.95);
	free(tmp);
	if (!d->exclusive) {	/* the samples' own: from the histogram with --aggregate */
		d->median = s->median;
		d->p95 = s->p95;
	}
}

struct finding {
	struct dist db, dt;
	const char *uid;
	enum change change;
	double severity; /* relative change of the mean */
	double confidence;
	struct mw_result mw;
	const struct func_samples *b, *t;
	int have_integral;
	const char *model;
	double integral_ratio;
};

/* The regression model of uid with the best r2 in p, or NULL.  */
static struct json_object *best_model(const struct profile *p, const char *uid, const char *kind)
{
	struct json_object *snaps = json_object_object_get(p->root, "snapshots"), *best = NULL;
	double best_r2 = -INFINITY;
	size_t i, j;

	for (i = 0; snaps && i < json_object_array_length(snaps); i++) {
		struct json_object *ms =
		    json_object_object_get(json_object_array_get_idx(snaps, i), "models");
		for (j = 0; ms && json_object_is_type(ms, json_type_array) &&
			    j < json_object_array_length(ms);
		     j++) {
			struct json_object *m = json_object_array_get_idx(ms, j), *u, *k, *r2, *c;
			if (!json_object_object_get_ex(m, "uid", &u) ||
			    !json_object_object_get_ex(m, "model", &k) ||
			    !json_object_object_get_ex(m, "coeffs", &c) ||
			    strcmp(json_object_get_string(u), uid) ||
			    model_kind_parse(json_object_get_string(k)) < 0 ||
			    (kind && strcmp(json_object_get_string(k), kind)))
				continue;
			r2 = json_object_object_get(m, "r_square");
			if (!best || (r2 && json_object_get_double(r2) > best_r2)) {
				best = m;
				best_r2 = r2 ? json_object_get_double(r2) : -INFINITY;
			}
		}
	}
	return best;
}

static int model_from_json(struct json_object *o, struct model *m)
{
	struct json_object *c = json_object_object_get(o, "coeffs");
	size_t i;

	memset(m, 0, sizeof(*m));
	m->kind = (enum model_kind)model_kind_parse(
	    json_object_get_string(json_object_object_get(o, "model")));
	for (i = 0; c && i < json_object_array_length(c) && i < 3; i++)
		m->b[i] = json_object_get_double(
		    json_object_object_get(json_object_array_get_idx(c, i), "value"));
	m->ncoeffs = i;
	m->x_start = json_object_get_double(json_object_object_get(o, "x_interval_start"));
	m->x_end = json_object_get_double(json_object_object_get(o, "x_interval_end"));
	return 0;
}

/* The Integral Method: the area under the same form fitted in both
 * profiles, over the x interval they share.  */
static void integral(const struct profile *pb, const struct profile *pt, struct finding *f)
{
	struct json_object *jt = best_model(pt, f->uid, NULL), *jb;
	struct model mb, mt;
	double lo, hi, ib, it;

	if (!jt)
		return;
	jb = best_model(pb, f->uid, json_object_get_string(json_object_object_get(jt, "model")));
	if (!jb)
		return;
	model_from_json(jb, &mb);
	model_from_json(jt, &mt);
	lo = mb.x_start > mt.x_start ? mb.x_start : mt.x_start;
	hi = mb.x_end < mt.x_end ? mb.x_end : mt.x_end;
	if (!(hi > lo))
		return;
	ib = model_integral(&mb, lo, hi);
	it = model_integral(&mt, lo, hi);
	if (!isfinite(ib) || !isfinite(it) || ib <= 0)
		return;
	f->have_integral = 1;
	f->model = model_name(mt.kind);
	f->integral_ratio = it / ib;
}

static int compare_function(const struct profile *pb, const struct profile *pt,
			    const struct func_samples *b, const struct func_samples *t,
			    double threshold, double confidence, int inclusive, struct finding *f)
{
	int up, down;

	memset(f, 0, sizeof(*f));
	f->b = b;
	f->t = t;
	f->uid = t ? t->uid : b ? b->uid : "";
	if (!b || !t) {
		f->change = b ? REMOVED_FUNCTION : NEW_FUNCTION;
		return 0;
	}
	dist_of(b, inclusive, &f->db);
	dist_of(t, inclusive, &f->dt);
	if (f->db.exclusive != f->dt.exclusive) { /* compare like with like */
		dist_of(b, 1, &f->db);
		dist_of(t, 1, &f->dt);
	}
	if (stats_mann_whitney(f->db.v, f->db.n, f->dt.v, f->dt.n, &f->mw) < 0)
		return -1;
	f->confidence = f->mw.confidence;
	f->severity = f->db.mean > 0 ? f->dt.mean / f->db.mean - 1 : f->dt.mean > 0 ? INFINITY : 0;
	integral(pb, pt, f);
	up = f->severity >= threshold;
	down = f->severity <= 1 / (1 + threshold) - 1;
	if (f->have_integral) { /* the models must agree with the means */
		up = up && f->integral_ratio - 1 >= threshold;
		down = down && f->integral_ratio - 1 <= 1 / (1 + threshold) - 1;
	}
	if (up)
		f->change =
		    f->confidence >= confidence && f->mw.z > 0 ? DEGRADATION : MAYBE_DEGRADATION;
	else if (down)
		f->change =
		    f->confidence >= confidence && f->mw.z < 0 ? OPTIMIZATION : MAYBE_OPTIMIZATION;
	return 0;
}

static int cmp_finding(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	int rx = x->change == DEGRADATION ? 0 : x->change == OPTIMIZATION ? 1 : 2;
	int ry = y->change == DEGRADATION ? 0 : y->change == OPTIMIZATION ? 1 : 2;
	double sx = fabs(isfinite(x->severity) ? x->severity : 1e300);
	double sy = fabs(isfinite(y->severity) ? y->severity : 1e300);

	if (rx != ry)
		return rx - ry;
	return (sx < sy) - (sx > sy);
}

static void fmt_ns(struct strbuf *sb, double ns)
{
	if (ns >= 1e9)
		strbuf_addf(sb, "%.3g s", ns / 1e9);
	else if (ns >= 1e6)
		strbuf_addf(sb, "%.3g ms", ns / 1e6);
	else if (ns >= 1e3)
		strbuf_addf(sb, "%.3g us", ns / 1e3);
	else
		strbuf_addf(sb, "%.3g ns", ns);
}

static struct json_object *dist_json(const struct func_samples *s, const struct dist *d)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "calls", json_object_new_int64((int64_t)s->n));
	json_object_object_add(o, "total", json_object_new_double(s->sum));
	if (d->n) {
		json_object_object_add(
		    o, "time", json_object_new_string(d->exclusive ? "exclusive" : "inclusive"));
		json_object_object_add(o, "mean", json_object_new_double(d->mean));
		json_object_object_add(o, "median", json_object_new_double(d->median));
		json_object_object_add(o, "p95", json_object_new_double(d->p95));
	}
	return o;
}

static struct json_object *finding_json(const struct finding *f)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "function", json_object_new_string(f->uid));
	json_object_object_add(o, "change", json_object_new_string(change_names[f->change]));
	if (f->b && f->t) {
		struct json_object *mw = json_object_new_object();
		json_object_object_add(o, "severity",
				       isfinite(f->severity) ? json_object_new_double(f->severity)
							     : NULL);
		json_object_object_add(o, "confidence", json_object_new_double(f->confidence));
		json_object_object_add(mw, "u", json_object_new_double(f->mw.u));
		json_object_object_add(mw, "z", json_object_new_double(f->mw.z));
		json_object_object_add(mw, "p", json_object_new_double(f->mw.p));
		json_object_object_add(mw, "effect", json_object_new_double(f->mw.effect));
		json_object_object_add(o, "mann_whitney", mw);
		if (f->have_integral) {
			json_object_object_add(o, "model", json_object_new_string(f->model));
			json_object_object_add(o, "integral_ratio",
					       json_object_new_double(f->integral_ratio));
		}
	}
	if (f->b)
		json_object_object_add(o, "baseline", dist_json(f->b, &f->db));
	if (f->t)
		json_object_object_add(o, "target", dist_json(f->t, &f->dt));
	return o;
}

static void finding_text(struct strbuf *out, const struct finding *f)
{
	strbuf_addf(out, "  %-18s %-24s", change_names[f->change], f->uid);
	if (f->b && f->t) {
		if (isfinite(f->severity))
			strbuf_addf(out, " %+8.1f%%", 100 * f->severity);
		else
			strbuf_addstr(out, "      new");
		strbuf_addf(out, "  mean %s ", f->dt.exclusive ? "self" : "call");
		fmt_ns(out, f->db.mean);
		strbuf_addstr(out, " -> ");
		fmt_ns(out, f->dt.mean);
		strbuf_addf(out, "  confidence %.2f%%", 100 * f->confidence);
		if (f->have_integral)
			strbuf_addf(out, "  %s integral x%.2f", f->model, f->integral_ratio);
	} else {
		strbuf_addf(out, " %zu calls", f->t ? f->t->n : f->b->n);
	}
	strbuf_addch(out, '\n');
}

struct totals {
	size_t degradations, optimizations, pairs;
};

/* Compares one pair of profiles; appends text to out or a pair to jpairs.  */
static int check_pair(const struct profile *pb, const char *lb, const struct profile *pt,
		      const char *lt, double threshold, double confidence, int all, int inclusive,
		      struct strbuf *out, struct json_object *jpairs, struct totals *tot)
{
	struct func_table tb = {NULL, 0, 0, 0}, tt = {NULL, 0, 0, 0};
	struct finding *fs;
	size_t i, j, n = 0;
	struct json_object *jp = NULL, *jc = NULL;
	int ret = -1;

	samples_read(pb, NULL, &tb);
	samples_read(pt, NULL, &tt);
	fs = xcalloc(tb.n + tt.n + 1, sizeof(*fs));
	for (i = 0; i < tt.n; i++)
		if (compare_function(pb, pt, samples_find(&tb, tt.f[i].uid), &tt.f[i], threshold,
				     confidence, inclusive, &fs[n++]) < 0)
			goto out;
	for (j = 0; j < tb.n; j++)
		if (!samples_find(&tt, tb.f[j].uid) &&
		    compare_function(pb, pt, &tb.f[j], NULL, threshold, confidence, inclusive,
				     &fs[n++]) < 0)
			goto out;
	qsort(fs, n, sizeof(*fs), cmp_finding);
	tot->pairs++;
	if (jpairs) {
		jp = json_object_new_object();
		json_object_object_add(jp, "baseline", json_object_new_string(lb));
		json_object_object_add(jp, "target", json_object_new_string(lt));
		json_object_object_add(jp, "collector",
				       json_object_new_string(hstr(pt, "collector_info.name")));
		json_object_object_add(jp, "cmd", json_object_new_string(hstr(pt, "header.cmd")));
		json_object_object_add(jp, "args", json_object_new_string(hstr(pt, "header.args")));
		json_object_object_add(jp, "workload",
				       json_object_new_string(hstr(pt, "header.workload")));
		jc = json_object_new_array();
		json_object_object_add(jp, "changes", jc);
		json_object_array_add(jpairs, jp);
	} else {
		strbuf_addf(out, "%s -> %s: %s %s%s%s%s%s\n", lb, lt,
			    hstr(pt, "collector_info.name"), hstr(pt, "header.cmd"),
			    *hstr(pt, "header.args") ? " " : "", hstr(pt, "header.args"),
			    *hstr(pt, "header.workload") ? " " : "", hstr(pt, "header.workload"));
	}
	{	/* an incomplete profile says so before its findings */
		struct strbuf ib = STRBUF_INIT, it = STRBUF_INIT;
		profile_incomplete(pb, "  baseline: ", &ib);
		profile_incomplete(pt, "  target: ", &it);
		if (jp && ib.len)
			json_object_object_add(jp, "baseline_incomplete", json_object_new_string(ib.buf));
		if (jp && it.len)
			json_object_object_add(jp, "target_incomplete", json_object_new_string(it.buf));
		if (!jp) {
			strbuf_add(out, ib.len ? ib.buf : "", ib.len);
			strbuf_add(out, it.len ? it.buf : "", it.len);
		}
		strbuf_release(&ib);
		strbuf_release(&it);
	}
	if (tb.binned || tt.binned)
		pr_warn("%s or %s holds --aggregate summaries: call times are read from "
			"log2 histograms, so small changes go unseen",
			lb, lt);
	for (i = 0; i < n; i++) {
		tot->degradations += fs[i].change == DEGRADATION;
		tot->optimizations += fs[i].change == OPTIMIZATION;
		if (!all && fs[i].change == NO_CHANGE)
			continue;
		if (jc)
			json_object_array_add(jc, finding_json(&fs[i]));
		else
			finding_text(out, &fs[i]);
	}
	ret = 0;
out:
	free(fs);
	samples_release(&tb);
	samples_release(&tt);
	return ret;
}

/* A side from an argument: a profile file, or a revision.  */
static int side_from_arg(struct repo *r, int *have_repo, const char *arg, struct side *s)
{
	struct profile p = {NULL};
	char sha[41];

	memset(s, 0, sizeof(*s));
	if (fs_exists(arg)) {
		if (profile_load(&p, arg) < 0) {
			profile_release(&p);
			return -1;
		}
		side_push(s, &p, xstrdup(arg));
		return 0;
	}
	if (!*have_repo) {
		if (repo_find(r) < 0)
			return -1;
		*have_repo = 1;
	}
	if (vcs_massage(r->worktree, arg, sha) < 0)
		return -1;
	return side_load_minor(r, sha, s);
}

/* A number as it was most likely typed (0.2, not 0.20000000000000001).  */
static const char *args_num(double v, char buf[32])
{
	snprintf(buf, 32, "%.15g", v);
	return buf;
}

int cmd_check(int argc, char **argv, struct ctx *ctx)
{
	char nb1[32], nb2[32];
	const char *args[2] = {NULL, NULL}, *format = "text";
	double threshold = 0.2, confidence = 0.99;
	struct side base, target;
	struct repo r;
	struct strbuf out = STRBUF_INIT;
	struct json_object *jroot = NULL, *jpairs = NULL;
	struct totals tot = {0, 0, 0};
	int i, nargs = 0, all = 0, inclusive = 0, have_repo = 0, ret = EXIT_FAIL;
	size_t bi, ti;

	(void)ctx;
	memset(&base, 0, sizeof(base));
	memset(&target, 0, sizeof(target));
	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return EXIT_OK;
		} else if ((!strcmp(a, "--format") || !strcmp(a, "-f")) && v) {
			format = v, i++;
		} else if (!strncmp(a, "--format=", 9)) {
			format = a + 9;
		} else if (!strcmp(a, "--threshold") && v) {
			threshold = strtod(v, &end);
			if (*end || !(threshold > 0)) {
				fprintf(stderr,
					"perun check: --threshold wants a positive ratio (0.2 = "
					"20%%), not '%s'\n",
					v);
				return EXIT_USAGE;
			}
			i++;
		} else if (!strcmp(a, "--confidence") && v) {
			confidence = strtod(v, &end);
			if (*end || !(confidence > 0 && confidence < 1)) {
				fprintf(stderr,
					"perun check: --confidence wants a number in (0, 1), not "
					"'%s'\n",
					v);
				return EXIT_USAGE;
			}
			i++;
		} else if (!strcmp(a, "--all")) {
			all = 1;
		} else if (!strcmp(a, "--inclusive")) {
			inclusive = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "perun check: unknown option '%s' (or it wants a value)\n",
				a);
			return EXIT_USAGE;
		} else if (nargs < 2) {
			args[nargs++] = a;
		} else {
			fprintf(stderr, "perun check: at most BASELINE and TARGET\n");
			return EXIT_USAGE;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		fprintf(stderr, "perun check: unknown format '%s': text or json\n", format);
		return EXIT_USAGE;
	}
	/* one argument is the baseline; the target is HEAD */
	if (side_from_arg(&r, &have_repo, nargs == 2 ? args[1] : "HEAD", &target) < 0)
		goto out;
	if (!target.n) {
		pr_error("no profiles registered for %.7s: collect and 'perun add' some first",
			 target.sha);
		goto out;
	}
	if (nargs >= 1) {
		if (side_from_arg(&r, &have_repo, args[0], &base) < 0)
			goto out;
	} else {
		struct find_base fb = {&r, &target, &base, 0, 0};
		if (vcs_walk(r.worktree, target.sha, 1000, find_base_one, &fb) < 0 || fb.failed)
			goto out;
		if (!fb.found) {
			pr_error("no ancestor of %.7s has profiles of the same collector, command, "
				 "arguments and workload: name a BASELINE",
				 target.sha);
			goto out;
		}
	}
	if (!strcmp(format, "json")) {
		jroot = json_object_new_object();
		json_object_object_add(jroot, "baseline",
				       json_object_new_string(base.sha[0]   ? base.sha
							      : base.labels ? base.labels[0]
									    : ""));
		json_object_object_add(
		    jroot, "target",
		    json_object_new_string(target.sha[0] ? target.sha : target.labels[0]));
		json_object_object_add(
		    jroot, "threshold",
		    json_object_new_double_s(threshold, args_num(threshold, nb1)));
		json_object_object_add(
		    jroot, "confidence",
		    json_object_new_double_s(confidence, args_num(confidence, nb2)));
		jpairs = json_object_new_array();
		json_object_object_add(jroot, "pairs", jpairs);
	}
	for (ti = 0; ti < target.n; ti++) {
		/* the newest baseline profile of the same configuration; two
		 * single files are compared whatever their configuration */
		size_t pick = base.n;
		for (bi = 0; bi < base.n; bi++)
			if (same_config(&base.p[bi], &target.p[ti]) ||
			    (base.n == 1 && target.n == 1 && !base.sha[0]))
				pick = bi;
		if (pick == base.n)
			continue;
		if (check_pair(&base.p[pick], base.labels[pick], &target.p[ti], target.labels[ti],
			       threshold, confidence, all, inclusive, &out, jpairs, &tot) < 0)
			goto out;
	}
	if (!tot.pairs) {
		pr_error("no profile of %s has the collector, command, arguments and workload of "
			 "one of %s",
			 base.sha[0] ? base.sha : base.labels[0],
			 target.sha[0] ? target.sha : target.labels[0]);
		goto out;
	}
	if (jroot) {
		json_object_object_add(jroot, "degradations",
				       json_object_new_int64((int64_t)tot.degradations));
		json_object_object_add(jroot, "optimizations",
				       json_object_new_int64((int64_t)tot.optimizations));
		printf("%s\n",
		       json_object_to_json_string_ext(jroot, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
		printf("%zu degradation%s, %zu optimization%s\n", tot.degradations,
		       tot.degradations == 1 ? "" : "s", tot.optimizations,
		       tot.optimizations == 1 ? "" : "s");
	}
	ret = tot.degradations ? EXIT_FAIL : EXIT_OK;
out:
	json_object_put(jroot);
	strbuf_release(&out);
	side_release(&base);
	side_release(&target);
	if (have_repo)
		repo_release(&r);
	return ret;
}
