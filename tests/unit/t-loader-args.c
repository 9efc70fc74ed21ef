/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The loader's argv contract (loader/args.h): what collect writes, the
 * loader reads back the same; what is not a valid argv is refused.  */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "loader/args.h"
#include "tap.h"

static int parses(const char *const *v, struct loader_args *a, long *pid)
{
	char *argv[32];
	int argc = 0;

	while (v[argc]) {
		argv[argc] = (char *)v[argc];
		argc++;
	}
	argv[argc] = NULL;
	return loader_args_parse(argc, argv, a, pid);
}

int main(void)
{
	struct loader_args a, b;
	struct strv argv = STRV_INIT;
	long pid = 0;

	memset(&a, 0, sizeof(a));
	a.pid = "4242";
	a.raw = "/tmp/raw";
	a.attached = "/tmp/attached";
	a.plan = "/tmp/plan";
	a.ring = 3200;
	a.announce = a.follow = a.aggregate = a.progress = 1;
	a.modes.threshold = 1000;
	a.modes.reattach_ms = 100;
	a.modes.budget_ns = 5000000000ull;
	loader_args_argv(&a, "perun-uprobes", &argv);
	ok(parses((const char *const *)argv.v, &b, &pid) == 0, "what collect writes parses");
	ok(pid == 4242 && !strcmp(b.pid, "4242"), "the pid");
	ok(!strcmp(b.raw, a.raw) && !strcmp(b.attached, a.attached) && !strcmp(b.plan, a.plan),
	   "the paths");
	ok(b.ring == 3200, "the ring's size");
	ok(b.announce && b.follow && b.aggregate && b.progress && !b.driver_signals, "the flags");
	ok(b.modes.threshold == 1000 && b.modes.reattach_ms == 100 &&
	       b.modes.budget_ns == 5000000000ull && !b.modes.timed_ms,
	   "the methods, 64-bit values whole");
	strv_clear(&argv);

	{
		const char *v[] = { "perun-uprobes", "-x", "7", "-o", "r", "p", NULL };
		ok(parses(v, &b, &pid) == 0 && pid == 7 && b.ring == LOADER_RING_DEFAULT &&
		       !b.attached && !b.follow,
		   "the least: defaults for the rest");
	}
	{
		const char *v[] = { "perun-uprobes", "-x7", "-or", "-w", "p", NULL };
		ok(parses(v, &b, &pid) == 0 && pid == 7 && !strcmp(b.raw, "r") && b.driver_signals,
		   "values joined to their option");
	}
	{
		const char *v[] = { "perun-uprobes", "-x", "-5", "-o", "r", "p", NULL };
		ok(parses(v, &b, &pid) == -1, "a negative pid is refused");
	}
	{
		const char *v[] = { "perun-uprobes", "-x", "12abc", "-o", "r", "p", NULL };
		ok(parses(v, &b, &pid) == -1, "a pid with a tail is refused");
	}
	{
		const char *v[] = { "perun-uprobes", "-x", "1", "-o", "r", "-b", "0x10", "p", NULL };
		ok(parses(v, &b, &pid) == -1, "a hex ring size is refused");
	}
	{
		const char *v[] = { "perun-uprobes", "-x", "1", "-o", "r", "-m", "nosuch=1", "p", NULL };
		ok(parses(v, &b, &pid) == -1, "an unknown method setting is refused");
	}
	{
		const char *v[] = { "perun-uprobes", "-x", "1", "-o", "r", "-GX", "p", NULL };
		ok(parses(v, &b, &pid) == -1, "a flag with a tail is refused");
	}
	{
		const char *v[] = { "perun-uprobes", "-x", "1", "-o", "r", NULL };
		ok(parses(v, &b, &pid) == -1, "no plan");
	}
	{
		const char *v[] = { "perun-uprobes", "-x", "1", "-o", "r", "p", "q", NULL };
		ok(parses(v, &b, &pid) == -1, "two plans");
	}
	{
		const char *v[] = { "perun-uprobes", "-o", "r", "p", NULL };
		ok(parses(v, &b, &pid) == -1, "no pid");
	}
	{
		const char *v[] = { "perun-uprobes", "-x", "1", "-o", NULL };
		ok(parses(v, &b, &pid) == -1, "an option without its value");
	}
	return tap_done();
}
