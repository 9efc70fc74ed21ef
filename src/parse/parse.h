/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Streaming parser of the raw stream (format in tapsets/perun.stp).
 *
 * One pass; memory is bounded by threads x depth, probes, and a fixed
 * reorder window, never by the number of events.  The bpf runtime reads its
 * per-CPU buffers in turn, so a thread that migrates can see its events out
 * of order: the window sorts them back by timestamp.
 *
 * The in-map recorder's dump (d/l/c lines) comes in map order, so those
 * events are held and sorted at the end: 24 bytes per event, bounded by the
 * recorder's buffer size, not by the length of the run.  */
#ifndef PERUN_PARSE_H
#define PERUN_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/record.h"	/* call_record, agg_record, parse_stats */

/* Events held back for reordering.  */
#define PARSE_WINDOW 8192

typedef int (*parse_sink)(void *ctx, const struct call_record *r);

struct parser;

/* nprobes: size of the plan; points[i] true when probe i has no duration.  */
struct parser *parser_new(size_t nprobes, const unsigned char *points, parse_sink sink, void *ctx);
/* The kernel keeps at most this many return probes pending per thread
 * (MAX_URETPROBE_DEPTH in kernel/events/uprobes.c, both runtimes): a call
 * entered deeper gets no return probe, so its exit never comes.  */
#define PARSE_URETPROBE_DEPTH 64
/* The begin line's FLAGS (s PID HI LO FLAGS): the writer pairs function
 * returns itself (perun's loader, by stack pointer), so every entry gets
 * its exit or a u line, at any depth: no return limit applies.  */
#define PARSE_BEGIN_PAIRED 1u
/* A u line's WHY: the call returned unseen, a return further out came first
 * (a longjmp or exception unwound it), or a uretprobe past the kernel's
 * limit.  */
#define PARSE_NORET_UNSEEN 0
#define PARSE_NORET_UNWOUND 1
#define PARSE_NORET_LIMIT 2
/* Entries at a depth of depth or more (0: no limit, the default) are taken
 * as calls without a return probe: counted as unfinished and in
 * beyond_return_limit, and not stacked, so the exit of an outer call of the
 * same function (a recursion) pairs with its own entry, not theirs.  */
void parser_set_return_limit(struct parser *p, unsigned depth);
/* insn[i] (nprobes, copied): probe i's returns were probed on its return
 * instructions, whose cost differs from a uretprobe's (call_record's
 * callees_insn and children_insn count them).  */
void parser_set_insn(struct parser *p, const unsigned char *insn);
/* Feeds raw bytes; lines may be split across calls.  -1 when the sink failed.  */
int parser_feed(struct parser *p, const char *buf, size_t len);
/* Flushes the window and ends the stream; unfinished frames are counted.  */
int parser_finish(struct parser *p);
const struct parse_stats *parser_stats(const struct parser *p);
/* The script's own summaries (n/m/x/y/h lines), in no particular order.  */
const struct agg_record *parser_aggregates(const struct parser *p, size_t *n);
void parser_free(struct parser *p);
/* Events lost per probe id, an array of nprobes: the recorder's l lines,
 * or what the print transport's w lines say was printed and never came.  */
const uint64_t *parser_lost(const struct parser *p);
/* A report of an optimization method's code in the script: o METHOD ID VALUE
 * (templates/optimize.stp.in).  */
struct parse_opt_record {
	unsigned method;	/* PARSE_OPT_* */
	uint64_t id;		/* probe id, or 0 */
	uint64_t value;
};
/* Dynamic probing: probe ID was disarmed after VALUE recorded calls (reattach
 * mode: VALUE calls recorded over all its bursts).  */
#define PARSE_OPT_DISARMED 1
/* Timed sampling: the gather/dormant flag flipped VALUE times.  */
#define PARSE_OPT_FLIPS 2
/* Dynamic probing, reattach mode: probe ID was disarmed VALUE times...  */
#define PARSE_OPT_DISARMS 3
/* ... and re-armed VALUE times.  */
#define PARSE_OPT_REARMS 4
/* --max-overhead: probe ID was disarmed after VALUE recorded calls ...  */
#define PARSE_OPT_BUDGET_CALLS 7
/* ... VALUE - 1 ms after the start.  */
#define PARSE_OPT_BUDGET_AT_MS 8
/* --max-overhead: VALUE windows were over the budget.  */
#define PARSE_OPT_BUDGET_OVER 9
/* --max-overhead: VALUE later calls reached disarmed probe ID.  */
#define PARSE_OPT_BUDGET_AFTER 10
/* Sampling: VALUE calls of probe ID reached its sampling, every one
 * counted (perun's loader; the stap scripts count none).  */
#define PARSE_OPT_SAMPLE_SEEN 11
/* The o lines of the stream, in their order.  */
const struct parse_opt_record *parser_opt_records(const struct parser *p, size_t *n);
/* Per plan id: entries whose return never came (a longjmp or exit past
 * them, or the trace ended first); they are in no call record.  */
const uint64_t *parser_unfinished(const struct parser *p);
/* Per plan id: returns whose entry came before the trace began (a call in
 * flight when an attach armed the probes, or an entry lost).  */
const uint64_t *parser_unstarted(const struct parser *p);
/* The process of each thread, where the stream says (p TID PID lines of
 * perun's own loader); *n of them.  */
struct parse_proc {
	int64_t thread, pid;
};
const struct parse_proc *parser_processes(const struct parser *p, size_t *n);
/* Processes the traced ones started (j CHILD PARENT NS FOLLOWED lines):
 * followed ones were traced from ns after their fork.  */
struct parse_child {
	int64_t pid, parent;
	uint64_t attach_ns;
	int followed;
};
const struct parse_child *parser_children(const struct parser *p, size_t *n);
/* Programs traced processes executed (i PID PROBED lines): probed when the
 * new program is one of the probed binaries.  */
struct parse_exec {
	int64_t pid;
	int probed;
};
const struct parse_exec *parser_execs(const struct parser *p, size_t *n);
/* Reads a whole file through a parser.  */
int parser_feed_file(struct parser *p, const char *path);

#endif
