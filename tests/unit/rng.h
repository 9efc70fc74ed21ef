/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A seeded generator for the analysis unit tests: splitmix64, with
 * Gaussian (Box-Muller) and Laplace draws.  */
#ifndef PERUN_TEST_RNG_H
#define PERUN_TEST_RNG_H

#include <math.h>
#include <stdint.h>

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static double rng_uniform(void)
{
	return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_gauss(void) __attribute__((unused));
static double rng_gauss(void)
{
	return sqrt(-2 * log(rng_uniform())) * cos(2 * M_PI * rng_uniform());
}

static double rng_laplace(void) __attribute__((unused));
static double rng_laplace(void)
{
	double u = rng_uniform() - 0.5;

	return u < 0 ? log(1 + 2 * u) : -log(1 - 2 * u);
}

#endif
