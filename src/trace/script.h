/* Generates the SystemTap script for a probe plan from templates/ and the
 * perun tapset.  Function names never enter the script (probes are placed
 * by address); paths and marks are escaped or rejected.  */
#ifndef PERUN_SCRIPT_H
#define PERUN_SCRIPT_H

#include "trace/plan.h"
#include "util/strbuf.h"

/* Appends s as the body of a stap string literal; -1 (with a message) when
 * s holds a character that cannot be made safe there.  */
int script_quote(struct strbuf *out, const char *s, const char *what);
/* True when s is a valid USDT mark name ([A-Za-z0-9_]+).  */
int script_valid_mark(const char *s);
/* With aggregate, the script keeps per-function summaries instead of
 * printing events (templates *_agg.stp.in).  */
int script_generate(const struct plan *p, const char *templates_dir, int aggregate,
		    struct strbuf *out);

#endif
