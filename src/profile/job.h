/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A job: what makes profiles runs of one series, the samples check,
 * bisect and history compare (Perun's jobs: every command x arguments x
 * workload x collector, then its postprocessors in order).  Where the runs
 * ran is not part of it (machine_same(), profile/machine.h), nor are the
 * collector's options.  */
#ifndef PERUN_PROFILE_JOB_H
#define PERUN_PROFILE_JOB_H

struct profile;

struct job {
	/* collector_info.name, header.cmd, header.args, header.workload: ""
	 * when absent; job_from_profile()'s point into the profile */
	const char *collector, *cmd, *args, *workload;
	/* the postprocessors' names in order, each followed by ',' ("" for
	 * none; cut at the buffer's end) */
	char postprocessors[256];
};

/* The job of p; its strings point into p, valid while p is.  */
void job_from_profile(const struct profile *p, struct job *j);
/* Appends a postprocessor's name (as a postprocessed profile carries it)
 * to j's.  */
void job_add_postprocessor(struct job *j, const char *name);
/* Whether a and b are the same job: every field equal.  */
int job_same(const struct job *a, const struct job *b);
/* Whether the profiles a and b are runs of the same job.  */
int job_same_profiles(const struct profile *a, const struct profile *b);

#endif
