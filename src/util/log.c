/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/strbuf.h"
#include "util/strv.h"

/* Verbosity chosen on the command line.  */
int log_level = 1;

static void vlog(const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
	if (prefix)
		fprintf(stderr, "%s: ", prefix);
	vfprintf(stderr, fmt, ap);
	if (suffix)
		fprintf(stderr, ": %s", suffix);
	fputc('\n', stderr);
}

void log_msg(int level, const char *prefix, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vlog(prefix, fmt, ap, NULL);
	va_end(ap);
}

void log_keep(struct strv *lines, const char *prefix, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (prefix)
		strbuf_addf(&sb, "%s: ", prefix);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strv_push(lines, strbuf_str(&sb));
	strbuf_release(&sb);
}

int log_error(const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prefix, fmt, ap, NULL);
	va_end(ap);
	return -1;
}

int log_error_errno(const char *prefix, const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(prefix, fmt, ap, strerror(err));
	va_end(ap);
	errno = err;
	return -1;
}

void log_bug(const char *file, int line, const char *msg)
{
	fprintf(stderr, "BUG: %s:%d: %s\n", file, line, msg);
	abort();
}
