/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun"

#include <errno.h>
#include <json-c/json.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/calibration.h"
#include "profile/profile.h"
#include "runtime/cache.h"
#include "runtime/kruntime.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

extern char **environ;

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct amounts_ctx {
	const char *uid;
	double *a;
	size_t n, alloc;
};

static void amount_one(void *ctx, struct json_object *r)
{
	struct amounts_ctx *c = ctx;
	const char *u = json_object_get_string(get(r, "uid"));

	if (!u || strcmp(u, c->uid))
		return;
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 1024;
		c->a = xrealloc(c->a, c->alloc * sizeof(*c->a));
	}
	c->a[c->n++] = json_object_get_double(get(r, "amount"));
}

/* The recorded amounts of function uid, sorted; caller frees.  Reads
 * either profile form.  */
static double *amounts(const struct profile *p, const char *uid, size_t *out)
{
	struct amounts_ctx c = { uid, NULL, 0, 0 };

	profile_each_resource(p, amount_one, &c);
	if (c.n > 1)
		qsort(c.a, c.n, sizeof(*c.a), cmp_double);
	*out = c.n;
	return c.a;
}

int calibration_compute(const struct profile *p, const char *report, struct calibration *c)
{
	double traced = -1, untraced = -1, calls = -1, gap = 0, *a;
	double traced_deep = -1, untraced_deep = -1;
	size_t n, ns;
	const char *s = report;

	while (s && *s) {
		double v;
		char key[32];
		if (sscanf(s, "%31s %lf", key, &v) == 2) {
			if (!strcmp(key, "calls"))
				calls = v;
			else if (!strcmp(key, "untraced_ns"))
				untraced = v;
			else if (!strcmp(key, "traced_ns"))
				traced = v;
			else if (!strcmp(key, "gap_ns"))
				gap = v;
			else if (!strcmp(key, "traced_deep_ns"))
				traced_deep = v;
			else if (!strcmp(key, "untraced_deep_ns"))
				untraced_deep = v;
		}
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	if (calls <= 0 || untraced < 0 || traced < 0)
		return pr_error("perun-calib wrote no calls, untraced_ns and traced_ns lines: "
				"reinstall perun");
	a = amounts(p, CALIB_FUNC, &n);
	if ((double)n < calls / 2) {
		free(a);
		return pr_error("the calibration trace recorded %zu of %.0f calls of %s: the probe "
				"cost cannot be measured; see 'perun doctor'", n, calls, CALIB_FUNC);
	}
	c->probe_ns = a[n / 2];
	free(a);
	a = amounts(p, CALIB_STEPPED, &ns);
	c->stepped_ns = ns ? a[ns / 2] : 0;
	free(a);
	c->untraced_ns = untraced > gap ? untraced - gap : 0;	/* gap_ns: older helpers */
	c->pair_ns = traced - untraced;
	/* what the caller pays can't be less than what the callee's amount shows */
	if (c->pair_ns < c->probe_ns)
		c->pair_ns = c->probe_ns;
	/* the recursive twin's: its returns' probes as perun's loader places
	 * them (an older helper, or too few calls: the uretprobe's) */
	c->insn_probe_ns = c->probe_ns;
	c->insn_pair_ns = c->pair_ns;
	a = amounts(p, CALIB_DEEP, &ns);
	if ((double)ns >= calls / 2 && traced_deep >= 0 && untraced_deep >= 0) {
		c->insn_probe_ns = a[ns / 2];
		c->insn_pair_ns = traced_deep - untraced_deep;
		if (c->insn_pair_ns < c->insn_probe_ns)
			c->insn_pair_ns = c->insn_probe_ns;
	}
	free(a);
	c->calls = (uint64_t)n;
	c->when = (int64_t)time(NULL);
	return 0;
}

static char *self_exe(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0) {
		pr_error_errno("readlink /proc/self/exe");
		return NULL;
	}
	buf[n] = '\0';
	return xstrdup(buf);
}

static enum runtime resolve_runtime(enum runtime r)
{
	const char *why;

	if (r == RUNTIME_AUTO)
		r = kruntime_usable(&why) ? RUNTIME_KERNEL : RUNTIME_BPF;
	return r;
}

/* Runs "perun collect" on perun-calib in dir; 0 when it wrote a complete profile.  */
static int run_traced(const char *dir, const char *runtime, const char *loader,
		      unsigned long calls)
{
	char *self = self_exe(), *helper = calibrate_helper_path();
	char callarg[64];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, r, ret = -1;

	if (!self)
		goto out;
	if (!helper) {
		pr_error("perun-calib not found beside perun nor in %s: reinstall perun or set "
			 "PERUN_LIBDIR",
			 getenv("PERUN_LIBDIR") ? getenv("PERUN_LIBDIR") : PKGLIBDIR);
		goto out;
	}
	snprintf(callarg, sizeof(callarg), "%lu report", calls);
	{
		char *argv[] = { self, (char *)"collect", (char *)"-o",
				 (char *)"calib.perf", (char *)"-c", helper, (char *)"-a", callarg,
				 (char *)"trace", (char *)"-q", (char *)"--no-calibrate", (char *)"--runtime",
				 (char *)runtime, (char *)"-o", (char *)"suppress", (char *)"-s",
				 (char *)"custom", (char *)"-f", (char *)CALIB_FUNC, (char *)"-f",
				 (char *)CALIB_STEPPED, (char *)"-f", (char *)CALIB_DEEP, NULL, NULL,
				 NULL };
		if (loader) {	/* the bpf runtime: the loader whose cost this is */
			argv[sizeof(argv) / sizeof(*argv) - 3] = (char *)"--loader";
			argv[sizeof(argv) / sizeof(*argv) - 2] = (char *)loader;
		}
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addchdir_np(&fa, dir);
		r = posix_spawn(&pid, self, &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	if (r) {
		errno = r;
		pr_error_errno("posix_spawn %s", self);
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			pr_error_errno("waitpid");
			goto out;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		pr_error("perun collect of perun-calib failed (%s %d): the probe cost was not "
			 "measured; see the messages above",
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		goto out;
	}
	ret = 0;
out:
	free(self);
	free(helper);
	return ret;
}

/* Measures and stores; fills c.  */
static int measure(const char *path, const char *runtime, const char *loader,
		   const char *release, unsigned long calls, struct calibration *c)
{
	char *dir = fs_mkdtemp("perun-calibrate"), *report = NULL, *perf = NULL;
	struct strbuf sb = STRBUF_INIT;
	struct profile p = { NULL };
	int ret = -1;

	if (!dir)
		return -1;
	report = xstrfmt("%s/report", dir);
	perf = xstrfmt("%s/calib.perf", dir);
	if (run_traced(dir, runtime, loader, calls) < 0)
		goto out;
	if (strbuf_read_file(&sb, report) < 0) {
		pr_error_errno("perun-calib wrote no report (%s)", report);
		goto out;
	}
	if (profile_load(&p, perf) < 0)
		goto out;
	memset(c, 0, sizeof(*c));
	if (calibration_compute(&p, strbuf_str(&sb), c) < 0)
		goto out;
	snprintf(c->runtime, sizeof(c->runtime), "%s", runtime);
	snprintf(c->loader, sizeof(c->loader), "%s", loader ? loader : "");
	snprintf(c->kernel, sizeof(c->kernel), "%s", release);
	ret = calibrate_store(path, c);
out:
	profile_release(&p);
	strbuf_release(&sb);
	fs_remove_tree(dir);
	free(dir);
	free(report);
	free(perf);
	return ret;
}

int calibration_obtain(enum runtime rt, const char *loader, unsigned long calls, int force,
		       struct calibration *c, char **path)
{
	const char *name;
	struct utsname u;
	char *dir;
	int r;

	rt = resolve_runtime(rt);
	name = runtime_name(rt);
	if (rt != RUNTIME_BPF)
		loader = NULL;
	else if (!loader)
		loader = "perun";
	uname(&u);
	dir = cache_default_dir();
	*path = calibrate_path(dir, name, loader, u.release);
	r = force ? 0 : calibrate_load(*path, name, loader, u.release, c);
	if (r == 0)
		r = cache_check_dir(dir) < 0 || measure(*path, name, loader, u.release, calls, c) < 0 ? -1 : 1;
	free(dir);
	return r;
}

int calibration_get(enum runtime rt, const char *loader, int mode, int quiet,
		    struct calibration *c)
{
	char *path = NULL;
	int r;

	if (mode == 0)
		return 0;
	r = calibrate_cached((int)rt, loader ? loader : "perun", quiet, c);
	if (r == 0 && mode > 0) {
		if (!quiet)
			pr_info("perun: measuring the probe cost (once per runtime and kernel)");
		r = calibration_obtain(rt, loader, CALIBRATION_CALLS, 1, c, &path);
		if (r == 1 && !quiet)
			calibration_say(c, path);
		free(path);
	}
	return r;
}

void calibration_say(const struct calibration *c, const char *path)
{
	log_msg(0, PR_FMT,
		"probe cost (%s runtime%s%s, kernel %s): %.0f ns recorded per empty call, %.0f ns "
		"per recorded call in all (an untraced call: %.1f ns); a probe stepped out of line "
		"(a function not beginning with a push): %.0f ns; returns probed on their "
		"instructions (recursive functions): %.0f ns recorded, %.0f ns in all; %s",
		c->runtime, !strcmp(c->loader, "stapbpf") ? " through " : "",
		!strcmp(c->loader, "stapbpf") ? "stapbpf" : "", c->kernel, c->probe_ns, c->pair_ns,
		c->untraced_ns, c->stepped_ns, c->insn_probe_ns, c->insn_pair_ns, path);
}
