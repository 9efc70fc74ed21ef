/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a trace yields, in the profile's own words: one finished call, one
 * summary the tracer kept itself (--aggregate), and the trace's totals and
 * anomalies.  The raw-stream parser (parse/parse.h) produces them, the
 * profile writer (profile/writer.h) and its column encoder
 * (profile/compact.h) consume them; neither needs to know where they came
 * from.  */
#ifndef PERUN_PROFILE_RECORD_H
#define PERUN_PROFILE_RECORD_H

#include <stddef.h>
#include <stdint.h>

/* One finished call (or a point event, with amount 0).  */
struct call_record {
	int probe;		/* plan id */
	int caller_probe;	/* -1 at the bottom of the recorded stack */
	int64_t thread;		/* kernel thread id */
	uint64_t start;		/* ns since the begin marker */
	uint64_t amount;	/* inclusive ns */
	uint64_t exclusive;	/* amount minus recorded callees */
	uint64_t call_id;	/* sequence number of the entry in the stream */
	int64_t caller_id;	/* call_id of the caller, -1 when none */
	uint64_t call_order;	/* n-th recorded call of this probe */
	unsigned depth;		/* recorded frames below this one */
	uint64_t callees;	/* recorded calls inside this one, at any depth */
	uint64_t children;	/* recorded calls directly inside this one */
	/* of callees and children: those whose returns were probed on their
	 * return instructions (parser_set_insn), which cost more than a
	 * uretprobe */
	uint64_t callees_insn, children_insn;
	unsigned point : 1;	/* USDT point or source line: no duration */
	unsigned nested : 1;	/* a call of the same probe is open below it (recursion) */
};

/* Anomalies and totals, all recorded in the profile.  */
struct parse_stats {
	uint64_t bytes, lines, events, calls, points;
	uint64_t unmatched_entries;	/* entry without exit (longjmp, exit, kill) */
	uint64_t unwound;		/* of those: a return further out came first
					 * (a longjmp or C++ exception past them) */
	uint64_t missed_returns;	/* of those: they returned, unseen */
	uint64_t beyond_return_limit;	/* of those: past the kernel's pending returns */
	uint64_t unmatched_exits;	/* exit without entry */
	uint64_t truncated_lines;	/* last line without newline */
	uint64_t malformed_lines;
	uint64_t duplicates;		/* the same event twice */
	uint64_t reordered;		/* events that came out of order */
	uint64_t unknown_probes;	/* ids outside the plan */
	uint64_t ticks;
	uint64_t lost_events;		/* recorder: dropped because its map was full */
	uint64_t happened;		/* recorder: events the probes saw (c lines) */
	uint64_t missing_records;	/* recorder: seen, neither recorded nor counted lost */
	uint64_t transport_lost;	/* print transport: printed (w lines), never carried */
	uint64_t duration;		/* ns from begin to the last record */
	int64_t target_pid;
	unsigned saw_begin : 1, saw_end : 1, recorder : 1;
	unsigned sent_counts : 1;	/* the stream says what its script printed (w lines) */
	unsigned max_depth;
	size_t threads;
};

/* A summary the script kept itself (--aggregate), per probe and thread.  */
struct agg_record {
	int probe;
	int64_t thread;
	uint64_t count, sum, min, max;	/* inclusive ns */
	uint64_t hist[64];		/* log2 buckets */
};

#endif
