/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One option table per command: the table declares every option (long name,
 * short letter, kind, the field it fills, its help line); parse_options()
 * fills the fields, says usage errors as "perun CMD: ..." on stderr, prints
 * --help from the command's usage text and the table, and leaves the
 * positional arguments in argv, in their order.  */
#ifndef PERUN_UTIL_PARSE_OPTIONS_H
#define PERUN_UTIL_PARSE_OPTIONS_H

#include <stdio.h>

enum popt_kind {
	POPT_END,	/* ends the table */
	POPT_FLAG,	/* int *: set to .defval */
	POPT_INT,	/* int *: a whole number */
	POPT_DOUBLE,	/* double *: a finite number */
	POPT_STRING,	/* const char **: the value as given */
	POPT_CALLBACK,	/* .cb(o, value): value NULL when .argh is NULL */
};

struct popt;
/* 0, or -1 after saying the error (through popt_error) on stderr.  */
typedef int (*popt_cb)(const struct popt *o, const char *value);

struct popt {
	enum popt_kind kind;
	int short_name;		/* a letter, or 0 */
	const char *long_name;	/* without "--", or NULL */
	void *value;		/* the field the kind fills; the callback's data */
	const char *argh;	/* the value's name in help ("N"); NULL: takes none */
	const char *help;	/* one line; NULL: not listed in --help */
	int defval;		/* what POPT_FLAG stores */
	popt_cb cb;
	const char *cmd;	/* set by parse_options for callbacks' messages */
};

#define OPT_END() { POPT_END, 0, NULL, NULL, NULL, NULL, 0, NULL, NULL }
#define OPT_BOOL(s, l, v, h) { POPT_FLAG, (s), (l), (v), NULL, (h), 1, NULL, NULL }
#define OPT_SET_INT(s, l, v, val, h) { POPT_FLAG, (s), (l), (v), NULL, (h), (val), NULL, NULL }
#define OPT_INT(s, l, v, a, h) { POPT_INT, (s), (l), (v), (a), (h), 0, NULL, NULL }
#define OPT_DOUBLE(s, l, v, a, h) { POPT_DOUBLE, (s), (l), (v), (a), (h), 0, NULL, NULL }
#define OPT_STRING(s, l, v, a, h) { POPT_STRING, (s), (l), (v), (a), (h), 0, NULL, NULL }
#define OPT_CALLBACK(s, l, v, a, h, f) { POPT_CALLBACK, (s), (l), (v), (a), (h), 0, (f), NULL }

/* parse_options() results below 0.  */
#define POPT_HELP (-1)	/* --help printed on stdout: exit 0 */
#define POPT_ERROR (-2)	/* a usage error said on stderr: exit 2 */
/* The exit code for a result below 0.  */
#define POPT_EXIT(n) ((n) == POPT_HELP ? 0 : 2)

/* Parses argv[1..argc) (argv[0] is the command) for the command cmd (as in
 * "perun cmd: ..."), options and positionals mixed; "--" ends the options
 * and "-" alone is a positional.  Values: "--name=V", "--name V", "-xV",
 * "-x V"; flags bundle ("-qv").  Returns the number of positionals, moved
 * to argv[0..n) with argv[n] NULL; or POPT_HELP / POPT_ERROR.  The table's
 * .cmd fields are set, so it is not const.  */
int parse_options(int argc, char **argv, const char *cmd, const char *usage, struct popt *opts);

/* The index of the first positional argument of argv[1..argc) that is word
 * (where a command's own arguments end and another's begin: "perun run job
 * ... trace -s custom"), options' values passed over; argc when there is
 * none.  */
int popt_find_word(int argc, char **argv, const struct popt *opts, const char *word);

/* The usage text, then one line per option of the table that has help.  */
void usage_with_options(FILE *f, const char *usage, const struct popt *opts);

/* The synopsis: the usage text up to its first empty line.  */
void usage_synopsis(FILE *f, const char *usage);

/* "perun CMD: " fmt on stderr, for callbacks (parse_options adds the
 * synopsis); -1.  */
int popt_error(const struct popt *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
