/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The probe plan: what is probed, where, and how often.  Ids index the
 * probes; the raw stream carries ids only, names live here.  */
#ifndef PERUN_PLAN_H
#define PERUN_PLAN_H

#include <stddef.h>
#include <stdint.h>

enum probe_kind {
	PROBE_FUNC,		/* function entry + return */
	PROBE_USDT_PAIR,	/* two USDT marks: begin and end */
	PROBE_USDT_POINT,	/* one USDT mark, no duration */
	PROBE_LINE,		/* a source line (-d file:line), no duration */
};

struct probe {
	int id;
	enum probe_kind kind;
	char *binary;		/* canonical path of the binary or library */
	char *name;		/* display name (function, provider:mark, file:line) */
	char *mark;		/* USDT begin mark, or NULL */
	char *mark_end;		/* USDT end mark, or NULL */
	char *file;		/* decl file or -d file */
	int line;
	uint64_t addr;		/* function address in binary (PROBE_FUNC) */
	uint64_t foff;		/* file offset of addr (as uprobe_events shows it) */
	uint64_t size;		/* function size, or 0 */
	char *sym;		/* symbol name, for functions stap must find without DWARF */
	unsigned sampling;	/* record one call in `sampling` (>= 1) */
	unsigned flags;		/* PROBE_F_* */
};

/* No DWARF subprogram at addr: stap addresses the function by sym.  */
#define PROBE_F_SYMBOL 1u
/* An entry probe only (counts, no durations): no uretprobe, which would
 * break unwinding (C++ exceptions, longjmp) through the function.  */
#define PROBE_F_ENTRY_ONLY 2u
/* Named by the user (-f): zero calls is an error, not a quiet result.  */
#define PROBE_F_NAMED 4u
/* One of the implementations of a named IFUNC, planned next to the others:
 * zero calls is an error only when all of them have none.  */
#define PROBE_F_ALTERNATIVE 8u
/* What the entry probe's breakpoint costs, known from the instruction it
 * sits on (a function's first instruction): x86 uprobes emulate it, or step
 * it out of line (a trap more per hit).  Neither flag: not known (a mark, a
 * line, a probe placed after a prologue).  Whoever places the probe sets
 * them; collect subtracts the calibrated cost of that kind.  */
#define PROBE_F_ENTRY_EMULATED 16u
#define PROBE_F_ENTRY_STEPPED 32u
#define PROBE_F_ENTRY_MASK (PROBE_F_ENTRY_EMULATED | PROBE_F_ENTRY_STEPPED)
/* perun's loader may time the function's returns with a uretprobe, which
 * costs a fraction of probes on its return instructions (each of those is
 * stepped out of line): no call of it can be 64 traced frames deep and
 * nothing unwinds through it (collect/returns.c decides).  Without it the
 * loader probes the return instructions, which time returns at any depth.  */
#define PROBE_F_RET_UPROBE 64u

/* What the runtime attached, per probe.  */
struct probe_attach {
	unsigned entry : 1;
	unsigned ret : 1;
	unsigned refused : 1;	/* registered on an instruction x86 uprobes never fire on */
	unsigned ret_insn : 1;	/* its return: probes on its return instructions */
};

/* True when the instruction at file offset off of path carries a prefix that
 * x86 uprobes refuse to single-step (LOCK, or an ES/CS/SS/DS override): the
 * kernel accepts such a probe and then never fires it.  */
int plan_insn_refused(const char *path, uint64_t off);

struct plan {
	struct probe *probes;
	size_t n, alloc;
};

void plan_init(struct plan *p);
void plan_release(struct plan *p);
struct probe *plan_add(struct plan *p, enum probe_kind kind, const char *binary,
		       const char *name);
/* Number of kernel probe points (a function is two: entry and return).  */
size_t plan_probe_points(const struct plan *p);
/* True when the probe records one event per hit (no duration).  */
int probe_is_point(const struct probe *pr);
/* Probe points of one probe: 1 or 2.  */
unsigned probe_points(const struct probe *pr);

/* Marks in att (p->n entries, zeroed by the caller) what a runtime
 * attached, from the text of tracefs uprobe_events: the lines of the events
 * stapbpf pid registered ("p:uprobes/stapprobe_PID_N PATH:0xOFFSET", r: for
 * returns; pid -1: any stapbpf), matched by binary and file offset.  Returns the number of
 * probe points attached.  */
size_t plan_match_uprobe_events(const struct plan *p, const char *text, long pid,
				struct probe_attach *att);
/* The same from `stap -p2` output (the kernel runtime registers no
 * uprobe_events lines): each resolved point, process("PATH").function(...)
 * with .call or .return and a comment "pc=.dynamic+0xADDR" (an address)
 * or "pc=.absolute+0xOFF" (executables: a file offset), matched by binary
 * and address.  Marks and statements count for the probe of that kind.  */
size_t plan_match_resolved(const struct plan *p, const char *text, struct probe_attach *att);
/* Appends one line per probe that is not fully attached ("NAME (BINARY):
 * WHY"); returns how many probes failed.  own_loader: perun-uprobes
 * attached them, not SystemTap.  */
size_t plan_attach_failures(const struct plan *p, const struct probe_attach *att,
			    int own_loader, char ***lines);
const char *probe_kind_name(enum probe_kind k);
/* "emulated", "stepped" or "unknown": the entry flags of pr.  */
const char *probe_entry_name(const struct probe *pr);
/* One line per probe, tab separated; read back by plan_load.  */
char *plan_serialize(const struct plan *p);
int plan_parse(struct plan *p, const char *text);
int plan_save(const struct plan *p, const char *path);
int plan_load(struct plan *p, const char *path);

/* Per probe of the plan: 1 when its entry flags say stepped, else 0 (also
 * when not known: the cheaper cost is the safer one to subtract); caller
 * frees.  */
unsigned char *plan_stepped(const struct plan *plan);

#endif
