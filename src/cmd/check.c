/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun check [BASELINE] [TARGET]: check_input_compare()
 * (analysis/check-input.h) loads the runs of both sides and compares them;
 * prints its result (report/check-output.h).  */
#include "config.h"

#define PR_FMT "perun check"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check-input.h"
#include "cmd/cmd.h"
#include "report/check-output.h"
#include "util/log.h"
#include "util/number.h"
#include "util/parse-options.h"
#include "util/strbuf.h"

static const char usage[] =
    "usage: perun check [BASELINE] [TARGET] [--threshold R] [--confidence C]\n"
    "                   [--method M] [--statistic S] [--format text|json|junit|markdown]\n"
    "                   [--all] [--any-machine] [--no-control]\n\n"
    "Compares the runs registered for TARGET (default HEAD) with those of BASELINE\n"
    "(default: the nearest ancestor of TARGET with runs of the same job on the same\n"
    "machine).  Either may also be profile files, comma-separated (one run each).\n"
    "A job is a collector, command, arguments and workload; each registered\n"
    "profile of it is one run.\n"
    "Per calling context (main;parse;alloc) and for self and inclusive time apart,\n"
    "each run gives the p10 of its call times, the probes' cost taken out, and the\n"
    "runs of the two sides are compared: a degradation when the target is slower\n"
    "by the threshold or more and\n"
    "the confidence interval of the ratio lies above 1.  Each run's own speed as a\n"
    "whole (the median shift of its functions' self times) is taken out first: a\n"
    "function that moved while the rest of its run held still has changed, a run\n"
    "that moved together is the host (the in-run control; one run a side then\n"
    "decides, the spread of the other functions being the noise, for a context of\n"
    "10 calls a run or more: fewer hold the host's stalls).  With too few runs or too\n"
    "much spread between runs the change is undecided.  The threshold is 0.1, and\n"
    "0.25 (Perun's) for the regression methods and local-statistics; thresholds\n"
    "per function come from regressions_thresholds in .perun/local.yml.\n\n"
    "Methods (--method M): runs (default: Welch's t over the logs of the runs' p10s)\n"
    "or mann-whitney (asv's rank test over the runs' p10s), or one of Perun's, per\n"
    "function, on the models postprocessby fitted (regression-analysis;\n"
    "local-statistics also regressogram and moving-average):\n"
    "  best-model-order-equality  the best form grows faster\n"
    "  linear-regression, polynomial-regression, fast-check\n"
    "                             the curves of the best models differ by the\n"
    "                             threshold (they name the change's shape apart)\n"
    "  local-statistics           statistics of the curves per window\n"
    "or on the calls:\n"
    "  exclusive-time-outliers    a function's change in total exclusive time is\n"
    "                             an outlier among all functions' changes\n\n"
    "Exit status: 0 no degradation, 1 a degradation (or a failure), 2 usage.\n";

/* A number strictly between lo and hi, for --threshold and --confidence:
 * where it goes, and a flag set when it is given (NULL: none).  */
struct ratio_arg {
	double lo, hi;
	double *out;
	int *given;
};

/* --threshold R, --confidence C into the struct ratio_arg o->value.  */
static int parse_ratio(const struct popt *o, const char *v)
{
	struct ratio_arg *a = o->value;
	double d;

	if (parse_decimal(v, &d) < 0 || !(d > a->lo && d < a->hi))
		return popt_error(o, "--%s wants a number in (%g, %g), not '%s'", o->long_name,
				  a->lo, a->hi, v);
	*a->out = d;
	if (a->given)
		*a->given = 1;
	return 0;
}

/* --method M into the enum check_method o->value.  */
static int parse_method(const struct popt *o, const char *v)
{
	int m = check_method_parse(v);

	if (m < 0)
		return popt_error(o, "unknown method '%s': runs, mann-whitney, "
				     "best-model-order-equality, linear-regression, "
				     "polynomial-regression, fast-check, local-statistics or "
				     "exclusive-time-outliers",
				  v);
	*(enum check_method *)o->value = (enum check_method)m;
	return 0;
}

/* --statistic S into the double o->value: the quantile of a run's calls.  */
static int parse_statistic(const struct popt *o, const char *v)
{
	if (check_statistic_parse(v, o->value) < 0)
		return popt_error(o, "unknown statistic '%s': p10, median, min or pN (0 < N < 100)",
				  v);
	return 0;
}

/* --format FORMAT into the int o->value.  */
static int parse_format(const struct popt *o, const char *v)
{
	int f = check_format_parse(v);

	if (f < 0)
		return popt_error(o, "unknown format '%s': text, json, junit or markdown", v);
	*(int *)o->value = f;
	return 0;
}

int cmd_check(int argc, char **argv, struct ctx *ctx)
{
	struct check_opts o;
	struct check_result res;
	struct check_input in;
	struct strbuf out = STRBUF_INIT;
	int nargs, all = 0, fmt = CHECK_FORMAT_TEXT, ret = EXIT_FAIL;
	int threshold_given = 0;
	struct ratio_arg thr_arg = {0, 1e9, &o.threshold, &threshold_given};
	struct ratio_arg conf_arg = {0, 1, &o.confidence, NULL};
	struct popt opts[] = {
		OPT_CALLBACK(0, "threshold", &thr_arg, "R",
			     "relative change that counts (default 0.1 or 0.25: above)",
			     parse_ratio),
		OPT_CALLBACK(0, "confidence", &conf_arg, "C",
			     "confidence of the interval or test (default 0.99)", parse_ratio),
		OPT_CALLBACK(0, "method", &o.method, "M",
			     "runs (default), mann-whitney or one of Perun's (above)",
			     parse_method),
		OPT_CALLBACK(0, "statistic", &o.statistic, "S",
			     "what stands for a run: p10 (default), median, min or pN",
			     parse_statistic),
		OPT_CALLBACK('f', "format", &fmt, "FORMAT",
			     "text (default), json, junit (for CI) or markdown", parse_format),
		OPT_BOOL(0, "all", &all, "list unchanged contexts too"),
		OPT_BOOL(0, "any-machine", &o.any_machine, "compare runs from other machines too"),
		OPT_BOOL(0, "no-control", &o.no_control,
			 "compare the runs' times as they are, without the in-run control"),
		OPT_END(),
	};

	(void)ctx;
	check_opts_init(&o);
	memset(&res, 0, sizeof(res));
	check_input_init(&in);
	nargs = parse_options(argc, argv, "check", usage, opts);
	if (nargs < 0)
		return POPT_EXIT(nargs);
	if (nargs > 2) {
		fprintf(stderr, "perun check: at most BASELINE and TARGET\n");
		return EXIT_USAGE;
	}
	if (!threshold_given)
		o.threshold = check_method_threshold(o.method);
	/* one argument is the baseline; the target is HEAD */
	if (check_input_compare(&in, nargs >= 1 ? argv[0] : NULL, nargs == 2 ? argv[1] : NULL,
				&o, &res) < 0)
		goto out;
	check_output(&res, &o, (enum check_format)fmt, all, check_side_name(&in.base),
		     check_side_name(&in.target), &out);
	fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
	ret = res.degradations ? EXIT_FAIL : EXIT_OK;
out:
	check_result_release(&res);
	strbuf_release(&out);
	check_input_release(&in);
	return ret;
}
