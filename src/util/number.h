/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Numbers as a user types them on a command line or in local.yml: the whole
 * string, decimal digits only.  strtoul and strtod alone take more: leading
 * spaces, a sign ("-5" as a huge count), hex ("0x10", "0x1p-3"), "inf" and
 * "nan", and they clamp an overflow silently.  */
#ifndef PERUN_UTIL_NUMBER_H
#define PERUN_UTIL_NUMBER_H

#include <stdint.h>

/* A whole number of decimal digits, at most max: 0 with *out set, or -1
 * (empty, anything but digits, above max).  */
int parse_count(const char *s, uint64_t max, uint64_t *out);

/* A decimal number: an optional '-', digits with an optional fraction
 * ("5", "0.5", ".5", "5."), an optional exponent ("1e-3"); finite.  0 with
 * *out set, or -1.  */
int parse_decimal(const char *s, double *out);

/* A percentage: a decimal as parse_decimal takes it, with an optional
 * trailing '%' ("5", "5%", "0.5%").  0 with *out set (5 for "5%"), or -1.  */
int parse_percent(const char *s, double *out);

/* A time as "10us", "2ms", "1.5s", "500ns" (or a bare number of ns), above
 * 0: 0 with *ns set, or -1.  */
int parse_duration_ns(const char *s, uint64_t *ns);

#endif
