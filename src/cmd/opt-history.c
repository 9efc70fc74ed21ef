/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The options perun history and perun report share: which commits and
 * profiles (-n, -m, --cmd, --args, --workload, --collector, --any-machine)
 * and --threshold.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

void history_args_init(struct history_args *a)
{
	memset(a, 0, sizeof(*a));
	a->rev = "HEAD";
	a->max = 100;
	a->so.threshold = 0.05;
}

int history_args_parse(struct history_args *a, const char *cmd, int argc, char **argv,
		       size_t *i)
{
	const char *o = argv[*i];
	char *end;

	if (!strcmp(o, "--any-machine")) {
		a->f.any_machine = 1;
		return 1;
	}
	if (*i + 1 >= (size_t)argc)
		return 0;
	if (!strcmp(o, "-n")) {
		long long v = strtoll(argv[++*i], &end, 10);
		if (*end || v < 0 || !*argv[*i]) {
			fprintf(stderr, "perun %s: -n takes a count, not '%s'\n", cmd, argv[*i]);
			return -1;
		}
		a->max = (size_t)v;
	} else if (!strcmp(o, "-m")) {
		a->rev = argv[++*i];
	} else if (!strcmp(o, "--cmd")) {
		a->f.cmd = argv[++*i];
	} else if (!strcmp(o, "--args")) {
		a->f.args = argv[++*i];
	} else if (!strcmp(o, "--workload")) {
		a->f.workload = argv[++*i];
	} else if (!strcmp(o, "--collector")) {
		a->f.collector = argv[++*i];
	} else if (!strcmp(o, "--threshold")) {
		a->so.threshold = strtod(argv[++*i], &end);
		if (*end || !*argv[*i] || !(a->so.threshold >= 0)) {
			fprintf(stderr, "perun %s: --threshold takes a ratio >= 0, not '%s'\n", cmd,
				argv[*i]);
			return -1;
		}
	} else {
		return 0;
	}
	return 1;
}
