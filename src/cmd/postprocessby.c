/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun postprocessby PROFILE METHOD [options]: loads the profile, calls
 * postprocess_profile() (analysis/postprocess.h) and writes the result as a
 * new profile.  */
#include "config.h"

#define PR_FMT "perun postprocessby"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/postprocess.h"
#include "cmd/cmd.h"
#include "profile/profile.h"
#include "store/output.h"
#include "store/profarg.h"
#include "util/log.h"
#include "util/parse-options.h"
#include "util/strbuf.h"
#include "util/strv.h"

static const char usage[] =
    "usage: perun postprocessby PROFILE METHOD [options] [-o PATH]\n\n"
    "Fits a model of call time (amount) against a resource field per function\n"
    "and writes a new profile with the models region filled and the method\n"
    "appended to postprocessors.  PROFILE is a path, N@i, N@p, a name, or\n"
    "REV:SPEC.  Methods and their options:\n\n"
    "  regression-analysis  least squares of each form; --models M[,M...] of\n"
    "                       constant, linear, logarithmic, quadratic, power,\n"
    "                       exponential (default all)\n"
    "  regressogram         bin means over equal bins; --bins N (default: the\n"
    "                       larger of Sturges' and Freedman-Diaconis' rules)\n"
    "  moving-average       --kind sma|smm|ema (default sma), --window N (default:\n"
    "                       the odd number nearest sqrt(calls)), --decay L (ema),\n"
    "                       --right-aligned (default centred)\n";

/* The method's options in the order given, for pp_opts_set once the method
 * is known.  */
struct method_opts {
	struct strv keys, values;
};

/* --NAME VALUE (VALUE "true" for a flag) into the struct method_opts
 * o->value.  */
static int push_method_opt(const struct popt *o, const char *v)
{
	struct method_opts *mo = o->value;

	strv_push(&mo->keys, o->long_name);
	strv_push(&mo->values, v ? v : "true");
	return 0;
}

/* Writes all of data to fd and syncs it; -1 reported.  */
static int write_all(int fd, const char *data, size_t len, const char *path)
{
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pr_error_errno("write %s", path);
		data += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0)
		return pr_error_errno("fsync %s", path);
	return 0;
}

int cmd_postprocessby(int argc, char **argv, struct ctx *ctx)
{
	struct pp_opts o;
	const char *spec, *method, *output = NULL;
	struct profile p = {NULL};
	struct method_opts mo = {STRV_INIT, STRV_INIT};
	char minor[41], *label = NULL, *final = NULL, *staged = NULL, *name = NULL;
	const char *json;
	size_t i, nmodels = 0, nfuncs = 0;
	int ret = EXIT_FAIL, fd = -1, m, n;
	struct popt opts[] = {
		OPT_CALLBACK(0, "x", &mo, "FIELD", "the independent variable (default call-order)",
			     push_method_opt),
		OPT_CALLBACK(0, "models", &mo, "M[,M...]", "regression-analysis: the forms to fit",
			     push_method_opt),
		OPT_CALLBACK(0, "bins", &mo, "N", "regressogram: the number of bins",
			     push_method_opt),
		OPT_CALLBACK(0, "kind", &mo, "K", "moving-average: sma, smm or ema",
			     push_method_opt),
		OPT_CALLBACK(0, "window", &mo, "N", "moving-average: the window", push_method_opt),
		OPT_CALLBACK(0, "decay", &mo, "L", "moving-average ema: the decay",
			     push_method_opt),
		OPT_CALLBACK(0, "right-aligned", &mo, NULL,
			     "moving-average: windows end at the point (default centred)",
			     push_method_opt),
		OPT_STRING('o', "output", &output, "PATH",
			   "write here (default: a new pending profile in .perun/jobs)"),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "postprocessby", usage, opts);
	if (n < 0) {
		ret = POPT_EXIT(n);
		goto out;
	}
	if (n > 2) {
		fprintf(stderr, "perun postprocessby: one profile and one method at a time\n");
		goto usage;
	}
	if (n < 2) {
		usage_with_options(stderr, usage, opts);
		goto usage;
	}
	spec = argv[0];
	method = argv[1];
	if ((m = pp_method_parse(method)) < 0) {
		fprintf(stderr,
			"perun postprocessby: unknown method '%s': regression-analysis, "
			"regressogram or moving-average\n",
			method);
		goto usage;
	}
	pp_opts_init(&o, (enum pp_method)m);
	for (i = 0; i < mo.keys.n; i++) {
		struct strbuf shown = STRBUF_INIT, err = STRBUF_INIT;
		int r;

		strbuf_addf(&shown, "--%s", mo.keys.v[i]);
		r = pp_opts_set(&o, mo.keys.v[i], mo.values.v[i], strbuf_str(&shown), &err);
		if (r < 0)
			fprintf(stderr, "perun postprocessby: %s\n", strbuf_str(&err));
		strbuf_release(&shown);
		strbuf_release(&err);
		if (r < 0)
			goto usage;
	}
	if (output && output_check(output) < 0)
		goto out;
	if (profile_arg_load(spec, &p, &label, minor) < 0)
		goto out;
	if (postprocess_profile(&p, &o, label, &nmodels, &nfuncs) < 0)
		goto out;
	/* a registered profile keeps its minor version as origin, so that the
	 * new one can be added back for it */
	if (!json_object_object_get_ex(p.root, "origin", NULL) && minor[0])
		json_object_object_add(p.root, "origin", json_object_new_string(minor));

	if (output) {
		final = xstrdup(output);
	} else {
		int no_repo;
		final = output_pending_path(label, pp_method_name(o.method), &no_repo);
		if (no_repo)
			pr_error("no perun repository here for a pending profile: give -o PATH");
		if (!final)
			goto out;
	}
	/* written on the descriptor output_stage reserved (O_EXCL|O_NOFOLLOW), and
	 * published by it: a rename over the staging name (as fs_write_atomic
	 * does) would let whoever can write the directory swap in their file */
	if (!(staged = output_stage_fd(final, &fd)))
		goto out;
	json = json_object_to_json_string_ext(p.root, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	if (write_all(fd, json, strlen(json), staged) < 0 ||
	    !(name = output_publish_fd(fd, staged, final))) {
		output_discard(fd, staged);
		close(fd);
		goto out;
	}
	close(fd);
	printf("%s: %zu models of %zu functions by %s written to %s\n", label, nmodels, nfuncs,
	       pp_method_name(o.method), name);
	ret = EXIT_OK;
	goto out;
usage:
	ret = EXIT_USAGE;
out:
	strv_clear(&mo.keys);
	strv_clear(&mo.values);
	free(staged);
	free(final);
	free(name);
	free(label);
	profile_release(&p);
	return ret;
}
