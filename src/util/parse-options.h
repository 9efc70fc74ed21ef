/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One option table per command: the table declares every option (long name,
 * short letter, kind, the field it fills, its help line); parse_options()
 * fills the fields, says usage errors as "perun CMD: ..." on stderr, prints
 * --help from the command's usage text and the table, and leaves the
 * positional arguments in argv, in their order.  A command with levels
 * (perun collect ... trace ...) has one table per level.  */
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
	POPT_CALLBACK_MORE,	/* .more_cb(o, value, argc, argv): takes words after its value */
	POPT_ALIAS,	/* no option: "-WORD" (.alias) is the option --.long_name */
	POPT_GROUP,	/* no option: the heading .help in --help */
};

struct popt;
/* 0, or -1 after saying the error (through popt_error) on stderr.  */
typedef int (*popt_cb)(const struct popt *o, const char *value);
/* For an option that takes more than one word (-oa NAME VALUE): argv[0..argc)
 * are the words after its value; returns how many of them it took, or -1
 * after saying the error (through popt_error) on stderr.  */
typedef int (*popt_more_cb)(const struct popt *o, const char *value, int argc, char **argv);

struct popt {
	enum popt_kind kind;
	int short_name;		/* a letter, or 0 */
	const char *long_name;	/* without "--", or NULL; POPT_ALIAS: the option it names */
	void *value;		/* the field the kind fills; the callback's data */
	const char *argh;	/* the value's name in help ("N"); NULL: takes none */
	const char *help;	/* one line or more; NULL: not listed in --help */
	int defval;		/* what POPT_FLAG stores */
	popt_cb cb;
	popt_more_cb more_cb;
	const char *alias;	/* POPT_ALIAS: the one-dash name without its dash ("vt") */
	const char *cmd;	/* set by parse_options for callbacks' messages */
};

#define OPT_END() { .kind = POPT_END }
#define OPT_BOOL(s, l, v, h)                                                                       \
	{ .kind = POPT_FLAG, .short_name = (s), .long_name = (l), .value = (v), .help = (h),       \
	  .defval = 1 }
#define OPT_SET_INT(s, l, v, val, h)                                                               \
	{ .kind = POPT_FLAG, .short_name = (s), .long_name = (l), .value = (v), .help = (h),       \
	  .defval = (val) }
#define OPT_INT(s, l, v, a, h)                                                                     \
	{ .kind = POPT_INT, .short_name = (s), .long_name = (l), .value = (v), .argh = (a),        \
	  .help = (h) }
#define OPT_DOUBLE(s, l, v, a, h)                                                                  \
	{ .kind = POPT_DOUBLE, .short_name = (s), .long_name = (l), .value = (v), .argh = (a),     \
	  .help = (h) }
#define OPT_STRING(s, l, v, a, h)                                                                  \
	{ .kind = POPT_STRING, .short_name = (s), .long_name = (l), .value = (v), .argh = (a),     \
	  .help = (h) }
#define OPT_CALLBACK(s, l, v, a, h, f)                                                             \
	{ .kind = POPT_CALLBACK, .short_name = (s), .long_name = (l), .value = (v), .argh = (a),   \
	  .help = (h), .cb = (f) }
/* An option with a value and more words after it, which f takes: a the
 * names of them all ("NAME VALUE").  */
#define OPT_CALLBACK_MORE(s, l, v, a, h, f)                                                        \
	{ .kind = POPT_CALLBACK_MORE, .short_name = (s), .long_name = (l), .value = (v),           \
	  .argh = (a), .help = (h), .more_cb = (f) }
/* "-w" (w several letters, matched as a whole word) for --l, which is in the
 * table: its value as --l takes it ("-oa NAME VALUE"); --help shows it
 * before --l.  */
#define OPT_ALIAS(w, l) { .kind = POPT_ALIAS, .long_name = (l), .alias = (w) }
/* A heading before the rows that follow it in --help (the first one in place
 * of "Options:"), after an empty line; h may have several lines.  */
#define OPT_GROUP(h) { .kind = POPT_GROUP, .help = (h) }

/* parse_options() results below 0.  */
#define POPT_HELP (-1)	/* --help printed on stdout: exit 0 */
#define POPT_ERROR (-2)	/* a usage error said on stderr: exit 2 */
/* The exit code for a result below 0.  */
#define POPT_EXIT(n) ((n) == POPT_HELP ? 0 : 2)

/* Parses argv[1..argc) (argv[0] is the command) for the command cmd (as in
 * "perun cmd: ..."), options and positionals mixed; "--" ends the options
 * and "-" alone is a positional.  Values: "--name=V", "--name V", "-xV",
 * "-x V", "-alias V"; flags bundle ("-qv").  Returns the number of
 * positionals, moved to argv[0..n) with argv[n] NULL; or POPT_HELP /
 * POPT_ERROR.  --help and -h print the help, unless the table has a row
 * named "help" (with 'h' for -h): a level whose caller prints the help
 * takes them as that row.  The table's .cmd fields are set, so it is not
 * const.  */
int parse_options(int argc, char **argv, const char *cmd, const char *usage, struct popt *opts);

/* The index of the first positional argument of argv[1..argc) that is word
 * (where a command's own arguments end and another's begin: "perun run job
 * ... trace -s custom"), options' values passed over (not the words a
 * POPT_CALLBACK_MORE takes after its value); argc when there is none.  */
int popt_find_word(int argc, char **argv, const struct popt *opts, const char *word);

/* The usage text, then one line per option of the table that has help (more
 * for a help of several lines), under the table's headings.  */
void usage_with_options(FILE *f, const char *usage, const struct popt *opts);

/* The synopsis: the usage text up to its first empty line.  */
void usage_synopsis(FILE *f, const char *usage);

/* "perun CMD: " fmt on stderr, for callbacks (parse_options adds the
 * synopsis); -1.  */
int popt_error(const struct popt *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A new table: a's rows, then b's (for a command's --help that lists
 * the options of its levels together); the caller frees it.  */
struct popt *popt_concat(const struct popt *a, const struct popt *b);

#endif
