/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What perun's loader programs (bpf/loader.bpf.c, compiled for the BPF
 * target) and the loader that runs them (loader/uprobes.c) share: the event
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
/* In aggregate mode, a code with UPROBES_CODE_POINT set marks a probe
 * with no return (a point: counted, no duration).  */
#define UPROBES_CODE_POINT (1u << 30)
/* In aggregate mode, a code with UPROBES_CODE_MARK set marks a USDT begin
 * (id * 2) or end (id * 2 + 1) mark of a pair: no stack pointer pairs them,
 * so they are paired per thread and probe by their order, as the stap
 * script pairs them (tapsets/perun.stp: __perun_agg_entry/exit).  */
#define UPROBES_CODE_MARK (1u << 29)
/* A code without its flags: id * 2 + kind.  */
#define UPROBES_CODE_MASK (~(UPROBES_CODE_RETINSN | UPROBES_CODE_POINT | UPROBES_CODE_MARK))

/* The code of a fork record: a process the record's tgid (pid_tgid >> 32)
 * runs started a task whose id is the record's pad field; new threads of a
 * traced process come this way too.  */
#define UPROBES_FORK_CODE 0xffffffffu
/* The code of an exec record: a traced process (pid_tgid >> 32) replaced
 * its program; its links must be made again for the new one.  */
#define UPROBES_EXEC_CODE 0xfffffffeu

/* An exec record (its header is a struct uprobes_event with the exec
 * code): the new program's file as the kernel saw it at the exec, so that
 * the reader need not look in /proc later, when the process may have run
 * another exec already (a shell's "exec PROGRAM").  ino and dev are the
 * file's inode and its superblock's device (the kernel's encoding, major
 * << 20 | minor), both 0 when this kernel's layout is unknown
 * (uprobes_config.exe_off); name is the path given to exec, cut at
 * UPROBES_EXEC_NAME - 1 bytes.  */
#define UPROBES_EXEC_NAME 128
struct uprobes_exec_event {
	struct uprobes_event ev;
	__u64 ino;
	__u32 dev;
	__u32 pad;
	char name[UPROBES_EXEC_NAME];
};

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

/* Aggregate mode (the program perun_agg): per thread and probe, in the
 * kernel, what --aggregate reports (tapsets/perun.stp's n/m/x/y/h lines).
 * Entries and returns are paired on a shadow stack per thread (the map
 * perun_stacks, tid to struct uprobes_agg_stack, created on a thread's
 * first entry and removed at its exit): a return at stack pointer s pairs
 * with the frame entered at s - 8 (a uretprobe runs after the return
 * address is popped) or at s (a probe on a return instruction); frames
 * entered below that were unwound (longjmp, an exception) and are counted
 * without a duration.  So is an entry beyond UPROBES_AGG_DEPTH frames,
 * and a frame still open when its thread ends or the trace does.  */
#define UPROBES_AGG_DEPTH 128		/* frames per thread (16 bytes each) */
#define UPROBES_AGG_THREADS 4096	/* threads with a shadow stack at once */
#define UPROBES_AGG_RECORDS 16384	/* (thread, probe) summaries */

struct uprobes_agg_frame {
	__u64 ts;
	__u32 sp;		/* low 32 bits of the stack pointer at the entry */
	__u32 id;		/* the probe's id (code >> 1) */
};

struct uprobes_agg_stack {
	__u32 depth;
	__u32 pad;
	struct uprobes_agg_frame f[UPROBES_AGG_DEPTH];
};

struct uprobes_agg_key {
	__u32 tid;
	__u32 id;
};

/* The open begin marks of one USDT pair in one thread (the map
 * perun_marks, keyed by struct uprobes_agg_key, created at its first begin
 * mark and kept to the end): depth begins without their end, the first
 * UPROBES_MARK_DEPTH of them timed; an end takes the latest.  An end with
 * none open was begun before the trace and is not counted, as on stap.  */
#define UPROBES_MARK_DEPTH 16
struct uprobes_mark_stack {
	__u64 depth;
	__u64 ts[UPROBES_MARK_DEPTH];
};

/* One (thread, probe) summary: count counts every call entered (untimed
 * those without a duration); sum, min, max and the log2 histogram of
 * inclusive nanoseconds cover the calls with one.  */
struct uprobes_agg_value {
	__u64 count, untimed, sum, min, max;
	__u64 hist[64];
};

/* The per-CPU counters of aggregate mode (the map perun_agg_notes), what
 * the loader says at the end.  */
enum {
	UPROBES_AGG_NO_STACK,	/* calls without a duration: no shadow stack could
				 * be made for their thread (UPROBES_AGG_THREADS) */
	UPROBES_AGG_TOO_DEEP,	/* calls without a duration: entered beyond
				 * UPROBES_AGG_DEPTH frames */
	UPROBES_AGG_UNWOUND,	/* calls without a duration: unwound past, or
				 * their return probe never fired (the kernel
				 * keeps 64 pending per thread) */
	UPROBES_AGG_OPEN,	/* calls without a duration: open when their thread
				 * ended */
	UPROBES_AGG_NO_RECORD,	/* events not counted: no summary could be made
				 * (UPROBES_AGG_RECORDS) */
	UPROBES_AGG_MARK_DEEP,	/* USDT pairs without a duration: begun beyond
				 * UPROBES_MARK_DEPTH open begins of their own,
				 * or beyond UPROBES_AGG_RECORDS pairs open */
	UPROBES_AGG_NOTES
};

/* Set by the loader before it loads the programs (their .rodata: the
 * verifier then drops the code a setting turns off).  */
struct uprobes_config {
	__u32 filter_traced;	/* 1: the probes drop events of processes not in
				 * perun_procs (links attached to every process) */
	__u32 fork_child_off;	/* offset of child_pid in sched_process_fork's
				 * record, from its tracefs format */
	/* the run-time methods (bpf/modes.bpf.h) */
	__u32 gated;		/* 1: every probe goes through the methods' gate */
	__u32 relink;		/* 1: a cookie names its link (slot << 48 | serial << 32),
				 * and only the link perun_links names for its slot
				 * records: a link rebuilt without a disarmed probe
				 * takes over from the old at one instant */
	__u64 threshold;	/* dynamic probing: disarm after N calls, or 0 */
	__u64 first_ticks;	/* reattach: first re-arm after N ticks, or 0 */
	__u32 timed;		/* 1: timed sampling */
	__u32 budget;		/* 1: the overhead budget */
	__u32 aggregate;	/* 1: perun_exit clears the threads' shadow stacks */
	__u32 exec_name_off;	/* offset of filename's __data_loc in
				 * sched_process_exec's record, or 0 */
	/* the path from the current task to its program file's inode number
	 * and device, from the kernel's BTF (loader/uprobes.c: exe_offsets):
	 * task_struct.mm, mm_struct.exe_file, file.f_inode, inode.i_ino,
	 * inode.i_sb, super_block.s_dev; all 0 when unknown */
	__u32 exe_off[6];
};

/* --- the run-time methods (bpf/modes.bpf.h) --------------------------------
 *
 * A plan's per-function sampling, dynamic probing (with reattach), timed
 * sampling and overhead budget gate each call in the probe program, with
 * the meaning templates/ give them on stap: a gated probe records a call
 * only when every method lets it, and its return only when its entry was
 * recorded.  The loader removes a disarmed probe from the kernel once no
 * call it recorded is open (UPROBES_DISARM_CODE tells it when to look).  */

/* One probe id's settings and run-time state (the map perun_probes, an
 * array indexed by id = code >> 1, mapped into the loader): the loader
 * writes the settings before the trace; the program the rest.  */
struct uprobes_probe {
	__u32 sampling;		/* record one call in sampling per thread (>= 1) */
	__u32 point;		/* 1: one event per hit, no return */
	__u64 cost_ns;		/* the budget: what one recorded call costs */
	__u64 open;		/* recorded calls whose return has not come */
	/* dynamic probing (templates/opt_probing.stp.in, opt_reattach.stp.in) */
	__u64 hits;		/* calls of the current armed burst */
	__u64 off;		/* disarmed: the threshold, or 1 with reattach */
	__u64 ndis, nre;	/* times disarmed, re-armed */
	__u64 ival;		/* reattach: the interval in ticks, doubling */
	__u64 wait;		/* reattach: the tick it is re-armed at */
	/* the overhead budget (templates/opt_budget.stp.in) */
	__u64 bwin, bhits;	/* the window its hits are counted in; its hits */
	__u64 bn;		/* calls recorded */
	__u64 boff;		/* disarmed MS - 1 ms after the start, or 0 */
	__u64 bskip;		/* calls that reached it disarmed */
	/* sampling: every call that reached its sampling, counted, so that
	 * the profile says how many there were and does not guess */
	__u64 seen;
};

/* The clock the loader keeps for the methods (the map perun_clock, one
 * entry, mapped into the loader): it ticks, flips and closes windows.  */
struct uprobes_clock {
	__u64 tick;		/* reattach: ticks of the timer */
	__u64 dormant;		/* timed sampling: 1 while dormant */
	__u64 bw;		/* the budget: the current window */
	__u64 bnow;		/* 1 while the last window was over the budget */
	__u64 bcut;		/* the hits a probe may record in a window */
	__u64 bcost;		/* the current window's recorded cost (ns) */
	__u64 t0;		/* bpf_ktime_get_ns() at the start */
};

/* Per thread and probe id (the map perun_threads): its sampling counter,
 * its depth and which open calls were recorded (bit d for depth d < 64;
 * deeper ones in perun_deep).  */
struct uprobes_thread_key {
	__u32 tid, id;
};
struct uprobes_thread {
	__u64 cnt, dep, rec;
};
struct uprobes_deep_key {
	__u32 tid, id;
	__u64 dep;
};
#define UPROBES_THREADS_MAX (1u << 18)
#define UPROBES_DEEP_MAX 65536

/* A record of a probe the program disarmed (its id in pad): the loader
 * removes it once no call it recorded is open.  */
#define UPROBES_DISARM_CODE 0xfffffffdu

/* The serial of the current link of each slot (the map perun_links), with
 * relink.  */
#define UPROBES_LINK_SLOTS 65536

#endif
