/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun postprocessby PROFILE METHOD [options]: fits models of call time
 * against a resource field per function (seeds/003 ch. 3), adds them to the
 * models region and the method to the postprocessors region (seeds/001),
 * and writes the result as a new profile.  */
#include "config.h"

#define PR_FMT "perun postprocessby"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/models.h"
#include "analysis/samples.h"
#include "cmd/cmd.h"
#include "profile/profile.h"
#include "store/output.h"
#include "store/profarg.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

static const char usage[] =
    "usage: perun postprocessby PROFILE METHOD [options] [-o PATH]\n\n"
    "Fits a model of call time (amount) against a resource field per function\n"
    "and writes a new profile with the models region filled and the method\n"
    "appended to postprocessors.  PROFILE is a path, N@i, N@p, a name, or\n"
    "REV:SPEC.  Methods and their options:\n\n"
    "  regression-analysis  least squares of each form; --models M[,M...] of\n"
    "                       constant, linear, logarithmic, quadratic, power,\n"
    "                       exponential (default all)\n"
    "  regressogram         bin means over equal bins; --bins N (default: the\n"
    "                       larger of Sturges' and Freedman-Diaconis' rules)\n"
    "  moving-average       --kind sma|smm|ema (default sma), --window N (default:\n"
    "                       the odd number nearest sqrt(calls)), --decay L (ema),\n"
    "                       --right-aligned (default centred)\n\n"
    "  --x FIELD            the independent variable (default call-order)\n"
    "  -o, --output PATH    write here (default: a new pending profile in .perun/jobs)\n";

struct opts {
	const char *method, *x, *output;
	int models[MODEL_NKINDS], nmodels;
	size_t bins, window;
	int ma_kind, right_aligned;
	double decay;
};

static struct json_object *num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static struct json_object *coeffs(const struct model *m)
{
	struct json_object *a = json_object_new_array();
	size_t i, n = m->ncoeffs < 2 ? 2 : m->ncoeffs; /* seeds/001: constant has b0, b1 = 0 */

	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_new_object();
		char name[24];
		snprintf(name, sizeof(name), "b%zu", i);
		json_object_object_add(c, "name", json_object_new_string(name));
		json_object_object_add(c, "value", json_object_new_double(m->b[i]));
		json_object_array_add(a, c);
	}
	return a;
}

static struct json_object *record(const char *uid, const char *model, const char *method, double r2,
				  double xs, double xe)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "uid", json_object_new_string(uid));
	json_object_object_add(o, "model", json_object_new_string(model));
	json_object_object_add(o, "method", json_object_new_string(method));
	json_object_object_add(o, "r_square", num(r2));
	json_object_object_add(o, "x_interval_start", num(xs));
	json_object_object_add(o, "x_interval_end", num(xe));
	return o;
}

struct xy {
	double x, y;
};

static int cmp_xy(const void *a, const void *b)
{
	double p = ((const struct xy *)a)->x, q = ((const struct xy *)b)->x;

	return (p > q) - (p < q);
}

/* Fits one function; adds its records to models.  -1 on failure.  */
static int fit_function(const struct opts *o, const struct func_samples *f,
			struct json_object *models)
{
	struct xy *pt = xmalloc((f->n ? f->n : 1) * sizeof(*pt));
	double *x = xmalloc((f->n ? f->n : 1) * sizeof(*x)),
	       *y = xmalloc((f->n ? f->n : 1) * sizeof(*y));
	size_t n = 0, i;
	int ret = 0;

	for (i = 0; i < f->n; i++)
		if (isfinite(f->x[i]) && isfinite(f->amount[i]))
			pt[n++] = (struct xy){f->x[i], f->amount[i]};
	qsort(pt, n, sizeof(*pt), cmp_xy);
	for (i = 0; i < n; i++) {
		x[i] = pt[i].x;
		y[i] = pt[i].y;
	}
	if (n < 2)
		goto out;
	if (!strcmp(o->method, "regression-analysis")) {
		int k;
		for (k = 0; k < o->nmodels; k++) {
			struct model m;
			struct json_object *r;
			if (model_fit((enum model_kind)o->models[k], x, y, n, &m))
				continue;
			r = record(f->uid, model_name(m.kind), "full", m.r2, m.x_start, m.x_end);
			json_object_object_add(r, "coeffs", coeffs(&m));
			json_object_array_add(models, r);
		}
	} else if (!strcmp(o->method, "regressogram")) {
		struct regressogram rg;
		struct json_object *r, *b;
		if (regressogram_fit(x, y, n, o->bins, &rg) < 0) {
			ret = -1;
			goto out;
		}
		r = record(f->uid, "regressogram", "regressogram", rg.r2, rg.x_start, rg.x_end);
		json_object_object_add(r, "statistic_function", json_object_new_string("mean"));
		json_object_object_add(r, "bins", json_object_new_int64((int64_t)rg.nbins));
		b = json_object_new_array();
		for (i = 0; i < rg.nbins; i++)
			json_object_array_add(b, num(rg.value[i]));
		json_object_object_add(r, "bucket_stats", b);
		json_object_array_add(models, r);
		regressogram_release(&rg);
	} else {
		struct moving_average ma;
		struct json_object *r, *b;
		if (moving_average_fit(y, n, (enum ma_kind)o->ma_kind, o->window, !o->right_aligned,
				       o->decay, &ma) < 0) {
			ret = -1;
			goto out;
		}
		r = record(f->uid, "moving_average", ma_kind_name(ma.kind), ma.r2, x[0], x[n - 1]);
		json_object_object_add(r, "window_width",
				       json_object_new_int64((int64_t)ma.window));
		json_object_object_add(r, "centered", json_object_new_boolean(ma.centered));
		if (ma.kind == MA_EMA)
			json_object_object_add(r, "decay", json_object_new_double(ma.decay));
		b = json_object_new_array();
		for (i = 0; i < ma.n; i++)
			json_object_array_add(b, num(ma.value[i]));
		json_object_object_add(r, "bucket_stats", b);
		json_object_array_add(models, r);
		moving_average_release(&ma);
	}
out:
	free(pt);
	free(x);
	free(y);
	return ret;
}

static struct json_object *params(const struct opts *o)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "x", json_object_new_string(o->x));
	if (!strcmp(o->method, "regression-analysis")) {
		struct json_object *m = json_object_new_array();
		int k;
		json_object_object_add(p, "method", json_object_new_string("full"));
		for (k = 0; k < o->nmodels; k++)
			json_object_array_add(m, json_object_new_string(model_name(o->models[k])));
		json_object_object_add(p, "models", m);
	} else if (!strcmp(o->method, "regressogram")) {
		json_object_object_add(p, "bins",
				       o->bins ? json_object_new_int64((int64_t)o->bins)
					       : json_object_new_string("auto"));
		json_object_object_add(p, "bin_rule",
				       json_object_new_string("max(sturges, freedman-diaconis)"));
		json_object_object_add(p, "statistic_function", json_object_new_string("mean"));
	} else {
		json_object_object_add(p, "kind", json_object_new_string(ma_kind_name(o->ma_kind)));
		json_object_object_add(p, "window",
				       o->window ? json_object_new_int64((int64_t)o->window)
						 : json_object_new_string("auto"));
		json_object_object_add(
		    p, "centered",
		    json_object_new_boolean(!o->right_aligned && o->ma_kind != MA_EMA));
		if (o->ma_kind == MA_EMA && o->decay > 0)
			json_object_object_add(p, "decay", json_object_new_double(o->decay));
	}
	return p;
}

static int parse_models(struct opts *o, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL, *t;
	int k;

	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if ((k = model_kind_parse(t)) < 0) {
			fprintf(stderr,
				"perun postprocessby: unknown model '%s': constant, linear, "
				"logarithmic, quadratic, power or exponential\n",
				t);
			free(copy);
			return -1;
		}
		if (o->nmodels < MODEL_NKINDS)
			o->models[o->nmodels++] = k;
	}
	free(copy);
	return 0;
}

static int parse_size(const char *opt, const char *arg, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);

	if (!*arg || *end || arg[0] == '-' || !v) {
		fprintf(stderr, "perun postprocessby: %s wants a positive number, not '%s'\n", opt,
			arg);
		return -1;
	}
	*out = (size_t)v;
	return 0;
}

/* Writes all of data to fd and syncs it; -1 reported.  */
static int write_all(int fd, const char *data, size_t len, const char *path)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pr_error_errno("write %s", path);
		data += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0)
		return pr_error_errno("fsync %s", path);
	return 0;
}

/* The default output: NAME-METHOD.perf beside the pending profiles.  */
static char *default_output(const char *label)
{
	char *pd = repo_locate(), *base, *dot, *out;
	const char *b = fs_basename(label);

	if (!pd)
		return NULL;
	base = xstrdup(b);
	for (dot = base; *dot; dot++)
		if (*dot == ':' || *dot == '@')
			*dot = '-';
	if ((dot = strstr(base, ".perf")) && !dot[5])
		*dot = 0;
	out = xstrfmt("%s/jobs", pd);
	/* a jobs directory that is a link, or another user's, would take root's
	 * profile wherever it points */
	if (fs_trust_dir(out, 1, "remove it or give -o PATH") < 0) {
		free(out);
		free(base);
		free(pd);
		return NULL;
	}
	free(out);
	out = xstrfmt("%s/jobs/%s.perf", pd, base);
	free(base);
	free(pd);
	return out;
}

int cmd_postprocessby(int argc, char **argv, struct ctx *ctx)
{
	struct opts o = {NULL, "call-order", NULL, {0}, 0, 0, 0, MA_SMA, 0, 0};
	const char *spec = NULL;
	struct profile p = {NULL};
	struct func_table t = {NULL, 0, 0, 0};
	struct json_object *snaps, *snap0, *models, *pp, *entry;
	char minor[41], *label = NULL, *final = NULL, *staged = NULL, *name = NULL;
	const char *json;
	size_t i, nx = 0;
	int ret = EXIT_FAIL, fd = -1;

	(void)ctx;
	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i], *v = i + 1 < (size_t)argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return EXIT_OK;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
			o.output = v, i++;
		} else if (!strcmp(a, "--x") && v) {
			o.x = v, i++;
		} else if (!strcmp(a, "--models") && v) {
			if (parse_models(&o, v) < 0)
				return EXIT_USAGE;
			i++;
		} else if (!strcmp(a, "--bins") && v) {
			if (parse_size(a, v, &o.bins) < 0)
				return EXIT_USAGE;
			i++;
		} else if (!strcmp(a, "--window") && v) {
			if (parse_size(a, v, &o.window) < 0)
				return EXIT_USAGE;
			i++;
		} else if (!strcmp(a, "--kind") && v) {
			if ((o.ma_kind = ma_kind_parse(v)) < 0) {
				fprintf(
				    stderr,
				    "perun postprocessby: unknown --kind '%s': sma, smm or ema\n",
				    v);
				return EXIT_USAGE;
			}
			i++;
		} else if (!strcmp(a, "--decay") && v) {
			char *end;
			o.decay = strtod(v, &end);
			if (*end || !(o.decay > 0 && o.decay < 1)) {
				fprintf(stderr,
					"perun postprocessby: --decay wants a number in (0, 1), "
					"not '%s'\n",
					v);
				return EXIT_USAGE;
			}
			i++;
		} else if (!strcmp(a, "--right-aligned")) {
			o.right_aligned = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr,
				"perun postprocessby: unknown option '%s' (or it wants a value)\n",
				a);
			return EXIT_USAGE;
		} else if (!spec) {
			spec = a;
		} else if (!o.method) {
			o.method = a;
		} else {
			fprintf(stderr,
				"perun postprocessby: one profile and one method at a time\n");
			return EXIT_USAGE;
		}
	}
	if (!spec || !o.method) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(o.method, "regression_analysis"))
		o.method = "regression-analysis";
	else if (!strcmp(o.method, "moving_average"))
		o.method = "moving-average";
	if (strcmp(o.method, "regression-analysis") && strcmp(o.method, "regressogram") &&
	    strcmp(o.method, "moving-average")) {
		fprintf(stderr,
			"perun postprocessby: unknown method '%s': regression-analysis, "
			"regressogram or moving-average\n",
			o.method);
		return EXIT_USAGE;
	}
	if (!o.nmodels)
		for (o.nmodels = 0; o.nmodels < MODEL_NKINDS; o.nmodels++)
			o.models[o.nmodels] = o.nmodels;
	if (o.output && output_check(o.output) < 0)
		return EXIT_FAIL;
	if (profile_arg_load(spec, &p, &label, minor) < 0)
		goto out;
	samples_read(&p, o.x, &t);
	for (i = 0; i < t.n; i++) {
		size_t j;
		for (j = 0; j < t.f[i].n; j++)
			nx += isfinite(t.f[i].x[j]);
	}
	if (!nx) {
		pr_error("%s: no call has a numeric '%s' to fit against: name another field with "
			 "--x (perun show %s --format json shows the resources)",
			 label, o.x, spec);
		goto out;
	}
	snaps = json_object_object_get(p.root, "snapshots");
	if (!json_object_array_length(snaps)) {
		snap0 = json_object_new_object();
		json_object_object_add(snap0, "resources", json_object_new_array());
		json_object_array_add(snaps, snap0);
	}
	snap0 = json_object_array_get_idx(snaps, 0);
	/* seeds/001 keeps models per snapshot; every call is fitted together, so
	 * they go to the first one */
	if (!json_object_object_get_ex(snap0, "models", &models) ||
	    !json_object_is_type(models, json_type_array)) {
		models = json_object_new_array();
		json_object_object_add(snap0, "models", models);
	}
	for (i = 0; i < t.n; i++)
		if (fit_function(&o, &t.f[i], models) < 0)
			goto out;
	pp = json_object_object_get(p.root, "postprocessors");
	entry = json_object_new_object();
	json_object_object_add(
	    entry, "name",
	    json_object_new_string(!strcmp(o.method, "regression-analysis") ? "regression_analysis"
				   : !strcmp(o.method, "moving-average")    ? "moving_average"
									    : "regressogram"));
	json_object_object_add(entry, "params", params(&o));
	json_object_array_add(pp, entry);
	/* a registered profile keeps its minor version as origin, so that the
	 * new one can be added back for it */
	if (!json_object_object_get_ex(p.root, "origin", NULL) && minor[0])
		json_object_object_add(p.root, "origin", json_object_new_string(minor));

	if (o.output) {
		final = xstrdup(o.output);
	} else {
		char *pd = repo_locate(), *base = pd ? default_output(label) : NULL;
		if (!pd)
			pr_error("no perun repository here for a pending profile: give -o PATH");
		free(pd);
		if (!base)
			goto out;
		final = xstrfmt("%.*s-%s.perf", (int)(strlen(base) - 5), base, o.method);
		free(base);
	}
	/* written on the descriptor output_stage reserved (O_EXCL|O_NOFOLLOW), and
	 * published by it: a rename over the staging name (as fs_write_atomic
	 * does) would let whoever can write the directory swap in their file */
	if (!(staged = output_stage_fd(final, &fd)))
		goto out;
	json = json_object_to_json_string_ext(p.root, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	if (write_all(fd, json, strlen(json), staged) < 0 ||
	    !(name = output_publish_fd(fd, staged, final))) {
		output_discard(fd, staged);
		close(fd);
		goto out;
	}
	close(fd);
	printf("%s: %zu models of %zu functions by %s written to %s\n", label,
	       json_object_array_length(models), t.n, o.method, name);
	ret = EXIT_OK;
out:
	free(staged);
	free(final);
	free(name);
	free(label);
	samples_release(&t);
	profile_release(&p);
	return ret;
}
