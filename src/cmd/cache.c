/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun cache list|verify|prune [--max-size SIZE]|clear [--json]  */
#include "config.h"

#define PR_FMT "perun cache"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "collect/session.h"
#include "runtime/cache.h"
#include "runtime/driver.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/parse-options.h"
#include "util/strbuf.h"

/* The usage text; its synopsis is what a usage error shows.  */
static const char usage_text[] =
    "usage: perun cache list [--json]\n"
    "       perun cache verify\n"
    "       perun cache prune [--max-size SIZE]\n"
    "       perun cache clear\n"
    "       perun cache build [--kernel RELEASE] -c CMD [...] trace [trace options]\n"
    "\n"
    "The module cache holds compiled SystemTap modules (.bo for the bpf runtime,\n"
    ".ko for the kernel runtime) keyed by a hash of the script, the tapset, stap,\n"
    "the runtime, the kernel release and the target build-ids.  It lives in\n"
    "$PERUN_CACHE_DIR, else $XDG_CACHE_HOME/perun, else ~/.cache/perun.\n"
    "\n"
    "  list       entries, least recently used first\n"
    "  verify     check each entry's hash, owner and mode; exit 1 if any is bad\n"
    "  prune      evict least recently used entries down to SIZE (default\n"
    "             $PERUN_CACHE_MAX_SIZE or 1G; K, M, G, T suffixes)\n"
    "  clear      remove every entry\n"
    "  build      compile the module a 'perun collect' with these arguments would\n"
    "             run, into the cache, and run nothing; --kernel RELEASE builds the\n"
    "             kernel-runtime module for hosts running RELEASE (needs its\n"
    "             linux-headers here), so that they reuse it without a compiler\n"
    "\n"
    "prune and clear remove only entries perun can prove it wrote (a key name,\n"
    "its own meta file, nothing else inside); anything else is reported as\n"
    "'left alone' and kept.\n";

/* prune's limit: --max-size, else $PERUN_CACHE_MAX_SIZE or the default.  */
struct max_size {
	uint64_t bytes;
	int given; /* by --max-size */
};

/* --max-size SIZE into the struct max_size at o->value; says a bad one.  */
static int parse_max_size(const struct popt *o, const char *value)
{
	struct max_size *m = o->value;

	m->given = 1;
	if (cache_parse_size(value, &m->bytes) < 0)
		return popt_error(o,
				  "bad size '%s': give bytes with an optional K, M, G or T "
				  "suffix (e.g. 500M, 2G)",
				  value);
	return 0;
}

static void human(uint64_t n, char *buf, size_t len)
{
	if (n >= 1ull << 30)
		snprintf(buf, len, "%.1fG", (double)n / (1ull << 30));
	else if (n >= 1ull << 20)
		snprintf(buf, len, "%.1fM", (double)n / (1ull << 20));
	else if (n >= 1024)
		snprintf(buf, len, "%.1fK", (double)n / 1024);
	else
		snprintf(buf, len, "%lluB", (unsigned long long)n);
}

/* perun cache build [--kernel RELEASE] COLLECT-ARGS: collect --compile-only.  */
static int cache_build(int argc, char **argv)
{
	char **v = calloc((size_t)argc + 5, sizeof(*v));
	int n = 0, i = 1, ret, trace = 0;
	struct collect_opts o;
	struct session s;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		free(v);
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	if (!v)
		return EXIT_FAIL;
	v[n++] = (char *)"collect";
	if (i < argc && !strcmp(argv[i], "--kernel")) {
		if (i + 1 >= argc) {
			fprintf(stderr, "perun cache build: --kernel needs a release (uname -r of "
					"the hosts that will run the module)\n");
			free(v);
			return EXIT_USAGE;
		}
		i += 2;
	}
	for (; i < argc; i++) {
		trace |= !strcmp(argv[i], "trace");
		v[n++] = argv[i];
	}
	if (!trace) {
		fprintf(stderr, "perun cache build: give the collect arguments: -c CMD [...] trace "
				"[trace options]\n");
		free(v);
		return EXIT_USAGE;
	}
	v[n++] = (char *)"--compile-only";
	if (argc > 2 && !strcmp(argv[1], "--kernel")) {
		v[n++] = (char *)"--kernel-release";
		v[n++] = argv[2];
	}
	collect_opts_init(&o);
	ret = collect_args_parse(n, v, &o);
	if (ret) {
		ret = ret < 0 ? EXIT_OK : ret;
	} else if (o.script_only) {
		fprintf(stderr, "perun cache build: --script-only builds no module: use perun "
				"collect --script-only\n");
		ret = EXIT_USAGE;
	} else {
		session_init(&s, &o);
		driver_install_signals();
		if (o.quiet)
			log_level = 0;
		collect_pipeline(&s, COLLECT_UNTIL_MODULE);
		ret = collect_exit_code(&s.result);
		if (ret == EXIT_OK)
			collect_say_module(&s);
		session_release(&s);
	}
	collect_opts_release(&o);
	free(v);
	return ret;
}

int cmd_cache(int argc, char **argv, struct ctx *ctx)
{
	struct cache c;
	struct cache_entry *list = NULL;
	size_t n = 0, i, removed = 0, analyses = 0;
	uint64_t total = 0;
	struct max_size max = {0, 0};
	const char *verb;
	char *dir;
	int json = 0, ret = EXIT_FAIL, bad = 0, nargs;
	/* the usage text says what they are: --help shows it alone */
	struct popt opts[] = {
	    OPT_CALLBACK(0, "max-size", &max, "SIZE", NULL, parse_max_size),
	    OPT_BOOL(0, "json", &json, NULL),
	    OPT_END(),
	};

	(void)ctx;
	if (argc > 1 && !strcmp(argv[1], "build"))
		return cache_build(argc - 1, argv + 1);
	/* the options go before or after the action */
	nargs = parse_options(argc, argv, "cache", usage_text, opts);
	if (nargs < 0)
		return POPT_EXIT(nargs);
	if (nargs == 0) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	if (nargs > 1) {
		fprintf(stderr, "perun cache: unexpected argument '%s'\n", argv[1]);
		return EXIT_USAGE;
	}
	verb = argv[0];
	if (strcmp(verb, "list") && strcmp(verb, "verify") && strcmp(verb, "prune") &&
	    strcmp(verb, "clear")) {
		fprintf(stderr, "perun cache: unknown action '%s': list, verify, prune or clear\n",
			verb);
		return EXIT_USAGE;
	}
	if (!strcmp(verb, "prune") && !max.given && cache_max_size_env(&max.bytes) < 0) {
		fprintf(stderr, "perun cache: PERUN_CACHE_MAX_SIZE='%s' is not a size: give bytes "
				"with an optional K, M, G or T suffix, or --max-size\n",
			getenv("PERUN_CACHE_MAX_SIZE"));
		return EXIT_USAGE;
	}
	dir = cache_default_dir();
	if (cache_open(&c, dir) < 0) {
		free(dir);
		return EXIT_FAIL;
	}
	free(dir);
	if (!strcmp(verb, "clear")) {
		if (cache_lock(&c) == 0 && cache_clear(&c, &removed, &analyses) == 0) {
			if (analyses)
				printf("removed %zu entries and %zu analysis files from %s\n",
				       removed, analyses, c.dir);
			else
				printf("removed %zu entries from %s\n", removed, c.dir);
			ret = EXIT_OK;
		}
		goto out;
	}
	if (!strcmp(verb, "prune")) {
		if (cache_lock(&c) == 0 && cache_prune(&c, max.bytes, NULL, &removed) == 0) {
			printf("removed %zu entries; limit %llu bytes\n", removed,
			       (unsigned long long)max.bytes);
			ret = EXIT_OK;
		}
		goto out;
	}
	if (cache_list(&c, &list, &n) < 0)
		goto out;
	if (!strcmp(verb, "verify")) {
		for (i = 0; i < n; i++) {
			const char *why;
			if (!cache_entry_is_ours(&c, fs_basename(list[i].dir), &why)) {
				fprintf(stderr, "perun cache: %s is not perun's (%s): perun leaves it "
						"alone; inspect and remove it\n",
					list[i].dir, why);
				bad++;
			} else if (cache_verify_entry(&c, &list[i]) < 0)
				bad++;
			else
				printf("ok  %s\n", list[i].key);
		}
		printf("%zu entries, %d bad%s\n", n, bad,
		       bad ? ": remove them with 'perun cache clear' or 'perun cache prune'" : "");
		ret = bad ? EXIT_FAIL : EXIT_OK;
		goto out;
	}
	if (json) {
		struct json_object *a = json_object_new_array();
		for (i = 0; i < n; i++) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "key", json_object_new_string(list[i].key));
			json_object_object_add(e, "runtime", json_object_new_string(list[i].runtime ? list[i].runtime : "?"));
			json_object_object_add(e, "target", json_object_new_string(list[i].target ? list[i].target : "?"));
			json_object_object_add(e, "probes", json_object_new_int64((int64_t)list[i].nprobes));
			json_object_object_add(e, "size", json_object_new_int64((int64_t)list[i].size));
			json_object_object_add(e, "last_used", json_object_new_int64((int64_t)list[i].last_used));
			json_object_array_add(a, e);
		}
		printf("%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY |
									  JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(a);
	} else {
		printf("%-16s %-7s %7s %8s %-19s %s\n", "KEY", "RUNTIME", "PROBES", "SIZE",
		       "LAST USED", "TARGET");
		for (i = 0; i < n; i++) {
			char sz[16], when[32];
			struct tm tm;
			localtime_r(&list[i].last_used, &tm);
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
			human(list[i].size, sz, sizeof(sz));
			printf("%-16.16s %-7s %7zu %8s %-19s %s\n", list[i].key,
			       list[i].runtime ? list[i].runtime : "?", list[i].nprobes, sz, when,
			       list[i].target ? list[i].target : "(damaged)");
			total += list[i].size;
		}
		{
			char sz[16];
			human(total, sz, sizeof(sz));
			printf("%zu entries, %s in %s\n", n, sz, c.dir);
		}
	}
	ret = EXIT_OK;
out:
	for (i = 0; i < n; i++)
		cache_entry_release(&list[i]);
	free(list);
	cache_close(&c);
	return ret;
}
