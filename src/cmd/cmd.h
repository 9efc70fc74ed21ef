/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The subcommands.  Each parses its own options and returns an exit code.  */
#ifndef PERUN_CMD_H
#define PERUN_CMD_H

#include <stdio.h>

struct ctx {
	const char *prog;	/* argv[0] */
	char *self;		/* absolute path of this perun binary */
};

int cmd_collect(int argc, char **argv, struct ctx *ctx);
int cmd_init(int argc, char **argv, struct ctx *ctx);
int cmd_status(int argc, char **argv, struct ctx *ctx);
int cmd_log(int argc, char **argv, struct ctx *ctx);
int cmd_add(int argc, char **argv, struct ctx *ctx);
int cmd_rm(int argc, char **argv, struct ctx *ctx);
int cmd_fsck(int argc, char **argv, struct ctx *ctx);
int cmd_show(int argc, char **argv, struct ctx *ctx);
int cmd_cache(int argc, char **argv, struct ctx *ctx);
int cmd_doctor(int argc, char **argv, struct ctx *ctx);
int cmd_parse(int argc, char **argv, struct ctx *ctx);
int cmd_calibrate(int argc, char **argv, struct ctx *ctx);
int cmd_stats(int argc, char **argv, struct ctx *ctx);
int cmd_callgraph(int argc, char **argv, struct ctx *ctx);
int cmd_push(int argc, char **argv, struct ctx *ctx);
int cmd_fetch(int argc, char **argv, struct ctx *ctx);
int cmd_aggregate(int argc, char **argv, struct ctx *ctx);
int cmd_history(int argc, char **argv, struct ctx *ctx);
int cmd_report(int argc, char **argv, struct ctx *ctx);
int cmd_run(int argc, char **argv, struct ctx *ctx);
int cmd_bisect(int argc, char **argv, struct ctx *ctx);

#include "analysis/steps.h"
#include "report/history.h"
/* The options history and report share (cmd/opt-history.c): which commits
 * and profiles (-n, -m, --cmd, --args, --workload, --collector,
 * --any-machine) and --threshold.  */
struct history_args {
	const char *rev;	/* -m, default HEAD */
	size_t max;		/* -n, default 100 */
	struct history_filter f;
	struct steps_opts so;	/* threshold 0.05 unless --threshold */
};
void history_args_init(struct history_args *a);
struct popt;
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

int cmd_postprocessby(int argc, char **argv, struct ctx *ctx);
int cmd_check(int argc, char **argv, struct ctx *ctx);
int cmd_diff(int argc, char **argv, struct ctx *ctx);

/* collect's options (cmd/opt-collect.c), for collect and cache build.  */
struct collect_opts;
struct session;
/* Prints collect's man-page-like usage; used by --help.  */
void usage_collect(FILE *f);
/* Parses perun collect's arguments (argv[0] is "collect") into o, which
 * keeps pointers into argv, and checks what they ask for together: 0; -1
 * when --help was printed; EXIT_USAGE after saying why on stderr.  */
int collect_args_parse(int argc, char **argv, struct collect_opts *o);
/* After --compile-only: "KEY RUNTIME RELEASE" on stdout, and where the
 * module is on stderr unless quiet.  */
void collect_say_module(const struct session *s);

#endif
