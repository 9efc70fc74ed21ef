/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef PERUN_ANALYSIS_CHECK_JOB_H
#define PERUN_ANALYSIS_CHECK_JOB_H

#include "analysis/check.h"

/* Sorts a job's findings (degradations first, then optimizations,
 * undecided, new and removed; the largest change first), names the callee
 * whose self degradation explains each inclusive one (f->cause), and counts
 * the verdicts into the job.  */
void check_job_finish(struct check_job *job);

#endif
