/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A job's findings once compared, whichever method compared them: sorted
 * (degradations first, the largest change first), an inclusive degradation
 * named by the self degradation that explains it, and counted.  */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check-job.h"
#include "util/strbuf.h"

static int rank_of(enum check_verdict v)
{
	switch (v) {
	case CHECK_DEGRADATION:
		return 0;
	case CHECK_OPTIMIZATION:
		return 1;
	case CHECK_UNDECIDED:
		return 2;
	case CHECK_NEW:
	case CHECK_REMOVED:
		return 3;
	default:
		return 4;
	}
}

static int cmp_finding(const void *a, const void *b)
{
	const struct check_finding *x = a, *y = b;
	double sx, sy;
	int c;

	if (rank_of(x->verdict) != rank_of(y->verdict))
		return rank_of(x->verdict) - rank_of(y->verdict);
	sx = isfinite(x->ratio) && x->ratio > 0 ? fabs(log(x->ratio)) : 0;
	sy = isfinite(y->ratio) && y->ratio > 0 ? fabs(log(y->ratio)) : 0;
	if (sx != sy)
		return (sx < sy) - (sx > sy);
	c = strcmp(x->context, y->context);
	return c ? c : (int)x->metric - (int)y->metric;
}

/* An inclusive degradation of context c is explained by the self
 * degradation of c or a callee of c: name the largest.  */
static void find_causes(struct check_job *job)
{
	size_t i, j;

	for (i = 0; i < job->nf; i++) {
		struct check_finding *f = &job->f[i];
		size_t len = strlen(f->context), best = SIZE_MAX;
		if (f->metric != CHECK_INCLUSIVE || f->verdict != CHECK_DEGRADATION)
			continue;
		for (j = 0; j < job->nf; j++) {
			const struct check_finding *g = &job->f[j];
			if (g->metric != CHECK_SELF || g->verdict != CHECK_DEGRADATION ||
			    strncmp(g->context, f->context, len) ||
			    (g->context[len] != '\0' && g->context[len] != ';'))
				continue;
			if (best == SIZE_MAX || g->ratio > job->f[best].ratio)
				best = j;
		}
		if (best != SIZE_MAX)
			f->cause = xstrdup(job->f[best].context);
	}
}

void check_job_finish(struct check_job *job)
{
	size_t k;

	if (job->nf)
		qsort(job->f, job->nf, sizeof(*job->f), cmp_finding);
	find_causes(job);
	job->degradations = job->optimizations = job->undecided = 0;
	for (k = 0; k < job->nf; k++) {
		job->degradations += job->f[k].verdict == CHECK_DEGRADATION;
		job->optimizations += job->f[k].verdict == CHECK_OPTIMIZATION;
		job->undecided += job->f[k].verdict == CHECK_UNDECIDED;
	}
}
