/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The sides perun check compares, loaded from profile files
 * (analysis/check-input.h), in a directory outside any repository: one
 * file a side, files separated by commas (one run each), two files of
 * different jobs compared anyway, a file that is no profile refused; and
 * the comparison of a slower target found.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/check-input.h"
#include "tap.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

/* A run of cmd: main calls work 20 times, each call of work taking
 * work_ns (and a little jitter by seed).  */
static void write_run(const char *path, const char *cmd, double work_ns, int seed)
{
	struct strbuf sb = STRBUF_INIT;
	FILE *f;
	long id = 1, i;
	double incl = 0;

	strbuf_addf(&sb,
		    "{\"header\":{\"type\":\"mixed\",\"cmd\":\"%s\",\"args\":\"\","
		    "\"workload\":\"\",\"units\":{\"mixed(time delta)\":\"ns\"}},"
		    "\"collector_info\":{\"name\":\"trace\"},\"postprocessors\":[],"
		    "\"snapshots\":[{\"resources\":[",
		    cmd);
	for (i = 0; i < 20; i++) {
		double t = work_ns * (1 + 0.001 * (double)((i * 7 + seed * 13) % 11));
		strbuf_addf(&sb,
			    "{\"uid\":\"work\",\"amount\":%.0f,\"exclusive\":%.0f,\"call-id\":%ld,"
			    "\"caller-id\":1,\"type\":\"mixed\",\"subtype\":\"time delta\"},",
			    t, t, ++id);
		incl += t;
	}
	strbuf_addf(&sb,
		    "{\"uid\":\"main\",\"amount\":%.0f,\"exclusive\":100,\"call-id\":1,"
		    "\"caller-id\":-1,\"type\":\"mixed\",\"subtype\":\"time delta\"}]}]}",
		    incl + 100);
	f = fopen(path, "w");
	if (!f || fputs(sb.buf, f) < 0 || fclose(f))
		exit(99);
	strbuf_release(&sb);
}

int main(void)
{
	char *top = fs_mkdtemp("perun-t-check-input");
	struct check_input in;
	struct check_opts o;
	struct check_result res;
	int i;

	if (!top || chdir(top) < 0)
		return 99;
	for (i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "a%d.perf", i);
		write_run(name, "./app", 1000, i);
		snprintf(name, sizeof(name), "b%d.perf", i);
		write_run(name, "./app", 2000, i);
	}
	write_run("other.perf", "./other", 1000, 0);
	if (fs_write_atomic("junk.perf", "not json", 8, 0644) < 0)
		return 99;

	check_opts_init(&o);
	check_input_init(&in);
	is_int(check_input_load(&in, "a0.perf", "b0.perf", &o), 0, "two files");
	ok(in.base.n == 1 && in.target.n == 1, "one run a side");
	ok(!in.base.sha[0] && !in.target.sha[0], "no minor version for files");
	is_str(in.base.labels[0], "a0.perf", "the baseline's run is named by its file");
	is_str(check_side_name(&in.target), "b0.perf", "the target side is named by its file");
	ok(!in.have_repo && !o.nthresholds, "no repository, no thresholds");
	ok(!o.any_job, "runs of one job: paired by job");
	check_input_release(&in);

	check_opts_init(&o);
	is_int(check_input_load(&in, "a0.perf,a1.perf,a2.perf", "b0.perf,b1.perf,b2.perf", &o), 0,
	       "files separated by commas");
	ok(in.base.n == 3 && in.target.n == 3, "three runs a side");
	is_str(in.target.labels[2], "b2.perf", "in the order given");
	check_input_release(&in);

	check_opts_init(&o);
	log_level = 0; /* the warning is the caller's to see */
	is_int(check_input_load(&in, "a0.perf", "other.perf", &o), 0, "two files of two jobs");
	log_level = 1;
	ok(o.any_job, "compared anyway: one job of both");
	check_input_release(&in);

	check_opts_init(&o);
	ok(check_input_load(&in, "a0.perf", "junk.perf", &o) < 0,
	   "a file that is no profile fails");
	check_input_release(&in);

	check_opts_init(&o);
	memset(&res, 0, sizeof(res));
	is_int(check_input_compare(&in, "a0.perf,a1.perf,a2.perf", "b0.perf,b1.perf,b2.perf", &o,
				   &res),
	       0, "compared");
	ok(res.njobs == 1 && res.degradations > 0, "twice as slow: a degradation");
	check_result_release(&res);
	check_input_release(&in);

	if (chdir("/") < 0)
		return 99;
	fs_remove_tree(top);
	free(top);
	return tap_done();
}
