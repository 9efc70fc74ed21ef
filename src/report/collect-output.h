/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What perun collect says of the profile it wrote, from a collect_result
 * (collect/session.h): the --metrics table (stdout), the line that names the
 * profile, what the collect noted after it and where a rescued one went
 * (stderr).  */
#ifndef PERUN_REPORT_COLLECT_OUTPUT_H
#define PERUN_REPORT_COLLECT_OUTPUT_H

#include "collect/session.h"
#include "util/strbuf.h"

/* Appends r's --metrics table (PL, PLR, RDV, PS, CPT, PRT, PT) to out, when
 * r holds them.  */
void collect_output_metrics(const struct collect_result *r, struct strbuf *out);
/* Appends "perun: N calls of M functions in T threads -> FILE" to out, and
 * that FILE is pending when it is in .perun/jobs.  */
void collect_output_written(const struct collect_result *r, struct strbuf *out);
/* Appends what the collect says after its profile (r's notes), a line each,
 * to out.  */
void collect_output_notes(const struct collect_result *r, struct strbuf *out);
/* Prints what a collect says of the profile it wrote: its --metrics table on
 * stdout; on stderr, unless quiet, the written line, then r's notes (which
 * the collect already chose under quiet).  */
void collect_output_say_written(const struct collect_result *r, int quiet);
/* After --compile-only: "KEY RUNTIME RELEASE" of s's module on stdout, and
 * where the module is on stderr unless quiet.  */
void collect_output_module(const struct session *s);
/* Appends where a rescued profile went to out, when r's was rescued.  */
void collect_output_rescued(const struct collect_result *r, struct strbuf *out);

#endif
