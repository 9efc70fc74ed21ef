/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Returns paired by stack pointer (loader/retpair.h) on synthetic probe
 * events, through the parser: recursion at any depth, tail calls, a
 * longjmp and an exception past frames, uretprobes past the kernel's
 * limit.  */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "parse/parse.h"
#include "loader/retpair.h"
#include "loader/uprobes.h"
#include "util/strbuf.h"

#define RET UPROBES_CODE_RETINSN

static struct strbuf raw = STRBUF_INIT;
static uint64_t now = 1000;

#define MAXR 4096
static struct call_record recs[MAXR];
static int nrecs;
static uint64_t counts[8];	/* per probe */

static int sink(void *ctx, const struct call_record *r)
{
	(void)ctx;
	if (nrecs < MAXR)
		recs[nrecs] = *r;
	nrecs++;
	if (r->probe < 8)
		counts[r->probe]++;
	return 0;
}

static void line(void *ctx, const struct retpair_line *l)
{
	(void)ctx;
	if (l->kind == 'u')
		strbuf_addf(&raw, "u %x %x %" PRIx64 " %x\n", l->code, l->tid, l->ts, l->why);
	else
		strbuf_addf(&raw, "%x %x %" PRIx64 "\n", l->code, l->tid, l->ts);
}

static struct retpair *rp;

/* entry of probe id at sp, and a return instruction (or uretprobe) event */
static void in(unsigned id, uint32_t sp)
{
	retpair_event(rp, 0, id * 2, sp, now++, line, NULL);
}

static void out(unsigned id, uint32_t sp)
{
	retpair_event(rp, 0, (id * 2 + 1) | RET, sp, now++, line, NULL);
}

static void uret(unsigned id, uint32_t entry_sp)
{
	retpair_event(rp, 0, id * 2 + 1, entry_sp + 8, now++, line, NULL);
}

static void begin(size_t n, const unsigned char *kinds)
{
	strbuf_reset(&raw);
	strbuf_addstr(&raw, "s 64 0 0 1\nr\n");
	now = 1000;
	rp = retpair_new(n, kinds);
}

static const struct parse_stats *parse(struct parser **pp, size_t n, int paired)
{
	struct parser *p = parser_new(n, NULL, sink, NULL);

	if (!paired)
		raw.buf[9] = '0';	/* the same stream without the flag */
	parser_set_return_limit(p, PARSE_URETPROBE_DEPTH);
	strbuf_addstr(&raw, "q\n");
	nrecs = 0;
	memset(counts, 0, sizeof(counts));
	parser_feed(p, raw.buf, raw.len);
	parser_finish(p);
	retpair_free(rp);
	*pp = p;
	return parser_stats(p);
}

static uint64_t count_of(int probe)
{
	return counts[probe];
}

/* walk(d) at sp recurses to d = 0, calling leaf once a level first */
static void walk(unsigned d, uint32_t sp)
{
	in(0, sp);
	in(1, sp - 32);
	out(1, sp - 32);
	if (d)
		walk(d - 1, sp - 48);
	out(0, sp);
}

int main(void)
{
	static const unsigned char insn[4] = { RETPAIR_INSN, RETPAIR_INSN, RETPAIR_INSN,
					       RETPAIR_INSN };
	static const unsigned char urets[2] = { RETPAIR_URET, RETPAIR_URET };
	static const unsigned char mixed[3] = { RETPAIR_INSN, RETPAIR_URET, RETPAIR_INSN };
	struct parser *p;
	const struct parse_stats *st;
	int i, ok;

	/* 300 deep, 40 times: every call returns, with its duration */
	begin(2, insn);
	for (i = 0; i < 40; i++)
		walk(299, 0x7ffff000u);
	st = parse(&p, 2, 1);
	ok(count_of(0) == 12000 && count_of(1) == 12000, "walk and leaf: 12000 calls each, paired");
	ok(st->unmatched_entries == 0 && st->unmatched_exits == 0 && st->max_depth == 301,
	   "none unfinished at depth 300 (max depth %u)", st->max_depth);
	ok = 1;
	for (i = 0; i < MAXR && i < nrecs; i++)
		if (recs[i].probe == 0 && recs[i].depth == 0)
			ok &= recs[i].amount == 300 * 4 - 1;
	ok(ok, "each outermost walk spans its 1200 events");
	parser_free(p);

	/* the same stream with a plain begin line: the parser's limit applies */
	begin(2, insn);
	walk(99, 0x7ffff000u);
	st = parse(&p, 2, 0);
	ok(st->beyond_return_limit > 0, "without the flag the return limit applies");
	parser_free(p);

	/* tail calls: a (probe 0) jumps to b (1), which jumps to c (2) */
	begin(3, insn);
	in(3 - 3, 0x1000);
	out(0, 0x1000);		/* a's jmp */
	in(1, 0x1000);
	out(1, 0x1000);		/* b's jmp */
	in(2, 0x1000);
	out(2, 0x1000);		/* c's ret */
	st = parse(&p, 3, 1);
	ok(count_of(0) == 1 && count_of(1) == 1 && count_of(2) == 1 && st->unmatched_entries == 0,
	   "a chain of tail calls: each returns at its jump");
	parser_free(p);

	/* longjmp: main (0) calls a (1), a calls b (2), b calls c (3), c
	 * jumps back into a, which returns */
	begin(4, insn);
	in(0, 0x2000);
	in(1, 0x1f00);
	in(2, 0x1e00);
	in(3, 0x1d00);
	out(1, 0x1f00);
	out(0, 0x2000);
	st = parse(&p, 4, 1);
	ok(count_of(0) == 1 && count_of(1) == 1 && count_of(2) == 0 && count_of(3) == 0,
	   "longjmp: main and a returned");
	ok(st->unmatched_entries == 2 && st->unwound == 2 && st->missed_returns == 0,
	   "b and c unwound, no return missed");
	ok(parser_unfinished(p)[2] == 1 && parser_unfinished(p)[3] == 1, "counted per function");
	ok(recs[0].probe == 1 && recs[0].depth == 1 && recs[0].caller_probe == 0,
	   "a nests in main");
	parser_free(p);

	/* an exception thrown in c, caught in a, which then calls b again */
	begin(4, insn);
	in(0, 0x2000);
	in(1, 0x1f00);
	in(2, 0x1e00);
	in(3, 0x1d00);
	in(2, 0x1e00);		/* the catch block calls b: same sp */
	out(2, 0x1e00);
	out(1, 0x1f00);
	out(0, 0x2000);
	st = parse(&p, 4, 1);
	ok(count_of(2) == 1 && st->unmatched_entries == 2 && st->unwound == 2 &&
	   st->missed_returns == 0 && parser_unfinished(p)[2] == 1,
	   "exception: the unwound b and c counted, the new b paired");
	parser_free(p);

	/* uretprobes 100 deep: the kernel installs the outer 64 only */
	begin(2, urets);
	for (i = 0; i < 100; i++)
		in(0, 0x100000 - 16 * (uint32_t)i);
	for (i = 63; i >= 0; i--)
		uret(0, 0x100000 - 16 * (uint32_t)i);
	st = parse(&p, 2, 1);
	ok(count_of(0) == 64 && st->unmatched_entries == 36 && st->beyond_return_limit == 36 &&
	   st->missed_returns == 36, "uretprobes: 64 paired, 36 past the limit");
	parser_free(p);

	/* a function seen by its uretprobe (1) tail-calls one seen by its
	 * return instructions (2) through a register: the callee's entry at
	 * the same sp is no unwinding, and both return */
	begin(3, mixed);
	in(0, 0x2000);
	in(1, 0x1f00);
	in(2, 0x1f00);
	out(2, 0x1f00);
	uret(1, 0x1f00);
	out(0, 0x2000);
	st = parse(&p, 3, 1);
	ok(count_of(0) == 1 && count_of(1) == 1 && count_of(2) == 1 && st->unmatched_entries == 0 &&
	   st->unwound == 0 && st->unmatched_exits == 0,
	   "a tail call out of a uretprobe's function: all three timed");
	ok(recs[0].probe == 2 && recs[0].depth == 2 && recs[1].probe == 1 && recs[1].depth == 1,
	   "the callee nests in the caller that jumped to it");
	parser_free(p);

	/* chained uretprobes: a (0) jumps to b (1), both fire at b's return */
	begin(2, urets);
	in(0, 0x1000);
	in(1, 0x1000);
	uret(1, 0x1000);
	uret(0, 0x1000);
	st = parse(&p, 2, 1);
	ok(count_of(0) == 1 && count_of(1) == 1 && st->unmatched_entries == 0 &&
	   st->unmatched_exits == 0, "chained uretprobes: each returns with its own");
	parser_free(p);

	/* past the kernel's 64: the 65th uretprobe's function tail-calls one
	 * with return instructions, whose return is its return too */
	begin(3, mixed);
	for (i = 0; i < 64; i++)
		in(1, 0x100000 - 16 * (uint32_t)i);
	in(1, 0x1000);
	in(2, 0x1000);
	out(2, 0x1000);
	for (i = 63; i >= 0; i--)
		uret(1, 0x100000 - 16 * (uint32_t)i);
	st = parse(&p, 3, 1);
	ok(count_of(1) == 65 && count_of(2) == 1 && st->unmatched_entries == 0 &&
	   st->beyond_return_limit == 0, "an uninstalled uretprobe's tail call returns with it");
	parser_free(p);

	/* a longjmp past a uretprobe's function (1), then a call at its sp:
	 * kept under it until main returns, then counted unwound */
	begin(3, mixed);
	in(0, 0x2000);
	in(1, 0x1f00);
	in(2, 0x1f00);
	out(2, 0x1f00);
	out(0, 0x2000);
	st = parse(&p, 3, 1);
	ok(count_of(0) == 1 && count_of(2) == 1 && count_of(1) == 0 && st->unwound == 1 &&
	   parser_unfinished(p)[1] == 1, "a uretprobe's frame left by a longjmp: unwound");
	parser_free(p);

	/* a return whose entry came before the trace: passed on, unstarted */
	begin(2, insn);
	in(1, 0x500);
	out(1, 0x500);
	out(0, 0x600);
	st = parse(&p, 2, 1);
	ok(count_of(1) == 1 && st->unmatched_exits == 1 && parser_unstarted(p)[0] == 1,
	   "a return without its entry is counted as such");
	parser_free(p);

	strbuf_release(&raw);
	return tap_done();
}
