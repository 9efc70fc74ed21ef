/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The run-time methods of the probe plan in the probe program (included
 * by bpf/loader.bpf.c; the layouts are in bpf/loader.h): per-function
 * sampling, dynamic probing with reattach, timed sampling and the overhead
 * budget, with the meaning templates/ give them on stap.  A call is
 * recorded only when every method lets it, in stap's order (dynamic
 * probing, timed sampling, sampling, budget: a later one counts only the
 * calls an earlier one let through); its return only when its entry was.
 * Without perun_config.gated the verifier drops all of it.  */
#ifndef PERUN_BPF_MODES_BPF_H
#define PERUN_BPF_MODES_BPF_H

/* sized by the loader: one entry per probe id */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct uprobes_probe);
	__uint(max_entries, 1);
} perun_probes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct uprobes_clock);
	__uint(max_entries, 1);
} perun_clock SEC(".maps");

/* allocated as threads call probes: bounded, not reserved */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct uprobes_thread_key);
	__type(value, struct uprobes_thread);
	__uint(max_entries, UPROBES_THREADS_MAX);
} perun_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct uprobes_deep_key);
	__type(value, __u8);
	__uint(max_entries, UPROBES_DEEP_MAX);
} perun_deep SEC(".maps");

/* with relink: per slot, the serial of its current link */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, UPROBES_LINK_SLOTS);
} perun_links SEC(".maps");

/* Tells the loader that probe id was disarmed.  */
static __always_inline void modes_disarmed(__u32 id)
{
	struct uprobes_event *e = bpf_ringbuf_reserve(&perun_ring, sizeof(*e), 0);

	if (!e)
		return;	/* the loader also finds it by its periodic look */
	e->ts = bpf_ktime_get_ns();
	e->pid_tgid = bpf_get_current_pid_tgid();
	e->code = UPROBES_DISARM_CODE;
	e->pad = id;
	bpf_ringbuf_submit(e, 0);
}

/* __perun_armed (templates/opt_probing.stp.in, opt_reattach.stp.in).  */
static __always_inline int modes_armed(struct uprobes_probe *p, struct uprobes_clock *clk,
				       __u32 id)
{
	__u64 h;

	if (p->off) {
		if (!perun_config.first_ticks || clk->tick < p->wait)
			return 0;
		/* its tick has come: the first call re-arms it */
		if (__sync_bool_compare_and_swap(&p->off, 1, 0)) {
			p->hits = 0;
			p->nre++;
		}
	}
	h = __sync_fetch_and_add(&p->hits, 1) + 1;
	if (h <= perun_config.threshold)
		return 1;
	if (h == perun_config.threshold + 1) {
		if (perun_config.first_ticks) {
			p->ndis++;
			if (!p->ival)
				p->ival = perun_config.first_ticks;
			else if (p->ival < 1000000000)
				p->ival *= 2;
			p->wait = clk->tick + p->ival;
			p->off = 1;
		} else {
			p->off = perun_config.threshold;
		}
		modes_disarmed(id);
	}
	return 0;
}

/* __perun_budget (templates/opt_budget.stp.in).  */
static __always_inline int modes_budget(struct uprobes_probe *p, struct uprobes_clock *clk,
					__u32 id)
{
	__u64 h, bw = clk->bw;

	if (p->boff) {
		__sync_fetch_and_add(&p->bskip, 1);
		return 0;
	}
	if (p->bwin != bw) {
		p->bwin = bw;
		p->bhits = 0;
	}
	h = __sync_fetch_and_add(&p->bhits, 1) + 1;
	if (clk->bnow && h > clk->bcut) {
		__u64 ms = (bpf_ktime_get_ns() - clk->t0) / 1000000 + 1;
		if (__sync_bool_compare_and_swap(&p->boff, 0, ms)) {
			p->bskip = 1;
			modes_disarmed(id);
		}
		return 0;
	}
	__sync_fetch_and_add(&p->bn, 1);
	__sync_fetch_and_add(&clk->bcost, p->cost_ns);
	return 1;
}

/* Whether this call is recorded (the gate's condition, in stap's order).  */
static __always_inline int modes_cond(struct uprobes_probe *p, struct uprobes_clock *clk,
				      struct uprobes_thread *t, __u32 id)
{
	if (perun_config.threshold && !modes_armed(p, clk, id))
		return 0;
	if (perun_config.timed && clk->dormant)
		return 0;
	if (p->sampling > 1) {
		__sync_fetch_and_add(&p->seen, 1);
		if (t->cnt++ % p->sampling)
			return 0;
	}
	if (perun_config.budget && !modes_budget(p, clk, id))
		return 0;
	return 1;
}

/* The gate of one event of code (without UPROBES_CODE_RETINSN) in thread
 * tid, through the link cookie names: 1 to record it, 0 to drop it, -1
 * when its thread's state found no room (counted as lost).  */
static __always_inline int modes_gate(__u64 cookie, __u32 code, __u32 tid)
{
	__u32 id = code >> 1, zero = 0;
	struct uprobes_thread_key k = { tid, id };
	struct uprobes_probe *p = bpf_map_lookup_elem(&perun_probes, &id);
	struct uprobes_clock *clk = bpf_map_lookup_elem(&perun_clock, &zero);
	struct uprobes_thread *t;
	__u64 d, bit;
	int rec;

	if (perun_config.relink) {
		/* a link being replaced: its successor records this hit */
		__u32 slot = (__u32)(cookie >> 48), *cur = bpf_map_lookup_elem(&perun_links, &slot);
		if (!cur || *cur != (__u32)((cookie >> 32) & 0xffff))
			return 0;
	}
	if (!p || !clk)
		return 1;
	t = bpf_map_lookup_elem(&perun_threads, &k);
	if (!t) {
		struct uprobes_thread z = { 0, 0, 0 };
		if (code & 1)
			return 0;	/* no call of it entered here */
		bpf_map_update_elem(&perun_threads, &k, &z, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&perun_threads, &k);
		if (!t)
			return -1;
	}
	if (p->point)
		return modes_cond(p, clk, t, id);
	if (!(code & 1)) {
		rec = modes_cond(p, clk, t, id);
		d = t->dep++;
		if (!rec)
			return 0;
		if (d < 64) {
			t->rec |= 1ull << d;
		} else {
			struct uprobes_deep_key dk = { tid, id, d };
			__u8 one = 1;
			if (bpf_map_update_elem(&perun_deep, &dk, &one, BPF_ANY))
				return -1;
		}
		__sync_fetch_and_add(&p->open, 1);
		return 1;
	}
	if (!t->dep)
		return 0;
	d = --t->dep;
	if (d < 64) {
		bit = 1ull << d;
		if (!(t->rec & bit))
			return 0;
		t->rec &= ~bit;
	} else {
		struct uprobes_deep_key dk = { tid, id, d };
		if (bpf_map_delete_elem(&perun_deep, &dk))
			return 0;
	}
	__sync_fetch_and_sub(&p->open, 1);
	return 1;
}

#endif
