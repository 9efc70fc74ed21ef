/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Messages and error returns.  Modules report with pr_error() and return -1;
 * only src/cmd/ decides to exit.  Each file may define PR_FMT before including
 * this header to prefix its messages.  */
#ifndef PERUN_LOG_H
#define PERUN_LOG_H

#include <stdarg.h>

#ifndef PR_FMT
#define PR_FMT "perun"
#endif

/* Exit codes shared by every command.  */
enum exit_code {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_INCOMPLETE = 3,	/* collect: the profile was written, but events were lost */
	EXIT_SIGNAL_BASE = 128,
};

/* Verbosity: 0 quiet, 1 normal, 2 verbose, 3+ debug.  */
extern int log_level;

void log_msg(int level, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int log_error(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int log_error_errno(const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct strv;
/* Formats a message as log_msg prints it ("PREFIX: MESSAGE", no newline) and
 * appends it to lines, for a caller that says it later.  */
void log_keep(struct strv *lines, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define pr_error(...) log_error(PR_FMT, __VA_ARGS__)
#define pr_error_errno(...) log_error_errno(PR_FMT, __VA_ARGS__)
#define pr_warn(...) log_msg(0, PR_FMT ": warning", __VA_ARGS__)
#define pr_info(...) log_msg(1, NULL, __VA_ARGS__)
#define pr_verbose(...) log_msg(2, NULL, __VA_ARGS__)
#define pr_dbg(...) log_msg(3, PR_FMT, __VA_ARGS__)

#define BUG(msg) log_bug(__FILE__, __LINE__, msg)
_Noreturn void log_bug(const char *file, int line, const char *msg);

#endif
