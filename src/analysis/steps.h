/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Step detection in a series of measurements, as asv does it (seeds/004,
 * "Step detection"): the series is modelled as piecewise constant plus AR(1)
 * Laplace noise; for a penalty gamma the L1 Potts problem
 *     argmin  gamma k + sum_r sum_{i in r} w_i |y_i - mu_r|        (004 eq. 1)
 * is solved exactly by dynamic programming (mu_r the weighted median of a
 * segment), and gamma is chosen along the solution path by the information
 * criterion
 *     beta ln(m)/m * k + ln(sigma_0 + sum |eps_i - rho eps_{i-1}|)  (004 eq. 14)
 * minimised over rho, with gamma from the one-segment cost down to 0.1/m of
 * it and asv's noise floor sigma_0 (asv.step_detect.solve_potts_autogamma).
 *
 * Departures from asv, for the short series of a young repository (3 to 10
 * commits) as much as for long ones:
 *   - the noise floor sigma_0 of eq. 14 is not only asv's heuristic (a
 *     tenth of the smallest change of level) but the noise the points are
 *     known to carry: the sum of w_i noise_i when the caller measured each
 *     point's noise (the spread of its runs, or its calls), else estimated
 *     from the series itself, robustly, as the median absolute difference
 *     of successive points (a step moves one difference; it takes 5 points
 *     or more to trust).  A fit then cannot win by splitting noise it was
 *     told about (from 10 points on the floor shrinks as (10/m)^3: a long
 *     series tells noise from steps by itself, as asv's does), so a short series needs no minimum length beyond 3 points
 *     (the old guard of 8 points hid a 2.3x step in 5 commits); on 200 noise
 *     series each of 3 to 10 points it found no step (tests/unit/t-steps.c).
 *   - when the caller measured the points' noise and there are 5 points
 *     or more, the number of steps is chosen by the criterion of noise of
 *     known size instead: sqrt(2) sum |eps_i| / s_i + 1.5 beta k ln(m),
 *     the Laplace likelihood of noise of sd s_i with a penalty per segment.
 *     s_i is the point's own noise where that is more than the median of
 *     the points' (a commit whose runs disagree is not trusted more than
 *     they do), else that median, or more where the series' successive
 *     differences scatter more than it says.  Eq. 14 takes the noise's
 *     size from the residuals alone, so in a short series each step must
 *     cut them 2.5-fold (10 points): a +27 % step between medians known
 *     to a few per cent failed that beside a noisier x2 level.  On runs of
 *     +-5 % noise, 3 a commit, it found a +20 % step in 96-100 % of series
 *     of 10 to 20 commits (eq. 14: 33-100 %) and a false step in at most
 *     9 of 1000 series of 5 to 20 (eq. 14: 3); tests/unit/t-history.c.
 *   - rho is bounded by |rho| <= 0.5, because an unbounded rho near 1
 *     passes a step off as correlated noise (asv's search found the step in
 *     111 of 200 series of 20 points, 82 of 200 of 60 points under AR(1)
 *     noise of rho 0.5; bounded: 193 and 197, and still no false step on
 *     such noise).
  * No I/O; pure functions of their input.  */
#ifndef PERUN_ANALYSIS_STEPS_H
#define PERUN_ANALYSIS_STEPS_H

#include <stddef.h>

/* One change of level.  Indices are those of the caller's y[] (points that
 * were skipped because they are not finite keep their place).  */
struct step {
	size_t start;  /* first index of the new level (> 0) */
	size_t end;    /* one past the last index of the new level */
	double before; /* level (weighted median) of the segment before start */
	double after;  /* level of the segment [start, end) */
	double rel;    /* (after - before) / |before|; +inf when before is 0 and after > 0 */
};

/* Tuning; a zeroed struct or NULL means the defaults below.  */
struct steps_opts {
	double beta;	   /* penalty factor of r(m) = beta ln(m)/m; default 4.0 */
	size_t min_size;   /* shortest segment that may stand alone; default 1 */
	double threshold;  /* report only steps with |rel| >= threshold; default 0 */
	size_t min_points; /* fewer finite points give no step; default 3 (2 = asv) */
	double rho_max;	   /* bound on |rho| of the AR(1) noise; default 0.5 (0.99 ~ asv) */
	const double *noise; /* per point of y: its expected absolute error (say the standard
				error of a median), or NULL: estimated from the series */
	int noise_floor_only; /* the noise only floors eq. 14's (no criterion of known
				 noise): for a statistic, like a tail's, whose noise the
				 runs tell too roughly */
};

/* What the fit found besides the steps (optional).  */
struct steps_info {
	size_t npoints;	  /* finite points fitted (m) */
	size_t nsegments; /* k = number of steps + 1 (before threshold filtering) */
	double gamma;	  /* the chosen Potts penalty */
	double rho;	  /* the AR(1) coefficient of the residuals */
	double sigma;	  /* ML noise amplitude: mean |eps_i - rho eps_{i-1}| */
	double floor;	  /* the noise floor used: sum of w_i noise_i (not asv's part) */
	double scale;	  /* > 0: the criterion was that of known noise, of this sd */
};

/* Finds the steps of y[0..n) (weights w, or NULL for all 1; a weight <= 0
 * drops the point) and returns them in *out (caller frees with free(); NULL
 * when none) and their number in *nout.  Fewer than 2 finite points give no
 * steps.  Returns 0, or -1 after pr_error() when memory runs out.  */
int steps_detect(const double *y, const double *w, size_t n, struct step **out, size_t *nout);
int steps_detect_opts(const double *y, const double *w, size_t n, const struct steps_opts *opts,
		      struct step **out, size_t *nout, struct steps_info *info);

/* The exact L1 Potts fit for one gamma: fills seg_start[0..k) with the first
 * index of each segment (seg_start[0] = 0) and mu[0..k) with its level, and
 * returns k (>= 1 when m >= 1), or 0 with m == 0, or -1 out of memory.
 * seg_start and mu must hold m entries.  Exposed for tests and plots.  */
long steps_potts(const double *y, const double *w, size_t m, double gamma, size_t min_size,
		 size_t *seg_start, double *mu);

#endif
