/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A job read from a profile's header, collector_info and postprocessors
 * regions, and compared.  */
#include "config.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "profile/job.h"
#include "profile/profile.h"

static const char *str_or_empty(const struct profile *p, const char *path)
{
	const char *v = profile_str(p, path);

	return v ? v : "";
}

void job_add_postprocessor(struct job *j, const char *name)
{
	size_t len = strlen(j->postprocessors), n = sizeof(j->postprocessors);

	if (len + 1 < n)
		snprintf(j->postprocessors + len, n - len, "%s,", name);
}

void job_from_profile(const struct profile *p, struct job *j)
{
	struct json_object *pp = NULL;
	size_t i;

	j->collector = str_or_empty(p, "collector_info.name");
	j->cmd = str_or_empty(p, "header.cmd");
	j->args = str_or_empty(p, "header.args");
	j->workload = str_or_empty(p, "header.workload");
	j->postprocessors[0] = '\0';
	if (!p->root || !json_object_object_get_ex(p->root, "postprocessors", &pp) ||
	    !json_object_is_type(pp, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(pp); i++) {
		struct json_object *name = NULL;
		json_object_object_get_ex(json_object_array_get_idx(pp, i), "name", &name);
		job_add_postprocessor(j, name ? json_object_get_string(name) : "?");
	}
}

int job_same(const struct job *a, const struct job *b)
{
	return !strcmp(a->postprocessors, b->postprocessors) &&
	       !strcmp(a->collector, b->collector) && !strcmp(a->cmd, b->cmd) &&
	       !strcmp(a->args, b->args) && !strcmp(a->workload, b->workload);
}

int job_same_profiles(const struct profile *a, const struct profile *b)
{
	struct job ja, jb;

	job_from_profile(a, &ja);
	job_from_profile(b, &jb);
	return job_same(&ja, &jb);
}
