/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Dynamic statistics (seeds/003 6.2.2 and 7.1.2): per function of one
 * profiled command, what the last collection saw (calls recorded, sampling,
 * estimated calls, total, min, max, avg, quartiles), kept under
 * .perun/stats/<minor version>/<name> so that the next collection of the same
 * command, arguments and workload can tune its probes.  */
#ifndef PERUN_STATS_H
#define PERUN_STATS_H

#include <stddef.h>
#include <stdint.h>

struct json_object;
struct profile;
struct repo;
struct strv;

struct fn_stats {
	char *name;
	uint64_t sampled_count;	/* calls recorded */
	uint64_t sample;	/* 1 in sample calls recorded; 1: every call */
	uint64_t count;		/* estimated calls: sampled + (sampled - 1) * (sample - 1) */
	double total, min, max, avg, median, q1, q3, iqr;
	unsigned from_histogram : 1;	/* --aggregate: quartiles from log2 buckets */
	unsigned partial : 1;	/* disarmed or timed-sampled: count is a lower bound */
};

struct stats {
	char *cmd, *args, *workload, *collector;
	char *profile;		/* the profile's object id or path, for the record */
	struct fn_stats *fn;	/* sorted by name */
	size_t n;
};

/* Version of the file format, in the file as "perun-stats".  */
#define STATS_FORMAT 1

/* The stats of profile p (either form; per-call amounts when it has them,
 * else its trace summary).  -1 with a message when p is not a trace profile.  */
int stats_from_profile(const struct profile *p, struct stats *s);
void stats_release(struct stats *s);
/* The function named name, or NULL.  */
const struct fn_stats *stats_find(const struct stats *s, const char *name);

/* The file name for a command, its arguments and workload: the command's
 * base name (letters, digits, '-', '_', '.' kept, others '_', at most 40)
 * and 16 hex digits of SHA-1 over all three; caller frees.  */
char *stats_name(const char *cmd, const char *args, const char *workload);

/* Writes s as .perun/stats/<minor>/<name> atomically (private directories
 * created); *path_out, when not NULL, gets its path (caller frees).  */
int stats_save(const struct repo *r, const char *minor, const struct stats *s,
	       char **path_out);
/* Reads .perun/stats/<minor>/<name>: 0, 1 when there is none (quiet), -1
 * when it is damaged or not perun's (reported).  */
int stats_load(const struct repo *r, const char *minor, const char *name, struct stats *s);
/* The stats named name of the nearest minor version from sha back along
 * first parents (at most max versions) that has them: 0 and *found_minor
 * (41 bytes) set, 1 when none has, -1 on error.  */
int stats_nearest(const struct repo *r, const char *sha, const char *name, size_t max,
		  struct stats *s, char found_minor[41]);

/* The stats of a trace summary (the trace.summary region: count, total, min,
 * max, mean, sampled, log2_hist), quartiles from the log2 histograms.  */
int stats_from_summary(struct json_object *header, const char *collector,
		       struct json_object *summary, struct stats *s);

/* Profiles with at most this many calls get exact quartiles after collect
 * (the profile is read back); larger ones get them from the histograms.  */
#define STATS_EXACT_MAX_CALLS 200000

/* After collect wrote profile_path: when the current directory is in a perun
 * repository, computes the stats and stores them for minor version origin
 * (40 hex digits; NULL: nothing is stored).  Where they went (unless quiet),
 * or the warning that none were stored, is appended to said, for the caller
 * to print among its own lines.  A failure returns -1 after its cause is
 * reported; the profile stands.  */
int stats_after_collect(const char *profile_path, struct json_object *header,
			const char *collector, struct json_object *summary, uint64_t calls,
			const char *origin, int quiet, struct strv *said);

/* Whether m is a minor version's directory name: 40 lowercase hex digits.  */
int stats_valid_minor(const char *m);

/* Whether the file at dirfd/name is a stats file perun wrote.  */
int stats_is_ours(int dirfd, const char *name);

#endif
