/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun's own uprobe loader for the bpf runtime.
 *
 * stapbpf opens one perf-event uprobe per probe point for every process
 * that maps the binary: each point costs descriptors, detaching waits an
 * RCU grace period per point (about 0.1 s each on Linux >= 6.13), and every
 * other process of the binary traps on the breakpoints.  This loader
 * instead attaches one small BPF program through uprobe_multi links
 * (Linux >= 6.6): one link per binary and direction, carrying a pid filter,
 * so the kernel installs breakpoints only in the traced process; the probe
 * code (id * 2 + kind, as the raw stream names it) rides each offset's BPF
 * cookie.  Events go into a BPF ring buffer that is drained while the
 * target runs; an event that finds the ring full is counted per probe code
 * in the kernel, so the loss is exact.  Raw bpf(2), no libbpf: Debian 12's
 * libbpf and UAPI headers predate uprobe_multi.  */
#ifndef PERUN_UPROBES_H
#define PERUN_UPROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/bpfmap.h"	/* struct bpfmap_err: why a call failed */

/* One probe point to attach: offset in path's file, the code its events
 * carry, and whether it is a return probe.  */
struct uprobes_point {
	const char *path;
	uint64_t offset;
	uint64_t ref_ctr;	/* a USDT semaphore's file offset, which the kernel
				 * counts up while the point is attached; or 0 */
	uint32_t code;
	unsigned ret : 1;
	unsigned attached : 1;	/* set by uprobes_attach */
};

/* A probe's code with this bit set is on one of the function's return
 * instructions (not a uretprobe): its event's stack pointer equals the one
 * at the entry, where a uretprobe's is 8 bytes above it.  */
#ifndef UPROBES_CODE_RETINSN
#define UPROBES_CODE_RETINSN (1u << 31)
#endif

/* One event as the program writes it into the ring.  */
struct uprobes_event {
	uint64_t ts;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	uint64_t pid_tgid;	/* tgid << 32 | tid */
	uint32_t code;
	uint32_t pad;
};

struct uprobes;

/* 1 when this kernel attaches uprobe_multi links with BPF cookies (loads
 * the program once to see); 0 with the reason in err.  */
int uprobes_supported(struct bpfmap_err *err);

/* Creates the ring (ring_bytes, rounded up to a power of two of at least
 * a page), the per-code counters (ncodes codes) and the program.  NULL on
 * failure (why in err).  */
struct uprobes *uprobes_new(size_t ncodes, size_t ring_bytes, struct bpfmap_err *err);

/* Attaches points (grouped by path and direction, one link each) to pid's
 * process only, or to every process when pid is 0.  A link the kernel
 * refuses is split until the points it refuses are found; those stay
 * unattached.  Returns the number of points attached, or -1 when not even
 * one link could be made (why in err).  */
long uprobes_attach(struct uprobes *u, struct uprobes_point *pts, size_t n, pid_t pid,
		    struct bpfmap_err *err);

/* The code of a fork record: a process the ring's tgid (pid_tgid >> 32)
 * runs started a task whose id is the record's pad field; new threads of a
 * traced process come this way too.  */
#define UPROBES_FORK_CODE 0xffffffffu
/* The code of an exec record: a traced process (pid_tgid >> 32) replaced
 * its program; its links must be made again for the new one.  */
#define UPROBES_EXEC_CODE 0xfffffffeu

/* Reports forks of root and of every task it or they start into the ring
 * (a sched_process_fork tracepoint program and a map of the traced
 * processes), and their execs (sched_process_exec).  0, or -1 (why in
 * err).  */
int uprobes_watch_forks(struct uprobes *u, pid_t root, struct bpfmap_err *err);

/* Starts (on) or stops recording, at once, on every link: the probes
 * record nothing until armed.  0, or -1 (why in err).  */
int uprobes_arm(struct uprobes *u, int on, struct bpfmap_err *err);

/* Releases the links bound to pid.  */
void uprobes_detach_pid(struct uprobes *u, pid_t pid);

/* Releases every link: the breakpoints go at once.  */
void uprobes_detach(struct uprobes *u);

/* Hands every event in the ring to fn, oldest first; returns how many.  */
typedef void (*uprobes_event_fn)(void *ctx, const struct uprobes_event *ev);
size_t uprobes_drain(struct uprobes *u, uprobes_event_fn fn, void *ctx);

/* The kernel's per-code counters, summed over CPUs: events the probes saw
 * and events lost to a full ring.  0, or -1 (why in err).  */
int uprobes_counts(struct uprobes *u, uint32_t code, uint64_t *seen, uint64_t *lost,
		   struct bpfmap_err *err);

/* Links currently held.  */
size_t uprobes_links(const struct uprobes *u);

void uprobes_free(struct uprobes *u);

#endif
