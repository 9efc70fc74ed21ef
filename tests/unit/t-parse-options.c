/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The option table parser (util/parse-options).  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/parse-options.h"
#include "tap.h"

static int quiet, count, calls;
static double ratio;
static const char *out, *seen;

static int remember(const struct popt *o, const char *value)
{
	(void)o;
	calls++;
	seen = value;
	return 0;
}

static int refuse(const struct popt *o, const char *value)
{
	return popt_error(o, "--pick wants a or b, not '%s'", value);
}

static struct popt opts[] = {
	OPT_BOOL('q', "quiet", &quiet, "say less"),
	OPT_INT('n', "count", &count, "N", "how many"),
	OPT_DOUBLE(0, "ratio", &ratio, "R", "a ratio"),
	OPT_STRING('o', "output", &out, "PATH", "where to write"),
	OPT_CALLBACK(0, "mark", NULL, NULL, "a callback flag", remember),
	OPT_CALLBACK(0, "pick", NULL, "X", NULL, refuse),
	OPT_END(),
};

static const char usage[] = "usage: perun t [-q] [-n N] ARG...\n\nA test command.\n";

/* A level of a command (perun collect's trace): headings, one-dash aliases
 * of several letters, an option of two words, and its own help row.  */
static int verbose_trace, help;
static const char *pipeline, *pname, *pvalue;

static int pair(const struct popt *o, const char *value, int argc, char **argv)
{
	if (!argc)
		return popt_error(o, "-oa %s: give its value too (-oa NAME VALUE)", value);
	pname = value;
	pvalue = argv[0];
	return 1;
}

static struct popt level[] = {
	OPT_GROUP("trace options:"),
	OPT_BOOL(0, "verbose-trace", &verbose_trace, "keep the raw stream"),
	OPT_STRING('o', "output-handling", &out, "M", "default | capture\nor suppress"),
	OPT_GROUP("optimization options:"),
	OPT_STRING(0, "optimization-pipeline", &pipeline, "P", "basic | full"),
	OPT_CALLBACK_MORE(0, "optimization-args", NULL, "NAME VALUE", "a parameter", pair),
	OPT_ALIAS("vt", "verbose-trace"),
	OPT_ALIAS("op", "optimization-pipeline"),
	OPT_ALIAS("oa", "optimization-args"),
	OPT_BOOL('h', "help", &help, NULL),
	OPT_END(),
};

/* What usage_with_options prints for t (the caller frees it).  */
static char *render(const char *u, const struct popt *t)
{
	FILE *f = tmpfile();
	char *buf = calloc(1, 4096);
	size_t n;

	if (!f || !buf)
		return buf;
	usage_with_options(f, u, t);
	rewind(f);
	n = fread(buf, 1, 4095, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void reset(void)
{
	quiet = count = calls = 0;
	ratio = 0;
	out = seen = NULL;
}

/* parse_options on a copy of args, stderr to /dev/null for the error cases.  */
static int run_table(char **args, int silent, struct popt *t)
{
	int argc = 0, n, saved = -1;

	while (args[argc])
		argc++;
	reset();
	verbose_trace = help = 0;
	pipeline = pname = pvalue = NULL;
	if (silent) {
		fflush(stderr);
		saved = dup(2);
		if (!freopen("/dev/null", "w", stderr))
			return -99;
	}
	n = parse_options(argc, args, "t", usage, t);
	if (silent) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	return n;
}

static int run(char **args, int silent)
{
	return run_table(args, silent, opts);
}

int main(void)
{
	char *a1[] = { "t", "x", "-q", "--count", "3", "y", "--ratio=0.5", "-o", "f", "z", NULL };
	char *a2[] = { "t", "--count=7", "-n9", "--output=", "--mark", NULL };
	char *a3[] = { "t", "-qn", "4", NULL };
	char *a4[] = { "t", "--count", NULL };
	char *a5[] = { "t", "--bogus", NULL };
	char *a6[] = { "t", "-x", NULL };
	char *a7[] = { "t", "a", "--", "-q", "--count", "-", NULL };
	char *a8[] = { "t", "--count", "many", NULL };
	char *a9[] = { "t", "--ratio", "nan", NULL };
	char *a10[] = { "t", "--quiet=1", NULL };
	char *a11[] = { "t", "--pick", "c", NULL };
	char *a12[] = { "t", "-o", NULL };
	int n;

	n = run(a1, 0);
	is_int(n, 3, "three positionals among the options");
	ok(n == 3 && !strcmp(a1[0], "x") && !strcmp(a1[1], "y") && !strcmp(a1[2], "z") && !a1[3],
	   "positionals kept in their order, NULL after them");
	is_int(quiet, 1, "a short flag");
	is_int(count, 3, "--opt value");
	ok(ratio == 0.5, "--opt=value of a double");
	is_str(out, "f", "-o value");

	n = run(a2, 0);
	is_int(n, 0, "no positionals");
	is_int(count, 9, "-nVALUE, the last one wins");
	is_str(out, "", "--opt= gives an empty value");
	ok(calls == 1 && seen == NULL, "a callback flag called once without a value");

	n = run(a3, 0);
	ok(n == 0 && quiet == 1 && count == 4, "-qn 4: a bundled flag, then a value");

	is_int(run(a4, 1), POPT_ERROR, "a missing value is a usage error");
	is_int(run(a12, 1), POPT_ERROR, "a missing value of a short option is a usage error");
	is_int(run(a5, 1), POPT_ERROR, "an unknown long option is a usage error");
	is_int(run(a6, 1), POPT_ERROR, "an unknown short option is a usage error");
	is_int(run(a8, 1), POPT_ERROR, "an int that is not a number is a usage error");
	is_int(run(a9, 1), POPT_ERROR, "a double that is not finite is a usage error");
	is_int(run(a10, 1), POPT_ERROR, "a value given to a flag is a usage error");
	is_int(run(a11, 1), POPT_ERROR, "a callback's refusal is a usage error");
	is_int(POPT_EXIT(POPT_ERROR), 2, "a usage error exits 2");
	is_int(POPT_EXIT(POPT_HELP), 0, "--help exits 0");

	n = run(a7, 0);
	ok(n == 4 && !strcmp(a7[0], "a") && !strcmp(a7[1], "-q") && !strcmp(a7[2], "--count") &&
		   !strcmp(a7[3], "-") && quiet == 0 && count == 0,
	   "-- ends the options; - alone is a positional");

	{
		char *w1[] = { "t", "-n", "trace", "x", "trace", "-s", NULL };
		char *w2[] = { "t", "-qn", "trace", "trace", NULL };
		char *w3[] = { "t", "--count=trace", "-ntrace", "--output", "trace", "trace", NULL };
		char *w4[] = { "t", "x", "-q", NULL };
		char *w5[] = { "t", "--", "--count", "trace", NULL };

		is_int(popt_find_word(6, w1, opts, "trace"), 4, "the word, not an option's value");
		is_int(popt_find_word(4, w2, opts, "trace"), 3, "-qn VALUE: the value passed over");
		is_int(popt_find_word(6, w3, opts, "trace"), 5,
		       "values given with = or attached, and long options' values, passed over");
		is_int(popt_find_word(3, w4, opts, "trace"), 3, "no such word: argc");
		is_int(popt_find_word(4, w5, opts, "trace"), 3, "after --, the word is a positional");
	}

	{
		char *l1[] = { "t", "-vt", "x", "-op", "basic", "-oa", "probing-threshold", "10",
				"y", NULL };
		char *l2[] = { "t", "-opx", "--optimization-args=cg-mode", "strict", "z", NULL };
		char *l3[] = { "t", "-oa", "probing-threshold", NULL };
		char *l4[] = { "t", "-op", NULL };
		char *l5[] = { "t", "-vt", "--help", NULL };
		char *l6[] = { "t", "-h", NULL };
		char *l7[] = { "t", "-vtx", NULL };
		char *w1[] = { "t", "-op", "trace", "-vt", "trace", NULL };

		n = run_table(l1, 0, level);
		ok(n == 2 && !strcmp(l1[0], "x") && !strcmp(l1[1], "y"),
		   "aliases among positionals");
		ok(verbose_trace == 1 && pipeline && !strcmp(pipeline, "basic"),
		   "-vt and -op WORD: the options they name");
		ok(pname && pvalue && !strcmp(pname, "probing-threshold") && !strcmp(pvalue, "10"),
		   "-oa NAME VALUE: the callback takes the word after the value");
		n = run_table(l2, 0, level);
		ok(n == 1 && !strcmp(l2[0], "z") && out && !strcmp(out, "px") && !pipeline,
		   "-opx is -o px: an alias is a whole word");
		ok(pname && !strcmp(pname, "cg-mode") && pvalue && !strcmp(pvalue, "strict"),
		   "--long=NAME VALUE");
		is_int(run_table(l3, 1, level), POPT_ERROR,
		       "-oa NAME without its VALUE is refused");
		is_int(run_table(l4, 1, level), POPT_ERROR,
		       "an alias without its value is refused");
		n = run_table(l5, 0, level);
		ok(n == 0 && help == 1 && verbose_trace == 1,
		   "a table with a help row takes --help as that row");
		n = run_table(l6, 0, level);
		ok(n == 0 && help == 1, "and -h");
		is_int(run_table(l7, 1, level), POPT_ERROR, "-vtx is no alias, and no letters");
		is_int(popt_find_word(5, w1, level, "trace"), 4, "an alias's value passed over");
	}

	{
		char *h1 = render("usage: perun t\n", level);
		char *h2 = render(usage, opts);
		struct popt *both = popt_concat(opts, level);
		int rows = 0;

		is_str(h1,
		       "usage: perun t\n"
		       "\n"
		       "trace options:\n"
		       "  -vt, --verbose-trace    keep the raw stream\n"
		       "  -o, --output-handling M\n"
		       "                          default | capture\n"
		       "                          or suppress\n"
		       "\n"
		       "optimization options:\n"
		       "  -op, --optimization-pipeline P\n"
		       "                          basic | full\n"
		       "  -oa, --optimization-args NAME VALUE\n"
		       "                          a parameter\n",
		       "headings, aliases, long heads and help of two lines");
		is_str(h2,
		       "usage: perun t [-q] [-n N] ARG...\n"
		       "\n"
		       "A test command.\n"
		       "\n"
		       "Options:\n"
		       "  -q, --quiet             say less\n"
		       "  -n, --count N           how many\n"
		       "  --ratio R               a ratio\n"
		       "  -o, --output PATH       where to write\n"
		       "  --mark                  a callback flag\n",
		       "a table without headings under Options:");
		while (both[rows].kind != POPT_END)
			rows++;
		ok(rows == 6 + 10 && both[0].short_name == 'q' && both[6].kind == POPT_GROUP,
		   "popt_concat: one table's rows, then the other's");
		free(h1);
		free(h2);
		free(both);
	}

	return tap_done();
}
