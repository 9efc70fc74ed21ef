/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "parse"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/parse.h"
#include "util/log.h"
#include "util/strbuf.h"

struct event {
	uint64_t ts;		/* full ns, unwrapped */
	uint32_t code;
	int32_t tid_off;
	uint8_t noret;		/* a u line: 1 + why the entry CODE has no return */
};

/* An event of the recorder's dump, held until the end.  */
struct rec {
	uint64_t ts;		/* ns since the begin marker */
	uint32_t seq;		/* per thread */
	uint32_t code;
	int32_t tid_off;
};

struct frame {
	int probe;
	uint64_t ts;
	uint64_t call_id;
	uint64_t call_order;
	uint64_t child;		/* inclusive time of recorded callees */
	uint64_t callees;	/* recorded calls inside, at any depth */
	uint64_t children;	/* recorded calls directly inside */
	uint64_t callees_insn, children_insn;	/* of those: returns on instructions */
};

struct thread {
	int64_t tid;
	struct frame *stack;
	unsigned depth, alloc;
	uint64_t last_ts;	/* for duplicate detection */
	uint32_t last_code;
	unsigned has_last : 1;
	unsigned used : 1;
};

struct parser {
	size_t nprobes;
	unsigned char *points;
	unsigned char *insn;	/* per probe: its returns probed on their instructions */
	uint64_t *orders;	/* per probe: recorded entries so far */
	parse_sink sink;
	void *ctx;
	struct parse_stats st;

	/* the reorder window: a ring kept sorted by ts */
	struct event *win;
	size_t head, count;

	/* clock */
	uint64_t base, est;
	unsigned have_clock : 1;

	struct thread *threads;
	size_t nthreads_alloc;
	struct thread *last_thread;	/* the previous event's: most events repeat it */

	uint64_t next_call_id;

	/* the recorder's dump */
	struct rec *recs;
	size_t nrecs, recs_alloc;
	uint64_t *lost;		/* per probe */
	uint64_t *recv;		/* per probe: its events this stream carried */
	uint64_t *sent;		/* per probe: the events the script printed (w lines) */
	uint64_t *unfinished;	/* per probe: entries whose return never came */
	uint64_t *unstarted;	/* per probe: returns whose entry never came */
	struct parse_proc *procs;	/* p lines */
	size_t nprocs, procs_alloc;
	struct parse_child *children;	/* j lines */
	size_t nchildren, children_alloc;
	struct parse_exec *execs;	/* i lines */
	size_t nexecs, execs_alloc;

	/* what the optimization methods' code in the script reported (o lines) */
	struct parse_opt_record *opts;
	size_t nopts, opts_alloc;

	/* --aggregate summaries, hashed on (thread, probe) */
	struct agg_record *aggs;
	size_t naggs, aggs_alloc;
	size_t *agg_index;	/* open addressing: index + 1, 0 empty */
	size_t agg_index_alloc;
	char partial[128];	/* a line split across feeds */
	size_t plen;
	int skipping;		/* inside an over-long line */
	unsigned ret_limit;	/* entries this deep get no return probe; 0: none */
	unsigned paired : 1;	/* the writer pairs returns itself (u lines) */
	int failed;
};

struct parser *parser_new(size_t nprobes, const unsigned char *points, parse_sink sink, void *ctx)
{
	struct parser *p = xcalloc(1, sizeof(*p));

	p->nprobes = nprobes;
	p->points = xcalloc(nprobes ? nprobes : 1, 1);
	if (points)
		memcpy(p->points, points, nprobes);
	p->insn = xcalloc(nprobes ? nprobes : 1, 1);
	p->orders = xcalloc(nprobes ? nprobes : 1, sizeof(*p->orders));
	p->lost = xcalloc(nprobes ? nprobes : 1, sizeof(*p->lost));
	p->recv = xcalloc(nprobes ? nprobes : 1, sizeof(*p->recv));
	p->sent = xcalloc(nprobes ? nprobes : 1, sizeof(*p->sent));
	p->unfinished = xcalloc(nprobes ? nprobes : 1, sizeof(*p->unfinished));
	p->unstarted = xcalloc(nprobes ? nprobes : 1, sizeof(*p->unstarted));
	p->sink = sink;
	p->ctx = ctx;
	p->win = xmalloc(PARSE_WINDOW * sizeof(*p->win));
	p->nthreads_alloc = 16;
	p->threads = xcalloc(p->nthreads_alloc, sizeof(*p->threads));
	p->st.target_pid = 0;
	return p;
}

void parser_set_insn(struct parser *p, const unsigned char *insn)
{
	if (insn)
		memcpy(p->insn, insn, p->nprobes);
}

void parser_set_return_limit(struct parser *p, unsigned depth)
{
	p->ret_limit = depth;
}

void parser_free(struct parser *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nthreads_alloc; i++)
		free(p->threads[i].stack);
	free(p->threads);
	free(p->aggs);
	free(p->agg_index);
	free(p->win);
	free(p->orders);
	free(p->lost);
	free(p->recv);
	free(p->sent);
	free(p->unfinished);
	free(p->unstarted);
	free(p->procs);
	free(p->children);
	free(p->execs);
	free(p->recs);
	free(p->opts);
	free(p->points);
	free(p->insn);
	free(p);
}

const struct parse_stats *parser_stats(const struct parser *p)
{
	return &p->st;
}

const uint64_t *parser_lost(const struct parser *p)
{
	return p->lost;
}

const struct parse_opt_record *parser_opt_records(const struct parser *p, size_t *n)
{
	*n = p->nopts;
	return p->opts;
}

static int hex_fields(const char *s, const char *end, uint64_t *out, int n);

/* o METHOD ID VALUE: an optimization method's report.  */
static void opt_line(struct parser *p, const char *s, const char *end)
{
	uint64_t f[3];

	if (hex_fields(s, end, f, 3) != 3 || f[0] > 0xffffffffull) {
		p->st.malformed_lines++;
		return;
	}
	if (p->nopts == p->opts_alloc) {
		p->opts_alloc = p->opts_alloc ? p->opts_alloc * 2 : 16;
		p->opts = xrealloc(p->opts, p->opts_alloc * sizeof(*p->opts));
	}
	p->opts[p->nopts].method = (unsigned)f[0];
	p->opts[p->nopts].id = f[1];
	p->opts[p->nopts].value = f[2];
	p->nopts++;
}

const uint64_t *parser_unfinished(const struct parser *p)
{
	return p->unfinished;
}

const uint64_t *parser_unstarted(const struct parser *p)
{
	return p->unstarted;
}

const struct parse_proc *parser_processes(const struct parser *p, size_t *n)
{
	*n = p->nprocs;
	return p->procs;
}

const struct parse_child *parser_children(const struct parser *p, size_t *n)
{
	*n = p->nchildren;
	return p->children;
}

const struct parse_exec *parser_execs(const struct parser *p, size_t *n)
{
	*n = p->nexecs;
	return p->execs;
}

/* p TID PID; j CHILD PARENT NS FOLLOWED; i PID PROBED.  */
static void proc_line(struct parser *p, char kind, const char *s, const char *end)
{
	uint64_t f[4];
	int want = kind == 'j' ? 4 : 2;

	if (hex_fields(s, end, f, 4) != want || f[0] > 0xffffffffull || f[1] > 0xffffffffull) {
		p->st.malformed_lines++;
		return;
	}
	if (kind == 'i') {
		if (p->nexecs == p->execs_alloc) {
			p->execs_alloc = p->execs_alloc ? 2 * p->execs_alloc : 16;
			p->execs = xrealloc(p->execs, p->execs_alloc * sizeof(*p->execs));
		}
		p->execs[p->nexecs++] = (struct parse_exec){ (int64_t)f[0], f[1] != 0 };
		return;
	}
	if (kind == 'p') {
		if (p->nprocs == p->procs_alloc) {
			p->procs_alloc = p->procs_alloc ? 2 * p->procs_alloc : 16;
			p->procs = xrealloc(p->procs, p->procs_alloc * sizeof(*p->procs));
		}
		p->procs[p->nprocs].thread = p->st.target_pid + (int32_t)(uint32_t)f[0];
		p->procs[p->nprocs++].pid = (int64_t)f[1];
		return;
	}
	if (p->nchildren == p->children_alloc) {
		p->children_alloc = p->children_alloc ? 2 * p->children_alloc : 16;
		p->children = xrealloc(p->children, p->children_alloc * sizeof(*p->children));
	}
	p->children[p->nchildren++] = (struct parse_child){ (int64_t)f[0], (int64_t)f[1], f[2],
							    f[3] != 0 };
}

/* Frames from depth on never returned: counted per probe and in total.  */
static void drop_frames(struct parser *p, struct thread *t, unsigned depth)
{
	unsigned i;

	for (i = depth; i < t->depth; i++)
		p->unfinished[t->stack[i].probe]++;
	p->st.unmatched_entries += t->depth - depth;
	t->depth = depth;
}

/* --- threads: open addressing on tid ------------------------------------ */

static struct thread *thread_slot(struct thread *tab, size_t alloc, int64_t tid)
{
	size_t mask = alloc - 1;
	size_t i = (size_t)(((uint64_t)tid * 0x9e3779b97f4a7c15ull) >> 32) & mask;

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & mask;
	return &tab[i];
}

static struct thread *thread_get(struct parser *p, int64_t tid)
{
	struct thread *t = thread_slot(p->threads, p->nthreads_alloc, tid);

	if (t->used)
		return t;
	if (2 * (p->st.threads + 1) > p->nthreads_alloc) {
		size_t n = p->nthreads_alloc * 2, j;
		struct thread *tab = xcalloc(n, sizeof(*tab));
		for (j = 0; j < p->nthreads_alloc; j++)
			if (p->threads[j].used)
				*thread_slot(tab, n, p->threads[j].tid) = p->threads[j];
		free(p->threads);
		p->threads = tab;
		p->last_thread = NULL;
		p->nthreads_alloc = n;
		t = thread_slot(tab, n, tid);
	}
	t->used = 1;
	t->tid = tid;
	p->st.threads++;
	return t;
}

/* --- aggregates ----------------------------------------------------------- */

static size_t agg_hash(int64_t tid, uint64_t probe, size_t mask)
{
	return (size_t)((((uint64_t)tid << 20) ^ probe) * 0x9e3779b97f4a7c15ull >> 32) & mask;
}

static struct agg_record *agg_get(struct parser *p, int64_t tid, uint64_t probe)
{
	size_t mask, i;

	if (2 * (p->naggs + 1) > p->agg_index_alloc) {
		size_t j, n = p->agg_index_alloc ? p->agg_index_alloc * 2 : 64;
		free(p->agg_index);
		p->agg_index = xcalloc(n, sizeof(*p->agg_index));
		p->agg_index_alloc = n;
		for (j = 0; j < p->naggs; j++) {
			i = agg_hash(p->aggs[j].thread, (uint64_t)p->aggs[j].probe, n - 1);
			while (p->agg_index[i])
				i = (i + 1) & (n - 1);
			p->agg_index[i] = j + 1;
		}
	}
	mask = p->agg_index_alloc - 1;
	for (i = agg_hash(tid, probe, mask); p->agg_index[i]; i = (i + 1) & mask) {
		struct agg_record *a = &p->aggs[p->agg_index[i] - 1];
		if (a->thread == tid && (uint64_t)a->probe == probe)
			return a;
	}
	if (p->naggs == p->aggs_alloc) {
		p->aggs_alloc = p->aggs_alloc ? p->aggs_alloc * 2 : 64;
		p->aggs = xrealloc(p->aggs, p->aggs_alloc * sizeof(*p->aggs));
	}
	memset(&p->aggs[p->naggs], 0, sizeof(p->aggs[0]));
	p->aggs[p->naggs].thread = tid;
	p->aggs[p->naggs].probe = (int)probe;
	p->agg_index[i] = ++p->naggs;
	return &p->aggs[p->naggs - 1];
}

const struct agg_record *parser_aggregates(const struct parser *p, size_t *n)
{
	*n = p->naggs;
	return p->aggs;
}

static int hex_fields(const char *s, const char *end, uint64_t *out, int n);

/* n/m/x/y/h TID ID ...: one line of the script's summaries.  */
static void agg_line(struct parser *p, char kind, const char *s, const char *end)
{
	uint64_t f[4];
	int want = kind == 'n' ? 3 : 4;
	struct agg_record *a;

	if (hex_fields(s, end, f, 4) != want) {
		p->st.malformed_lines++;
		return;
	}
	if (f[1] >= p->nprobes) {
		p->st.unknown_probes++;
		return;
	}
	a = agg_get(p, (int64_t)f[0], f[1]);
	switch (kind) {
	case 'n': a->count = f[2]; break;
	case 'm': a->sum = f[2] << 32 | (f[3] & 0xffffffffull); break;
	case 'x': a->max = f[2] << 32 | (f[3] & 0xffffffffull); break;
	case 'y': a->min = f[2] << 32 | (f[3] & 0xffffffffull); break;
	case 'h':
		if (f[2] < 64)
			a->hist[f[2]] = f[3];
		break;
	}
}

/* --- pairing ------------------------------------------------------------ */

static int emit(struct parser *p, const struct call_record *r)
{
	if (p->failed)
		return -1;
	if (p->sink && p->sink(p->ctx, r) < 0) {
		p->failed = 1;
		return -1;
	}
	return 0;
}

static void push(struct thread *t, int probe, uint64_t ts, uint64_t call_id, uint64_t order)
{
	struct frame *f;

	if (t->depth == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 16;
		t->stack = xrealloc(t->stack, t->alloc * sizeof(*t->stack));
	}
	f = &t->stack[t->depth++];
	f->probe = probe;
	f->ts = ts;
	f->call_id = call_id;
	f->call_order = order;
	f->child = 0;
	f->callees = 0;
	f->children = 0;
	f->callees_insn = 0;
	f->children_insn = 0;
}

/* u CODE TID TS WHY: the innermost open call of probe has no return (the
 * writer paired the thread's returns itself); the frames above it, none
 * of them the writer's, have none either.  */
static void no_return(struct parser *p, struct thread *t, int probe, unsigned why)
{
	unsigned i = t->depth;

	if ((size_t)probe >= p->nprobes) {
		p->st.unknown_probes++;
		return;
	}
	while (i > 0 && t->stack[i - 1].probe != probe)
		i--;
	if (i == 0) {
		p->st.malformed_lines++;
		return;
	}
	p->st.unwound += t->depth - i;
	drop_frames(p, t, i - 1);
	if (why == PARSE_NORET_UNWOUND)
		p->st.unwound++;
	else
		p->st.missed_returns++;
	if (why == PARSE_NORET_LIMIT)
		p->st.beyond_return_limit++;
}

static void process(struct parser *p, const struct event *e)
{
	int64_t tid = p->st.target_pid + e->tid_off;
	struct thread *t = p->last_thread;
	int probe = (int)(e->code >> 1), exit = e->code & 1;
	uint64_t rel = e->ts >= p->base ? e->ts - p->base : 0;
	struct call_record r;

	if (!t || t->tid != tid)
		t = p->last_thread = thread_get(p, tid);

	if (e->noret) {
		no_return(p, t, probe, e->noret - 1u);
		return;
	}
	if (t->has_last && t->last_ts == e->ts && t->last_code == e->code) {
		p->st.duplicates++;
		return;
	}
	t->has_last = 1;
	t->last_ts = e->ts;
	t->last_code = e->code;
	if ((size_t)probe >= p->nprobes) {
		p->st.unknown_probes++;
		return;
	}
	p->st.events++;
	p->recv[probe]++;
	if (rel > p->st.duration)
		p->st.duration = rel;
	if (p->points[probe]) {
		memset(&r, 0, sizeof(r));
		r.probe = probe;
		r.thread = t->tid;
		r.start = rel;
		r.point = 1;
		r.call_id = p->next_call_id++;
		r.call_order = p->orders[probe]++;
		r.depth = t->depth;
		r.caller_probe = t->depth ? t->stack[t->depth - 1].probe : -1;
		r.caller_id = t->depth ? (int64_t)t->stack[t->depth - 1].call_id : -1;
		p->st.points++;
		emit(p, &r);
		return;
	}
	if (!exit) {
		if (p->ret_limit && !p->paired && t->depth >= p->ret_limit) {
			/* no return probe: stacked, it would take the exit of
			 * an outer call of the same function */
			p->unfinished[probe]++;
			p->st.unmatched_entries++;
			p->st.missed_returns++;
			p->st.beyond_return_limit++;
			p->next_call_id++;
			p->orders[probe]++;
			return;
		}
		push(t, probe, rel, p->next_call_id++, p->orders[probe]++);
		if (t->depth > p->st.max_depth)
			p->st.max_depth = t->depth;
		return;
	}
	/* an exit: find its entry, dropping frames that never returned */
	{
		unsigned i = t->depth;
		struct frame *f;

		while (i > 0 && t->stack[i - 1].probe != probe)
			i--;
		if (i == 0) {
			p->st.unmatched_exits++;
			p->unstarted[probe]++;
			return;
		}
		p->st.unwound += t->depth - i;
		drop_frames(p, t, i);
		t->depth = i - 1;
		f = &t->stack[i - 1];
		memset(&r, 0, sizeof(r));
		r.probe = probe;
		r.thread = t->tid;
		r.start = f->ts;
		r.amount = rel >= f->ts ? rel - f->ts : 0;
		r.exclusive = r.amount >= f->child ? r.amount - f->child : 0;
		r.call_id = f->call_id;
		r.call_order = f->call_order;
		r.depth = t->depth;
		r.callees = f->callees;
		r.children = f->children;
		r.callees_insn = f->callees_insn;
		r.children_insn = f->children_insn;
		for (i = 0; i < t->depth && !r.nested; i++)
			r.nested = t->stack[i].probe == probe;
		if (t->depth) {
			struct frame *caller = &t->stack[t->depth - 1];
			caller->child += r.amount;
			caller->callees += f->callees + 1;
			caller->children++;
			caller->callees_insn += f->callees_insn + p->insn[probe];
			caller->children_insn += p->insn[probe];
			r.caller_probe = caller->probe;
			r.caller_id = (int64_t)caller->call_id;
		} else {
			r.caller_probe = -1;
			r.caller_id = -1;
		}
		p->st.calls++;
		emit(p, &r);
	}
}

/* --- reorder window ------------------------------------------------------ */

static void window_pop(struct parser *p)
{
	struct event e = p->win[p->head];

	p->head = (p->head + 1) % PARSE_WINDOW;
	p->count--;
	process(p, &e);
}

static void window_push(struct parser *p, const struct event *e)
{
	size_t pos, i;

	if (p->count == PARSE_WINDOW)
		window_pop(p);
	/* common case: in order, append */
	pos = p->count;
	while (pos > 0 && p->win[(p->head + pos - 1) % PARSE_WINDOW].ts > e->ts)
		pos--;
	if (pos != p->count)
		p->st.reordered++;
	for (i = p->count; i > pos; i--)
		p->win[(p->head + i) % PARSE_WINDOW] = p->win[(p->head + i - 1) % PARSE_WINDOW];
	p->win[(p->head + pos) % PARSE_WINDOW] = *e;
	p->count++;
}

/* --- lines ---------------------------------------------------------------- */

/* Hex digit values plus one; 0 for anything else.  */
static const unsigned char hexd[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* One hex field of 1 to 16 digits at s; the end of its digits, or NULL.  */
static inline const char *hex1(const char *s, const char *end, uint64_t *out)
{
	const char *start = s;
	uint64_t v = 0;
	unsigned d;

	while (s < end && (d = hexd[(unsigned char)*s]) != 0) {
		v = v << 4 | (d - 1);
		s++;
	}
	if (s == start || s - start > 16)
		return NULL;
	*out = v;
	return s;
}

/* Parses up to n hex fields separated by single spaces; returns the count. */
static int hex_fields(const char *s, const char *end, uint64_t *out, int n)
{
	int k = 0;

	while (s < end && k < n) {
		s = hex1(s, end, &out[k]);
		if (!s)
			return -1;
		k++;
		if (s < end) {
			if (*s != ' ')
				return -1;
			s++;
		}
	}
	return s == end ? k : -1;
}

/* CODE TID TS, the common line: 1 when it is one.  */
static inline int event_fields(const char *s, const char *end, uint64_t *f)
{
	if (!(s = hex1(s, end, &f[0])) || s == end || *s != ' ')
		return 0;
	if (!(s = hex1(s + 1, end, &f[1])) || s == end || *s != ' ')
		return 0;
	s = hex1(s + 1, end, &f[2]);
	return s == end;
}

/* Widens a timestamp that may hold only the low 32 bits.  */
static uint64_t unwrap(struct parser *p, uint64_t v)
{
	uint64_t full;

	if (v > 0xffffffffull || !p->have_clock) {
		full = v;
	} else {
		full = (p->est & ~0xffffffffull) | v;
		if (full + 0x80000000ull < p->est)
			full += 0x100000000ull;
		else if (full > p->est + 0x80000000ull && full >= 0x100000000ull)
			full -= 0x100000000ull;
	}
	if (!p->have_clock) {
		p->have_clock = 1;
		p->est = full;
		if (!p->st.saw_begin)
			p->base = full;
	} else if (full > p->est) {
		p->est = full;
	}
	return full;
}

/* v TID SEQ HI LO, l TID CODE N, t TID N: the recorder's dump.  */
static void rec_line(struct parser *p, char kind, const char *s, const char *end)
{
	uint64_t f[4];
	int want = kind == 'v' ? 4 : kind == 'l' ? 3 : 2;

	if (hex_fields(s, end, f, 4) != want || f[0] > 0xffffffffull) {
		p->st.malformed_lines++;
		return;
	}
	p->st.recorder = 1;
	if (kind == 't') {
		p->st.happened += f[1];
		return;
	}
	if (kind == 'l') {
		if ((f[1] >> 1) >= p->nprobes) {
			p->st.unknown_probes += f[2];
		} else {
			p->lost[f[1] >> 1] += f[2];
		}
		p->st.lost_events += f[2];
		return;
	}
	if (f[1] > 0xffffffffull || f[2] > 0xffffffffull || f[3] > 0xffffffffull) {
		p->st.malformed_lines++;
		return;
	}
	if (p->nrecs == p->recs_alloc) {
		p->recs_alloc = p->recs_alloc ? p->recs_alloc * 2 : 4096;
		p->recs = xrealloc(p->recs, p->recs_alloc * sizeof(*p->recs));
	}
	p->recs[p->nrecs].tid_off = (int32_t)(uint32_t)f[0];
	p->recs[p->nrecs].seq = (uint32_t)f[1];
	p->recs[p->nrecs].code = (uint32_t)(f[2] >> 16);
	p->recs[p->nrecs].ts = (f[2] & 0xffff) << 32 | f[3];
	p->nrecs++;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->tid_off != y->tid_off)
		return x->tid_off < y->tid_off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* w ID N: the print transport's script printed N events of probe ID.  */
static void sent_line(struct parser *p, const char *s, const char *end)
{
	uint64_t f[2];

	if (hex_fields(s, end, f, 2) != 2) {
		p->st.malformed_lines++;
		return;
	}
	p->st.sent_counts = 1;
	if (f[0] >= p->nprobes)
		p->st.unknown_probes += f[1];
	else
		p->sent[f[0]] += f[1];
}

/* What the print transport dropped, per probe: printed (w lines) minus
 * carried.  Only when the stream has w lines; a probe that carried more than
 * it printed (an event printed after the count was taken) lost none.  */
static void sent_flush(struct parser *p)
{
	size_t i;

	if (!p->st.sent_counts)
		return;
	for (i = 0; i < p->nprobes; i++)
		if (p->sent[i] > p->recv[i]) {
			p->lost[i] += p->sent[i] - p->recv[i];
			p->st.transport_lost += p->sent[i] - p->recv[i];
		}
}

/* Sorts the recorder's events by time and pairs them; a record seen twice
 * (same thread and sequence number) counts once.  */
static void rec_flush(struct parser *p)
{
	size_t i;

	if (!p->nrecs)
		return;
	qsort(p->recs, p->nrecs, sizeof(*p->recs), rec_cmp);
	for (i = 0; i < p->nrecs; i++) {
		const struct rec *r = &p->recs[i];
		struct event e;
		if (i && r->tid_off == r[-1].tid_off && r->seq == r[-1].seq) {
			p->st.duplicates++;
			continue;
		}
		e.ts = p->base + r->ts;
		e.code = r->code;
		e.tid_off = r->tid_off;
		e.noret = 0;
		process(p, &e);
	}
	if (p->st.happened > p->st.events + p->st.lost_events + p->st.unknown_probes)
		p->st.missing_records =
			p->st.happened - p->st.events - p->st.lost_events - p->st.unknown_probes;
	free(p->recs);
	p->recs = NULL;
	p->nrecs = p->recs_alloc = 0;
}

static void line(struct parser *p, const char *s, const char *end)
{
	uint64_t f[4];
	int k;

	p->st.lines++;
	if (s == end)
		return;
	if (hexd[(unsigned char)*s]) {
		/* an event: CODE TID TS; codes c, d, ... are hex digits too */
		if (event_fields(s, end, f) && f[0] <= 0xffffffffull) {
			struct event e;
			e.code = (uint32_t)f[0];
			e.tid_off = (int32_t)(uint32_t)f[1];
			e.ts = unwrap(p, f[2]);
			e.noret = 0;
			window_push(p, &e);
		} else if (*s == 'd' && s + 1 < end && s[1] == ' ' && hex_fields(s + 2, end, f, 4) == 4) {
			rec_line(p, 'v', s + 2, end);	/* the recorder's dump before v */
		} else {
			p->st.malformed_lines++;
		}
		return;
	}
	if (s + 1 < end && s[1] != ' ') {
		p->st.malformed_lines++;
		return;
	}
	switch (*s) {
	case 's':
		k = hex_fields(s + 2, end, f, 4);
		if (k != 3 && k != 4) {
			p->st.malformed_lines++;
			return;
		}
		p->paired = k == 4 && (f[3] & PARSE_BEGIN_PAIRED);
		p->st.saw_begin = 1;
		p->st.target_pid = (int64_t)f[0];
		p->base = f[1] << 32 | (f[2] & 0xffffffffull);
		p->est = p->base;
		p->have_clock = 1;
		return;
	case 'k':
		if (hex_fields(s + 2, end, f, 1) != 1) {
			p->st.malformed_lines++;
			return;
		}
		unwrap(p, f[0]);
		p->st.ticks++;
		return;
	case 'r':
		if (s + 1 == end)
			return;	/* the probes were armed */
		break;
	case 'q':
		if (s + 1 == end) {
			p->st.saw_end = 1;
			return;
		}
		break;
	case 'n': case 'm': case 'x': case 'y': case 'h':
		if (s + 1 < end) {
			agg_line(p, *s, s + 2, end);
			return;
		}
		break;
	case 'v': case 'l': case 't':
		if (s + 1 < end) {
			rec_line(p, *s, s + 2, end);
			return;
		}
		break;
	case 'w':
		if (s + 1 < end) {
			sent_line(p, s + 2, end);
			return;
		}
		break;
	case 'o':
		if (s + 1 < end) {
			opt_line(p, s + 2, end);
			return;
		}
		break;
	case 'p': case 'j': case 'i':
		if (s + 1 < end) {
			proc_line(p, *s, s + 2, end);
			return;
		}
		break;
	case 'u':
		if (s + 1 < end && hex_fields(s + 2, end, f, 4) == 4 && f[0] <= 0xffffffffull &&
		    f[1] <= 0xffffffffull && f[3] <= PARSE_NORET_LIMIT) {
			struct event e;
			e.code = (uint32_t)f[0];
			e.tid_off = (int32_t)(uint32_t)f[1];
			e.ts = unwrap(p, f[2]);
			e.noret = (uint8_t)(f[3] + 1);
			window_push(p, &e);
			return;
		}
		break;
	}
	p->st.malformed_lines++;
}

int parser_feed(struct parser *p, const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len;

	p->st.bytes += len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t take = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (p->skipping) {
			/* the rest of an over-long line, already counted */
		} else if (p->plen || !nl) {
			if (p->plen + take >= sizeof(p->partial)) {
				p->st.malformed_lines++;
				p->st.lines++;
				p->plen = 0;
				p->skipping = 1;
			} else {
				memcpy(p->partial + p->plen, s, take);
				p->plen += take;
				if (nl) {
					line(p, p->partial, p->partial + p->plen);
					p->plen = 0;
				}
			}
		} else {
			line(p, s, nl);
		}
		if (!nl)
			break;
		p->skipping = 0;
		s = nl + 1;
	}
	return p->failed ? -1 : 0;
}

int parser_finish(struct parser *p)
{
	size_t i;

	if (p->plen || p->skipping) {
		p->st.truncated_lines++;
		p->plen = 0;
		p->skipping = 0;
	}
	while (p->count)
		window_pop(p);
	rec_flush(p);
	sent_flush(p);
	for (i = 0; i < p->nthreads_alloc; i++)
		drop_frames(p, &p->threads[i], 0);
	return p->failed ? -1 : 0;
}

int parser_feed_file(struct parser *p, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	int ret = 0;

	if (fd < 0)
		return pr_error_errno("open %s", path);
	buf = xmalloc(1 << 20);
	for (;;) {
		ssize_t n = read(fd, buf, 1 << 20);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = pr_error_errno("read %s", path);
			break;
		}
		if (n == 0)
			break;
		if (parser_feed(p, buf, (size_t)n) < 0) {
			ret = -1;
			break;
		}
	}
	free(buf);
	close(fd);
	return ret;
}
