/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Probe plans: rules, serialization round trip, hostile names.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "tap.h"
#include "plan/plan.h"
#include "plan/strategy.h"
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

	/* flags, file offset and symbol survive; an entry-only function is one point */
	plan_init(&p);
	pr = plan_add(&p, PROBE_FUNC, "/tmp/my dir/app", "f");
	pr->addr = 0x401615;
	pr->foff = 0x1615;
	pr->flags = PROBE_F_SYMBOL | PROBE_F_NAMED;
	pr->sym = xstrdup("f");
	pr = plan_add(&p, PROBE_FUNC, "/tmp/my dir/app", "g");
	pr->addr = pr->foff = 0x1700;
	pr->size = 0x20;
	pr->flags = PROBE_F_ENTRY_ONLY;
	pr = plan_add(&p, PROBE_FUNC, "/lib/libm.so.6", "cos");
	pr->addr = pr->foff = 0x70ad0;
	pr = plan_add(&p, PROBE_LINE, "/tmp/my dir/app", "nosuch.c:2");
	pr->file = xstrdup("nosuch.c");
	pr->line = 2;
	text = plan_serialize(&p);
	ok(plan_parse(&q, text) == 0 && q.n == 4, "plan 2 round trip");
	ok(q.probes[0].foff == 0x1615 && q.probes[1].size == 0x20 && q.probes[0].flags == (PROBE_F_SYMBOL | PROBE_F_NAMED) &&
	   q.probes[0].sym && !strcmp(q.probes[0].sym, "f") && !q.probes[1].sym,
	   "flags, file offset and symbol survive");
	is_int(plan_probe_points(&q), 2 + 1 + 2 + 1, "an entry-only function is one probe point");
	ok(probe_is_point(&q.probes[1]) && !probe_is_point(&q.probes[0]) &&
	   probe_is_point(&q.probes[3]), "entry-only functions and lines are points");
	plan_release(&q);
	free(text);
	{
		struct probe_attach att[4];
		char **fail;
		size_t nf, i;
		const char *ev =
			"p:uprobes/stapprobe_77_0 /tmp/my dir/app:0x0000000000001615\n"
			"r:uprobes/stapprobe_77_1 /tmp/my dir/app:0x0000000000001615\n"
			"p:uprobes/stapprobe_77_2 /tmp/my dir/app:0x0000000000001708\n"
			"p:uprobes/stapprobe_78_0 /lib/libm.so.6:0x0000000000070ad0\n"
			"p:uprobes/other_77_0 /lib/libm.so.6:0x0000000000070ad0\n";
		memset(att, 0, sizeof(att));
		is_int(plan_match_uprobe_events(&p, ev, 77, att), 3,
		       "uprobe_events: three points of pid 77 attached, by file offset");
		ok(att[0].entry && att[0].ret && att[1].entry && !att[2].entry && !att[3].entry,
		   "entry and return told apart; an entry after the prologue; a path with a "
		   "space; other pids ignored");
		nf = plan_attach_failures(&p, att, 0, &fail);
		is_int(nf, 2, "two probes failed");
		ok(nf == 2 && strstr(fail[0], "cos") && strstr(fail[0], "DWARF") &&
		   strstr(fail[1], "nosuch.c:2") && strstr(fail[1], "line"),
		   "failures name the probe and why");
		for (i = 0; i < nf; i++)
			free(fail[i]);
		free(fail);
		memset(att, 0, sizeof(att));
		is_int(plan_match_uprobe_events(&p, ev, -1, att), 4, "pid -1: any stapbpf");
		ok(!att[0].ret_insn, "a uretprobe is no return on instructions");
		memset(att, 0, sizeof(att));
		is_int(plan_match_uprobe_events(&p,
			"p:uprobes/stapprobe_0_0 /tmp/my dir/app:0x0000000000001615\n"
			"r:uprobes/stapprobe_0_i0 /tmp/my dir/app:0x0000000000001615\n", -1, att), 2,
		       "perun's loader: an entry and its return instructions");
		ok(att[0].entry && att[0].ret && att[0].ret_insn,
		   "the return is on its instructions (stapprobe_0_iID)");

		/* stap -p2 for the kernel runtime */
		memset(att, 0, sizeof(att));
		is_int(plan_match_resolved(&p,
			"# probes\n"
			"process(\"/tmp/my dir/app\").function(\"f\").call? /* pc=.absolute+0x1615 */ "
			"/* <- process(\"/tmp/my dir/app\").function(\"f\").call? */\n"
			"process(\"/tmp/my dir/app\").function(\"f\").return? /* pc=.absolute+0x1615 */\n"
			"process(\"/lib/libm.so.6\").function(0x70ad0).call? /* pc=.dynamic+0x70ad0 */\n"
			"begin /* <- begin */\n", att), 3, "stap -p2: three points resolved");
		ok(att[0].entry && att[0].ret && !att[1].entry && att[2].entry && !att[2].ret &&
		   !att[3].entry, "stap -p2: entry, return, by offset and by address");
	}
	plan_release(&p);
	/* a plan of format 1, as the previous perun saved them */
	{
		struct plan v1;
		ok(plan_parse(&v1, "perun-plan 1\t2\n0\tfunc\t3\t1000\t0\t/bin/app\tmain\t\t\t\n"
				   "1\tusdt-point\t1\t0\t0\t/bin/app\tp:m\tm\t\t\n") == 0 &&
			   v1.n == 2 && v1.probes[0].sampling == 3 && v1.probes[0].addr == 0x1000 &&
			   !strcmp(v1.probes[0].name, "main") && !strcmp(v1.probes[1].mark, "m") &&
			   v1.probes[0].flags == 0 && !v1.probes[0].sym,
		   "a format-1 plan still reads");
		plan_release(&v1);
	}

	/* instructions x86 uprobes take and never fire on */
	{
		static const unsigned char code[] = {
			0xf0, 0x48, 0x83, 0x05, 0, 0, 0, 0, 0x01,	/* lock addq (0) */
			0x48, 0x83, 0xc0, 0x01,				/* addq (9) */
			0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0,	/* mov %fs:0 (13) */
			0x66, 0xf0, 0x0f, 0xb1, 0x11,			/* lock via 66 (22) */
			0xf3, 0x0f, 0x1e, 0xfa,				/* endbr64 (27) */
			0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0,		/* cs nopw (31) */
		};
		char path[] = "/tmp/perun-t-plan-insn.XXXXXX";
		int fd = mkstemp(path);
		ok(fd >= 0 && write(fd, code, sizeof(code)) == (ssize_t)sizeof(code), "code file");
		close(fd);
		ok(plan_insn_refused(path, 0), "lock addq is refused");
		ok(!plan_insn_refused(path, 9), "a plain addq is not");
		ok(!plan_insn_refused(path, 13), "an %%fs (TLS) load is not");
		ok(plan_insn_refused(path, 22), "a lock behind an operand-size prefix is");
		ok(!plan_insn_refused(path, 27), "endbr64 (f3 prefix) is not");
		ok(plan_insn_refused(path, 31), "a cs override is");
		ok(!plan_insn_refused("/nonexistent/x", 0), "a missing file is not refused");
		unlink(path);
	}
	return tap_done();
}
