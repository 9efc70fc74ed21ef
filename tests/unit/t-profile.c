/* The profile library: validation messages, the seed 001 query API,
 * summaries and folded stacks on a small profile.  */
#include "config.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
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
	return tap_done();
}
