/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun-uprobes"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/loader.h"
#include "loader/uprobes-modes.h"
#include "parse/parse.h"
#include "util/log.h"
#include "util/number.h"

int uprobes_modes_disarm(const struct uprobes_modes *m)
{
	return m->threshold || m->timed_ms || m->budget_ns;
}

/* The options, in one table for the writer and the reader.  */
struct key {
	const char *name;
	size_t off;
	int wide;	/* uint64_t, else unsigned */
};

#define K(n, f, w) { n, offsetof(struct uprobes_modes, f), w }
static const struct key keys[] = {
	K("threshold", threshold, 1),	K("reattach-ms", reattach_ms, 0),
	K("timed-ms", timed_ms, 0),	K("budget-ns", budget_ns, 1),
	K("call-ns", call_ns, 1),	K("stepped-ns", stepped_ns, 1),
	K("window-ms", window_ms, 0),	K("insn-ns", insn_ns, 1),
};
#undef K

static uint64_t key_get(const struct uprobes_modes *m, const struct key *k)
{
	const char *p = (const char *)m + k->off;

	return k->wide ? *(const uint64_t *)(const void *)p : *(const unsigned *)(const void *)p;
}

void uprobes_modes_argv(const struct uprobes_modes *m, struct strv *argv)
{
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint64_t v = key_get(m, &keys[i]);
		char arg[64];
		if (!v)
			continue;
		snprintf(arg, sizeof(arg), "%s=%" PRIu64, keys[i].name, v);
		strv_push(argv, "-m");
		strv_push(argv, arg);
	}
}

int uprobes_modes_parse(struct uprobes_modes *m, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *end;
	size_t i;

	for (i = 0; eq && i < sizeof(keys) / sizeof(keys[0]); i++) {
		unsigned long long v;
		char *p;
		if (strlen(keys[i].name) != (size_t)(eq - arg) ||
		    strncmp(arg, keys[i].name, (size_t)(eq - arg)))
			continue;
		if (eq[1] < '0' || eq[1] > '9')
			break;
		v = strtoull(eq + 1, &end, 10);
		if (*end || (!keys[i].wide && v > 0xffffffffull))
			break;
		p = (char *)m + keys[i].off;
		if (keys[i].wide)
			*(uint64_t *)(void *)p = v;
		else
			*(unsigned *)(void *)p = (unsigned)v;
		return 0;
	}
	return pr_error("-m %s: not a method setting (KEY=NUMBER)", arg);
}

unsigned uprobes_modes_tick_ms(const struct uprobes_modes *m)
{
	return m->reattach_ms < 10 ? m->reattach_ms : 10;
}

uint64_t uprobes_modes_first_ticks(const struct uprobes_modes *m)
{
	unsigned tick = uprobes_modes_tick_ms(m);

	return tick ? (m->reattach_ms + tick - 1) / tick : 0;
}

void uprobes_run_init(struct uprobes_run *r, const struct uprobes_modes *m,
		      struct uprobes_probe *probes, size_t n, struct uprobes_clock *clk,
		      double now, uint64_t ktime0)
{
	memset(r, 0, sizeof(*r));
	r->m = m;
	r->probes = probes;
	r->clk = clk;
	r->n = n;
	r->want = malloc(n ? n : 1);
	if (r->want)
		memset(r->want, 1, n ? n : 1);
	clk->t0 = ktime0;
	r->next_tick = now + uprobes_modes_tick_ms(m) / 1e3;
	r->next_flip = now + m->timed_ms / 1e3;
	r->next_window = now + m->window_ms / 1e3;
}

void uprobes_run_release(struct uprobes_run *r)
{
	free(r->want);
	r->want = NULL;
}

/* One budget window has passed (templates/opt_budget.stp.in's timer).  */
static void window_end(struct uprobes_run *r)
{
	struct uprobes_clock *c = r->clk;
	uint64_t cost = __atomic_exchange_n(&c->bcost, 0, __ATOMIC_ACQ_REL);

	if (cost > r->m->budget_ns) {
		r->over++;
		if (!c->bnow)
			c->bcut = cost / (r->m->call_ns ? r->m->call_ns : 1);
		c->bcut /= 2;
		if (c->bcut < 1)
			c->bcut = 1;
		__atomic_store_n(&c->bnow, 1, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&c->bnow, 0, __ATOMIC_RELEASE);
	}
	__atomic_add_fetch(&c->bw, 1, __ATOMIC_ACQ_REL);
}

unsigned uprobes_run_clock(struct uprobes_run *r, double now)
{
	const struct uprobes_modes *m = r->m;
	double next = now + 1.0;
	unsigned tick = uprobes_modes_tick_ms(m);

	if (m->threshold && tick) {
		while (now >= r->next_tick) {
			__atomic_add_fetch(&r->clk->tick, 1, __ATOMIC_ACQ_REL);
			r->next_tick += tick / 1e3;
			r->dirty = 1;	/* a disarmed probe's tick may have come */
		}
		if (r->next_tick < next)
			next = r->next_tick;
	}
	if (m->timed_ms) {
		while (now >= r->next_flip) {
			__atomic_store_n(&r->clk->dormant, 1 - r->clk->dormant, __ATOMIC_RELEASE);
			r->flips++;
			r->next_flip += m->timed_ms / 1e3;
			r->dirty = 1;
		}
		if (r->next_flip < next)
			next = r->next_flip;
	}
	if (m->budget_ns && m->window_ms) {
		while (now >= r->next_window) {
			window_end(r);
			r->next_window += m->window_ms / 1e3;
		}
		if (r->next_window < next)
			next = r->next_window;
	}
	return next <= now ? 0 : (unsigned)((next - now) * 1e3) + 1;
}

/* Whether probe p may record its next call: what the program's gate would
 * let through before sampling.  */
static int may_record(const struct uprobes_run *r, const struct uprobes_probe *p)
{
	const struct uprobes_modes *m = r->m;

	if (m->threshold && __atomic_load_n(&p->off, __ATOMIC_ACQUIRE) &&
	    (!m->reattach_ms ||
	     __atomic_load_n(&r->clk->tick, __ATOMIC_ACQUIRE) < __atomic_load_n(&p->wait, __ATOMIC_ACQUIRE)))
		return 0;
	if (m->timed_ms && __atomic_load_n(&r->clk->dormant, __ATOMIC_ACQUIRE))
		return 0;
	if (m->budget_ns && __atomic_load_n(&p->boff, __ATOMIC_ACQUIRE))
		return 0;
	return 1;
}

int uprobes_run_want(struct uprobes_run *r)
{
	size_t i, pending = 0;
	int changed = 0;

	if (!r->want || (!r->dirty && !r->pending))
		return 0;
	r->dirty = 0;
	for (i = 0; i < r->n; i++) {
		const struct uprobes_probe *p = &r->probes[i];
		int open = __atomic_load_n(&p->open, __ATOMIC_ACQUIRE) != 0;
		int w = may_record(r, p);
		/* a call it recorded keeps it, so that its return is seen */
		if (!w && open) {
			w = 1;
			pending++;
		}
		if (w != r->want[i]) {
			r->want[i] = (unsigned char)w;
			changed = 1;
			if (w)
				r->restored++;
			else
				r->removed++;
		}
	}
	r->pending = pending;
	return changed;
}

/* o METHOD ID VALUE, in hex, as the stap end probe prints it.  */
static void o_line(FILE *f, unsigned method, size_t id, uint64_t value)
{
	fprintf(f, "o %x %zx %" PRIx64 "\n", method, id, value);
}

void uprobes_run_report(const struct uprobes_run *r, FILE *f)
{
	const struct uprobes_modes *m = r->m;
	size_t i;

	if (m->timed_ms)
		o_line(f, PARSE_OPT_FLIPS, 0, r->flips);
	for (i = 0; i < r->n; i++)
		if (r->probes[i].sampling > 1)
			o_line(f, PARSE_OPT_SAMPLE_SEEN, i, r->probes[i].seen);
	for (i = 0; m->threshold && i < r->n; i++) {
		const struct uprobes_probe *p = &r->probes[i];
		if (!m->reattach_ms) {
			if (p->off)
				o_line(f, PARSE_OPT_DISARMED, i, p->off);
			continue;
		}
		if (!p->ndis)
			continue;
		o_line(f, PARSE_OPT_DISARMED, i, p->ndis * m->threshold + (p->off ? 0 : p->hits));
		o_line(f, PARSE_OPT_DISARMS, i, p->ndis);
		o_line(f, PARSE_OPT_REARMS, i, p->nre);
	}
	if (!m->budget_ns)
		return;
	for (i = 0; i < r->n; i++) {
		const struct uprobes_probe *p = &r->probes[i];
		if (!p->boff)
			continue;
		o_line(f, PARSE_OPT_BUDGET_CALLS, i, p->bn);
		o_line(f, PARSE_OPT_BUDGET_AT_MS, i, p->boff);
		o_line(f, PARSE_OPT_BUDGET_AFTER, i, p->bskip);
	}
	o_line(f, PARSE_OPT_BUDGET_OVER, 0, r->over);
}
