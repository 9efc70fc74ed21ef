/* SPDX-License-Identifier: GPL-3.0-or-later */
/* util/number: what a count and a decimal accept, and what they refuse.  */
#include "config.h"

#include <stdint.h>

#include "tap.h"
#include "util/number.h"

static int count_ok(const char *s, uint64_t max, uint64_t want)
{
	uint64_t v = 12345;
	return parse_count(s, max, &v) == 0 && v == want;
}

static int count_bad(const char *s, uint64_t max)
{
	uint64_t v = 12345;
	return parse_count(s, max, &v) == -1 && v == 12345;
}

static int dec_ok(const char *s, double want)
{
	double v = -7;
	return parse_decimal(s, &v) == 0 && v == want;
}

static int dec_bad(const char *s)
{
	double v = -7;
	return parse_decimal(s, &v) == -1 && v == -7;
}

int main(void)
{
	ok(count_ok("0", 10, 0), "0");
	ok(count_ok("5", 10, 5), "5");
	ok(count_ok("10", 10, 10), "max itself");
	ok(count_ok("007", 10, 7), "leading zeros are decimal, not octal");
	ok(count_ok("18446744073709551615", UINT64_MAX, UINT64_MAX), "UINT64_MAX");
	ok(count_bad("18446744073709551616", UINT64_MAX), "UINT64_MAX + 1 overflows: refused, not clamped");
	ok(count_bad("99999999999999999999999", UINT64_MAX), "far past UINT64_MAX");
	ok(count_bad("11", 10), "above max");
	ok(count_bad("", 10), "empty");
	ok(count_bad(" 5", 10), "a leading space");
	ok(count_bad("5 ", 10), "a trailing space");
	ok(count_bad("+5", 10), "a plus sign");
	ok(count_bad("-5", UINT64_MAX), "a minus sign (strtoul: ULONG_MAX - 4)");
	ok(count_bad("0x5", 10), "hex");
	ok(count_bad("5k", 10), "a suffix");
	ok(count_bad(NULL, 10), "NULL");

	ok(dec_ok("5", 5), "5");
	ok(dec_ok("0.5", 0.5), "0.5");
	ok(dec_ok(".5", 0.5), ".5");
	ok(dec_ok("5.", 5), "5.");
	ok(dec_ok("-2.5", -2.5), "-2.5");
	ok(dec_ok("1e-3", 1e-3), "1e-3");
	ok(dec_ok("2E+2", 200), "2E+2");
	ok(dec_bad(""), "empty");
	ok(dec_bad("."), "a point alone");
	ok(dec_bad("-"), "a minus alone");
	ok(dec_bad(" 5"), "a leading space");
	ok(dec_bad("+5"), "a plus sign");
	ok(dec_bad("0x1p-3"), "a hex float");
	ok(dec_bad("0x10"), "hex");
	ok(dec_bad("inf"), "inf");
	ok(dec_bad("nan"), "nan");
	ok(dec_bad("1e400"), "overflows to inf");
	ok(dec_bad("1e"), "an exponent without digits");
	ok(dec_bad("5%"), "a suffix");
	ok(dec_bad("1,5"), "a comma");
	{
		double v = -7;
		ok(parse_percent("5%", &v) == 0 && v == 5, "5%%");
		ok(parse_percent("0.5", &v) == 0 && v == 0.5, "0.5 without %%");
		ok(parse_percent("%", &v) == -1 && v == 0.5, "%% alone");
		ok(parse_percent("5%%", &v) == -1, "two %%");
		ok(parse_percent("0x10%", &v) == -1, "hex with %%");
		ok(parse_percent(" 5%", &v) == -1, "a space");
	}
	return tap_done();
}
