/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The run-time methods of a collect on perun's loader: per-function
 * sampling, dynamic probing with reattach, timed sampling and the overhead
 * budget, with the meaning and the `o` lines templates/ give them on stap.
 *
 * The probe program gates each call (bpf/modes.bpf.h); this side is the
 * contract between collect and perun-uprobes (struct uprobes_modes, built
 * into and parsed from the loader's argv here), and the loader's part of
 * the run: the clock the methods need (reattach ticks, timed sampling's
 * flips, the budget's windows), which probe ids must stay in the kernel
 * (a disarmed probe is removed once no call it recorded is open, and put
 * back when it may record again: disarmed means gone), and the end's
 * report.  */
#ifndef PERUN_UPROBES_MODES_H
#define PERUN_UPROBES_MODES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/strv.h"

struct uprobes_probe;	/* bpf/loader.h: the program's state of one probe id */
struct uprobes_clock;	/* bpf/loader.h: the methods' clock */

/* What a collect asks of the loader besides the plan's sampling.  */
struct uprobes_modes {
	uint64_t threshold;	/* dynamic probing: disarm after N calls, or 0 */
	unsigned reattach_ms;	/* first re-arm after N ms, doubling; 0: never */
	unsigned timed_ms;	/* timed sampling: gather/dormant flip every N ms, or 0 */
	uint64_t budget_ns;	/* --max-overhead: recorded ns a window allows, or 0 */
	uint64_t call_ns;	/* the budget: what a recorded call costs */
	uint64_t stepped_ns;	/* and what a stepped entry costs more */
	uint64_t insn_ns;	/* and a return on its instructions, not a uretprobe */
	unsigned window_ms;	/* the budget's window */
};

/* True when a method may disarm probes (the loader then removes them).  */
int uprobes_modes_disarm(const struct uprobes_modes *m);

/* Appends perun-uprobes' options for m ("-m KEY=VALUE" each).  */
void uprobes_modes_argv(const struct uprobes_modes *m, struct strv *argv);

/* Reads one KEY=VALUE of -m into m; 0, or -1 with the reason printed.  */
int uprobes_modes_parse(struct uprobes_modes *m, const char *arg);

/* The reattach timer's period and the ticks of the first re-arm, as the
 * stap script computes them (templates/opt_reattach.stp.in).  */
unsigned uprobes_modes_tick_ms(const struct uprobes_modes *m);
uint64_t uprobes_modes_first_ticks(const struct uprobes_modes *m);

/* The loader's run of the methods over n probe ids, whose state the
 * program keeps in probes[] and clk (mapped maps).  */
struct uprobes_run {
	const struct uprobes_modes *m;
	struct uprobes_probe *probes;
	struct uprobes_clock *clk;
	size_t n;
	unsigned char *want;	/* per id: its points must be in the kernel */
	double next_tick, next_flip, next_window;	/* CLOCK_MONOTONIC s */
	uint64_t flips, over;	/* timed sampling's flips; windows over the budget */
	int dirty;		/* a probe was disarmed, or the clock moved */
	size_t pending;		/* disarmed ids still attached for an open call */
	uint64_t removed, restored;	/* times a probe left the kernel, came back */
};

/* Starts the clock at now (s) with ktime0 (ns, the program's clock).  */
void uprobes_run_init(struct uprobes_run *r, const struct uprobes_modes *m,
		      struct uprobes_probe *probes, size_t n, struct uprobes_clock *clk,
		      double now, uint64_t ktime0);
void uprobes_run_release(struct uprobes_run *r);

/* Moves the clock to now; returns the ms until it must be called again
 * (at most 1000).  */
unsigned uprobes_run_clock(struct uprobes_run *r, double now);

/* Recomputes r->want when something may have changed; 1 when it did (the
 * loader then rebuilds its links), else 0.  */
int uprobes_run_want(struct uprobes_run *r);

/* The `o` lines of the methods (PARSE_OPT_*), as the stap end probe writes
 * them.  */
void uprobes_run_report(const struct uprobes_run *r, FILE *f);

#endif
