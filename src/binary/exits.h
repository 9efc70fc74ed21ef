/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where a function returns: its return instructions, for probes that see
 * each return at any call depth (a uretprobe replaces the return address,
 * and the kernel keeps at most 64 of them pending per thread).  */
#ifndef PERUN_TARGET_EXITS_H
#define PERUN_TARGET_EXITS_H

#include <stddef.h>
#include <stdint.h>

#include "binary/target.h"

struct cfg_disasm;

/* The file offsets (in *offs, caller frees) of the instructions by which
 * function f of t returns to its caller: ret, ret imm16, and a direct jmp
 * out of it to another function's start (a tail call).  At each, the stack
 * pointer is the one its entry saw.  Returns how many; 0 when they cannot
 * all be known (a jump through a register or a slot that may leave it, a
 * jump out to code that is no function's start, such as its .cold part, a
 * return at its own first instruction (an empty function),
 * bytes that do not decode, no size, a Go program): every return is then
 * seen only by a uretprobe (so are those of a function with a conditional
 * jump out: a probe on it fires taken or not).  -1 when the code cannot be
 * read (reported).
 * fd is t->path opened for reading; d a disassembler (binary/cfg.h).  */
long target_func_exits(const struct target *t, const struct func *f, int fd,
		       struct cfg_disasm *d, uint64_t **offs);

#endif
