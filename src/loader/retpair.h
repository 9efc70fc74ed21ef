/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Returns paired by the stack pointer, in perun's loader.
 *
 * A function's entry probe sees the stack pointer s that its return
 * instructions see again (the return address is on top at both); a
 * uretprobe sees s + 8 (the return popped it).  Per thread, a stack of
 * (probe, entry s) turns the probes' events into the raw stream's entries
 * and exits (tapsets/perun.stp), whatever the call depth:
 *
 *   a return at s  first takes off the frames whose entry s is below it
 *                  (a longjmp or C++ exception unwound them: no return),
 *                  then the frame entered at s returns now (see below
 *                  for the frames that tail-called it);
 *   an entry at s  first takes off the frames entered below s, and those
 *                  entered at s whose returns are return instructions,
 *                  then opens its own: a longjmp or caught exception
 *                  unwound them before this call (or, for a uretprobe past
 *                  the kernel's 64 pending ones, their return came unseen).
 *                  A uretprobe's frame entered at s stays: it jumped to
 *                  this call (a tail call), and returns when it does;
 *   a uretprobe    returns the frames at s down to its own.
 *
 * Return instructions at s return, with the innermost frame, the frames
 * under it at s that tail-called it and whose uretprobe the kernel did not
 * install.
 *
 * Every return of a probe of kind RETPAIR_INSN is seen: binary/exits.h
 * finds them all or none, and a function with none keeps its uretprobe.
 *
 * A frame taken off without a return becomes a u line, so the parser
 * counts the call without a duration and pairs the next exit right.  Stack
 * pointers are compared as signed 32-bit differences (the low 32 bits the
 * probe sees).  Memory: one 12-byte frame per open call per thread.  */
#ifndef PERUN_RETPAIR_H
#define PERUN_RETPAIR_H

#include <stddef.h>
#include <stdint.h>

/* How the returns of a probe are seen.  */
enum retpair_kind {
	RETPAIR_OFF = 0,	/* not paired here (marks, points): passed on */
	RETPAIR_INSN,		/* probes on its return instructions */
	RETPAIR_URET,		/* a uretprobe */
};

/* Why a frame has no return (the u line's WHY).  */
#define RETPAIR_UNSEEN 0	/* it returned, unseen (not made here; the u line has it) */
#define RETPAIR_UNWOUND 1	/* a return further out came first */
#define RETPAIR_LIMIT 2		/* a uretprobe entered past the kernel's pending ones */

/* The kernel's pending uretprobes per thread (MAX_URETPROBE_DEPTH).  */
#define RETPAIR_URETPROBE_DEPTH 64

/* A line of the raw stream: kind 'e' an event (CODE TID TS), 'u' a call
 * without a return (u CODE TID TS WHY, CODE its entry's).  */
struct retpair_line {
	char kind;
	uint32_t code, tid;
	uint64_t ts;
	unsigned why;
};

typedef void (*retpair_fn)(void *ctx, const struct retpair_line *l);

struct retpair;

/* kinds: nprobes entries (copied).  */
struct retpair *retpair_new(size_t nprobes, const unsigned char *kinds);
/* One probe event of thread tid: code as the probe's cookie carries it
 * (UPROBES_CODE_RETINSN set on a return instruction), sp the low 32 bits
 * of its stack pointer; hands fn the stream's lines for it, in order.  */
void retpair_event(struct retpair *rp, uint32_t tid, uint32_t code, uint32_t sp, uint64_t ts,
		   retpair_fn fn, void *ctx);
/* Frames open now, over all threads.  */
size_t retpair_open(const struct retpair *rp);
void retpair_free(struct retpair *rp);

#endif
