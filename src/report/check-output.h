/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What perun check prints, from a check_result (analysis/check.h): text for
 * a terminal, JSON, JUnit XML for CI (one test case per calling context and
 * job, a failure per degradation) and Markdown for a pull-request comment.  */
#ifndef PERUN_REPORT_CHECK_OUTPUT_H
#define PERUN_REPORT_CHECK_OUTPUT_H

#include "analysis/check.h"
#include "util/strbuf.h"

enum check_format { CHECK_FORMAT_TEXT, CHECK_FORMAT_JSON, CHECK_FORMAT_JUNIT, CHECK_FORMAT_MARKDOWN };

/* The format named s ("text", "json", "junit", "markdown"), or -1.  */
int check_format_parse(const char *s);

/* Appends r in format f to out.  base and target name the two sides (a
 * revision's sha or a file).  all: list unchanged contexts too (text and
 * Markdown; JSON and JUnit always hold every comparison).  */
void check_output(const struct check_result *r, const struct check_opts *o, enum check_format f,
		  int all, const char *base, const char *target, struct strbuf *out);

#endif
