/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The processes of a profile collected with --follow: which threads each
 * holds (trace.threads_by_process), which forked which (trace.children),
 * which called execve (trace.execs); and a view of a profile restricted to
 * some threads, which every reader of profile.h then sees alone.  */
#ifndef PERUN_PROFILE_PROCESSES_H
#define PERUN_PROFILE_PROCESSES_H

#include <stddef.h>
#include <stdint.h>

struct profile;

struct profile_process {
	int64_t pid;
	int64_t parent;		/* the process that forked it, -1 for the traced one */
	int exec;		/* it called execve while traced */
	int64_t *threads;	/* sorted */
	size_t nthreads;
};

/* The processes p records, the traced ones first, then the children in
 * the order they were forked.  0 with *n 0 when p records none (collected
 * before processes were recorded, or not by perun's loader); -1 when
 * trace.threads_by_process is malformed (reported, naming what).  */
int profile_processes(const struct profile *p, const char *what, struct profile_process **out,
		      size_t *n);
void profile_processes_free(struct profile_process *v, size_t n);

/* From now on the readers of p (summary, folded stacks) see only the calls
 * of proc's threads; NULL: all calls again.  proc must outlive the view.  */
void profile_view_process(struct profile *p, const struct profile_process *proc);
/* Whether the view of p shows the calls of thread.  */
int profile_shows_thread(const struct profile *p, int64_t thread);

#endif
