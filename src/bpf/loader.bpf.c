/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun's loader programs (trace/uprobes.c loads them):
 *
 *   perun_uprobe  every probe point (uprobe_multi links, entry and return):
 *                 one event into the ring, counted per code
 *   perun_fork    sched_process_fork: a traced process's new task joins the
 *                 traced set and is reported
 *   perun_exec    sched_process_exec: a traced process's exec is reported
 *
 * Nothing here allocates or loops: a probe costs one pass through it.  */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/loader.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct uprobes_config perun_config = {};

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
SEC("kprobe")
int perun_uprobe(struct pt_regs *ctx)
{
	__u32 zero = 0, code, key;
	__u64 *armed = bpf_map_lookup_elem(&perun_armed, &zero);
	struct uprobes_count *c;
	struct uprobes_event *e;
	__u64 ts, id;

	if (!armed || !*armed)
		return 0;
	if (perun_config.filter_traced) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;
		if (!bpf_map_lookup_elem(&perun_procs, &tgid))
			return 0;
	}
	code = (__u32)bpf_get_attach_cookie(ctx);
	key = code & ~UPROBES_CODE_RETINSN;
	c = bpf_map_lookup_elem(&perun_counts, &key);
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

SEC("tracepoint/sched/sched_process_exec")
int perun_exec(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (bpf_map_lookup_elem(&perun_procs, &tgid))
		report(id, UPROBES_EXEC_CODE, tgid);
	return 0;
}
