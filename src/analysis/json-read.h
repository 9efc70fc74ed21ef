/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading a profile's JSON in the analyses (check, samples, the model
 * checks): a member of an object, and a number, each NULL or 0 for
 * anything else, so that a reader checks once.  */
#ifndef PERUN_ANALYSIS_JSON_READ_H
#define PERUN_ANALYSIS_JSON_READ_H

#include <json-c/json.h>

/* o's member k, or NULL when o is no object or has no k.  */
static inline struct json_object *jr_get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* 1 and *out when v is an int or a double, else 0.  */
static inline int jr_number(struct json_object *v, double *out)
{
	if (!v ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return 0;
	*out = json_object_get_double(v);
	return 1;
}

#endif
