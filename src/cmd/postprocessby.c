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
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
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
    "                       --right-aligned (default centred)\n\n"
    "  --x FIELD            the independent variable (default call-order)\n"
    "  -o, --output PATH    write here (default: a new pending profile in .perun/jobs)\n";

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

/* The default output: NAME-METHOD.perf beside the pending profiles.  */
static char *default_output(const char *label)
{
	char *pd = repo_locate(), *base, *dot, *out;
	const char *b = fs_basename(label);

	if (!pd)
		return NULL;
	base = xstrdup(b);
	for (dot = base; *dot; dot++)
		if (*dot == ':' || *dot == '@')
			*dot = '-';
	if ((dot = strstr(base, ".perf")) && !dot[5])
		*dot = 0;
	out = xstrfmt("%s/jobs", pd);
	/* a jobs directory that is a link, or another user's, would take root's
	 * profile wherever it points */
	if (fs_trust_dir(out, 1, "remove it or give -o PATH") < 0) {
		free(out);
		free(base);
		free(pd);
		return NULL;
	}
	free(out);
	out = xstrfmt("%s/jobs/%s.perf", pd, base);
	free(base);
	free(pd);
	return out;
}

int cmd_postprocessby(int argc, char **argv, struct ctx *ctx)
{
	struct pp_opts o;
	const char *spec = NULL, *method = NULL, *output = NULL;
	struct profile p = {NULL};
	struct strv keys = STRV_INIT, values = STRV_INIT;
	char minor[41], *label = NULL, *final = NULL, *staged = NULL, *name = NULL;
	const char *json;
	size_t i, nmodels = 0, nfuncs = 0;
	int ret = EXIT_FAIL, fd = -1, m;

	(void)ctx;
	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i], *v = i + 1 < (size_t)argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return EXIT_OK;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
			output = v, i++;
		} else if ((!strcmp(a, "--x") || !strcmp(a, "--models") || !strcmp(a, "--bins") ||
			    !strcmp(a, "--window") || !strcmp(a, "--kind") ||
			    !strcmp(a, "--decay")) &&
			   v) {
			strv_push(&keys, a + 2);
			strv_push(&values, v);
			i++;
		} else if (!strcmp(a, "--right-aligned")) {
			strv_push(&keys, a + 2);
			strv_push(&values, "true");
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr,
				"perun postprocessby: unknown option '%s' (or it wants a value)\n",
				a);
			goto usage;
		} else if (!spec) {
			spec = a;
		} else if (!method) {
			method = a;
		} else {
			fprintf(stderr,
				"perun postprocessby: one profile and one method at a time\n");
			goto usage;
		}
	}
	if (!spec || !method) {
		fputs(usage, stderr);
		goto usage;
	}
	if ((m = pp_method_parse(method)) < 0) {
		fprintf(stderr,
			"perun postprocessby: unknown method '%s': regression-analysis, "
			"regressogram or moving-average\n",
			method);
		goto usage;
	}
	pp_opts_init(&o, (enum pp_method)m);
	for (i = 0; i < keys.n; i++)
		if (pp_opts_set(&o, keys.v[i], values.v[i]) < 0)
			goto usage;
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
		char *pd = repo_locate(), *base = pd ? default_output(label) : NULL;
		if (!pd)
			pr_error("no perun repository here for a pending profile: give -o PATH");
		free(pd);
		if (!base)
			goto out;
		final = xstrfmt("%.*s-%s.perf", (int)(strlen(base) - 5), base, pp_method_name(o.method));
		free(base);
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
	strv_clear(&keys);
	strv_clear(&values);
	free(staged);
	free(final);
	free(name);
	free(label);
	profile_release(&p);
	return ret;
}
