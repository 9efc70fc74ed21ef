/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The directory of stored aggregates (layout in store/aggregate.h):
 * reading a report file or a whole release, adding profiles to the time
 * boxes of a release and shard, and expiring old time boxes.  Only files
 * perun wrote are read as aggregates or deleted; DIR and every directory
 * above it must be trusted (no link, no other writer).  */
#ifndef PERUN_AGGREGATE_DIR_H
#define PERUN_AGGREGATE_DIR_H

#include <stddef.h>
#include <stdint.h>

struct agg;

/* An aggregate report file, or a release directory (every shard and time
 * box merged).  */
int agg_load_path(const char *path, struct agg *a);
/* 1 when path is an aggregate report or a release directory of them; never
 * blocks on a FIFO.  */
int agg_is_aggregate_path(const char *path);
/* Every release directory of dir, each merged, sorted by release; none
 * when dir is missing.  The caller releases each and frees *out.  */
int agg_load_releases(const char *dir, struct agg **out, size_t *n);
/* Deletes the time boxes of release (NULL: of every release) that end
 * before t, and rewrites the metadata of their shards: how many, or -1.  */
long agg_expire(const char *dir, const char *release, int64_t t);

/* What perun aggregate does.  */
struct agg_job {
	const char *dir;		/* NULL: .perun/aggregates of the repository */
	const char *release, *shard;	/* valid ids (agg_valid_id) when nspecs */
	int64_t box;			/* seconds of a time box */
	const char *rev;		/* the minor version of N@i names */
	int explicit_rev;		/* rev was given: an unborn HEAD is not assumed */
	char **specs;			/* profiles: N@i, N@p, names, paths, aggregates */
	size_t nspecs;
	int expire;			/* expire the time boxes ending before before */
	int64_t before;
};

struct agg_job_result {
	char *dir;			/* the aggregates directory, absolute */
	int stored;			/* the inputs were stored */
	size_t added, already, written;	/* inputs added, already there; time boxes */
	long expired;			/* time boxes expired; -1: none tried */
};

/* Adds the profiles of job to their time boxes under dir/release, then
 * expires when asked; 0, or -1 after a message.  res says what was done
 * either way; the caller releases it.  */
int agg_job_run(const struct agg_job *job, struct agg_job_result *res);
void agg_job_result_release(struct agg_job_result *res);

#endif
