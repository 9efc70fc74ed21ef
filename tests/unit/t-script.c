/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Script generation: a golden script, and hostile names escaped or rejected.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "plan/plan.h"
#include "render/script.h"
#include "util/strbuf.h"

static char *templates(void)
{
	const char *d = getenv("PERUN_DATADIR");
	return xstrfmt("%s/templates", d ? d : ".");
}

static void golden_plan(struct plan *p)
{
	struct probe *pr;

	plan_init(p);
	pr = plan_add(p, PROBE_FUNC, "/opt/app/bin/app", "main");
	pr->addr = 0x1139;
	pr = plan_add(p, PROBE_FUNC, "/opt/app/lib/libx.so", "Widget::draw(int) const");
	pr->addr = 0x20a0;
	pr->sampling = 20;
	pr = plan_add(p, PROBE_USDT_PAIR, "/opt/app/bin/app", "app:request");
	pr->mark = xstrdup("request");
	pr->mark_end = xstrdup("request_end");
	pr = plan_add(p, PROBE_USDT_POINT, "/opt/app/bin/app", "app:tick");
	pr->mark = xstrdup("tick");
	pr->sampling = 3;
	pr = plan_add(p, PROBE_LINE, "/opt/app/bin/app", "main.c:42");
	pr->file = xstrdup("main.c");
	pr->line = 42;
}

int main(void)
{
	struct plan p;
	struct strbuf out = STRBUF_INIT, golden = STRBUF_INIT, q = STRBUF_INIT;
	char *tdir = templates(), *gpath;
	const char *src = getenv("SRCDIR");
	struct probe *pr;
	int r;

	golden_plan(&p);
	r = script_generate(&p, tdir, 0, &out);
	is_int(r, 0, "the golden plan generates");
	gpath = xstrfmt("%s/tests/data/golden.stp", src ? src : ".");
	if (getenv("PERUN_UPDATE_GOLDEN"))

		{
			FILE *f = fopen(gpath, "w");
			if (f) {
				fputs(out.buf, f);
				fclose(f);
			}
		}
	ok(strbuf_read_file(&golden, gpath) == 0, "golden file %s readable", gpath);
	is_str(out.buf, golden.buf, "script equals tests/data/golden.stp");
	ok(!strstr(out.buf, "Widget") && !strstr(out.buf, "draw"),
	   "no function name enters the script");
	plan_release(&p);

	/* hostile paths: quotes and backslashes escaped; globs and newlines rejected */
	strbuf_reset(&q);
	is_int(script_quote(&q, "/tmp/a \"b\"\\c$d", "binary path"), 0, "quotes and $ accepted");
	is_str(q.buf, "/tmp/a \\\"b\\\"\\\\c$d", "quotes and backslash escaped, $ kept literal");
	strbuf_reset(&q);
	is_int(script_quote(&q, "/tmp/evil\nprobe begin { system(\"id\") }", "binary path"), -1,
	       "a newline is rejected");
	is_int(script_quote(&q, "/usr/bin/*", "binary path"), -1, "a * wildcard is rejected");
	is_int(script_quote(&q, "/tmp/a?b", "binary path"), -1, "a ? wildcard is rejected");
	is_int(script_quote(&q, "/tmp/\x7f", "binary path"), -1, "DEL is rejected");
	ok(script_valid_mark("request_end") && !script_valid_mark("req\"uest") &&
	   !script_valid_mark("a b") && !script_valid_mark("$x") && !script_valid_mark(""),
	   "USDT marks are identifiers only");

	/* a whole plan with a hostile binary is refused, not half written */
	plan_init(&p);
	pr = plan_add(&p, PROBE_FUNC, "/tmp/x\"); system(\"rm -rf /\"); //*", "f");
	pr->addr = 0x10;
	strbuf_reset(&out);
	is_int(script_generate(&p, tdir, 0, &out), -1, "a plan with a globbing binary path is refused");
	plan_release(&p);
	plan_init(&p);
	pr = plan_add(&p, PROBE_FUNC, "/tmp/quote\"bin", "weird\"name\n$x*");
	pr->addr = 0x10;
	strbuf_reset(&out);
	is_int(script_generate(&p, tdir, 0, &out), 0, "a quote in a path is escaped");
	ok(strstr(out.buf, "process(\"/tmp/quote\\\"bin\")") != NULL, "escaped path in the probe");
	ok(!strstr(out.buf, "weird"), "the hostile function name is not in the script");
	plan_release(&p);
	plan_init(&p);
	pr = plan_add(&p, PROBE_USDT_POINT, "/bin/x", "p:m");
	pr->mark = xstrdup("m\") { system(\"id");
	strbuf_reset(&out);
	is_int(script_generate(&p, tdir, 0, &out), -1, "a USDT name with a quote is refused");
	plan_release(&p);

	/* no DWARF: by symbol name; entry-only: no return probe */
	plan_init(&p);
	pr = plan_add(&p, PROBE_FUNC, "/tmp/my dir/app", "f");
	pr->addr = 0x1139;
	pr->flags = PROBE_F_SYMBOL;
	pr->sym = xstrdup("_ZN7Counter4bumpEi");
	pr = plan_add(&p, PROBE_FUNC, "/tmp/my dir/app", "g");
	pr->addr = 0x1200;
	pr->flags = PROBE_F_ENTRY_ONLY;
	strbuf_reset(&out);
	is_int(script_generate(&p, tdir, 1, &out), 0, "symbol and entry-only probes generate");
	ok(strstr(out.buf, "process(\"/tmp/my dir/app\").function(\"_ZN7Counter4bumpEi\").call?") &&
	   strstr(out.buf, "process(\"/tmp/my dir/app\").function(\"_ZN7Counter4bumpEi\").return?"),
	   "a function without DWARF is placed by its symbol");
	ok(strstr(out.buf, "function(0x1200).call?") && !strstr(out.buf, "function(0x1200).return"),
	   "an entry-only function has no return probe");
	plan_release(&p);
	plan_init(&p);
	pr = plan_add(&p, PROBE_FUNC, "/bin/x", "f");
	pr->flags = PROBE_F_SYMBOL;
	pr->sym = xstrdup("f@@GLIBC_2.2.5");
	strbuf_reset(&out);
	is_int(script_generate(&p, tdir, 0, &out), -1, "a symbol with '@' is refused");
	plan_release(&p);

	/* dynamic probing: the in-handler gate (bpf), conditional probes and
	 * reattach (kernel) */
	{
		struct script_opt so;
		int i;
		plan_init(&p);
		for (i = 0; i < 3; i++) {
			pr = plan_add(&p, PROBE_FUNC, "/bin/x", i == 2 ? "h" : i ? "g" : "f");
			pr->addr = 0x1000 + (uint64_t)i * 0x10;
		}
		p.probes[2].flags = PROBE_F_ENTRY_ONLY;
		memset(&so, 0, sizeof(so));
		so.probing_threshold = 1000;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "dynamic probing generates");
		ok(strstr(out.buf, "if (__perun_armed(1))") && !strstr(out.buf, " if (__perun_live_"),
		   "bpf: the gate is in the handler, no conditional probe");
		ok(!strstr(out.buf, "__perun_tick"), "no reattach clock without reattach");
		so.probing_cond = PROBING_COND_KERNEL;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "conditional probes generate");
		ok(strstr(out.buf, "function(0x1010).call? if (__perun_live_1) {") &&
			   strstr(out.buf, "function(0x1010).return? if (__perun_live_1) {") &&
			   strstr(out.buf, "function(0x1020).call? if (__perun_live_2) {") &&
			   strstr(out.buf, "global __perun_live_2 = 1"),
		   "kernel: every probe point is conditional on its own live flag");
		ok(strstr(out.buf, "__perun_live_1 = __perun_open[1] > 0 || (!__perun_off[1])") &&
			   strstr(out.buf, "__perun_live_2 = (!__perun_off[2])"),
		   "a pair stays live while a recorded call is open, a point while armed");
		so.budget_allowed_ns = 1000;
		so.budget_call_ns = 100;
		so.budget_window_ms = 20;
		so.budget_pct = 5;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "conditional probes with the budget generate");
		ok(strstr(out.buf, "__perun_live_1 = __perun_open[1] > 0 || (!__perun_off[1] && "
				   "!__perun_boff[1])") != NULL,
		   "with the budget too, either disarms a probe");
		so.probing_threshold = 0;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "the budget alone, kernel runtime: conditional probes generate");
		ok(strstr(out.buf, "__perun_live_2 = (!__perun_boff[2])") &&
			   strstr(out.buf, "global __perun_open[") &&
			   strstr(out.buf, "function(0x1020).call? if (__perun_live_2) {"),
		   "the budget alone unregisters through its own flag");
		so.probing_threshold = 1000;
		so.budget_allowed_ns = 0;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "dynamic probing alone again");
		ok(!strstr(out.buf, "function __perun_wake"), "no wake without reattach");
		so.probing_reattach_ms = 25;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "reattach generates");
		ok(strstr(out.buf, "probe timer.ms(10) { __perun_tick++ }") &&
			   strstr(out.buf, "__perun_ival[id] = 3\n"),
		   "a 10 ms clock, the first re-arm after 3 ticks (25 ms rounded up)");
		ok(strstr(out.buf, "printf(\"o 3 %x %x\\n\", id, __perun_ndis[id])") &&
			   strstr(out.buf, "printf(\"o 4 %x %x\\n\", id, __perun_nre[id])"),
		   "the end probe reports disarms and re-arms");
		ok(strstr(out.buf, "function __perun_wake (id:long) {\n if (id < 1) {\n  "
				   "if (!__perun_live_0) __perun_live_0 = 1\n } else {\n  if (id < 2) {\n"
				   "   if (!__perun_live_1) __perun_live_1 = 1\n  } else {\n"
				   "   if (!__perun_live_2) __perun_live_2 = 1\n"),
		   "the timer wakes a probe through a binary search over the ids");
		so.probing_cond = PROBING_COND_INLINE;
		so.probing_reattach_ms = 5;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "reattach on bpf generates");
		ok(strstr(out.buf, "probe timer.ms(5) { __perun_tick++ }") &&
			   strstr(out.buf, "__perun_ival[id] = 1\n") &&
			   !strstr(out.buf, "function __perun_wake"),
		   "bpf: a 5 ms clock for a 5 ms interval, no wake (no foreach in a bpf timer)");
		ok(strstr(out.buf, "function(0x1000).call? if (__perun_live_0 || __perun_wait[0] <= "
				   "__perun_tick) {"),
		   "bpf: a due probe's condition lets its next call in");
		plan_release(&p);
	}

	/* the kernel runtime's print transport counts what each probe printed:
	 * one slot per probe id, the counts before the end marker; not in the
	 * recorder's script */
	{
		struct script_opt so;
		int i;
		plan_init(&p);
		for (i = 0; i < 3; i++) {
			pr = plan_add(&p, PROBE_FUNC, "/bin/x", i == 2 ? "h" : i ? "g" : "f");
			pr->addr = 0x1000 + (uint64_t)i * 0x10;
		}
		memset(&so, 0, sizeof(so));
		so.count_sent = 1;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_PRINT, 0, &so, &out), 0,
		       "print with counts generates");
		ok(strstr(out.buf, "global __perun_sent[4]\n") &&
			   strstr(out.buf, "function(0x1010).call? { __perun_evc(2) }") &&
			   strstr(out.buf, "function(0x1010).return? { __perun_evc(3) }") &&
			   strstr(out.buf, "__perun_sent[code >> 1] <<< 1") &&
			   strstr(out.buf, "probe end { __perun_sent_dump(); __perun_end() }") &&
			   !strstr(out.buf, "__perun_ev("),
		   "print counts: every probe counts, the end writes the counts, then q");
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "the recorder with count_sent generates");
		ok(!strstr(out.buf, "__perun_sent"), "the recorder counts its own losses");
		plan_release(&p);
	}

	/* --follow on the kernel runtime: the tree from the fork tracepoint, and
	 * every target test of the templates asks the tree; not with --aggregate */
	{
		struct script_opt so;
		plan_init(&p);
		pr = plan_add(&p, PROBE_FUNC, "/bin/x", "f");
		pr->addr = 0x1000;
		memset(&so, 0, sizeof(so));
		so.follow = 1;
		so.count_sent = 1;
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_PRINT, 0, &so, &out), 0,
		       "print with --follow generates");
		ok(strstr(out.buf, "probe kernel.trace(\"sched:sched_process_fork\") {\n") &&
			   strstr(out.buf, "probe kernel.trace(\"sched:sched_process_free\") {\n") &&
			   !strstr(out.buf, "kprocess") &&
			   strstr(out.buf, "printf(\"j %x %x 0 1\\n\", task_pid($child), pid())") &&
			   strstr(out.buf, "\tif (__perun_ours()) {\n\t\tprintf(") &&
			   !strstr(out.buf, "pid() == target()"),
		   "follow: the tree, j lines, every event asks the tree");
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_RECORD, 100, &so, &out), 0,
		       "the recorder with --follow generates");
		ok(strstr(out.buf, "global __perun_tree[4093]\n") &&
			   strstr(out.buf, "printf(\"p %x %x\\n\", (tid() - target()) & 0xffffffff, pid())") &&
			   !strstr(out.buf, "pid() == target()"),
		   "follow: the recorder's events ask the tree, p lines name processes");
		strbuf_reset(&out);
		is_int(script_generate_opt(&p, tdir, SCRIPT_AGGREGATE, 0, &so, &out), -1,
		       "--follow with --aggregate is refused on the kernel runtime");
		plan_release(&p);
	}

	strbuf_release(&out);
	strbuf_release(&golden);
	strbuf_release(&q);
	free(gpath);
	free(tdir);
	return tap_done();
}
