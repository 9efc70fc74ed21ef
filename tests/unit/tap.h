/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A tiny TAP producer for the unit tests (read by build-aux/tap-driver.sh).  */
#ifndef PERUN_TAP_H
#define PERUN_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...)                                                                 \
	do {                                                                                   \
		long long g_ = (long long)(got), w_ = (long long)(want);                       \
		if (!tap_ok(g_ == w_, __FILE__, __LINE__, __VA_ARGS__))                        \
			printf("#   got %lld, want %lld\n", g_, w_);                               \
	} while (0)
#define is_str(got, want, ...)                                                                 \
	do {                                                                                   \
		const char *g_ = (got), *w_ = (want);                                          \
		if (!tap_ok(g_ && w_ && !strcmp(g_, w_), __FILE__, __LINE__, __VA_ARGS__))     \
			printf("#   got '%s'\n#  want '%s'\n", g_ ? g_ : "(null)",              \
			       w_ ? w_ : "(null)");                                            \
	} while (0)

static int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), unused));
#include <stdarg.h>
static int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		printf("#   failed at %s:%d\n", file, line);
		tap_failed++;
	}
	return cond;
}

static int tap_done(void) __attribute__((unused));
static int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
