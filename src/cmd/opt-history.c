/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The options perun history and perun report share: which commits and
 * profiles (-n, -m, --cmd, --args, --workload, --collector, --any-machine)
 * and --threshold.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/parse-options.h"

void history_args_init(struct history_args *a)
{
	memset(a, 0, sizeof(*a));
	a->rev = "HEAD";
	a->max = 100;
	a->so.threshold = 0.05;
}

int history_parse_max(const struct popt *o, const char *v)
{
	char *end;
	long long n = strtoll(v, &end, 10);

	if (*end || n < 0 || !*v)
		return popt_error(o, "-n takes a count, not '%s'", v);
	*(size_t *)o->value = (size_t)n;
	return 0;
}

int history_parse_threshold(const struct popt *o, const char *v)
{
	char *end;
	double r = strtod(v, &end);

	if (*end || !*v || !(r >= 0))
		return popt_error(o, "--threshold takes a ratio >= 0, not '%s'", v);
	*(double *)o->value = r;
	return 0;
}
