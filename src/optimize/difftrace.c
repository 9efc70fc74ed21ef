/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun collect"
#define PCRE2_CODE_UNIT_WIDTH 8

#include <json-c/json.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "binary/callgraph.h"
#include "binary/cfg.h"
#include "binary/target.h"
#include "optimize/difftrace.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* A rename needs at least this share of callers and callees in common.  */
#define RENAME_MIN_SIMILARITY 0.5

/* --- names ------------------------------------------------------------------ */

/* Node indices of a graph sorted by name, then index.  */
struct name_ix {
	const struct callgraph *cg;
	uint32_t *v;
	uint32_t n;
};

static int by_name(const void *a, const void *b, void *arg)
{
	const struct callgraph *cg = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(cg->nodes[x].name, cg->nodes[y].name);

	return c ? c : (x > y) - (x < y);
}

static void ix_build(struct name_ix *ix, const struct callgraph *cg)
{
	uint32_t i;

	ix->cg = cg;
	ix->v = xcalloc((size_t)cg->nnodes + 1, sizeof(*ix->v));
	ix->n = 0;
	for (i = 0; i < cg->nnodes; i++)
		if (!cg->nodes[i].import)
			ix->v[ix->n++] = i;
	qsort_r(ix->v, ix->n, sizeof(*ix->v), by_name, (void *)cg);
}

/* The range [*lo, *hi) of ix->v named name; 0 when empty.  */
static int ix_range(const struct name_ix *ix, const char *name, uint32_t *lo, uint32_t *hi)
{
	uint32_t a = 0, b = ix->n, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (strcmp(ix->cg->nodes[ix->v[m]].name, name) < 0)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	for (b = a; b < ix->n && !strcmp(ix->cg->nodes[ix->v[b]].name, name); b++)
		;
	*hi = b;
	return b > a;
}

static int is_func(const struct callgraph *cg, uint32_t i)
{
	return !cg->nodes[i].import;
}

/* A baseline node's name as the current version calls it (renames mapped).  */
static const char *base_name(const struct difftrace *d, uint32_t b)
{
	return d->new_of[b] >= 0 ? d->cur->nodes[d->new_of[b]].name : d->base->nodes[b].name;
}

void difftrace_init(struct difftrace *d, const struct callgraph *cur,
		    const struct callgraph *base)
{
	uint32_t i;

	memset(d, 0, sizeof(*d));
	d->cur = cur;
	d->base = base;
	d->why = xcalloc((size_t)cur->nnodes + 1, 1);
	d->old_of = xcalloc((size_t)cur->nnodes + 1, sizeof(*d->old_of));
	d->new_of = xcalloc((size_t)base->nnodes + 1, sizeof(*d->new_of));
	for (i = 0; i < cur->nnodes; i++)
		d->old_of[i] = -1;
	for (i = 0; i < base->nnodes; i++)
		d->new_of[i] = -1;
}

void difftrace_release(struct difftrace *d)
{
	size_t i;

	for (i = 0; i < d->nprotect; i++)
		free(d->protect[i]);
	free(d->protect);
	free(d->why);
	free(d->old_of);
	free(d->new_of);
	memset(d, 0, sizeof(*d));
}

/* --- 1. call graphs ------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Node i's callers (callers != 0) or callees, by their current names, sorted.  */
static size_t neighbours(const struct difftrace *d, int baseline, uint32_t i, int callers,
			 const char ***out)
{
	const struct callgraph *cg = baseline ? d->base : d->cur;
	const char **v;
	size_t n, k;

	if (callers) {
		const uint32_t *in = callgraph_callers(cg, i, &n);
		v = xcalloc(n + 1, sizeof(*v));
		for (k = 0; k < n; k++) {
			uint32_t f = cg->edges[in[k]].from;
			v[k] = baseline ? base_name(d, f) : cg->nodes[f].name;
		}
	} else {
		const struct cg_edge *e = callgraph_callees(cg, i, &n);
		v = xcalloc(n + 1, sizeof(*v));
		for (k = 0; k < n; k++)
			v[k] = baseline ? base_name(d, e[k].to) : cg->nodes[e[k].to].name;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

/* |a ∩ b| of two sorted name lists (repeats counted once each).  */
static size_t common(const char **a, size_t na, const char **b, size_t nb)
{
	size_t i = 0, j = 0, n = 0;

	while (i < na && j < nb) {
		int c = strcmp(a[i], b[j]);
		if (!c) {
			n++;
			i++;
			j++;
		} else if (c < 0) {
			i++;
		} else {
			j++;
		}
	}
	return n;
}

static int same_list(const char **a, size_t na, const char **b, size_t nb)
{
	return na == nb && common(a, na, b, nb) == na;
}

/* Callers and callees in common over all of them: 0 .. 1.  */
static double similarity(const struct difftrace *d, uint32_t n, uint32_t r)
{
	const char **cn, **en, **cr, **er;
	size_t ncn = neighbours(d, 0, n, 1, &cn), nen = neighbours(d, 0, n, 0, &en);
	size_t ncr = neighbours(d, 1, r, 1, &cr), ner = neighbours(d, 1, r, 0, &er);
	size_t both = common(cn, ncn, cr, ncr) + common(en, nen, er, ner);
	size_t all = ncn + nen + ncr + ner - both;

	free(cn);
	free(en);
	free(cr);
	free(er);
	return all ? (double)both / (double)all : 0;
}

static int by_level(const void *a, const void *b, void *arg)
{
	const struct callgraph *cg = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int lx = cg->nodes[x].level, ly = cg->nodes[y].level;

	/* unreachable (-1) last */
	if (lx != ly)
		return lx < 0 ? 1 : ly < 0 ? -1 : lx - ly;
	return (x > y) - (x < y);
}

void difftrace_compare_cg(struct difftrace *d, int inspect_all)
{
	const struct callgraph *cur = d->cur, *base = d->base;
	struct name_ix ci, bi;
	uint32_t i, k, lo, hi, clo, chi, *news, nnews = 0, *gone, ngone = 0;

	ix_build(&ci, cur);
	ix_build(&bi, base);
	/* same name: the k-th of a name in one version is the k-th in the other */
	for (k = 0; k < ci.n; k++) {
		i = ci.v[k];
		ix_range(&ci, cur->nodes[i].name, &clo, &chi);
		if (ix_range(&bi, cur->nodes[i].name, &lo, &hi) && lo + (k - clo) < hi) {
			d->old_of[i] = (int32_t)bi.v[lo + (k - clo)];
			d->new_of[d->old_of[i]] = (int32_t)i;
		}
	}
	news = xcalloc((size_t)cur->nnodes + 1, sizeof(*news));
	gone = xcalloc((size_t)base->nnodes + 1, sizeof(*gone));
	for (i = 0; i < cur->nnodes; i++)
		if (is_func(cur, i) && d->old_of[i] < 0)
			news[nnews++] = i;
	for (i = 0; i < base->nnodes; i++)
		if (is_func(base, i) && d->new_of[i] < 0)
			gone[ngone++] = i;
	/* renames, callers first: a renamed caller is mapped before its callees */
	qsort_r(news, nnews, sizeof(*news), by_level, (void *)cur);
	for (k = 0; k < nnews; k++) {
		double best = RENAME_MIN_SIMILARITY - 1e-9, s;
		int32_t pick = -1;
		uint32_t j;
		for (j = 0; j < ngone; j++) {
			if (d->new_of[gone[j]] >= 0)
				continue;
			s = similarity(d, news[k], gone[j]);
			if (s > best) {
				best = s;
				pick = (int32_t)gone[j];
			}
		}
		if (pick >= 0) {
			d->old_of[news[k]] = pick;
			d->new_of[pick] = (int32_t)news[k];
			d->why[news[k]] |= DT_RENAMED;
			d->nrenamed++;
		} else {
			d->why[news[k]] |= DT_NEW;
			d->nnew++;
		}
	}
	for (i = 0; i < ngone; i++)
		d->nremoved += d->new_of[gone[i]] < 0;
	if (inspect_all)
		for (i = 0; i < cur->nnodes; i++) {
			const char **a, **b;
			size_t na, nb;
			if (!is_func(cur, i) || d->old_of[i] < 0)
				continue;
			na = neighbours(d, 0, i, 0, &a);
			nb = neighbours(d, 1, (uint32_t)d->old_of[i], 0, &b);
			if (!same_list(a, na, b, nb)) {
				d->why[i] |= DT_CALLEES;
				d->ncallees++;
			}
			free(a);
			free(b);
		}
	free(news);
	free(gone);
	free(ci.v);
	free(bi.v);
}

/* --- 2. the diff ------------------------------------------------------------------ */

static const char *const keywords[] = { "if", "for", "while", "switch", "return", "sizeof",
					"do", "else", "case", "defined", "__attribute__",
					"alignof", "_Alignof", "typeof", "__typeof__", NULL };

static int is_keyword(const char *s, size_t n)
{
	size_t i;

	for (i = 0; keywords[i]; i++)
		if (strlen(keywords[i]) == n && !strncmp(keywords[i], s, n))
			return 1;
	return 0;
}

/* The first name re's group 1 finds in text that is no keyword.  */
static int re_name(pcre2_code *re, const char *text, size_t len, char *out, size_t n)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	PCRE2_SIZE off = 0, *ov;
	int ret = -1;

	while (off <= len && pcre2_match(re, (PCRE2_SPTR)text, len, off, 0, md, NULL) > 1) {
		ov = pcre2_get_ovector_pointer(md);
		if (!is_keyword(text + ov[2], ov[3] - ov[2])) {
			if (ov[3] - ov[2] < n) {
				memcpy(out, text + ov[2], ov[3] - ov[2]);
				out[ov[3] - ov[2]] = 0;
				ret = 0;
			}
			break;
		}
		off = ov[1] > off ? ov[1] : off + 1;
	}
	pcre2_match_data_free(md);
	return ret;
}

static pcre2_code *compile_once(pcre2_code **slot, const char *re)
{
	int err;
	PCRE2_SIZE eo;

	if (!*slot)
		*slot = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &err, &eo, NULL);
	if (!*slot)
		BUG("difftrace: a regular expression does not compile");
	return *slot;
}

/* Patterns compiled once per process and kept (a handful of bytes).  */
static pcre2_code *header_re, *def_re;

int difftrace_header_name(const char *text, size_t len, char *out, size_t n)
{
	/* the context follows the second @@ */
	const char *p = len > 2 ? memchr(text + 2, '@', len - 2) : NULL;

	if (!p || (size_t)(p - text) + 2 > len || p[1] != '@')
		return -1;
	p += 2;
	return re_name(compile_once(&header_re, "([A-Za-z_][A-Za-z0-9_]*)\\s*\\("), p,
		       len - (size_t)(p - text), out, n);
}

int difftrace_definition_name(const char *text, size_t len, char *out, size_t n)
{
	/* at column 0, a name and '(' and no ';' after it: a definition (or its
	 * declaration line), not a statement */
	return re_name(compile_once(&def_re, "^(?:[A-Za-z_][A-Za-z0-9_\\s\\*,]*?[\\s\\*])?"
					     "([A-Za-z_][A-Za-z0-9_]*)\\s*\\([^;]*$"),
		       text, len, out, n);
}

struct vcs_walk {
	struct difftrace *d;
	struct name_ix ix;
};

static void mark_name(struct vcs_walk *w, const char *name)
{
	uint32_t lo, hi;

	if (!ix_range(&w->ix, name, &lo, &hi))
		return;
	for (; lo < hi; lo++)
		w->d->why[w->ix.v[lo]] |= DT_SOURCE;
}

/* True when the DWARF declaration file decl is the repository path path.  */
static int same_source(const char *decl, const char *path)
{
	size_t a = strlen(decl), b = strlen(path);

	if (a < b || strcmp(decl + a - b, path))
		return 0;
	return a == b || decl[a - b - 1] == '/';
}

/* Marks the functions a hunk of path covers by their declaration lines:
 * those declared in [start, start + lines) and the last one declared
 * before start.  */
static void mark_lines(struct vcs_walk *w, const char *path, long start, long lines)
{
	const struct callgraph *cg = w->d->cur;
	long end = start + (lines > 0 ? lines : 1), best_line = 0;
	int32_t best = -1;
	uint32_t i;

	for (i = 0; i < cg->nnodes; i++) {
		const struct func *f = cg->nodes[i].func;
		if (!f || !f->file || f->line <= 0 || !same_source(f->file, path))
			continue;
		if (f->line >= start && f->line < end)
			w->d->why[i] |= DT_SOURCE;
		else if (f->line < start && f->line > best_line) {
			best_line = f->line;
			best = (int32_t)i;
		}
	}
	if (best >= 0)
		w->d->why[best] |= DT_SOURCE;
}

static int on_diff(void *ctx, const char *path, char kind, const char *text, size_t len)
{
	struct vcs_walk *w = ctx;
	char name[256];

	if (kind == 'h') {
		const char *plus = memchr(text, '+', len);
		long start, lines = 1;
		char *end;
		if (plus) {
			start = strtol(plus + 1, &end, 10);
			if (*end == ',')
				lines = strtol(end + 1, NULL, 10);
			mark_lines(w, path, start, lines);
		}
		if (difftrace_header_name(text, len, name, sizeof(name)) == 0)
			mark_name(w, name);
	} else if (kind == '+' || kind == '-') {
		if (difftrace_definition_name(text, len, name, sizeof(name)) == 0)
			mark_name(w, name);
	}
	return 0;
}

int difftrace_vcs(struct difftrace *d, const char *worktree, const char *from, const char *to)
{
	struct vcs_walk w = { d, { NULL, NULL, 0 } };
	uint32_t i;
	int r;

	ix_build(&w.ix, d->cur);
	r = vcs_diff(worktree, from, to, 0, on_diff, &w);
	free(w.ix.v);
	if (r < 0)
		return -1;
	d->vcs_used = 1;
	for (i = 0; i < d->cur->nnodes; i++)
		d->nsource += !!(d->why[i] & DT_SOURCE);
	return 0;
}

/* --- 3. CFGs ---------------------------------------------------------------------- */

struct insn {
	uint64_t addr;
	char *text;		/* mnemonic, or mnemonic and normalised operands */
};

struct insns {
	struct insn *v;
	size_t n, alloc;
	const struct difftrace *d;
	int baseline;
	const struct cfg_block *blocks;
	size_t nblocks;
	enum dt_cfg_mode mode;
};

/* The index of the block holding addr among b (by address, the dispatch
 * block last), or -1.  */
static long block_of(const struct cfg_block *b, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n, m;

	while (hi > lo && b[hi - 1].addr == 0)
		hi--;
	while (lo < hi) {
		m = lo + (hi - lo) / 2;
		if (b[m].addr + b[m].size <= addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < n && b[lo].addr <= addr && addr < b[lo].addr + b[lo].size ? (long)lo : -1;
}

/* The function of cg starting at addr, or -1.  */
static long node_at(const struct callgraph *cg, uint64_t addr)
{
	uint32_t i;
	const struct func *f = cg->target ? target_func_at(cg->target, addr) : NULL;

	if (f)
		return (long)callgraph_node_of(cg, f);
	for (i = 0; i < cg->nnodes; i++)
		if (cg->nodes[i].addr == addr && !cg->nodes[i].import)
			return (long)i;
	return -1;
}

/* Operands with what moves when other code moves made symbolic: a branch
 * target as its block or function, rip-relative displacements dropped.  */
static void normalise(struct insns *s, const struct cfg_insn *in, struct strbuf *sb)
{
	const char *op = in->operands, *p;
	char *end;
	int branch = in->mnemonic[0] == 'j' || !strncmp(in->mnemonic, "call", 4) ||
		     !strncmp(in->mnemonic, "loop", 4);

	strbuf_addstr(sb, in->mnemonic);
	if (branch && !strncmp(op, "0x", 2)) {
		uint64_t t = strtoull(op, &end, 16);
		const struct callgraph *cg = s->d->base && s->baseline ? s->d->base : s->d->cur;
		long b, f;
		if (!*end) {
			if ((b = block_of(s->blocks, s->nblocks, t)) >= 0) {
				strbuf_addf(sb, " block%ld", b);
			} else if ((f = node_at(cg, t)) >= 0) {
				strbuf_addf(sb, " %s", s->baseline ? base_name(s->d, (uint32_t)f)
								   : cg->nodes[f].name);
			} else {
				strbuf_addstr(sb, " outside");
			}
			return;
		}
	}
	if (!*op)
		return;
	strbuf_addch(sb, ' ');
	while ((p = strstr(op, "rip "))) {
		strbuf_add(sb, op, (size_t)(p - op));
		strbuf_addstr(sb, "rip");
		op = p + 4;
		if ((*op == '+' || *op == '-') && op[1] == ' ') {
			op += 2;
			strtoull(op, &end, 0);
			op = end;
		}
	}
	strbuf_addstr(sb, op);
}

static int on_insn(const struct cfg_insn *in, void *arg)
{
	struct insns *s = arg;
	struct strbuf sb = STRBUF_INIT;

	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 64;
		s->v = xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	if (s->mode == DT_CFG_STRICT)
		normalise(s, in, &sb);
	else
		strbuf_addstr(&sb, in->mnemonic);
	s->v[s->n].addr = in->addr;
	s->v[s->n].text = strbuf_detach(&sb);
	s->n++;
	return 0;
}

static void insns_release(struct insns *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].text);
	free(s->v);
}

/* Each block's instructions as one string (semistrict: the mnemonics
 * sorted, a multiset), into a new array of nblocks strings.  */
static char **block_texts(struct insns *s)
{
	char **t = xcalloc(s->nblocks + 1, sizeof(*t));
	long *of = xcalloc(s->n + 1, sizeof(*of));
	const char **v = xcalloc(s->n + 1, sizeof(*v));
	size_t i, k, j, n;

	for (i = 0; i < s->n; i++)
		of[i] = block_of(s->blocks, s->nblocks, s->v[i].addr);
	/* blocks and instructions both lie in address order (the dispatch
	 * block, last, holds none): each block's instructions are one run of
	 * of[], outside instructions (-1) skipped */
	for (k = 0, i = 0; k < s->nblocks; k++) {
		struct strbuf sb = STRBUF_INIT;
		while (i < s->n && of[i] < (long)k)
			i++;
		for (n = 0; i < s->n && of[i] == (long)k; i++)
			v[n++] = s->v[i].text;
		if (s->mode == DT_CFG_SEMISTRICT)
			qsort(v, n, sizeof(*v), cmp_str);
		for (j = 0; j < n; j++)
			strbuf_addf(&sb, "%s\n", v[j]);
		t[k] = strbuf_detach(&sb);
	}
	free(v);
	free(of);
	return t;
}

static int read_insns(struct insns *s, const struct difftrace *d, int baseline, uint32_t i,
		      enum dt_cfg_mode mode)
{
	const struct callgraph *cg = baseline ? d->base : d->cur;

	memset(s, 0, sizeof(*s));
	s->d = d;
	s->baseline = baseline;
	s->mode = mode;
	s->blocks = callgraph_blocks(cg, i, &s->nblocks);
	return callgraph_function_insns(cg, i, on_insn, s);
}

/* 1 when the CFGs of current node i and baseline node o differ under mode
 * (or cannot be compared), 0 when equal.  */
static int cfg_differs(const struct difftrace *d, uint32_t i, uint32_t o, enum dt_cfg_mode mode)
{
	const struct callgraph *cur = d->cur, *base = d->base;
	const struct cfg_block *a, *b;
	const unsigned keep = CFG_B_RET | CFG_B_INDIRECT | CFG_B_DISPATCH | CFG_B_EXIT;
	size_t na, nb, k, j;
	struct insns x, y;
	char **tx, **ty;
	int differ = 0;

	if (!cur->target || !base->target || !cur->blocks || !base->blocks)
		return 1;
	a = callgraph_blocks(cur, i, &na);
	b = callgraph_blocks(base, o, &nb);
	if (na != nb || cur->nodes[i].ninsns != base->nodes[o].ninsns)
		return 1;
	for (k = 0; k < na; k++) {
		if (a[k].nsucc != b[k].nsucc || (a[k].flags & keep) != (b[k].flags & keep) ||
		    a[k].ninsns != b[k].ninsns || a[k].ncalls != b[k].ncalls)
			return 1;
		for (j = 0; j < a[k].nsucc; j++)
			if (cur->succ[a[k].succ + j] != base->succ[b[k].succ + j])
				return 1;
	}
	if (mode == DT_CFG_SOFT)
		return 0;
	memset(&y, 0, sizeof(y));
	if (read_insns(&x, d, 0, i, mode) < 0 || read_insns(&y, d, 1, o, mode) < 0) {
		insns_release(&x);
		insns_release(&y);
		return 1;
	}
	tx = block_texts(&x);
	ty = block_texts(&y);
	for (k = 0; k < na; k++) {
		differ |= strcmp(tx[k], ty[k]) != 0;
		free(tx[k]);
		free(ty[k]);
	}
	free(tx);
	free(ty);
	insns_release(&x);
	insns_release(&y);
	return differ;
}

void difftrace_compare_cfg(struct difftrace *d, enum dt_cfg_mode mode)
{
	uint32_t i;

	for (i = 0; i < d->cur->nnodes; i++) {
		unsigned w = d->why[i];
		if (!is_func(d->cur, i) || d->old_of[i] < 0 || (w & (DT_NEW | DT_CALLEES)))
			continue;
		/* no diff: every function, when CFGs can be compared at all */
		if ((d->vcs_used || !d->cur->target || !d->base->target) &&
		    !(w & (DT_SOURCE | DT_RENAMED)))
			continue;
		d->ncompared++;
		if (cfg_differs(d, i, (uint32_t)d->old_of[i], mode)) {
			d->why[i] |= DT_CFG;
			d->ncfg++;
		}
	}
}

/* --- the verdict -------------------------------------------------------------------- */

void difftrace_finish(struct difftrace *d, int keep_leaf)
{
	uint32_t i;
	size_t n = 0;

	for (i = 0; i < d->nprotect; i++)
		free(d->protect[i]);
	free(d->protect);
	d->protect = xcalloc((size_t)d->cur->nnodes + 1, sizeof(*d->protect));
	d->nchanged = d->nprotected = 0;
	for (i = 0; i < d->cur->nnodes; i++) {
		if (!is_func(d->cur, i) || !(d->why[i] & (DT_NEW | DT_CALLEES | DT_CFG)))
			continue;
		d->why[i] |= DT_CHANGED;
		d->nchanged++;
		if (d->cur->nodes[i].leaf && !keep_leaf)
			continue;
		d->why[i] |= DT_PROTECTED;
		d->protect[n++] = xstrdup(d->cur->nodes[i].name);
	}
	qsort(d->protect, n, sizeof(*d->protect), cmp_str);
	d->nprotect = n;
	d->nprotected = (uint32_t)n;
}

int difftrace_protects(const struct difftrace *d, const char *name)
{
	return d && d->nprotect &&
	       bsearch(&name, d->protect, d->nprotect, sizeof(*d->protect), cmp_str) != NULL;
}

struct json_object *difftrace_json(const struct difftrace *d)
{
	struct json_object *o = json_object_new_object(), *changed = json_object_new_array();
	struct json_object *news = json_object_new_array(), *ren = json_object_new_object();
	struct json_object *gone = json_object_new_array(), *c = json_object_new_object();
	uint32_t i;

	for (i = 0; i < d->cur->nnodes; i++) {
		const char *name = d->cur->nodes[i].name;
		if (d->why[i] & DT_CHANGED) {
			struct json_object *e = json_object_new_object();
			struct json_object *why = json_object_new_array();
			if (d->why[i] & DT_NEW)
				json_object_array_add(why, json_object_new_string("new"));
			if (d->why[i] & DT_CALLEES)
				json_object_array_add(why, json_object_new_string("callees"));
			if (d->why[i] & DT_SOURCE)
				json_object_array_add(why, json_object_new_string("source"));
			if (d->why[i] & DT_CFG)
				json_object_array_add(why, json_object_new_string("cfg"));
			json_object_object_add(e, "name", json_object_new_string(name));
			json_object_object_add(e, "why", why);
			json_object_object_add(e, "protected",
					       json_object_new_boolean(!!(d->why[i] & DT_PROTECTED)));
			json_object_array_add(changed, e);
		}
		if (d->why[i] & DT_NEW)
			json_object_array_add(news, json_object_new_string(name));
		if (d->why[i] & DT_RENAMED)
			json_object_object_add(
				ren, name,
				json_object_new_string(d->base->nodes[d->old_of[i]].name));
	}
	for (i = 0; i < d->base->nnodes; i++)
		if (is_func(d->base, i) && d->new_of[i] < 0)
			json_object_array_add(gone,
					      json_object_new_string(d->base->nodes[i].name));
	json_object_object_add(c, "new", json_object_new_int64(d->nnew));
	json_object_object_add(c, "removed", json_object_new_int64(d->nremoved));
	json_object_object_add(c, "renamed", json_object_new_int64(d->nrenamed));
	json_object_object_add(c, "callees_differ", json_object_new_int64(d->ncallees));
	json_object_object_add(c, "named_by_diff", json_object_new_int64(d->nsource));
	json_object_object_add(c, "cfg_compared", json_object_new_int64(d->ncompared));
	json_object_object_add(c, "cfg_differ", json_object_new_int64(d->ncfg));
	json_object_object_add(c, "changed", json_object_new_int64(d->nchanged));
	json_object_object_add(c, "protected", json_object_new_int64(d->nprotected));
	json_object_object_add(o, "counts", c);
	json_object_object_add(o, "changed", changed);
	json_object_object_add(o, "new", news);
	json_object_object_add(o, "renamed", ren);
	json_object_object_add(o, "removed", gone);
	json_object_object_add(o, "vcs_diff", json_object_new_boolean(d->vcs_used));
	return o;
}
