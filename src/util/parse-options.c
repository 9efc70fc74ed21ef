/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The option parser: one table per command (and per level of a command).  */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/number.h"
#include "util/parse-options.h"
#include "util/strbuf.h"

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

/* Whether o is an option (not an alias, a heading or the end).  */
static int is_option(const struct popt *o)
{
	return o->kind != POPT_END && o->kind != POPT_ALIAS && o->kind != POPT_GROUP;
}

/* The option named --name (its first len characters), or NULL.  */
static struct popt *find_long(const struct popt *opts, const char *name, size_t len)
{
	const struct popt *o;

	for (o = opts; o->kind != POPT_END; o++)
		if (is_option(o) && o->long_name && strlen(o->long_name) == len &&
		    !strncmp(o->long_name, name, len))
			return (struct popt *)o;
	return NULL;
}

/* The option -letter, or NULL.  */
static struct popt *find_short(const struct popt *opts, int letter)
{
	const struct popt *o;

	for (o = opts; o->kind != POPT_END; o++)
		if (is_option(o) && o->short_name && o->short_name == letter)
			return (struct popt *)o;
	return NULL;
}

/* The option a ("-vt") is an alias of, or NULL.  */
static struct popt *find_alias(const struct popt *opts, const char *a)
{
	const struct popt *o;

	if (a[0] != '-' || a[1] == '-')
		return NULL;
	for (o = opts; o->kind != POPT_END; o++)
		if (o->kind == POPT_ALIAS && !strcmp(o->alias, a + 1))
			return find_long(opts, o->long_name, strlen(o->long_name));
	return NULL;
}

/* The alias word of o, or NULL.  */
static const char *alias_of(const struct popt *opts, const struct popt *o)
{
	const struct popt *a;

	if (!o->long_name)
		return NULL;
	for (a = opts; a->kind != POPT_END; a++)
		if (a->kind == POPT_ALIAS && !strcmp(a->long_name, o->long_name))
			return a->alias;
	return NULL;
}

/* The column help lines start at.  */
#define HELP_COLUMN 26

static void print_row(FILE *f, const struct popt *opts, const struct popt *o)
{
	const char *alias = alias_of(opts, o), *h = o->help, *nl;
	char head[96];
	int n = 0;

	if (alias)
		n += snprintf(head + n, sizeof(head) - (size_t)n, "-%s", alias);
	else if (o->short_name)
		n += snprintf(head + n, sizeof(head) - (size_t)n, "-%c", o->short_name);
	if ((alias || o->short_name) && o->long_name)
		n += snprintf(head + n, sizeof(head) - (size_t)n, ", ");
	if (o->long_name)
		n += snprintf(head + n, sizeof(head) - (size_t)n, "--%s", o->long_name);
	if (o->argh)
		snprintf(head + n, sizeof(head) - (size_t)n, " %s", o->argh);
	if (strlen(head) <= HELP_COLUMN - 4)
		fprintf(f, "  %-*s  ", HELP_COLUMN - 4, head);
	else
		fprintf(f, "  %s\n%*s", head, HELP_COLUMN, "");
	/* a help of several lines: the next ones under the first */
	while ((nl = strchr(h, '\n')) && nl[1]) {
		fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
		h = nl + 1;
	}
	fprintf(f, "%s%s", h, nl ? "" : "\n");
}

void usage_with_options(FILE *f, const char *usage, const struct popt *opts)
{
	const struct popt *o;
	size_t len = strlen(usage);
	int any = 0;

	fputs(usage, f);
	for (o = opts; o->kind != POPT_END; o++) {
		if (!o->help || o->kind == POPT_ALIAS)
			continue;
		/* an empty line before the first heading, unless the usage
		 * ends with one; before every other heading */
		if (!any && len && usage[len - 1] == '\n' && (len < 2 || usage[len - 2] != '\n'))
			fputc('\n', f);
		else if (any && o->kind == POPT_GROUP)
			fputc('\n', f);
		if (o->kind == POPT_GROUP) {
			fprintf(f, "%s%s", o->help,
				o->help[strlen(o->help) - 1] == '\n' ? "" : "\n");
			any = 1;
			continue;
		}
		if (!any)
			fputs("Options:\n", f);
		any = 1;
		print_row(f, opts, o);
	}
}

/* Stores value (NULL when the option takes none) into o's field; name is
 * the option as given, for messages.  A POPT_CALLBACK_MORE takes its words
 * from argv after *i.  */
static int set_value(const struct popt *o, const char *name, const char *value, int argc,
		     char **argv, int *i)
{
	switch (o->kind) {
	case POPT_FLAG:
		*(int *)o->value = o->defval;
		return 0;
	case POPT_STRING:
		*(const char **)o->value = value;
		return 0;
	case POPT_INT: {
		uint64_t v;
		int neg = value[0] == '-';

		/* digits, and a '-': no spaces, '+', hex or overflow clamped */
		if (parse_count(value + neg, neg ? (uint64_t)INT_MAX + 1 : INT_MAX, &v) < 0)
			return popt_error(o, "%s wants a whole number, not '%s'", name, value);
		*(int *)o->value = neg ? (int)(-(int64_t)v) : (int)v;
		return 0;
	}
	case POPT_DOUBLE: {
		double v;

		if (parse_decimal(value, &v) < 0)
			return popt_error(o, "%s wants a number, not '%s'", name, value);
		*(double *)o->value = v;
		return 0;
	}
	case POPT_CALLBACK:
		return o->cb(o, value);
	case POPT_CALLBACK_MORE: {
		int n = o->more_cb(o, value, argc - (*i + 1), argv + *i + 1);

		if (n < 0)
			return -1;
		*i += n;
		return 0;
	}
	case POPT_END:
	case POPT_ALIAS:
	case POPT_GROUP:
		break;
	}
	return -1;
}

/* o, given as name with the value attached (after '=' or the letter) or
 * NULL: takes its value, from argv[*i + 1] when none is attached.  */
static int take(const struct popt *o, const char *name, const char *attached, int argc,
		char **argv, int *i)
{
	if (!o->argh) {
		if (attached)
			return popt_error(o, "%s takes no value", name);
		return set_value(o, name, NULL, argc, argv, i);
	}
	if (!attached) {
		if (*i + 1 >= argc)
			return popt_error(o, "%s wants a value (%s)", name, o->argh);
		attached = argv[++*i];
	}
	return set_value(o, name, attached, argc, argv, i);
}

/* argv[*i] is "--...": handles it and the value it takes.  */
static int parse_long(struct popt *opts, int argc, char **argv, int *i)
{
	const char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	struct popt *o = find_long(opts, arg, len);
	char name[80];

	if (!o) {
		/* --help is no entry of the table, but it is an option */
		if (len == 4 && !strncmp(arg, "help", 4))
			return popt_error(opts, "--help takes no value");
		/* "--=x": no name to show alone */
		if (!len)
			return popt_error(opts, "unknown option '%s'", argv[*i]);
		return popt_error(opts, "unknown option '%.*s'", (int)(len + 2), argv[*i]);
	}
	snprintf(name, sizeof(name), "--%s", o->long_name);
	return take(o, name, eq ? eq + 1 : NULL, argc, argv, i);
}

/* argv[*i] is "-x...": short options, bundled flags, an attached value.  */
static int parse_short(struct popt *opts, int argc, char **argv, int *i)
{
	const char *p;

	for (p = argv[*i] + 1; *p; p++) {
		struct popt *o = find_short(opts, *p);
		char name[3] = { '-', *p, 0 };

		if (!o) {
			if (p == argv[*i] + 1)
				return popt_error(opts, "unknown option '%s'", argv[*i]);
			return popt_error(opts, "unknown option '-%c' in '%s'", *p, argv[*i]);
		}
		if (!o->argh) {
			if (set_value(o, name, NULL, argc, argv, i))
				return -1;
			continue;
		}
		return take(o, name, p[1] ? p + 1 : NULL, argc, argv, i);
	}
	return 0;
}

/* Whether the option a (an argv[i]) takes its value from argv[i + 1].  */
static int value_follows(const struct popt *opts, const char *a)
{
	const struct popt *o = find_alias(opts, a);
	const char *p;

	if (o)
		return o->argh != NULL;
	if (a[1] == '-') {
		if (strchr(a, '='))
			return 0;
		o = find_long(opts, a + 2, strlen(a + 2));
		return o && o->argh;
	}
	for (p = a + 1; *p; p++) {
		o = find_short(opts, *p);
		if (!o)
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
	int i, n = 0, only_positionals = 0, own_help = find_long(opts, "help", 4) != NULL;

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
		if (!own_help && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			usage_with_options(stdout, usage, opts);
			return POPT_HELP;
		}
		if ((o = find_alias(opts, a)))
			r = take(o, a, NULL, argc, argv, &i);
		else if (a[1] == '-')
			r = parse_long(opts, argc, argv, &i);
		else
			r = parse_short(opts, argc, argv, &i);
		if (r) {
			usage_synopsis(stderr, usage);
			return POPT_ERROR;
		}
	}
	if (n < argc)
		argv[n] = NULL;
	return n;
}

struct popt *popt_concat(const struct popt *a, const struct popt *b)
{
	size_t na = 0, nb = 0;
	struct popt *t;

	while (a[na].kind != POPT_END)
		na++;
	while (b[nb].kind != POPT_END)
		nb++;
	t = xcalloc(na + nb + 1, sizeof(*t));
	memcpy(t, a, na * sizeof(*t));
	memcpy(t + na, b, (nb + 1) * sizeof(*t));
	return t;
}
