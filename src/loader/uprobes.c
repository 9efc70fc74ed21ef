/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "uprobes"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/bpfmap.h"
#include "loader/uprobes-modes.h"
#include "loader/uprobes.h"

/* What Debian 12's libbpf 1.1 and its 6.1 UAPI header do not define yet
 * (Linux 6.6).  */
#define ATTACH_UPROBE_MULTI 48		/* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN 1u		/* BPF_F_UPROBE_MULTI_RETURN */
#define RB_BUSY (1u << 31)
#define RB_DISCARD (1u << 30)
#define RB_HDR 8

/* bpf_attr.link_create for uprobe_multi, as Linux 6.6 lays it out.  */
struct link_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};

/* The object file of bpf/loader.bpf.c, embedded at build time.  */
extern const unsigned char perun_loader_bpf[];
extern const size_t perun_loader_bpf_len;

struct link {
	int fd;		/* -1 while every point of it is removed (relink) */
	pid_t pid;
	int ret;	/* return probes */
	/* with relink: its points, to make it again without some */
	const char *path;
	uint64_t *offs, *refs;
	uint32_t *codes;
	unsigned char *live;	/* per point: in the current link */
	size_t n;
	uint32_t slot, serial;
};

struct uprobes {
	struct bpf_object *obj;
	int ring_fd, counts_fd, armed_fd, procs_fd, prog_fd;
	struct bpf_program *fork_prog, *exec_prog;
	struct bpf_link *fork_link, *exec_link;	/* uprobes_watch_forks */
	struct bpf_link *exit_link;		/* aggregate mode */
	int aggregate, stacks_fd, aggs_fd, notes_fd, marks_fd;
	int fork_format;	/* 0, or the errno of reading the fork record's format */
	size_t ring_size, ncodes, ncpus;
	unsigned long *consumer;	/* mapped read-write */
	const unsigned long *producer;	/* mapped read-only, the data after it */
	const unsigned char *data;
	size_t page;
	struct link *links;
	size_t nlinks, alloc;
	/* the run-time methods (uprobes_new_modes), or all 0 */
	int relink;
	struct uprobes_probe *probes;	/* mapped perun_probes */
	size_t nprobes, probes_len;
	struct uprobes_clock *clock;	/* mapped perun_clock */
	int links_fd;			/* perun_links */
	uint32_t next_slot, next_serial;
};

/* --- libbpf's messages ----------------------------------------------------- */

/* libbpf's last warnings (the verifier's log among them), for the error
 * the caller prints: this library prints nothing of its own.  */
static char libbpf_said[1024];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(libbpf_said);
	char line[512];
	int k;

	if (level == LIBBPF_DEBUG)
		return 0;
	k = vsnprintf(line, sizeof(line), fmt, ap);
	if (k <= 0)
		return 0;
	if (n + strlen(line) >= sizeof(libbpf_said))
		n = 0;	/* keep the latest */
	snprintf(libbpf_said + n, sizeof(libbpf_said) - n, "%s", line);
	return 0;
}

/* libbpf's last words, on one line, at most 180 characters from their end.  */
static const char *libbpf_words(void)
{
	size_t n = strlen(libbpf_said), i;

	for (i = 0; i < n; i++)
		if (libbpf_said[i] == '\n' || libbpf_said[i] == '\t')
			libbpf_said[i] = ' ';
	while (n && libbpf_said[n - 1] == ' ')
		libbpf_said[--n] = '\0';
	return n > 180 ? libbpf_said + n - 180 : libbpf_said;
}

/* --- setup ----------------------------------------------------------------- */

static size_t possible_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? (size_t)n : 1;
}

int uprobes_supported(struct bpfmap_err *err)
{
	struct uprobes *u = uprobes_new(2, 4096, 0, err);

	if (!u)
		return 0;
	uprobes_free(u);
	return 1;
}

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

static int map_fd(struct uprobes *u, const char *name, struct bpfmap_err *err)
{
	struct bpf_map *m = bpf_object__find_map_by_name(u->obj, name);
	int fd = m ? bpf_map__fd(m) : -1;

	if (fd < 0)
		return bpfmap_fail(err, ENOENT, "the loader's program has no map %s", name);
	return fd;
}

/* Maps the methods' state (perun_probes, perun_clock) into this process:
 * the loader sets the probes and keeps the clock without a system call.  */
static int map_state(struct uprobes *u, struct bpfmap_err *err)
{
	size_t len = (u->nprobes * sizeof(struct uprobes_probe) + u->page - 1) / u->page * u->page;
	int pfd, cfd;
	void *m;

	if ((pfd = map_fd(u, "perun_probes", err)) < 0 || (cfd = map_fd(u, "perun_clock", err)) < 0)
		return -1;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	if (m == MAP_FAILED)
		return bpfmap_fail(err, errno, "mmap of the probes' state");
	u->probes = m;
	u->probes_len = len;
	m = mmap(NULL, u->page, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
	if (m == MAP_FAILED)
		return bpfmap_fail(err, errno, "mmap of the methods' clock");
	u->clock = m;
	return 0;
}

/* The byte offset of member (of size bytes) in struct type t, looked for
 * through its unnamed struct and union members too; -1 when it is not
 * there or not whole bytes.  */
static long btf_offset_in(const struct btf *btf, const struct btf_type *t, const char *member,
			  size_t size)
{
	const struct btf_member *m = btf_members(t);
	unsigned i;

	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		uint32_t bits = btf_member_bit_offset(t, i);
		int type = btf__resolve_type(btf, m->type);
		const struct btf_type *mt = type < 0 ? NULL : btf__type_by_id(btf, (uint32_t)type);
		long off;

		if (bits % 8 || !mt)
			continue;
		if (name && *name) {
			if (strcmp(name, member))
				continue;
			return btf__resolve_size(btf, m->type) == (long)size ? (long)(bits / 8) : -1;
		}
		if (btf_is_composite(mt) && (off = btf_offset_in(btf, mt, member, size)) >= 0)
			return (long)(bits / 8) + off;
	}
	return -1;
}

/* The path from a task to its program file's inode number and device
 * (struct uprobes_config.exe_off), from the running kernel's BTF; left 0
 * when the kernel has none or lays a struct out otherwise, and the exec
 * records then carry no file (the reader looks in /proc instead).  */
static void exe_offsets(uint32_t off[6])
{
	static const struct { const char *type, *member; size_t size; } path[6] = {
		{ "task_struct", "mm", sizeof(void *) },
		{ "mm_struct", "exe_file", sizeof(void *) },
		{ "file", "f_inode", sizeof(void *) },
		{ "inode", "i_ino", sizeof(__u64) },
		{ "inode", "i_sb", sizeof(void *) },
		{ "super_block", "s_dev", sizeof(__u32) },
	};
	struct btf *btf = btf__load_vmlinux_btf();
	uint32_t got[6];
	size_t i;

	if (!btf || libbpf_get_error(btf))
		return;
	for (i = 0; i < 6; i++) {
		int id = btf__find_by_name_kind(btf, path[i].type, BTF_KIND_STRUCT);
		long o = id < 0 ? -1 : btf_offset_in(btf, btf__type_by_id(btf, (uint32_t)id),
						    path[i].member, path[i].size);
		if (o < 0 || o > 65535)
			break;
		got[i] = (uint32_t)o;
	}
	btf__free(btf);
	if (i == 6)
		memcpy(off, got, sizeof(got));
}

/* Opens the embedded object, sizes its maps, sets its configuration and
 * loads it; 0, or -1.  */
static int load(struct uprobes *u, unsigned flags, const struct uprobes_modes *mo,
		size_t nprobes, struct bpfmap_err *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "perun");
	struct uprobes_config cfg;
	struct bpf_program *prog, *rec, *agg, *exit_prog;
	struct bpf_map *m;
	char format[4096];
	size_t size;
	int off;

	libbpf_set_print(libbpf_print);
	libbpf_said[0] = '\0';
	memset(&cfg, 0, sizeof(cfg));
	cfg.filter_traced = (flags & UPROBES_FILTER_TRACED) != 0;
	cfg.aggregate = u->aggregate;
	if (mo) {
		cfg.gated = 1;
		cfg.relink = u->relink = uprobes_modes_disarm(mo);
		cfg.threshold = mo->threshold;
		cfg.first_ticks = mo->reattach_ms ? uprobes_modes_first_ticks(mo) : 0;
		cfg.timed = mo->timed_ms != 0;
		cfg.budget = mo->budget_ns != 0;
	}
	if (tp_read("sched_process_fork", "format", format, sizeof(format)) < 0)
		u->fork_format = errno ? errno : ENOENT;
	else if ((off = tp_field_offset(format, "child_pid")) < 8)
		u->fork_format = EINVAL;
	else
		cfg.fork_child_off = (uint32_t)off;
	/* the exec record's file and path: without them, the reader looks in
	 * /proc, where a second exec may have replaced the first */
	if (tp_read("sched_process_exec", "format", format, sizeof(format)) == 0 &&
	    (off = tp_field_offset(format, "filename")) >= 8)
		cfg.exec_name_off = (uint32_t)off;
	exe_offsets(cfg.exe_off);
	u->obj = bpf_object__open_mem(perun_loader_bpf, perun_loader_bpf_len, &opts);
	if (!u->obj) {
		u->obj = NULL;
		return bpfmap_fail(err, errno, "bpf_object__open_mem of the loader's program %s",
				   libbpf_words());
	}
	rec = bpf_object__find_program_by_name(u->obj, "perun_uprobe");
	agg = bpf_object__find_program_by_name(u->obj, "perun_agg");
	exit_prog = bpf_object__find_program_by_name(u->obj, "perun_exit");
	u->fork_prog = bpf_object__find_program_by_name(u->obj, "perun_fork");
	u->exec_prog = bpf_object__find_program_by_name(u->obj, "perun_exec");
	if (!rec || !agg || !exit_prog || !u->fork_prog || !u->exec_prog)
		return bpfmap_fail(err, ENOENT, "the loader's object lacks a program");
	/* only what this mode runs is loaded */
	prog = u->aggregate ? agg : rec;
	bpf_program__set_autoload(u->aggregate ? rec : agg, false);
	bpf_program__set_autoload(exit_prog, u->aggregate);
	bpf_program__set_type(prog, BPF_PROG_TYPE_KPROBE);
	bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)ATTACH_UPROBE_MULTI);
	for (size = u->page; size < u->ring_size && size < ((size_t)1 << 30); size <<= 1)
		;
	u->ring_size = size;
	if (!(m = bpf_object__find_map_by_name(u->obj, "perun_ring")) ||
	    bpf_map__set_max_entries(m, (uint32_t)size) < 0)
		return bpfmap_fail(err, errno, "sizing the %zu-byte ring buffer", size);
	if (!(m = bpf_object__find_map_by_name(u->obj, "perun_counts")) ||
	    bpf_map__set_max_entries(m, (uint32_t)u->ncodes) < 0)
		return bpfmap_fail(err, errno, "sizing %zu per-CPU counters", u->ncodes);
	u->nprobes = mo ? (nprobes ? nprobes : 1) : 1;
	if (!(m = bpf_object__find_map_by_name(u->obj, "perun_probes")) ||
	    bpf_map__set_max_entries(m, (uint32_t)u->nprobes) < 0)
		return bpfmap_fail(err, errno, "sizing the state of %zu probes", u->nprobes);
	if (!u->relink && (!(m = bpf_object__find_map_by_name(u->obj, "perun_links")) ||
			   bpf_map__set_max_entries(m, 1) < 0))
		return bpfmap_fail(err, errno, "sizing the links' serials");
	if (!(m = bpf_object__find_map_by_name(u->obj, ".rodata.config")) ||
	    bpf_map__set_initial_value(m, &cfg, sizeof(cfg)) < 0)
		return bpfmap_fail(err, errno, "the loader's configuration (.rodata.config)");
	if (bpf_object__load(u->obj) < 0)
		return bpfmap_fail(err, errno, "bpf(BPF_PROG_LOAD) %s", libbpf_words());
	u->prog_fd = bpf_program__fd(prog);
	if ((u->ring_fd = map_fd(u, "perun_ring", err)) < 0 ||
	    (u->counts_fd = map_fd(u, "perun_counts", err)) < 0 ||
	    (u->armed_fd = map_fd(u, "perun_armed", err)) < 0 ||
	    (u->procs_fd = map_fd(u, "perun_procs", err)) < 0 ||
	    (u->links_fd = map_fd(u, "perun_links", err)) < 0 ||
	    (u->stacks_fd = map_fd(u, "perun_stacks", err)) < 0 ||
	    (u->aggs_fd = map_fd(u, "perun_aggs", err)) < 0 ||
	    (u->notes_fd = map_fd(u, "perun_agg_notes", err)) < 0 ||
	    (u->marks_fd = map_fd(u, "perun_marks", err)) < 0)
		return -1;
	if (u->aggregate) {
		u->exit_link = bpf_program__attach_tracepoint(exit_prog, "sched",
							      "sched_process_exit");
		if (!u->exit_link)
			return bpfmap_fail(err, errno, "attaching to sched_process_exit %s",
					   libbpf_words());
	}
	return mo ? map_state(u, err) : 0;
}

struct uprobes *uprobes_new(size_t ncodes, size_t ring_bytes, unsigned flags,
			    struct bpfmap_err *err)
{
	return uprobes_new_modes(ncodes, ring_bytes, flags, NULL, 0, err);
}

struct uprobes *uprobes_new_modes(size_t ncodes, size_t ring_bytes, unsigned flags,
				  const struct uprobes_modes *modes, size_t nprobes,
				  struct bpfmap_err *err)
{
	struct uprobes *u = calloc(1, sizeof(*u));
	void *m;

	if (!u) {
		bpfmap_fail(err, ENOMEM, "calloc");
		return NULL;
	}
	u->ring_fd = u->counts_fd = u->armed_fd = u->procs_fd = u->prog_fd = -1;
	u->stacks_fd = u->aggs_fd = u->notes_fd = u->marks_fd = -1;
	u->aggregate = (flags & UPROBES_AGGREGATE) != 0;
	u->page = (size_t)sysconf(_SC_PAGESIZE);
	u->ncpus = possible_cpus();
	u->ncodes = ncodes ? ncodes : 1;
	u->ring_size = ring_bytes;
	u->links_fd = -1;
	if (load(u, flags, modes, nprobes, err) < 0)
		goto bad;
	m = mmap(NULL, u->page, PROT_READ | PROT_WRITE, MAP_SHARED, u->ring_fd, 0);
	if (m == MAP_FAILED) {
		bpfmap_fail(err, errno, "mmap of the ring's consumer page");
		goto bad;
	}
	u->consumer = m;
	/* the data is mapped twice in a row, so a record never wraps */
	m = mmap(NULL, u->page + 2 * u->ring_size, PROT_READ, MAP_SHARED, u->ring_fd,
		 (off_t)u->page);
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

/* --- the traced set and forks ---------------------------------------------- */

int uprobes_trace_pid(struct uprobes *u, pid_t tgid, struct bpfmap_err *err)
{
	uint32_t key = (uint32_t)tgid, val = (uint32_t)tgid;

	if (bpf_map_update_elem(u->procs_fd, &key, &val, BPF_ANY) < 0)
		return bpfmap_fail(err, errno, "bpf(BPF_MAP_UPDATE_ELEM) of process %d", (int)tgid);
	return 0;
}

int uprobes_is_traced(struct uprobes *u, pid_t id)
{
	uint32_t key = (uint32_t)id, val;

	return bpf_map_lookup_elem(u->procs_fd, &key, &val) == 0;
}

void uprobes_untrace_pid(struct uprobes *u, pid_t id)
{
	uint32_t key = (uint32_t)id;

	bpf_map_delete_elem(u->procs_fd, &key);
}

int uprobes_watch_forks(struct uprobes *u, pid_t root, struct bpfmap_err *err)
{
	if (uprobes_trace_pid(u, root, err) < 0)
		return -1;
	if (u->fork_format)
		return bpfmap_fail(err, u->fork_format, "tracefs sched/sched_process_fork "
				   "(is tracefs mounted? it needs a child_pid field)");
	u->fork_link = bpf_program__attach_tracepoint(u->fork_prog, "sched", "sched_process_fork");
	if (!u->fork_link)
		return bpfmap_fail(err, errno, "attaching to sched_process_fork %s", libbpf_words());
	u->exec_link = bpf_program__attach_tracepoint(u->exec_prog, "sched", "sched_process_exec");
	if (!u->exec_link)
		return bpfmap_fail(err, errno, "attaching to sched_process_exec %s", libbpf_words());
	return 0;
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

/* Releases what a link keeps of its points.  */
static void link_release(struct link *l)
{
	free(l->offs);
	free(l->refs);
	free(l->codes);
	free(l->live);
}

/* Keeps link fd; with relink, its points too (slot and serial in l).  0,
 * or -1 when there is no memory for it (fd closed).  */
static int keep_link(struct uprobes *u, int fd, pid_t pid, int ret, const struct link *l)
{
	struct link *k;

	if (u->nlinks == u->alloc) {
		size_t na = u->alloc ? 2 * u->alloc : 16;
		struct link *nl = realloc(u->links, na * sizeof(*nl));
		if (!nl) {
			close(fd);
			return -1;
		}
		u->links = nl;
		u->alloc = na;
	}
	k = &u->links[u->nlinks++];
	memset(k, 0, sizeof(*k));
	if (l)
		*k = *l;
	k->pid = pid;
	k->ret = ret;
	k->fd = fd;
	return 0;
}

/* Makes slot's link the one that records: the program drops the hits of
 * the slot's other links from now on.  */
static int link_current(struct uprobes *u, uint32_t slot, uint32_t serial)
{
	return bpf_map_update_elem(u->links_fd, &slot, &serial, BPF_ANY);
}

void uprobes_detach_pid(struct uprobes *u, pid_t pid)
{
	size_t i, k;

	int pass;

	for (pass = 1; pass >= 0; pass--)	/* returns first, as uprobes_detach */
		for (i = 0; i < u->nlinks; i++)
			if (u->links[i].pid == pid && u->links[i].ret == pass && u->links[i].fd >= 0)
				close(u->links[i].fd);
	for (i = k = 0; i < u->nlinks; i++)
		if (u->links[i].pid != pid)
			u->links[k++] = u->links[i];
		else
			link_release(&u->links[i]);
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
	struct link l;
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
	memset(&l, 0, sizeof(l));
	if (u->relink) {
		l.slot = u->next_slot++ % UPROBES_LINK_SLOTS;
		l.serial = u->next_serial++ & 0xffff;
	}
	for (i = 0; i < n; i++) {
		offs[i] = pts[idx[i]].offset;
		cookies[i] = pts[idx[i]].code | (uint64_t)l.slot << 48 | (uint64_t)l.serial << 32;
		refs[i] = pts[idx[i]].ref_ctr;
		nrefs += refs[i] != 0;
	}
	if (u->relink && link_current(u, l.slot, l.serial) < 0)
		fd = -1;
	else
		fd = link_create(u, pts[idx[0]].path, offs, nrefs ? refs : NULL, cookies, n,
				 pts[idx[0]].ret, pid);
	free(cookies);
	if (fd >= 0 && u->relink) {
		/* what relink makes it again from */
		l.path = pts[idx[0]].path;
		l.offs = offs;
		l.refs = refs;
		l.n = n;
		l.codes = malloc(n * sizeof(*l.codes));
		l.live = malloc(n);
		if (l.codes && l.live) {
			for (i = 0; i < n; i++)
				l.codes[i] = pts[idx[i]].code;
			memset(l.live, 1, n);
			offs = refs = NULL;
		} else {
			free(l.codes);
			free(l.live);
			close(fd);
			fd = -1;
			errno = ENOMEM;
		}
	}
	free(offs);
	free(refs);
	if (fd >= 0) {
		if (keep_link(u, fd, pid, pts[idx[0]].ret, u->relink ? &l : NULL) < 0) {
			if (u->relink)
				link_release(&l);
			*errnum = ENOMEM;
			return 0;
		}
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
		if (c->links[i].ret == c->ret && c->links[i].fd >= 0)
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
	size_t i;

	/* return probes first: a call cut by the detach then has an entry and no
	 * return (in flight at the detach), never the reverse */
	close_parallel(u->links, u->nlinks, 1);
	close_parallel(u->links, u->nlinks, 0);
	for (i = 0; i < u->nlinks; i++)
		link_release(&u->links[i]);
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

/* --- the run-time methods -------------------------------------------------- */

struct uprobes_probe *uprobes_probe_state(struct uprobes *u)
{
	return u->probes;
}

struct uprobes_clock *uprobes_clock(struct uprobes *u)
{
	return u->clock;
}

/* Makes link l again with the points want keeps (none: closes it); the
 * new link records from the instant perun_links names it, the old one
 * goes after.  0, or -1 (the old link stays).  */
static int relink_one(struct uprobes *u, struct link *l, const unsigned char *want, size_t nwant)
{
	uint64_t *offs = malloc(l->n * sizeof(*offs)), *refs = malloc(l->n * sizeof(*refs));
	uint64_t *cookies = malloc(l->n * sizeof(*cookies));
	unsigned char *live = malloc(l->n);
	uint32_t serial = u->next_serial++ & 0xffff;
	size_t i, k = 0, nrefs = 0;
	int fd = -1, same = 1, e;

	if (!offs || !refs || !cookies || !live) {
		e = ENOMEM;
		goto fail;
	}
	for (i = 0; i < l->n; i++) {
		size_t id = (l->codes[i] & ~UPROBES_CODE_RETINSN) >> 1;
		live[i] = id >= nwant || want[id];
		same &= live[i] == l->live[i];
		if (!live[i])
			continue;
		offs[k] = l->offs[i];
		refs[k] = l->refs[i];
		nrefs += refs[k] != 0;
		cookies[k++] = l->codes[i] | (uint64_t)l->slot << 48 | (uint64_t)serial << 32;
	}
	if (same)
		goto done;
	if (k) {
		fd = link_create(u, l->path, offs, nrefs ? refs : NULL, cookies, k, l->ret, l->pid);
		if (fd < 0) {
			e = errno;
			goto fail;
		}
	}
	if (link_current(u, l->slot, serial) < 0) {
		e = errno;
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	if (l->fd >= 0)
		close(l->fd);
	l->fd = fd;
	l->serial = serial;
	memcpy(l->live, live, l->n);
done:
	free(offs);
	free(refs);
	free(cookies);
	free(live);
	return 0;
fail:
	free(offs);
	free(refs);
	free(cookies);
	free(live);
	errno = e;
	return -1;
}

int uprobes_relink(struct uprobes *u, const unsigned char *want, size_t nwant,
		   struct bpfmap_err *err)
{
	size_t i;
	int ret = 0;

	for (i = 0; u->relink && i < u->nlinks; i++)
		if (u->links[i].codes && relink_one(u, &u->links[i], want, nwant) < 0)
			ret = bpfmap_fail(err, errno, "bpf(BPF_LINK_CREATE) of a uprobe_multi link "
					  "without its disarmed probes (they stay attached)");
	return ret;
}

int uprobes_arm(struct uprobes *u, int on, struct bpfmap_err *err)
{
	uint32_t key = 0;
	uint64_t val = on ? 1 : 0;

	if (bpf_map_update_elem(u->armed_fd, &key, &val, BPF_ANY) < 0)
		return bpfmap_fail(err, errno, "bpf(BPF_MAP_UPDATE_ELEM) of the armed flag");
	return 0;
}

size_t uprobes_links(const struct uprobes *u)
{
	size_t i, n = 0;

	for (i = 0; i < u->nlinks; i++)
		n += u->links[i].fd >= 0;
	return n;
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
			/* an exec record is whole, or its file part is zero */
			struct uprobes_exec_event x;
			memcpy(&x.ev, (const unsigned char *)hdr + RB_HDR, sizeof(x.ev));
			if (x.ev.code == UPROBES_EXEC_CODE) {
				if ((len & ~(RB_BUSY | RB_DISCARD)) >= sizeof(x))
					memcpy(&x, (const unsigned char *)hdr + RB_HDR, sizeof(x));
				else
					memset((char *)&x + sizeof(x.ev), 0, sizeof(x) - sizeof(x.ev));
				x.name[sizeof(x.name) - 1] = '\0';
			}
			fn(ctx, &x.ev);
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
	struct uprobes_count *v = calloc(u->ncpus, sizeof(*v));
	size_t i;

	*seen = *lost = 0;
	if (!v)
		return bpfmap_fail(err, ENOMEM, "calloc");
	code &= UPROBES_CODE_MASK;
	if (bpf_map_lookup_elem(u->counts_fd, &code, v) < 0) {
		free(v);
		return bpfmap_fail(err, errno, "bpf(BPF_MAP_LOOKUP_ELEM) of code %u's counters", code);
	}
	for (i = 0; i < u->ncpus; i++) {
		*seen += v[i].seen;
		*lost += v[i].lost;
	}
	free(v);
	return 0;
}

/* --- aggregate mode -------------------------------------------------------- */

static int agg_cmp(const void *a, const void *b)
{
	const struct uprobes_agg *x = a, *y = b;

	if (x->key.tid != y->key.tid)
		return x->key.tid < y->key.tid ? -1 : 1;
	return x->key.id < y->key.id ? -1 : x->key.id > y->key.id;
}

/* Counts n calls of key without a duration in a[0 .. *len): a[0 .. sorted)
 * by agg_cmp, the rest added here.  0, or -1 out of memory.  */
static int open_call(struct uprobes_agg **a, size_t *len, size_t *alloc, size_t sorted,
		     struct uprobes_agg_key key, uint64_t n)
{
	struct uprobes_agg want, *hit, *na;
	size_t j;

	want.key = key;
	hit = sorted ? bsearch(&want, *a, sorted, sizeof(**a), agg_cmp) : NULL;
	for (j = sorted; !hit && j < *len; j++)
		if ((*a)[j].key.tid == key.tid && (*a)[j].key.id == key.id)
			hit = &(*a)[j];
	if (!hit) {
		if (*len == *alloc) {
			*alloc = *alloc ? 2 * *alloc : 256;
			if (!(na = realloc(*a, *alloc * sizeof(**a))))
				return -1;
			*a = na;
		}
		hit = &(*a)[(*len)++];
		memset(hit, 0, sizeof(*hit));
		hit->key = key;
	}
	hit->val.count += n;
	hit->val.untimed += n;
	return 0;
}

int uprobes_aggregates(struct uprobes *u, struct uprobes_agg **out, size_t *n,
		       uint64_t notes[UPROBES_AGG_NOTES], struct bpfmap_err *err)
{
	struct uprobes_agg *a = NULL, *na;
	struct uprobes_agg_stack st;
	struct uprobes_mark_stack ms;
	struct uprobes_agg_key k, next;
	uint32_t tid, ntid, i, w;
	size_t len = 0, alloc = 0, sorted;
	uint64_t *v = calloc(u->ncpus, sizeof(*v));
	int have;

	*out = NULL;
	*n = 0;
	if (!v)
		return bpfmap_fail(err, ENOMEM, "calloc");
	for (w = 0; w < UPROBES_AGG_NOTES; w++) {
		notes[w] = 0;
		if (bpf_map_lookup_elem(u->notes_fd, &w, v) == 0)
			for (i = 0; i < u->ncpus; i++)
				notes[w] += v[i];
	}
	free(v);
	for (have = bpf_map_get_next_key(u->aggs_fd, NULL, &next) == 0; have;
	     have = bpf_map_get_next_key(u->aggs_fd, &k, &next) == 0) {
		k = next;
		if (len == alloc) {
			alloc = alloc ? 2 * alloc : 256;
			if (!(na = realloc(a, alloc * sizeof(*a))))
				goto nomem;
			a = na;
		}
		if (bpf_map_lookup_elem(u->aggs_fd, &k, &a[len].val) < 0)
			continue;	/* gone meanwhile: a thread's summaries are never deleted */
		a[len++].key = k;
	}
	qsort(a, len, sizeof(*a), agg_cmp);
	/* the frames and USDT pairs still open when the trace ended: counted,
	 * no duration */
	sorted = len;
	for (have = bpf_map_get_next_key(u->stacks_fd, NULL, &ntid) == 0; have;
	     have = bpf_map_get_next_key(u->stacks_fd, &tid, &ntid) == 0) {
		tid = ntid;
		if (bpf_map_lookup_elem(u->stacks_fd, &tid, &st) < 0)
			continue;
		for (i = 0; i < st.depth && i < UPROBES_AGG_DEPTH; i++) {
			struct uprobes_agg_key open = { tid, st.f[i].id };
			if (open_call(&a, &len, &alloc, sorted, open, 1) < 0)
				goto nomem;
			notes[UPROBES_AGG_OPEN]++;
		}
	}
	for (have = bpf_map_get_next_key(u->marks_fd, NULL, &next) == 0; have;
	     have = bpf_map_get_next_key(u->marks_fd, &k, &next) == 0) {
		k = next;
		if (bpf_map_lookup_elem(u->marks_fd, &k, &ms) < 0 || !ms.depth)
			continue;
		if (open_call(&a, &len, &alloc, sorted, k, ms.depth) < 0)
			goto nomem;
		notes[UPROBES_AGG_OPEN] += ms.depth;
	}
	*out = a;
	*n = len;
	return 0;
nomem:
	free(a);
	return bpfmap_fail(err, ENOMEM, "realloc");
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
	if (u->probes)
		munmap(u->probes, u->probes_len);
	if (u->clock)
		munmap(u->clock, u->page);
	bpf_link__destroy(u->exit_link);
	bpf_link__destroy(u->exec_link);
	bpf_link__destroy(u->fork_link);
	bpf_object__close(u->obj);	/* the programs and maps */
	free(u);
}
