/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The directory of stored aggregates (store/aggregate-dir.h), outside any
 * repository: inputs land in their time boxes once, a release reads back
 * merged, metadata counts the inputs, expiry deletes only old boxes perun
 * wrote.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/aggregate-dir.h"
#include "store/aggregate.h"
#include "tap.h"
#include "util/fs.h"

/* A row: one function "work" called calls times, 100 ns each.  */
static void add_row(struct agg *a, unsigned seed, int64_t time, uint64_t calls)
{
	struct agg_input in;
	struct agg_func one;

	memset(&in, 0, sizeof(in));
	snprintf(in.id, sizeof(in.id), "%040x", seed);
	in.time = time;
	in.nf = 1;
	in.f = calloc(1, sizeof(*in.f));
	in.f->name = strdup("work");
	memset(&one, 0, sizeof(one));
	one.calls = calls;
	one.total = one.exclusive = 100 * calls;
	one.min = one.max = 100;
	one.hist[6] = calls;
	agg_func_add(in.f, &one);
	agg_add(a, &in);
	agg_input_release(&in);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		exit(99);
}

static uint64_t calls_of_work(const struct agg *a)
{
	struct agg_func *t;
	size_t n = agg_totals(a, &t);
	uint64_t c = n == 1 && !strcmp(t[0].name, "work") ? t[0].calls : 0;

	agg_funcs_free(t, n);
	return c;
}

int main(void)
{
	char *top = fs_mkdtemp("perun-t-aggdir"), *in_path, *text, *meta;
	struct strbuf sb = STRBUF_INIT;
	struct agg_job job;
	struct agg_job_result res;
	struct agg a, *rels;
	size_t n, i;
	char *specs[2];

	/* outside any repository: --dir is needed */
	if (!top || chdir(top) < 0)
		return 99;
	/* an input aggregate of three rows in two hour boxes */
	agg_init(&a, "in", "x", 0, 0);
	add_row(&a, 1, 7210, 3);
	add_row(&a, 2, 7300, 4);
	add_row(&a, 3, 10805, 5);
	agg_to_json(&a, &sb);
	agg_release(&a);
	in_path = xstrfmt("%s/in.json", top);
	write_file(in_path, strbuf_str(&sb));
	strbuf_release(&sb);
	ok(agg_is_aggregate_path(in_path), "an aggregate file is one");
	ok(!agg_is_aggregate_path(top), "a directory without aggregate/ is not");

	memset(&job, 0, sizeof(job));
	specs[0] = in_path;
	specs[1] = in_path;
	job.release = "v1";
	job.shard = "h";
	job.box = 3600;
	job.rev = "HEAD";
	job.specs = specs;
	job.nspecs = 1;
	is_int(agg_job_run(&job, &res), -1, "no repository and no dir: refused");
	ok(!res.stored && !fs_exists("aggs"), "and nothing written");
	agg_job_result_release(&res);

	job.dir = "aggs";
	is_int(agg_job_run(&job, &res), 0, "aggregate into aggs/v1");
	ok(res.stored && res.added == 3 && res.already == 0 && res.written == 2 &&
	   res.expired == -1, "3 inputs added to 2 time boxes");
	text = xstrfmt("%s/aggs", top);
	is_str(res.dir, text, "the directory, absolute");
	free(text);
	agg_job_result_release(&res);
	ok(fs_exists("aggs/v1/aggregate/report.7200.h") &&
	   fs_exists("aggs/v1/aggregate/report.10800.h") && fs_exists("aggs/v1/__state__/shard.h"),
	   "a report per time box, and the shard's flag");
	meta = NULL;
	{
		struct strbuf m = STRBUF_INIT;
		if (strbuf_read_file(&m, "aggs/v1/aggregate/metadata.h") >= 0)
			meta = strbuf_detach(&m);
		strbuf_release(&m);
	}
	/* the boxes in the directory's order */
	ok(meta && !strncmp(meta, "{\"perun_aggregate_metadata\":1,\"shard\":\"h\",\"timeboxes\":{",
			    55) &&
	   strstr(meta, "\"7200\":2") && strstr(meta, "\"10800\":1") &&
	   strstr(meta, "},\"inputs\":3}\n"),
	   "metadata: inputs per time box, and their sum");
	free(meta);

	/* the same input twice: each row counted once */
	job.nspecs = 2;
	is_int(agg_job_run(&job, &res), 0, "the same input again, twice");
	ok(res.added == 0 && res.already == 3, "0 added, 3 already there");
	agg_job_result_release(&res);

	is_int(agg_load_path("aggs/v1", &a), 0, "the release reads back");
	ok(a.n == 3 && calls_of_work(&a) == 12, "3 rows, 12 calls of work");
	agg_release(&a);

	/* another release; both listed in order */
	job.release = "v0";
	job.nspecs = 1;
	is_int(agg_job_run(&job, &res), 0, "another release");
	agg_job_result_release(&res);
	is_int(agg_load_releases("aggs", &rels, &n), 0, "the releases read");
	ok(n == 2 && !strcmp(rels[0].release, "v0") && !strcmp(rels[1].release, "v1"),
	   "v0 then v1");
	for (i = 0; i < n; i++)
		agg_release(&rels[i]);
	free(rels);

	/* expiry: only boxes ending before t, only files perun wrote */
	write_file("aggs/v1/aggregate/report.1.h", "not perun\n");
	is_int(agg_expire("aggs", "v1", 10800), 1, "one box of v1 ends by 10800");
	ok(!fs_exists("aggs/v1/aggregate/report.7200.h") &&
	   fs_exists("aggs/v1/aggregate/report.10800.h") && fs_exists("aggs/v1/aggregate/report.1.h"),
	   "it went; the later box and a file perun did not write stay");
	ok(fs_exists("aggs/v0/aggregate/report.7200.h"), "another release is left alone");
	is_int(agg_load_path("aggs/v1", &a), 0, "the release still reads");
	ok(a.n == 1 && calls_of_work(&a) == 5, "1 row, 5 calls");
	agg_release(&a);
	is_int(agg_expire("aggs", NULL, 1000000), 3, "every release: the 3 boxes left");

	if (chdir("/") < 0)
		return 99;
	fs_remove_tree(top);
	free(top);
	free(in_path);
	return tap_done();
}
