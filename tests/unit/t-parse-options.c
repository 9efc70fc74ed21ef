/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The option table parser (util/parse-options).  */
#include "config.h"

#include <stdio.h>
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

static void reset(void)
{
	quiet = count = calls = 0;
	ratio = 0;
	out = seen = NULL;
}

/* parse_options on a copy of args, stderr to /dev/null for the error cases.  */
static int run(char **args, int silent)
{
	int argc = 0, n, saved = -1;

	while (args[argc])
		argc++;
	reset();
	if (silent) {
		fflush(stderr);
		saved = dup(2);
		if (!freopen("/dev/null", "w", stderr))
			return -99;
	}
	n = parse_options(argc, args, "t", usage, opts);
	if (silent) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	return n;
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

	return tap_done();
}
