/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun's loader programs (loader/uprobes.c loads them):
 *
 *   perun_uprobe  every probe point (uprobe_multi links, entry and return):
 *                 one event into the ring, counted per code
 *   perun_fork    sched_process_fork: a traced process's new task joins the
 *                 traced set and is reported
 *   perun_exec    sched_process_exec: a traced process's exec is reported,
 *                 with the new program's file
 *   perun_agg     every probe point in aggregate mode (in place of
 *                 perun_uprobe): summaries per thread and probe, no events
 *   perun_exit    sched_process_exit in aggregate mode: a thread's open
 *                 frames are counted and its shadow stack freed
 *
 * In aggregate mode a USDT pair's begin and end marks are paired per
 * thread and probe by their order (perun_marks), as stap pairs them.
 *
 * Nothing here allocates or loops: a probe costs one pass through it.  */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/loader.h"

char LICENSE[] SEC("license") = "GPL";

/* its own section, so that the loader sets it whole */
const volatile struct uprobes_config perun_config SEC(".rodata.config") = {};

/* sized by the loader before the load */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} perun_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct uprobes_count);
	__uint(max_entries, 1);
} perun_counts SEC(".maps");

/* [0] != 0 while the trace runs: it starts and ends at one instant, the
 * flag's flip, not over the time links take to attach or close */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} perun_armed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, UPROBES_PROCS_MAX);
} perun_procs SEC(".maps");

/* The clock is read before the reservation, as close to the trap as the
 * program can; the reader sorts what the CPUs interleave.  The section
 * names a known program type; the loader sets the uprobe_multi attach
 * type, which libbpf 1.1 does not know.  */
#include "bpf/modes.bpf.h"

SEC("kprobe")
int perun_uprobe(struct pt_regs *ctx)
{
	__u32 zero = 0, code, key;
	__u64 *armed = bpf_map_lookup_elem(&perun_armed, &zero);
	struct uprobes_count *c;
	struct uprobes_event *e;
	__u64 ts, id, cookie;

	if (!armed || !*armed)
		return 0;
	if (perun_config.filter_traced) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;
		if (!bpf_map_lookup_elem(&perun_procs, &tgid))
			return 0;
	}
	cookie = bpf_get_attach_cookie(ctx);
	code = (__u32)cookie;
	key = code & ~UPROBES_CODE_RETINSN;
	c = bpf_map_lookup_elem(&perun_counts, &key);
	if (perun_config.gated) {
		/* the run-time methods: a call they do not record is not seen */
		int g = modes_gate(cookie, key, (__u32)bpf_get_current_pid_tgid());
		if (g <= 0) {
			if (g < 0 && c) {
				c->seen++;
				c->lost++;
			}
			return 0;
		}
	}
	if (c)
		c->seen++;
	ts = bpf_ktime_get_ns();
	id = bpf_get_current_pid_tgid();
	e = bpf_ringbuf_reserve(&perun_ring, sizeof(*e), 0);
	if (!e) {
		if (c)
			c->lost++;
		return 0;
	}
	e->ts = ts;
	e->pid_tgid = id;
	e->code = code;
	e->pad = (__u32)PT_REGS_SP(ctx);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* A record of a traced process into the ring, waking the reader (it
 * attaches to a new process as soon as it can).  */
static __always_inline void report(__u64 id, __u32 code, __u32 pad)
{
	__u64 ts = bpf_ktime_get_ns();
	struct uprobes_event *e = bpf_ringbuf_reserve(&perun_ring, sizeof(*e), 0);

	if (!e)
		return;
	e->ts = ts;
	e->pid_tgid = id;
	e->code = code;
	e->pad = pad;
	bpf_ringbuf_submit(e, 0);
}

/* In the parent: a task started by a traced process is traced from its
 * first instruction (a thread's id goes in as well; the reader tells
 * threads from processes).  */
SEC("tracepoint/sched/sched_process_fork")
int perun_fork(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, child = 0;

	if (!bpf_map_lookup_elem(&perun_procs, &tgid))
		return 0;
	/* the record's layout differs between kernels: the offset is its
	 * format's, which the verifier takes only through a read */
	if (bpf_probe_read_kernel(&child, sizeof(child),
				  (const char *)ctx + perun_config.fork_child_off) < 0)
		return 0;
	bpf_map_update_elem(&perun_procs, &child, &tgid, BPF_ANY);
	report((__u64)tgid << 32 | child, UPROBES_FORK_CODE, child);
	return 0;
}

/* The program file of the current task, as exec left it: its inode
 * number and device, read along the offsets the loader found in the
 * kernel's BTF.  */
static __always_inline void exe_file(struct uprobes_exec_event *e)
{
	const char *p = (const char *)bpf_get_current_task();
	const char *inode = 0, *sb = 0;

	if (!perun_config.exe_off[0] ||
	    bpf_probe_read_kernel(&p, sizeof(p), p + perun_config.exe_off[0]) < 0 || !p ||
	    bpf_probe_read_kernel(&p, sizeof(p), p + perun_config.exe_off[1]) < 0 || !p ||
	    bpf_probe_read_kernel(&inode, sizeof(inode), p + perun_config.exe_off[2]) < 0 ||
	    !inode ||
	    bpf_probe_read_kernel(&e->ino, sizeof(e->ino), inode + perun_config.exe_off[3]) < 0 ||
	    bpf_probe_read_kernel(&sb, sizeof(sb), inode + perun_config.exe_off[4]) < 0 || !sb ||
	    bpf_probe_read_kernel(&e->dev, sizeof(e->dev), sb + perun_config.exe_off[5]) < 0)
		e->ino = e->dev = 0;
}

/* A traced process's exec, with the new program's file: by the time the
 * reader sees the record, the process may have run another.  */
SEC("tracepoint/sched/sched_process_exec")
int perun_exec(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ts;
	__u32 tgid = id >> 32, loc = 0;
	struct uprobes_exec_event *e;

	if (!bpf_map_lookup_elem(&perun_procs, &tgid))
		return 0;
	ts = bpf_ktime_get_ns();
	e = bpf_ringbuf_reserve(&perun_ring, sizeof(*e), 0);
	if (!e)
		return 0;
	e->ev.ts = ts;
	e->ev.pid_tgid = id;
	e->ev.code = UPROBES_EXEC_CODE;
	e->ev.pad = tgid;
	e->ino = 0;
	e->dev = 0;
	e->pad = 0;
	e->name[0] = '\0';
	exe_file(e);
	if (perun_config.exec_name_off &&
	    bpf_probe_read_kernel(&loc, sizeof(loc),
				  (const char *)ctx + perun_config.exec_name_off) == 0 &&
	    bpf_probe_read_kernel_str(e->name, sizeof(e->name),
				      (const char *)ctx + (loc & 0xffff)) < 0)
		e->name[0] = '\0';
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* --- aggregate mode -------------------------------------------------------- */

/* allocated as threads and summaries appear */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct uprobes_agg_stack);
	__uint(max_entries, UPROBES_AGG_THREADS);
} perun_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct uprobes_agg_key);
	__type(value, struct uprobes_agg_value);
	__uint(max_entries, UPROBES_AGG_RECORDS);
} perun_aggs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, UPROBES_AGG_NOTES);
} perun_agg_notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct uprobes_agg_key);
	__type(value, struct uprobes_mark_stack);
	__uint(max_entries, UPROBES_AGG_RECORDS);
} perun_marks SEC(".maps");

/* what a new map entry starts from: never written */
static struct uprobes_agg_stack zero_stack;
static struct uprobes_agg_value zero_value;
static struct uprobes_mark_stack zero_marks;

static __always_inline void note(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&perun_agg_notes, &what);

	if (n)
		(*n)++;
}

static __always_inline struct uprobes_agg_value *agg_get(__u32 tid, __u32 id)
{
	struct uprobes_agg_key k = { tid, id };
	struct uprobes_agg_value *v = bpf_map_lookup_elem(&perun_aggs, &k);

	if (v)
		return v;
	bpf_map_update_elem(&perun_aggs, &k, &zero_value, BPF_NOEXIST);
	return bpf_map_lookup_elem(&perun_aggs, &k);
}

/* A call counted without a duration (why: a UPROBES_AGG_* note); 0, or -1
 * when no summary could be made.  */
static __always_inline int untimed(__u32 tid, __u32 id, __u32 why)
{
	struct uprobes_agg_value *v = agg_get(tid, id);

	if (!v) {
		note(UPROBES_AGG_NO_RECORD);
		return -1;
	}
	v->count++;
	v->untimed++;
	note(why);
	return 0;
}

/* floor(log2(v)) for v > 0, without a loop */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 b = 0;

	if (v >> 32) { v >>= 32; b += 32; }
	if (v >> 16) { v >>= 16; b += 16; }
	if (v >> 8) { v >>= 8; b += 8; }
	if (v >> 4) { v >>= 4; b += 4; }
	if (v >> 2) { v >>= 2; b += 2; }
	if (v >> 1) b += 1;
	return b;
}

/* A call of duration d into its summary; 0, or -1 when none could be
 * made.  */
static __always_inline int timed(__u32 tid, __u32 id, __u64 d)
{
	struct uprobes_agg_value *v = agg_get(tid, id);

	if (!v)
		return -1;
	v->count++;
	v->sum += d;
	if (!v->min || d < v->min)
		v->min = d;
	if (d > v->max)
		v->max = d;
	v->hist[log2_u64(d) & 63]++;
	return 0;
}

/* A USDT pair's mark at ts (end: its end mark): a begin opens, an end
 * closes the latest begin of its thread and probe; 0, or -1 when a call
 * could not be counted.  */
static __always_inline int mark(__u32 tid, __u32 id, int end, __u64 ts)
{
	struct uprobes_agg_key k = { tid, id };
	struct uprobes_mark_stack *m = bpf_map_lookup_elem(&perun_marks, &k);
	__u64 d;

	if (!end) {
		if (!m) {
			bpf_map_update_elem(&perun_marks, &k, &zero_marks, BPF_NOEXIST);
			m = bpf_map_lookup_elem(&perun_marks, &k);
		}
		if (!m) {
			/* no room to keep it open: counted now, no duration */
			untimed(tid, id, UPROBES_AGG_MARK_DEEP);
			return -1;
		}
		d = m->depth++;
		if (d < UPROBES_MARK_DEPTH)
			m->ts[d & (UPROBES_MARK_DEPTH - 1)] = ts;
		return 0;
	}
	if (!m || !m->depth)
		return 0;	/* begun before the trace: not counted, as on stap */
	d = --m->depth;
	if (d >= UPROBES_MARK_DEPTH)
		return untimed(tid, id, UPROBES_AGG_MARK_DEEP);
	return timed(tid, id, ts - m->ts[d & (UPROBES_MARK_DEPTH - 1)]);
}

/* Pops the frames entered below stack pointer sp, and at sp those of
 * probe id (none: ~0), counted without a duration: they never returned
 * (unwound past by longjmp or an exception, or deeper than the kernel keeps
 * return probes).  */
static __always_inline void unwind(struct uprobes_agg_stack *st, __u32 tid, __u32 sp, __u32 id)
{
	__u32 i;

	for (i = 0; i < UPROBES_AGG_DEPTH; i++) {
		__u32 depth = st->depth;
		struct uprobes_agg_frame *fr;
		if (!depth || depth > UPROBES_AGG_DEPTH)
			return;
		fr = &st->f[(depth - 1) & (UPROBES_AGG_DEPTH - 1)];
		if ((__s32)(fr->sp - sp) > 0 || (fr->sp == sp && fr->id != id))
			return;
		st->depth = depth - 1;
		untimed(tid, fr->id, UPROBES_AGG_UNWOUND);
	}
}

SEC("kprobe")
int perun_agg(struct pt_regs *ctx)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 zero = 0, code, key, id, tid, sp, want, i;
	__u64 *armed = bpf_map_lookup_elem(&perun_armed, &zero);
	struct uprobes_agg_stack *st;
	struct uprobes_agg_frame *fr;
	struct uprobes_agg_value *v;
	struct uprobes_count *c;

	if (!armed || !*armed)
		return 0;
	if (perun_config.filter_traced) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;
		if (!bpf_map_lookup_elem(&perun_procs, &tgid))
			return 0;
	}
	code = (__u32)bpf_get_attach_cookie(ctx);
	key = code & UPROBES_CODE_MASK;
	id = key >> 1;
	c = bpf_map_lookup_elem(&perun_counts, &key);
	if (c)
		c->seen++;
	tid = (__u32)bpf_get_current_pid_tgid();
	sp = (__u32)PT_REGS_SP(ctx);
	if (code & UPROBES_CODE_POINT) {
		if (!(v = agg_get(tid, id)))
			goto lost;
		v->count++;
		return 0;
	}
	if (code & UPROBES_CODE_MARK) {
		if (mark(tid, id, key & 1, ts) < 0)
			goto lost;
		return 0;
	}
	st = bpf_map_lookup_elem(&perun_stacks, &tid);
	if (!(key & 1)) {
		/* an entry: onto the thread's stack */
		if (!st) {
			bpf_map_update_elem(&perun_stacks, &tid, &zero_stack, BPF_NOEXIST);
			st = bpf_map_lookup_elem(&perun_stacks, &tid);
		}
		if (!st) {
			/* no stack for this thread: counted, its duration lost */
			if (untimed(tid, id, UPROBES_AGG_NO_STACK) < 0)
				goto lost;
			if (c)
				c->lost++;
			return 0;
		}
		/* frames entered below this entry's stack pointer are gone
		 * (unwound, or their return never fired), and so is one of this
		 * probe entered at the same one; another probe's frame there stays
		 * (a tail call's caller, its return still to come) */
		unwind(st, tid, sp, id);
		i = st->depth;
		if (i >= UPROBES_AGG_DEPTH) {
			if (untimed(tid, id, UPROBES_AGG_TOO_DEEP) < 0)
				goto lost;
			return 0;
		}
		fr = &st->f[i & (UPROBES_AGG_DEPTH - 1)];
		fr->ts = ts;
		fr->sp = sp;
		fr->id = id;
		st->depth = i + 1;
		return 0;
	}
	/* a return: the frame it closes was entered at want */
	if (!st)
		return 0;	/* no entry seen: in flight at the attach */
	want = code & UPROBES_CODE_RETINSN ? sp : sp - 8;
	unwind(st, tid, want, ~0u);
	i = st->depth;
	if (!i || i > UPROBES_AGG_DEPTH)
		return 0;
	fr = &st->f[(i - 1) & (UPROBES_AGG_DEPTH - 1)];
	if (fr->sp != want || fr->id != id)
		return 0;	/* not this call's frame: its entry was not seen */
	st->depth = i - 1;
	if (timed(tid, id, ts - fr->ts) < 0)
		goto lost;
	return 0;
lost:
	if (c)
		c->lost++;
	return 0;
}

/* A thread ends: its open frames are counted without a duration, and its
 * stack goes (a thread of a traced process only has one).  */
SEC("tracepoint/sched/sched_process_exit")
int perun_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), i;
	struct uprobes_agg_stack *st;

	if (!perun_config.aggregate)
		return 0;
	st = bpf_map_lookup_elem(&perun_stacks, &tid);
	if (!st)
		return 0;
	for (i = 0; i < UPROBES_AGG_DEPTH; i++) {
		__u32 depth = st->depth;
		if (!depth || depth > UPROBES_AGG_DEPTH)
			break;
		st->depth = depth - 1;
		untimed(tid, st->f[(depth - 1) & (UPROBES_AGG_DEPTH - 1)].id, UPROBES_AGG_OPEN);
	}
	bpf_map_delete_elem(&perun_stacks, &tid);
	return 0;
}
