/* SPDX-License-Identifier: GPL-3.0-or-later */
/* An aggregate as a text table (report/aggregate-table.h).  */
#include "config.h"

#include <stdint.h>

#include "profile/profile.h"
#include "report/aggregate-table.h"
#include "store/aggregate.h"

static double mean_of(const struct agg_func *f)
{
	return f->calls ? (double)f->total / (double)f->calls : 0;
}

void agg_summary(const struct agg *a, struct strbuf *out)
{
	struct agg_func *t;
	size_t i, n = agg_totals(a, &t);
	uint64_t excl = 0;

	for (i = 0; i < n; i++)
		excl += t[i].exclusive;
	strbuf_addf(out, "%-30s %10s %14s %12s %12s %12s %12s %12s %7s\n", "function", "calls",
		    "total", "mean", "median", "p95", "min", "max", "excl%");
	for (i = 0; i < n; i++) {
		double med = log2_hist_quantile(t[i].hist, AGG_BUCKETS, 0.5, (double)t[i].min,
						(double)t[i].max);
		double p95 = log2_hist_quantile(t[i].hist, AGG_BUCKETS, 0.95, (double)t[i].min,
						(double)t[i].max);
		strbuf_addf(out, "%-30s %10llu %14llu %12.1f %12.1f %12.1f %12llu %12llu %6.1f%%\n",
			    t[i].name, (unsigned long long)t[i].calls,
			    (unsigned long long)t[i].total, mean_of(&t[i]), med, p95,
			    (unsigned long long)t[i].min, (unsigned long long)t[i].max,
			    excl ? 100.0 * (double)t[i].exclusive / (double)excl : 0.0);
	}
	strbuf_addf(out, "%zu function%s, %zu input profile%s\n", n, n == 1 ? "" : "s", a->n,
		    a->n == 1 ? "" : "s");
	agg_funcs_free(t, n);
}
