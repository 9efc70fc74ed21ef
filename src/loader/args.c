/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun-uprobes"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "loader/args.h"
#include "util/log.h"
#include "util/number.h"

void loader_args_argv(const struct loader_args *a, const char *prog, struct strv *argv)
{
	char num[32];

	strv_push(argv, prog);
	strv_push(argv, "-x");
	strv_push(argv, a->pid);
	strv_push(argv, "-o");
	strv_push(argv, a->raw);
	if (a->attached) {
		strv_push(argv, "-a");
		strv_push(argv, a->attached);
	}
	if (a->ring) {
		snprintf(num, sizeof(num), "%" PRIu64, a->ring);
		strv_push(argv, "-b");
		strv_push(argv, num);
	}
	if (a->driver_signals)
		strv_push(argv, "-w");
	if (a->announce)
		strv_push(argv, "-A");
	if (a->follow)
		strv_push(argv, "-F");
	if (a->aggregate)
		strv_push(argv, "-G");
	if (a->progress)
		strv_push(argv, "-P");
	uprobes_modes_argv(&a->modes, argv);
	strv_push(argv, a->plan);
}

static int usage(void)
{
	fprintf(stderr, "usage: perun-uprobes -x PID -o RAW [-a ATTACHED] [-b RING_BYTES] [-w] [-A] [-F] "
			"[-G] [-P] [-m KEY=VALUE]... PLAN\n");
	return -1;
}

/* The value of option argv[*i] (-xVALUE or -x VALUE), or NULL.  */
static const char *value(int argc, char **argv, int *i)
{
	if (argv[*i][2])
		return argv[*i] + 2;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

int loader_args_parse(int argc, char **argv, struct loader_args *a, long *pid)
{
	uint64_t n;
	int i;

	memset(a, 0, sizeof(*a));
	a->ring = LOADER_RING_DEFAULT;
	*pid = 0;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *v = NULL;
		char opt = argv[i][1];
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (strchr("xoabm", opt)) {
			if (!(v = value(argc, argv, &i)))
				return usage();
		} else if (argv[i][2]) {
			return usage();
		}
		switch (opt) {
		case 'x':
			if (parse_count(v, 0x7fffffff, &n) < 0 || !n)
				return pr_error("-x %s: not a process id", v);
			a->pid = v;
			*pid = (long)n;
			break;
		case 'o': a->raw = v; break;
		case 'a': a->attached = v; break;
		case 'b':
			if (parse_count(v, UINT64_MAX, &n) < 0 || !n)
				return pr_error("-b %s: not a size in bytes", v);
			a->ring = n;
			break;
		case 'm':
			if (uprobes_modes_parse(&a->modes, v) < 0)
				return -1;
			break;
		case 'w': a->driver_signals = 1; break;
		case 'A': a->announce = 1; break;
		case 'F': a->follow = 1; break;
		case 'G': a->aggregate = 1; break;
		case 'P': a->progress = 1; break;
		default: return usage();
		}
	}
	if (i + 1 != argc || !a->raw || !a->pid)
		return usage();
	a->plan = argv[i];
	return 0;
}
