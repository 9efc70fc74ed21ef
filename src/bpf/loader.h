/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What perun's loader programs (bpf/loader.bpf.c, compiled for the BPF
 * target) and the loader that runs them (trace/uprobes.c) share: the event
 * each program writes into the ring, the layouts of the maps, the meaning
 * of a probe's code (its BPF cookie) and the load-time configuration.  Both
 * sides include this file; it uses only the kernel's fixed-width types so
 * that both lay every struct out alike.  */
#ifndef PERUN_BPF_LOADER_H
#define PERUN_BPF_LOADER_H

#include <linux/types.h>

/* One event in the ring (24 bytes).  */
struct uprobes_event {
	__u64 ts;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 pid_tgid;		/* tgid << 32 | tid */
	__u32 code;		/* the probe's code, or one of the record codes below */
	__u32 pad;		/* a probe: the low 32 bits of the stack pointer at the
				 * probe; a fork record: the new task's id; an exec
				 * record: the process's tgid */
};

/* A probe's code, carried by its BPF cookie: id * 2 for an entry (or a
 * USDT mark), id * 2 + 1 for a return (or a USDT end mark), as the raw
 * stream names it.  A code with UPROBES_CODE_RETINSN set marks a probe on
 * one of the function's return instructions (not a uretprobe): its event's
 * stack pointer equals the one at the entry, where a uretprobe's is 8 bytes
 * above it.  The programs copy a code into the event as it is; the per-code
 * counters are indexed without that bit.  */
#define UPROBES_CODE_RETINSN (1u << 31)

/* The code of a fork record: a process the record's tgid (pid_tgid >> 32)
 * runs started a task whose id is the record's pad field; new threads of a
 * traced process come this way too.  */
#define UPROBES_FORK_CODE 0xffffffffu
/* The code of an exec record: a traced process (pid_tgid >> 32) replaced
 * its program; its links must be made again for the new one.  */
#define UPROBES_EXEC_CODE 0xfffffffeu

/* The per-CPU counters of one code (the map perun_counts, an array indexed
 * by code without UPROBES_CODE_RETINSN): events the probes saw and events
 * that found the ring full.  */
struct uprobes_count {
	__u64 seen;
	__u64 lost;
};

/* The traced processes (the map perun_procs, a hash of tgid to the tgid
 * of its parent, or to itself for the root): the root is added by the
 * loader, every task a member starts by the fork program before the task
 * runs.  */
#define UPROBES_PROCS_MAX 65536

/* Set by the loader before it loads the programs (their .rodata: the
 * verifier then drops the code a setting turns off).  */
struct uprobes_config {
	__u32 filter_traced;	/* 1: the probes drop events of processes not in
				 * perun_procs (links attached to every process) */
	__u32 fork_child_off;	/* offset of child_pid in sched_process_fork's
				 * record, from its tracefs format */
};

#endif
