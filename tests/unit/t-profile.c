/* The profile library: validation messages, the seed 001 query API,
 * summaries and folded stacks on a small profile.  */
#include "config.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "profile/writer.h"
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

int main(void)
{
	struct profile p;
	struct kv *kv;
	char **v;
	size_t n, i;
	struct strbuf out = STRBUF_INIT;
	int found = 0;

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
	strbuf_release(&out);
	both_forms();
	return tap_done();
}
