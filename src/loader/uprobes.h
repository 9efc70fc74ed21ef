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
 * in the kernel, so the loss is exact.
 *
 * The programs are BPF C (bpf/loader.bpf.c, sharing bpf/loader.h with this
 * side), compiled by clang at build time and embedded; libbpf opens and
 * loads them and creates their maps.  The uprobe_multi links are made
 * with raw bpf(2): Debian 12's libbpf 1.1 and UAPI headers predate them.  */
#ifndef PERUN_UPROBES_H
#define PERUN_UPROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/bpfmap.h"	/* struct bpfmap_err: why a call failed */
#include "bpf/loader.h"		/* struct uprobes_event, the record codes */

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

struct uprobes;

/* 1 when this kernel attaches uprobe_multi links with BPF cookies (loads
 * the program once to see); 0 with the reason in err.  */
int uprobes_supported(struct bpfmap_err *err);

/* uprobes_new's flags.  UPROBES_FILTER_TRACED: the probes record only
 * processes in the traced set (uprobes_trace_pid, and the children that
 * uprobes_watch_forks adds before they run), for links attached to every
 * process (pid 0); one map lookup more per event.  */
#define UPROBES_FILTER_TRACED 1u
/* UPROBES_AGGREGATE: the probes keep summaries per thread and probe in the
 * kernel (bpf/loader.h: perun_agg) in place of writing events; entries and
 * returns are paired there by stack pointer, a USDT pair's marks (their
 * codes carry UPROBES_CODE_MARK) by their order.  Points carry
 * UPROBES_CODE_POINT in their code.  Memory: at most UPROBES_AGG_THREADS
 * shadow stacks of 2 KiB, UPROBES_AGG_RECORDS summaries of 552 bytes and
 * as many open USDT pairs of 136 bytes (19 MiB in all), allocated as
 * threads, summaries and pairs appear; a thread's stack goes when it ends.  */
#define UPROBES_AGGREGATE 2u

/* Creates the ring (ring_bytes, rounded up to a power of two of at least
 * a page), the per-code counters (ncodes codes), the traced set (at most
 * UPROBES_PROCS_MAX processes) and the programs.  NULL on failure (why in
 * err).  */
struct uprobes *uprobes_new(size_t ncodes, size_t ring_bytes, unsigned flags,
			    struct bpfmap_err *err);

struct uprobes_modes;

/* uprobes_new with the run-time methods' gate (loader/uprobes-modes.h) for
 * nprobes probe ids: every probe's events go through it when modes is not
 * NULL; with a method that disarms probes, each link can be made again
 * without them (uprobes_relink).  */
struct uprobes *uprobes_new_modes(size_t ncodes, size_t ring_bytes, unsigned flags,
				  const struct uprobes_modes *modes, size_t nprobes,
				  struct bpfmap_err *err);

/* The gate's per-probe state and its clock, mapped into this process
 * (uprobes_new_modes), or NULL.  */
struct uprobes_probe *uprobes_probe_state(struct uprobes *u);
struct uprobes_clock *uprobes_clock(struct uprobes *u);

/* Makes every link again with the points of the probe ids want[id] keeps
 * (ids past nwant stay): a removed probe costs its process nothing, and
 * a probe wanted again is put back.  The new link takes over at one
 * instant, so no hit is recorded twice.  0, or -1 when a link could not be
 * made (it keeps its old points; why in err).  */
int uprobes_relink(struct uprobes *u, const unsigned char *want, size_t nwant,
		   struct bpfmap_err *err);

/* Adds process tgid to the traced set.  0, or -1 (why in err).  */
int uprobes_trace_pid(struct uprobes *u, pid_t tgid, struct bpfmap_err *err);

/* 1 when id is in the traced set, 0 when not (or the set cannot be read).  */
int uprobes_is_traced(struct uprobes *u, pid_t id);

/* Takes id out of the traced set: a thread's id, which the fork program
 * adds as it adds a process's, and which a process could take over once
 * the thread ends.  */
void uprobes_untrace_pid(struct uprobes *u, pid_t id);

/* Attaches points (grouped by path and direction, one link each) to pid's
 * process only, or to every process when pid is 0.  A link the kernel
 * refuses is split until the points it refuses are found; those stay
 * unattached.  Returns the number of points attached, or -1 when not even
 * one link could be made (why in err).  */
long uprobes_attach(struct uprobes *u, struct uprobes_point *pts, size_t n, pid_t pid,
		    struct bpfmap_err *err);

/* Adds root to the traced set, and reports forks of its members into the
 * ring (UPROBES_FORK_CODE records, from a sched_process_fork program that
 * adds the new task to the set before it runs), and their execs
 * (UPROBES_EXEC_CODE, sched_process_exec).  0, or -1 (why in err; root is
 * in the set all the same when that succeeded).  */
int uprobes_watch_forks(struct uprobes *u, pid_t root, struct bpfmap_err *err);

/* Starts (on) or stops recording, at once, on every link: the probes
 * record nothing until armed.  0, or -1 (why in err).  */
int uprobes_arm(struct uprobes *u, int on, struct bpfmap_err *err);

/* Releases the links bound to pid.  */
void uprobes_detach_pid(struct uprobes *u, pid_t pid);

/* Releases every link: the breakpoints go at once.  The kernel waits for a
 * grace period per link closed; the links are closed together, return
 * probes first, so a detach takes about two grace periods.  */
void uprobes_detach(struct uprobes *u);
/* What one grace period costs now, in seconds: a link of one point at
 * offset in path, bound to this process (which never runs it), made and
 * closed.  -1 when the kernel refused it.  */
double uprobes_detach_cost(struct uprobes *u, const char *path, uint64_t offset);

/* Hands every event in the ring to fn, oldest first; returns how many.  An
 * exec record (code UPROBES_EXEC_CODE) is the header of a whole struct
 * uprobes_exec_event.  */
typedef void (*uprobes_event_fn)(void *ctx, const struct uprobes_event *ev);
size_t uprobes_drain(struct uprobes *u, uprobes_event_fn fn, void *ctx);

/* The kernel's per-code counters, summed over CPUs: events the probes saw
 * and events lost to a full ring.  0, or -1 (why in err).  */
int uprobes_counts(struct uprobes *u, uint32_t code, uint64_t *seen, uint64_t *lost,
		   struct bpfmap_err *err);

/* One summary of aggregate mode.  */
struct uprobes_agg {
	struct uprobes_agg_key key;	/* tid, probe id */
	struct uprobes_agg_value val;
};

/* Aggregate mode, once disarmed: every summary (*out, *n; the caller frees
 * *out), the frames still open counted in them without a duration, and the
 * UPROBES_AGG_* notes summed over CPUs.  0, or -1 (why in err).  */
int uprobes_aggregates(struct uprobes *u, struct uprobes_agg **out, size_t *n,
		       uint64_t notes[UPROBES_AGG_NOTES], struct bpfmap_err *err);

/* Links currently held.  */
size_t uprobes_links(const struct uprobes *u);

void uprobes_free(struct uprobes *u);

#endif
