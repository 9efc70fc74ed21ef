/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Step detection after asv (seeds/004 "Step detection"): the exact L1 Potts
 * fit by dynamic programming over a table of segment costs, the penalty
 * chosen by the Schwarz-type criterion with AR(1) Laplace noise.  */
#include "config.h"

#define PR_FMT "steps"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/steps.h"
#include "util/log.h"

/* Above this many points the series is merged into blocks first (each the
 * weighted median of its points, weighing their sum): the cost table holds
 * m(m+1)/2 doubles, 16 MB here.  */
#define STEPS_MAX_POINTS 2000
/* Penalties tried, geometrically from gamma_0 = the cost of one segment
 * (which leaves one segment) down to gamma_0 0.1 / m, the range asv searches
 * (asv.step_detect.solve_potts_autogamma); smaller ones only split noise.  */
#define STEPS_NGAMMA 64
/* The share of the points' noise that the floor holds: the whole of it
 * makes a step of 12 sd in 5 points a coin toss; 0.35 found 8 sd steps in
 * 57-82 % and 12 sd in 88-100 % of series of 3, 5 and 10 points, and no
 * step in 900 noise series of those lengths; 0.25 found more but flagged
 * 4 of 300 noise series of 3 points.  */
#define FLOOR_C 0.35
/* With the points' noise measured, from this many points on the criterion
 * is that of noise of known size (see known_scale).  Below, the series
 * cannot check the measured size: 3 runs' spread often understates it.  */
#define KNOWN_MIN_POINTS 5
/* The penalty of a segment in that criterion, in units of beta ln(m).  On
 * runs of +-5 % noise, 3 a commit, 1000 series each of 5 to 20 commits:
 * 1.5 beta (6 ln m) found a false step in at most 9, and +20 % in 96-100 %
 * of series of 10 or more; 1.75 beta missed in 6 of 15 variants the +27 %
 * step of 3 commits known to 1-9 % before a noisier x2 level (the medians
 * of tests/unit/t-history.c), 1.5 beta in 3, those known to 9 %.  */
#define KNOWN_PENALTY 1.5

struct wv {
	double y, w;
};

/* Two heaps keep the weighted median of a growing set: lo (a max-heap)
 * holds the smaller half whose top is the median, hi (a min-heap) the rest.  */
struct medheap {
	struct wv *lo, *hi;
	size_t nlo, nhi;
	double wlo, whi, slo, shi; /* weights and weighted sums */
};

static int before(const struct wv *a, const struct wv *b, int max)
{
	return max ? a->y > b->y : a->y < b->y;
}

static void heap_push(struct wv *h, size_t *n, struct wv v, int max)
{
	size_t i = (*n)++;

	h[i] = v;
	while (i && before(&h[i], &h[(i - 1) / 2], max)) {
		struct wv t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct wv heap_pop(struct wv *h, size_t *n, int max)
{
	struct wv top = h[0];
	size_t i = 0;

	h[0] = h[--(*n)];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < *n && before(&h[l], &h[m], max))
			m = l;
		if (r < *n && before(&h[r], &h[m], max))
			m = r;
		if (m == i)
			break;
		struct wv t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
	return top;
}

static void med_reset(struct medheap *h)
{
	h->nlo = h->nhi = 0;
	h->wlo = h->whi = h->slo = h->shi = 0;
}

static void med_add(struct medheap *h, double y, double w)
{
	struct wv v = {y, w};
	double total;

	if (!h->nlo || y <= h->lo[0].y) {
		heap_push(h->lo, &h->nlo, v, 1);
		h->wlo += w;
		h->slo += w * y;
	} else {
		heap_push(h->hi, &h->nhi, v, 0);
		h->whi += w;
		h->shi += w * y;
	}
	total = h->wlo + h->whi;
	for (;;) {
		if (2 * h->wlo < total && h->nhi) {
			v = heap_pop(h->hi, &h->nhi, 0);
			h->whi -= v.w;
			h->shi -= v.w * v.y;
			heap_push(h->lo, &h->nlo, v, 1);
			h->wlo += v.w;
			h->slo += v.w * v.y;
		} else if (h->nlo > 1 && 2 * (h->wlo - h->lo[0].w) >= total) {
			v = heap_pop(h->lo, &h->nlo, 1);
			h->wlo -= v.w;
			h->slo -= v.w * v.y;
			heap_push(h->hi, &h->nhi, v, 0);
			h->whi += v.w;
			h->shi += v.w * v.y;
		} else {
			break;
		}
	}
}

/* sum w |y - median| of the set */
static double med_cost(const struct medheap *h)
{
	double m = h->lo[0].y, c = m * h->wlo - h->slo + h->shi - m * h->whi;

	return c > 0 ? c : 0;
}

static size_t tri(size_t m, size_t l, size_t r)
{
	return l * m - (l ? l * (l - 1) / 2 : 0) + (r - l);
}

/* cost[tri(m, l, r)] = the L1 cost of segment [l, r]; NULL out of memory.  */
static double *cost_table(const double *y, const double *w, size_t m)
{
	struct medheap h;
	double *c = malloc(m * (m + 1) / 2 * sizeof(*c));
	size_t l, r;

	h.lo = malloc(m * sizeof(*h.lo));
	h.hi = malloc(m * sizeof(*h.hi));
	if (!c || !h.lo || !h.hi) {
		free(c);
		c = NULL;
		goto out;
	}
	for (l = 0; l < m; l++) {
		med_reset(&h);
		for (r = l; r < m; r++) {
			med_add(&h, y[r], w[r]);
			c[tri(m, l, r)] = med_cost(&h);
		}
	}
out:
	free(h.lo);
	free(h.hi);
	return c;
}

static int cmp_wv(const void *a, const void *b)
{
	double x = ((const struct wv *)a)->y, y = ((const struct wv *)b)->y;

	return (x > y) - (x < y);
}

/* The weighted median of y[l..r] as the heaps define it: the smallest y
 * where the cumulative weight reaches half.  tmp holds r - l + 1.  */
static double wmedian(const double *y, const double *w, size_t l, size_t r, struct wv *tmp)
{
	size_t i, n = r - l + 1;
	double total = 0, acc = 0;

	for (i = 0; i < n; i++) {
		tmp[i] = (struct wv){y[l + i], w[l + i]};
		total += w[l + i];
	}
	qsort(tmp, n, sizeof(*tmp), cmp_wv);
	for (i = 0; i < n; i++) {
		acc += tmp[i].w;
		if (2 * acc >= total)
			return tmp[i].y;
	}
	return tmp[n - 1].y;
}

/* The DP for one gamma over a cost table; fills seg_start (k entries) and
 * returns k.  F and prev hold m + 1, cand m + 1.  Candidates for the last
 * boundary are pruned as PELT does (Killick et al. 2012, K = 0): splitting a
 * segment never raises its L1 cost, so a boundary l with
 * F[l] + cost(l, r) > F[r + 1] can never be the best one again.  */
static size_t potts_dp(const double *cost, size_t m, double gamma, size_t min_size, double *F,
		       size_t *prev, size_t *cand, size_t *seg_start)
{
	size_t r, l, k, p, nc = 0, j, keep;

	if (min_size < 1)
		min_size = 1;
	F[0] = 0;
	cand[nc++] = 0;
	for (r = 1; r <= m; r++) {
		double best = INFINITY;
		size_t arg = 0;
		for (j = 0; j < nc; j++) {
			double v;
			l = cand[j];
			if (l + min_size > r || !isfinite(F[l]))
				continue;
			v = F[l] + gamma + cost[tri(m, l, r - 1)];
			if (v < best) {
				best = v;
				arg = l;
			}
		}
		if (!isfinite(best) && r == m) { /* shorter than min_size: one segment */
			best = gamma + cost[tri(m, 0, r - 1)];
			arg = 0;
		}
		F[r] = best;
		prev[r] = arg;
		for (j = 0, keep = 0; j < nc; j++) {
			l = cand[j];
			if (l + min_size <= r && isfinite(F[l]) && isfinite(best) &&
			    F[l] + cost[tri(m, l, r - 1)] > best)
				continue;
			cand[keep++] = l;
		}
		nc = keep;
		cand[nc++] = r;
	}
	/* walk back, then reverse */
	k = 0;
	for (p = m; p > 0; p = prev[p])
		seg_start[k++] = prev[p];
	for (l = 0; l < k / 2; l++) {
		size_t t = seg_start[l];
		seg_start[l] = seg_start[k - 1 - l];
		seg_start[k - 1 - l] = t;
	}
	return k;
}

long steps_potts(const double *y, const double *w, size_t m, double gamma, size_t min_size,
		 size_t *seg_start, double *mu)
{
	double *ones = NULL, *cost, *F;
	size_t *prev, *cand, k, i;
	struct wv *tmp;
	long ret = -1;

	if (!m)
		return 0;
	if (!w) {
		ones = malloc(m * sizeof(*ones));
		if (!ones)
			return pr_error("malloc: out of memory for %zu points", m);
		for (i = 0; i < m; i++)
			ones[i] = 1;
		w = ones;
	}
	cost = cost_table(y, w, m);
	F = malloc((m + 1) * sizeof(*F));
	prev = malloc((m + 1) * sizeof(*prev));
	cand = malloc((m + 1) * sizeof(*cand));
	tmp = malloc(m * sizeof(*tmp));
	if (!cost || !F || !prev || !cand || !tmp) {
		pr_error("malloc: out of memory for %zu points", m);
		goto out;
	}
	k = potts_dp(cost, m, gamma, min_size, F, prev, cand, seg_start);
	for (i = 0; i < k; i++)
		mu[i] = wmedian(y, w, seg_start[i], (i + 1 < k ? seg_start[i + 1] : m) - 1, tmp);
	ret = (long)k;
out:
	free(ones);
	free(cost);
	free(F);
	free(prev);
	free(cand);
	free(tmp);
	return ret;
}

static int cmp_ratio(const void *a, const void *b)
{
	return cmp_wv(a, b);
}

/* min over rho in [-rho_max, rho_max] of sum w_i |eps_i - rho eps_{i-1}|
 * (004 eq. 14): convex and piecewise linear in rho, its minimum is the
 * weighted median of eps_i / eps_{i-1} with weights w_i |eps_{i-1}|, clamped.  */
static double ar1_cost(const double *eps, const double *w, size_t m, double rho_max, struct wv *tmp,
		       double *rho)
{
	size_t i, nr = 0;
	double total = 0, acc = 0, r = 0, s = 0;

	for (i = 0; i < m; i++) {
		double e1 = i ? eps[i - 1] : 0;
		if (e1 != 0) {
			tmp[nr++] = (struct wv){eps[i] / e1, w[i] * fabs(e1)};
			total += w[i] * fabs(e1);
		}
	}
	if (nr) {
		qsort(tmp, nr, sizeof(*tmp), cmp_ratio);
		for (i = 0; i < nr; i++) {
			acc += tmp[i].w;
			if (2 * acc >= total) {
				r = tmp[i].y;
				break;
			}
		}
	}
	if (r > rho_max)
		r = rho_max;
	if (r < -rho_max)
		r = -rho_max;
	for (i = 0; i < m; i++)
		s += w[i] * fabs(eps[i] - r * (i ? eps[i - 1] : 0));
	*rho = r;
	return s;
}

/* The noise floor: the noise the points are known to carry (measured, the
 * sum of w_i noise_i, or -1 when not measured), and from 5 points on at
 * least what the series shows: E|e| of Gaussian noise of the scale that the
 * median absolute successive difference implies, 0.8366 med |y_i - y_i-1|
 * per point (med |e_i - e_i-1| = 0.6745 sqrt(2) sigma, E|e| = 0.7979 sigma).
 * Below 5 points one difference is too much of the median to trust: a step
 * would raise it.  tmp holds m.  */
static double noise_floor(const double *y, const double *w, size_t m, double measured,
			  struct wv *tmp)
{
	double sw = 0, est;
	size_t i;

	if (m < 5)
		return measured > 0 ? measured : 0;
	for (i = 1; i < m; i++)
		tmp[i - 1] = (struct wv){fabs(y[i] - y[i - 1]), 1};
	qsort(tmp, m - 1, sizeof(*tmp), cmp_wv);
	est = (m - 1) % 2 ? tmp[(m - 1) / 2].y : (tmp[(m - 1) / 2 - 1].y + tmp[(m - 1) / 2].y) / 2;
	for (i = 0; i < m; i++)
		sw += w[i];
	est *= 0.8366 * sw;
	return measured > est ? measured : est;
}

/* The noise scale of the criterion of known noise: the median of the
 * points' measured noise e[] (a point's own is too rough to go by when it
 * is less: 3 runs' spread is as often a third of the truth as right), or,
 * if more, what the series shows: that median times the median of
 * |y_i - y_i-1| / sqrt(s_i^2 + s_i-1^2) over 0.6745 (its value for gaussian
 * noise of sd s_i; a step moves one difference), s_i the point's own noise
 * or the median if that is more.  0 when no point's noise was measured.
 * tmp holds m.  */
static double known_scale(const double *y, const double *e, size_t m, struct wv *tmp)
{
	size_t i, k = 0;
	double med, d;

	for (i = 0; i < m; i++)
		if (isfinite(e[i]))
			tmp[k++] = (struct wv){e[i], 1};
	if (!k)
		return 0;
	qsort(tmp, k, sizeof(*tmp), cmp_wv);
	med = k % 2 ? tmp[k / 2].y : (tmp[k / 2 - 1].y + tmp[k / 2].y) / 2;
	for (i = 1; i < m; i++) {
		double a = e[i] > med ? e[i] : med, b = e[i - 1] > med ? e[i - 1] : med;
		tmp[i - 1] = (struct wv){fabs(y[i] - y[i - 1]) / sqrt(a * a + b * b), 1};
	}
	qsort(tmp, m - 1, sizeof(*tmp), cmp_wv);
	k = m - 1;
	d = (k % 2 ? tmp[k / 2].y : (tmp[k / 2 - 1].y + tmp[k / 2].y) / 2) / 0.6745;
	return d > 1 ? med * d : med;
}

int steps_detect(const double *y, const double *w, size_t n, struct step **out, size_t *nout)
{
	return steps_detect_opts(y, w, n, NULL, out, nout, NULL);
}

int steps_detect_opts(const double *y, const double *w, size_t n, const struct steps_opts *opts,
		      struct step **out, size_t *nout, struct steps_info *info)
{
	double beta = opts && opts->beta > 0 ? opts->beta : 4.0;
	double threshold = opts ? opts->threshold : 0;
	size_t min_size = opts && opts->min_size ? opts->min_size : 1;
	size_t min_points = opts && opts->min_points ? opts->min_points : 3;
	const double *noise = opts ? opts->noise : NULL;
	double known = 0; /* the noise the points carry, summed: sum w_i noise_i */
	double rho_max = opts && opts->rho_max > 0 ? opts->rho_max : 0.5;
	double *yy = NULL, *ww = NULL, *cost = NULL, *F = NULL, *mu = NULL, *eps = NULL, *ee = NULL;
	double scale = 0; /* > 0: the noise scale of the criterion of known noise */
	size_t *idx = NULL, *prev = NULL, *cand = NULL, *seg = NULL, *best_seg = NULL;
	struct wv *tmp = NULL;
	struct step *st = NULL;
	size_t m = 0, i, g, best_k = 0, nst = 0, block = 1;
	double best_ic = INFINITY, best_gamma = 0, best_rho = 0, best_s = 0, gamma_hi, floor_s;
	int ret = -1;

	*out = NULL;
	*nout = 0;
	if (info)
		memset(info, 0, sizeof(*info));
	yy = malloc((n ? n : 1) * sizeof(*yy));
	ww = malloc((n ? n : 1) * sizeof(*ww));
	idx = malloc((n ? n : 1) * sizeof(*idx));
	tmp = malloc((n ? n : 1) * sizeof(*tmp));
	ee = malloc((n ? n : 1) * sizeof(*ee));
	if (!yy || !ww || !idx || !tmp || !ee)
		goto oom;
	for (i = 0; i < n; i++) {
		double wi = w ? w[i] : 1;
		if (!isfinite(y[i]) || !(wi > 0) || !isfinite(wi))
			continue;
		yy[m] = y[i];
		ww[m] = wi;
		ee[m] = noise && isfinite(noise[i]) && noise[i] > 0 ? noise[i] : NAN;
		idx[m++] = i;
		if (noise && isfinite(noise[i]) && noise[i] > 0)
			known += wi * noise[i];
	}
	if (m > STEPS_MAX_POINTS) { /* merge into blocks of equal size */
		size_t nb = 0;
		block = (m + STEPS_MAX_POINTS - 1) / STEPS_MAX_POINTS;
		for (i = 0; i < m; i += block, nb++) {
			size_t e = i + block < m ? i + block : m, j;
			double sw = 0;
			for (j = i; j < e; j++)
				sw += ww[j];
			yy[nb] = wmedian(yy, ww, i, e - 1, tmp);
			ww[nb] = sw;
			idx[nb] = idx[i];
		}
		m = nb;
	}
	if (info)
		info->npoints = m;
	if (m < 2 || m < min_points) {
		ret = 0;
		if (info)
			info->nsegments = m;
		goto out;
	}
	cost = cost_table(yy, ww, m);
	F = malloc((m + 1) * sizeof(*F));
	prev = malloc((m + 1) * sizeof(*prev));
	cand = malloc((m + 1) * sizeof(*cand));
	seg = malloc(m * sizeof(*seg));
	best_seg = malloc(m * sizeof(*best_seg));
	mu = malloc(m * sizeof(*mu));
	eps = malloc(m * sizeof(*eps));
	if (!cost || !F || !prev || !cand || !seg || !best_seg || !mu || !eps)
		goto oom;
	if (noise && !opts->noise_floor_only && block == 1 && m >= KNOWN_MIN_POINTS)
		scale = known_scale(yy, ee, m, tmp);
	known = FLOOR_C * noise_floor(yy, ww, m, noise ? known : -1, tmp);
	/* the floor flattens the criterion; a long series needs it less: from
	 * 10 points on it shrinks as (10/m)^3 towards asv's own */
	if (m > 10)
		known *= 1000.0 / ((double)m * (double)m * (double)m);
	if (info)
		info->floor = known;
	gamma_hi = cost[tri(m, 0, m - 1)];
	if (!(gamma_hi > 0)) { /* a constant series */
		best_k = 1;
		best_seg[0] = 0;
	}
	for (g = 0; gamma_hi > 0 && g < STEPS_NGAMMA; g++) {
		double gamma =
		    gamma_hi * 1.0000001 * pow(0.1 / (double)m, (double)g / (STEPS_NGAMMA - 1));
		size_t k = potts_dp(cost, m, gamma, min_size, F, prev, cand, seg), r, j;
		double s, rho, ic;
		for (r = 0; r < k; r++) {
			size_t e = r + 1 < k ? seg[r + 1] : m;
			mu[r] = wmedian(yy, ww, seg[r], e - 1, tmp);
			for (j = seg[r]; j < e; j++)
				eps[j] = yy[j] - mu[r];
		}
		s = ar1_cost(eps, ww, m, rho_max, tmp, &rho);
		/* asv's measurement noise floor, which keeps ln finite when the
		 * segments fit exactly: a tenth of the smallest change of level,
		 * or with at most two levels a thousandth of the smallest one */
		floor_s = INFINITY;
		for (r = 0; r < k; r++) {
			double d = k > 2 ? (r + 1 < k ? 0.1 * fabs(mu[r + 1] - mu[r]) : INFINITY)
					 : 0.001 * fabs(mu[r]);
			floor_s = d < floor_s ? d : floor_s;
		}
		floor_s = floor_s > known ? floor_s : known;
		floor_s = floor_s > 1e-300 ? floor_s : 1e-300;
		ic = beta * log((double)m) / (double)m * (double)k + log(s + floor_s);
		if (scale > 0) { /* -ln L of Laplace noise of sd scale (or the point's
				  * own noise where that is more), plus the penalty */
			double z = 0;
			for (j = 0; j < m; j++)
				z += fabs(eps[j]) / (ee[j] > scale ? ee[j] : scale);
			ic = sqrt(2.0) * z + KNOWN_PENALTY * beta * (double)k * log((double)m);
		}
		if (ic < best_ic - 1e-12) {
			best_ic = ic;
			best_k = k;
			best_gamma = gamma;
			best_rho = rho;
			best_s = s;
			memcpy(best_seg, seg, k * sizeof(*seg));
		}
	}
	if (info) {
		info->nsegments = best_k;
		info->gamma = best_gamma;
		info->rho = best_rho;
		info->sigma = best_s / (double)m;
		info->scale = scale;
	}
	for (i = 0; i < best_k; i++)
		mu[i] =
		    wmedian(yy, ww, best_seg[i], (i + 1 < best_k ? best_seg[i + 1] : m) - 1, tmp);
	if (best_k > 1) {
		st = calloc(best_k - 1, sizeof(*st));
		if (!st)
			goto oom;
	}
	for (i = 1; i < best_k; i++) {
		struct step s;
		s.start = idx[best_seg[i]];
		s.end = i + 1 < best_k ? idx[best_seg[i + 1]] : n;
		s.before = mu[i - 1];
		s.after = mu[i];
		if (s.before != 0)
			s.rel = (s.after - s.before) / fabs(s.before);
		else
			s.rel = s.after > 0 ? INFINITY : s.after < 0 ? -INFINITY : 0;
		if (fabs(s.rel) < threshold)
			continue;
		st[nst++] = s;
	}
	if (!nst) {
		free(st);
		st = NULL;
	}
	*out = st;
	*nout = nst;
	ret = 0;
	goto out;
oom:
	pr_error("malloc: out of memory for step detection over %zu points", n);
out:
	free(yy);
	free(ww);
	free(idx);
	free(tmp);
	free(cost);
	free(F);
	free(prev);
	free(cand);
	free(seg);
	free(best_seg);
	free(mu);
	free(eps);
	free(ee);
	return ret;
}
