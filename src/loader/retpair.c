/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "loader/retpair.h"
#include "loader/uprobes.h"
#include "util/log.h"
#include "util/strbuf.h"

struct rframe {
	uint32_t probe;
	uint32_t sp;		/* at the entry */
	uint8_t uret;		/* its return is a uretprobe's ... */
	uint8_t beyond;		/* ... which the kernel did not install */
};

struct rthread {
	uint32_t tid;
	unsigned used : 1;
	struct rframe *st;
	uint32_t depth, alloc;
	uint32_t pending;	/* uretprobes the kernel holds for it */
};

struct retpair {
	size_t nprobes;
	unsigned char *kinds;
	struct rthread *tab;
	size_t cap, n;
	struct rthread *last;
};

struct retpair *retpair_new(size_t nprobes, const unsigned char *kinds)
{
	struct retpair *rp = xcalloc(1, sizeof(*rp));

	rp->nprobes = nprobes;
	rp->kinds = xcalloc(nprobes ? nprobes : 1, 1);
	if (nprobes)
		memcpy(rp->kinds, kinds, nprobes);
	rp->cap = 64;
	rp->tab = xcalloc(rp->cap, sizeof(*rp->tab));
	return rp;
}

void retpair_free(struct retpair *rp)
{
	size_t i;

	if (!rp)
		return;
	for (i = 0; i < rp->cap; i++)
		free(rp->tab[i].st);
	free(rp->tab);
	free(rp->kinds);
	free(rp);
}

size_t retpair_open(const struct retpair *rp)
{
	size_t i, n = 0;

	for (i = 0; i < rp->cap; i++)
		n += rp->tab[i].depth;
	return n;
}

static struct rthread *slot(struct rthread *tab, size_t cap, uint32_t tid)
{
	size_t i = (tid * 2654435761u) & (cap - 1);

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static struct rthread *thread_of(struct retpair *rp, uint32_t tid)
{
	struct rthread *t;

	if (rp->last && rp->last->tid == tid)
		return rp->last;
	t = slot(rp->tab, rp->cap, tid);
	if (!t->used) {
		if (2 * (rp->n + 1) > rp->cap) {
			size_t cap = rp->cap * 2, i;
			struct rthread *tab = xcalloc(cap, sizeof(*tab));
			for (i = 0; i < rp->cap; i++)
				if (rp->tab[i].used)
					*slot(tab, cap, rp->tab[i].tid) = rp->tab[i];
			free(rp->tab);
			rp->tab = tab;
			rp->cap = cap;
			t = slot(tab, cap, tid);
		}
		t->used = 1;
		t->tid = tid;
		rp->n++;
	}
	rp->last = t;
	return t;
}

/* a - b as the stack sees it: negative when a is deeper */
static int32_t sp_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

static void emit(retpair_fn fn, void *ctx, char kind, uint32_t code, uint32_t tid, uint64_t ts,
		 unsigned why)
{
	struct retpair_line l = { kind, code, tid, ts, why };

	fn(ctx, &l);
}

/* Takes the top frame off: with its exit (ret) or without a return (why).  */
static void pop(struct rthread *t, int ret, unsigned why, uint64_t ts, retpair_fn fn, void *ctx)
{
	struct rframe *f = &t->st[--t->depth];

	if (f->uret && !f->beyond && t->pending)
		t->pending--;
	if (ret)
		emit(fn, ctx, 'e', f->probe * 2 + 1, t->tid, ts, 0);
	else
		emit(fn, ctx, 'u', f->probe * 2, t->tid, ts, f->beyond ? RETPAIR_LIMIT : why);
}

void retpair_event(struct retpair *rp, uint32_t tid, uint32_t code, uint32_t sp, uint64_t ts,
		   retpair_fn fn, void *ctx)
{
	uint32_t plain = code & ~UPROBES_CODE_RETINSN, probe = plain >> 1;
	struct rthread *t;
	int matched = 0;

	if (probe >= rp->nprobes || rp->kinds[probe] == RETPAIR_OFF) {
		emit(fn, ctx, 'e', plain, tid, ts, 0);
		return;
	}
	t = thread_of(rp, tid);
	if (!(plain & 1)) {
		struct rframe *f;
		/* every return of a frame is seen (its return instructions, or
		 * its uretprobe unless past the kernel's limit): one still open
		 * where a new call starts was unwound.  But a frame whose return
		 * is a uretprobe may have jumped to the new call (a tail call
		 * through a register or a stub, which its return instructions
		 * would not show): at the same sp it stays, and returns when the
		 * callee does.  */
		while (t->depth && (sp_diff(t->st[t->depth - 1].sp, sp) < 0 ||
				    (t->st[t->depth - 1].sp == sp && !t->st[t->depth - 1].uret)))
			pop(t, 0, RETPAIR_UNWOUND, ts, fn, ctx);
		if (t->depth == t->alloc) {
			t->alloc = t->alloc ? 2 * t->alloc : 64;
			t->st = xrealloc(t->st, t->alloc * sizeof(*t->st));
		}
		f = &t->st[t->depth++];
		f->probe = probe;
		f->sp = sp;
		f->uret = rp->kinds[probe] == RETPAIR_URET;
		f->beyond = f->uret && t->pending >= RETPAIR_URETPROBE_DEPTH;
		if (f->uret && !f->beyond)
			t->pending++;
		emit(fn, ctx, 'e', plain, tid, ts, 0);
		return;
	}
	/* a uretprobe fires after the return popped its address */
	if (!(code & UPROBES_CODE_RETINSN))
		sp -= 8;
	while (t->depth && sp_diff(t->st[t->depth - 1].sp, sp) < 0)
		pop(t, 0, RETPAIR_UNWOUND, ts, fn, ctx);
	if (code & UPROBES_CODE_RETINSN) {
		/* the frame that returns, and the frames that tail-called it
		 * whose own return no uretprobe will show */
		while (t->depth && t->st[t->depth - 1].sp == sp) {
			const struct rframe *f = &t->st[t->depth - 1];
			if (matched && f->uret && !f->beyond)
				break;	/* its uretprobe follows */
			pop(t, 1, 0, ts, fn, ctx);
			matched = 1;
		}
	} else {
		/* a uretprobe: the frames at sp up to its own (chained tail
		 * calls fire innermost first) */
		while (t->depth && t->st[t->depth - 1].sp == sp) {
			int own = t->st[t->depth - 1].uret && t->st[t->depth - 1].probe == probe;
			pop(t, 1, 0, ts, fn, ctx);
			matched = 1;
			if (own)
				break;
		}
	}
	/* no frame: its entry came before the trace (or was lost), which the
	 * parser counts */
	if (!matched)
		emit(fn, ctx, 'e', plain, tid, ts, 0);
}
