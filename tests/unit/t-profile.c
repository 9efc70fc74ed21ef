/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile library: validation messages, the seed 001 query API,
 * summaries and folded stacks on a small profile.  */
#include "config.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile.h"
#include "profile/writer.h"
#include "store/stats.h"
#include "runtime/calibrate.h"
#include "tap.h"

static const char memprof[] =
	"{\"header\":{\"type\":\"memory\",\"units\":{\"memory\":\"B\"},\"cmd\":\"./a\"},"
	"\"collector_info\":{\"name\":\"memory\",\"params\":{}},\"postprocessors\":[],"
	"\"snapshots\":[{\"time\":\"0.1\",\"resources\":["
	"{\"type\":\"memory\",\"subtype\":\"malloc\",\"amount\":4,\"address\":100,"
	" \"trace\":[{\"function\":\"malloc\",\"line\":0},{\"function\":\"main\",\"line\":22}],"
	" \"uid\":{\"source\":\"t.c\",\"function\":\"main\",\"line\":22}},"
	"{\"type\":\"memory\",\"subtype\":\"free\",\"amount\":0,\"address\":\"100\","
	" \"uid\":{\"source\":\"t.c\",\"function\":\"f\",\"line\":27}}]}]}";

static const char trace[] =
	"{\"header\":{\"type\":\"mixed\",\"units\":{\"mixed(time delta)\":\"ns\"},\"cmd\":\"x\"},"
	"\"collector_info\":{\"name\":\"trace\"},\"postprocessors\":[],\"snapshots\":[{\"resources\":["
	"{\"amount\":10,\"exclusive\":10,\"uid\":\"g\",\"type\":\"mixed\",\"call-id\":2,\"caller-id\":1},"
	"{\"amount\":30,\"exclusive\":20,\"uid\":\"f\",\"type\":\"mixed\",\"call-id\":1,\"caller-id\":0},"
	"{\"amount\":5,\"exclusive\":5,\"uid\":\"g\",\"type\":\"mixed\",\"call-id\":4,\"caller-id\":3},"
	"{\"amount\":5,\"exclusive\":5,\"uid\":\"f\",\"type\":\"mixed\",\"call-id\":3,\"caller-id\":0},"
	"{\"amount\":60,\"exclusive\":20,\"uid\":\"main\",\"type\":\"mixed\",\"call-id\":0,\"caller-id\":-1}"
	"]}]}";

/* fib calling itself once (ids 0 > 1), g sampled 1 in 10 with --aggregate
 * style resources on two threads.  */
static const char recursive[] =
	"{\"header\":{\"type\":\"mixed\",\"units\":{\"mixed(time delta)\":\"ns\"},\"cmd\":\"x\"},"
	"\"collector_info\":{\"name\":\"trace\"},\"postprocessors\":[],\"snapshots\":[{\"resources\":["
	"{\"amount\":10,\"exclusive\":10,\"uid\":\"fib\",\"type\":\"mixed\",\"call-id\":1,\"caller-id\":0},"
	"{\"amount\":30,\"exclusive\":20,\"uid\":\"fib\",\"type\":\"mixed\",\"call-id\":0,\"caller-id\":-1}"
	"]}],\"trace\":{\"summary\":{\"fib\":{\"count\":2,\"calibrated_mean\":12.5}}}}";

static const char aggregated[] =
	"{\"header\":{\"type\":\"mixed\",\"units\":{\"mixed(time delta)\":\"ns\"},\"cmd\":\"x\"},"
	"\"collector_info\":{\"name\":\"trace\"},\"postprocessors\":[],\"snapshots\":[{\"resources\":["
	"{\"amount\":150000,\"uid\":\"g\",\"type\":\"mixed\",\"subtype\":\"time summary\","
	" \"thread\":1,\"count\":100,\"min\":1100,\"max\":1900,\"log2_hist\":[0,0,0,0,0,0,0,0,0,0,100]},"
	"{\"amount\":150000,\"uid\":\"g\",\"type\":\"mixed\",\"subtype\":\"time summary\","
	" \"thread\":2,\"count\":100,\"min\":1100,\"max\":1900,\"log2_hist\":[0,0,0,0,0,0,0,0,0,0,100]}"
	"]}],\"trace\":{\"summary\":{\"g\":{\"count\":200,\"sampled\":10}}}}";

static void test_quantiles(void)
{
	uint64_t h[64] = { 0 };

	is_int((long)log2_hist_quantile(h, 64, 0.5, 0, 100), 0, "an empty histogram: 0");
	h[10] = 4;	/* four calls in [1024, 2048) */
	is_int((long)log2_hist_quantile(h, 64, 0.5, 1000, 3000), 1536,
	       "median interpolated to the middle of its bucket");
	is_int((long)log2_hist_quantile(h, 64, 0.5, 1600, 1700), 1600, "clamped to the minimum");
	h[3] = 1;	/* and one in [8, 16) */
	is_int((long)log2_hist_quantile(h, 64, 0.5, 8, 3000), 1408,
	       "median of five: rank 2.5, 1.5 of bucket 10's 4 (1024 + 1024 x 0.375)");
	is_int((long)log2_hist_quantile(h, 64, 0.95, 8, 3000), 1984,
	       "p95: rank 4.75 (1024 + 1024 x 0.9375)");
	is_int((long)log2_hist_quantile(h, 64, 0.95, 8, 1900), 1900, "p95 clamped to the maximum");
	is_int((long)log2_hist_quantile(h, 64, 0.1, 8, 3000), 12, "p10 in bucket 3");
	{
		static const double v[] = { 10, 20, 30, 40 }, one[] = { 7 };
		is_int((long)quantile_sorted(v, 4, 0.5), 25, "exact median of four: the middle two's mean");
		is_int((long)quantile_sorted(v, 3, 0.5), 20, "of three: the middle one");
		is_int((long)(quantile_sorted(v, 4, 0.95) * 10), 385, "p95: 30 + 0.85 x 10");
		is_int((long)quantile_sorted(one, 1, 0.95), 7, "one value is every quantile");
		is_int((long)quantile_sorted(v, 0, 0.5), 0, "none: 0");
	}
}

/* An incomplete profile's header: what was lost, per function.  */
static const char lossy[] =
	"{\"header\":{\"type\":\"mixed\",\"units\":{\"mixed(time delta)\":\"ns\"}},"
	"\"collector_info\":{\"name\":\"trace\",\"probes\":{\"planned\":6,\"attached\":4,"
	"\"failed\":[\"h (/bin/x): its entry probe was not attached\"]}},"
	"\"snapshots\":[{\"resources\":[{\"amount\":5,\"uid\":\"f\"}]}],"
	"\"trace\":{\"complete\":false,\"anomalies\":{\"lost_events\":30,\"lost_in_buffer\":20,"
	"\"lost_in_transport\":10,\"missing_records\":0,\"lost_by_function\":{\"f\":25,\"g\":5},"
	"\"unfinished_by_function\":{\"g\":2},\"missing_end\":false}}}";

static void test_incomplete(void)
{
	struct profile p;
	struct strbuf out = STRBUF_INIT;

	ok(profile_parse(&p, lossy, strlen(lossy), "lossy") == 0, "a lossy profile");
	is_int(profile_incomplete(&p, "> ", &out), 1, "it says it is incomplete");
	is_str(out.buf,
	       "> incomplete profile: 30 events lost (20 in the recorder's full buffer, 10 in the "
	       "runtime's transport), 2 of 6 probe points not attached; the calls and times shown miss "
	       "what was lost\n"
	       ">   f: 25 events lost\n"
	       ">   g: 5 events lost, 2 calls without a duration\n"
	       ">   not attached: h (/bin/x): its entry probe was not attached\n",
	       "the header: the loss, then per function, most first");
	strbuf_reset(&out);
	profile_summary(&p, &out);
	ok(!strstr(out.buf, "incomplete"), "the table itself leaves it to its callers (show)");
	profile_release(&p);
	strbuf_release(&out);
	ok(profile_parse(&p, aggregated, strlen(aggregated), "agg") == 0 &&
		   profile_incomplete(&p, "", &out) == 0 && !out.len,
	   "a profile that does not say it is incomplete: nothing");
	profile_release(&p);
	strbuf_release(&out);
}

static struct json_object *jget(struct json_object *o, const char *k)
{
	return json_object_object_get(o, k);
}

/* The header and collector_info a test writer opens with.  */
static void writer_regions(struct json_object **h, struct json_object **ci)
{
	*h = json_object_new_object();
	*ci = json_object_new_object();
	json_object_object_add(*h, "type", json_object_new_string("mixed"));
	json_object_object_add(*h, "units", json_object_new_object());
	json_object_object_add(*h, "cmd", json_object_new_string("x"));
	json_object_object_add(*ci, "name", json_object_new_string("trace"));
}

/* The writer's summaries: the recursion rule, calibration, sampling.  */
static void test_writer(void)
{
	/* fib every call, its entry emulated; g 1 in 10, its entry stepped */
	struct profile_column cols[2] = { { "fib", 1, 1 }, { "g", 10, 2 } };
	struct profile_writer w;
	struct parse_stats st;
	struct probe_cost cost = { 100, 300, 700 };
	unsigned char stepped[2] = { 0, 1 };
	struct call_record r;
	struct json_object *js, *ci, *h;
	char path[] = "/tmp/t-profile.XXXXXX";
	struct profile p;
	int fd = mkstemp(path);

	close(fd);
	writer_regions(&h, &ci);
	ok(profile_writer_open(&w, path, cols, 2, NULL, h, ci, NULL, 1) == 0, "writer opens");
	profile_writer_calibrate(&w, &cost, stepped);
	memset(&r, 0, sizeof(r));
	/* inner fib: 1000 ns, inside the outer one */
	r.probe = 0; r.amount = 1000; r.exclusive = 1000; r.nested = 1; r.call_id = 1;
	r.caller_id = 0; r.caller_probe = 0; r.depth = 1;
	profile_writer_call(&w, &r);
	/* outer fib: 3000 ns holding the inner one */
	r.amount = 3000; r.exclusive = 2000; r.nested = 0; r.callees = 1; r.children = 1;
	r.call_id = 0; r.caller_id = -1; r.caller_probe = -1; r.depth = 0;
	profile_writer_call(&w, &r);
	/* g (stepped out of line): 50 ns, less than the probe cost; 1000 ns */
	memset(&r, 0, sizeof(r));
	r.probe = 1; r.amount = 50; r.exclusive = 50; r.call_id = 2; r.caller_id = -1;
	r.caller_probe = -1;
	profile_writer_call(&w, &r);
	r.amount = 1000; r.exclusive = 1000; r.call_id = 3;
	profile_writer_call(&w, &r);

	is_int((long)w.sum[0].total, 3000, "fib total: the outermost call only");
	is_int((long)w.sum[0].exclusive, 3000, "fib exclusive: every call's own time");
	js = probe_summary_json(&w.sum[0]);
	is_int((long)json_object_get_double(jget(js, "mean")), 2000, "fib mean: over every call");
	is_int((long)json_object_get_double(jget(js, "calibrated_total")), 2600,
	       "calibrated total: 3000 - probe 100 - one callee x pair 300");
	is_int((long)json_object_get_double(jget(js, "calibrated_mean")), 1750,
	       "calibrated mean: (900 + 2600) / 2");
	is_int((long)json_object_get_double(jget(js, "calibrated_exclusive")), 2600,
	       "calibrated exclusive: 900 + (2000 - 100 - 1 x (300 - 100))");
	ok(!jget(js, "sampled"), "fib records every call: no sampled field");
	is_str(json_object_get_string(jget(js, "quantiles")), "log2-histogram",
	       "one probe's summary alone: quantiles from its histograms, and it says so");
	is_str(json_object_get_string(jget(js, "probe_entry")), "emulated",
	       "fib's entry probe: on an instruction the kernel emulates (the plan's flag)");
	json_object_put(js);
	{
		size_t ids[] = { 0 };
		js = profile_writer_summary_json(&w, ids, 1);
		is_str(json_object_get_string(jget(js, "quantiles")), "exact",
		       "the writer's summary: exact quantiles over the recorded calls");
		is_int((long)json_object_get_double(jget(js, "median")), 2000,
		       "median of 1000 and 3000: their mean");
		is_int((long)json_object_get_double(jget(js, "p95")), 2900,
		       "p95: 1000 + 0.95 x 2000 (linear between the closest ranks)");
		is_int((long)json_object_get_double(jget(js, "calibrated_median")), 1750,
		       "calibrated median of 900 and 2600");
		is_int((long)json_object_get_double(jget(js, "calibrated_p95")), 2515,
		       "calibrated p95: 900 + 0.95 x 1700");
		json_object_put(js);
	}
	js = probe_summary_json(&w.sum[1]);
	is_int((long)json_object_get_double(jget(js, "calibrated_total")), 300,
	       "g: 0 (50 ns is less than its probe cost, and never below 0) + 1000 - stepped 700");
	ok(json_object_get_boolean(jget(js, "probe_stepped")), "g says its stepped cost was used");
	is_str(json_object_get_string(jget(js, "probe_entry")), "stepped",
	       "g's entry probe: stepped out of line");
	is_int((long)json_object_get_int64(jget(js, "sampled")), 10, "g: sampled 1 in 10");
	json_object_put(js);
	memset(&st, 0, sizeof(st));
	ok(profile_writer_close(&w, &st, NULL) == 0, "writer closes");
	ok(profile_load(&p, path) == 0 && profile_validate(&p, path) == 0, "its profile is valid");
	profile_release(&p);
	unlink(path);
	json_object_put(h);
	json_object_put(ci);
}

/* perun's loader times some returns with uretprobes and the others on
 * their return instructions: each call and callee is calibrated with its
 * own kind's cost.  */
static void test_writer_returns(void)
{
	/* walk's returns on its instructions (recursive), leaf's a uretprobe */
	struct profile_column cols[2] = { { "walk", 1, 1 }, { "leaf", 1, 1 } };
	struct profile_writer w;
	struct parse_stats st;
	struct probe_cost cost = { 100, 300, 700, 400, 1500 };
	unsigned char insn[2] = { 1, 0 };
	struct call_record r;
	struct json_object *js, *ci, *h;
	char path[] = "/tmp/t-profile.XXXXXX";
	int fd = mkstemp(path);

	close(fd);
	writer_regions(&h, &ci);
	ok(profile_writer_open(&w, path, cols, 2, NULL, h, ci, NULL, 1) == 0, "writer opens");
	profile_writer_calibrate(&w, &cost, NULL);
	profile_writer_set_returns(&w, insn);
	memset(&r, 0, sizeof(r));
	/* leaf: 1000 ns, inside the inner walk */
	r.probe = 1; r.amount = 1000; r.exclusive = 1000; r.call_id = 2; r.caller_id = 1;
	r.caller_probe = 0; r.depth = 2;
	profile_writer_call(&w, &r);
	/* inner walk: 5000 ns holding leaf (a uretprobe) */
	r.probe = 0; r.amount = 5000; r.exclusive = 4000; r.nested = 1; r.call_id = 1;
	r.caller_id = 0; r.caller_probe = 0; r.depth = 1; r.callees = 1; r.children = 1;
	profile_writer_call(&w, &r);
	/* outer walk: 10000 ns holding the inner walk (instructions) and leaf */
	r.amount = 10000; r.exclusive = 5000; r.nested = 0; r.callees = 2; r.callees_insn = 1;
	r.children = 1; r.children_insn = 1; r.call_id = 0; r.caller_id = -1;
	r.caller_probe = -1; r.depth = 0;
	profile_writer_call(&w, &r);

	js = probe_summary_json(&w.sum[1]);
	is_int((long)json_object_get_double(jget(js, "calibrated_total")), 900,
	       "leaf: 1000 - its uretprobe's probe cost 100");
	is_str(json_object_get_string(jget(js, "probe_return")), "uretprobe",
	       "leaf says its return was a uretprobe");
	json_object_put(js);
	js = probe_summary_json(&w.sum[0]);
	is_int((long)json_object_get_double(jget(js, "calibrated_total")), 7800,
	       "outer walk: 10000 - own 400 - walk's pair 1500 - leaf's pair 300");
	is_int((long)json_object_get_double(jget(js, "calibrated_mean")), (7800 + 4300) / 2,
	       "mean with the inner walk: 5000 - own 400 - leaf's pair 300");
	is_int((long)json_object_get_double(jget(js, "calibrated_exclusive")), 3400 + 3500,
	       "exclusive: inner 4000 - 400 - leaf (300 - 100); outer 5000 - 400 - walk "
	       "(1500 - 400)");
	is_str(json_object_get_string(jget(js, "probe_return")), "instructions",
	       "walk says its returns were probed on their instructions");
	json_object_put(js);
	memset(&st, 0, sizeof(st));
	ok(profile_writer_close(&w, &st, NULL) == 0, "writer closes");
	unlink(path);
	json_object_put(h);
	json_object_put(ci);
}

/* Per-call records as perun collect --per-call writes them.  */
#define CALL(a, e, uid, th, ord, ts, d, id, cid, caller)                                         \
	"{\"amount\":" #a ",\"exclusive\":" #e ",\"uid\":\"" uid "\",\"type\":\"mixed\","           \
	"\"subtype\":\"time delta\",\"thread\":" #th ",\"call-order\":" #ord ",\"timestamp\":" #ts \
	",\"depth\":" #d ",\"call-id\":" #id ",\"caller-id\":" #cid ",\"caller\":" caller "}"
static const char percall[] =
	"{\"header\":{\"type\":\"mixed\",\"units\":{\"mixed(time delta)\":\"ns\"},\"cmd\":\"x\"},"
	"\"collector_info\":{\"name\":\"trace\"},\"postprocessors\":[],\"snapshots\":[{\"resources\":["
	CALL(10, 10, "g", 7, 0, 105, 2, 2, 1, "\"f\"") ","
	CALL(30, 20, "f", 7, 0, 100, 1, 1, 0, "\"main\"") ","
	CALL(4, 4, "g", 8, 1, 120, 0, 4, -1, "null") ","
	CALL(60, 30, "main", 7, 0, 90, 0, 0, -1, "null")
	"],\"time\":\"0.000000200\",\"models\":[]}],\"chunks\":{},\"trace\":{\"x\":1}}\n";

static char *convert(const struct profile *p, int form)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = profile_write_form(p, f, form, "t");

	fclose(f);
	if (ret < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Both forms of the same calls answer every reader the same.  */
static void both_forms(void)
{
	struct profile pc, c, pc2;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	char *compact, *back, **va, **vb;
	size_t na, nb, i;
	int same;

	ok(profile_parse(&pc, percall, strlen(percall), "pc") == 0 && profile_validate(&pc, "pc") == 0,
	   "a per-call profile");
	ok(!profile_is_compact(&pc), "it is not compact");
	compact = convert(&pc, PROFILE_COMPACT);
	ok(compact && profile_parse(&c, compact, strlen(compact), "c") == 0 &&
		   profile_validate(&c, "c") == 0 && profile_is_compact(&c),
	   "converted to the compact form");
	ok(strstr(compact, "\"calls\":[") && strstr(compact, "\"uids\":[\"g\",\"f\",\"main\"]") &&
		   strstr(compact, "\"resources\":[]") && strstr(compact, ",\"trace\":{\"x\":1}}"),
	   "columns in calls, uids in chunks, other regions kept");
	back = convert(&c, PROFILE_PER_CALL);
	is_str(back, percall, "and back: the same bytes");
	ok(profile_parse(&pc2, back, strlen(back), "pc2") == 0, "which parse");
	free(back);
	back = convert(&c, PROFILE_COMPACT);
	is_str(back, compact, "compact -> compact is identical");
	free(back);
	profile_folded(&pc, &a);
	profile_folded(&c, &b);
	is_str(b.buf, a.buf, "folded stacks agree");
	is_str(b.buf, "g 4\nmain 30\nmain;f 20\nmain;f;g 10\n", "and are right");
	strbuf_reset(&a);
	strbuf_reset(&b);
	profile_summary(&pc, &a);
	profile_summary(&c, &b);
	is_str(b.buf, a.buf, "summaries agree");
	na = profile_unique_values(&pc, "caller", &va);
	nb = profile_unique_values(&c, "caller", &vb);
	same = na == nb && na == 3;
	for (i = 0; same && i < na; i++)
		same = !strcmp(va[i], vb[i]);
	ok(same, "query: unique callers agree (f, main, null)");
	strings_free(va, na);
	strings_free(vb, nb);
	na = profile_numeric_keys(&pc, &va);
	nb = profile_numeric_keys(&c, &vb);
	same = na == nb && na == 8;
	for (i = 0; same && i < na; i++)
		same = !strcmp(va[i], vb[i]);
	ok(same, "query: numeric keys agree");
	strings_free(va, na);
	strings_free(vb, nb);
	profile_release(&c);
	free(compact);

	/* a column of the wrong length is refused */
	compact = convert(&pc, PROFILE_COMPACT);
	{
		char *at = strstr(compact, "\"amount\":10,");
		struct strbuf bad = STRBUF_INIT;
		ok(at != NULL, "a block with amount 10");
		if (at) {
			strbuf_add(&bad, compact, (size_t)(at - compact));
			strbuf_addstr(&bad, "\"amount\":[10,11],");
			strbuf_addstr(&bad, at + strlen("\"amount\":10,"));
		}
		ok(bad.len && profile_parse(&c, bad.buf, bad.len, "c3") == 0 &&
			   profile_validate(&c, "c3") < 0,
		   "two amounts in a block of one call are refused");
		strbuf_release(&bad);
	}
	profile_release(&c);
	free(compact);
	profile_release(&pc);
	profile_release(&pc2);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* Two probes of one name (python3.11d: PyUnicode_IS_READY in 60 files):
 * their summary is both together, as their resources are.  */
static void test_summary_merge(void)
{
	struct probe_summary a, b, none;
	struct json_object *js;

	memset(&a, 0, sizeof(a));
	memset(&none, 0, sizeof(none));
	none.min = UINT64_MAX;
	none.sampled = 1;
	a.count = 2; a.total = 300; a.sum = 300; a.exclusive = 200; a.min = 100; a.max = 200;
	a.hist[7] = 2; a.sampled = 1;
	b = a;
	b.count = 1; b.total = b.sum = b.exclusive = 5000; b.min = b.max = 5000;
	memset(b.hist, 0, sizeof(b.hist));
	b.hist[12] = 1;
	probe_summary_merge(&none, &a);
	is_int((long)none.count, 2, "a copy with no calls takes the other's");
	is_int((long)none.min, 100, "and its min, not UINT64_MAX");
	probe_summary_merge(&a, &b);
	is_int((long)a.count, 3, "merged count");
	is_int((long)a.total, 5300, "merged total");
	is_int((long)a.exclusive, 5200, "merged exclusive");
	is_int((long)a.min, 100, "merged min");
	is_int((long)a.max, 5000, "merged max");
	is_int((long)(a.hist[7] + a.hist[12]), 3, "merged histogram");
	js = probe_summary_json(&a);
	is_int((long)json_object_get_double(jget(js, "mean")), 1766, "mean over all three calls");
	json_object_put(js);
	memset(&b, 0, sizeof(b));
	probe_summary_merge(&a, &b);
	is_int((long)a.count, 3, "a copy with no calls changes nothing");
	/* sampled 1 in 1e9, each copy recorded its first call only: 2 calls at
	 * least, not (2 - 1) * 1e9 + 1 */
	memset(&a, 0, sizeof(a));
	a.count = 1; a.min = a.max = a.total = a.sum = 10; a.sampled = 1000000000;
	b = a;
	is_int((long)probe_summary_estimate(&a), 1, "one recorded call of 1 in 1e9: 1 at least");
	probe_summary_merge(&a, &b);
	is_int((long)probe_summary_estimate(&a), 2, "two copies, one recorded call each: 2");
	js = probe_summary_json(&a);
	is_int((long)json_object_get_int64(jget(js, "estimated_calls")), 2,
	       "the summary says estimated_calls 2");
	json_object_put(js);
	b.count = 3;
	probe_summary_merge(&a, &b);
	is_int((long)probe_summary_estimate(&a), 2000000003, "plus (3 - 1) * 1e9 + 1");
	/* the loader counted every call of a sampled function: that count,
	 * not the guess, and merged only when every copy was counted */
	memset(&a, 0, sizeof(a));
	a.count = 202; a.min = a.max = 10; a.total = a.sum = 2020; a.sampled = 3;
	is_int((long)probe_summary_estimate(&a), 604, "202 of 1 in 3, uncounted: (202 - 1) * 3 + 1");
	a.counted = 600;
	is_int((long)probe_summary_estimate(&a), 600, "counted: 600, the count");
	js = probe_summary_json(&a);
	is_int((long)json_object_get_int64(jget(js, "estimated_calls")), 600,
	       "the summary's estimated_calls is the count");
	is_int((long)json_object_get_int64(jget(js, "counted_calls")), 600,
	       "and it says they were counted");
	json_object_put(js);
	b = a;
	b.counted = 30; b.count = 10;
	probe_summary_merge(&a, &b);
	is_int((long)a.counted, 630, "two counted copies: their counts added");
	is_int((long)probe_summary_estimate(&a), 630, "the estimate of the two is 630");
	b.counted = 0;
	probe_summary_merge(&a, &b);
	is_int((long)a.counted, 0, "a copy not counted: the merge is not counted");
	is_int((long)probe_summary_estimate(&a), 630 + 28, "and estimates: 630 + (10 - 1) * 3 + 1");
	{
		static const char sum[] =
			"{\"f\":{\"count\":2,\"total\":20,\"min\":10,\"max\":10,\"mean\":10,"
			"\"sampled\":1000000000,\"estimated_calls\":2},"
			"\"g\":{\"count\":2,\"total\":20,\"min\":10,\"max\":10,\"mean\":10,"
			"\"sampled\":1000000000}}";
		struct json_object *h = json_object_new_object(), *sj = json_tokener_parse(sum);
		struct stats st;
		ok(stats_from_summary(h, "trace", sj, &st) == 0, "stats from a sampled summary");
		is_int((long)stats_find(&st, "f")->count, 2, "stats take estimated_calls");
		is_int((long)stats_find(&st, "g")->count, 1000000001,
		       "without it: (2 - 1) * 1e9 + 1, one probe");
		stats_release(&st);
		json_object_put(h);
		json_object_put(sj);
	}
}

/* Two C++ names of one class template, 150 characters long, that differ
 * only in a template argument in their middle: the summary's rows read
 * differently, and a short name is never cut.  */
static void test_long_names(void)
{
	struct profile p;
	struct strbuf js = STRBUF_INIT, out = STRBUF_INIT;
	char pad[61], a[200], b[200], *la, *lb, *nl;

	memset(pad, 'x', 60);
	pad[60] = '\0';
	snprintf(a, sizeof(a), "ns::Table<%s, int, %s>::lookup(std::string const&)", pad, pad);
	snprintf(b, sizeof(b), "ns::Table<%s, long, %s>::lookup(std::string const&)", pad, pad);
	strbuf_addf(&js,
		    "{\"header\":{\"type\":\"mixed\",\"units\":{\"mixed(time delta)\":\"ns\"},"
		    "\"cmd\":\"x\"},\"collector_info\":{\"name\":\"trace\"},\"postprocessors\":[],"
		    "\"snapshots\":[{\"resources\":["
		    "{\"amount\":10,\"exclusive\":10,\"uid\":\"%s\",\"type\":\"mixed\","
		    "\"call-id\":0,\"caller-id\":-1},"
		    "{\"amount\":20,\"exclusive\":20,\"uid\":\"%s\",\"type\":\"mixed\","
		    "\"call-id\":1,\"caller-id\":-1},"
		    "{\"amount\":5,\"exclusive\":5,\"uid\":\"short\",\"type\":\"mixed\","
		    "\"call-id\":2,\"caller-id\":-1}]}]}",
		    a, b);
	ok(profile_parse(&p, js.buf, js.len, "long") == 0, "a profile with two long names");
	profile_summary(&p, &out);
	/* rows by total: b (20), a (10), short (5), after the header */
	la = strchr(out.buf, '\n') + 1;
	lb = strchr(la, '\n') + 1;
	nl = strchr(lb, '\n');
	ok(nl && strstr(la, "...") && strstr(lb, "..."), "both long names are cut");
	/* the name column is as wide in both rows: compare it */
	ok(nl && strstr(la, " 1 ") && strstr(lb, " 1 ") &&
		   strncmp(la, lb, (size_t)(strstr(la, " 1 ") - la)) != 0,
	   "into names that differ");
	ok(strstr(la, ", lon") && strstr(lb, ", int") && strstr(la, ">::lookup(std::string const&)"),
	   "each shows its own template argument, and its end");
	ok(strstr(out.buf, "\nshort "), "a short name is whole");
	profile_release(&p);
	strbuf_release(&js);
	strbuf_release(&out);
}

int main(void)
{
	struct profile p;
	struct kv *kv;
	char **v;
	size_t n, i;
	struct strbuf out = STRBUF_INIT;
	int found = 0;
	char line[256];

	ok(profile_parse(&p, memprof, strlen(memprof), "mem") == 0, "parse a memory profile");
	ok(profile_validate(&p, "mem") == 0, "it is valid");
	is_str(profile_type(&p), "memory", "type");
	n = profile_flatten(json_object_array_get_idx(
				    json_object_object_get(json_object_array_get_idx(
								   json_object_object_get(p.root, "snapshots"), 0),
							   "resources"),
				    0),
			    &kv);
	for (i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, "uid:function") && !strcmp(kv[i].value, "main"))
			found |= 1;
		if (!strcmp(kv[i].key, "trace::function") && !strcmp(kv[i].value, "malloc,main"))
			found |= 2;
		if (!strcmp(kv[i].key, "amount") && kv[i].numeric && !strcmp(kv[i].value, "4"))
			found |= 4;
	}
	is_int(found, 7, "flattened uid:function, trace::function and a numeric amount");
	kv_free(kv, n);
	n = profile_unique_values(&p, "uid:function", &v);
	ok(n == 2 && !strcmp(v[0], "f") && !strcmp(v[1], "main"), "unique values of uid:function");
	strings_free(v, n);
	n = profile_numeric_keys(&p, &v);
	ok(n == 2 && !strcmp(v[0], "amount") && !strcmp(v[1], "uid:line"),
	   "numeric keys: amount and uid:line (address is a string once; trace::line is a list)");
	for (i = 0; i < n; i++)
		ok(strcmp(v[i], "address"), "address is not numeric in every resource");
	strings_free(v, n);
	profile_release(&p);

	/* validation names the first bad field */
	ok(profile_parse(&p, "[1]", 3, "arr") < 0, "an array is not a profile");
	ok(profile_parse(&p, "{\"header\":", 10, "cut") < 0, "truncated JSON is refused");
	ok(profile_parse(&p, "{\"header\":{\"type\":\"t\",\"units\":{},\"cmd\":\"c\"},"
			     "\"collector_info\":{\"name\":\"n\"},\"postprocessors\":[],"
			     "\"snapshots\":[{\"resources\":[{\"amount\":1,\"type\":\"x\"}]}]}",
			 160, "nouid") == 0 && profile_validate(&p, "nouid") < 0,
	   "a resource without uid is invalid");
	profile_release(&p);

	/* summary and folded stacks */
	ok(profile_parse(&p, trace, strlen(trace), "trace") == 0 && profile_validate(&p, "trace") == 0,
	   "a trace profile");
	profile_folded(&p, &out);
	is_str(out.buf, "main 20\nmain;f 25\nmain;f;g 15\n", "folded: stacks with summed exclusive time");
	strbuf_reset(&out);
	profile_summary(&p, &out);
	ok(strstr(out.buf, "main ") && strstr(out.buf, "f ") && strstr(out.buf, "amounts in ns"),
	   "summary names functions and the unit");
	ok(strstr(out.buf, "f                                                 2             35"),
	   "f: 2 calls, 35 ns in all");
	strbuf_reset(&out);
	n = profile_flamegraph("main 20\nmain;f 25\nmain;f;g 15\n", "t", &out);
	is_int(n, 3, "flame graph: one frame per stack node");
	ok(strstr(out.buf, "<svg") && strstr(out.buf, "<script") && !strstr(out.buf, "src="),
	   "a self-contained SVG");
	strbuf_reset(&out);
	n = profile_flamegraph("a;<b&c> 5\n", "x\"y", &out);
	ok(n == 2 && strstr(out.buf, "&lt;b&amp;c&gt;") && strstr(out.buf, "x&quot;y"),
	   "names are XML-escaped");
	profile_release(&p);

	/* recursion: show's total counts the outermost call; folded stays exclusive */
	ok(profile_parse(&p, recursive, strlen(recursive), "rec") == 0, "a recursive profile");
	strbuf_reset(&out);
	profile_summary(&p, &out);
	snprintf(line, sizeof(line), "%-40s %10s %14s %12s %12s %12s", "fib", "2", "30", "20.0", "20",
		 "29");
	ok(strstr(out.buf, line),
	   "fib: 2 calls, total 30 (not 40: the nested call is inside the outer one), median 20 "
	   "(between 10 and 30), p95 29 (interpolated)");
	ok(strstr(out.buf, "cal.mean cal.median probe") && strstr(out.buf, "      12.5       12.5 -\n"),
	   "cal.mean from the trace summary's calibrated_mean; cal.median falls back to it in a "
	   "profile without one; no probe kind known");
	strbuf_reset(&out);
	profile_folded(&p, &out);
	is_str(out.buf, "fib 20\nfib;fib 10\n", "folded: each frame's exclusive time");
	profile_release(&p);

	/* --aggregate: per-call percentiles from the merged histograms; sampling marked */
	ok(profile_parse(&p, aggregated, strlen(aggregated), "agg") == 0, "an aggregated profile");
	strbuf_reset(&out);
	profile_summary(&p, &out);
	snprintf(line, sizeof(line), "%-40s %10s %14s %12s %12s %12s %14s", "g", "200~", "300000",
		 "1500.0", "1536", "1900", "1900");
	ok(strstr(out.buf, line),
	   "g: 200 calls marked sampled, median 1536 from the histogram, not a per-thread sum");
	ok(strstr(out.buf, "~ g: sampled, 1 call in 10 recorded"), "the sampling is explained");
	profile_release(&p);

	{
		static const unsigned char push_rbp[] = { 0x55, 0x48, 0x89, 0xe5 },
					    push_r15[] = { 0x41, 0x57, 0x41, 0x56 },
					    sub_rsp[] = { 0x48, 0x83, 0xec, 0x08 },
					    endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa },
					    call[] = { 0xe8, 0, 0, 0 }, ret[] = { 0xc3, 0, 0, 0 },
					    jcc[] = { 0x0f, 0x84, 0, 0 };
		ok(!calibrate_insn_stepped(push_rbp, 4) && !calibrate_insn_stepped(push_r15, 4) &&
			   !calibrate_insn_stepped(call, 4) && !calibrate_insn_stepped(jcc, 4),
		   "push, push %%r15, call and jcc are emulated at a probe");
		ok(calibrate_insn_stepped(sub_rsp, 4) && calibrate_insn_stepped(endbr, 4) &&
			   calibrate_insn_stepped(ret, 4) && calibrate_insn_stepped(ret, 0),
		   "sub, endbr64 and ret are stepped out of line");
	}
	test_long_names();
	test_quantiles();
	test_incomplete();
	test_writer();
	test_writer_returns();
	test_summary_merge();
	strbuf_release(&out);
	both_forms();
	return tap_done();
}
