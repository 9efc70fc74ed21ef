/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The in-run control: each run's own speed, told from its functions.
 *
 * A shared machine (or a VM that runs at two speeds) moves every function
 * of a run together; a change of the code moves one function (and its
 * callers) while the rest of the run holds still.  So, per run r and per
 * context c, with x[r][c] the log of c's time in r, the two-way median
 * polish
 *     x[r][c] = ref[c] + scale[r] + e[r][c]
 * (ref[c] the median over runs of x[r][c] - scale[r], scale[r] the median
 * over contexts of x[r][c] - ref[c], twice, scale centred on a median of 0)
 * gives each run its speed: scale[r] is how much slower than the typical
 * run (in log units) run r ran as a whole.  x[r][c] - scale[r] is c's time
 * with the host's speed of run r taken out: what check compares when the
 * control holds, and history's normalised series.  The median keeps a
 * change in fewer than half of the contexts out of the scale.
 *
 * Only contexts with a finite value in every run form the control; fewer
 * than RUNSCALE_MIN_CONTROL of them form none (a scale of 0 for every run).
 * No I/O.  */
#ifndef PERUN_ANALYSIS_RUNSCALE_H
#define PERUN_ANALYSIS_RUNSCALE_H

#include <stddef.h>

/* The fewest contexts that form a control: with two, one that moved drags
 * the median half way, and the other looks moved the other way.  */
#define RUNSCALE_MIN_CONTROL 3

/* x[r * nc + c] for r < nr, c < nc (NAN: missing, or not to be used as a
 * control).  Fills scale[0..nr) and returns the number of contexts that
 * formed the control (0 and every scale 0 when fewer than
 * RUNSCALE_MIN_CONTROL).  */
size_t runscale_estimate(const double *x, size_t nr, size_t nc, double *scale);

/* 1.4826 times the median absolute deviation from the median of v[0..n)
 * (a robust standard deviation); 0 when n is 0.  v is not modified.  */
double runscale_mad_sd(const double *v, size_t n);

#endif
