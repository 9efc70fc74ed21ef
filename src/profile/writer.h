/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writes a Perun profile (seeds/001) as the parser produces calls: the
 * resources are streamed, never held in memory; the small regions go
 * through json-c.  */
#ifndef PERUN_PROFILE_WRITER_H
#define PERUN_PROFILE_WRITER_H

#include <stdint.h>
#include <stdio.h>

#include "profile/record.h"

struct json_object;

/* Per-probe totals, the summary region and --metrics' PLR come from these.
 * total counts the outermost call of a recursion only (a nested call's time
 * is already inside it); sum adds every call, for the mean.  */
struct probe_summary {
	uint64_t count, total, sum, exclusive, min, max;	/* calls with a duration */
	/* calls counted without a duration: their return was never seen (a
	 * longjmp or exception past them, a return the runtime could not
	 * probe, the trace ended first), or they were faster than
	 * --min-duration and not kept; the summary's count holds them too */
	uint64_t untimed, below_min;
	uint64_t hist[64];	/* log2 buckets of inclusive ns */
	unsigned sampled;	/* 1 in sampled calls recorded; 0 or 1: every call */
	unsigned aggregate : 1;	/* from the script's summaries: no per-call detail */
	unsigned calibrated : 1;	/* cal_* hold calibrated amounts */
	unsigned stepped : 1;	/* its probe is stepped out of line: stepped_ns applied */
	unsigned entry : 2;	/* 0 no entry kind known, 1 emulated, 2 stepped (plan flags) */
	unsigned ret : 2;	/* 0 not known, 1 a uretprobe, 2 its return instructions */
	double cal_total, cal_sum, cal_exclusive;
	uint64_t cal_hist[64];	/* log2 buckets of calibrated inclusive ns */
	uint64_t est_calls;	/* merged: the copies' estimated calls; 0: not merged */
	/* sampled: every call that reached its sampling, counted by the
	 * runtime (perun's loader); 0: not counted, the estimate is
	 * (count - 1) * sampled + 1 */
	uint64_t counted;
};

/* The probe effect measured on this host (src/runtime/calibrate.h): probe_ns
 * is what an empty call shows as its recorded amount, stepped_ns the same
 * for a function whose first instruction the kernel steps out of line, and
 * pair_ns what a recorded call costs its caller in all.  */
struct probe_cost {
	double probe_ns, pair_ns, stepped_ns;
	/* probe_ns and pair_ns of a function whose returns are probed on
	 * their instructions (perun's loader), 0: the same */
	double insn_probe_ns, insn_pair_ns;
};

/* Calibrated inclusive and exclusive amounts of one call, never below 0:
 * the call's own probe cost (stepped_ns when stepped, else probe_ns; the
 * insn_ costs' difference more when insn) and, for each recorded callee
 * inside it, pair_ns (insn_pair_ns for the callees_insn of them)
 * (inclusive) or, for each direct callee, the part of its pair cost its
 * recorded amount does not hold (exclusive).  */
double probe_cost_inclusive(const struct probe_cost *c, int stepped, int insn, uint64_t amount,
			    uint64_t callees, uint64_t callees_insn);
double probe_cost_exclusive(const struct probe_cost *c, int stepped, int insn, uint64_t exclusive,
			    uint64_t children, uint64_t children_insn);
/* What profile_writer_open writes per call.  */
enum profile_form {
	PROFILE_SUMMARIES = 0,	/* --aggregate: summary resources only */
	PROFILE_PER_CALL = 1,	/* one resource object per call (perun <= 0.x) */
	PROFILE_COMPACT = 2,	/* columns per uid and thread, see compact.h */
};

/* One column of the profile: a probe of the trace, as the writer needs it
 * (the plan's probe, in the profile's words).  */
struct profile_column {
	const char *name;	/* the uid, as shown */
	unsigned sampling;	/* 1 in sampling calls recorded; 0 or 1: every call */
	unsigned entry;		/* 0 no entry kind known, 1 emulated, 2 stepped */
};

struct compact_state;

struct profile_writer {
	FILE *f;
	char *path, *tmp;
	char **uids;		/* JSON-escaped display names, per probe */
	struct probe_summary *sum;
	uint64_t nresources;
	int per_call;		/* 0 with --aggregate: summaries only */
	const struct probe_cost *cost;	/* NULL: no calibrated amounts */
	const unsigned char *stepped;	/* per probe, or NULL: none stepped */
	const unsigned char *insn;	/* per probe, or NULL: returns' probe kinds unknown */
	/* every recorded call's inclusive and calibrated amounts, per probe,
	 * for exact quantiles; NULL once more than SUMMARY_EXACT_MAX calls came
	 * (the summaries then interpolate their histograms, and say so) */
	struct summary_values *vals;
	size_t nvals;		/* values kept, over all probes */
	int error;
	char *buf;		/* output buffer */
	size_t blen;
	size_t nuids;		/* entries of uids */
	struct compact_state *cs;	/* PROFILE_COMPACT only */
};

/* Opens path.tmpXXXXXX and writes every region up to the resources, for
 * the probes cols[0..ncols) (ids of the records).  origin and machine
 * (profile/machine.h) may be NULL.  cols, header, collector_info and
 * machine are borrowed.  */
int profile_writer_open(struct profile_writer *w, const char *path,
			const struct profile_column *cols, size_t ncols,
			const char *origin, struct json_object *header,
			struct json_object *collector_info, struct json_object *machine,
			int per_call);
/* Adds calibrated amounts to the summaries (cost and stepped, per probe and
 * may be NULL, are borrowed; call before the first record).  */
void profile_writer_calibrate(struct profile_writer *w, const struct probe_cost *cost,
			      const unsigned char *stepped);
/* Says per probe how its returns were probed (insn[i]: on its return
 * instructions, else a uretprobe; borrowed): the summaries say so, and a
 * calibration subtracts that kind's cost.  Call before the first record.  */
void profile_writer_set_returns(struct profile_writer *w, const unsigned char *insn);
/* For conversions: writes to f (not closed), uids are names[0..n), prefix is
 * the JSON text of the regions before "snapshots" without braces
 * ("header":{..},...).  form is PROFILE_PER_CALL or PROFILE_COMPACT.  */
int profile_writer_open_stream(struct profile_writer *w, FILE *f, size_t n,
			       const char *const *names, const char *prefix, int form);
/* Ends a stream opened with profile_writer_open_stream: time and models are
 * JSON texts of the snapshot's regions, rest the JSON text of the regions
 * after "chunks" (",\"trace\":{..}") or "".  */
int profile_writer_finish_stream(struct profile_writer *w, const char *time, const char *models,
				 const char *rest);
/* A parse_sink.  */
int profile_writer_call(void *w, const struct call_record *r);
/* With --aggregate: one resource per probe and thread, from the script's
 * own summaries; also feeds the per-probe summary.  */
int profile_writer_aggregate(struct profile_writer *w, const struct agg_record *a);
/* Closes the resources and writes the trailing regions; extra (borrowed) is
 * stored as the "trace" region; renames the file into place.  */
int profile_writer_close(struct profile_writer *w, const struct parse_stats *st,
			 struct json_object *extra);
/* Drops the temp file (on failure paths).  */
void profile_writer_abort(struct profile_writer *w);
/* Calls whose amounts a writer keeps for exact quantiles, at most (16
 * bytes each); past it the summaries' quantiles come from histograms.  */
#define SUMMARY_EXACT_MAX ((size_t)1 << 23)
/* Summary of one probe as JSON (new object), its median and p95
 * interpolated from its histograms ("quantiles": "log2-histogram").  Its
 * count is every call seen; no_duration and below_min_duration say how many
 * of them have no amount (mean, median and the rest are over the others).  */
struct json_object *probe_summary_json(const struct probe_summary *s);
/* The summary of probes ids[0..n) of w together (probes that share a name
 * are one function), merged with probe_summary_merge; median, p95 and
 * their calibrated twins are exact over the recorded calls where w kept
 * them ("quantiles": "exact").  New object, or NULL when they have no
 * calls at all (with or without a duration).  */
struct json_object *profile_writer_summary_json(const struct profile_writer *w,
						const size_t *ids, size_t n);
/* Adds from's calls to to (counts, amounts, min, max, histogram, calibrated
 * amounts): probes that share a name are one function in the profile (a
 * static function in several files, an inline function's out-of-line
 * copies), and their summary is theirs together.  to keeps the larger
 * sampling.  */
void probe_summary_merge(struct probe_summary *to, const struct probe_summary *from);
/* Calls the probe (or merged probes) made at least: with 1 in N recorded
 * and the first always recorded, k recorded calls are (k - 1) * N + 1 at
 * least; summed per probe when merged.  */
uint64_t probe_summary_estimate(const struct probe_summary *s);

#endif
