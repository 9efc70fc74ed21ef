/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Perun's machine region of a profile: where it ran (host, operating
 * system release, architecture, cpu model and count, memory) and the probe
 * calibration in use.  Comparisons of timings hold only on one machine.  */
#ifndef PERUN_PROFILE_MACHINE_H
#define PERUN_PROFILE_MACHINE_H

struct json_object;
struct profile;

/* The region for this machine (uname(2), /proc/cpuinfo, sysinfo(2)), with
 * calibration (taken over; may be NULL) under "calibration" and the name the
 * user gave the machine (asv's machine name; NULL: none) under "name".
 * Never NULL.  */
struct json_object *machine_region(struct json_object *calibration, const char *name);

/* 1 when a and b ran on the same machine: when both carry a machine name,
 * the same name (whatever the host is called now); when neither does, host,
 * system, release, architecture, cpu model and count and total memory all
 * equal; a named and an unnamed machine differ.  A profile without a
 * machine region matches any (where it ran is unknown).  */
int machine_same(const struct profile *a, const struct profile *b);
/* Whether p has a machine region.  */
int machine_known(const struct profile *p);
/* "host (x86_64, 2 x Intel Xeon ..., 7.8 GiB, Linux 6.18.0)", the machine's
 * name alone when it has one (what keeps one series), or "" when p has no
 * machine region; caller frees.  */
char *machine_describe(const struct profile *p);

#endif
