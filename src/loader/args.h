/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The contract between a collect and perun's loader, perun-uprobes: what
 * the loader is asked to do, written into its argv (collect/run.c) and read
 * back from it (loader/uprobes-main.c) here and nowhere else.
 *
 *   perun-uprobes -x PID -o RAW [-a ATTACHED] [-b RING_BYTES] [-w] [-A] [-F] [-G] [-P]
 *                 [-m KEY=VALUE]... PLAN
 *
 * What the loader writes back is the raw stream of tapsets/perun.stp (its
 * s, r, event, u, p, j, i, l and q lines and, with -G, the n/m/x/y/h
 * summaries), read by parse/parse.h.  */
#ifndef PERUN_LOADER_ARGS_H
#define PERUN_LOADER_ARGS_H

#include <stdint.h>

#include "loader/uprobes-modes.h"
#include "util/strv.h"

struct loader_args {
	const char *pid;	/* -x: the process to trace (a number, or the
				 * driver's placeholder while the argv is built) */
	const char *raw;	/* -o: the raw stream */
	const char *attached;	/* -a: one uprobe_events-style line per point
				 * attached, or NULL */
	const char *plan;	/* the probe plan (plan/plan.h), saved */
	uint64_t ring;		/* -b: ring buffer bytes, or 0: 64 MiB */
	unsigned driver_signals : 1;	/* -w: do not wait for the process to
					 * exit; the driver signals the end */
	unsigned announce : 1;	/* -A: say "perun: attached" once armed */
	unsigned follow : 1;	/* -F: the processes it starts are traced too */
	unsigned aggregate : 1;	/* -G: summaries in the kernel, no events */
	unsigned progress : 1;	/* -P: perun-progress lines on stderr */
	struct uprobes_modes modes;	/* -m KEY=VALUE: the run-time methods */
};

/* The ring's size when -b is not given.  */
#define LOADER_RING_DEFAULT (64ull << 20)

/* Appends prog and a's options, in the order above, to argv.  */
void loader_args_argv(const struct loader_args *a, const char *prog, struct strv *argv);

/* Reads argv (argv[0] the program) into a, whose strings point into argv;
 * *pid is -x as a number.  0, or -1 with the usage or the bad option said
 * on stderr.  */
int loader_args_parse(int argc, char **argv, struct loader_args *a, long *pid);

#endif
