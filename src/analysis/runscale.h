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

/* Runs whose speeds as a whole (scale) lie more than this far apart (log
 * units, x1.25) may run their contexts at different relative speeds: a
 * sibling hyperthread's load slows each loop by where its code lies (in
 * t7023's runs at half speed two of five identical loops ran 0.7x the
 * others' median and two 1.3x, in every such run, while at full speed all
 * five agreed within 0.1 %).  */
#define RUNSCALE_GROUP_GAP 0.223

/* Groups of runs of like speed: runs sorted by scale, a new group where the
 * next run is more than RUNSCALE_GROUP_GAP faster or slower than the one
 * before; group[r] set (0 the fastest), the number of groups returned.  */
size_t runscale_groups(const double *scale, size_t nr, int *group);

/* Each run's speed told again within its group of like speed (scale[r]
 * replaced by runscale_estimate() over the runs of its group, and each
 * group's speed against that of the group whose contexts agree best, by
 * the median shift of its contexts' references; centred on a median of
 * 0).  Where the host slows a run's contexts
 * apart, the median over them is unsteady: in t7023's runs at half speed
 * two of five identical loops ran 0.7x and three about 1.25x (the changed
 * one among them), so the median fell on the changed function in some
 * runs and on an unchanged one in others, and every other function seemed
 * to move 10 %.  Within a group each context's reference is its own
 * typical value there, and the median falls on unchanged ones again.  */
void runscale_group_scale(const double *x, size_t nr, size_t nc, const int *group, size_t ng,
			  double *scale);

/* How much more than the typical run's a run's own contexts may disagree
 * (the variance of their shifts from their references, its speed out)
 * before the run weighs less.  Within groups (check): 64, eight times the
 * spread; at 4 and at 16 the loaded pool of bench/control.sh lost
 * sensitivity (its runs' spreads range from 0.1 % to 5 %, told from 5
 * contexts, and a weight under 1 costs degrees of freedom), where the runs
 * a partial hog slows stray 10 to 100 times the typical spread.  Across
 * groups (history's points): 16, four times the spread; at 64 history
 * missed c4's +28 % on both of t7023's kept loaded matrices again.  */
#define RUNSCALE_WEIGHT_SLACK 64.0
#define RUNSCALE_WEIGHT_SLACK_ACROSS 16.0

/* The least spread (log units) a run's contexts are taken to have: at full
 * speed t7023's five identical loops agreed within 0.1 %.  */
#define RUNSCALE_WEIGHT_FLOOR 0.001

/* The most spread (log units) the typical run is taken to have: where
 * most runs are slowed apart (t7023's matrix ran 17 of 30 runs at half
 * speed, their loops 25-40 % apart), the median run is no standard, and
 * runs whose contexts agree within four times this weigh 1 whatever the rest
 * did.  */
#define RUNSCALE_WEIGHT_TYPICAL 0.02

/* How far apart (log units) the host slows a run's contexts, per unit of
 * how much slower the run's group ran than the standard's: in t7023's runs
 * at half speed (log 0.7) the loops ran 0.7x to 1.3x the run's median.
 * (The spread of the groups' references cannot tell it: with two loops of
 * five slowed one way and three the other, their median deviation is 0.)  */
#define RUNSCALE_WEIGHT_APART 0.5

/* The fewest runs of the group that sets the standard in
 * runscale_weights()'s across mode (unless none has as many: the
 * largest).  */
#define RUNSCALE_STANDARD_RUNS 3

/* Each run's weight w[0..nr) by how well its contexts agree once its speed
 * (scale, from runscale_estimate) is out: a run whose contexts moved apart
 * from their references much more than the typical run's did has no one
 * speed, and what it says of any one context is as uncertain.  A hog that
 * starts or stops partway through a run does this (in t7023's runs so
 * slowed, a third of the loops ran every call at half speed and the rest
 * none), and so does a sibling hyperthread's load, which slows each loop
 * by where its code lies.  A context's reference is its median over the
 * runs of its group (group[r] below ng; group NULL: one group), over the
 * contexts with a value in every run.  The variance of a run's shifts
 * (1.4826 MAD squared, at least RUNSCALE_WEIGHT_FLOOR's) against
 * RUNSCALE_WEIGHT_SLACK (across: _ACROSS) times the runs' median: up to it
 * a run weighs 1, past it the inverse ratio (the median taken as
 * RUNSCALE_WEIGHT_TYPICAL's where larger), so that a run of weight w has a
 * variance of about *unit / w (unit may be NULL: that bound, log units
 * squared).
 * across: the runs are to be compared across groups (history's points), not
 * within each (check): the group whose runs agree best is the standard, the
 * typical run is the standard's, and a run of another group has added the
 * variance of how far the host may have slowed its contexts apart:
 * RUNSCALE_WEIGHT_APART times how much slower or faster its group ran.
 * Returns how many runs weigh less than 1 (0, every weight 1 and *unit 0,
 * when fewer than RUNSCALE_MIN_CONTROL contexts have a value in every
 * run).  */
size_t runscale_weights(const double *x, size_t nr, size_t nc, const double *scale,
			const int *group, size_t ng, int across, double *w, double *unit);

/* 1.4826 times the median absolute deviation from the median of v[0..n)
 * (a robust standard deviation); 0 when n is 0.  v is not modified.  */
double runscale_mad_sd(const double *v, size_t n);

#endif
