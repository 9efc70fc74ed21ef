/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "strategy"
#define PCRE2_CODE_UNIT_WIDTH 8

#include <ctype.h>
#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/strategy.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

static const char *const strategies[] = { "userspace", "all", "u_sampled", "a_sampled",
					  "custom", NULL };

int strategy_valid(const char *name)
{
	size_t i;

	for (i = 0; strategies[i]; i++)
		if (!strcmp(name, strategies[i]))
			return 1;
	return 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int strategy_split_rule(const char *rule, char **lib, char **name, unsigned *sampling)
{
	char *copy = xstrdup(rule), *parts[3] = { NULL, NULL, NULL }, *p = copy;
	int n = 0;

	*lib = *name = NULL;
	*sampling = 0;
	while (p && n < 3) {
		char *hash = strchr(p, '#');
		parts[n++] = p;
		if (hash)
			*hash++ = '\0';
		p = hash;
	}
	if (p || !*parts[0])
		goto bad;
	if (n == 2 && all_digits(parts[1])) {
		*name = xstrdup(parts[0]);
		*sampling = (unsigned)strtoul(parts[1], NULL, 10);
	} else if (n == 2) {
		*lib = xstrdup(parts[0]);
		*name = xstrdup(parts[1]);
	} else if (n == 3) {
		if (!all_digits(parts[2]))
			goto bad;
		*lib = xstrdup(parts[0]);
		*name = xstrdup(parts[1]);
		*sampling = (unsigned)strtoul(parts[2], NULL, 10);
	} else {
		*name = xstrdup(parts[0]);
	}
	if (!**name || (n >= 2 && *lib && !**lib))
		goto bad;
	free(copy);
	return 0;
bad:
	free(copy);
	free(*lib);
	free(*name);
	*lib = *name = NULL;
	return pr_error("malformed rule '%s': expected [lib#]name[#sampling]", rule);
}

static pcre2_code *compile_re(const char *re, const char *what)
{
	int err;
	PCRE2_SIZE off;
	pcre2_code *code;

	if (!re)
		return NULL;
	code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &err, &off, NULL);
	if (!code) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof(msg));
		pr_error("%s regex '%s' at offset %zu: %s", what, re, (size_t)off, (char *)msg);
	}
	return code;
}

static int re_match(pcre2_code *code, pcre2_match_data *md, const char *s)
{
	return pcre2_match(code, (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL) >= 0;
}

/* Probes f of t.  A function without DWARF is placed by symbol name; when
 * other functions share that name (statics of other files), stap places
 * every one of them for it, so they share one probe rather than each
 * counting the others' calls.  */
static struct probe *add_func(struct plan *plan, const struct target *t, const struct func *f,
			      unsigned sampling)
{
	struct probe *pr;

	if (!f->dwarf && f->dup_name) {
		size_t i;
		for (i = 0; i < plan->n; i++) {
			pr = &plan->probes[i];
			if ((pr->flags & PROBE_F_SYMBOL) && pr->sym && !strcmp(pr->sym, f->name) &&
			    !strcmp(pr->binary, t->path))
				return pr;
		}
	}
	pr = plan_add(plan, PROBE_FUNC, t->path, f->display);

	pr->addr = f->addr;
	pr->foff = target_file_offset(t, f->addr);
	pr->size = f->size;
	pr->sampling = sampling ? sampling : 1;
	/* stap finds no Go function by address (Go writes no .debug_aranges) */
	if (!f->dwarf || t->go) {
		pr->flags |= PROBE_F_SYMBOL;
		pr->sym = xstrdup(f->name);
	}
	if (f->file) {
		pr->file = xstrdup(f->file);
		pr->line = f->line;
	}
	return pr;
}

/* A USDT name pairs with NAME_end when it is NAME, NAME_begin, NAME_start or NAME_entry.  */
static char *end_mark_for(const struct target *t, const char *provider, const char *name)
{
	static const char *const suffixes[] = { "_begin", "_start", "_entry", "" };
	size_t i, j, n = strlen(name);

	for (i = 0; i < 4; i++) {
		size_t sl = strlen(suffixes[i]);
		char *base, *end;
		if (n <= sl || strcmp(name + n - sl, suffixes[i]))
			continue;
		base = xstrdup(name);
		base[n - sl] = '\0';
		end = xstrfmt("%s_end", base);
		free(base);
		for (j = 0; j < t->nusdts; j++)
			if (!strcmp(t->usdts[j].name, end) && !strcmp(t->usdts[j].provider, provider))
				return end;
		free(end);
	}
	return NULL;
}

static int is_end_mark(const struct target *t, const char *provider, const char *name)
{
	size_t n = strlen(name), j;

	if (n <= 4 || strcmp(name + n - 4, "_end"))
		return 0;
	for (j = 0; j < t->nusdts; j++) {
		char *e = end_mark_for(t, provider, t->usdts[j].name);
		int match = e && !strcmp(e, name) && strcmp(t->usdts[j].provider, provider) == 0;
		free(e);
		if (match)
			return 1;
	}
	return 0;
}

static int has_usdt(const struct plan *plan, const char *binary, const char *mark)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		if (plan->probes[i].mark && !strcmp(plan->probes[i].mark, mark) &&
		    !strcmp(plan->probes[i].binary, binary))
			return 1;
	return 0;
}

static int add_usdts(struct plan *plan, const struct target *t, const char *only, unsigned sampling)
{
	size_t i;
	int added = 0;

	for (i = 0; i < t->nusdts; i++) {
		const struct usdt *u = &t->usdts[i];
		char *end, *name;
		struct probe *pr;

		if (only && strcmp(u->name, only))
			continue;
		if (is_end_mark(t, u->provider, u->name) || has_usdt(plan, t->path, u->name))
			continue;
		end = end_mark_for(t, u->provider, u->name);
		name = xstrfmt("%s:%s", u->provider, u->name);
		pr = plan_add(plan, end ? PROBE_USDT_PAIR : PROBE_USDT_POINT, t->path, name);
		pr->mark = xstrdup(u->name);
		pr->mark_end = end;
		pr->addr = u->pc;
		pr->foff = target_file_offset(t, u->pc);
		if (only)
			pr->flags |= PROBE_F_NAMED;
		pr->sampling = sampling ? sampling : 1;
		free(name);
		added++;
	}
	return added;
}

/* The target a rule names: t itself, or the library lib, loaded into *libt.  */
static const struct target *rule_target(const struct target *t, const char *lib,
					const char *rule_name, const char *cache_dir,
					struct target *libt)
{
	char *path;
	int r;

	if (!lib)
		return t;
	path = target_find_library(t->path, lib);
	if (!path) {
		char *needed = target_needed(t->path);
		pr_error("library '%s' not found for %s (%s%s): give its path as PATH#%s, or, "
			 "when the program has the library built in, name the function alone",
			 lib, t->path, needed ? "it loads " : "it loads no shared library",
			 needed ? needed : "", rule_name);
		free(needed);
		return NULL;
	}
	r = target_load(libt, path, cache_dir);
	free(path);
	return r < 0 ? NULL : libt;
}

/* Most functions one -f rule may name (overloads, same-named statics).  */
#define MAX_RULE_MATCHES 256

/* Probes f for a -f rule, or raises its sampling when already planned;
 * returns its probe.  */
static struct probe *add_rule_func(struct plan *plan, const struct target *t,
				   const struct func *f, const char *display, unsigned sampling,
				   const struct strategy_opts *o)
{
	struct probe *pr;
	size_t j;

	for (j = 0; j < plan->n; j++) {
		pr = &plan->probes[j];
		if (pr->kind != PROBE_FUNC || pr->addr != f->addr || strcmp(pr->binary, t->path))
			continue;
		pr->flags |= PROBE_F_NAMED;
		if (sampling)	/* an explicit rule overrides the strategy's sampling */
			pr->sampling = sampling;
		return pr;
	}
	pr = add_func(plan, t, f, sampling ? sampling : o->global_sampling);
	pr->flags |= PROBE_F_NAMED;
	if (display && strcmp(display, pr->name)) {
		free(pr->name);
		pr->name = xstrdup(display);
	}
	return pr;
}

/* An IFUNC named by -f: probe what it resolves to, named as the user named
 * it when there is one implementation, by their own names otherwise.  */
static int add_rule_ifunc(struct plan *plan, const struct target *t, const struct func *f,
			  unsigned sampling, const struct strategy_opts *o)
{
	uint64_t addrs[32];
	size_t n = target_ifunc_targets(t, f, addrs, 32), k;

	if (!n)
		return pr_error("function '%s' in %s is an IFUNC whose implementation perun "
				"cannot find: name the implementation (nm %s)",
				f->display, t->path, t->path);
	for (k = 0; k < n; k++) {
		const struct func *impl = target_func_at(t, addrs[k]);
		struct func synth;
		struct probe *pr;
		if (!impl) {
			/* no symbol (a stripped library): DWARF from its -dbg
			 * package can still place it by address */
			memset(&synth, 0, sizeof(synth));
			synth.name = f->name;
			synth.display = f->display;
			synth.addr = addrs[k];
			synth.dwarf = 1;
			impl = &synth;
		}
		pr = add_rule_func(plan, t, impl, n == 1 ? f->display : NULL, sampling, o);
		if (n > 1)
			pr->flags |= PROBE_F_ALTERNATIVE;
	}
	pr_info("perun: %s is an IFUNC: probing %s%s", f->display,
			n == 1 ? "the implementation this CPU uses" : "its implementations",
			n == 1 ? "" : " (the resolver picks one per CPU)");
	return 0;
}

static int add_rule_funcs(struct plan *plan, const struct target *t, const struct strategy_opts *o)
{
	size_t i, k;

	for (i = 0; i < o->nfuncs; i++) {
		char *lib, *name;
		unsigned sampling;
		const struct func *found[MAX_RULE_MATCHES];
		const struct target *tt;
		struct target libt;
		size_t n = 0;
		int ret = 0;

		if (strategy_split_rule(o->funcs[i], &lib, &name, &sampling) < 0)
			return -1;
		tt = rule_target(t, lib, name, o->cache_dir, &libt);
		if (!tt) {
			ret = -1;
		} else if (!(n = target_find_funcs(tt, name, found, MAX_RULE_MATCHES)) &&
			   !tt->has_symtab) {
			char *what = xstrfmt("'%s'", name);
			ret = target_no_functions_error(tt, what);
			free(what);
		} else if (!n) {
			ret = pr_error("function '%s' not found in %s: list its functions with "
				       "nm -C %s",
				       name, tt->path, tt->path);
		} else if (n > MAX_RULE_MATCHES) {
			ret = pr_error("'%s' names %zu functions in %s: give the parameter list of "
				       "one",
				       name, n, tt->path);
		} else {
			for (k = 0; k < n && ret == 0; k++) {
				if (found[k]->ifunc)
					ret = add_rule_ifunc(plan, tt, found[k], sampling, o);
				else
					add_rule_func(plan, tt, found[k], NULL, sampling, o);
			}
			if (n > 1 && ret == 0)
				pr_info("perun: '%s' names %zu functions in %s: probing every one",
					name, n, tt->path);
		}
		if (tt && tt != t)
			target_release(&libt);
		free(lib);
		free(name);
		if (ret < 0)
			return -1;
	}
	return 0;
}

static int add_rule_usdts(struct plan *plan, const struct target *t, const struct strategy_opts *o)
{
	size_t i;

	for (i = 0; i < o->nusdts; i++) {
		char *lib, *name;
		unsigned sampling;
		const struct target *tt;
		struct target libt;
		int ret = 0;

		if (strategy_split_rule(o->usdts[i], &lib, &name, &sampling) < 0)
			return -1;
		tt = rule_target(t, lib, name, o->cache_dir, &libt);
		if (!tt)
			ret = -1;
		else if (!add_usdts(plan, tt, name, sampling ? sampling : o->global_sampling))
			ret = pr_error("USDT probe '%s' not found in %s", name, tt->path);
		if (tt && tt != t)
			target_release(&libt);
		free(lib);
		free(name);
		if (ret < 0)
			return -1;
	}
	return 0;
}

static int add_rule_lines(struct plan *plan, const struct target *t, const struct strategy_opts *o)
{
	size_t i;

	for (i = 0; i < o->ndyns; i++) {
		char *lib, *loc, *colon, *path = NULL;
		unsigned sampling;
		struct probe *pr;

		if (strategy_split_rule(o->dyns[i], &lib, &loc, &sampling) < 0)
			return -1;
		colon = strrchr(loc, ':');
		if (!colon || !all_digits(colon + 1) || colon == loc) {
			free(lib);
			free(loc);
			return pr_error("malformed -d rule '%s': expected [lib#]file:line[#sampling]",
					o->dyns[i]);
		}
		if (lib && !(path = target_find_library(t->path, lib))) {
			pr_error("library '%s' not found", lib);
			free(lib);
			free(loc);
			return -1;
		}
		pr = plan_add(plan, PROBE_LINE, path ? path : t->path, loc);
		*colon = '\0';
		pr->file = xstrdup(loc);
		pr->line = atoi(colon + 1);
		pr->flags |= PROBE_F_NAMED;
		pr->sampling = sampling ? sampling : o->global_sampling ? o->global_sampling : 1;
		free(path);
		free(lib);
		free(loc);
	}
	return 0;
}

/* Why return probes break t, or NULL.  A uretprobe replaces the return
 * address on the stack: an exception unwinding through a probed function
 * finds no unwind info and the program aborts; a longjmp past it skips its
 * return, so the call is never recorded; Go copies goroutine stacks as they
 * grow, and its runtime aborts on the replaced address ("unexpected return
 * pc").  */
static const char *returns_break(const struct target *t)
{
	if (t->go)
		return "is a Go program";
	if (t->exceptions)
		return "uses C++ exceptions";
	if (t->longjmp)
		return "uses setjmp/longjmp";
	return NULL;
}

/* --entry-only avoids return probes everywhere; the userspace strategy
 * does it by itself for targets whose return probes break, and every
 * strategy for Go programs (their return probes abort them).  */
void strategy_entry_only(struct plan *plan, const struct target *t, const struct strategy_opts *o)
{
	size_t i, n = 0;
	const char *why = o->returns_exact && !t->go ? NULL : returns_break(t);
	int automatic = !o->entry_only && why && (t->go || !strcmp(o->strategy, "userspace"));

	if (why && !o->entry_only && !automatic)
		log_msg(1, "perun: warning",
			"%s %s: %s; use --entry-only if it does", t->path, why,
			t->exceptions ? "one thrown through a function with a return probe aborts "
					"the program"
				      : "a call it jumps out of has no return, so it is not recorded");
	if (!o->entry_only && !automatic)
		return;
	for (i = 0; i < plan->n; i++) {
		struct probe *pr = &plan->probes[i];
		if (pr->kind != PROBE_FUNC)
			continue;
		if (automatic && strcmp(pr->binary, t->path))
			continue;
		pr->flags |= PROBE_F_ENTRY_ONLY;
		n++;
	}
	if (automatic && n)
		pr_info("perun: %s %s: counting entries only for its %zu function%s "
			"(return probes %s)%s",
			t->path, why, n, n == 1 ? "" : "s",
			t->go ? "abort Go programs" : t->exceptions ? "break unwinding"
								 : "miss calls that longjmp skips",
			t->go ? "" : "; durations need -s custom");
	/* stap probes after Go's stack check only where the line table says
	 * where it ends; before it, a call is seen again after morestack */
	if (t->go && !t->has_dwarf && n)
		log_msg(0, "perun: warning",
			"%s has no DWARF (built with -ldflags=-w or stripped): a call that "
			"grows its goroutine stack is counted twice; rebuild without -w", t->path);
}

/* A hard link to path (same inode, so the same uprobes) in dir, or NULL.
 * dir must be ours, private, and on path's file system.  */
static char *link_into(const char *path, const struct stat *st, const char *dir)
{
	struct stat ds, ls;
	char *lp;

	if (strpbrk(dir, " \t") || (fs_mkdir_p(dir, 0700) < 0 && errno != EEXIST))
		return NULL;
	if (lstat(dir, &ds) < 0 || !S_ISDIR(ds.st_mode) || ds.st_uid != geteuid() ||
	    (ds.st_mode & 022) || ds.st_dev != st->st_dev)
		return NULL;
	lp = xstrfmt("%s/%llx-%llx-%s", dir, (unsigned long long)st->st_dev,
		     (unsigned long long)st->st_ino, fs_basename(path));
	for (char *c = lp + strlen(dir); *c; c++)
		if (*c == ' ' || *c == '\t')
			*c = '_';
	if (lstat(lp, &ls) == 0 && ls.st_dev == st->st_dev && ls.st_ino == st->st_ino)
		return lp;
	unlink(lp);
	if (link(path, lp) == 0)
		return lp;
	free(lp);
	return NULL;
}

/* The kernel's uprobe_events splits its lines at spaces, so stapbpf cannot
 * probe "/tmp/my dir/app" (stap itself resolves symlinks): such binaries
 * are probed through a hard link without spaces, under $TMPDIR or the
 * cache dir, whichever is on the binary's file system.  */
static char *spaceless_path(const char *path, const char *cache_dir)
{
	struct stat st;
	const char *tmp = getenv("TMPDIR");
	char *dir, *lp;

	if (!strpbrk(path, " \t"))
		return xstrdup(path);
	if (stat(path, &st) < 0) {
		pr_error_errno("%s", path);
		return NULL;
	}
	dir = xstrfmt("%s/perun-links-%u", tmp && *tmp ? tmp : "/tmp", (unsigned)geteuid());
	lp = link_into(path, &st, dir);
	free(dir);
	if (!lp && cache_dir) {
		dir = xstrfmt("%s/links", cache_dir);
		lp = link_into(path, &st, dir);
		free(dir);
	}
	if (!lp)
		pr_error("%s: the kernel's uprobe_events cannot take a path with spaces and perun "
			 "found no private directory on the same file system for a hard link: move "
			 "the binary, or hard-link it to a path without spaces and trace that",
			 path);
	return lp;
}

static int spaceless_binaries(struct plan *plan, const char *cache_dir)
{
	size_t i, j;

	for (i = 0; i < plan->n; i++) {
		char *old = plan->probes[i].binary, *lp;
		if (!strpbrk(old, " \t"))
			continue;
		lp = spaceless_path(old, cache_dir);
		if (!lp)
			return -1;
		pr_info("perun: probing %s through the hard link %s (no spaces)", old, lp);
		for (j = i; j < plan->n; j++) {
			if (j > i && strcmp(plan->probes[j].binary, old))
				continue;
			if (j > i)
				free(plan->probes[j].binary);
			plan->probes[j].binary = xstrdup(lp);
		}
		free(old);
		free(lp);
	}
	return 0;
}

int strategy_build(struct plan *plan, const struct target *t, const struct strategy_opts *o)
{
	pcre2_code *inc = NULL, *exc = NULL;
	pcre2_match_data *md = NULL;
	int ret = -1, custom = !strcmp(o->strategy, "custom");
	int keep_helpers = !strcmp(o->strategy, "all") || !strcmp(o->strategy, "a_sampled");
	unsigned sampling = o->global_sampling;
	size_t i;

	if (!strategy_valid(o->strategy))
		return pr_error("unknown strategy '%s': use userspace, all, u_sampled, a_sampled "
				"or custom",
				o->strategy);
	if (!sampling && strstr(o->strategy, "_sampled"))
		sampling = STRATEGY_DEFAULT_SAMPLING;
	if ((o->include && !(inc = compile_re(o->include, "--include"))) ||
	    (o->exclude && !(exc = compile_re(o->exclude, "--exclude"))))
		goto out;
	md = pcre2_match_data_create(4, NULL);
	plan_init(plan);
	if (!custom && !t->nfuncs) {
		char *what = xstrfmt("-s %s", o->strategy);
		target_no_functions_error(t, what);
		free(what);
		goto out;
	}
	if (!custom && t->syms == TARGET_SYMS_DYNSYM) {
		char *hint = target_debuginfo_hint(t->path);
		size_t n = 0;
		for (i = 0; i < t->nfuncs; i++)
			n += !t->funcs[i].helper && !t->funcs[i].ifunc;
		pr_info("perun: %s has no symbol table and no debuginfo was found: probing the %zu "
			"function%s it exports (.dynsym) only; for the others, %s",
			t->path, n, n == 1 ? "" : "s", hint);
		free(hint);
	}
	if (!custom) {
		for (i = 0; i < t->nfuncs; i++) {
			const struct func *f = &t->funcs[i];
			if (f->helper && !keep_helpers)
				continue;
			/* an IFUNC symbol is its resolver, run once by the dynamic
			 * linker; its implementations are functions of their own */
			if (f->ifunc)
				continue;
			if (inc && !re_match(inc, md, f->display) && !re_match(inc, md, f->name))
				continue;
			if (exc && (re_match(exc, md, f->display) || re_match(exc, md, f->name)))
				continue;
			add_func(plan, t, f, sampling);
		}
	}
	if (add_rule_funcs(plan, t, o) < 0 || add_rule_usdts(plan, t, o) < 0 ||
	    add_rule_lines(plan, t, o) < 0)
		goto out;
	if (!custom && o->with_usdt)
		add_usdts(plan, t, NULL, sampling);
	strategy_entry_only(plan, t, o);
	if (spaceless_binaries(plan, o->cache_dir) < 0)
		goto out;
	if (!plan->n) {
		pr_error("no probes: the strategy '%s' and the rules selected nothing in %s%s",
			 o->strategy, t->path,
			 custom ? " (the custom strategy needs -f, -u or -d)" : "");
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		plan_release(plan);
	pcre2_match_data_free(md);
	pcre2_code_free(inc);
	pcre2_code_free(exc);
	return ret;
}
