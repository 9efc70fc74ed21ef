/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Views of a profile's calls one by one, as a tracer's users know them:
 * the call tree per thread (uftrace's replay), the callers and callees of
 * one function (uftrace's graph), Chrome trace-event JSON for timeline
 * viewers (Perfetto, chrome://tracing, speedscope), and latency
 * distributions per function.  They read the profile's calls
 * (profile_calls); the latency view also reads the log2 histograms of an
 * --aggregate profile.  */
#ifndef PERUN_REPORT_CALLS_VIEW_H
#define PERUN_REPORT_CALLS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

struct profile;

enum calls_format {
	CALLS_TREE,	/* the calls per thread, indented by nesting */
	CALLS_GRAPH,	/* callers and callees of one function */
	CALLS_CHROME,	/* Chrome trace-event JSON */
	CALLS_HIST,	/* quantiles and a log2 histogram per function */
};

/* Which calls a view shows.  */
struct calls_filter {
	char *const *include;	/* tree, chrome: only calls of these functions and the
				 * calls inside them; hist: only these functions;
				 * NULL-terminated, NULL for all */
	const char *function;	/* graph: the function */
	unsigned depth;		/* tree, chrome: levels below the outermost shown call;
				 * 0 for all */
	int has_thread;
	int64_t thread;		/* with has_thread: only this thread */
	uint64_t min_ns;	/* tree, chrome, graph: only calls at least this long
				 * (and what they hold) */
};

/* Appends the view fmt of p's calls to out; what names the profile in
 * messages and in the Chrome export's metadata.  -1 with a message when p
 * has no per-call records (and, for hist, no histograms either), or the
 * graph's function has no call in it.  */
int calls_view(const struct profile *p, const char *what, enum calls_format fmt,
	       const struct calls_filter *f, struct strbuf *out);

/* Appends the latency quantiles (hist's p50 to p99.9) of every function of
 * A (profile pa, named a) and B side by side, and the ratio of their p99
 * (B / A); A's functions first, by total time, then those only in B.  -1
 * with a message when either has neither calls nor histograms.  */
int calls_hist_diff(const struct profile *pa, const char *a, const struct profile *pb,
		    const char *b, struct strbuf *out);

/* The quantiles every latency view shows: "p50", "p90", "p99", "p99.9".  */
extern const char *const calls_latency_qname[4];

/* One function's latency, as the hist view shows it.  */
struct calls_latency {
	char *name;
	uint64_t count;
	double q[4];	/* calls_latency_qname's quantiles (ns) */
	double max;
	int from_hist;	/* from its log2 histogram, not its exact calls */
};

/* The latency of every function of p (named what in messages), by total
 * time, into *rows (*n of them; calls_latency_free() them).  -1 with a
 * message when p has neither calls nor histograms.  */
int calls_latency(const struct profile *p, const char *what, struct calls_latency **rows,
		  size_t *n);
void calls_latency_free(struct calls_latency *rows, size_t n);

#endif
