/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target/cfg: basic blocks, edges, calls and loops of known machine code,
 * and the loop analysis on hand-made graphs.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "binary/cfg.h"

/* At 0x1000 (as(1), Intel syntax):
 *   0x1000 B0 xor eax, eax
 *   0x1002 B1 outer: xor ecx, ecx
 *   0x1004 B2 inner: call 0x2000; inc ecx; cmp ecx, 10; jne inner
 *   0x1010 B3 call [rip + 0x100]; inc eax; cmp eax, 10; jne outer
 *   0x101d B4 call rdx; test eax, eax; je tail
 *   0x1023 B5 ret
 *   0x1024 B6 tail: jmp 0x3000  */
static const unsigned char code[] = {
	0x31, 0xc0, 0x31, 0xc9, 0xe8, 0xf7, 0x0f, 0x00, 0x00, 0xff, 0xc1, 0x83, 0xf9, 0x0a,
	0x75, 0xf4, 0xff, 0x15, 0x00, 0x01, 0x00, 0x00, 0xff, 0xc0, 0x83, 0xf8, 0x0a, 0x75,
	0xe5, 0xff, 0xd2, 0x85, 0xc0, 0x74, 0x01, 0xc3, 0xe9, 0xd7, 0x1f, 0x00, 0x00,
};

static int has_succ(const struct cfg *c, uint32_t b, uint32_t to)
{
	uint32_t k;

	for (k = 0; k < c->blocks[b].nsucc; k++)
		if (c->succ[c->blocks[b].succ + k] == to)
			return 1;
	return 0;
}

static void test_machine_code(void)
{
	struct cfg_disasm *d;
	struct cfg c;
	static const uint64_t addrs[] = { 0x1000, 0x1002, 0x1004, 0x1010, 0x101d, 0x1023, 0x1024 };
	static const uint8_t depth[] = { 0, 1, 2, 1, 0, 0, 0 };
	uint32_t i;

	ok(cfg_disasm_new(&d) == 0, "capstone opens");
	ok(cfg_build(d, code, sizeof(code), 0x1000, &c) == 0, "cfg_build");
	is_int(c.ninsns, 15, "15 instructions");
	is_int(c.nblocks, 7, "7 blocks");
	for (i = 0; i < 7 && i < c.nblocks; i++) {
		is_int(c.blocks[i].addr, addrs[i], "block %u starts at %llx", i,
		       (unsigned long long)addrs[i]);
		is_int(c.blocks[i].loop_depth, depth[i], "block %u loop depth %u", i, depth[i]);
	}
	is_int(c.nsucc, 8, "8 edges");
	ok(has_succ(&c, 0, 1) && has_succ(&c, 1, 2) && has_succ(&c, 2, 2) && has_succ(&c, 2, 3) &&
		   has_succ(&c, 3, 1) && has_succ(&c, 3, 4) && has_succ(&c, 4, 5) &&
		   has_succ(&c, 4, 6),
	   "the edges: fall-through, taken branches, the two back edges");
	ok(c.blocks[5].nsucc == 0 && (c.blocks[5].flags & CFG_B_RET), "ret ends the function");
	ok(c.blocks[6].nsucc == 0 && (c.blocks[6].flags & CFG_B_EXIT), "the tail jump leaves it");
	ok((c.blocks[1].flags & CFG_B_HEADER) && (c.blocks[2].flags & CFG_B_HEADER) &&
		   !(c.blocks[3].flags & CFG_B_HEADER),
	   "outer and inner loop headers");
	is_int(c.nloops, 2, "two natural loops");
	is_int(c.loop_depth, 2, "nested two deep");
	is_int(c.calls_in_loops, 2, "two calls inside loops");
	is_int(c.ncalls, 4, "three calls and a tail call");
	if (c.ncalls == 4) {
		ok(c.calls[0].kind == CFG_CALL_DIRECT && c.calls[0].target == 0x2000 &&
			   c.calls[0].loop_depth == 2,
		   "call 0x2000: direct, two loops deep");
		ok(c.calls[1].kind == CFG_CALL_SLOT && c.calls[1].target == 0x1116 &&
			   c.calls[1].loop_depth == 1,
		   "call [rip + 0x100]: through the slot at 0x1116, one loop deep");
		ok(c.calls[2].kind == CFG_CALL_INDIRECT && c.calls[2].loop_depth == 0,
		   "call rdx: indirect");
		ok(c.calls[3].kind == CFG_CALL_TAIL && c.calls[3].target == 0x3000,
		   "jmp 0x3000: a tail call");
	}
	is_int(cfg_complexity_of_depth(c.loop_depth), CFG_QUADRATIC, "quadratic");
	cfg_release(&c);

	/* bytes that do not decode end a block without a fall-through */
	{
		static const unsigned char bad[] = { 0x90, 0x06, 0xc3 };	/* nop; (bad); ret */
		ok(cfg_build(d, bad, sizeof(bad), 0x10, &c) == 0, "cfg_build on a bad byte");
		is_int(c.bad_bytes, 1, "one bad byte");
		is_int(c.nblocks, 2, "two blocks around it");
		is_int(c.nsucc, 0, "no edge across it");
		cfg_release(&c);
	}
	cfg_disasm_free(d);
}

/* A graph given as edge pairs; block 0 is the entry.  */
static void graph(struct cfg *c, uint32_t n, const uint32_t (*e)[2], uint32_t ne)
{
	uint32_t i, b, k = 0;

	memset(c, 0, sizeof(*c));
	c->nblocks = n;
	c->blocks = calloc(n, sizeof(*c->blocks));
	c->succ = calloc(ne + 1, sizeof(*c->succ));
	for (b = 0; b < n; b++) {
		c->blocks[b].addr = 0x100 + b;
		c->blocks[b].succ = k;
		for (i = 0; i < ne; i++)
			if (e[i][0] == b)
				c->succ[k++] = e[i][1];
		c->blocks[b].nsucc = k - c->blocks[b].succ;
		c->blocks[b].ncalls = 1;
	}
	c->nsucc = k;
}

static void test_graphs(void)
{
	struct cfg c;

	/* three nested loops, one call per block: cubic */
	{
		static const uint32_t e[][2] = { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 3 }, { 3, 4 },
						 { 4, 2 }, { 4, 5 }, { 5, 1 }, { 5, 6 } };
		graph(&c, 7, e, 9);
		cfg_analyse_loops(&c);
		is_int(c.nloops, 3, "three loops");
		is_int(c.loop_depth, 3, "three deep");
		ok(c.blocks[3].loop_depth == 3 && c.blocks[2].loop_depth == 2 &&
			   c.blocks[4].loop_depth == 2 && c.blocks[5].loop_depth == 1 &&
			   c.blocks[6].loop_depth == 0 && c.blocks[0].loop_depth == 0,
		   "each block's depth");
		is_int(c.calls_in_loops, 5, "calls in loop blocks");
		is_int(cfg_complexity_of_depth(c.loop_depth), CFG_CUBIC, "cubic");
		cfg_release(&c);
	}
	/* two loops one after the other: linear, not quadratic */
	{
		static const uint32_t e[][2] = { { 0, 1 }, { 1, 1 }, { 1, 2 }, { 2, 3 }, { 3, 2 },
						 { 3, 4 } };
		graph(&c, 5, e, 6);
		cfg_analyse_loops(&c);
		is_int(c.nloops, 2, "two sequential loops");
		is_int(c.loop_depth, 1, "one deep");
		cfg_release(&c);
	}
	/* an irreducible cycle (1 <-> 2 entered at both): one loop, entry outside */
	{
		static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 }, { 2, 1 }, { 2, 3 } };
		graph(&c, 4, e, 5);
		cfg_analyse_loops(&c);
		is_int(c.nloops, 1, "the irreducible cycle is a loop");
		ok(c.blocks[1].loop_depth == 1 && c.blocks[2].loop_depth == 1 &&
			   c.blocks[0].loop_depth == 0 && c.blocks[3].loop_depth == 0,
		   "its body is the cycle, not the entry");
		cfg_release(&c);
	}
	/* an unreachable block is flagged and in no loop */
	{
		static const uint32_t e[][2] = { { 0, 1 }, { 2, 2 } };
		graph(&c, 3, e, 2);
		cfg_analyse_loops(&c);
		ok((c.blocks[2].flags & CFG_B_UNREACHED) && c.blocks[2].loop_depth == 0 &&
			   c.nloops == 0,
		   "unreached self loop counts for nothing");
		cfg_release(&c);
	}
}

static void test_names(void)
{
	is_str(cfg_complexity_name(CFG_CONSTANT), "constant", "constant");
	is_str(cfg_complexity_name(CFG_QUARTIC), "quartic", "quartic");
	is_int(cfg_complexity_of_depth(9), CFG_QUARTIC, "deeper nests are quartic");
	is_int(cfg_complexity_parse("linear"), CFG_LINEAR, "parse linear");
	is_int(cfg_complexity_parse("exponential"), -1, "an unknown class");
}

int main(void)
{
	test_machine_code();
	test_graphs();
	test_names();
	return tap_done();
}
