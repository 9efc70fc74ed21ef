/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun-uprobes: the bpf runtime's loader that perun runs in place of
 * stapbpf when the kernel has uprobe_multi links (loader/uprobes.h).
 *
 *   perun-uprobes -x PID -o RAW [-a ATTACHED] [-b RING_BYTES] [-w] [-A] [-F] [-G] [-P]
 *                 [-m KEY=VALUE]... PLAN
 *
 * (loader/args.h is the contract: the one place this argv is written and
 * read.)  Attaches the function probes of PLAN to process PID only, writes the raw
 * stream (tapsets/perun.stp: s, r, CODE TID TS events with 64-bit times, l
 * lines for events lost to a full ring, q) to RAW while the process runs,
 * and detaches on SIGINT/SIGTERM or when PID exits (-w: do not wait for
 * that, the driver signals).  ATTACHED gets one uprobe_events-style line
 * per probe point attached.  -A: once armed, say so on stderr in a line
 * beginning "perun: attached" (attach mode).  -F: the processes PID starts
 * (and they start) are traced too, each from its first instruction: the
 * probes go on every process of the binaries and record only the traced
 * set's members, which a child joins in the kernel before it runs (j
 * lines name them, i lines their execs); without -F the probes are bound
 * to PID, and its children are counted (j lines).
 * -G: --aggregate: the kernel keeps the count, total, min, max and log2
 * histogram per thread and function (loader/uprobes.h), written at the end
 * as the n/m/x/y/h lines of tapsets/perun.stp, and no events.
 * -P: progress lines for perun.
 * -m: a run-time method's setting (loader/uprobes-modes.h): with one, or a
 * probe of the plan sampled (NAME#N), every probe goes through the
 * methods' gate, and the probes a method disarms leave the kernel until
 * they may record again; the methods' o lines end the stream (not with
 * -G).  Nothing outlives it: the links, the ring
 * and the program are file descriptors, which the kernel releases when this
 * process ends, however it ends.  */
#include "config.h"

#define PR_FMT "perun-uprobes"

#include <errno.h>
#include <linux/magic.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "binary/cfg.h"
#include "binary/exits.h"
#include "binary/target.h"
#include "loader/args.h"
#include "loader/retpair.h"
#include "loader/uprobes-modes.h"
#include "loader/uprobes.h"
#include "plan/plan.h"
#include "util/fs.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CLOCK_MONOTONIC in ns, the clock of bpf_ktime_get_ns().  */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The tids seen so far (an open-addressing set), for the p lines.  */
struct tids {
	uint32_t *slot;
	size_t n, cap;
};

static int tids_add(struct tids *t, uint32_t tid)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		struct tids old = *t;
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->slot = calloc(t->cap, sizeof(*t->slot));
		t->n = 0;
		if (!t->slot) {
			fprintf(stderr, "perun-uprobes: out of memory\n");
			exit(1);
		}
		for (i = 0; i < old.cap; i++)
			if (old.slot[i])
				tids_add(t, old.slot[i]);
		free(old.slot);
	}
	for (i = (tid * 2654435761u) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (t->slot[i] == tid)
			return 0;
	t->slot[i] = tid;
	t->n++;
	return 1;
}

static int tids_has(const struct tids *t, uint32_t tid)
{
	size_t i;

	if (!t->cap)
		return 0;
	for (i = (tid * 2654435761u) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (t->slot[i] == tid)
			return 1;
	return 0;
}

/* A task a traced process started that ended before the loader could read
 * its /proc entry: a thread or a process, told at the end by its events.  */
struct gone_task {
	uint32_t child, parent;
};

/* execs of programs without a probed function named on standard error */
#define UNPROBED_EXECS_NAMED 5

struct out {
	FILE *f;
	uint32_t target;
	struct tids tids;
	struct tids procs;	/* the processes whose events came (tgids) */
	/* forks of traced processes: followed (-F) or counted */
	struct uprobes *u;
	struct uprobes_point *pts;
	size_t npts;
	int follow;
	uint64_t followed, untraced, follow_failed;
	uint64_t unprobed_execs;	/* execs of programs with no probed function */
	struct gone_task *gone;	/* tasks that ended before they were looked at */
	size_t ngone, gone_alloc;
	uint64_t unknown;	/* of those, the ones no event showed to be processes */
	uint64_t *written;	/* per code */
	size_t ncodes;
	struct retpair *rp;	/* the function probes' returns, paired by stack pointer */
	uint64_t unknown_codes;
	struct uprobes_run *run;	/* the run-time methods, or NULL */
	char buf[1 << 16];
	size_t len;
	int dirty;	/* written to f since its last fflush */
};

static char *put_hex(char *p, uint64_t v, char c)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 60;

	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(v >> shift) & 0xf];
	*p++ = c;
	return p;
}

static void flush_out(struct out *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len) {
		fprintf(stderr, "perun-uprobes: writing the raw stream: %s\n", strerror(errno));
		stop_signal = SIGTERM;
	}
	o->dirty |= o->len != 0;
	o->len = 0;
}

/* A step of the loader's end: a clock tick line (k TS) goes to the file at
 * once, so the driver sees the stream grow while the loader works (on a
 * busy host its end can outlast the driver's stop grace).  */
static void say_working(struct out *o)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	flush_out(o);
	fprintf(o->f, "k %" PRIx64 "\n", (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec);
	fflush(o->f);
	o->dirty = 0;
}

/* While the ring is empty: what was drained goes to the file, so that the
 * driver sees the stream grow and a loader killed on a busy host leaves
 * the events it had.  */
static void sync_out(struct out *o)
{
	flush_out(o);
	if (o->dirty && fflush(o->f) != 0) {
		fprintf(stderr, "perun-uprobes: writing the raw stream: %s\n", strerror(errno));
		stop_signal = SIGTERM;
	}
	o->dirty = 0;
}

/* The Tgid of task tid, from /proc; -1 when it is gone.  */
static long task_tgid(uint32_t tid)
{
	char path[64], line[128];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* 1 when path is on btrfs.  */
static int dev_is_btrfs(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == BTRFS_SUPER_MAGIC;
}

/* Whether the file of inode ino on a filesystem of device dev (the
 * kernel's encoding, major << 20 | minor; or -1 for any, with st_dev in
 * *sdev) is one of the probed binaries (the points' paths); a probed
 * library counts for any program, which may load it after its exec (ld.so
 * maps it later).  The device is matched when it can be: a btrfs
 * subvolume's files report a device of their own, not their
 * superblock's, so the inode alone decides there.  */
static int probes_file(const struct out *o, uint64_t ino, int64_t dev, dev_t sdev)
{
	struct stat bs;
	size_t i;

	for (i = 0; i < o->npts; i++) {
		if (i && !strcmp(o->pts[i].path, o->pts[i - 1].path))
			continue;
		if (strstr(fs_basename(o->pts[i].path), ".so"))
			return 1;
		if (stat(o->pts[i].path, &bs) < 0 || (uint64_t)bs.st_ino != ino)
			continue;
		if (dev < 0 ? bs.st_dev == sdev
			    : (major(bs.st_dev) == ((uint64_t)dev >> 20) &&
			       minor(bs.st_dev) == ((uint64_t)dev & 0xfffff)) ||
			      dev_is_btrfs(o->pts[i].path))
			return 1;
	}
	return 0;
}

/* A traced process ran exec.  The probes stay on the binaries' files and
 * the process in the traced set: while it runs a probed binary, from the
 * new program's first instruction, it is traced; another program has none
 * of the probed functions.  The record names the new program's file as the
 * kernel saw it at the exec (/proc may show a later exec's by now: a
 * shell's "exec PROGRAM"); on a kernel whose layout the loader did not
 * find, /proc decides.  "i PID PROBED" goes into the stream.  */
static void on_exec(struct out *o, const struct uprobes_event *ev)
{
	const struct uprobes_exec_event *x = (const struct uprobes_exec_event *)ev;
	uint32_t pid = (uint32_t)(ev->pid_tgid >> 32);
	char path[64], exe[256];
	struct stat st;
	ssize_t len;
	int probed, now;

	if (!o->follow && pid != o->target)
		return;	/* not ours */
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	now = stat(path, &st) == 0;
	if (x->ino) {
		probed = probes_file(o, x->ino, x->dev, 0);
		/* /proc's name only while the process runs that file */
		if (!now || (uint64_t)st.st_ino != x->ino)
			snprintf(exe, sizeof(exe), "%s", x->name);
	} else {
		probed = now ? probes_file(o, (uint64_t)st.st_ino, -1, st.st_dev) : -1;
	}
	/* named for the first few: a service that runs a helper program per
	 * request would fill the terminal; trace.execs lists each */
	if (probed == 0 && ++o->unprobed_execs <= UNPROBED_EXECS_NAMED)
		fprintf(stderr, "perun: process %u executed %s, which has no probed function: "
				"it is traced again if it executes a probed binary%s\n",
			pid, exe[0] ? exe : "another program",
			o->unprobed_execs == UNPROBED_EXECS_NAMED
				? " (further such execs are not named here; trace.execs lists each)"
				: "");
	if (o->len > sizeof(o->buf) - 128)
		flush_out(o);
	o->len += (size_t)snprintf(o->buf + o->len, sizeof(o->buf) - o->len, "i %x %x\n", pid,
				   probed != 0);
}

/* "j CHILD PARENT NS FOLLOWED": process child of parent, traced from NS
 * after its fork when followed.  */
static void put_child(struct out *o, uint32_t child, uint32_t parent, double ns, int followed)
{
	if (o->len > sizeof(o->buf) - 128)
		flush_out(o);
	o->len += (size_t)snprintf(o->buf + o->len, sizeof(o->buf) - o->len, "j %x %x %lx %x\n",
				   child, parent, (unsigned long)(ns > 0 ? ns : 0), followed);
}

/* A traced process started task child: a thread of its own (nothing to
 * do: its events carry the process's id), or a process.  -F traces the
 * process from its first instruction: the fork program put it in the
 * traced set before it ran, and the probes, on every process of the
 * binaries, record the set's members; it is checked to be there.  Without
 * -F the links are bound to the root, and the process is counted as
 * untraced.  A task that ended before its /proc entry could be read is
 * told at the end, by whether events came from a process of its id.  */
static void on_fork(struct out *o, const struct uprobes_event *ev)
{
	uint32_t child = ev->pad, parent = (uint32_t)(ev->pid_tgid >> 32);
	long tgid = task_tgid(child);
	/* the fork program adds every new task; only a full set refuses one */
	int in_set = o->follow && uprobes_is_traced(o->u, (pid_t)child) == 1;

	if (tgid >= 0 && tgid != (long)child) {
		/* a new thread: its events carry its process's id, which is in
		 * the set; its own id need not stay there, where a process could
		 * take it over once the thread ends */
		if (in_set)
			uprobes_untrace_pid(o->u, (pid_t)child);
		return;
	}
	if (o->follow && !in_set) {
		o->follow_failed++;
		fprintf(stderr, "perun: warning: --follow: %s %u (started by %u) could not join "
				"the traced set (%d processes at most): its calls are not recorded\n",
			tgid < 0 ? "task" : "process", child, parent, UPROBES_PROCS_MAX);
		put_child(o, child, parent, 0, 0);
		return;
	}
	if (tgid < 0) {
		if (o->ngone == o->gone_alloc) {
			o->gone_alloc = o->gone_alloc ? 2 * o->gone_alloc : 64;
			o->gone = realloc(o->gone, o->gone_alloc * sizeof(*o->gone));
			if (!o->gone) {
				fprintf(stderr, "perun-uprobes: out of memory\n");
				exit(1);
			}
		}
		o->gone[o->ngone++] = (struct gone_task){ child, parent };
		return;
	}
	if (o->follow)
		o->followed++;
	else
		o->untraced++;
	put_child(o, child, parent, 0, o->follow);
}

/* The tasks that ended before they were looked at: a process whose events
 * came is a child (followed: it was in the traced set, or no event would
 * have come); a task whose events carried another process's id was a
 * thread; the others, threads or processes that left no event, are only
 * counted.  */
static void resolve_gone(struct out *o)
{
	size_t i;

	for (i = 0; i < o->ngone; i++) {
		if (!tids_has(&o->procs, o->gone[i].child)) {
			if (!tids_has(&o->tids, o->gone[i].child))
				o->unknown++;
			continue;
		}
		put_child(o, o->gone[i].child, o->gone[i].parent, 0, o->follow);
		if (o->follow)
			o->followed++;
		else
			o->untraced++;
	}
}

/* One line of the stream: CODE TID TS, or u CODE TID TS WHY (retpair.h).  */
static void put_line(void *ctx, const struct retpair_line *l)
{
	struct out *o = ctx;
	char *p;

	if (o->len > sizeof(o->buf) - 128)
		flush_out(o);
	p = o->buf + o->len;
	if (l->kind == 'u') {
		*p++ = 'u';
		*p++ = ' ';
	}
	p = put_hex(p, l->code, ' ');
	p = put_hex(p, (uint32_t)(l->tid - o->target), ' ');
	p = put_hex(p, l->ts, l->kind == 'u' ? ' ' : '\n');
	if (l->kind == 'u')
		p = put_hex(p, l->why, '\n');
	o->len = (size_t)(p - o->buf);
}

/* CODE TID TS, as tapsets/perun.stp describes it, with all 64 bits of TS,
 * a function's returns paired by stack pointer (retpair.h); before a
 * thread's first event, "p TID PID" names its process.  */
static void on_event(void *ctx, const struct uprobes_event *ev)
{
	struct out *o = ctx;
	uint32_t tid = (uint32_t)ev->pid_tgid, code = ev->code & ~UPROBES_CODE_RETINSN;

	if (ev->code == UPROBES_FORK_CODE) {
		on_fork(o, ev);
		return;
	}
	if (ev->code == UPROBES_DISARM_CODE) {
		if (o->run)
			o->run->dirty = 1;	/* the loader looks which probes may go */
		return;
	}
	if (ev->code == UPROBES_EXEC_CODE) {
		on_exec(o, ev);
		return;
	}
	if (o->len > sizeof(o->buf) - 128)
		flush_out(o);
	if (tids_add(&o->tids, tid)) {
		char *p = o->buf + o->len;
		tids_add(&o->procs, (uint32_t)(ev->pid_tgid >> 32));
		*p++ = 'p';
		*p++ = ' ';
		p = put_hex(p, (uint32_t)(tid - o->target), ' ');
		p = put_hex(p, ev->pid_tgid >> 32, '\n');
		o->len = (size_t)(p - o->buf);
	}
	retpair_event(o->rp, tid, ev->code, ev->pad, ev->ts, put_line, o);
	if (code < o->ncodes)
		o->written[code]++;
	else
		o->unknown_codes++;
}

static void grow(struct uprobes_point **pts, size_t want, size_t *alloc)
{
	if (want <= *alloc)
		return;
	*alloc = want * 2 + 16;
	*pts = realloc(*pts, *alloc * sizeof(**pts));
	if (!*pts) {
		fprintf(stderr, "perun-uprobes: out of memory\n");
		exit(1);
	}
}

/* A USDT probe's points: every site of its mark (code id * 2) and, for a
 * begin/end pair, of its end mark (id * 2 + 1), each with its semaphore
 * when the mark was named, read from the binary's .note.stapsdt.  The targets stay loaded: the
 * points name their paths.  */
/* The binaries whose USDT notes were read; the points name their paths.  */
static struct target *loaded;
static size_t nloaded;

/* The binary at path, read once; NULL when it cannot be.  */
static struct target *target_of(const char *path)
{
	size_t i;

	for (i = 0; i < nloaded; i++)
		if (!strcmp(loaded[i].path, path))
			return &loaded[i];
	loaded = realloc(loaded, (nloaded + 1) * sizeof(*loaded));
	if (!loaded || target_load(&loaded[nloaded], path, NULL) < 0)
		return NULL;
	return &loaded[nloaded++];
}

static int usdt_points(const struct probe *pr, struct uprobes_point **pts, size_t *npts,
		       size_t *alloc)
{
	const char *colon = strchr(pr->name, ':');
	size_t plen = colon ? (size_t)(colon - pr->name) : 0, i;
	struct target *t = target_of(pr->binary);

	if (!t) {
		fprintf(stderr, "perun-uprobes: cannot read the USDT notes of %s\n", pr->binary);
		return -1;
	}
	for (i = 0; i < t->nusdts; i++) {
		const struct usdt *u = &t->usdts[i];
		int end;
		if (colon && (strlen(u->provider) != plen || strncmp(u->provider, pr->name, plen)))
			continue;
		if (pr->mark && !strcmp(u->name, pr->mark))
			end = 0;
		else if (pr->mark_end && !strcmp(u->name, pr->mark_end))
			end = 1;
		else
			continue;
		grow(pts, *npts + 1, alloc);
		/* a semaphore makes the program compute the mark's arguments: it
		 * changes what runs (python3.11d asserts), so it is raised only for
		 * marks named with -u; others fire where something else raised it */
		(*pts)[(*npts)++] = (struct uprobes_point){
			t->path, target_file_offset(t, u->pc),
			u->sema && (pr->flags & PROBE_F_NAMED) ? target_file_offset(t, u->sema) : 0,
			(uint32_t)pr->id * 2 + (uint32_t)end, 0, 0 };
	}
	return 0;
}

/* A source line's points: where SystemTap's statement probe goes, the
 * first address of the line in each function; a point like a USDT mark's
 * (code id * 2, no return).  */
static int line_points(const struct probe *pr, struct uprobes_point **pts, size_t *npts,
		       size_t *alloc)
{
	struct target *t = target_of(pr->binary);
	uint64_t *addrs = NULL;
	size_t n, i;

	if (!t) {
		fprintf(stderr, "perun-uprobes: cannot read the line table of %s\n", pr->binary);
		return -1;
	}
	n = target_line_addrs(t, pr->file, pr->line, &addrs);
	for (i = 0; i < n; i++) {
		grow(pts, *npts + 1, alloc);
		(*pts)[(*npts)++] = (struct uprobes_point){
			t->path, target_file_offset(t, addrs[i]), 0, (uint32_t)pr->id * 2, 0, 0 };
	}
	free(addrs);
	return 0;
}

/* What finds return instructions: a disassembler and each binary open.  */
struct exits_ctx {
	struct cfg_disasm *d;
	const char *path;	/* of fd */
	int fd;
};

/* The return points of function probe pr: its uretprobe when the plan
 * allows one (PROBE_F_RET_UPROBE: a fraction of the cost); else a probe on
 * each of its return instructions (code id * 2 + 1 with
 * UPROBES_CODE_RETINSN), which sees its returns at any depth, when
 * binary/exits finds them all; else its uretprobe.  kinds[pr->id] says
 * which.  */
static void return_points(const struct probe *pr, struct uprobes_point **pts, size_t *npts,
			  size_t *alloc, unsigned char *kinds, struct exits_ctx *x)
{
	struct target *t = x->d ? target_of(pr->binary) : NULL;
	const struct func *f = t ? target_func_at(t, pr->addr) : NULL;
	uint64_t *offs = NULL;
	long n = 0, k;

	if (pr->flags & PROBE_F_RET_UPROBE)
		f = NULL;
	if (f && x->path != t->path) {
		if (x->fd >= 0)
			close(x->fd);
		x->fd = open(t->path, O_RDONLY | O_CLOEXEC);
		x->path = t->path;
	}
	if (f && x->fd >= 0 && target_file_offset(t, f->addr) == pr->foff)
		n = target_func_exits(t, f, x->fd, x->d, &offs);
	if (n <= 0 && t && (t->exceptions || t->go)) {
		/* a uretprobe would break unwinding through it: no return probe
		 * (collect plans such a function entry-only; this is a plan that
		 * did not) */
		kinds[pr->id] = RETPAIR_OFF;
		return;
	}
	if (n <= 0) {
		kinds[pr->id] = RETPAIR_URET;
		grow(pts, *npts + 1, alloc);
		(*pts)[(*npts)++] = (struct uprobes_point){ pr->binary, pr->foff, 0,
							    (uint32_t)pr->id * 2 + 1, 1, 0 };
		return;
	}
	kinds[pr->id] = RETPAIR_INSN;
	grow(pts, *npts + (size_t)n, alloc);
	for (k = 0; k < n; k++)
		(*pts)[(*npts)++] = (struct uprobes_point){
			pr->binary, offs[k], 0, ((uint32_t)pr->id * 2 + 1) | UPROBES_CODE_RETINSN, 0,
			0 };
	free(offs);
}

/* True when every return instruction point of code (id * 2 + 1) attached.  */
static int insn_points_attached(const struct uprobes_point *pts, size_t n, uint32_t code)
{
	size_t i, seen = 0;

	for (i = 0; i < n; i++)
		if (pts[i].code == (code | UPROBES_CODE_RETINSN)) {
			if (!pts[i].attached)
				return 0;
			seen++;
		}
	return seen > 0;
}

/* What --follow costs, for the attach line: the probes are on every
 * process of the probed binaries, and the program drops the events of
 * those not traced, so each of those pays a trap per probed call.  */
static void follow_cost(char *buf, size_t size, const struct uprobes_point *pts, size_t n)
{
	size_t i, len;

	len = (size_t)snprintf(buf, size, "--follow: other processes of ");
	for (i = 0; i < n && len + 64 < size; i++) {
		size_t k;
		for (k = 0; k < i && strcmp(pts[k].path, pts[i].path); k++)
			;
		if (k == i)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
						pts[i].path);
	}
	if (len < size)
		snprintf(buf + len, size - len, " pay a trap per probed call (not recorded) while "
			 "perun is attached");
}

/* The ring's size in MiB, as uprobes_new rounds it.  */
static size_t ring_mib(unsigned long long bytes)
{
	unsigned long long size = 4096;

	while (size < bytes && size < (1ull << 30))
		size <<= 1;
	return (size_t)((size + (1 << 20) - 1) >> 20);
}

/* The gate's settings of every probe id: its sampling, whether it is a
 * point, what a recorded call costs the budget.  0, or -1 (said).  */
static int set_probes(struct uprobes *u, const struct plan *plan, const struct uprobes_modes *m,
		      const unsigned char *kinds)
{
	struct uprobes_probe *st = uprobes_probe_state(u);
	unsigned char *stepped = m->budget_ns ? plan_stepped(plan) : NULL;
	size_t i;

	if (!st) {
		fprintf(stderr, "perun-uprobes: the probes' state is not mapped\n");
		free(stepped);
		return -1;
	}
	for (i = 0; i < plan->n; i++) {
		const struct probe *pr = &plan->probes[i];
		size_t id = (size_t)pr->id;
		if (pr->id < 0 || id >= plan->n)
			continue;
		st[id].sampling = pr->sampling ? pr->sampling : 1;
		st[id].point = probe_is_point(pr) ? 1 : 0;
		/* as the stap script counts it: a point is half a pair */
		st[id].cost_ns = st[id].point ? (m->call_ns + 1) / 2 : m->call_ns;
		if (stepped && stepped[i])
			st[id].cost_ns += m->stepped_ns;
		if (kinds[id] == RETPAIR_INSN)
			st[id].cost_ns += m->insn_ns;
	}
	free(stepped);
	return 0;
}

/* Aggregate mode's end: the kernel's summaries as tapsets/perun.stp's
 * n/m/x/y/h lines (TID as the kernel names the thread), and what had no
 * duration, said.  0, or -1.  */
static int dump_aggregates(struct out *o, struct uprobes *u)
{
	struct bpfmap_err err = { "" };
	struct uprobes_agg *a;
	uint64_t notes[UPROBES_AGG_NOTES], untimed;	/* uint64_t: PRIu64 */
	size_t n, i;
	int b;

	if (uprobes_aggregates(u, &a, &n, notes, &err) < 0) {
		fprintf(stderr, "perun-uprobes: %s\n", err.msg);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct uprobes_agg_value *v = &a[i].val;
		uint32_t tid = a[i].key.tid, id = a[i].key.id;
		if (!v->count)
			continue;
		uint64_t sum = v->sum, max = v->max, min = v->min;
		fprintf(o->f, "n %x %x %" PRIx64 "\n", tid, id, (uint64_t)v->count);
		fprintf(o->f, "m %x %x %" PRIx64 " %" PRIx64 "\n", tid, id, sum >> 32, sum & 0xffffffffu);
		fprintf(o->f, "x %x %x %" PRIx64 " %" PRIx64 "\n", tid, id, max >> 32, max & 0xffffffffu);
		fprintf(o->f, "y %x %x %" PRIx64 " %" PRIx64 "\n", tid, id, min >> 32, min & 0xffffffffu);
		for (b = 0; b < 64; b++)
			if (v->hist[b])
				fprintf(o->f, "h %x %x %x %" PRIx64 "\n", tid, id, b,
					(uint64_t)v->hist[b]);
	}
	free(a);
	untimed = notes[UPROBES_AGG_NO_STACK] + notes[UPROBES_AGG_TOO_DEEP] +
		  notes[UPROBES_AGG_UNWOUND] + notes[UPROBES_AGG_OPEN] + notes[UPROBES_AGG_MARK_DEEP];
	if (untimed)
		fprintf(stderr, "perun: %" PRIu64 " calls are counted without a duration: "
				"%" PRIu64 " unwound past (longjmp, an exception) or without a return "
				"probe (the kernel keeps at most 64 pending per thread), %" PRIu64 " still "
				"open when their thread or the trace ended, %" PRIu64 " entered deeper "
				"than %d traced frames, %" PRIu64 " in threads beyond the %d that get "
				"a shadow stack at once, %" PRIu64 " USDT pairs begun with %d of "
				"theirs open or beyond the %d kept open\n",
			untimed, notes[UPROBES_AGG_UNWOUND], notes[UPROBES_AGG_OPEN],
			notes[UPROBES_AGG_TOO_DEEP], UPROBES_AGG_DEPTH, notes[UPROBES_AGG_NO_STACK],
			UPROBES_AGG_THREADS, notes[UPROBES_AGG_MARK_DEEP], UPROBES_MARK_DEPTH, UPROBES_AGG_RECORDS);
	if (notes[UPROBES_AGG_NO_RECORD])
		fprintf(stderr, "perun: warning: %" PRIu64 " events were not counted: the kernel "
				"keeps at most %d summaries (thread and function)\n",
			notes[UPROBES_AGG_NO_RECORD], UPROBES_AGG_RECORDS);
	return 0;
}

/* One progress line for perun (-P): "perun-progress: MS EVENTS LOST", the
 * milliseconds since the probes were armed, the events read from the ring
 * and the events lost so far.  */
static void say_progress(struct out *o, double armed)
{
	uint64_t events = 0, lost_all = 0, seen, lost;
	struct bpfmap_err err = { "" };
	size_t i;

	for (i = 0; i < o->ncodes; i++) {
		events += o->written[i];
		if (uprobes_counts(o->u, (uint32_t)i, &seen, &lost, &err) == 0)
			lost_all += lost;
	}
	fprintf(stderr, "perun-progress: %.0f %" PRIu64 " %" PRIu64 "\n", (now_s() - armed) * 1e3,
		events, lost_all);
}

/* Milliseconds with the digits that matter: "120", "4.2", "0.31".  */
static const char *ms(double seconds, char *buf, size_t size)
{
	double v = seconds * 1e3;

	snprintf(buf, size, v >= 10 ? "%.0f" : v >= 1 ? "%.1f" : "%.2f", v);
	return buf;
}

/* What uprobes_detach will take: a grace period (gp, measured; 50 ms when
 * it could not be) per round, a round per direction and per 64 links.  */
static double detach_estimate(const struct uprobes *u, double gp)
{
	size_t n = uprobes_links(u);

	return (gp >= 0 ? gp : 0.05) * 2 * (double)((n + 63) / 64 ? (n + 63) / 64 : 1);
}

int main(int argc, char **argv)
{
	struct loader_args args;
	const char *raw, *attached_path, *plan_path;
	unsigned long long ring;
	long pid;
	int wait_exit, pidfd = -1, ret = 1, announce, follow, progress, aggregate;
	struct plan plan;
	struct uprobes_point *pts = NULL;
	struct uprobes *u = NULL;
	struct bpfmap_err err = { "" };
	struct out *o = NULL;
	size_t npts = 0, alloc = 0, i, ncodes, nrefused = 0;
	struct uprobes_point *refused = NULL;
	unsigned char *kinds = NULL;	/* per probe: enum retpair_kind */
	struct exits_ctx ex = { NULL, NULL, -1 };
	long nattached;
	double t0, t1, armed, next_progress, gp = -1;
	char m1[32], m2[32];
	struct timespec ts0;
	struct sigaction sa;
	uint64_t lost_total = 0, missing_total = 0;
	struct uprobes_modes modes;
	struct uprobes_run run;
	int gated;
	char cost[1024];

	memset(&run, 0, sizeof(run));
	setlinebuf(stderr);
	if (loader_args_parse(argc, argv, &args, &pid) < 0)
		return 2;
	raw = args.raw;
	attached_path = args.attached;
	plan_path = args.plan;
	ring = args.ring;
	wait_exit = !args.driver_signals;
	announce = args.announce;
	follow = args.follow;
	aggregate = args.aggregate;
	progress = args.progress;
	modes = args.modes;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	plan_init(&plan);
	if (plan_load(&plan, plan_path) < 0) {
		fprintf(stderr, "perun-uprobes: cannot read the probe plan %s\n", plan_path);
		return 1;
	}
	ncodes = plan.n * 2 + 2;
	kinds = calloc(plan.n ? plan.n : 1, 1);
	if (!kinds || cfg_disasm_new(&ex.d) < 0) {
		/* no disassembler: every return by its uretprobe */
		fprintf(stderr, "perun-uprobes: return instructions cannot be found: calls "
				"past the kernel's 64 pending return probes get no duration\n");
		ex.d = NULL;
	}
	if (!kinds)
		return 1;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->written = calloc(ncodes, sizeof(*o->written)))) {
		fprintf(stderr, "perun-uprobes: out of memory\n");
		return 1;
	}
	o->ncodes = ncodes;
	o->target = (uint32_t)pid;
	for (i = 0; i < plan.n; i++) {
		const struct probe *pr = &plan.probes[i];
		if ((pr->kind == PROBE_USDT_PAIR || pr->kind == PROBE_USDT_POINT) && pr->binary) {
			size_t from = npts, j;
			if (usdt_points(pr, &pts, &npts, &alloc) < 0)
				return 1;
			/* a pair's marks are paired by their order, a point's
			 * counted */
			for (j = from; aggregate && j < npts; j++)
				pts[j].code |= pr->kind == PROBE_USDT_PAIR ? UPROBES_CODE_MARK
									   : UPROBES_CODE_POINT;
			continue;
		}
		if (pr->kind == PROBE_LINE && pr->binary && pr->file) {
			size_t from = npts, j;
			if (line_points(pr, &pts, &npts, &alloc) < 0)
				return 1;
			for (j = from; aggregate && j < npts; j++)
				pts[j].code |= UPROBES_CODE_POINT;
			continue;
		}
		if (pr->kind != PROBE_FUNC || !pr->binary)
			continue;
		grow(&pts, npts + 2, &alloc);
		if (plan_insn_refused(pr->binary, pr->foff)) {
			/* the kernel would take it and never fire it: not attached */
			refused = realloc(refused, (nrefused + 2) * sizeof(*refused));
			if (!refused)
				return 1;
			refused[nrefused++] = (struct uprobes_point){ pr->binary, pr->foff, 0, 0, 0, 0 };
			if (!(pr->flags & PROBE_F_ENTRY_ONLY))
				refused[nrefused++] = (struct uprobes_point){ pr->binary, pr->foff, 0, 0,
									      1, 0 };
			continue;
		}
		pts[npts++] = (struct uprobes_point){
			pr->binary, pr->foff, 0,
			(uint32_t)pr->id * 2 |
				(aggregate && (pr->flags & PROBE_F_ENTRY_ONLY) ? UPROBES_CODE_POINT : 0),
			0, 0 };
		if (!(pr->flags & PROBE_F_ENTRY_ONLY))
			return_points(pr, &pts, &npts, &alloc, kinds, &ex);
	}
	if (ex.fd >= 0)
		close(ex.fd);
	cfg_disasm_free(ex.d);
	o->rp = retpair_new(plan.n, kinds);

	{
		int fd = open(raw, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
			fprintf(stderr, "perun-uprobes: cannot create %s: %s\n", raw, strerror(errno));
			return 1;
		}
		setvbuf(o->f, NULL, _IOFBF, 1 << 20);
	}
	if (wait_exit) {
		pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
		if (pidfd < 0) {
			fprintf(stderr, "perun-uprobes: process %ld: %s\n", pid, strerror(errno));
			return 1;
		}
	}
	/* the methods' gate, when a method or a sampled probe needs it */
	gated = uprobes_modes_disarm(&modes);
	for (i = 0; i < plan.n; i++)
		gated |= plan.probes[i].sampling > 1;
	if (gated && aggregate) {
		fprintf(stderr, "perun-uprobes: -G: the run-time methods and per-function sampling "
				"are not aggregated here\n");
		return 1;
	}
	if (aggregate && ring > (1u << 20))
		ring = 1u << 20;	/* it carries only fork and exec records */
	/* -F: the probes go on every process of the binaries and record the
	 * traced set's members, which a child joins before its first
	 * instruction; otherwise they are bound to the process */
	u = uprobes_new_modes(ncodes, (size_t)ring,
			      (follow ? UPROBES_FILTER_TRACED : 0) | (aggregate ? UPROBES_AGGREGATE : 0),
			      gated ? &modes : NULL, plan.n, &err);
	if (!u) {
		fprintf(stderr, "perun-uprobes: %s\n", err.msg);
		return 1;
	}
	if (gated && set_probes(u, &plan, &modes, kinds) < 0)
		goto out;
	o->u = u;
	o->follow = follow;
	if (uprobes_watch_forks(u, (pid_t)pid, &err) < 0) {
		if (follow) {
			fprintf(stderr, "perun-uprobes: --follow: %s\n", err.msg);
			goto out;
		}
		fprintf(stderr, "perun-uprobes: children will not be counted: %s\n", err.msg);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	{
		uint64_t base = (uint64_t)ts0.tv_sec * 1000000000ull + (uint64_t)ts0.tv_nsec;
		/* flag 1: the returns are paired here, at any depth */
		fprintf(o->f, "s %lx %" PRIx64 " %" PRIx64 " 1\n", pid, base >> 32,
			(uint64_t)(base & 0xffffffffu));
	}
	/* a grace period, measured before the target has a probe: what each
	 * round of the detach waits */
	if (announce && npts)
		gp = uprobes_detach_cost(u, pts[0].path, pts[0].offset);
	t0 = now_s();
	nattached = uprobes_attach(u, pts, npts, follow ? 0 : (pid_t)pid, &err);
	t1 = now_s();
	o->pts = pts;
	o->npts = npts;
	if (nattached < 0) {
		fprintf(stderr, "perun-uprobes: %s\n", err.msg);
		goto out;
	}
	if (attached_path) {
		FILE *a = NULL;
		int fd = open(attached_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			a = fdopen(fd, "w");
		if (!a) {
			fprintf(stderr, "perun-uprobes: cannot create %s: %s\n", attached_path,
				strerror(errno));
			goto out;
		}
		/* the form of tracefs uprobe_events, which plan.c matches; the
		 * points left out for a LOCK or segment prefix go in too, so that
		 * the match names that reason */
		for (i = 0; i < npts; i++)
			if (pts[i].attached && !(pts[i].code & UPROBES_CODE_RETINSN))
				fprintf(a, "%c:uprobes/stapprobe_0_%zu %s:0x%" PRIx64 "\n",
					pts[i].ret ? 'r' : 'p', i, pts[i].path, pts[i].offset);
		/* a function's return probe is its return instructions', all of them */
		for (i = 0; i < plan.n; i++)
			if (kinds[i] == RETPAIR_INSN &&
			    insn_points_attached(pts, npts, (uint32_t)i * 2 + 1))
				fprintf(a, "r:uprobes/stapprobe_0_i%zu %s:0x%" PRIx64 "\n", i,
					plan.probes[i].binary, plan.probes[i].foff);
		for (i = 0; i < nrefused; i++)
			fprintf(a, "%c:uprobes/stapprobe_0_r%zu %s:0x%" PRIx64 "\n",
				refused[i].ret ? 'r' : 'p', i, refused[i].path, refused[i].offset);
		fclose(a);
	}
	/* what an attach costs, said when it is done, so a script waiting for
	 * "perun: attached" knows the probes are armed */
	cost[0] = '\0';
	if (follow)
		follow_cost(cost, sizeof(cost), pts, npts);
	if (announce)
		fprintf(stderr, "perun: attached %ld of %zu probe points to process %ld in %s ms "
				"(%zu uprobe_multi links, a %zu MiB ring buffer); detaching will take "
				"about %s ms; Ctrl-C detaches and writes the profile, and the process "
				"runs on%s%s\n",
			nattached, npts, pid, ms(t1 - t0, m1, sizeof(m1)), uprobes_links(u),
			ring_mib(ring), ms(detach_estimate(u, gp), m2, sizeof(m2)),
			cost[0] ? "; " : "", cost);
	else if (follow)
		fprintf(stderr, "perun: %s\n", cost);
	if (!announce)
		fprintf(stderr, "perun-uprobes: attached %ld of %zu probe points to process %ld "
				"with %zu links in %.3f s\n",
			nattached, npts, pid, uprobes_links(u), t1 - t0);
	if (gated) {
		uprobes_run_init(&run, &modes, uprobes_probe_state(u), plan.n, uprobes_clock(u),
				 now_s(), now_ns());
		if (!run.want) {
			fprintf(stderr, "perun-uprobes: out of memory\n");
			goto out;
		}
		o->run = &run;
	}
	if (uprobes_arm(u, 1, &err) < 0) {
		fprintf(stderr, "perun-uprobes: %s\n", err.msg);
		goto out;
	}
	fputs("r\n", o->f);
	fflush(o->f);
	armed = now_s();
	next_progress = armed + 1;

	/* drain while the process runs: the ring is read every millisecond or
	 * at once while it has more */
	while (!stop_signal) {
		size_t n = uprobes_drain(u, on_event, o);
		if (o->run) {
			/* the methods' clock, and the probes they disarmed leave
			 * the kernel (or come back) */
			uprobes_run_clock(o->run, now_s());
			if (uprobes_run_want(o->run) &&
			    uprobes_relink(u, o->run->want, o->run->n, &err) < 0)
				fprintf(stderr, "perun-uprobes: warning: %s\n", err.msg);
		}
		if (pidfd >= 0) {
			struct pollfd pfd = { pidfd, POLLIN, 0 };
			if (poll(&pfd, 1, n ? 0 : 1) > 0)
				break;	/* it exited */
		} else if (!n) {
			struct timespec d = { 0, 1000000 };
			nanosleep(&d, NULL);
		}
		if (!n)
			sync_out(o);
		if (progress && now_s() >= next_progress) {
			say_progress(o, armed);
			next_progress = now_s() + 1;
		}
	}
	/* the trace ends here, for every probe at once; the links go after */
	if (uprobes_arm(u, 0, &err) < 0)
		fprintf(stderr, "perun-uprobes: %s\n", err.msg);
	say_working(o);
	t0 = now_s();
	uprobes_detach(u);
	t1 = now_s();
	say_working(o);
	uprobes_drain(u, on_event, o);
	resolve_gone(o);
	flush_out(o);
	/* the kernel counted what it saw: lost events by code, and any event
	 * that reached neither the ring nor the lost count (none should) */
	for (i = 0; i < ncodes; i++) {
		uint64_t seen, lost, miss = 0;
		if (uprobes_counts(u, (uint32_t)i, &seen, &lost, &err) < 0) {
			fprintf(stderr, "perun-uprobes: %s\n", err.msg);
			goto out;
		}
		if (!aggregate && seen > lost + o->written[i])
			miss = seen - lost - o->written[i];
		if (lost + miss)
			fprintf(o->f, "l 0 %zx %" PRIx64 "\n", i, lost + miss);
		lost_total += lost;
		missing_total += miss;
	}
	if (aggregate && dump_aggregates(o, u) < 0)
		goto out;
	if (o->run)
		uprobes_run_report(o->run, o->f);
	fputs("q\n", o->f);
	if (fflush(o->f) != 0) {
		fprintf(stderr, "perun-uprobes: writing %s: %s\n", raw, strerror(errno));
		goto out;
	}
	if (announce)
		fprintf(stderr, "perun: detached %zu probe points in %s ms\n", npts,
			ms(t1 - t0, m1, sizeof(m1)));
	else
		fprintf(stderr, "perun-uprobes: detached %zu probe points in %.3f s\n", npts, t1 - t0);
	if (o->run && (o->run->removed || o->run->restored))
		fprintf(stderr, "perun: removed %" PRIu64 " disarmed probe%s from the kernel "
				"(put back %" PRIu64 " time%s)\n",
			o->run->removed, o->run->removed == 1 ? "" : "s", o->run->restored,
			o->run->restored == 1 ? "" : "s");
	if (o->followed || o->follow_failed)
		fprintf(stderr, "perun: followed %" PRIu64 " child process%s from %s first "
				"instruction%s\n",
			o->followed, o->followed == 1 ? "" : "es", o->followed == 1 ? "its" : "their",
			o->follow_failed ? " (some could not be traced: see above)" : "");
	if (o->unknown && !o->follow)
		fprintf(stderr, "perun: %" PRIu64 " task%s the process started ended before perun "
				"could tell a thread from a process, and made no traced call%s\n",
			o->unknown, o->unknown == 1 ? "" : "s",
			" (a child process among them would have run untraced)");
	if (lost_total)
		fprintf(stderr, "perun-uprobes: %" PRIu64 " events found the ring buffer full "
				"(counted per function; a larger --buffer-size keeps them)\n", lost_total);
	if (missing_total)
		fprintf(stderr, "perun-uprobes: %" PRIu64 " events seen by the probes never "
				"reached the ring (counted as lost)\n", missing_total);
	ret = 0;
out:
	uprobes_run_release(&run);
	uprobes_free(u);
	if (o && o->f)
		fclose(o->f);
	if (o) {
		free(o->written);
		free(o->tids.slot);
		free(o->procs.slot);
		free(o->gone);
	}
	if (o)
		retpair_free(o->rp);
	free(o);
	free(pts);
	free(refused);
	free(kinds);
	for (i = 0; i < nloaded; i++)
		target_release(&loaded[i]);
	free(loaded);
	plan_release(&plan);
	return ret;
}
