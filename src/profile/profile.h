/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Perun profiles in memory (seeds/001): load, validate, and the queries the
 * store commands need.  One json_object owner: struct profile.  */
#ifndef PERUN_PROFILE_H
#define PERUN_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* the quantiles of amounts (median, p95) every reader of a profile uses */
#include "util/quantile.h"
#include "util/strbuf.h"

struct json_object;
struct profile_calls;
struct profile_process;

/* A profile in either form: per-call resources, or the compact columns of
 * profile/compact.h, decoded on first use.  Every reader below sees both.  */
struct profile {
	struct json_object *root;
	struct profile_calls *calls;	/* owned; the compact form decoded */
	/* when set, readers see only this process's calls (profile/processes.h) */
	const struct profile_process *view;
};

/* Reads and validates (profile_validate) the profile file path; -1 with a
 * message naming the file when it is not a regular file, not JSON, or not a
 * valid profile.  Every reader of a profile file goes through it.  */
int profile_load(struct profile *p, const char *path);
/* profile_parse and profile_validate: how a reader takes a stored profile.  */
int profile_read(struct profile *p, const char *text, size_t len, const char *what);
/* Parses JSON text into p without validating it (fsck's look at damage).  */
int profile_parse(struct profile *p, const char *text, size_t len, const char *what);
void profile_release(struct profile *p);
/* The one check of a profile every reader makes (profile_load and the
 * store's loads call it): the regions and resource fields of seeds/001, at
 * least one snapshot, amounts and counts that are numbers and never
 * negative, compact calls that decode.  The message names the first bad
 * field as a path (snapshots[0].resources[3].amount).  */
int profile_validate(const struct profile *p, const char *what);
/* profile_validate, and the header fields a registered profile is listed
 * by (header.cmd, header.units): what 'perun add' stores.  */
int profile_validate_for_store(const struct profile *p, const char *what);
/* header.type, or "" */
const char *profile_type(const struct profile *p);
/* The string at a dotted path (header.cmd), or NULL.  */
const char *profile_str(const struct profile *p, const char *path);
/* Serializes without whitespace (the form objects store).  */
const char *profile_to_json(const struct profile *p);
/* Removes the origin region; returns it (caller frees) or NULL.  */
char *profile_take_origin(struct profile *p);

/* Seed 001's query API.  A resource flattens to key/value pairs: nested
 * objects join keys with ':' (uid:function), lists of objects with '::'
 * (trace::function, the values joined by ',').  Values are rendered as
 * JSON scalars without quotes.  */
struct kv {
	char *key, *value;
	int numeric;
};
/* Flattens resource r (a json_object) into *out; caller frees with kv_free.  */
size_t profile_flatten(struct json_object *r, struct kv **out);
void kv_free(struct kv *kv, size_t n);
/* The distinct values of a flattened key over all resources, sorted.  */
size_t profile_unique_values(const struct profile *p, const char *key, char ***out);
/* Flattened keys whose values are numbers in every resource that has them, sorted.  */
size_t profile_numeric_keys(const struct profile *p, char ***out);
void strings_free(char **v, size_t n);

/* Calls fn for every resource: the stored ones, and for a compact profile
 * one per call as the per-call form has it (one object refilled for each
 * call: fn must not keep a reference).  */
void profile_each_resource(const struct profile *p, void (*fn)(void *, struct json_object *),
			   void *ctx);
/* One call with its place in the trace, from either form.  */
struct profile_call {
	const char *uid;	/* into the profile */
	int64_t thread;		/* kernel thread id */
	uint64_t start;		/* ns since the trace began */
	uint64_t amount;	/* inclusive ns */
	uint64_t exclusive;	/* amount minus the recorded callees */
	uint64_t call_id;	/* the entry's place in the stream */
	int64_t caller_id;	/* call_id of the caller, -1 when none */
	unsigned depth;		/* recorded frames below it */
	unsigned point : 1;	/* a USDT point or source line: no duration */
};
/* Every call of p (its per-call resources, or its compact calls decoded) in
 * the order of the per-call form; the caller frees *out.  -1 with a message
 * naming what when p has resources that are not per-call records (an
 * --aggregate profile keeps summaries, not calls) or calls that do not
 * decode.  */
int profile_calls(const struct profile *p, const char *what, struct profile_call **out,
		  size_t *n);
/* Writes p to f in form PROFILE_PER_CALL or PROFILE_COMPACT (profile/writer.h):
 * the same calls in the same order, every other region as it is.  -1 with
 * a message naming what when p has resources that are not per-call records
 * (nothing to convert).  */
int profile_write_form(const struct profile *p, FILE *f, int form, const char *what);
/* Whether p holds compact calls.  */
int profile_is_compact(const struct profile *p);
/* Decodes p's compact calls, if any; -1 with a message naming what and the
 * bad field.  The readers above show nothing of calls that do not decode.  */
int profile_check_calls(const struct profile *p, const char *what);

/* When p's trace region says the trace was incomplete (trace.complete
 * false: events lost, probes not attached, the trace cut short), appends
 * what every view of it shows first: a line "incomplete profile: WHAT" and
 * one line per function with a loss ("  NAME: N events lost, M calls
 * unfinished", "  NAME: not attached"), each line after prefix; returns
 * 1.  Appends nothing and returns 0 for a complete profile, or one that
 * does not say.  */
int profile_incomplete(const struct profile *p, const char *prefix, struct strbuf *out);
/* Calls of function uid that have no duration, from trace.summary: those
 * whose return no probe saw (no_duration), and those faster than
 * --min-duration, counted and not kept (below_min_duration).  0 when it
 * does not say.  */
void profile_untimed_calls(const struct profile *p, const char *uid, uint64_t *untimed,
			   uint64_t *below_min);
/* When some calls of p have no duration (profile_untimed_calls), appends a
 * line after prefix for each kind, naming the functions ("* calls without a
 * duration (...): NAME N of M, ..."), and returns 1; else 0.  The calls
 * columns of show and diff count them, marked with "*".  */
int profile_untimed(const struct profile *p, const char *prefix, struct strbuf *out);
/* A table per function: calls (every call seen; "*": some have no duration),
 * total, mean, median, p95, max, exclusive share.  */
void profile_summary(const struct profile *p, struct strbuf *out);
/* Folded stacks (caller;callee exclusive-amount), the input of flame graphs;
 * a control character in a name is written as \xNN.  */
void profile_folded(const struct profile *p, struct strbuf *out);

/* A self-contained interactive SVG flame graph of folded stacks; returns the
 * number of frames drawn (one per node of the stack trie).  */
size_t profile_flamegraph(const char *folded, const char *title, struct strbuf *svg);
/* A differential flame graph: B's frames (widths from folded_b), each
 * coloured by how its share of B's total compares with the same stack's
 * share of A's (red grew, blue shrank, white the same); frames only in A are
 * not drawn.  Returns the frame count.  */
size_t profile_flamegraph_diff(const char *folded_a, const char *folded_b, const char *title,
			       struct strbuf *svg);

#endif
