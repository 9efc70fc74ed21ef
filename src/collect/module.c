/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The module phase: the compiled script from the module cache, or stap -p4
 * (then stored in the cache).  */
#include "config.h"

#define PR_FMT "perun collect"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "collect/session.h"
#include "render/script.h"
#include "runtime/cache.h"
#include "runtime/driver.h"
#include "runtime/kruntime.h"
#include "runtime/runtime.h"
#include "util/fs.h"
#include "util/log.h"

/* Where stap places a function's entry probe.  perun reads no arguments,
 * so it needs no prologue: on the function's first instruction the probe
 * measures the whole call and lands, on most functions (a push), where the
 * kernel emulates the instruction instead of stepping it out of line (at
 * -O0, stap's own choice after the prologue is a load the kernel steps,
 * ~10 times the cost).  Go functions start over at their entry when they
 * grow their stack, so their probe stays after the stack check, where Go's
 * line table ends the prologue.  Part of the module cache key.  */
static const char *entry_placement(const struct session *s)
{
	return s->target.go ? "-P" : "--prologue-searching=never";
}

/* Statements the print transport's end probe may need for n probe ids.  */
#define KERNEL_END_ACTIONS(n) (3 * (size_t)(n) + 1000)

/* stap -r RELEASE [-R COPY] for the kernel runtime, once the build tree is
 * known to be there; warns when stap needs perun's patched runtime.  */
static int kernel_compile_args(struct session *s, struct strv *argv)
{
	char *why = NULL, *ver, *cmd;

	if (!kruntime_can_build(s->release, &why)) {
		pr_error("cannot build the kernel module: %s", why);
		free(why);
		return -1;
	}
	if (!s->kr.dir) {
		ver = kruntime_stap_version(s->stap);
		if (kruntime_has_patches(ver) && !s->o->quiet) {
			cmd = kruntime_prepare_command();
			log_msg(0, "perun: warning",
				"stap %s's stock kernel runtime cannot build modules for current "
				"6.1.y kernels and loses per-event output at high rates: run '%s' "
				"once (as root)",
				ver, cmd);
			free(cmd);
		}
		free(ver);
	}
	if (collect_script_mode(s) == SCRIPT_RECORD) {
		/* the end probe writes the whole recorder map out; the kernel runtime
		 * stops a probe after MAXACTION (1000) statements, the bpf one does
		 * not (its end probe runs in user space) */
		char *d = xstrfmt("-DMAXACTION=%zu", s->o->buffer_size * 8 + 10000);
		strv_push(argv, d);
		free(d);
	}
	if (s->sopt.count_sent && collect_script_mode(s) == SCRIPT_PRINT &&
	    KERNEL_END_ACTIONS(s->plan.n) > 10000) {
		/* the print transport's end probe writes a count per probe id
		 * (two statements each); an end probe may run
		 * MAXACTION_INTERRUPTIBLE statements, 10 x MAXACTION (10000) */
		char *d = xstrfmt("-DMAXACTION_INTERRUPTIBLE=%zu", KERNEL_END_ACTIONS(s->plan.n));
		strv_push(argv, d);
		free(d);
	}
	/* stap's overload guard ends the session, skipping the end probe, when
	 * probes take half the CPU for a second: a traced tight loop does (the
	 * bench's 200k calls in the guest); perun counts calls, not guards */
	strv_push(argv, "-DSTP_NO_OVERLOAD");
	strv_push(argv, "-r");
	strv_push(argv, s->release);
	if (s->kr.dir) {
		strv_push(argv, "-R");
		strv_push(argv, s->kr.dir);
	}
	collect_wd(&s->wd, "compile: kernel %s, %s", s->release, s->kr.why);
	return 0;
}

static int compile_module(struct session *s, const char *outdir, const char *name)
{
	struct strv argv = { NULL, 0 };
	char *script_path = xstrfmt("%s/script.stp", outdir);
	char *tapsets = xstrfmt("%s/tapsets", runtime_datadir());
	struct run_spec spec;
	struct run_result res;
	int ret = -1;
	double t0 = collect_now();

	if (fs_write_atomic(script_path, s->script.buf, s->script.len, 0600) < 0)
		goto out;
	strv_push(&argv, s->stap);
	strv_push(&argv, "-p4");
	strv_push(&argv, "-v");
	if (s->runtime == RUNTIME_BPF)
		strv_push(&argv, "--runtime=bpf");
	strv_push(&argv, entry_placement(s));
	if (s->runtime == RUNTIME_KERNEL && kernel_compile_args(s, &argv) < 0)
		goto out;
	strv_push(&argv, "-m");
	strv_push(&argv, name);
	strv_push(&argv, "-I");
	strv_push(&argv, tapsets);
	strv_push(&argv, script_path);
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv.v;
	spec.cwd = outdir;
	spec.cleanup_dir = s->o->keep_temps ? NULL : s->tmpdir;
	spec.stdout_null = 1;
	s->log.progress = !s->o->quiet && isatty(2);
	s->log.nprobes = plan_probe_points(&s->plan);
	if (s->log.progress)
		fprintf(stderr, "perun: compiling %zu probes ", s->log.nprobes);
	collect_wd(&s->wd, "compile: %s (runtime %s) in %s", s->stap, runtime_name(s->runtime), outdir);
	if (driver_run(&spec, &res, collect_stap_line, &s->log) < 0)
		goto out;
	if (s->log.progress)
		fprintf(stderr, "\rperun: compiled %zu probes in %.1f s              \n",
			s->log.nprobes, collect_now() - t0);
	collect_wd(&s->wd, "compile: ended (%s %d) after %.3f s", res.exited ? "exit" : "signal",
	   res.status, collect_now() - t0);
	if (res.interrupted) {
		pr_error("interrupted while compiling");
		goto out;
	}
	if (!res.exited || res.status != 0) {
		pr_error("stap -p4 failed (%s %d); what it said:\n%s", res.exited ? "exit" : "signal",
			 res.status, strbuf_str(&s->log.all));
		goto out;
	}
	free(s->module);
	s->module = xstrfmt("%s/%s.%s", outdir, name, s->runtime == RUNTIME_BPF ? "bo" : "ko");
	if (!fs_exists(s->module)) {
		pr_error("stap -p4 succeeded but wrote no %s", s->module);
		goto out;
	}
	ret = 0;
out:
	strv_clear(&argv);
	free(script_path);
	free(tapsets);
	return ret;
}

int collect_module(struct session *s)
{
	struct utsname u;
	char *ids[8], name[32], *stap_id = NULL;
	struct cache_entry e;
	int r, ret = -1;
	size_t i;
	struct strbuf bids = STRBUF_INIT;
	char *plan_text = plan_serialize(&s->plan);

	memset(&e, 0, sizeof(e));
	uname(&u);
	/* build ids of every binary in the plan */
	for (i = 0; i < s->plan.n; i++) {
		const char *b = s->plan.probes[i].binary;
		if (i && !strcmp(b, s->plan.probes[i - 1].binary))
			continue;
		if (!strcmp(b, s->target.path) && s->target.build_id[0]) {
			strbuf_addf(&bids, "%s=%s;", b, s->target.build_id);
		} else {
			char *id = collect_file_identity(b);
			strbuf_addf(&bids, "%s;", id);
			free(id);
		}
	}
	/* stap's own identity is not in the key (a hit must work without stap);
	 * the entry records it and a changed stap makes the entry stale */
	ids[0] = s->script.buf;
	ids[1] = s->tapset_text;
	ids[2] = collect_file_identity(s->runtime == RUNTIME_BPF ? s->stapbpf : s->staprun);
	ids[3] = (char *)runtime_name(s->runtime);
	ids[4] = s->runtime == RUNTIME_KERNEL && s->release ? s->release : u.release;
	ids[5] = bids.buf;
	ids[6] = (char *)entry_placement(s);
	cache_key(s->key, (const char *const *)ids, 7);
	free(ids[2]);
	stap_id = s->stap ? collect_file_identity(s->stap) : NULL;	/* never run stap for it */
	if (stap_id && s->runtime == RUNTIME_KERNEL) {
		/* a module built from other runtime sources (stock, patched) is stale */
		/* and so is one built without the end probe's larger limit */
		char *k = xstrfmt("%s runtime=%s no-overload%s", stap_id, s->kr.id,
				  s->sopt.count_sent && collect_script_mode(s) == SCRIPT_PRINT &&
						  KERNEL_END_ACTIONS(s->plan.n) > 10000
					  ? " end-actions"
					  : "");
		free(stap_id);
		stap_id = k;
	}
	snprintf(name, sizeof(name), "perun_%.16s", s->key);
	if (s->o->cache_off) {
		s->cache_state = "off";
		goto compile_fresh;
	}
	{
		char *dir = cache_default_dir();
		r = cache_open(&s->cache, dir);
		free(dir);
		if (r < 0)
			goto out;
		s->cache_open = 1;
	}
	r = cache_lookup(&s->cache, s->key, stap_id, &e);
	if (r < 0)
		goto out;
	if (r == 0) {
		/* miss: compile under the lock, unless another collect just did */
		if (cache_lock(&s->cache) < 0)
			goto out;
		r = cache_lookup(&s->cache, s->key, stap_id, &e);
		if (r < 0) {
			cache_unlock(&s->cache);
			goto out;
		}
		if (r == 0) {
			if (!s->stap) {
				cache_unlock(&s->cache);
				pr_error("stap not found and the module is not cached: install the "
					 "systemtap package");
				goto out;
			}
			if (compile_module(s, s->tmpdir, name) < 0) {
				cache_unlock(&s->cache);
				goto out;
			}
			r = cache_store(&s->cache, s->key, s->module, runtime_name(s->runtime),
					s->target.path, plan_probe_points(&s->plan), stap_id,
					plan_text, s->script.buf, &e);
			cache_unlock(&s->cache);
			if (r < 0)
				goto out;
			{
				size_t removed;
				cache_prune(&s->cache, cache_max_size(), s->key, &removed);
			}
			s->cache_state = "miss";
		} else {
			cache_unlock(&s->cache);
			s->cache_state = "hit";
		}
	} else {
		s->cache_state = "hit";
	}
	/* the runtime gets a private copy of the verified bytes, not the cache's path */
	free(s->module);
	if (cache_export_module(&e, s->tmpdir, &s->module) < 0)
		goto out;
	collect_wd(&s->wd, "cache %s: %s", s->cache_state, e.dir);
	ret = 0;
	goto out;
compile_fresh:
	if (!s->stap) {
		pr_error("stap not found: install the systemtap package");
		goto out;
	}
	ret = compile_module(s, s->tmpdir, name);
out:
	free(stap_id);
	cache_entry_release(&e);
	strbuf_release(&bids);
	free(plan_text);
	return ret;
}

