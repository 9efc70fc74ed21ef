/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Rendering a stored aggregate (store/aggregate.h) for perun show.  */
#ifndef PERUN_AGGREGATE_TABLE_H
#define PERUN_AGGREGATE_TABLE_H

#include "util/strbuf.h"

struct agg;

/* A table like profile_summary's: function, calls, total, mean, median, p95,
 * min, max, exclusive share; then the count of functions and inputs.  */
void agg_summary(const struct agg *a, struct strbuf *out);

#endif
