/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Per-function control-flow graphs of x86-64 machine code: basic blocks,
 * edges, the calls each block makes, natural loops from back edges
 * (dominators) and their nesting depth, and a static complexity class.
 * Capstone is used only inside cfg.c; nothing of it leaks through here.
 *
 * The loop analysis (cfg_analyse_loops) works on blocks and successor lists
 * alone, so it can be used and tested without machine code.  */
#ifndef PERUN_CFG_H
#define PERUN_CFG_H

#include <stddef.h>
#include <stdint.h>

/* Block flags.  */
enum {
	CFG_B_RET = 1,		/* ends in a return (or hlt/ud2/int3) */
	CFG_B_INDIRECT = 2,	/* ends in an indirect jump (switch table, computed goto) */
	CFG_B_DISPATCH = 4,	/* the virtual block an indirect jump goes through */
	CFG_B_HEADER = 8,	/* a natural loop's header */
	CFG_B_EXIT = 16,	/* jumps out of the function (tail call, shared code) */
	CFG_B_UNREACHED = 32,	/* no path from the entry */
};

struct cfg_block {
	uint64_t addr;		/* first instruction; 0 for the dispatch block */
	uint32_t size;		/* bytes */
	uint32_t ninsns;
	uint32_t succ;		/* first successor in cfg.succ */
	uint32_t nsucc;
	uint32_t ncalls;	/* call instructions in the block */
	uint8_t loop_depth;	/* how many natural loops hold the block */
	uint8_t flags;
};

/* Kinds of calls.  */
enum {
	CFG_CALL_DIRECT,	/* call imm */
	CFG_CALL_SLOT,		/* call [rip+X]: through a GOT slot (-fno-plt) */
	CFG_CALL_INDIRECT,	/* call reg / call [reg...]: a function pointer */
	CFG_CALL_TAIL,		/* jmp imm out of the function */
	CFG_CALL_TAIL_SLOT,	/* jmp [rip+X] */
};

struct cfg_call {
	uint64_t site;		/* address of the instruction */
	uint64_t target;	/* direct target, or the slot address of a *_SLOT kind */
	uint32_t block;
	uint8_t kind;
	uint8_t loop_depth;
	uint8_t size;		/* of the instruction: site + size is the return address */
};

/* Static complexity classes by loop nesting (the thesis' Static Baseline
 * classes); an upper-bound heuristic, not a proof.  */
enum cfg_complexity {
	CFG_CONSTANT,
	CFG_LINEAR,
	CFG_QUADRATIC,
	CFG_CUBIC,
	CFG_QUARTIC,		/* and above */
};

struct cfg {
	uint64_t addr, size;
	struct cfg_block *blocks;	/* by address, the dispatch block last */
	uint32_t nblocks;
	uint32_t *succ;			/* block indices */
	uint32_t nsucc;
	struct cfg_call *calls;		/* by address */
	uint32_t ncalls;
	uint32_t ninsns;
	uint32_t nloops;		/* natural loops (one per header) */
	uint32_t calls_in_loops;	/* call instructions inside some loop */
	uint32_t indirect_jumps;
	uint32_t bad_bytes;		/* bytes that did not decode */
	uint8_t loop_depth;		/* deepest loop nesting */
};

/* One instruction, for display.  */
struct cfg_insn {
	uint64_t addr;
	uint16_t size;
	char mnemonic[32];
	char operands[160];
};

struct cfg_disasm;

/* A disassembler for x86-64; -1 (reported) when capstone cannot open one.  */
int cfg_disasm_new(struct cfg_disasm **out);
void cfg_disasm_free(struct cfg_disasm *d);

/* Builds the CFG of the function at addr whose len bytes are code, and
 * analyses its loops.  0, or -1 (reported).  */
int cfg_build(struct cfg_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
	      struct cfg *out);
void cfg_release(struct cfg *c);

/* An instruction by which control may leave a function.  */
enum cfg_exit_kind {
	CFG_EXIT_RET,		/* ret, ret imm16 */
	CFG_EXIT_JMP,		/* jmp imm to outside the function: a tail call, or a
				 * jump into code of its kept elsewhere (.cold) */
	CFG_EXIT_UNKNOWN,	/* jmp through a register or a slot, other than a
				 * switch table's notrack jmp, or a jcc out of
				 * the function (its probe fires taken or not) */
};

struct cfg_exit {
	uint64_t addr;		/* of the instruction */
	uint64_t target;	/* CFG_EXIT_JMP: where it goes */
	uint8_t kind;
};

/* The exits of code, a function of len bytes at addr, by a linear sweep, in
 * address order: *out (caller frees) and their number; -1 when some byte
 * does not decode (data among the code: no sweep can be trusted).  */
long cfg_exits(struct cfg_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
	       struct cfg_exit **out);

/* Calls fn for every instruction of code (stops when fn returns non-zero).
 * Returns the number of instructions.  */
size_t cfg_each_insn(struct cfg_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
		     int (*fn)(const struct cfg_insn *insn, void *arg), void *arg);

/* Given c->blocks (with succ, nsucc, ncalls) and c->succ, computes
 * dominators from block 0, natural loops of the back edges, each block's
 * loop depth (how many natural loops, by header, hold it, plus one when it
 * lies on an irreducible cycle: a retreating edge whose target does not
 * dominate its source), CFG_B_HEADER/CFG_B_UNREACHED, and the nloops,
 * loop_depth and calls_in_loops summaries.  Call loop_depth is filled when c->calls is
 * set.  */
void cfg_analyse_loops(struct cfg *c);

/* The complexity class for a loop nesting depth.  */
enum cfg_complexity cfg_complexity_of_depth(unsigned depth);
/* "constant", "linear", "quadratic", "cubic", "quartic".  */
const char *cfg_complexity_name(enum cfg_complexity c);
/* The class for a name, or -1.  */
int cfg_complexity_parse(const char *name);

#endif
