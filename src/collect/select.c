/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One module, many selections (--one-module): the module holds a probe for
 * every function of the binary (the userspace strategy), each gated by
 * __perun_sel[id]; what this collect traces (its -f set, its strategy, what
 * the pre-optimize methods left) is only the selection, a small per-run
 * file the driver writes into the runtime's map before the command starts.
 * So the script, and the module cache key, stay the same when the selection
 * changes: a new -f set, or the next iteration of a pipeline, runs without
 * stap.  The bpf runtime's selection is a map the driver writes with bpf
 * syscalls; the kernel runtime's module parameters hold no arrays, so its
 * module reads the ids from a procfs file the driver writes one id per
 * write (/proc/systemtap/MODULE/perun_sel).  Whole probes only (per-probe
 * sampling is script code).  */
#include "config.h"

#define PR_FMT "perun collect"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/session.h"
#include "plan/strategy.h"
#include "util/log.h"
#include "util/strbuf.h"

struct by_addr {
	uint64_t addr;
	size_t i;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct by_addr *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The map size of the selection: unlike the other maps of the script (the
 * recorder's, 16384, dynamic probing's), so the driver finds it by size.  */
static size_t select_slots(const struct session *s, size_t n)
{
	size_t slots = (n + 1 > 16384 ? n + 1 : 16384) + 4099;

	while (slots == collect_recorder_slots(s->o->buffer_size))
		slots++;
	return slots;
}

int collect_select(struct session *s)
{
	struct collect_opts *o = s->o;
	struct strategy_opts so;
	struct plan all;
	struct by_addr *ix;
	struct strbuf sel = STRBUF_INIT;
	size_t i, nsel = 0;
	FILE *f;
	int ret = -1;

	if (!o->one_module)
		return 0;
	if (o->aggregate)
		return pr_error("--one-module gates per-call records: not with --aggregate");
	for (i = 0; i < s->plan.n; i++) {
		const struct probe *pr = &s->plan.probes[i];
		if (pr->sampling > 1)
			return pr_error("--one-module selects whole probes: %s is sampled (1 in %u), "
					"which is code in the script; collect it without "
					"--one-module",
					pr->name, pr->sampling);
		if (pr->kind != PROBE_FUNC || strcmp(pr->binary, s->target.path))
			return pr_error("--one-module holds the functions of %s only: %s is not "
					"one; collect it without --one-module",
					s->target.path, pr->name);
	}
	memset(&so, 0, sizeof(so));
	so.strategy = "userspace";
	so.cache_dir = o->cache_off ? NULL : s->cache_dir;
	so.entry_only = o->entry_only;
	plan_init(&all);
	if (strategy_build(&all, &s->target, &so) < 0) {
		plan_release(&all);
		return -1;
	}
	ix = xcalloc(all.n + 1, sizeof(*ix));
	for (i = 0; i < all.n; i++) {
		ix[i].addr = all.probes[i].addr;
		ix[i].i = i;
	}
	qsort(ix, all.n, sizeof(*ix), cmp_addr);
	strbuf_addf(&sel, "slots %zu\n", select_slots(s, all.n));
	for (i = 0; i < s->plan.n; i++) {
		const struct probe *pr = &s->plan.probes[i];
		struct by_addr key = { pr->addr, 0 }, *hit;
		hit = all.n ? bsearch(&key, ix, all.n, sizeof(*ix), cmp_addr) : NULL;
		if (!hit) {
			pr_error("--one-module: %s is not among the functions the module probes "
				 "(a helper?); collect it without --one-module",
				 pr->name);
			goto out;
		}
		all.probes[hit->i].flags |= pr->flags & (PROBE_F_NAMED | PROBE_F_ALTERNATIVE);
		strbuf_addf(&sel, "%d\n", all.probes[hit->i].id);
		nsel++;
	}
	if (s->tmpdir) {	/* --script-only and --compile-only run nothing */
		s->selection_path = xstrfmt("%s/selection", s->tmpdir);
		f = fopen(s->selection_path, "w");
		if (!f || fputs(sel.buf, f) < 0 || fclose(f) != 0) {
			pr_error_errno("cannot write %s", s->selection_path);
			goto out;
		}
	}
	s->sopt.select_slots = select_slots(s, all.n);
	s->sopt.select_procfs = s->runtime == RUNTIME_KERNEL;
	plan_release(&s->plan);
	s->plan = all;
	plan_init(&all);
	collect_wd(&s->wd, "one module: %zu of %zu probes selected", nsel, s->plan.n);
	ret = 0;
out:
	plan_release(&all);
	free(ix);
	strbuf_release(&sel);
	return ret;
}
