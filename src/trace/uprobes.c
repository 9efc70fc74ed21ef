/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "uprobes"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace/bpfmap.h"
#include "trace/uprobes.h"

/* What Debian 12's 6.1 UAPI header does not define yet (Linux 6.6).  */
#define ATTACH_UPROBE_MULTI 48		/* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN 1u		/* BPF_F_UPROBE_MULTI_RETURN */
#define MAP_RINGBUF 27			/* BPF_MAP_TYPE_RINGBUF (5.8) */
#define HELPER_RINGBUF_RESERVE 131
#define HELPER_RINGBUF_SUBMIT 132
#define HELPER_ATTACH_COOKIE 174
#define RB_NO_WAKEUP 1			/* BPF_RB_NO_WAKEUP: the reader polls */
#define RB_BUSY (1u << 31)
#define RB_DISCARD (1u << 30)
#define RB_HDR 8

/* bpf_attr.link_create for uprobe_multi, as Linux 6.6 lays it out.  */
struct link_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};

struct link {
	int fd;
	pid_t pid;
	int ret;	/* return probes */
};

struct uprobes {
	int ring_fd, counts_fd, armed_fd, prog_fd;
	int procs_fd, fork_prog_fd, fork_event_fd;	/* uprobes_watch_forks, or -1 */
	int exec_prog_fd, exec_event_fd;
	size_t ring_size, ncodes, ncpus;
	unsigned long *consumer;	/* mapped read-write */
	const unsigned long *producer;	/* mapped read-only, the data after it */
	const unsigned char *data;
	size_t page;
	struct link *links;
	size_t nlinks, alloc;
};

/* --- the program ----------------------------------------------------------- */

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						.off = (o), .imm = (i) })
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define LDX_DW(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define LDX_W(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define LSH64_IMM(d, i) INSN(BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, i)
#define RSH64_IMM(d, i) INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define OR64_REG(d, s) INSN(BPF_ALU64 | BPF_OR | BPF_X, d, s, 0, 0)
#define STX_DW(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_W(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define ST_W(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)

/* Every probe point runs this:
 *
 *	code = bpf_get_attach_cookie(ctx)
 *	c = counts[code]			per CPU: {seen, lost}
 *	if (c) c->seen++
 *	e = bpf_ringbuf_reserve(&ring, 24, 0)
 *	if (!e) { if (c) c->lost++; return 0 }
 *	*e = { bpf_ktime_get_ns(), bpf_get_current_pid_tgid(), code }
 *	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP)
 *
 * The clock is read before the reservation, as close to the trap as the
 * program can; the reader sorts what the CPUs interleave.  */
static size_t program(struct bpf_insn *p, int ring_fd, int counts_fd, int armed_fd)
{
	/* if (!armed[0]) return 0: the trace starts and ends at one instant, the
	 * flag's flip, not over the time links take to attach or close */
	struct bpf_insn gate[] = {
		MOV64_REG(BPF_REG_6, BPF_REG_1),
		ST_W(BPF_REG_10, -8, 0),
		LD_MAP(BPF_REG_1, armed_fd),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -8),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 39),		/* to the final return 0 */
		LDX_DW(BPF_REG_1, BPF_REG_0, 0),
		JEQ_IMM(BPF_REG_1, 0, 37),
		MOV64_REG(BPF_REG_1, BPF_REG_6),
	};
	struct bpf_insn prog[] = {
		CALL(HELPER_ATTACH_COOKIE),		/* r1 = ctx */
		MOV64_REG(BPF_REG_7, BPF_REG_0),	/* r7 = code */
		STX_W(BPF_REG_10, BPF_REG_7, -4),
		LD_MAP(BPF_REG_1, counts_fd),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		MOV64_REG(BPF_REG_6, BPF_REG_0),	/* r6 = counters or NULL */
		JEQ_IMM(BPF_REG_6, 0, 3),
		LDX_DW(BPF_REG_1, BPF_REG_6, 0),
		ADD64_IMM(BPF_REG_1, 1),
		STX_DW(BPF_REG_6, BPF_REG_1, 0),
		CALL(BPF_FUNC_ktime_get_ns),
		MOV64_REG(BPF_REG_9, BPF_REG_0),	/* r9 = ts */
		CALL(BPF_FUNC_get_current_pid_tgid),
		MOV64_REG(BPF_REG_8, BPF_REG_0),	/* r8 = pid_tgid */
		LD_MAP(BPF_REG_1, ring_fd),
		MOV64_IMM(BPF_REG_2, (int)sizeof(struct uprobes_event)),
		MOV64_IMM(BPF_REG_3, 0),
		CALL(HELPER_RINGBUF_RESERVE),
		JEQ_IMM(BPF_REG_0, 0, 9),
		STX_DW(BPF_REG_0, BPF_REG_9, 0),
		STX_DW(BPF_REG_0, BPF_REG_8, 8),
		STX_W(BPF_REG_0, BPF_REG_7, 16),
		ST_W(BPF_REG_0, 20, 0),
		MOV64_REG(BPF_REG_1, BPF_REG_0),
		MOV64_IMM(BPF_REG_2, RB_NO_WAKEUP),
		CALL(HELPER_RINGBUF_SUBMIT),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
		/* the ring is full: counted, per code */
		JEQ_IMM(BPF_REG_6, 0, 3),
		LDX_DW(BPF_REG_1, BPF_REG_6, 8),
		ADD64_IMM(BPF_REG_1, 1),
		STX_DW(BPF_REG_6, BPF_REG_1, 8),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	_Static_assert(sizeof(gate) / sizeof(gate[0]) == 11 && sizeof(prog) / sizeof(prog[0]) == 38,
		       "the gate's jumps land on the program's final return 0");
	memcpy(p, gate, sizeof(gate));
	memcpy(p + sizeof(gate) / sizeof(gate[0]), prog, sizeof(prog));
	return sizeof(gate) / sizeof(gate[0]) + sizeof(prog) / sizeof(prog[0]);
}

static int map_create(unsigned type, unsigned key, unsigned value, unsigned entries,
		      const char *name)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = entries;
	snprintf(a.map_name, sizeof(a.map_name), "%s", name);
	return (int)bpfmap_sys(BPF_MAP_CREATE, &a, sizeof(a));
}

static char verifier_log[8192];

static int prog_load(int ring_fd, int counts_fd, int armed_fd, struct bpfmap_err *err)
{
	struct bpf_insn insns[64];
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.expected_attach_type = ATTACH_UPROBE_MULTI;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)program(insns, ring_fd, counts_fd, armed_fd);
	a.license = (uint64_t)(uintptr_t)"GPL";
	snprintf(a.prog_name, sizeof(a.prog_name), "perun_uprobe");
	fd = (int)bpfmap_sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0)
		return fd;
	{
		int e = errno;
		a.log_buf = (uint64_t)(uintptr_t)verifier_log;
		a.log_size = sizeof(verifier_log);
		a.log_level = 1;
		verifier_log[0] = '\0';
		fd = (int)bpfmap_sys(BPF_PROG_LOAD, &a, sizeof(a));
		if (fd >= 0)
			return fd;
		errno = e;
		return bpfmap_fail(err, e, "bpf(BPF_PROG_LOAD)%s%.180s", verifier_log[0] ? " " : "",
			    verifier_log);
	}
}

/* --- setup ----------------------------------------------------------------- */

static size_t possible_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned a, b;

	/* "0-N" or "0": percpu maps have one slot per possible CPU */
	if (f) {
		int k = fscanf(f, "%u-%u", &a, &b);
		fclose(f);
		if (k == 2 && b >= a)
			return (size_t)b + 1;
		if (k == 1)
			return (size_t)a + 1;
	}
	return n > 0 ? (size_t)n : 1;
}

int uprobes_supported(struct bpfmap_err *err)
{
	struct uprobes *u = uprobes_new(2, 4096, err);

	if (!u)
		return 0;
	uprobes_free(u);
	return 1;
}

struct uprobes *uprobes_new(size_t ncodes, size_t ring_bytes, struct bpfmap_err *err)
{
	struct uprobes *u = calloc(1, sizeof(*u));
	size_t size;
	void *m;

	if (!u) {
		bpfmap_fail(err, ENOMEM, "calloc");
		return NULL;
	}
	u->ring_fd = u->counts_fd = u->armed_fd = u->prog_fd = -1;
	u->procs_fd = u->fork_prog_fd = u->fork_event_fd = -1;
	u->exec_prog_fd = u->exec_event_fd = -1;
	u->page = (size_t)sysconf(_SC_PAGESIZE);
	u->ncpus = possible_cpus();
	u->ncodes = ncodes ? ncodes : 1;
	for (size = u->page; size < ring_bytes && size < ((size_t)1 << 30); size <<= 1)
		;
	u->ring_size = size;
	u->ring_fd = map_create(MAP_RINGBUF, 0, 0, (unsigned)size, "perun_ring");
	if (u->ring_fd < 0) {
		bpfmap_fail(err, errno, "bpf(BPF_MAP_CREATE) of a %zu-byte ring buffer", size);
		goto bad;
	}
	u->counts_fd = map_create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 16, (unsigned)u->ncodes,
				  "perun_counts");
	if (u->counts_fd < 0) {
		bpfmap_fail(err, errno, "bpf(BPF_MAP_CREATE) of %zu per-CPU counters", u->ncodes);
		goto bad;
	}
	u->armed_fd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 1, "perun_armed");
	if (u->armed_fd < 0) {
		bpfmap_fail(err, errno, "bpf(BPF_MAP_CREATE) of the armed flag");
		goto bad;
	}
	u->prog_fd = prog_load(u->ring_fd, u->counts_fd, u->armed_fd, err);
	if (u->prog_fd < 0)
		goto bad;
	m = mmap(NULL, u->page, PROT_READ | PROT_WRITE, MAP_SHARED, u->ring_fd, 0);
	if (m == MAP_FAILED) {
		bpfmap_fail(err, errno, "mmap of the ring's consumer page");
		goto bad;
	}
	u->consumer = m;
	/* the data is mapped twice in a row, so a record never wraps */
	m = mmap(NULL, u->page + 2 * size, PROT_READ, MAP_SHARED, u->ring_fd, (off_t)u->page);
	if (m == MAP_FAILED) {
		bpfmap_fail(err, errno, "mmap of the ring's data");
		goto bad;
	}
	u->producer = m;
	u->data = (const unsigned char *)m + u->page;
	return u;
bad:
	uprobes_free(u);
	return NULL;
}

/* --- forks ----------------------------------------------------------------- */

/* The offset of "field:TYPE NAME;\toffset:N;" in a tracepoint's format
 * file, or -1.  */
static int tp_field_offset(const char *format, const char *name)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), " %s;", name);
	p = strstr(format, want);
	if (!p || !(p = strstr(p, "offset:")))
		return -1;
	return atoi(p + 7);
}

/* Reads a tracefs file of a sched tracepoint (events/sched/EVENT/NAME)
 * into buf; 0, or -1.  */
static int tp_read(const char *event, const char *name, char *buf, size_t n)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	size_t i;

	for (i = 0; i < 2; i++) {
		char path[128];
		FILE *f;
		size_t got;
		snprintf(path, sizeof(path), "%s/events/sched/%s/%s", roots[i], event, name);
		if (!(f = fopen(path, "re")))
			continue;
		got = fread(buf, 1, n - 1, f);
		fclose(f);
		buf[got] = '\0';
		return 0;
	}
	return -1;
}

/* Loads a tracepoint program named name; its fd, or -1 with the verifier's
 * word in err.  */
static int tp_prog_load(const struct bpf_insn *insns, size_t n, const char *name,
			struct bpfmap_err *err)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	snprintf(a.prog_name, sizeof(a.prog_name), "%s", name);
	a.log_buf = (uint64_t)(uintptr_t)verifier_log;
	a.log_size = sizeof(verifier_log);
	a.log_level = 1;
	verifier_log[0] = '\0';
	fd = (int)bpfmap_sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		return bpfmap_fail(err, errno, "bpf(BPF_PROG_LOAD) of %s %.180s", name, verifier_log);
	return fd;
}

/* A perf event on tracepoint id running prog; its fd, or -1.  */
static int tp_attach(int id, int prog, const char *what, struct bpfmap_err *err)
{
	struct perf_event_attr pa;
	int fd;

	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = (uint64_t)id;
	pa.sample_period = 1;
	pa.wakeup_events = 1;
	fd = (int)syscall(__NR_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return bpfmap_fail(err, errno, "perf_event_open of %s", what);
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int e = errno;
		close(fd);
		return bpfmap_fail(err, e, "ioctl(PERF_EVENT_IOC_SET_BPF) on %s", what);
	}
	return fd;
}

/* sched_process_exec in a traced process: {ts, pid_tgid, EXEC} into the
 * ring, waking the reader.  */
static int watch_execs(struct uprobes *u, struct bpfmap_err *err)
{
	char idtext[32];
	int id;
	struct bpf_insn prog[] = {
		CALL(BPF_FUNC_get_current_pid_tgid),
		MOV64_REG(BPF_REG_8, BPF_REG_0),	/* r8 = pid_tgid */
		MOV64_REG(BPF_REG_7, BPF_REG_0),
		RSH64_IMM(BPF_REG_7, 32),
		STX_W(BPF_REG_10, BPF_REG_7, -4),
		LD_MAP(BPF_REG_1, u->procs_fd),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -4),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 15),
		CALL(BPF_FUNC_ktime_get_ns),
		MOV64_REG(BPF_REG_9, BPF_REG_0),
		LD_MAP(BPF_REG_1, u->ring_fd),
		MOV64_IMM(BPF_REG_2, (int)sizeof(struct uprobes_event)),
		MOV64_IMM(BPF_REG_3, 0),
		CALL(HELPER_RINGBUF_RESERVE),
		JEQ_IMM(BPF_REG_0, 0, 7),
		STX_DW(BPF_REG_0, BPF_REG_9, 0),
		STX_DW(BPF_REG_0, BPF_REG_8, 8),
		ST_W(BPF_REG_0, 16, (int)UPROBES_EXEC_CODE),
		STX_W(BPF_REG_0, BPF_REG_7, 20),
		MOV64_REG(BPF_REG_1, BPF_REG_0),
		MOV64_IMM(BPF_REG_2, 0),
		CALL(HELPER_RINGBUF_SUBMIT),
		MOV64_IMM(BPF_REG_0, 0),
		EXIT(),
	};

	if (tp_read("sched_process_exec", "id", idtext, sizeof(idtext)) < 0 || (id = atoi(idtext)) <= 0)
		return bpfmap_fail(err, errno, "tracefs sched/sched_process_exec");
	u->exec_prog_fd = tp_prog_load(prog, sizeof(prog) / sizeof(prog[0]), "perun_exec", err);
	if (u->exec_prog_fd < 0)
		return -1;
	if ((u->exec_event_fd = tp_attach(id, u->exec_prog_fd, "sched_process_exec", err)) < 0)
		return -1;
	return 0;
}

int uprobes_watch_forks(struct uprobes *u, pid_t root, struct bpfmap_err *err)
{
	char format[4096], idtext[32];
	int child_off, id, key = (int)root, val = (int)root;
	union bpf_attr a;
	struct bpf_insn *insns;
	size_t n;

	if (tp_read("sched_process_fork", "format", format, sizeof(format)) < 0 ||
	    tp_read("sched_process_fork", "id", idtext, sizeof(idtext)) < 0)
		return bpfmap_fail(err, errno, "tracefs sched/sched_process_fork (is tracefs mounted?)");
	child_off = tp_field_offset(format, "child_pid");
	id = atoi(idtext);
	if (child_off < 8 || id <= 0)
		return bpfmap_fail(err, 0, "sched_process_fork: no child_pid field in its format");
	u->procs_fd = map_create(BPF_MAP_TYPE_HASH, 4, 4, 65536, "perun_procs");
	if (u->procs_fd < 0)
		return bpfmap_fail(err, errno, "bpf(BPF_MAP_CREATE) of the traced processes");
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)u->procs_fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&val;
	if (bpfmap_sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)) < 0)
		return bpfmap_fail(err, errno, "bpf(BPF_MAP_UPDATE_ELEM) of process %d", (int)root);
	{
		/* in the parent: if (procs[tgid]) { procs[child] = tgid; ring <- {ts,
		 * tgid << 32 | child, FORK} }; a thread's id goes in as well, and
		 * the reader tells threads from processes */
		struct bpf_insn prog[] = {
			MOV64_REG(BPF_REG_6, BPF_REG_1),
			CALL(BPF_FUNC_get_current_pid_tgid),
			MOV64_REG(BPF_REG_7, BPF_REG_0),
			RSH64_IMM(BPF_REG_7, 32),		/* r7 = tgid */
			STX_W(BPF_REG_10, BPF_REG_7, -4),
			LD_MAP(BPF_REG_1, u->procs_fd),
			MOV64_REG(BPF_REG_2, BPF_REG_10),
			ADD64_IMM(BPF_REG_2, -4),
			CALL(BPF_FUNC_map_lookup_elem),
			JEQ_IMM(BPF_REG_0, 0, 27),
			LDX_W(BPF_REG_8, BPF_REG_6, (short)child_off),	/* r8 = child */
			STX_W(BPF_REG_10, BPF_REG_8, -8),
			LD_MAP(BPF_REG_1, u->procs_fd),
			MOV64_REG(BPF_REG_2, BPF_REG_10),
			ADD64_IMM(BPF_REG_2, -8),
			MOV64_REG(BPF_REG_3, BPF_REG_10),
			ADD64_IMM(BPF_REG_3, -4),
			MOV64_IMM(BPF_REG_4, BPF_ANY),
			CALL(BPF_FUNC_map_update_elem),
			CALL(BPF_FUNC_ktime_get_ns),
			MOV64_REG(BPF_REG_9, BPF_REG_0),
			LD_MAP(BPF_REG_1, u->ring_fd),
			MOV64_IMM(BPF_REG_2, (int)sizeof(struct uprobes_event)),
			MOV64_IMM(BPF_REG_3, 0),
			CALL(HELPER_RINGBUF_RESERVE),
			JEQ_IMM(BPF_REG_0, 0, 9),
			STX_DW(BPF_REG_0, BPF_REG_9, 0),
			LSH64_IMM(BPF_REG_7, 32),
			OR64_REG(BPF_REG_7, BPF_REG_8),
			STX_DW(BPF_REG_0, BPF_REG_7, 8),
			ST_W(BPF_REG_0, 16, (int)UPROBES_FORK_CODE),
			STX_W(BPF_REG_0, BPF_REG_8, 20),
			MOV64_REG(BPF_REG_1, BPF_REG_0),
			MOV64_IMM(BPF_REG_2, 0),	/* wake the reader: attach soon */
			CALL(HELPER_RINGBUF_SUBMIT),
			MOV64_IMM(BPF_REG_0, 0),
			EXIT(),
		};
		n = sizeof(prog) / sizeof(prog[0]);
		insns = malloc(sizeof(prog));
		if (!insns)
			return bpfmap_fail(err, ENOMEM, "malloc");
		memcpy(insns, prog, sizeof(prog));
	}
	u->fork_prog_fd = tp_prog_load(insns, n, "perun_fork", err);
	free(insns);
	if (u->fork_prog_fd < 0)
		return -1;
	if ((u->fork_event_fd = tp_attach(id, u->fork_prog_fd, "sched_process_fork", err)) < 0)
		return -1;
	return watch_execs(u, err);
}

/* --- links ----------------------------------------------------------------- */

static int link_create(struct uprobes *u, const char *path, const uint64_t *offs,
		       const uint64_t *refs, const uint64_t *cookies, size_t n, int ret, pid_t pid)
{
	union {
		union bpf_attr a;
		struct link_uprobe_multi l;
	} attr;

	memset(&attr, 0, sizeof(attr));
	attr.l.prog_fd = (uint32_t)u->prog_fd;
	attr.l.attach_type = ATTACH_UPROBE_MULTI;
	attr.l.path = (uint64_t)(uintptr_t)path;
	attr.l.offsets = (uint64_t)(uintptr_t)offs;
	attr.l.ref_ctr_offsets = (uint64_t)(uintptr_t)refs;
	attr.l.cookies = (uint64_t)(uintptr_t)cookies;
	attr.l.cnt = (uint32_t)n;
	attr.l.multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	attr.l.pid = (uint32_t)pid;
	return (int)bpfmap_sys(BPF_LINK_CREATE, &attr, sizeof(attr));
}

static void keep_link(struct uprobes *u, int fd, pid_t pid, int ret)
{
	if (u->nlinks == u->alloc) {
		size_t na = u->alloc ? 2 * u->alloc : 16;
		struct link *nl = realloc(u->links, na * sizeof(*nl));
		if (!nl) {
			close(fd);
			return;
		}
		u->links = nl;
		u->alloc = na;
	}
	u->links[u->nlinks].pid = pid;
	u->links[u->nlinks].ret = ret;
	u->links[u->nlinks++].fd = fd;
}

void uprobes_detach_pid(struct uprobes *u, pid_t pid)
{
	size_t i, k;

	int pass;

	for (pass = 1; pass >= 0; pass--)	/* returns first, as uprobes_detach */
		for (i = 0; i < u->nlinks; i++)
			if (u->links[i].pid == pid && u->links[i].ret == pass)
				close(u->links[i].fd);
	for (i = k = 0; i < u->nlinks; i++)
		if (u->links[i].pid != pid)
			u->links[k++] = u->links[i];
	u->nlinks = k;
}

/* Attaches idx[0..n) of pts (one path and direction) as one link, or
 * splits it in halves while the kernel refuses; returns points attached.
 * *errnum gets the last refusal.  */
static size_t attach_group(struct uprobes *u, struct uprobes_point *pts, const size_t *idx,
			   size_t n, pid_t pid, int *errnum)
{
	uint64_t *offs, *cookies, *refs;
	size_t i, done = 0, nrefs = 0;
	int fd;

	if (!n)
		return 0;
	offs = malloc(n * sizeof(*offs));
	cookies = malloc(n * sizeof(*cookies));
	refs = malloc(n * sizeof(*refs));
	if (!offs || !cookies || !refs) {
		free(offs);
		free(cookies);
		free(refs);
		*errnum = ENOMEM;
		return 0;
	}
	for (i = 0; i < n; i++) {
		offs[i] = pts[idx[i]].offset;
		cookies[i] = pts[idx[i]].code;
		refs[i] = pts[idx[i]].ref_ctr;
		nrefs += refs[i] != 0;
	}
	fd = link_create(u, pts[idx[0]].path, offs, nrefs ? refs : NULL, cookies, n,
			 pts[idx[0]].ret, pid);
	free(offs);
	free(cookies);
	free(refs);
	if (fd >= 0) {
		keep_link(u, fd, pid, pts[idx[0]].ret);
		for (i = 0; i < n; i++)
			pts[idx[i]].attached = 1;
		return n;
	}
	*errnum = errno;
	if (n == 1 || errno == ESRCH || errno == ENOENT || errno == EPERM)
		return 0;
	done += attach_group(u, pts, idx, n / 2, pid, errnum);
	done += attach_group(u, pts, idx + n / 2, n - n / 2, pid, errnum);
	return done;
}

long uprobes_attach(struct uprobes *u, struct uprobes_point *pts, size_t n, pid_t pid,
		    struct bpfmap_err *err)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), i, j, k, total = 0;
	unsigned char *used = calloc(n ? n : 1, 1);
	int errnum = 0, pass;

	if (!idx || !used) {
		free(idx);
		free(used);
		return bpfmap_fail(err, ENOMEM, "malloc");
	}
	/* return probes first, then entries: a call cut by the attach then has
	 * a return and no entry (in flight at the attach), never the reverse */
	for (pass = 1; pass >= 0; pass--) {
		for (i = 0; i < n; i++) {
			if (used[i] || (int)pts[i].ret != pass)
				continue;
			/* every point of this path and direction */
			for (k = 0, j = i; j < n; j++) {
				if (!used[j] && pts[j].ret == pts[i].ret &&
				    !strcmp(pts[j].path, pts[i].path)) {
					used[j] = 1;
					idx[k++] = j;
				}
			}
			total += attach_group(u, pts, idx, k, pid, &errnum);
		}
	}
	free(idx);
	free(used);
	if (!total && n) {
		errno = errnum;
		return bpfmap_fail(err, errnum, "bpf(BPF_LINK_CREATE) of a uprobe_multi link%s",
			    errnum == ESRCH ? " (no such process)" : "");
	}
	return (long)total;
}

/* Threads that close links at once: closing a uprobe_multi link waits for
 * an RCU tasks-trace grace period (tens of ms), and closes that wait
 * together share one.  */
#define CLOSERS 64

struct closer {
	const struct link *links;
	size_t n, step;	/* closes links[0], links[step], ... below n */
	int ret;	/* of the links of this direction */
};

static void *close_links(void *arg)
{
	const struct closer *c = arg;
	size_t i;

	for (i = 0; i < c->n; i += c->step)
		if (c->links[i].ret == c->ret)
			close(c->links[i].fd);
	return NULL;
}

/* Closes the links of direction ret, CLOSERS at a time.  */
static void close_parallel(const struct link *links, size_t n, int ret)
{
	pthread_t tid[CLOSERS];
	struct closer c[CLOSERS];
	int started[CLOSERS];
	size_t k, nt = n < CLOSERS ? n : CLOSERS;

	for (k = 0; k < nt; k++) {
		c[k] = (struct closer){ links + k, n - k, nt, ret };
		started[k] = pthread_create(&tid[k], NULL, close_links, &c[k]) == 0;
		if (!started[k])
			close_links(&c[k]);
	}
	for (k = 0; k < nt; k++)
		if (started[k])
			pthread_join(tid[k], NULL);
}

void uprobes_detach(struct uprobes *u)
{
	/* return probes first: a call cut by the detach then has an entry and no
	 * return (in flight at the detach), never the reverse */
	close_parallel(u->links, u->nlinks, 1);
	close_parallel(u->links, u->nlinks, 0);
	u->nlinks = 0;
}

double uprobes_detach_cost(struct uprobes *u, const char *path, uint64_t offset)
{
	uint64_t cookie = 0;
	struct timespec a, b;
	int fd = link_create(u, path, &offset, NULL, &cookie, 1, 0, getpid());

	if (fd < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

int uprobes_arm(struct uprobes *u, int on, struct bpfmap_err *err)
{
	uint32_t key = 0;
	uint64_t val = on ? 1 : 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)u->armed_fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&val;
	if (bpfmap_sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)) < 0)
		return bpfmap_fail(err, errno, "bpf(BPF_MAP_UPDATE_ELEM) of the armed flag");
	return 0;
}

size_t uprobes_links(const struct uprobes *u)
{
	return u->nlinks;
}

/* --- the ring -------------------------------------------------------------- */

size_t uprobes_drain(struct uprobes *u, uprobes_event_fn fn, void *ctx)
{
	unsigned long cons = __atomic_load_n(u->consumer, __ATOMIC_ACQUIRE);
	unsigned long prod = __atomic_load_n(u->producer, __ATOMIC_ACQUIRE);
	size_t mask = u->ring_size - 1, n = 0;

	while (cons < prod) {
		const uint32_t *hdr = (const uint32_t *)(u->data + (cons & mask));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

		if (len & RB_BUSY)
			break;
		if (!(len & RB_DISCARD) && (len & ~(RB_BUSY | RB_DISCARD)) >= sizeof(struct uprobes_event)) {
			struct uprobes_event ev;
			memcpy(&ev, (const unsigned char *)hdr + RB_HDR, sizeof(ev));
			fn(ctx, &ev);
			n++;
		}
		cons += ((len & ~(RB_BUSY | RB_DISCARD)) + RB_HDR + 7) & ~(unsigned long)7;
		__atomic_store_n(u->consumer, cons, __ATOMIC_RELEASE);
		if (cons >= prod)
			prod = __atomic_load_n(u->producer, __ATOMIC_ACQUIRE);
	}
	return n;
}

int uprobes_counts(struct uprobes *u, uint32_t code, uint64_t *seen, uint64_t *lost,
		   struct bpfmap_err *err)
{
	uint64_t *v = calloc(u->ncpus * 2, sizeof(*v));
	union bpf_attr a;
	size_t i;

	*seen = *lost = 0;
	if (!v)
		return bpfmap_fail(err, ENOMEM, "calloc");
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)u->counts_fd;
	a.key = (uint64_t)(uintptr_t)&code;
	a.value = (uint64_t)(uintptr_t)v;
	if (bpfmap_sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) < 0) {
		free(v);
		return bpfmap_fail(err, errno, "bpf(BPF_MAP_LOOKUP_ELEM) of code %u's counters", code);
	}
	for (i = 0; i < u->ncpus; i++) {
		*seen += v[2 * i];
		*lost += v[2 * i + 1];
	}
	free(v);
	return 0;
}

void uprobes_free(struct uprobes *u)
{
	if (!u)
		return;
	uprobes_detach(u);
	free(u->links);
	if (u->producer)
		munmap((void *)u->producer, u->page + 2 * u->ring_size);
	if (u->consumer)
		munmap(u->consumer, u->page);
	{
		int fds[] = { u->exec_event_fd, u->exec_prog_fd, u->fork_event_fd, u->fork_prog_fd,
			      u->procs_fd, u->prog_fd, u->counts_fd, u->armed_fd, u->ring_fd };
		size_t i;
		for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	free(u);
}
