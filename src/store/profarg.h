/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The PROFILE argument of the commands that read one profile or two
 * (diff, postprocessby): a path, or what 'perun show' looks up in the store
 * (N@i, N@p, a registered name, part of a pending name) for HEAD, or for REV
 * when written REV:SPEC.  */
#ifndef PERUN_STORE_PROFARG_H
#define PERUN_STORE_PROFARG_H

struct profile;

/* Loads the profile spec names into p.  *label names it for output (caller
 * frees); minor receives the minor version it belongs to, or "".  0, or -1
 * (reported).  */
int profile_arg_load(const char *spec, struct profile *p, char **label, char minor[41]);

#endif
