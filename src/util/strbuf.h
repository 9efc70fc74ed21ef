/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Growable NUL-terminated byte buffer, after git's strbuf.  */
#ifndef PERUN_STRBUF_H
#define PERUN_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t len;
	size_t alloc;
	char *buf;
};

#define STRBUF_INIT { 0, 0, NULL }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Appends the JSON string literal for s (quotes included).  */
void strbuf_add_json_str(struct strbuf *sb, const char *s);
/* Appends s for a terminal or a text listing: every control character (C0
 * including tab and newline, DEL, and C1 encoded as UTF-8) as \xNN, so a
 * name from a profile or a remote cannot move the cursor, retitle the
 * window or forge a line.  */
void strbuf_add_printable(struct strbuf *sb, const char *s);
/* A time of ns nanoseconds in three digits and a unit ("12.3 us"), or "-"
 * when it is not finite.  */
void strbuf_add_ns(struct strbuf *sb, double ns);
/* s as strbuf_add_printable writes it; caller frees.  */
char *xstrdup_printable(const char *s);
/* Reads the whole file; returns -1 with errno set on failure.  */
int strbuf_read_file(struct strbuf *sb, const char *path);
/* Never returns NULL: the empty string when nothing was added.  */
const char *strbuf_str(const struct strbuf *sb);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
