/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/number.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int parse_count(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (!is_digit(*s))
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_percent(const char *s, double *out)
{
	char num[64];
	size_t n = s ? strlen(s) : 0;

	if (n && s[n - 1] == '%')
		n--;
	if (!n || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	return parse_decimal(num, out);
}

int parse_decimal(const char *s, double *out)
{
	const char *p = s;
	char *end;
	int digits = 0;
	double v;

	if (!s)
		return -1;
	if (*p == '-')
		p++;
	for (; is_digit(*p); p++)
		digits++;
	if (*p == '.')
		for (p++; is_digit(*p); p++)
			digits++;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!is_digit(*p))
			return -1;
		while (is_digit(*p))
			p++;
	}
	if (*p)
		return -1;
	/* the shape is plain decimal, so strtod reads all of it the same way */
	errno = 0;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || (errno == ERANGE && v != 0))
		return -1;
	*out = v;
	return 0;
}

int parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 } };
	size_t i, n = strlen(s);

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t u = strlen(units[i].unit);
		char num[64];
		double v;

		if (n <= u || n - u >= sizeof(num) || strcmp(s + n - u, units[i].unit))
			continue;
		memcpy(num, s, n - u);
		num[n - u] = '\0';
		/* the number before the unit as typed: no sign, space or hex */
		if (num[0] == '-' || parse_decimal(num, &v) < 0 || !(v > 0) ||
		    v * units[i].scale > 1e18)
			return -1;
		*ns = (uint64_t)(v * units[i].scale + 0.5);
		return *ns ? 0 : -1;
	}
	return -1;
}
