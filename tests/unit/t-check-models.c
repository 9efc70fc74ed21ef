/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Perun's check methods (analysis/check-models.c) on fixed input whose
 * verdict is known: models of y = b0 + b1 x written into the models region
 * as postprocessby writes them, and exclusive times of six functions.  A
 * clear degradation (every call 3x slower), the same pair reversed (an
 * optimization), an unchanged pair (coefficients within 1 %), a change
 * below the threshold (+15 %: undecided, Perun's "maybe"), the shape each
 * regression method names, and the median over runs that one odd run does
 * not move.  */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "profile/profile.h"
#include "tap.h"
#include "util/strbuf.h"

/* A profile of one function f with a linear model b0 + b1 x on [0, 1000]
 * (r^2 0.95), a constant one (r^2 0) and a quadratic one with b2 = 0 and a
 * slightly worse r^2, as regression-analysis writes them.  */
static void models_profile(struct profile *p, double b0, double b1)
{
	struct strbuf sb = STRBUF_INIT;
	static const char *const fmt =
	    "{\"uid\":\"f\",\"model\":\"%s\",\"method\":\"full\",\"r_square\":%g,"
	    "\"x_interval_start\":0,\"x_interval_end\":1000,\"coeffs\":["
	    "{\"name\":\"b0\",\"value\":%.17g},{\"name\":\"b1\",\"value\":%.17g}%s]}";

	strbuf_addstr(&sb, "{\"header\":{\"type\":\"mixed\",\"cmd\":\"./app\",\"args\":\"\","
			   "\"workload\":\"\",\"units\":{\"mixed(time delta)\":\"ns\"}},"
			   "\"collector_info\":{\"name\":\"trace\"},\"postprocessors\":[],"
			   "\"snapshots\":[{\"resources\":[],\"models\":[");
	strbuf_addf(&sb, fmt, "linear", 0.95, b0, b1, "");
	strbuf_addch(&sb, ',');
	strbuf_addf(&sb, fmt, "constant", 0.0, b0 + 500 * b1, 0.0, "");
	strbuf_addch(&sb, ',');
	strbuf_addf(&sb, fmt, "quadratic", 0.94, b0, b1, ",{\"name\":\"b2\",\"value\":0}");
	strbuf_addstr(&sb, "]}]}");
	if (profile_parse(p, sb.buf, sb.len, "test") < 0)
		abort();
	strbuf_release(&sb);
}

static const struct check_finding *only(const struct check_result *r, const char *fn)
{
	size_t i;

	if (r->njobs != 1)
		return NULL;
	for (i = 0; i < r->jobs[0].nf; i++)
		if (!strcmp(r->jobs[0].f[i].function, fn))
			return &r->jobs[0].f[i];
	return NULL;
}

/* The verdict of method m on f between one baseline and one target model
 * (or -1); *shape gets the shape named.  */
static int verdict_models(enum check_method m, double bb0, double bb1, double tb0, double tb1,
			  const char **shape, double *ratio)
{
	struct profile b, t;
	struct check_opts o;
	struct check_result r;
	const struct check_finding *f;
	int v = -1;

	models_profile(&b, bb0, bb1);
	models_profile(&t, tb0, tb1);
	check_opts_init(&o);
	o.method = m;
	o.threshold = check_method_threshold(m);
	if (check_compare(&b, NULL, 1, &t, NULL, 1, &o, &r) == 0 && (f = only(&r, "f"))) {
		v = (int)f->verdict;
		if (shape)
			*shape = f->shape;
		if (ratio)
			*ratio = f->ratio;
	}
	check_result_release(&r);
	profile_release(&b);
	profile_release(&t);
	return v;
}

static void test_regressions(void)
{
	static const enum check_method ms[] = {CHECK_LINEAR_REGRESSION,
					       CHECK_POLYNOMIAL_REGRESSION, CHECK_FAST_CHECK,
					       CHECK_LOCAL_STATISTICS};
	/* the shape of 1000 + 2x -> 3000 + 6x, per method: the linear models'
	 * difference 2000 + 4x has a slope within 5 % of the largest difference
	 * (Perun's "constant"); a line fits it (polynomial degree 1); the best
	 * form of the difference is linear */
	static const char *const shapes[] = {"constant", "linear", "linear", NULL};
	size_t i;

	for (i = 0; i < sizeof(ms) / sizeof(*ms); i++) {
		const char *name = check_method_name(ms[i]), *shape = NULL;
		double ratio = 0;
		is_int(verdict_models(ms[i], 1000, 2, 3000, 6, &shape, &ratio), CHECK_DEGRADATION,
		       "%s: 3x slower everywhere is a degradation", name);
		ok(fabs(ratio - 3) < 0.01, "%s: ratio %.4f", name, ratio);
		if (shapes[i])
			is_str(shape, shapes[i], "%s: the shape of the change", name);
		is_int(verdict_models(ms[i], 3000, 6, 1000, 2, NULL, NULL), CHECK_OPTIMIZATION,
		       "%s: the other way, an optimization", name);
		is_int(verdict_models(ms[i], 1000, 2, 1010, 2.02, NULL, &ratio), CHECK_NO_CHANGE,
		       "%s: +1 %% is no change", name);
		is_int(verdict_models(ms[i], 1000, 2, 1150, 2.3, NULL, &ratio), CHECK_UNDECIDED,
		       "%s: +15 %% is a maybe (undecided): ratio %.3f", name, ratio);
	}
	is_int(verdict_models(CHECK_MODEL_ORDER, 1000, 2, 3000, 6, NULL, NULL), CHECK_NO_CHANGE,
	       "best-model-order-equality: linear stays linear, no change");
}

/* Three runs a side, one target run odd (10x): the median of the curves
 * keeps the verdict.  */
static void test_runs_median(void)
{
	struct profile b[3], t[3];
	struct check_opts o;
	struct check_result r;
	const struct check_finding *f;

	models_profile(&b[0], 1000, 2);
	models_profile(&b[1], 1005, 2.01);
	models_profile(&b[2], 995, 1.99);
	models_profile(&t[0], 1002, 2);
	models_profile(&t[1], 10000, 20);
	models_profile(&t[2], 998, 2);
	check_opts_init(&o);
	o.method = CHECK_FAST_CHECK;
	o.threshold = check_method_threshold(o.method);
	ok(check_compare(b, NULL, 3, t, NULL, 3, &o, &r) == 0 && (f = only(&r, "f")) &&
		   f->verdict == CHECK_NO_CHANGE && fabs(f->ratio - 1) < 0.01,
	   "fast-check over 3 runs a side, one odd: no change");
	check_result_release(&r);
	for (size_t i = 0; i < 3; i++) {
		profile_release(&b[i]);
		profile_release(&t[i]);
	}
}

/* No models on a side: no finding.  */
static void test_no_models(void)
{
	struct profile b, t;
	struct check_opts o;
	struct check_result r;
	const char *j = "{\"header\":{\"type\":\"mixed\",\"cmd\":\"./app\"},"
			"\"collector_info\":{\"name\":\"trace\"},\"snapshots\":[{\"resources\":[]}]}";

	models_profile(&b, 1000, 2);
	if (profile_parse(&t, j, strlen(j), "test") < 0)
		abort();
	check_opts_init(&o);
	o.method = CHECK_LINEAR_REGRESSION;
	ok(check_compare(&b, NULL, 1, &t, NULL, 1, &o, &r) == 0 && r.njobs == 1 &&
		   r.jobs[0].nf == 0,
	   "linear-regression without models on the target: no finding");
	check_result_release(&r);
	profile_release(&b);
	profile_release(&t);
}

/* One run of six functions; function i's calls take 1000 i ns of exclusive
 * time, 10 calls each; factor[i] multiplies them.  */
static void excl_profile(struct profile *p, const double factor[6], int with_g)
{
	struct strbuf sb = STRBUF_INIT;
	int i, k, first = 1;

	strbuf_addstr(&sb, "{\"header\":{\"type\":\"mixed\",\"cmd\":\"./app\",\"args\":\"\","
			   "\"workload\":\"\",\"units\":{\"mixed(time delta)\":\"ns\"}},"
			   "\"collector_info\":{\"name\":\"trace\"},\"postprocessors\":[],"
			   "\"snapshots\":[{\"resources\":[");
	for (i = 0; i < 6 + with_g; i++)
		for (k = 0; k < 10; k++) {
			double v = 1000.0 * (i + 1) * (i < 6 ? factor[i] : 1);
			strbuf_addf(&sb,
				    "%s{\"uid\":\"%s%d\",\"amount\":%.0f,\"exclusive\":%.0f,"
				    "\"type\":\"mixed\",\"subtype\":\"time delta\"}",
				    first ? "" : ",", i < 6 ? "f" : "g", i, v, v);
			first = 0;
		}
	strbuf_addstr(&sb, "]}]}");
	if (profile_parse(p, sb.buf, sb.len, "test") < 0)
		abort();
	strbuf_release(&sb);
}

static void test_exclusive_outliers(void)
{
	static const double same[6] = {1, 1, 1, 1, 1, 1},
			    noise[6] = {1.01, 0.99, 1.02, 1, 0.98, 1.01},
			    slow3[6] = {1.01, 0.99, 3, 1, 0.98, 1.01},
			    fast[6] = {1, 1, 1, 1, 1, 0.5};
	struct profile b, t;
	struct check_opts o;
	struct check_result r;
	const struct check_finding *f;

	check_opts_init(&o);
	o.method = CHECK_EXCLUSIVE_TIME_OUTLIERS;
	excl_profile(&b, same, 0);
	excl_profile(&t, slow3, 1);
	ok(check_compare(&b, NULL, 1, &t, NULL, 1, &o, &r) == 0, "check_compare");
	f = only(&r, "f2");
	ok(f && f->verdict == CHECK_DEGRADATION && f->shape && !strcmp(f->shape, "severe") &&
		   fabs(f->ratio - 3) < 0.01 && f->metric == CHECK_SELF,
	   "f2 3x slower: a severe degradation of its exclusive time");
	f = only(&r, "g6");
	ok(f && f->verdict == CHECK_NEW, "g6 only in the target: new");
	is_int(r.degradations, 1, "only f2 degraded (f0..f5 moved by 2 %% or less)");
	check_result_release(&r);
	profile_release(&t);

	excl_profile(&t, noise, 0);
	ok(check_compare(&b, NULL, 1, &t, NULL, 1, &o, &r) == 0 && r.degradations == 0 &&
		   r.optimizations == 0 && r.undecided == 0,
	   "unchanged up to 2 %%: no change anywhere");
	check_result_release(&r);
	profile_release(&t);

	excl_profile(&t, fast, 0);
	ok(check_compare(&b, NULL, 1, &t, NULL, 1, &o, &r) == 0 && (f = only(&r, "f5")) &&
		   f->verdict == CHECK_OPTIMIZATION && r.degradations == 0,
	   "f5 twice as fast: an optimization");
	check_result_release(&r);
	profile_release(&t);
	profile_release(&b);
}

static void test_names(void)
{
	static const char *const names[] = {
	    "best-model-order-equality", "linear-regression", "polynomial-regression",
	    "fast-check", "local-statistics", "exclusive-time-outliers"};
	size_t i;
	int all = 1;

	for (i = 0; i < sizeof(names) / sizeof(*names); i++)
		all &= check_method_parse(names[i]) >= 0 &&
		       !strcmp(check_method_name((enum check_method)check_method_parse(names[i])),
			       names[i]);
	ok(all, "every method's name parses back to itself");
	ok(check_method_parse("average-amount-threshold") < 0, "an unknown name is -1");
	ok(check_method_threshold(CHECK_FAST_CHECK) == 0.25 &&
		   check_method_threshold(CHECK_RUNS) == 0.1,
	   "default thresholds: Perun's 25 %% for its regression checks, 10 %% for runs");
}

int main(void)
{
	test_regressions();
	test_runs_median();
	test_no_models();
	test_exclusive_outliers();
	test_names();
	return tap_done();
}
