/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The run phase: the runtime (stapbpf or staprun) runs the module around the
 * command; the fast read empties the bpf recorder.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary/target.h"
#include "bpf/bpfmap.h"
#include "collect/session.h"
#include "loader/args.h"
#include "loader/uprobes.h"
#include "render/loader.h"
#include "runtime/driver.h"
#include "runtime/runtime.h"
#include "util/fs.h"
#include "util/log.h"

const char *collect_exit_desc(int exited, int status, char *buf, size_t n)
{
	if (exited)
		snprintf(buf, n, "exit %d", status);
	else
		snprintf(buf, n, "signal %d (%s)", status, strsignal(status));
	return buf;
}

/* Most failed probes named on stderr (all of them go to the profile).  */
#define MAX_FAILED_SHOWN 10

/* What the runtime attached, from its uprobe_events lines saved when it was
 * ready: prints "attached A of P probe points" and the failures, and returns
 * {planned, attached, failed: [...]} for collector_info.  */
static struct json_object *report_attached(struct session *s, const char *path,
					   size_t *attached)
{
	struct strbuf sb = STRBUF_INIT;
	struct probe_attach *att = xcalloc(s->plan.n ? s->plan.n : 1, sizeof(*att));
	struct json_object *j = json_object_new_object(), *fl = json_object_new_array();
	size_t planned = plan_probe_points(&s->plan), nfail, i, ninsn = 0, nuret = 0;
	char **lines, kinds[160] = "";

	strbuf_read_file(&sb, path);
	*attached = plan_match_uprobe_events(&s->plan, strbuf_str(&sb), -1, att);
	nfail = plan_attach_failures(&s->plan, att, s->uprobes != NULL, &lines);
	if (s->uprobes) {
		free(s->ret_insn);
		s->ret_insn = xcalloc(s->plan.n ? s->plan.n : 1, 1);
		for (i = 0; i < s->plan.n; i++) {
			s->ret_insn[i] = att[i].ret_insn;
			ninsn += att[i].ret_insn;
			nuret += att[i].ret && !att[i].ret_insn;
		}
	}
	/* perun's loader: which returns cost a step out of line */
	if (ninsn)
		snprintf(kinds, sizeof(kinds), " (returns: %zu by uretprobe, %zu on their return "
			 "instructions, exact at any depth and a trap more per call)", nuret, ninsn);
	/* an attach said it when the probes were armed */
	if ((!s->o->quiet && s->o->pid <= 0) || *attached < planned)
		log_msg(0, "perun", "attached %zu of %zu probe points%s%s", *attached, planned,
			kinds, nfail ? "; not attached:" : "");
	for (i = 0; i < nfail; i++) {
		if (i < MAX_FAILED_SHOWN)
			log_msg(0, "perun", "  %s", lines[i]);
		json_object_array_add(fl, json_object_new_string(lines[i]));
		free(lines[i]);
	}
	if (nfail > MAX_FAILED_SHOWN)
		log_msg(0, "perun", "  ... and %zu more (collector_info.probes.failed)",
			nfail - MAX_FAILED_SHOWN);
	free(lines);
	free(att);
	strbuf_release(&sb);
	json_object_object_add(j, "planned", json_object_new_int64((int64_t)planned));
	json_object_object_add(j, "attached", json_object_new_int64((int64_t)*attached));
	json_object_object_add(j, "failed", fl);
	return j;
}

/* What stapbpf prints when its perf reader gave up: nothing more arrives.  */
static const char *const runtime_fatal_lines[] = {
	"printf already started", "printf not started", "wrong number of printf args",
	"printf format is missing", "could not read from perf_event buffer",
	"unknown perf_event type", NULL,
};

/* The fast read of the bpf recorder: in the supervisor, once the target has
 * ended, perun reads and deletes the runtime's __perun_buf in batches and
 * writes "v TID SEQ HI LO" lines to trace.rec, as the end probe would (its
 * foreach then finds the map empty).  Any failure leaves the rest to the end
 * probe and is said in the watchdog log only.  */
struct fast_read {
	char *path;		/* <tmpdir>/trace.rec */
	size_t slots;		/* max_entries of __perun_buf */
	struct watchdog *wd;
	FILE *f;
};

/* v in lowercase hex without leading zeros, then c; returns the end.  */
static char *put_hex(char *p, uint32_t v, char c)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 28;

	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = digits[(v >> shift) & 0xf];
	*p++ = c;
	return p;
}

/* "v TID SEQ HI LO" per entry, as the end probe's printf("%x") writes them;
 * by hand, as fprintf costs more than the batch read itself.  */
static int fast_read_batch(void *ctx, const uint64_t *keys, const uint64_t *vals, size_t n)
{
	struct fast_read *fr = ctx;
	char buf[64 * 256], *p = buf;
	size_t i;

	for (i = 0; i < n; i++) {
		*p++ = 'v';
		*p++ = ' ';
		p = put_hex(p, (uint32_t)(keys[i] >> 32), ' ');
		p = put_hex(p, (uint32_t)keys[i], ' ');
		p = put_hex(p, (uint32_t)(vals[i] >> 32), ' ');
		p = put_hex(p, (uint32_t)vals[i], '\n');
		if (p - buf > (ptrdiff_t)sizeof(buf) - 64 || i + 1 == n) {
			if (fwrite(buf, 1, (size_t)(p - buf), fr->f) != (size_t)(p - buf))
				return -1;
			p = buf;
		}
	}
	return 0;
}

static int fast_read(pid_t runtime_pid, void *ctx)
{
	struct fast_read *fr = ctx;
	struct bpfmap_err err = { "" };
	struct bpfmap_info *maps = NULL;
	const struct bpfmap_info *m = NULL;
	const char *how = "-";
	size_t n = 0, count = 0;
	double t0 = collect_now();
	int mfd = -1, ofd, ret = 1;

	if (bpfmap_list(runtime_pid, &maps, &n, &err) < 0 ||
	    !(m = bpfmap_find_u64_hash(maps, n, (unsigned)fr->slots, &err)) ||
	    (mfd = bpfmap_open_id(m->id, &err)) < 0)
		goto out;
	ofd = open(fr->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (ofd < 0 || !(fr->f = fdopen(ofd, "w"))) {
		snprintf(err.msg, sizeof(err.msg), "open %s: %s", fr->path, strerror(errno));
		if (ofd >= 0)
			close(ofd);
		goto out;
	}
	setvbuf(fr->f, NULL, _IOFBF, 1 << 20);
	ret = bpfmap_drain_u64(mfd, fast_read_batch, fr, &count, &how, &err) < 0;
	if (fclose(fr->f) != 0 && !ret) {
		snprintf(err.msg, sizeof(err.msg), "write %s: %s", fr->path, strerror(errno));
		ret = 1;
	}
	fr->f = NULL;
out:
	if (ret)
		collect_wd(fr->wd, "fast read: %s; %zu entries read (%s), the end probe writes the rest",
		   err.msg, count, how);
	else
		collect_wd(fr->wd, "fast read: %zu entries of map %u read and deleted in %.3f s (%s)", count,
		   m->id, collect_now() - t0, how);
	if (mfd >= 0)
		close(mfd);
	free(maps);
	return ret;
}

/* Why not perun's loader, for what is known before the plan: or NULL.  */
static const char *loader_refusal_early(struct session *s)
{
	if (s->runtime != RUNTIME_BPF)
		return "it serves the bpf runtime only";
	if (s->o->compile_only)
		return "--compile-only builds a stap module";
	if (s->o->one_module)
		return "--one-module needs stap's module";
	if (collect_script_mode(s) == SCRIPT_PRINT)
		return "--transport print is stapbpf's";
	return NULL;
}

/* Why perun's loader cannot run this trace, or NULL when it can: every plan
 * runs there, and only stap's own artifacts (a module to compile or share,
 * the print transport) and a kernel without uprobe_multi links go to stap.  */
static const char *loader_refusal(struct session *s)
{
	static char why[300];
	struct bpfmap_err err = { "" };
	const char *early = loader_refusal_early(s);

	if (early)
		return early;
	if (!uprobes_supported(&err)) {
		snprintf(why, sizeof(why), "this kernel lacks uprobe_multi links with BPF "
			 "cookies (Linux 6.6 or later): %s", err.msg);
		return why;
	}
	return NULL;
}

int collect_loader_expected(struct session *s)
{
	const char *want = s->o->loader ? s->o->loader : "auto";
	struct bpfmap_err err = { "" };

	if (s->runtime != RUNTIME_BPF || !strcmp(want, "stapbpf"))
		return 0;
	return !loader_refusal_early(s) && uprobes_supported(&err);
}

/* A Go function starts over from its first instruction when its
 * goroutine's stack grows (its stack check calls morestack, which jumps
 * back), so on perun's loader its entry probe goes where the line table
 * ends the prologue, after the check, as stap -P places it; a function
 * with no such mark (a leaf with no check) keeps its first instruction.
 * Without a line table every entry stays first, which the strategy warned
 * of (a call that grows its stack counts twice).  */
static void go_entries(struct session *s)
{
	uint64_t *pe = NULL;
	size_t n = target_prologue_ends(&s->target, &pe), i, moved = 0;

	for (i = 0; i < s->plan.n && n; i++) {
		struct probe *pr = &s->plan.probes[i];
		const struct func *f;
		size_t lo = 0, hi = n;
		if (pr->kind != PROBE_FUNC || strcmp(pr->binary, s->target.path) ||
		    !(f = target_func_at(&s->target, pr->addr)))
			continue;
		while (lo < hi) { /* the first mark past the function's first byte */
			size_t mid = lo + (hi - lo) / 2;
			if (pe[mid] <= f->addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == n || pe[lo] >= f->addr + f->size)
			continue;
		pr->addr = pe[lo];
		pr->foff = target_file_offset(&s->target, pe[lo]);
		moved++;
	}
	free(pe);
	collect_wd(&s->wd, "go: %zu of %zu entry probes placed after the stack check", moved,
		   s->plan.n);
}

int collect_loader(struct session *s)
{
	const char *want = s->o->loader ? s->o->loader : "auto";
	const char *why;

	/* the kernel runtime's script keeps the process tree itself from the
	 * fork and free tracepoints (render/script.c) */
	if (s->runtime != RUNTIME_BPF && !strcmp(want, "auto"))
		return 0;
	if (!strcmp(want, "stapbpf")) {
		if (s->o->follow) {
			s->result.outcome = COLLECT_REFUSED;
			return pr_error("--follow needs perun's own loader: not with --loader stapbpf");
		}
		s->loader_why = "--loader stapbpf";
		if (plan_probe_points(&s->plan) > runtime_bpf_probe_limit())
			return pr_error("%zu probe points exceed what stapbpf can open here (about %zu "
					"with an open-file limit of %lu): narrow them with "
					"--include/--exclude or -s custom, or let perun's own loader "
					"run them (--loader auto)",
					plan_probe_points(&s->plan), runtime_bpf_probe_limit(),
					runtime_nofile_limit());
		return 0;
	}
	why = loader_refusal(s);
	if (!why) {
		s->uprobes = runtime_lib_path("perun-uprobes", X_OK);
		if (!s->uprobes)
			why = "perun-uprobes is not installed beside perun (reinstall perun or "
			      "set PERUN_LIBDIR)";
	}
	if (why && (!strcmp(want, "perun") || s->o->follow)) {
		s->result.outcome = COLLECT_REFUSED;
		return pr_error("%s cannot run this trace: %s",
				s->o->follow ? "--follow needs perun's own loader, which" : "--loader perun",
				why);
	}
	s->loader_why = why;
	if (why && plan_probe_points(&s->plan) > runtime_bpf_probe_limit())
		return pr_error("%zu probe points exceed what stapbpf can open here (about %zu with "
				"an open-file limit of %lu), and perun's own loader, which has no such "
				"limit, cannot run this trace: %s; narrow the probes with "
				"--include/--exclude or -s custom",
				plan_probe_points(&s->plan), runtime_bpf_probe_limit(),
				runtime_nofile_limit(), why);
	if (why)
		collect_wd(&s->wd, "loader: stapbpf (%s)", why);
	else
		collect_wd(&s->wd, "loader: perun-uprobes (uprobe_multi links, %s)",
			   s->o->aggregate ? "summaries kept in the kernel" : "ring buffer");
	if (!why && s->target.go)
		go_entries(s);
	s->cache_state = why ? s->cache_state : "not needed";
	return 0;
}

/* What an attach through staprun or stapbpf says once its probes are armed.  */
struct attach_ready {
	size_t points;
	long pid;
	enum runtime runtime;
	const char *why;	/* why not perun's loader, or NULL */
};

/* The kernel runtime's detach in seconds for n probe points: SIGINT to
 * staprun's end (the uprobes unregistered one by one, the end probe, stapio
 * reading the rest, the module unloaded).  bench/kernel-attach.sh measured
 * it in the TCG guest on Debian's 6.1 kernel
 * (bench/results/kernel-attach-2026-11-27.txt): 0.7-1.3 s for 100 points,
 * 1.9-2.3 s for 1,000, 1.4-1.5 s for 2,716; no growth with the count that
 * the noise does not hide (6.1 unregisters a uprobe without waiting for a
 * grace period).  The estimate is above every one of them, with 0.2 ms per
 * point of headroom for larger plans, which were not measured.  */
#define KERNEL_DETACH_BASE_S 2.5
#define KERNEL_DETACH_PER_POINT_S 0.0002

double collect_kernel_detach_estimate(size_t points)
{
	return KERNEL_DETACH_BASE_S + KERNEL_DETACH_PER_POINT_S * (double)points;
}

/* Called in the driver's supervisor when the probes are armed, ready_s after
 * the runtime started.  */
static char *attach_message(void *ctx, double ready_s)
{
	const struct attach_ready *a = ctx;

	if (a->runtime == RUNTIME_BPF)
		return xstrfmt("perun: attached %zu probe points to process %ld in %.0f ms (bpf "
			       "runtime, stapbpf%s%s); Ctrl-C detaches and writes the profile, and "
			       "the process runs on; stapbpf detaches about 0.1 s per probe point, "
			       "and every process of the binary traps on its probes meanwhile\n",
			       a->points, a->pid, ready_s * 1e3, a->why ? ": " : "",
			       a->why ? a->why : "");
	return xstrfmt("perun: attached %zu probe points to process %ld in %.0f ms (kernel "
		       "runtime, staprun); detaching will take about %.1f s; Ctrl-C detaches and "
		       "writes the profile, and the process runs on\n",
		       a->points, a->pid, ready_s * 1e3, collect_kernel_detach_estimate(a->points));
}

int collect_run(struct session *s)
{
	struct collect_opts *o = s->o;
	struct fast_read fr = { NULL, collect_recorder_slots(o->buffer_size), &s->wd, NULL };
	const char *no_fast = getenv("PERUN_NO_FAST_READ");
	char *stap_log_path = xstrfmt("%s/stap.log", s->tmpdir);
	char *shim = NULL, *capture = NULL;
	struct attach_ready ready;
	struct strv argv = STRV_INIT, env = STRV_INIT, cleanup = STRV_INIT;
	struct run_spec spec;
	char desc[64];
	int ret = -1;
	struct stat st;

	s->raw = xstrfmt("%s/trace.raw", s->tmpdir);
	s->rec = xstrfmt("%s/trace.rec", s->tmpdir);
	fr.path = s->rec;
	s->result.outcome = COLLECT_FAILED;
	if (s->uprobes)
		collect_plan_returns(s);
	{
		char *pp = xstrfmt("%s/plan", s->tmpdir);
		plan_save(&s->plan, pp);
		free(pp);
	}
	/* the runtime, its target, its output */
	if (s->uprobes) {
		struct loader_args la;
		char *pp = xstrfmt("%s/plan", s->tmpdir);
		memset(&la, 0, sizeof(la));
		s->attached_path = xstrfmt("%s/attached", s->tmpdir);
		la.pid = DRIVER_PID_ARG;
		la.raw = s->raw;
		la.attached = s->attached_path;
		la.plan = pp;
		/* the ring holds --buffer-size events in flight (32 bytes each) */
		la.ring = (uint64_t)o->buffer_size * 32;
		la.announce = o->pid > 0 && !o->quiet;
		la.follow = o->follow;
		la.aggregate = o->aggregate;
		/* elapsed time, events and losses, redrawn on the terminal */
		if (!o->quiet && !o->no_progress && isatty(2)) {
			la.progress = 1;
			s->log.trace_progress = 1;
		}
		render_loader_modes(&s->sopt, &la.modes);
		loader_args_argv(&la, s->uprobes, &argv);
		free(pp);
	} else if (s->runtime == RUNTIME_BPF) {
		strv_push(&argv, s->stapbpf);
		if (runtime_needs_memlock_shim()) {
			shim = runtime_shim_path();
			if (!shim) {
				pr_error("RLIMIT_MEMLOCK cannot be raised here and perun-memlock-shim.so "
					 "is not installed: reinstall perun or set PERUN_LIBDIR");
				goto out;
			}
			{
				const char *old = getenv("LD_PRELOAD");
				char *e = xstrfmt("LD_PRELOAD=%s%s%s", shim, old ? ":" : "", old ? old : "");
				strv_push(&env, e);
				free(e);
				e = xstrfmt("PERUN_ORIG_LD_PRELOAD=%s", old ? old : "");
				strv_push(&env, e);
				free(e);
				strv_push(&env, "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0");
			}
		}
	} else {
		strv_push(&argv, s->staprun);
		/* -R: a name of its own (perun_PID), so concurrent runs of one cached
		 * module do not collide and a leftover is known to be this run's */
		strv_push(&argv, "-R");
		strv_push(&cleanup, s->staprun);
		strv_push(&cleanup, "-d");
		strv_push(&cleanup, DRIVER_MOD_ARG);
	}
	if (!s->uprobes) {
		strv_push(&argv, "-x");
		strv_push(&argv, DRIVER_PID_ARG);
		strv_push(&argv, "-o");
		strv_push(&argv, s->raw);
		strv_push(&argv, s->module);
	}
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv.v;
	spec.env_extra = env.v;
	if (s->runtime == RUNTIME_KERNEL) {
		spec.module_prefix = "perun_";	/* what staprun -R makes of perun_KEY */
		spec.cleanup_argv = cleanup.v;
	}
	spec.timeout = o->timeout;
	spec.cleanup_dir = o->keep_temps ? NULL : s->tmpdir;
	if (o->pid > 0 && !s->uprobes && !o->quiet) {
		/* perun's loader says it itself, with its own numbers */
		ready.points = plan_probe_points(&s->plan);
		ready.pid = o->pid;
		ready.runtime = s->runtime;
		ready.why = s->loader_why;
		spec.ready_message_fn = attach_message;
		spec.ready_ctx = &ready;
	}
	if (o->pid > 0)
		spec.attach_pid = (pid_t)o->pid;
	else
		spec.target_argv = s->cmdv.v;
	spec.ready_path = s->raw;
	spec.selection_path = s->selection_path;
	if (!s->uprobes && s->runtime == RUNTIME_BPF && driver_uprobe_events_path() &&
	    access(driver_uprobe_events_path(), R_OK) == 0) {
		s->attached_path = xstrfmt("%s/attached", s->tmpdir);
		spec.attached_path = s->attached_path;
	}
	spec.fatal_lines = runtime_fatal_lines;
	if (!s->uprobes && s->runtime == RUNTIME_BPF && collect_script_mode(s) == SCRIPT_RECORD) {
		if (no_fast && *no_fast && strcmp(no_fast, "0")) {
			collect_wd(&s->wd, "fast read: off (PERUN_NO_FAST_READ), the end probe writes the buffer");
		} else {
			spec.before_stop = fast_read;
			spec.before_stop_ctx = &fr;
		}
	}
	/* detaching is slow: the kernel waits an RCU grace period per probe point
	 * (about 60 ms each here), and stapbpf runs its end probe only after */
	spec.stop_timeout = s->uprobes ? 10 : 10 + 0.2 * (double)plan_probe_points(&s->plan);
	/* perun's patched kernel runtime lets stapio read all output before the
	 * module exits, waiting up to 60 s (_stp_exit_drain_ms) */
	if (s->runtime == RUNTIME_KERNEL && s->kr.txfix)
		spec.stop_timeout += 60;
	/* stapbpf's perf-event uprobes (the kernel runtime measured its own
	 * detach: seconds, see collect_kernel_detach_estimate) */
	if (!o->quiet && !s->uprobes && s->runtime == RUNTIME_BPF &&
	    plan_probe_points(&s->plan) > 200)
		pr_info("perun: detaching %zu probe points takes the kernel about %.0f s after the "
			"command ends (Ctrl-C twice to skip it)",
			plan_probe_points(&s->plan), 0.06 * (double)plan_probe_points(&s->plan));
	spec.output_mode = o->output_handling;
	if (!strcmp(o->output_handling, "capture")) {
		capture = xstrfmt("%s/output.log", s->tmpdir);
		spec.capture_path = capture;
	}
	if (!o->quiet && s->uprobes)
		pr_info("perun: tracing %zu probe points with the %s runtime (perun's loader: "
			"uprobe_multi links, %s; no module)",
			plan_probe_points(&s->plan), runtime_name(s->runtime),
			o->aggregate ? "summaries kept in the kernel" : "a ring buffer");
	else if (!o->quiet)
		pr_info("perun: tracing %zu probe points with the %s runtime (module cache: %s)",
			plan_probe_points(&s->plan), runtime_name(s->runtime), s->cache_state);
	if (!o->quiet && !s->uprobes && s->runtime == RUNTIME_BPF && s->loader_why && o->pid <= 0)
		pr_info("perun: stapbpf runs this trace, not perun's loader: %s", s->loader_why);
	collect_wd(&s->wd, "run: %s -x PID %s, target %s", argv.v[0], s->module, s->cmdv.v[0]);
	s->t_collect0 = collect_now();
	if (driver_run(&spec, &s->res, collect_stap_line, &s->log) < 0) {
		collect_progress_end(&s->log);
		goto out;
	}
	collect_progress_end(&s->log);
	s->t_collect1 = collect_now();
	collect_wd(&s->wd, "run: runtime ended (%s), timed out %d, interrupted %d, leaked uprobes %d",
	   collect_exit_desc(s->res.exited, s->res.status, desc, sizeof(desc)), s->res.timed_out, s->res.interrupted,
	   s->res.leaked_uprobes);
	fs_write_atomic(stap_log_path, strbuf_str(&s->log.all), s->log.all.len, 0600);
	if (s->res.never_ready || stat(s->raw, &st) < 0) {
		pr_error("%s failed (%s) before the command ran%s; what it said:\n%s", argv.v[0],
			 collect_exit_desc(s->res.exited, s->res.status, desc, sizeof(desc)),
			 s->res.interrupted ? " (interrupted)" : "", strbuf_str(&s->log.all));
		if (s->res.interrupted) {
			s->result.outcome = COLLECT_SIGNALED;
			s->result.signal = driver_signal_received() ? driver_signal_received() : 2;
		}
		goto out;
	}
	if (s->attached_path)
		s->probes_j = report_attached(s, s->attached_path, &s->attached);

	s->runtime_prog = xstrdup(argv.v[0]);
	ret = 0;
out:
	strv_clear(&argv);
	strv_clear(&env);
	strv_clear(&cleanup);
	free(stap_log_path);
	free(capture);
	free(shim);
	return ret;
}
