/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Generates the SystemTap script for a probe plan from templates/ and the
 * perun tapset.  Function names never enter the script (probes are placed
 * by address); paths and marks are escaped or rejected.  */
#ifndef PERUN_SCRIPT_H
#define PERUN_SCRIPT_H

#include <stdint.h>

#include "plan/plan.h"
#include "util/strbuf.h"

/* Appends s as the body of a stap string literal; -1 (with a message) when
 * s holds a character that cannot be made safe there.  */
int script_quote(struct strbuf *out, const char *s, const char *what);
/* True when s is a valid USDT mark name ([A-Za-z0-9_]+).  */
int script_valid_mark(const char *s);
/* How a generated script carries what its probes see.  */
enum script_mode {
	SCRIPT_PRINT,		/* one printf per event (header.stp.in) */
	SCRIPT_RECORD,		/* events kept in a map, written by the end probe
				 * (header_rec.stp.in): nothing rides a perf ring */
	SCRIPT_AGGREGATE,	/* per-function summaries only (*_agg.stp.in) */
};

/* Most codes (probe id * 2 + kind) the recorder's 16-bit field holds.  */
#define SCRIPT_RECORD_MAX_CODES 65536

int script_generate_mode(const struct plan *p, const char *templates_dir, enum script_mode mode,
			 size_t buffer, struct strbuf *out);
/* Run-optimize code of the optimization methods (src/optimize/) in the script.  */
struct script_opt {
	unsigned timed_period_ms;	/* timed sampling: flip gather/dormant every N ms, or 0 */
	double timed_freq;		/* its timed-sample-freq, for the script's comment */
	uint64_t probing_threshold;	/* dynamic probing: disarm a probe after N calls, or 0 */
	unsigned probing_reattach_ms;	/* reattach: first re-arm after N ms, doubling; 0: never */
	/* how dynamic probing (and, on the kernel runtime, the budget) disarms:
	 * 0 the gate in the handler's body;
	 * PROBING_COND_KERNEL probe POINT if (live), which the kernel runtime
	 * unregisters; PROBING_COND_INLINE the same condition, which stapbpf
	 * runs first in the handler (a cheaper gate, the uprobe stays) */
	int probing_cond;
	/* one module, many selections: every probe records only when
	 * __perun_sel[id] is set, a map of select_slots entries filled from
	 * outside at start (0: no selection gate) */
	size_t select_slots;
	int select_procfs;	/* the kernel runtime: ids come through procfs */
	/* SCRIPT_PRINT on the kernel runtime: each probe counts the events it
	 * printed (per-CPU, no lock) and the end probe writes "w ID N" lines,
	 * so what the relay dropped is known per function */
	int count_sent;
	/* --max-overhead: a recorded call costs budget_call_ns; every
	 * budget_window_ms the hottest probes are disarmed while the window's
	 * calls cost more than budget_allowed_ns (the part of the window that is
	 * a budget_pct slowdown; 0: no budget) */
	uint64_t budget_allowed_ns, budget_call_ns;
	/* per probe id (budget_nstepped of them, or NULL): its first
	 * instruction is stepped out of line, which costs budget_stepped_ns more */
	const unsigned char *budget_stepped;
	size_t budget_nstepped;
	uint64_t budget_stepped_ns;
	/* perun's loader: what a return probed on its instructions costs more
	 * than a uretprobe (collect/returns.c says which are) */
	uint64_t budget_insn_ns;
	unsigned budget_window_ms;
	double budget_pct;
	int budget_calibrated;
	/* --follow on the kernel runtime: the script keeps the target's process
	 * tree (every process it starts, added at the fork before the child
	 * runs) and records events of the whole tree, with the loader's p and j
	 * lines; not with SCRIPT_AGGREGATE */
	int follow;
};
/* The sizes of --follow's maps in the script (the recorder's map stays off
 * them, so that it is found by its size alone).  */
#define SCRIPT_FOLLOW_TREE_SLOTS 4093
#define SCRIPT_FOLLOW_TIDS_SLOTS 8189
#define PROBING_COND_KERNEL 1
#define PROBING_COND_INLINE 2
/* script_generate_mode with the methods of so (NULL: none); a gated probe
 * records a call only when every method and its sampling let it.  */
int script_generate_opt(const struct plan *p, const char *templates_dir, enum script_mode mode,
			size_t buffer, const struct script_opt *so, struct strbuf *out);
/* SCRIPT_AGGREGATE with aggregate, else SCRIPT_PRINT.  */
int script_generate(const struct plan *p, const char *templates_dir, int aggregate,
		    struct strbuf *out);

#endif
