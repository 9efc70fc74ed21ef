/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Whether this machine can trace: root, stap and its runtimes, the kernel
 * build tree, tracefs, uprobes, BPF, the memlock and open-file limits,
 * perun's own files, the kernel runtime's sources; and for each binary asked
 * about, where its functions come from.  Every failed check carries the
 * command that fixes it.  */
#ifndef PERUN_TRACE_DOCTOR_H
#define PERUN_TRACE_DOCTOR_H

#include <stddef.h>

struct doctor_check {
	char *name; /* "stap", "kernel build tree", "symbols app", ... */
	int ok;
	int required; /* for the bpf runtime */
	char *detail; /* what was found */
	char *fix;    /* when not ok: what fixes it; else NULL */
};

struct doctor_report {
	struct doctor_check *checks;
	size_t n;
	int can_trace;	     /* a collect can work here */
	const char *runtime; /* "kernel" (modules can be built and loaded), "bpf" or
				"none" */
};

/* Runs every check, then one per binary of bins[0..nbins), in order into
 * *rep.  */
void doctor_run(struct doctor_report *rep, const char *const *bins, size_t nbins);
void doctor_report_release(struct doctor_report *rep);

#endif
