/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun callgraph BINARY [--format text|json|dot] [--function NAME]: the
 * call-graph resource of a binary (binary/callgraph.h), for people and
 * for machines.  */
#include "config.h"

#define PR_FMT "perun callgraph"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/callgraph.h"
#include "binary/target.h"
#include "cmd/cmd.h"
#include "report/callgraph-output.h"
#include "runtime/cache.h"
#include "util/log.h"
#include "util/parse-options.h"

static const char usage[] =
	"usage: perun callgraph BINARY [--format text|json|dot] [--function NAME]\n"
	"                        [--no-dwarf] [--no-cache]\n"
	"\n"
	"The call graph of BINARY, from the binary itself: direct calls from DWARF\n"
	"call-site entries and from the machine code (capstone), PLT and GOT calls\n"
	"named after the imported function; rooted at main (else the entry point)\n"
	"with each reachable function's level (Algorithm 1 of the Perun Tracer\n"
	"thesis), the leaves and the maximal depth; per function its control-flow\n"
	"graph, loop nesting and a static complexity class (an upper-bound\n"
	"heuristic from loop nesting).  Cached per build-id and file identity.\n";

/* --format FMT into the int o->value.  */
static int parse_format(const struct popt *o, const char *v)
{
	if (!strcmp(v, "text"))
		*(int *)o->value = CG_TEXT;
	else if (!strcmp(v, "json"))
		*(int *)o->value = CG_JSON;
	else if (!strcmp(v, "dot"))
		*(int *)o->value = CG_DOT;
	else
		return popt_error(o, "--format %s: use text, json or dot", v);
	return 0;
}

int cmd_callgraph(int argc, char **argv, struct ctx *ctx)
{
	const char *function = NULL;
	int fmt = CG_TEXT, n, no_dwarf = 0, no_cache = 0, ret = EXIT_FAIL, node = -1;
	unsigned flags = 0;
	struct popt opts[] = {
		OPT_CALLBACK('F', "format", &fmt, "FMT", "text (default), json, or dot (Graphviz)",
			     parse_format),
		OPT_STRING('f', "function", &function, "NAME",
			   "one function: callers, callees, reachable set, blocks, loops, "
			   "instructions"),
		OPT_BOOL(0, "no-dwarf", &no_dwarf, "ignore DWARF call sites: instructions only"),
		OPT_BOOL(0, "no-cache", &no_cache, "neither read nor write the analysis cache"),
		OPT_END(),
	};
	char *cache_dir = NULL;
	struct target t;
	struct callgraph cg;

	(void)ctx;
	n = parse_options(argc, argv, "callgraph", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n != 1) {
		fprintf(stderr, "perun callgraph: %s: see 'perun callgraph --help'\n",
			n == 0 ? "give one BINARY" : "one BINARY only");
		return EXIT_USAGE;
	}
	if (no_dwarf)
		flags |= CG_NO_DWARF;
	if (!no_cache) {
		cache_dir = cache_default_dir();
		if (cache_check_dir(cache_dir) < 0) {
			free(cache_dir);
			return EXIT_FAIL;
		}
	}
	if (target_load(&t, argv[0], cache_dir) < 0) {
		free(cache_dir);
		return EXIT_FAIL;
	}
	if (!t.nfuncs) {
		target_no_functions_error(&t, "a call graph");
		goto out_target;
	}
	if (callgraph_load(&cg, &t, cache_dir, flags) < 0)
		goto out_target;
	if (function) {
		node = callgraph_find(&cg, function);
		if (node < 0) {
			pr_error("%s: no function or import named '%s': list them with "
				 "'perun callgraph %s --format json'",
				 t.path, function, argv[0]);
			goto out;
		}
	}
	callgraph_output(&cg, node, (enum cg_format)fmt);
	ret = EXIT_OK;
out:
	callgraph_release(&cg);
out_target:
	target_release(&t);
	free(cache_dir);
	return ret;
}
