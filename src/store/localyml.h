/* SPDX-License-Identifier: GPL-3.0-or-later */
/* .perun/local.yml, written and read through libyaml.  */
#ifndef PERUN_LOCALYML_H
#define PERUN_LOCALYML_H

int config_write_local(const char *path, const char *vcs_type, const char *vcs_url);
/* Reads vcs.type and vcs.url; caller frees both.  */
int config_read_vcs(const char *path, char **type, char **url);

/* Reads regressions_thresholds (asv's key): a mapping of regular
 * expressions to relative thresholds, or one number for every function.
 * Fills regex[0..n) and threshold[0..n) (caller frees each regex and both
 * arrays); n 0 when the file or the key is missing.  -1 after pr_error()
 * naming the file and line.  */
int config_read_thresholds(const char *path, char ***regex, double **threshold, size_t *n);

#include <stddef.h>

#include "util/strv.h"

/* One collector or postprocessor of the job matrix: its name and params, a
 * mapping (or Perun's list of one-key mappings) flattened into key/value
 * pairs in file order; a list value gives one pair per item.  */
struct job_param {
	char *key, *value;
};
struct job_unit {
	char *name;
	struct job_param *params;
	size_t nparams;
};

/* Perun's job matrix in local.yml: every cmd with every args and every
 * workload (an empty list counts as one empty entry), each collected by
 * every collector, then postprocessed by the postprocessors in order;
 * execute.pre_run runs before, and perun's own keys say how many times each
 * job is collected (repeat), whether the revisions' runs go in rounds
 * (interleave_rounds, as asv's --interleave-rounds), how often a collect the
 * runtime broke is tried again (retries), and the name this machine's
 * profiles carry (machine, as asv machine's --machine).  */
struct job_matrix {
	struct strv cmds, args, workloads, pre_run;
	struct job_unit *collectors, *postprocessors;
	size_t ncollectors, npostprocessors;
	unsigned repeat;	/* 0 when the file does not say */
	int interleave_rounds;	/* 1 yes, -1 no, 0 when the file does not say */
	unsigned retries;	/* when has_retries */
	int has_retries;
	char *machine;		/* the machine's name for comparisons, or NULL */
};

/* Reads the job matrix of the local.yml at path into m (zeroed first).  0,
 * or -1 after naming the key and what it must be.  */
int config_read_jobs(const char *path, struct job_matrix *m);
void job_matrix_release(struct job_matrix *m);
/* Only the machine key of the local.yml at path (what perun collect needs):
 * 1 with the name in *name (caller frees), 0 when the file or the key is
 * missing, -1 when bad (reported).  */
int config_read_machine(const char *path, char **name);
/* Whether s is a machine name: 1 to 64 letters, digits, '.', '_', '-'.  */
int config_machine_name_ok(const char *s);

#endif
