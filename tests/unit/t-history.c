/* SPDX-License-Identifier: GPL-3.0-or-later */
/* report/history.c and report/site.c without a repository: steps found
 * through the history_detect seam, the real detector on a planted step and
 * on noise, the JSON of a series, and the file names of functions.  */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/history.h"
#include "report/site.h"
#include "tap.h"

/* A history of n commits and one series y (NAN: no call there).  */
static void make(struct history *h, const double *y, size_t n)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	h->nc = n;
	h->c = calloc(n, sizeof(*h->c));
	for (i = 0; i < n; i++) {
		snprintf(h->c[i].sha, sizeof(h->c[i].sha), "%040zx", i + 1);
		h->c[i].subject = strdup("s");
		h->c[i].profiles = 1;
	}
	h->ns = 1;
	h->s = calloc(1, sizeof(*h->s));
	h->s[0].name = strdup("work");
	h->s[0].median = malloc(n * sizeof(double));
	h->s[0].p95 = malloc(n * sizeof(double));
	h->s[0].calls = malloc(n * sizeof(double));
	for (i = 0; i < n; i++) {
		h->s[0].median[i] = y[i];
		h->s[0].p95[i] = y[i] * 1.1;
		h->s[0].calls[i] = isfinite(y[i]) ? 10 : NAN;
	}
}

static size_t fake_calls;

/* A detector that reports one step at the middle, to see the plumbing.  */
static int fake_detect(const double *y, const double *w, size_t n, const struct steps_opts *opts,
		       struct step **out, size_t *nout, struct steps_info *info)
{
	(void)w;
	(void)opts;
	(void)info;
	fake_calls++;
	*out = calloc(1, sizeof(**out));
	(*out)[0].start = n / 2;
	(*out)[0].end = n;
	(*out)[0].before = y[0];
	(*out)[0].after = y[n - 1];
	(*out)[0].rel = (y[n - 1] - y[0]) / y[0];
	*nout = 1;
	return 0;
}

/* The median of three runs and its standard error as history takes it
 * from their spread (1.4826 MAD / sqrt(3)).  */
static double median3(const double *r, double *se)
{
	double a = r[0], b = r[1], c = r[2], m, d0, d1, d2;

	m = a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
	d0 = fabs(a - m), d1 = fabs(b - m), d2 = fabs(c - m);
	/* the middle one of three absolute deviations */
	*se = d0 > d1 ? (d1 > d2 ? d1 : d0 > d2 ? d2 : d0) : (d0 > d2 ? d0 : d1 > d2 ? d2 : d1);
	*se *= 1.4826 / sqrt(3.0);
	return m;
}

/* A history of 10 commits whose median at each is that of three runs
 * runs[i][0..3) (us), with its noise from their spread; returns the steps'
 * indices as a string, "4 7" (commit numbers from 1).  */
static void steps_of_runs(const double runs[][3], size_t n, const struct steps_opts *so,
			  char *out, size_t len)
{
	double y[20];
	struct history h;
	size_t i, at = 0;

	for (i = 0; i < n; i++)
		y[i] = runs[i][1];
	make(&h, y, n);
	h.s[0].median_noise = malloc(n * sizeof(double));
	h.s[0].p95_noise = malloc(n * sizeof(double));
	for (i = 0; i < n; i++) {
		h.s[0].median[i] = median3(runs[i], &h.s[0].median_noise[i]);
		h.s[0].p95[i] = NAN; /* the median's steps alone */
		h.s[0].p95_noise[i] = NAN;
	}
	history_steps(&h, so);
	out[0] = '\0';
	for (i = 0; i < h.s[0].nsteps; i++)
		at += (size_t)snprintf(out + at, len - at, "%s%zu", i ? " " : "",
				       h.s[0].steps[i].index + 1);
	history_release(&h);
}

/* xorshift: the same noise on every run.  */
static double noise(unsigned *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (double)(*s % 2001) / 1000.0 - 1.0;
}

int main(void)
{
	double y[20];
	struct history h;
	struct strbuf sb = STRBUF_INIT;
	struct steps_opts so;
	history_detect_fn real = history_detect;
	unsigned seed = 12345;
	size_t i, falses = 0, seeds;
	char *name;

	for (i = 0; i < 20; i++)
		y[i] = (i < 12 ? 1000 : 3000) * (1 + 0.05 * noise(&seed));
	y[3] = NAN; /* a commit without calls of it keeps its place */

	make(&h, y, 20);
	history_detect = fake_detect;
	is_int(history_steps(&h, NULL), 0, "steps through the seam");
	is_int(fake_calls, 2, "the seam is the one call site, for the median and the p95");
	is_int(h.s[0].nsteps, 1, "its step is kept");
	is_int(h.s[0].steps[0].index, 10, "at the index it gave");
	history_detect = real;

	memset(&so, 0, sizeof(so));
	so.threshold = 0.05;
	is_int(history_steps(&h, &so), 0, "the real detector runs");
	ok(h.s[0].nsteps == 1 && h.s[0].steps[0].index == 12,
	   "the planted 3x step is found where it starts (%zu steps, first at %zu)", h.s[0].nsteps,
	   h.s[0].nsteps ? h.s[0].steps[0].index : 0);
	ok(h.s[0].nsteps == 1 && h.s[0].steps[0].rel > 1.5 && h.s[0].steps[0].rel < 2.5,
	   "by about +200%%");

	history_series_json(&h, &h.s[0], &sb);
	ok(strstr(sb.buf, "\"function\":\"work\"") && strstr(sb.buf, ",null,"),
	   "series json: the name, null where there was no call");
	ok(strstr(sb.buf, "\"index\":12,\"commit\":\"000000000000000000000000000000000000000d\""),
	   "series json: the step names its commit");
	strbuf_release(&sb);
	history_release(&h);

	/* pure noise: no step, seed after seed */
	for (seeds = 0; seeds < 100; seeds++) {
		for (i = 0; i < 20; i++)
			y[i] = 1000 * (1 + 0.05 * noise(&seed));
		make(&h, y, 20);
		history_steps(&h, &so);
		falses += h.s[0].nsteps;
		history_release(&h);
	}
	is_int(falses, 0, "no step on pure noise over 100 seeds");

	/* five commits, the third 2.3x slower (medians in us), each commit's
	 * median and p95 known to +-0.4 us */
	{
		double five[5] = {32.3, 31.6, 71.7, 72.3, 72.2};
		make(&h, five, 5);
		h.s[0].median_noise = malloc(5 * sizeof(double));
		h.s[0].p95_noise = malloc(5 * sizeof(double));
		for (i = 0; i < 5; i++)
			h.s[0].median_noise[i] = h.s[0].p95_noise[i] = 0.4;
		so.threshold = 0.01;
		history_steps(&h, &so);
		ok(h.s[0].nsteps == 1 && h.s[0].steps[0].index == 2 &&
			   h.s[0].steps[0].rel > 1.2,
		   "five commits: the 2.3x step of the median at the third (%zu steps)",
		   h.s[0].nsteps);
		ok(h.s[0].np95_steps == 1 && h.s[0].p95_steps[0].index == 2,
		   "and of the p95 (%zu steps)", h.s[0].np95_steps);
		history_release(&h);
	}

	/* a nightly on a loaded host: the medians of 3 runs at each of 10
	 * commits were 311, 331, 327 us, then +27 % at c4 (410, 412, 412 us),
	 * then x2 at c7 (814, 772, 827, 849 us); the runs of c1-c3 spread a few
	 * per cent, those of c4-c6 less than 1 %.  Both steps are there however
	 * tightly the runs of c7 on agree: their level scatters 10 % */
	{
		double runs[10][3] = {{300, 311, 320}, {318, 331, 345}, {310, 327, 340},
				      {408, 410, 413}, {410, 412, 415}, {411, 412, 414},
				      {790, 814, 840}, {750, 772, 800}, {805, 827, 850},
				      {830, 849, 870}};
		char got[64];
		size_t spread;
		so.threshold = 0.05;
		for (spread = 0; spread < 3; spread++) {
			double r[10][3];
			/* c7 on: runs 3 %, 1 %, 6 % apart */
			double f = spread == 0 ? 1 : spread == 1 ? 0.3 : 2;
			for (i = 0; i < 10; i++)
				for (seeds = 0; seeds < 3; seeds++)
					r[i][seeds] = 1000 * (i < 6 ? runs[i][seeds]
							       : runs[i][1] + f * (runs[i][seeds] - runs[i][1]));
			steps_of_runs((const double(*)[3])r, 10, &so, got, sizeof(got));
			is_str(got, "4 7", "311 331 327 -> 410 412 412 -> 814 772 827 849 us, "
					   "c7 on x%.1f spread: steps at c4 and c7", f);
		}
	}
	/* the same nightly on a busier host (medians with the runs' speed
	 * taken out, and their noise, in ns): two of c10's three runs ran at
	 * twice the speed of the third, so its median is known to 30 % only;
	 * that one commit is no step, and c4 and c7 still are */
	{
		double y10[10] = {337664.2, 328944.9, 327810.9, 412915.6, 434442.0,
				  417718.8, 863511.1, 823350.7, 974939.4, 1921055.1};
		double e10[10] = {9694.32,  9000.74,  17846.92, 13942.80, 10883.57,
				  13055.44, 32803.55, 48944.00, 144378.13, 562141.15};
		char got[64] = "";
		size_t at = 0;
		make(&h, y10, 10);
		h.s[0].median_noise = malloc(10 * sizeof(double));
		h.s[0].p95_noise = malloc(10 * sizeof(double));
		for (i = 0; i < 10; i++) {
			h.s[0].median_noise[i] = e10[i];
			h.s[0].p95[i] = h.s[0].p95_noise[i] = NAN;
		}
		history_steps(&h, &so);
		for (i = 0; i < h.s[0].nsteps; i++)
			at += (size_t)snprintf(got + at, sizeof(got) - at, "%s%zu", i ? " " : "",
					       h.s[0].steps[i].index + 1);
		is_str(got, "4 7", "a commit whose runs disagree is no step by itself");
		history_release(&h);
	}
	/* 10 commits, 3 runs each of +-5 % noise: no step; +20 % at c6: found */
	{
		size_t found = 0;
		char got[64];
		falses = 0;
		for (seeds = 0; seeds < 100; seeds++) {
			double r[10][3];
			size_t k;
			for (i = 0; i < 10; i++)
				for (k = 0; k < 3; k++)
					r[i][k] = 1e5 * (1 + 0.05 * noise(&seed));
			steps_of_runs((const double(*)[3])r, 10, &so, got, sizeof(got));
			falses += got[0] != '\0';
			for (i = 5; i < 10; i++)
				for (k = 0; k < 3; k++)
					r[i][k] *= 1.2;
			steps_of_runs((const double(*)[3])r, 10, &so, got, sizeof(got));
			found += !strcmp(got, "6");
		}
		is_int(falses, 0, "+-5 %% runs, 3 a commit, 10 commits: no step over 100 seeds");
		ok(found >= 95, "+20 %% at c6 in them: found there in %zu of 100 seeds", found);
	}

	name = site_series_name("ns::f<int>");
	is_str(name, "ns_3A_3Af_3Cint_3E.json", "a C++ name as a file name");
	free(name);
	name = site_series_name("..");
	is_str(name, "_2E..json", "no leading dot");
	free(name);
	name = site_series_name("a/b");
	is_str(name, "a_2Fb.json", "no slash");
	free(name);
	return tap_done();
}
