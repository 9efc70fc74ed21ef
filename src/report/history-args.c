/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The options perun history and perun report share: which commits and
 * profiles (-n, -m, --cmd, --args, --workload, --collector, --any-machine)
 * and --threshold.  */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/history-args.h"
#include "util/number.h"
#include "util/parse-options.h"

void history_args_init(struct history_args *a)
{
	memset(a, 0, sizeof(*a));
	a->rev = "HEAD";
	a->max = 100;
	a->so.threshold = 0.05;
}

int history_parse_max(const struct popt *o, const char *v)
{
	uint64_t n;

	/* not 99999999999999999999, which strtoll would clamp to LLONG_MAX */
	if (parse_count(v, LLONG_MAX, &n) < 0)
		return popt_error(o, "-n takes a count, not '%s'", v);
	*(size_t *)o->value = (size_t)n;
	return 0;
}

int history_parse_threshold(const struct popt *o, const char *v)
{
	double r;

	/* not inf (1e400) either, which would drop every step */
	if (parse_decimal(v, &r) < 0 || !(r >= 0))
		return popt_error(o, "--threshold takes a finite ratio >= 0, not '%s'", v);
	*(double *)o->value = r;
	return 0;
}
