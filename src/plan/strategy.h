/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Strategies turn a target and the user's rules into a probe plan.  */
#ifndef PERUN_STRATEGY_H
#define PERUN_STRATEGY_H

#include "binary/target.h"
#include "plan/plan.h"

/* Sampling of the *_sampled strategies when -g does not say otherwise.  */
#define STRATEGY_DEFAULT_SAMPLING 20

struct strategy_opts {
	const char *strategy;	/* userspace, all, u_sampled, a_sampled, custom */
	char **funcs;		/* -f [lib#]name[#sampling] */
	size_t nfuncs;
	char **usdts;		/* -u [lib#]name[#sampling] */
	size_t nusdts;
	char **dyns;		/* -d [lib#]file:line[#sampling] */
	size_t ndyns;
	unsigned global_sampling;	/* -g, 0 when not given */
	int with_usdt;		/* 1 also probe the target's USDT notes */
	const char *include;	/* PCRE2 on function names, or NULL */
	const char *exclude;
	const char *cache_dir;	/* for per-build-id target analysis, or NULL */
	int entry_only;		/* 1: entry probes only, everywhere (--entry-only) */
	/* 1: the runtime's return probes survive unwinding (perun's loader
	 * probes return instructions where unwinding could meet them): a
	 * target that throws C++ exceptions or longjmps needs no entry-only */
	int returns_exact;
};

int strategy_valid(const char *name);
int strategy_build(struct plan *plan, const struct target *t, const struct strategy_opts *o);
/* What strategy_build does for a target whose return probes break (C++
 * exceptions, longjmp, Go): --entry-only everywhere, the userspace strategy
 * and Go by themselves, a warning otherwise.  For a plan built with
 * returns_exact that will not run on perun's loader after all.  */
void strategy_entry_only(struct plan *plan, const struct target *t, const struct strategy_opts *o);
/* Splits "[lib#]name[#sampling]"; returns -1 on a malformed rule.  */
int strategy_split_rule(const char *rule, char **lib, char **name, unsigned *sampling);

#endif
