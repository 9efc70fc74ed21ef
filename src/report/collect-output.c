/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect's result as text.  */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "report/collect-output.h"
#include "runtime/runtime.h"

void collect_output_metrics(const struct collect_result *r, struct strbuf *out)
{
	if (!r->output || !r->metrics)
		return;
	strbuf_addf(out,
		    "metrics:\n  PL   %zu probe locations\n  PLR  %zu reached\n"
		    "  RDV  %.3f MB raw (%" PRIu64 " events, %.1f B/event)\n"
		    "  PS   %.3f MB profile\n  CPT  %.3f s\n  PRT  %.3f s\n  PT   %.3f s\n",
		    r->probe_points, r->reached, (double)r->raw_bytes / 1e6, r->events,
		    r->events ? (double)r->raw_bytes / (double)r->events : 0.0,
		    (double)r->profile_bytes / 1e6, r->cpt_s, r->prt_s, r->pt_s);
}

void collect_output_written(const struct collect_result *r, struct strbuf *out)
{
	if (!r->output)
		return;
	strbuf_addf(out, "perun: %" PRIu64 " call%s of %zu function%s in %zu thread%s -> %s%s\n",
		    r->calls, r->calls == 1 ? "" : "s", r->functions, r->functions == 1 ? "" : "s",
		    r->threads, r->threads == 1 ? "" : "s", r->output,
		    r->in_jobs ? " (pending: perun add)" : "");
}

void collect_output_rescued(const struct collect_result *r, struct strbuf *out)
{
	if (r->output && r->rescued)
		strbuf_addf(out, "perun: the profile is in %s, not where it was asked for\n",
			    r->output);
}

void collect_output_notes(const struct collect_result *r, struct strbuf *out)
{
	size_t i;

	for (i = 0; i < r->notes.n; i++) {
		strbuf_addstr(out, r->notes.v[i]);
		strbuf_addch(out, '\n');
	}
}

void collect_output_say_written(const struct collect_result *r, int quiet)
{
	struct strbuf sb = STRBUF_INIT;

	collect_output_metrics(r, &sb);
	fputs(strbuf_str(&sb), stdout);
	strbuf_reset(&sb);
	if (!quiet)
		collect_output_written(r, &sb);
	collect_output_notes(r, &sb);
	fputs(strbuf_str(&sb), stderr);
	strbuf_release(&sb);
}

void collect_output_module(const struct session *s)
{
	/* stdout: KEY RUNTIME RELEASE, for scripts that fill fleets' caches */
	printf("%s %s %s\n", s->key, runtime_name(s->runtime), s->release ? s->release : "-");
	if (!s->o->quiet)
		fprintf(stderr, "perun: %s module in the cache (%s): %s\n", runtime_name(s->runtime),
			s->cache_state, s->module);
}
