/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The subcommands.  Each parses its own options and returns an exit code.  */
#ifndef PERUN_CMD_H
#define PERUN_CMD_H

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

int cmd_postprocessby(int argc, char **argv, struct ctx *ctx);
int cmd_check(int argc, char **argv, struct ctx *ctx);
int cmd_diff(int argc, char **argv, struct ctx *ctx);

#endif
