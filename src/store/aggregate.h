/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Aggregates of many runs on many hosts (seeds/002, StatProfiler's report
 * structure): per release id, per shard (a host), per time box.
 *
 *   DIR/<release>/__state__/shard.<shard>            empty flag: the shards
 *   DIR/<release>/aggregate/report.<timebox>.<shard> JSON, struct agg
 *   DIR/<release>/aggregate/metadata.<shard>         JSON: inputs per time box
 *
 * An aggregate holds one row of per-function statistics per input profile,
 * keyed by the profile's object id; its totals are the sums of its rows.
 * Merging is the union of rows by id, so it is associative, commutative and
 * idempotent: the same profile merged twice, through any path, counts once.  */
#ifndef PERUN_STORE_AGGREGATE_H
#define PERUN_STORE_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "util/sha1.h"
#include "util/strbuf.h"

#define AGG_BUCKETS 64

struct profile;

/* Statistics of one function; amounts in the profile's unit (ns).  The
 * histogram is log2: bucket b counts amounts in [2^b, 2^(b+1)), bucket 0
 * also 0 (profile.h's log2_hist_quantile reads it).  */
struct agg_func {
	char *name;
	uint64_t calls;
	uint64_t total, exclusive;
	uint64_t min, max;
	uint64_t hist[AGG_BUCKETS];
};

/* One input profile's row.  */
struct agg_input {
	char id[SHA1_HEXSZ + 1];
	int64_t time;	    /* when it was collected or registered, seconds */
	struct agg_func *f; /* sorted by name */
	size_t nf;
};

struct agg {
	char *release, *shard;
	int64_t timebox; /* start of the box, seconds since the epoch */
	int64_t box_seconds;
	struct agg_input *in; /* sorted by id */
	size_t n;
};

/* Calls fn for every call of p (uid, amount, exclusive).  The one place
 * that reads resources: profile.h's reader API.  */
typedef void (*calls_fn)(void *ctx, const char *uid, uint64_t amount, uint64_t exclusive);
void calls_each(const struct profile *p, calls_fn fn, void *ctx);

void agg_init(struct agg *a, const char *release, const char *shard, int64_t timebox,
	      int64_t box_seconds);
void agg_release(struct agg *a);

/* The row of a profile: its calls per function.  */
int agg_input_from_profile(struct agg_input *in, const struct profile *p, const char *id,
			   int64_t time);
void agg_input_release(struct agg_input *in);
/* Adds a row (copied); 0 added, 1 already there (kept as is).  */
int agg_add(struct agg *a, const struct agg_input *in);
/* dst := dst union src.  */
void agg_merge(struct agg *dst, const struct agg *src);
/* The totals of rows: per function summed, sorted by name; caller frees
 * with agg_funcs_free.  */
size_t agg_totals(const struct agg *a, struct agg_func **out);
void agg_funcs_free(struct agg_func *f, size_t n);
/* Adds s into d (same function).  */
void agg_func_add(struct agg_func *d, const struct agg_func *s);

/* Canonical JSON (rows by id, functions by name): equal aggregates give
 * equal bytes.  Holds the totals as "functions" too, for readers.  */
void agg_to_json(const struct agg *a, struct strbuf *out);
/* Parses what agg_to_json wrote; what names it in messages.  */
int agg_parse(struct agg *a, const char *text, size_t len, const char *what);
/* 1 when text looks like an aggregate (has "perun_aggregate").  */
int agg_is_aggregate(const char *text, size_t len);

/* The time box holding t.  */
int64_t agg_timebox(int64_t t, int64_t box_seconds);
/* Release and shard ids become file names: 1 when usable (no '/', not
 * starting with '.', printable, at most 200 bytes).  */
int agg_valid_id(const char *s);

#endif
