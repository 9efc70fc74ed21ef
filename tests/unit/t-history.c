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
