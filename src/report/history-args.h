/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The options perun history and perun report share: which commits and
 * profiles (-n, -m, --cmd, --args, --workload, --collector, --any-machine)
 * and --threshold, as rows of an option table (util/parse-options.h).  */
#ifndef PERUN_REPORT_HISTORY_ARGS_H
#define PERUN_REPORT_HISTORY_ARGS_H

#include <stddef.h>

#include "analysis/steps.h"
#include "report/history.h"
#include "util/parse-options.h"

struct history_args {
	const char *rev;	/* -m, default HEAD */
	size_t max;		/* -n, default 100 */
	struct history_filter f;
	struct steps_opts so;	/* threshold 0.05 unless --threshold */
};
void history_args_init(struct history_args *a);
/* -n N into the size_t o->value.  */
int history_parse_max(const struct popt *o, const char *v);
/* --threshold R into the double o->value.  */
int history_parse_threshold(const struct popt *o, const char *v);
/* The rows of those options in a table (util/parse-options.h) filling *a.  */
#define OPT_HISTORY_ARGS(a)                                                                        \
	OPT_CALLBACK('n', NULL, &(a)->max, "N", "the last N first-parent commits (100; 0: all)",   \
		     history_parse_max),                                                           \
	OPT_STRING('m', NULL, &(a)->rev, "REV", "walk back from REV (default HEAD)"),              \
	OPT_STRING(0, "cmd", &(a)->f.cmd, "CMD", "profiles of this command"),                      \
	OPT_STRING(0, "args", &(a)->f.args, "ARGS", "profiles with these arguments"),              \
	OPT_STRING(0, "workload", &(a)->f.workload, "W", "profiles of this workload"),             \
	OPT_STRING(0, "collector", &(a)->f.collector, "C", "profiles of this collector"),          \
	OPT_CALLBACK(0, "threshold", &(a)->so.threshold, "R",                                      \
		     "drop steps smaller than R relative to the level before (0.05)",              \
		     history_parse_threshold),                                                     \
	OPT_BOOL(0, "any-machine", &(a)->f.any_machine, "profiles of every machine count")

#endif
