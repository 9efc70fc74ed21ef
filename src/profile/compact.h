/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The compact per-call form of a trace profile: the calls as columns.
 *
 * Seed 001's regions stay as they are (origin, header, collector_info,
 * postprocessors, snapshots with time and models); the per-call data moves
 * out of snapshots[0].resources (left empty) into snapshots[0].calls, a list
 * of blocks, one uid and thread each, holding columns instead of objects:
 *
 *   {"uid":U,"thread":T,"n":N,"seq":C,"amount":C,"callee":C,"end":C,
 *    "call-id":C,"call-order":C,"caller-id":C,"context":C}
 *
 * U indexes chunks.uids; each C is a list of N integers, or one integer when
 * all N are equal.  seq is the call's place in the per-call form (the order
 * the parser finished calls); seq and call-order are deltas from the
 * previous call of the same uid and thread, across its blocks (from 0 at
 * its first call); end (timestamp + amount), call-id and caller-id are
 * deltas from the previous call of the same thread in seq order, across
 * blocks, so a reader decodes the blocks in order, sorts by seq, then
 * resolves them thread by thread.  call-order may come as call-order-gap
 * instead, deltas of call-id - call-order, whichever is shorter for the
 * block (a function called from one place or recursively keeps one gap);
 * the first value of either starts from 0 when the uid and thread's last
 * block used the other.
 * caller-id's value is the distance call-id minus the caller's
 * call-id, 0 when the call has no caller (so consecutive calls of a
 * recursion cost a digit); callee is amount - exclusive; context indexes
 * chunks.contexts[U], the repeated part of the calls of uid U: [caller uid
 * or -1, depth, point (0/1)].  chunks is the look-up table seed 001 proposes
 * (its "chunks" region: "a look-up table which maps unique identifiers to a
 * larger portions of JSON regions").
 *
 * The writer keeps the columns of each uid and thread in a varint buffer and
 * writes a block every COMPACT_BLOCK_CALLS calls of it, or all blocks when
 * the buffers together hold COMPACT_BUFFER_BYTES: memory is bounded, not
 * proportional to the stream.  Ids are given in the order calls arrive, so
 * the same calls in the same order give the same bytes (compact -> per-call
 * -> compact is identical).  */
#ifndef PERUN_PROFILE_COMPACT_H
#define PERUN_PROFILE_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/record.h"

struct json_object;

#define COMPACT_BLOCK_CALLS 4096
#define COMPACT_BUFFER_BYTES (3u << 20)

struct compact_state;

/* sink(ctx, text, len) gets the JSON text of each block when it is due
 * (each but the first of the profile preceded by ',').  */
struct compact_state *compact_new(size_t nuids, void (*sink)(void *, const char *, size_t),
				   void *ctx);
void compact_free(struct compact_state *c);
/* Adds one call; -1 when it cannot be encoded (its caller-id equals its
 * call-id or is below -1).  */
int compact_add(struct compact_state *c, const struct call_record *r);
/* Writes the remaining blocks.  */
void compact_flush(struct compact_state *c);
/* The members of the chunks region ("uids":[..],"contexts":[..]); names are
 * the JSON-escaped uids by probe id.  */
const char *compact_chunks(struct compact_state *c, char *const *names, long *len);

/* A decoded call: probe and caller_probe index *names.  */
struct compact_call {
	struct call_record r;
	uint64_t seq;
	unsigned char gap;	/* decoding: r.call_order holds call-id - call-order */
};

/* Decodes snapshot's "calls" with the profile's chunks region into calls
 * sorted by seq; names point into chunks.  -1 with a message naming what
 * and the bad field.  */
int compact_decode(struct json_object *snapshot, struct json_object *chunks, const char *what,
		   struct compact_call **out, size_t *n, const char ***names, size_t *nnames);
/* Whether snapshot holds compact calls.  */
int compact_present(struct json_object *snapshot);

#endif
