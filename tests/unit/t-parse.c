/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The raw-stream parser on recorded streams with every anomaly.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "parse/parse.h"

#define MAXR 64

static struct call_record recs[MAXR];
static int nrecs;

static int sink(void *ctx, const struct call_record *r)
{
	(void)ctx;
	if (nrecs < MAXR)
		recs[nrecs] = *r;
	nrecs++;
	return 0;
}

static const struct parse_stats *run(struct parser **pp, const char *raw, size_t nprobes,
				     const unsigned char *points, size_t chunk)
{
	struct parser *p = parser_new(nprobes, points, sink, NULL);
	size_t len = strlen(raw), off;

	nrecs = 0;
	memset(recs, 0, sizeof(recs));
	for (off = 0; off < len; off += chunk)
		parser_feed(p, raw + off, len - off < chunk ? len - off : chunk);
	parser_finish(p);
	*pp = p;
	return parser_stats(p);
}

static const struct call_record *find(int probe, uint64_t order)
{
	int i;

	for (i = 0; i < nrecs && i < MAXR; i++)
		if (recs[i].probe == probe && recs[i].call_order == order)
			return &recs[i];
	return NULL;
}

int main(void)
{
	struct parser *p;
	const struct parse_stats *st;
	const struct call_record *r;
	size_t chunk;

	/* main (0) calls f (1) which calls g (2); thread = pid 100 + 0 */
	static const char nested[] = "s 64 0 3e8\nr\n"
				     "0 0 3e8\n2 0 3f2\n4 0 3fc\n5 0 406\n3 0 410\n1 0 41a\nq\n";
	for (chunk = 1; chunk <= sizeof(nested); chunk *= 3) {
		st = run(&p, nested, 3, NULL, chunk);
		is_int(st->calls, 3, "nested: three calls (fed %zu bytes at a time)", chunk);
		parser_free(p);
	}
	st = run(&p, nested, 3, NULL, 4096);
	r = find(0, 0);
	ok(r && r->amount == 50 && r->exclusive == 20 && r->caller_id == -1 && r->depth == 0,
	   "main: inclusive 50, exclusive 20 (minus f's 30), no caller");
	r = find(1, 0);
	ok(r && r->amount == 30 && r->exclusive == 20 && r->caller_probe == 0 && r->depth == 1,
	   "f: inclusive 30, exclusive 20, called by main");
	r = find(2, 0);
	ok(r && r->amount == 10 && r->exclusive == 10 && r->caller_probe == 1 && r->depth == 2,
	   "g: a leaf of 10 ns at depth 2");
	ok(r && r->thread == 100 && r->start == 0x3fc - 0x3e8, "thread is pid + offset, start since s");
	ok(st->saw_begin && st->saw_end && st->target_pid == 100, "begin and end markers seen");
	parser_free(p);

	/* recursion: f calls itself three deep */
	st = run(&p, "s 1 0 0\n2 0 0\n2 0 1\n2 0 2\n3 0 3\n3 0 5\n3 0 9\nq\n", 2, NULL, 4096);
	is_int(st->calls, 3, "recursion: three calls of f");
	r = find(1, 0);
	ok(r && r->amount == 9 && r->exclusive == 5 && r->depth == 0, "outermost f: 9 incl, 5 excl");
	r = find(1, 2);
	ok(r && r->amount == 1 && r->depth == 2, "innermost f: 1 ns at depth 2");
	ok(r && r->nested && r->callees == 0, "innermost f is nested in f, holds no call");
	r = find(1, 1);
	ok(r && r->nested && r->callees == 1 && r->children == 1, "middle f: nested, one call inside");
	r = find(1, 0);
	ok(r && !r->nested && r->callees == 2 && r->children == 1,
	   "outermost f: not nested, two calls inside, one of them direct");
	is_int(st->max_depth, 3, "max depth 3");
	parser_free(p);

	/* longjmp: g's exit never comes, f returns */
	st = run(&p, "s 1 0 0\n2 0 0\n4 0 1\n3 0 9\nq\n", 3, NULL, 4096);
	is_int(st->calls, 1, "longjmp: f is recorded");
	is_int(st->unmatched_entries, 1, "g's missing exit counted as an unmatched entry");
	ok(parser_unfinished(p)[2] == 1 && parser_unfinished(p)[1] == 0,
	   "the unfinished call is g's, per probe");
	parser_free(p);

	/* exit without entry (probes armed mid-call), and a killed target */
	st = run(&p, "s 1 0 0\n3 0 5\n2 0 6\n4 0 7\n", 3, NULL, 4096);
	is_int(st->unmatched_exits, 1, "an exit without entry is counted");
	is_int(st->unmatched_entries, 2, "entries still open at the end are counted");
	ok(parser_unfinished(p)[1] == 1 && parser_unfinished(p)[2] == 1,
	   "the open entries are f's and g's");
	ok(!st->saw_end, "no end marker: the run was cut");
	parser_free(p);

	/* threads interleaved, and events out of order across per-CPU buffers */
	st = run(&p, "s a 0 0\n0 0 1\n0 1 2\n1 1 8\n1 0 9\n0 0 20\n0 2 14\n1 2 18\n1 0 30\nq\n", 1,
		 NULL, 4096);
	is_int(st->calls, 4, "threads: four calls");
	is_int(st->threads, 3, "three threads");
	ok(st->reordered >= 1, "an event older than its predecessor was reordered");
	r = find(0, 2);
	ok(r && r->thread == 12 && r->amount == 4, "thread 12's call kept its own 4 ns");
	parser_free(p);

	/* the same exit printed before its entry (migration between CPUs) */
	st = run(&p, "s 1 0 0\n1 0 50\n0 0 40\nq\n", 1, NULL, 4096);
	ok(st->calls == 1 && st->unmatched_exits == 0, "an exit read before its entry still pairs");
	parser_free(p);

	/* duplicated block */
	st = run(&p, "s 1 0 0\n0 0 1\n1 0 5\n0 0 1\n1 0 5\n0 0 9\n1 0 12\nq\n", 1, NULL, 4096);
	is_int(st->calls, 2, "duplicated block: the copy is not a call");
	is_int(st->duplicates, 2, "both duplicated events counted");
	parser_free(p);

	/* truncated last line, malformed lines, unknown probe */
	st = run(&p, "s 1 0 0\n0 0 1\nzz\n1 0 2 3 4\n\001\n99 0 3\n1 0 5\n0 0 7\n1 0", 1, NULL, 4096);
	is_int(st->calls, 1, "garbage: the good call survives");
	is_int(st->malformed_lines, 3, "three malformed lines");
	is_int(st->truncated_lines, 1, "a truncated last line");
	is_int(st->unknown_probes, 1, "an id outside the plan");
	is_int(st->unmatched_entries, 1, "the entry whose exit was cut off");
	parser_free(p);

	/* an over-long line is skipped whole */
	{
		char buf[1024];
		memset(buf, '7', sizeof(buf));
		memcpy(buf, "s 1 0 0\n", 8);
		memcpy(buf + sizeof(buf) - 20, "\n0 0 1\n1 0 2\nq\n", 16);
		buf[sizeof(buf) - 4] = '\0';
		st = run(&p, buf, 1, NULL, 100);
		ok(st->calls == 1 && st->malformed_lines == 1, "a 1000-byte line is one malformed line");
		parser_free(p);
	}

	/* the bpf runtime prints only 32 bits of the clock: unwrap it */
	st = run(&p, "s 1 1 fffffff0\n0 0 fffffff8\nk 10\n1 0 20\nq\n", 1, NULL, 4096);
	r = find(0, 0);
	ok(r && r->amount == 0x28 && r->start == 8, "a call across the 32-bit wrap lasts 40 ns");
	parser_free(p);
	st = run(&p, "s 1 0 0\n0 0 10\nk 7fffffff\nk fffffff0\nk 10\nk 80000000\n1 0 80000010\nq\n",
		 1, NULL, 4096);
	r = find(0, 0);
	ok(r && r->amount == 0x180000000ull, "ticks carry the clock over 6 s without events");
	parser_free(p);

	/* a point probe (USDT mark) has no duration and a caller */
	{
		unsigned char points[2] = { 0, 1 };
		st = run(&p, "s 1 0 0\n0 0 1\n2 0 3\n1 0 5\nq\n", 2, points, 4096);
		r = find(1, 0);
		ok(r && r->point && r->amount == 0 && r->caller_probe == 0, "a point inside a call");
		is_int(st->points, 1, "one point");
		parser_free(p);
	}

	/* kernel runtime: full 64-bit timestamps and negative tid offsets */
	st = run(&p, "s 64 0 0\n0 ffffffffffffffff 123456789a\n1 ffffffffffffffff 123456789f\nq\n", 1,
		 NULL, 4096);
	r = find(0, 0);
	ok(r && r->thread == 99 && r->amount == 5, "64-bit clock and a tid below the pid");
	parser_free(p);

	/* the recorder's dump: map order, two threads, per-thread sequence
	 * numbers; main (0) calls f (1) in thread +0, f alone in thread +1 */
	{
		static const char dump[] = "s 64 0 3e8\nr\nt 0 4\nt 1 2\n"
					   "v 0 2 30000 1e\nv 1 1 30000 19\nv 0 0 0 0\n"
					   "v 0 3 10000 32\nv 1 0 20000 14\nv 0 1 20000 a\n"
					   "v 0 1 20000 a\nq\n";
		const uint64_t *lost;
		st = run(&p, dump, 2, NULL, 4096);
		is_int(st->calls, 3, "recorder: three calls from an unordered dump");
		r = find(0, 0);
		ok(r && r->amount == 50 && r->exclusive == 30 && r->thread == 100,
		   "recorder: main inclusive 50, exclusive 30");
		r = find(1, 0);
		ok(r && r->amount == 20 && r->caller_probe == 0 && r->start == 10,
		   "recorder: f called by main at +10 ns");
		r = find(1, 1);
		ok(r && r->amount == 5 && r->thread == 101 && r->depth == 0,
		   "recorder: f of the second thread, 5 ns");
		is_int(st->duplicates, 1, "recorder: a record dumped twice counts once");
		is_int(st->happened, 6, "recorder: t lines sum what the probes saw");
		is_int(st->missing_records + st->lost_events, 0, "recorder: nothing lost");
		parser_free(p);

		/* a full map: 3 entries of f lost in thread 0; one record missing */
		st = run(&p, "s 1 0 0\nt 0 6\nl 0 2 2\nl 0 3 1\nv 0 0 0 1\nd 0 1 10000 2\nq\n",
			 2, NULL, 4096);
		lost = parser_lost(p);
		ok(st->recorder && st->lost_events == 3 && lost[1] == 3 && lost[0] == 0,
		   "recorder: lost events counted per probe");
		is_int(st->missing_records, 1, "recorder: a record neither dumped nor counted lost");
		is_int(st->calls, 1, "recorder: the recorded call survives");
		parser_free(p);

		/* garbage in the dump is counted, not trusted */
		st = run(&p, "s 1 0 0\nv 0 0\nv 0 0 0 1 2\nv 100000000 0 0 1\nl 0\nt zz 1\nq\n", 1,
			 NULL, 4096);
		is_int(st->malformed_lines, 5, "recorder: malformed v/l/t lines are counted");
		parser_free(p);
	}

	/* print transport: probe 6's codes are c (entry) and d (exit), hex
	 * digits, never the recorder's v/l/t lines */
	st = run(&p, "s 64 0 0\nc 0 10\nd 0 1a\nc 1 20\nd 1 23\nq\n", 8, NULL, 4096);
	r = find(6, 0);
	ok(st->calls == 2 && r && r->amount == 10 && st->malformed_lines == 0 && !st->recorder,
	   "probe 6's events (codes c and d) are events, not dump lines");
	parser_free(p);

	/* the kernel runtime's print transport with its counts (w lines):
	 * main (0) printed 2 events, f (1) 6 and g (2) 2; the relay dropped
	 * f's second call (its entry and exit) and g's exit; main carried all */
	{
		static const char relay[] = "s 64 0 0\nr\n0 0 10\n2 0 11\n3 0 12\n"
					    "4 0 20\n2 0 30\n3 0 31\nk 40\n1 0 50\n"
					    "w 0 2\nw 1 6\nw 2 2\nq\n";
		const uint64_t *lost;
		for (chunk = 1; chunk <= sizeof(relay); chunk *= 5) {
			st = run(&p, relay, 3, NULL, chunk);
			lost = parser_lost(p);
			ok(st->sent_counts && lost[0] == 0 && lost[1] == 2 && lost[2] == 1 &&
				   st->transport_lost == 3 && st->events == 7 && st->malformed_lines == 0,
			   "print: printed minus carried, per probe (w lines, chunk %zu)", chunk);
			ok(!st->recorder && st->lost_events == 0,
			   "print: the relay's losses are not the recorder's");
			parser_free(p);
		}
		/* no w lines (the bpf runtime, an older module): nothing is
		 * inferred; a probe that carried more than it printed lost none;
		 * a w line for a probe outside the plan is counted as unknown */
		st = run(&p, "s 64 0 0\n0 0 10\n1 0 20\nq\n", 1, NULL, 4096);
		ok(!st->sent_counts && st->transport_lost == 0 && parser_lost(p)[0] == 0,
		   "print: without w lines nothing is lost");
		parser_free(p);
		st = run(&p, "s 64 0 0\n0 0 10\n1 0 20\nw 0 1\nw 5 3\nw 0\nq\n", 1, NULL, 4096);
		ok(st->transport_lost == 0 && parser_lost(p)[0] == 0 && st->unknown_probes == 3 &&
			   st->malformed_lines == 1,
		   "print: more carried than printed is no loss; odd w lines are counted");
		parser_free(p);
	}

	/* main (0) and f (1) recursing 70 deep: the kernel gives return probes
	 * to the first 64 pending calls only (main and 63 f), so the 7 deepest
	 * f never exit; the first exit is the 63rd f's */
	{
		struct strbuf_lite { char b[4096]; size_t n; } sb = { { 0 }, 0 };
		unsigned d, ts = 0x100;
		int pass;
		sb.n += (size_t)snprintf(sb.b + sb.n, sizeof(sb.b) - sb.n, "s 64 0 100\n0 0 %x\n", ts);
		for (d = 1; d <= 70; d++)
			sb.n += (size_t)snprintf(sb.b + sb.n, sizeof(sb.b) - sb.n, "2 0 %x\n", ts += 10);
		for (d = 63; d >= 1; d--)
			sb.n += (size_t)snprintf(sb.b + sb.n, sizeof(sb.b) - sb.n, "3 0 %x\n", ts += 10);
		sb.n += (size_t)snprintf(sb.b + sb.n, sizeof(sb.b) - sb.n, "1 0 %x\n", ts += 10);
		for (pass = 0; pass < 2; pass++) {
			struct parser *q = parser_new(2, NULL, sink, NULL);
			nrecs = 0;
			memset(recs, 0, sizeof(recs));
			if (pass)
				parser_set_return_limit(q, PARSE_URETPROBE_DEPTH);
			parser_feed(q, sb.b, sb.n);
			parser_finish(q);
			st = parser_stats(q);
			r = find(1, 62);
			if (!pass) {
				ok(r && r->amount == 150,
				   "without the limit the 63rd f takes the 8th exit: 150 ns, not 80");
			} else {
				ok(r && r->depth == 63 && r->amount == 80 && r->caller_probe == 1,
				   "with it the 63rd f pairs with its own exit: 8 events later");
				is_int((long)st->calls, 64, "64 calls: main and 63 f");
				is_int((long)st->unmatched_entries, 7, "7 calls without a return");
				is_int((long)st->beyond_return_limit, 7, "all of them past the limit");
				is_int((long)parser_unfinished(q)[1], 7, "unfinished: f 7");
				r = find(0, 0);
				ok(r && r->amount == 10 * (70 + 63 + 1) && r->depth == 0,
				   "main spans the whole run");
			}
			parser_free(q);
		}
	}

	/* memory does not grow with the number of events */
	{
		struct parser *q = parser_new(1, NULL, NULL, NULL);
		char line[64];
		long i;
		parser_feed(q, "s 1 0 0\n", 8);
		for (i = 0; i < 2000000; i++) {
			int n = snprintf(line, sizeof(line), "%x 0 %lx\n", (int)(i & 1), i * 10);
			parser_feed(q, line, (size_t)n);
		}
		parser_finish(q);
		is_int(parser_stats(q)->calls, 1000000, "a million calls through the parser");
		parser_free(q);
	}
	return tap_done();
}
