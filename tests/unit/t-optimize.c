/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The optimization layer: the registry, pipelines, -on/-off/-oa, requirements
 * switching methods off, and the run-optimize code in the script.  */
#include "config.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimize/optimize.h"
#include "tap.h"
#include "parse/parse.h"
#include "plan/plan.h"
#include "render/script.h"
#include "util/log.h"
#include "util/strbuf.h"

static char *templates(void)
{
	const char *d = getenv("PERUN_DATADIR");
	return xstrfmt("%s/templates", d ? d : ".");
}

static void registry(void)
{
	int m;

	for (m = 0; m < OPT_NMETHODS; m++)
		is_int(opt_method_find(opt_methods[m].name), m, "%s is found by its name",
		       opt_methods[m].name);
	is_int(opt_method_find("nosuch"), -1, "an unknown method is -1");
	ok(opt_methods[OPT_CG_SHAPING].requires & OPT_REQ_CALLGRAPH, "cg-shaping needs the call graph");
	ok(!(opt_methods[OPT_DYNAMIC_PROBING].requires & (OPT_REQ_CALLGRAPH | OPT_REQ_STATS)),
	   "dynamic probing needs neither call graph nor stats");
	ok(opt_methods[OPT_TIMED_SAMPLING].phases & OPT_PHASE_RUN, "timed sampling is run-optimize");
	ok(opt_pipeline_valid("basic") && opt_pipeline_valid("advanced") &&
		   opt_pipeline_valid("full") && !opt_pipeline_valid("fastest"),
	   "three pipelines");
}

static void pipelines_and_toggles(void)
{
	struct opt_selection s;
	FILE *devnull = fopen("/dev/null", "w");

	opt_selection_init(&s);
	s.pipeline = "full";
	is_int(opt_resolve(&s, OPT_REQ_PER_CALL, devnull), 1,
	       "full without call graph or stats: dynamic probing alone runs");
	ok(s.on[OPT_CG_SHAPING] && !s.active[OPT_CG_SHAPING] &&
		   s.missing[OPT_CG_SHAPING] == OPT_REQ_CALLGRAPH,
	   "cg-shaping is on, switched off for the call graph");
	ok(!s.on[OPT_TIMED_SAMPLING], "full leaves timed sampling out (7.3.3)");
	is_str(opt_value(&s, "cg-mode"), "prune", "full predicts cg-mode prune");
	is_str(opt_value(&s, "diff-cfg-mode"), "strict", "and diff-cfg-mode strict");
	ok(opt_toggle(&s, "dynamic-probing", 0) == 0 && opt_toggle(&s, "timed-sampling", 1) == 0,
	   "-off and -on");
	is_int(opt_resolve(&s, OPT_REQ_PER_CALL, devnull), 1, "one method runs after the toggles");
	ok(s.active[OPT_TIMED_SAMPLING] && !s.active[OPT_DYNAMIC_PROBING],
	   "-on timed-sampling, -off dynamic-probing");
	is_int(opt_resolve(&s, 0, devnull), 0, "--aggregate: no per-call records, nothing runs");
	ok(opt_toggle(&s, "nosuch", 1) < 0, "-on of an unknown method fails");
	s.pipeline = "basic";
	s.ntoggles = 0;
	is_int(opt_resolve(&s, ~0u, devnull), 2, "every resource there: basic's two methods run");
	ok(s.active[OPT_CG_SHAPING] && s.active[OPT_BASELINE_DYNAMIC] &&
		   !s.unimplemented[OPT_CG_SHAPING] && !s.missing[OPT_CG_SHAPING],
	   "cg-shaping and baseline-dynamic are active");
	s.pipeline = "advanced";
	opt_resolve(&s, OPT_REQ_CALLGRAPH | OPT_REQ_PER_CALL, devnull);
	ok(s.active[OPT_DYNAMIC_SAMPLING] && s.active[OPT_CG_SHAPING] &&
		   !s.active[OPT_BASELINE_DYNAMIC] && s.missing[OPT_BASELINE_DYNAMIC] == OPT_REQ_STATS,
	   "advanced on a first run: dynamic sampling without stats, the baseline waits for them");
	opt_selection_release(&s);
	fclose(devnull);
}

static void params(void)
{
	struct opt_selection s;
	struct json_object *j;

	opt_selection_init(&s);
	is_str(opt_value(&s, "probing-threshold"), "100000", "probing-threshold defaults to 100000");
	is_str(opt_value(&s, "timed-sample-freq"), "1", "timed-sample-freq defaults to 1 Hz");
	is_str(opt_value(&s, "cg-mode"), "match", "cg-mode defaults to match");
	ok(opt_set(&s, "probing-threshold", "1000") == 0, "-oa probing-threshold 1000");
	is_int(opt_value_int(&s, "probing-threshold"), 1000, "is read back");
	ok(opt_set(&s, "probing-threshold", "1.5") < 0, "an integer parameter refuses 1.5");
	ok(opt_set(&s, "probing-threshold", "0") < 0, "and 0");
	ok(opt_set(&s, "timed-sample-freq", "2.5") == 0, "a real parameter takes 2.5");
	ok(opt_set(&s, "cg-mode", "soft") == 0 && opt_set(&s, "cg-mode", "gentle") < 0,
	   "an enum takes its choices only");
	ok(opt_set(&s, "nosuch", "1") < 0, "an unknown parameter fails");
	{
		struct opt_selection r;
		opt_selection_init(&r);
		ok(opt_set(&r, "probing-reattach", "true") == 0, "-oa probing-reattach true");
		is_str(opt_value(&r, "probing-threshold"), "20000",
		       "Table A.4: reattach predicts probing-threshold 0.2 x 100000");
		ok(opt_set(&r, "probing-threshold", "700") == 0 &&
			   opt_value_int(&r, "probing-threshold") == 700,
		   "an -oa probing-threshold wins over the prediction");
		is_int(opt_value_int(&r, "probing-reattach-ms"), 100,
		       "the first re-arm after 100 ms by default");
		ok(opt_set(&r, "probing-reattach-ms", "0") < 0, "and never after 0 ms");
		opt_selection_release(&r);
	}
	s.pipeline = "basic";
	is_str(opt_value(&s, "cg-mode"), "soft", "-oa wins over the pipeline's prediction");
	is_str(opt_value(&s, "threshold-mode"), "strict", "basic predicts threshold-mode strict");
	opt_toggle(&s, "dynamic-probing", 1);
	opt_resolve(&s, OPT_REQ_PER_CALL, NULL);
	j = opt_json(&s);
	is_str(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
	       "{\"pipeline\":\"basic\",\"methods\":[{\"name\":\"dynamic-probing\",\"phases\":"
	       "[\"run-optimize\",\"post-optimize\"],\"params\":{\"probing-threshold\":1000,"
	       "\"probing-reattach\":false,\"probing-reattach-ms\":100}}],\"switched_off\":{\"cg-shaping\":\"no call graph\","
	       "\"baseline-dynamic\":\"no dynamic stats of an earlier collect\"},\"cache_off\":false}",
	       "the profile records what ran with which parameters, and what was switched off");
	json_object_put(j);
	opt_selection_release(&s);
}

static void script(void)
{
	struct plan p;
	struct strbuf out = STRBUF_INIT, plain = STRBUF_INIT;
	struct script_opt so = { 50, 20.0, 1000 };
	struct probe *pr;
	char *t = templates();

	plan_init(&p);
	pr = plan_add(&p, PROBE_FUNC, "/opt/app", "f");
	pr->addr = 0x1139;
	pr->sampling = 1;
	pr = plan_add(&p, PROBE_FUNC, "/opt/app", "g");
	pr->addr = 0x1200;
	pr->sampling = 4;
	ok(script_generate_opt(&p, t, SCRIPT_RECORD, 1000, &so, &out) == 0, "a gated script");
	ok(strstr(out.buf, "probe timer.ms(50) {") != NULL, "timed sampling flips every 50 ms");
	ok(strstr(out.buf, "if (__perun_armed(0) && __perun_dormant == 0) {") != NULL,
	   "f records when armed and gathering");
	ok(strstr(out.buf, "if (__perun_armed(1) && __perun_dormant == 0 && "
			   "__perun_cnt[k]++ % 4 == 0) {") != NULL,
	   "g's sampling still applies");
	ok(strstr(out.buf, "printf(\"o 1 %x %x\\n\", id, __perun_off[id])") != NULL &&
		   strstr(out.buf, "o 2 0 %x") != NULL && !strstr(out.buf, "@OPT_END@"),
	   "the end probe reports the disarmed probes and the flips");
	ok(script_generate_opt(&p, t, SCRIPT_RECORD, 1000, NULL, &plain) == 0 &&
		   !strstr(plain.buf, "__perun_armed") && !strstr(plain.buf, "__perun_dormant") &&
		   !strstr(plain.buf, "@OPT_END@"),
	   "without methods the script has none of it");
	strbuf_reset(&out);
	ok(script_generate_opt(&p, t, SCRIPT_AGGREGATE, 0, &so, &out) < 0,
	   "gates refuse --aggregate");
	strbuf_release(&out);
	strbuf_release(&plain);
	plan_release(&p);
	free(t);
}

static int no_sink(void *ctx, const struct call_record *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

static void parse_reports(void)
{
	static const char raw[] = "s 64 0 0\no 1 3 3e8\no 2 0 5\no 1\nq\n";
	unsigned char points[4] = { 0 };
	struct parser *p = parser_new(4, points, no_sink, NULL);
	const struct parse_opt_record *r;
	size_t n;

	parser_feed(p, raw, sizeof(raw) - 1);
	parser_finish(p);
	r = parser_opt_records(p, &n);
	is_int(n, 2, "two o lines read");
	ok(n == 2 && r[0].method == PARSE_OPT_DISARMED && r[0].id == 3 && r[0].value == 1000,
	   "probe 3 disarmed after 1000 calls");
	ok(n == 2 && r[1].method == PARSE_OPT_FLIPS && r[1].value == 5, "the flag flipped 5 times");
	is_int(parser_stats(p)->malformed_lines, 1, "a short o line is malformed");
	parser_free(p);
}

int main(void)
{
	log_level = 0;
	registry();
	pipelines_and_toggles();
	params();
	script();
	parse_reports();
	return tap_done();
}
