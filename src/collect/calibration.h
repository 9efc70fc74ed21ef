/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The probe cost of this host, measured and looked up: a measurement is a
 * collect of perun-calib (src/runtime/calibrate-helper.c) whose profile and
 * report give the amounts; it is cached per runtime and kernel release in
 * the module cache directory (the file and its format: runtime/calibrate.h).
 * perun calibrate measures; collect looks up, and measures with
 * --calibrate.  */
#ifndef PERUN_COLLECT_CALIBRATION_H
#define PERUN_COLLECT_CALIBRATION_H

#include "runtime/calibrate.h"
#include "runtime/runtime.h"

struct profile;

/* Traced calls of a measurement unless perun calibrate --calls says.  */
#define CALIBRATION_CALLS 20000

/* Fills c's amounts from perun-calib's report (calls, untraced_ns,
 * traced_ns and gap_ns lines: per loop iteration) and the profile of its
 * traced run: probe_ns is the median recorded amount of CALIB_FUNC.  */
int calibration_compute(const struct profile *p, const char *report, struct calibration *c);
/* The probe cost for runtime rt (auto resolved as collect resolves it) and,
 * on the bpf runtime, loader ("perun", the default for NULL, or "stapbpf":
 * each has its own cost and cache file) on the running kernel: the cached one, or with force or when none is cached
 * one measured now with calls traced calls and cached.  *path receives the
 * cache file's path (caller frees).  1 in c, -1 refused or failed
 * (reported).  */
int calibration_obtain(enum runtime rt, const char *loader, unsigned long calls, int force,
		       struct calibration *c, char **path);
/* The probe cost a collect subtracts, for rt (and loader, as above) on the
 * running kernel: mode 0
 * (--no-calibrate) none; -1 the cached one only; 1 (--calibrate) the
 * cached one, else one measured now and cached.  What it found is said on
 * stderr unless quiet.  1 in c, 0 none, -1 refused or failed (reported).  */
int calibration_get(enum runtime rt, const char *loader, int mode, int quiet,
		    struct calibration *c);
/* "perun: probe cost (...)": c and its cache file, on stderr.  */
void calibration_say(const struct calibration *c, const char *path);

#endif
