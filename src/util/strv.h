/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A growable NULL-terminated array of strings (an argv), after git's strvec.  */
#ifndef PERUN_STRV_H
#define PERUN_STRV_H

#include <stddef.h>

struct strv {
	char **v;	/* NULL-terminated once anything was pushed */
	size_t n;
};

#define STRV_INIT { NULL, 0 }

/* Appends a copy of x.  */
void strv_push(struct strv *s, const char *x);
/* Frees every string and the array; s is empty again.  */
void strv_clear(struct strv *s);

#endif
