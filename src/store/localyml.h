/* .perun/local.yml, written and read through libyaml.  */
#ifndef PERUN_LOCALYML_H
#define PERUN_LOCALYML_H

int config_write_local(const char *path, const char *vcs_type, const char *vcs_url);
/* Reads vcs.type and vcs.url; caller frees both.  */
int config_read_vcs(const char *path, char **type, char **url);

#endif
