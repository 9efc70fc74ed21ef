/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun calibrate [--runtime R] [--calls N] [--force] [-q]: measures the
 * probe effect on this host and runtime and caches it (src/trace/calibrate.h);
 * collect uses it for calibrated amounts in the summaries.  */
#include "config.h"

#define PR_FMT "perun"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "profile/profile.h"
#include "trace/cache.h"
#include "trace/calibrate.h"
#include "trace/kruntime.h"
#include "trace/runtime.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

extern char **environ;

#define DEFAULT_CALLS 20000

static void usage(FILE *f)
{
	fputs("usage: perun calibrate [--runtime R] [--calls N] [--force] [-q]\n"
	      "\n"
	      "Measures what an empty traced call costs on this host: perun traces\n"
	      "perun-calib, which calls an empty function and an untraced twin N times each,\n"
	      "and caches the result per runtime and kernel release in the module cache\n"
	      "directory.  collect subtracts it for the calibrated_* summary fields.\n"
	      "\n"
	      "  --runtime R   auto | kernel | bpf (default auto, as collect chooses)\n"
	      "  --calls N     traced calls to measure (default 20000)\n"
	      "  --force       measure again even when a calibration is cached\n"
	      "  -q, --quiet   print nothing but errors\n",
	      f);
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
static int run_traced(const char *dir, const char *runtime, unsigned long calls)
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
				 (char *)CALIB_STEPPED, NULL };
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
static int calibrate_now(const char *path, const char *runtime, const char *release,
			 unsigned long calls, struct calibration *c)
{
	char *dir = fs_mkdtemp("perun-calibrate"), *report = NULL, *perf = NULL;
	struct strbuf sb = STRBUF_INIT;
	struct profile p = { NULL };
	int ret = -1;

	if (!dir)
		return -1;
	report = xstrfmt("%s/report", dir);
	perf = xstrfmt("%s/calib.perf", dir);
	if (run_traced(dir, runtime, calls) < 0)
		goto out;
	if (strbuf_read_file(&sb, report) < 0) {
		pr_error_errno("perun-calib wrote no report (%s)", report);
		goto out;
	}
	if (profile_load(&p, perf) < 0)
		goto out;
	memset(c, 0, sizeof(*c));
	if (calibrate_compute(&p, strbuf_str(&sb), c) < 0)
		goto out;
	snprintf(c->runtime, sizeof(c->runtime), "%s", runtime);
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

static void say(const struct calibration *c, const char *path)
{
	fprintf(stderr,
		"perun: probe cost (%s runtime, kernel %s): %.0f ns recorded per empty call, "
		"%.0f ns per recorded call in all (an untraced call: %.1f ns); a probe stepped out "
		"of line (a function not beginning with a push): %.0f ns; %s\n",
		c->runtime, c->kernel, c->probe_ns, c->pair_ns, c->untraced_ns, c->stepped_ns, path);
}

int calibration_get(int runtime, int mode, int quiet, struct calibration *c)
{
	enum runtime rt = (enum runtime)runtime;
	struct utsname u;
	char *dir, *path;
	const char *name;
	int r;

	if (mode == 0)
		return 0;
	r = mode == 2 ? 0 : calibrate_cached(runtime, quiet, c);
	if (r == 0 && mode >= 1) {
		rt = resolve_runtime(rt);
		name = runtime_name(rt);
		uname(&u);
		dir = cache_default_dir();
		path = calibrate_path(dir, name, u.release);
		if (cache_check_dir(dir) < 0) {
			r = -1;
		} else {
			if (!quiet)
				fprintf(stderr, "perun: measuring the probe cost (once per runtime and "
						"kernel)\n");
			r = calibrate_now(path, name, u.release, DEFAULT_CALLS, c) < 0 ? -1 : 1;
			if (r == 1 && !quiet)
				say(c, path);
		}
		free(dir);
		free(path);
	}
	return r;
}

int cmd_calibrate(int argc, char **argv, struct ctx *ctx)
{
	static const struct option longopts[] = {
		{ "runtime", required_argument, NULL, 'r' },
		{ "calls", required_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'F' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum runtime rt = RUNTIME_AUTO;
	unsigned long calls = DEFAULT_CALLS;
	int c, force = 0, quiet = 0, r;
	struct calibration cal;
	struct utsname u;
	char *dir, *path, *end;
	const char *name;

	(void)ctx;
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (runtime_parse(optarg, &rt) < 0) {
				fprintf(stderr, "perun calibrate: --runtime is auto, kernel or bpf, "
						"not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			calls = strtoul(optarg, &end, 10);
			if (*end || !*optarg || *optarg == '-' || calls < 100 || calls > 10000000) {
				fprintf(stderr, "perun calibrate: --calls wants 100 to 10000000, "
						"not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'F': force = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return EXIT_OK;
		default:
			fprintf(stderr, "see 'perun calibrate --help'\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "perun calibrate: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	rt = resolve_runtime(rt);
	name = runtime_name(rt);
	uname(&u);
	dir = cache_default_dir();
	path = calibrate_path(dir, name, u.release);
	r = force ? 0 : calibrate_load(path, name, u.release, &cal);
	if (r == 0) {
		if (cache_check_dir(dir) < 0 || calibrate_now(path, name, u.release, calls, &cal) < 0)
			r = -1;
		else
			r = 1;
	}
	if (r == 1 && !quiet)
		say(&cal, path);
	if (r == 1) {
		struct json_object *o = calibration_json(&cal);
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	free(dir);
	free(path);
	return r == 1 ? EXIT_OK : EXIT_FAIL;
}
