/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The processes of a profile (profile/processes.h).  */
#include "config.h"

#define PR_FMT "perun"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "profile/processes.h"
#include "profile/profile.h"
#include "util/log.h"

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Where pid was forked in trace.children (its place, and its parent), or
 * -1 when it was not.  */
static long child_place(struct json_object *kids, int64_t pid, int64_t *parent)
{
	size_t i;

	for (i = 0; kids && i < json_object_array_length(kids); i++) {
		struct json_object *k = json_object_array_get_idx(kids, i);
		if (get(k, "pid") && json_object_get_int64(get(k, "pid")) == pid) {
			*parent = get(k, "parent") ? json_object_get_int64(get(k, "parent")) : -1;
			return (long)i;
		}
	}
	*parent = -1;
	return -1;
}

struct placed {
	struct profile_process proc;
	long place;
};

static int cmp_placed(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->place != y->place)
		return x->place < y->place ? -1 : 1;
	return cmp_i64(&x->proc.pid, &y->proc.pid);
}

int profile_processes(const struct profile *p, const char *what, struct profile_process **out,
		      size_t *n)
{
	struct json_object *trace = get(p->root, "trace"), *procs = get(trace, "threads_by_process");
	struct json_object *kids = get(trace, "children"), *execs = get(trace, "execs");
	struct placed *v;
	size_t k = 0, i, j;

	*out = NULL;
	*n = 0;
	if (!procs)
		return 0;
	if (!json_object_is_type(procs, json_type_object))
		return pr_error("%s: trace.threads_by_process is not an object", what);
	if (kids && !json_object_is_type(kids, json_type_array))
		kids = NULL;
	if (execs && !json_object_is_type(execs, json_type_array))
		execs = NULL;
	v = xcalloc((size_t)json_object_object_length(procs) + 1, sizeof(*v));
	json_object_object_foreach(procs, key, arr) {
		struct profile_process *pr = &v[k].proc;
		char *end;
		long long pid;
		errno = 0;
		pid = strtoll(key, &end, 10);
		if (errno || end == key || *end || pid <= 0 ||
		    !json_object_is_type(arr, json_type_array)) {
			for (i = 0; i < k; i++)
				free(v[i].proc.threads);
			free(v);
			return pr_error("%s: trace.threads_by_process.%s is not a process id with "
					"a list of threads", what, key);
		}
		pr->pid = pid;
		pr->nthreads = json_object_array_length(arr);
		pr->threads = xcalloc(pr->nthreads ? pr->nthreads : 1, sizeof(*pr->threads));
		for (j = 0; j < pr->nthreads; j++)
			pr->threads[j] = json_object_get_int64(json_object_array_get_idx(arr, j));
		qsort(pr->threads, pr->nthreads, sizeof(*pr->threads), cmp_i64);
		v[k].place = child_place(kids, pr->pid, &pr->parent);
		for (j = 0; execs && j < json_object_array_length(execs); j++) {
			struct json_object *e = json_object_array_get_idx(execs, j);
			if (get(e, "pid") && json_object_get_int64(get(e, "pid")) == pr->pid)
				pr->exec = 1;
		}
		k++;
	}
	qsort(v, k, sizeof(*v), cmp_placed);
	*out = xcalloc(k ? k : 1, sizeof(**out));
	for (i = 0; i < k; i++)
		(*out)[i] = v[i].proc;
	*n = k;
	free(v);
	return 0;
}

void profile_processes_free(struct profile_process *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i].threads);
	free(v);
}

void profile_view_process(struct profile *p, const struct profile_process *proc)
{
	p->view = proc;
}

int profile_shows_thread(const struct profile *p, int64_t thread)
{
	return !p->view || (p->view->nthreads &&
			    bsearch(&thread, p->view->threads, p->view->nthreads,
				    sizeof(*p->view->threads), cmp_i64));
}
