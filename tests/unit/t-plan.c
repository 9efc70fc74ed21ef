/* Probe plans: rules, serialization round trip, hostile names.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "trace/plan.h"
#include "trace/strategy.h"
#include "util/strbuf.h"

int main(void)
{
	struct plan p, q;
	struct probe *pr;
	char *lib, *name, *text, *text2;
	unsigned s;

	ok(strategy_split_rule("fib", &lib, &name, &s) == 0 && !lib && !strcmp(name, "fib") && s == 0,
	   "name");
	free(name);
	ok(strategy_split_rule("fib#10", &lib, &name, &s) == 0 && !lib && s == 10, "name#sampling");
	free(name);
	ok(strategy_split_rule("libm#sin", &lib, &name, &s) == 0 && !strcmp(lib, "libm") &&
	   !strcmp(name, "sin") && s == 0, "lib#name");
	free(lib);
	free(name);
	ok(strategy_split_rule("libm#sin#5", &lib, &name, &s) == 0 && s == 5, "lib#name#sampling");
	free(lib);
	free(name);
	ok(strategy_split_rule("a#b#c#d", &lib, &name, &s) < 0, "four parts rejected");
	ok(strategy_split_rule("a#b#x", &lib, &name, &s) < 0, "non-numeric sampling rejected");
	ok(strategy_split_rule("#x", &lib, &name, &s) < 0, "empty name rejected");

	plan_init(&p);
	pr = plan_add(&p, PROBE_FUNC, "/bin/app", "ns::f(char*, int) const");
	pr->addr = 0xdeadbeef;
	pr->sampling = 7;
	pr->file = xstrdup("a.c");
	pr->line = 3;
	pr = plan_add(&p, PROBE_USDT_PAIR, "/bin/app", "prov:req");
	pr->mark = xstrdup("req");
	pr->mark_end = xstrdup("req_end");
	pr = plan_add(&p, PROBE_FUNC, "/bin/app", "tab\there\nnewline$*\"");
	text = plan_serialize(&p);
	ok(plan_parse(&q, text) == 0, "serialized plan parses");
	is_int(q.n, 3, "three probes back");
	is_str(q.probes[0].name, "ns::f(char*, int) const", "C++ name survives");
	ok(q.probes[0].addr == 0xdeadbeef && q.probes[0].sampling == 7 && q.probes[0].line == 3,
	   "address, sampling, line survive");
	is_str(q.probes[1].mark_end, "req_end", "USDT end mark survives");
	is_str(q.probes[2].name, "tab here newline$*\"", "tabs and newlines cannot break lines");
	text2 = plan_serialize(&q);
	plan_release(&q);
	ok(plan_parse(&q, text2) == 0 && q.n == 3, "second round trip");
	plan_release(&q);
	text[strlen(text) / 2] = '\0';
	ok(plan_parse(&q, text) < 0, "a truncated plan is rejected");
	ok(plan_parse(&q, "not a plan\n") < 0, "garbage is rejected");
	is_int(plan_probe_points(&p), 6, "functions and pairs are two probe points each");
	free(text);
	free(text2);
	plan_release(&p);
	return tap_done();
}
