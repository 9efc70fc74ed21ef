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

#endif
