/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The option parser: one table per command (and per level of a command).  */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse-options.h"

int popt_error(const struct popt *o, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perun %s: ", o->cmd ? o->cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

void usage_synopsis(FILE *f, const char *usage)
{
	const char *end = strstr(usage, "\n\n");

	fwrite(usage, 1, end ? (size_t)(end - usage) + 1 : strlen(usage), f);
}

static void name_of(const struct popt *o, int as_short, char *buf, size_t sz)
{
	if (as_short || !o->long_name)
		snprintf(buf, sz, "-%c", o->short_name);
	else
		snprintf(buf, sz, "--%s", o->long_name);
}

void usage_with_options(FILE *f, const char *usage, const struct popt *opts)
{
	const struct popt *o;
	size_t len = strlen(usage);
	int any = 0;

	fputs(usage, f);
	for (o = opts; o->kind != POPT_END; o++) {
		char head[96];
		int n = 0;

		if (!o->help)
			continue;
		if (!any && len && usage[len - 1] == '\n' && (len < 2 || usage[len - 2] != '\n'))
			fputc('\n', f);
		if (!any)
			fputs("Options:\n", f);
		any = 1;
		if (o->short_name)
			n += snprintf(head + n, sizeof(head) - (size_t)n, "-%c", o->short_name);
		if (o->short_name && o->long_name)
			n += snprintf(head + n, sizeof(head) - (size_t)n, ", ");
		if (o->long_name)
			n += snprintf(head + n, sizeof(head) - (size_t)n, "--%s", o->long_name);
		if (o->argh)
			snprintf(head + n, sizeof(head) - (size_t)n, " %s", o->argh);
		if (strlen(head) <= 22)
			fprintf(f, "  %-22s  %s\n", head, o->help);
		else
			fprintf(f, "  %s\n  %-22s  %s\n", head, "", o->help);
	}
}

/* Stores value (NULL when the option takes none) into o's field.  */
static int set_value(const struct popt *o, int as_short, const char *value)
{
	char name[80], *end;

	name_of(o, as_short, name, sizeof(name));
	switch (o->kind) {
	case POPT_FLAG:
		*(int *)o->value = o->defval;
		return 0;
	case POPT_STRING:
		*(const char **)o->value = value;
		return 0;
	case POPT_INT: {
		long v;

		errno = 0;
		v = strtol(value, &end, 10);
		if (!*value || *end || errno || v < INT_MIN || v > INT_MAX)
			return popt_error(o, "%s wants a whole number, not '%s'", name, value);
		*(int *)o->value = (int)v;
		return 0;
	}
	case POPT_DOUBLE: {
		double v;

		errno = 0;
		v = strtod(value, &end);
		if (!*value || *end || errno || !isfinite(v))
			return popt_error(o, "%s wants a number, not '%s'", name, value);
		*(double *)o->value = v;
		return 0;
	}
	case POPT_CALLBACK:
		return o->cb(o, value);
	case POPT_END:
		break;
	}
	return -1;
}

/* argv[*i] is "--...": handles it and the value it takes.  */
static int parse_long(struct popt *opts, int argc, char **argv, int *i)
{
	const char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	struct popt *o;

	for (o = opts; o->kind != POPT_END; o++)
		if (o->long_name && strlen(o->long_name) == len && !strncmp(o->long_name, arg, len))
			break;
	if (o->kind == POPT_END) {
		/* --help is no entry of the table, but it is an option */
		if (len == 4 && !strncmp(arg, "help", 4))
			return popt_error(opts, "--help takes no value");
		/* "--=x": no name to show alone */
		if (!len)
			return popt_error(opts, "unknown option '%s'", argv[*i]);
		return popt_error(opts, "unknown option '%.*s'", (int)(len + 2), argv[*i]);
	}
	if (!o->argh) {
		if (eq)
			return popt_error(o, "--%s takes no value", o->long_name);
		return set_value(o, 0, NULL);
	}
	if (eq)
		return set_value(o, 0, eq + 1);
	if (*i + 1 >= argc)
		return popt_error(o, "--%s wants a value (%s)", o->long_name, o->argh);
	return set_value(o, 0, argv[++*i]);
}

/* argv[*i] is "-x...": short options, bundled flags, an attached value.  */
static int parse_short(struct popt *opts, int argc, char **argv, int *i)
{
	const char *p;

	for (p = argv[*i] + 1; *p; p++) {
		struct popt *o;

		for (o = opts; o->kind != POPT_END; o++)
			if (o->short_name && o->short_name == *p)
				break;
		if (o->kind == POPT_END) {
			if (p == argv[*i] + 1)
				return popt_error(opts, "unknown option '%s'", argv[*i]);
			return popt_error(opts, "unknown option '-%c' in '%s'", *p, argv[*i]);
		}
		if (!o->argh) {
			if (set_value(o, 1, NULL))
				return -1;
			continue;
		}
		if (p[1])
			return set_value(o, 1, p + 1);
		if (*i + 1 >= argc)
			return popt_error(o, "-%c wants a value (%s)", o->short_name, o->argh);
		return set_value(o, 1, argv[++*i]);
	}
	return 0;
}

/* Whether the option a (an argv[i]) takes its value from argv[i + 1].  */
static int value_follows(const struct popt *opts, const char *a)
{
	const struct popt *o;
	const char *p;

	if (a[1] == '-') {
		if (strchr(a, '='))
			return 0;
		for (o = opts; o->kind != POPT_END; o++)
			if (o->long_name && !strcmp(o->long_name, a + 2))
				return o->argh != NULL;
		return 0;
	}
	for (p = a + 1; *p; p++) {
		for (o = opts; o->kind != POPT_END; o++)
			if (o->short_name && o->short_name == *p)
				break;
		if (o->kind == POPT_END)
			return 0;
		if (o->argh)
			return !p[1];
	}
	return 0;
}

int popt_find_word(int argc, char **argv, const struct popt *opts, const char *word)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, word))
			return i;
		if (!strcmp(a, "--"))
			break;
		if (a[0] == '-' && a[1] && value_follows(opts, a))
			i++;
	}
	for (i++; i < argc; i++)
		if (!strcmp(argv[i], word))
			return i;
	return argc;
}

int parse_options(int argc, char **argv, const char *cmd, const char *usage, struct popt *opts)
{
	struct popt *o;
	int i, n = 0, only_positionals = 0;

	for (o = opts;; o++) {
		o->cmd = cmd;
		if (o->kind == POPT_END)
			break;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r;

		if (only_positionals || a[0] != '-' || !a[1]) {
			argv[n++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			only_positionals = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage_with_options(stdout, usage, opts);
			return POPT_HELP;
		}
		r = a[1] == '-' ? parse_long(opts, argc, argv, &i) : parse_short(opts, argc, argv, &i);
		if (r) {
			usage_synopsis(stderr, usage);
			return POPT_ERROR;
		}
	}
	if (n < argc)
		argv[n] = NULL;
	return n;
}
