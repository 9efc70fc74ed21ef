/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The laws of store/aggregate.h's merge: associative, commutative,
 * idempotent (the same input twice counts once), and totals that add up;
 * and the JSON round trip.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "store/aggregate.h"
#include "tap.h"

/* A row with a pseudo-random id and functions f0..f(nf-1).  */
static void make_row(struct agg_input *in, unsigned seed, size_t nf)
{
	size_t i, c;

	memset(in, 0, sizeof(*in));
	snprintf(in->id, sizeof(in->id), "%08x%032x", seed * 2654435761u, seed);
	in->time = 1700000000 + seed;
	in->f = calloc(nf, sizeof(*in->f));
	in->nf = nf;
	for (i = 0; i < nf; i++) {
		struct agg_func *f = &in->f[i];
		char name[16];
		snprintf(name, sizeof(name), "f%zu", i);
		f->name = strdup(name);
		for (c = 0; c < 1 + (seed + i) % 7; c++) {
			uint64_t v = 100 + (seed * 7919u + c * 104729u + i * 31u) % 5000;
			struct agg_func one;
			memset(&one, 0, sizeof(one));
			one.calls = 1;
			one.total = v;
			one.exclusive = v / 2;
			one.min = one.max = v;
			one.hist[63 - __builtin_clzll(v)] = 1;
			agg_func_add(f, &one);
		}
	}
}

/* An aggregate of rows with the given seeds.  */
static void make(struct agg *a, const unsigned *seeds, size_t n)
{
	size_t i;

	agg_init(a, "v1", "host", 1699977600, 86400);
	for (i = 0; i < n; i++) {
		struct agg_input in;
		make_row(&in, seeds[i], 2 + seeds[i] % 3);
		agg_add(a, &in);
		agg_input_release(&in);
	}
}

static char *json(const struct agg *a)
{
	struct strbuf sb = STRBUF_INIT;

	agg_to_json(a, &sb);
	return strbuf_detach(&sb);
}

/* (x merge y) as a new aggregate.  */
static void merged(struct agg *out, const struct agg *x, const struct agg *y)
{
	agg_init(out, "v1", "host", 1699977600, 86400);
	agg_merge(out, x);
	agg_merge(out, y);
}

int main(void)
{
	/* overlapping inputs on purpose: 3 and 5 are in two of them */
	static const unsigned sa[] = {1, 2, 3}, sb[] = {3, 4, 5}, sc[] = {5, 6, 7, 1};
	struct agg a, b, c, ab, bc, ab_c, a_bc, ba, aa, back;
	struct agg_func *t;
	char *j1, *j2;
	size_t n, i;
	uint64_t calls = 0;

	make(&a, sa, 3);
	make(&b, sb, 3);
	make(&c, sc, 4);

	merged(&ab, &a, &b);
	merged(&ab_c, &ab, &c);
	merged(&bc, &b, &c);
	merged(&a_bc, &a, &bc);
	j1 = json(&ab_c);
	j2 = json(&a_bc);
	is_str(j1, j2, "associative: (a+b)+c == a+(b+c)");
	ok(ab_c.n == 7, "seven distinct inputs, shared ones once (%zu)", ab_c.n);
	free(j1);
	free(j2);

	merged(&ba, &b, &a);
	j1 = json(&ab);
	j2 = json(&ba);
	is_str(j1, j2, "commutative: a+b == b+a");
	free(j1);
	free(j2);

	merged(&aa, &a, &a);
	j1 = json(&a);
	j2 = json(&aa);
	is_str(j1, j2, "idempotent: a+a == a");
	free(j1);
	free(j2);
	agg_release(&aa);
	agg_merge(&ab, &ab);
	agg_merge(&ab, &a);
	j2 = json(&ab);
	ok(ab.n == 5, "merging a part again adds nothing (%zu inputs)", ab.n);
	free(j2);

	/* totals: the sums of the rows, min/max over them, histograms add */
	n = agg_totals(&ab_c, &t);
	for (i = 0; i < ab_c.n; i++) {
		size_t k;
		for (k = 0; k < ab_c.in[i].nf; k++)
			calls += ab_c.in[i].f[k].calls;
	}
	{
		uint64_t tc = 0, th = 0;
		size_t k, bkt;
		for (k = 0; k < n; k++) {
			tc += t[k].calls;
			for (bkt = 0; bkt < AGG_BUCKETS; bkt++)
				th += t[k].hist[bkt];
			ok(t[k].min <= t[k].max && t[k].exclusive <= t[k].total,
			   "totals of %s: min <= max, exclusive <= total", t[k].name);
		}
		is_int(tc, calls, "total calls are the sum of the rows' calls");
		is_int(th, calls, "histogram counts add up to the calls");
	}
	agg_funcs_free(t, n);

	/* the file form reads back to the same bytes */
	j1 = json(&ab_c);
	ok(agg_is_aggregate(j1, strlen(j1)), "json says it is an aggregate");
	is_int(agg_parse(&back, j1, strlen(j1), "test"), 0, "json parses");
	j2 = json(&back);
	is_str(j2, j1, "json round trip");
	free(j1);
	free(j2);
	ok(agg_parse(&aa, "{\"perun_aggregate\":1}", 21, "bad") < 0,
	   "a damaged aggregate is refused");
	agg_release(&aa);

	is_int(agg_timebox(1700000123, 86400), 1699920000, "time box of a time");
	is_int(agg_timebox(-1, 10), -10, "time box before the epoch");
	ok(agg_valid_id("v1.2-rc") && !agg_valid_id("../x") && !agg_valid_id(".hidden") &&
	       !agg_valid_id("a b") && !agg_valid_id(""),
	   "ids that name files");

	agg_release(&a);
	agg_release(&b);
	agg_release(&c);
	agg_release(&ab);
	agg_release(&bc);
	agg_release(&ab_c);
	agg_release(&a_bc);
	agg_release(&ba);
	agg_release(&back);
	return tap_done();
}
