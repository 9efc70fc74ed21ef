/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A collect's result: its exit status, and what perun collect says of it.  */
#include "config.h"

#include <string.h>

#include "collect/session.h"
#include "report/collect-output.h"
#include "tap.h"
#include "util/log.h"

int main(void)
{
	struct collect_result r;
	struct strbuf sb = STRBUF_INIT;

	memset(&r, 0, sizeof(r));
	is_int(collect_exit_code(&r), EXIT_OK, "ok: 0");
	r.outcome = COLLECT_INCOMPLETE;
	is_int(collect_exit_code(&r), EXIT_INCOMPLETE, "written but incomplete: 3");
	r.outcome = COLLECT_FAILED;
	is_int(collect_exit_code(&r), EXIT_FAIL, "failed: 1");
	r.outcome = COLLECT_REFUSED;
	is_int(collect_exit_code(&r), EXIT_USAGE, "refused: 2");
	r.outcome = COLLECT_SIGNALED;
	r.signal = 9;
	is_int(collect_exit_code(&r), 137, "killed by signal 9: 137");

	/* nothing written: nothing said */
	collect_output_metrics(&r, &sb);
	collect_output_written(&r, &sb);
	collect_output_rescued(&r, &sb);
	is_int((int)sb.len, 0, "no profile, no lines");

	r.output = (char *)".perun/jobs/app-trace.perf";
	r.in_jobs = 1;
	r.calls = 1;
	r.functions = 1;
	r.threads = 1;
	collect_output_written(&r, &sb);
	is_str(strbuf_str(&sb),
	       "perun: 1 call of 1 function in 1 thread -> .perun/jobs/app-trace.perf "
	       "(pending: perun add)\n",
	       "one of each, pending");
	strbuf_reset(&sb);
	r.output = (char *)"x.perf";
	r.in_jobs = 0;
	r.calls = 3000;
	r.functions = 2;
	r.threads = 4;
	collect_output_written(&r, &sb);
	is_str(strbuf_str(&sb), "perun: 3000 calls of 2 functions in 4 threads -> x.perf\n",
	       "plurals, where asked");
	strbuf_reset(&sb);
	collect_output_metrics(&r, &sb);
	is_int((int)sb.len, 0, "no --metrics, no table");
	r.metrics = 1;
	r.probe_points = 10;
	r.reached = 4;
	r.raw_bytes = 2000000;
	r.events = 100000;
	r.profile_bytes = 500000;
	r.cpt_s = 1.5;
	r.prt_s = 1.25;
	r.pt_s = 2;
	collect_output_metrics(&r, &sb);
	is_str(strbuf_str(&sb),
	       "metrics:\n  PL   10 probe locations\n  PLR  4 reached\n"
	       "  RDV  2.000 MB raw (100000 events, 20.0 B/event)\n  PS   0.500 MB profile\n"
	       "  CPT  1.500 s\n  PRT  1.250 s\n  PT   2.000 s\n",
	       "the --metrics table");
	strbuf_reset(&sb);
	collect_output_rescued(&r, &sb);
	is_int((int)sb.len, 0, "not rescued: nothing");
	r.rescued = 1;
	collect_output_rescued(&r, &sb);
	is_str(strbuf_str(&sb), "perun: the profile is in x.perf, not where it was asked for\n",
	       "rescued: where it went");
	strbuf_reset(&sb);

	/* what the collect said after the profile: a line each, in order */
	collect_output_notes(&r, &sb);
	is_int((int)sb.len, 0, "no notes, no lines");
	log_keep(&r.notes, "perun", "stats: %s", ".perun/stats/x");
	log_keep(&r.notes, "perun: warning", "the trace is incomplete (%d events lost): %s", 3,
		 "why");
	collect_output_notes(&r, &sb);
	is_str(strbuf_str(&sb),
	       "perun: stats: .perun/stats/x\n"
	       "perun: warning: the trace is incomplete (3 events lost): why\n",
	       "the notes as log.h prints them, in order");
	strv_clear(&r.notes);
	strbuf_release(&sb);
	return tap_done();
}
