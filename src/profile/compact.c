/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "profile"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/compact.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Columns of a block, in the order they are encoded and written.  */
enum { C_SEQ, C_AMOUNT, C_CALLEE, C_END, C_ID, C_ORDER, C_CALLER, C_CTX, NCOLS };
/* Buffered besides: call-id - call-order as a delta in the block, written
 * instead of call-order when shorter ("call-order-gap": a function called
 * only from one place, or recursively, has a constant gap).  */
#define C_GAP NCOLS
#define NVALS (NCOLS + 1)
static const char *const col_name[NCOLS] = {
	"seq", "amount", "callee", "end", "call-id", "call-order", "caller-id", "context",
};

struct ckey {
	int probe;
	int64_t thread;
	unsigned char *buf;	/* NCOLS zigzag varints per call */
	size_t len, alloc, n;
	int64_t prev_seq, prev_order, prev_gap;
	int64_t order0, gap0;	/* prev_order and prev_gap when the block began */
	int mode;		/* of the last block written: 0 order, 1 gap, -1 none */
};

/* Per thread: the previous call's end and call-id, in the order calls come.  */
struct cthread {
	int used;
	int64_t thread, prev_end, prev_id, prev_dist;
};

struct cctx {
	int uid, local;		/* the uid it belongs to, its index there */
	int caller;		/* uid id or -1 */
	unsigned depth;
	int point;
};

struct compact_state {
	struct ckey *karr;	/* in the order they came */
	size_t *khash;		/* open addressing, index in karr + 1 */
	size_t ksize, nkeys, kalloc, buffered;
	uint64_t seq;
	size_t nprobes;
	int *uid_id;		/* probe -> uid id, -1 */
	int *uid_probe;		/* uid id -> probe */
	int *uid_nctx;		/* uid id -> contexts so far */
	size_t nuid;
	struct cthread *threads;
	size_t tsize, nthreads;
	int64_t last_tid;	/* last_thread's id, while last_thread is set */
	struct cthread *last_thread;
	struct cctx *ctx;
	size_t nctx, ctxalloc;
	int *ctxhash;		/* open addressing, ctx id + 1 */
	size_t ctxhsize;
	size_t nblocks;
	struct strbuf out;
	int64_t *cols[NVALS];
	void (*sink)(void *, const char *, size_t);
	void *sink_ctx;
};

struct compact_state *compact_new(size_t nuids, void (*sink)(void *, const char *, size_t),
				   void *ctx)
{
	struct compact_state *c = xcalloc(1, sizeof(*c));
	size_t i;

	c->ksize = 256;
	c->khash = xcalloc(c->ksize, sizeof(*c->khash));
	c->nprobes = nuids;
	c->uid_id = xmalloc((nuids ? nuids : 1) * sizeof(int));
	c->uid_probe = xmalloc((nuids ? nuids : 1) * sizeof(int));
	c->uid_nctx = xcalloc(nuids ? nuids : 1, sizeof(int));
	c->tsize = 16;
	c->threads = xcalloc(c->tsize, sizeof(*c->threads));
	for (i = 0; i < nuids; i++)
		c->uid_id[i] = -1;
	c->ctxhsize = 256;
	c->ctxhash = xcalloc(c->ctxhsize, sizeof(int));
	for (i = 0; i < NVALS; i++)
		c->cols[i] = xmalloc(COMPACT_BLOCK_CALLS * sizeof(int64_t));
	strbuf_init(&c->out, 0);
	c->sink = sink;
	c->sink_ctx = ctx;
	return c;
}

void compact_free(struct compact_state *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nkeys; i++)
		free(c->karr[i].buf);
	for (i = 0; i < NVALS; i++)
		free(c->cols[i]);
	free(c->karr);
	free(c->khash);
	free(c->uid_id);
	free(c->uid_probe);
	free(c->uid_nctx);
	free(c->threads);
	free(c->ctx);
	free(c->ctxhash);
	strbuf_release(&c->out);
	free(c);
}

/* MurmurHash3's finalizer: every input bit moves the low bits the tables
 * index by (a plain product left them to the low bits of the ids, and
 * linear probing clustered).  */
static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static size_t hash_key(int probe, int64_t thread)
{
	uint64_t h = (uint64_t)thread * 0x9e3779b97f4a7c15ull ^ (uint64_t)(unsigned)probe * 0xff51afd7ed558ccdull;
	return (size_t)mix64(h);
}

/* Keys live in karr in the order they first came, so that the blocks of a
 * flush come in an order that does not depend on probe ids.  */
static struct ckey *key_get(struct compact_state *c, int probe, int64_t thread)
{
	size_t i;

	if ((c->nkeys + 1) * 2 > c->ksize) {
		size_t j;
		free(c->khash);
		c->ksize *= 2;
		c->khash = xcalloc(c->ksize, sizeof(*c->khash));
		for (j = 0; j < c->nkeys; j++) {
			for (i = hash_key(c->karr[j].probe, c->karr[j].thread) & (c->ksize - 1);
			     c->khash[i]; i = (i + 1) & (c->ksize - 1))
				;
			c->khash[i] = j + 1;
		}
	}
	for (i = hash_key(probe, thread) & (c->ksize - 1); c->khash[i]; i = (i + 1) & (c->ksize - 1)) {
		struct ckey *k = &c->karr[c->khash[i] - 1];
		if (k->probe == probe && k->thread == thread)
			return k;
	}
	if (c->nkeys == c->kalloc) {
		c->kalloc = c->kalloc ? c->kalloc * 2 : 64;
		c->karr = xrealloc(c->karr, c->kalloc * sizeof(*c->karr));
	}
	c->khash[i] = ++c->nkeys;
	memset(&c->karr[c->nkeys - 1], 0, sizeof(*c->karr));
	c->karr[c->nkeys - 1].probe = probe;
	c->karr[c->nkeys - 1].thread = thread;
	c->karr[c->nkeys - 1].mode = -1;
	return &c->karr[c->nkeys - 1];
}

static int uid_of_probe(struct compact_state *c, int probe)
{
	if (probe < 0 || (size_t)probe >= c->nprobes)
		return -1;
	if (c->uid_id[probe] < 0) {
		c->uid_probe[c->nuid] = probe;
		c->uid_id[probe] = (int)c->nuid++;
	}
	return c->uid_id[probe];
}

static size_t hash_ctx(const struct cctx *x)
{
	uint64_t h = ((uint64_t)(unsigned)x->caller * 0x9e3779b97f4a7c15ull) ^
		     ((uint64_t)(unsigned)x->uid * 0xff51afd7ed558ccdull) ^
		     ((uint64_t)x->depth * 0xc2b2ae3d27d4eb4full) ^ (uint64_t)x->point;
	return (size_t)mix64(h);
}

static struct cthread *thread_get(struct cthread **tab, size_t *size, size_t *n, int64_t thread)
{
	size_t i;

	if ((*n + 1) * 2 > *size) {
		struct cthread *old = *tab;
		size_t oldn = *size, j;
		*size *= 2;
		*tab = xcalloc(*size, sizeof(**tab));
		for (j = 0; j < oldn; j++) {
			if (!old[j].used)
				continue;
			for (i = hash_key(-1, old[j].thread) & (*size - 1); (*tab)[i].used;
			     i = (i + 1) & (*size - 1))
				;
			(*tab)[i] = old[j];
		}
		free(old);
	}
	for (i = hash_key(-1, thread) & (*size - 1); (*tab)[i].used; i = (i + 1) & (*size - 1))
		if ((*tab)[i].thread == thread)
			return &(*tab)[i];
	(*tab)[i].used = 1;
	(*tab)[i].thread = thread;
	(*n)++;
	return &(*tab)[i];
}

static int ctx_of(struct compact_state *c, int uid, int caller, unsigned depth, int point)
{
	struct cctx x = { uid, 0, caller, depth, point };
	size_t i;

	if ((c->nctx + 1) * 2 > c->ctxhsize) {
		size_t j;
		free(c->ctxhash);
		c->ctxhsize *= 2;
		c->ctxhash = xcalloc(c->ctxhsize, sizeof(int));
		for (j = 0; j < c->nctx; j++) {
			for (i = hash_ctx(&c->ctx[j]) & (c->ctxhsize - 1); c->ctxhash[i];
			     i = (i + 1) & (c->ctxhsize - 1))
				;
			c->ctxhash[i] = (int)j + 1;
		}
	}
	for (i = hash_ctx(&x) & (c->ctxhsize - 1); c->ctxhash[i]; i = (i + 1) & (c->ctxhsize - 1)) {
		const struct cctx *y = &c->ctx[c->ctxhash[i] - 1];
		if (y->uid == uid && y->caller == caller && y->depth == depth && y->point == point)
			return y->local;
	}
	if (c->nctx == c->ctxalloc) {
		c->ctxalloc = c->ctxalloc ? c->ctxalloc * 2 : 64;
		c->ctx = xrealloc(c->ctx, c->ctxalloc * sizeof(*c->ctx));
	}
	x.local = c->uid_nctx[uid]++;
	c->ctx[c->nctx] = x;
	c->ctxhash[i] = (int)++c->nctx;
	return x.local;
}

static void put_var(struct ckey *k, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);

	while (u >= 0x80) {
		k->buf[k->len++] = (unsigned char)(u | 0x80);
		u >>= 7;
	}
	k->buf[k->len++] = (unsigned char)u;
}

static int64_t get_var(const unsigned char **p)
{
	uint64_t u = 0;
	unsigned shift = 0;

	while (**p & 0x80) {
		u |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
		(*p)++;
	}
	u |= (uint64_t)**p << shift;
	(*p)++;
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static void add_int(struct strbuf *sb, int64_t v)
{
	char tmp[24];
	int i = 24, neg = v < 0;
	uint64_t u = neg ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;

	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		tmp[--i] = '-';
	strbuf_add(sb, tmp + i, (size_t)(24 - i));
}

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
			      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
			      "8081828384858687888990919293949596979899";

/* Decimal at p; returns the end.  */
static char *fmt_int(char *p, int64_t v)
{
	uint64_t u;
	char *e;
	size_t n;

	if (v < 0) {
		*p++ = '-';
		u = (uint64_t)(-(v + 1)) + 1;
	} else {
		u = (uint64_t)v;
	}
	/* most columns hold small deltas */
	if (u < 10) {
		*p = (char)('0' + u);
		return p + 1;
	}
	if (u < 100) {
		memcpy(p, digits2 + u * 2, 2);
		return p + 2;
	}
	n = u < 1000 ? 3 : u < 10000 ? 4 : u < 100000 ? 5 : u < 1000000 ? 6 : 7;
	if (n == 7) {
		uint64_t t = u / 1000000;
		while (t) {
			n++;
			t /= 10;
		}
		n--;
	}
	e = p + n;
	p = e;
	while (u >= 100) {
		unsigned d = (unsigned)(u % 100) * 2;
		u /= 100;
		p -= 2;
		memcpy(p, digits2 + d, 2);
	}
	if (u >= 10) {
		p -= 2;
		memcpy(p, digits2 + u * 2, 2);
	} else {
		*--p = (char)('0' + u);
	}
	return e;
}

static size_t digits(int64_t v)
{
	uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
	size_t d = v < 0 ? 2 : 1;

	while (u >= 10) {
		u /= 10;
		d++;
	}
	return d;
}

/* Bytes a column takes as written.  */
static size_t column_cost(const int64_t *v, size_t n)
{
	size_t i, cost = 1;
	int same = 1;

	for (i = 1; i < n && same; i++)
		same = v[i] == v[0];
	if (same)
		return digits(v[0]);
	for (i = 0; i < n; i++)
		cost += digits(v[i]) + 1;
	return cost;
}

#define PUTS(p, s) (memcpy(p, s, sizeof(s) - 1), (p) += sizeof(s) - 1)

static void emit(struct compact_state *c, struct ckey *k)
{
	const unsigned char *in = k->buf;
	struct strbuf *sb = &c->out;
	size_t i, j;
	char *p;

	if (!k->n)
		return;
	for (i = 0; i < k->n; i++)
		for (j = 0; j < NVALS; j++)
			c->cols[j][i] = get_var(&in);
	/* call-order and its gap continue from the key's last block only when
	 * it was written the same way; otherwise they start from 0 */
	if (k->mode != 0)
		c->cols[C_ORDER][0] += k->order0;
	if (k->mode != 1)
		c->cols[C_GAP][0] += k->gap0;
	/* 21 bytes per value at most, names and punctuation below 256 */
	sb->len = 0;
	strbuf_grow(sb, k->n * NCOLS * 21 + 256);
	p = sb->buf;
	if (c->nblocks++)
		*p++ = ',';
	PUTS(p, "{\"uid\":");
	p = fmt_int(p, c->uid_id[k->probe]);
	PUTS(p, ",\"thread\":");
	p = fmt_int(p, k->thread);
	PUTS(p, ",\"n\":");
	p = fmt_int(p, (int64_t)k->n);
	for (j = 0; j < NCOLS; j++) {
		int gap = j == C_ORDER && column_cost(c->cols[C_GAP], k->n) <
						  column_cost(c->cols[C_ORDER], k->n);
		if (j == C_ORDER)
			k->mode = gap;
		int64_t *v = c->cols[gap ? C_GAP : j];
		const char *name = gap ? "call-order-gap" : col_name[j];
		size_t len = strlen(name);
		int same = 1;
		*p++ = ',';
		*p++ = '"';
		memcpy(p, name, len);
		p += len;
		*p++ = '"';
		*p++ = ':';
		for (i = 1; i < k->n && same; i++)
			same = v[i] == v[0];
		if (same) {
			p = fmt_int(p, v[0]);
			continue;
		}
		*p++ = '[';
		for (i = 0; i < k->n; i++) {
			p = fmt_int(p, v[i]);
			*p++ = ',';
		}
		p[-1] = ']';
	}
	*p++ = '}';
	sb->len = (size_t)(p - sb->buf);
	sb->buf[sb->len] = '\0';
	c->sink(c->sink_ctx, sb->buf, sb->len);
	sb->len = 0;
	c->buffered -= k->len;
	free(k->buf);
	k->buf = NULL;
	k->len = k->alloc = k->n = 0;
	/* prev_* carry over: the next block of the key continues the deltas */
}

static void emit_all(struct compact_state *c)
{
	size_t i;

	for (i = 0; i < c->nkeys; i++)
		emit(c, &c->karr[i]);
}

int compact_add(struct compact_state *c, const struct call_record *r)
{
	struct ckey *k;
	struct cthread *t;
	int64_t caller;
	size_t before;
	int uid, cuid, ctx;

	if (r->caller_id < -1 || (r->caller_id >= 0 && (uint64_t)r->caller_id == r->call_id))
		return -1;
	k = key_get(c, r->probe, r->thread);
	uid = uid_of_probe(c, r->probe);
	cuid = uid_of_probe(c, r->caller_probe);
	ctx = ctx_of(c, uid, cuid, r->depth, r->point);
	if (c->last_thread && c->last_tid == r->thread) {
		t = c->last_thread;
	} else {
		/* the table may grow: the pointer is good until the next miss */
		t = c->last_thread = thread_get(&c->threads, &c->tsize, &c->nthreads, r->thread);
		c->last_tid = r->thread;
	}
	caller = r->caller_id < 0 ? 0 : (int64_t)(r->call_id - (uint64_t)r->caller_id);
	if (k->len + NVALS * 10 > k->alloc) {
		k->alloc = k->alloc ? k->alloc * 2 : 256;
		k->buf = xrealloc(k->buf, k->alloc);
	}
	before = k->len;
	if (!k->n) {
		k->order0 = k->prev_order;
		k->gap0 = k->prev_gap;
	}
	put_var(k, (int64_t)c->seq - k->prev_seq);
	put_var(k, (int64_t)r->amount);
	put_var(k, (int64_t)(r->amount - r->exclusive));
	put_var(k, (int64_t)(r->start + r->amount) - t->prev_end);
	put_var(k, (int64_t)r->call_id - t->prev_id);
	put_var(k, (int64_t)r->call_order - k->prev_order);
	put_var(k, caller - t->prev_dist);
	put_var(k, ctx);
	put_var(k, (int64_t)(r->call_id - r->call_order) - k->prev_gap);
	k->prev_seq = (int64_t)c->seq++;
	t->prev_end = (int64_t)(r->start + r->amount);
	t->prev_id = (int64_t)r->call_id;
	t->prev_dist = caller;
	k->prev_order = (int64_t)r->call_order;
	k->prev_gap = (int64_t)(r->call_id - r->call_order);
	k->n++;
	c->buffered += k->len - before;
	if (k->n == COMPACT_BLOCK_CALLS)
		emit(c, k);
	else if (c->buffered >= COMPACT_BUFFER_BYTES)
		emit_all(c);
	return 0;
}

void compact_flush(struct compact_state *c)
{
	emit_all(c);
}

const char *compact_chunks(struct compact_state *c, char *const *names, long *len)
{
	struct strbuf *sb = &c->out;
	size_t i, *at = xcalloc(c->nuid + 1, sizeof(size_t));
	const struct cctx **byuid = xmalloc((c->nctx ? c->nctx : 1) * sizeof(*byuid));

	/* contexts grouped by uid, each group in its local order */
	for (i = 0; i < c->nctx; i++)
		at[c->ctx[i].uid + 1]++;
	for (i = 0; i < c->nuid; i++)
		at[i + 1] += at[i];
	for (i = 0; i < c->nctx; i++)
		byuid[at[c->ctx[i].uid] + (size_t)c->ctx[i].local] = &c->ctx[i];
	sb->len = 0;
	strbuf_addstr(sb, "\"uids\":[");
	for (i = 0; i < c->nuid; i++) {
		if (i)
			strbuf_addch(sb, ',');
		strbuf_addstr(sb, names[c->uid_probe[i]]);
	}
	strbuf_addstr(sb, "],\"contexts\":[");
	for (i = 0; i < c->nuid; i++) {
		size_t j;
		strbuf_addstr(sb, i ? ",[" : "[");
		for (j = at[i]; j < at[i + 1]; j++) {
			strbuf_addstr(sb, j > at[i] ? ",[" : "[");
			add_int(sb, byuid[j]->caller);
			strbuf_addch(sb, ',');
			add_int(sb, byuid[j]->depth);
			strbuf_addch(sb, ',');
			add_int(sb, byuid[j]->point);
			strbuf_addch(sb, ']');
		}
		strbuf_addch(sb, ']');
	}
	strbuf_addch(sb, ']');
	free(at);
	free(byuid);
	*len = (long)sb->len;
	return strbuf_str(sb);
}

/* --- reading ------------------------------------------------------------------ */

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

int compact_present(struct json_object *snapshot)
{
	struct json_object *c = member(snapshot, "calls");
	return c && json_object_is_type(c, json_type_array);
}

static int cmp_seq(const void *a, const void *b)
{
	const struct compact_call *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Value i of a column (a list of n integers or one integer).  */
static int column_ok(struct json_object *col, size_t n)
{
	size_t i;

	if (json_object_is_type(col, json_type_int))
		return 1;
	if (!json_object_is_type(col, json_type_array) || json_object_array_length(col) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(col, i), json_type_int))
			return 0;
	return 1;
}

static int64_t column_at(struct json_object *col, size_t i)
{
	if (json_object_is_type(col, json_type_int))
		return json_object_get_int64(col);
	return json_object_get_int64(json_object_array_get_idx(col, i));
}

/* Decoding: where each uid and thread's deltas stand.  The gap and the
 * order are both kept since a key's blocks may switch between them; a
 * switch starts from the writer's state of both, which is the same.  */
struct kstate {
	int used, uid, mode;	/* mode: as struct ckey's, kept 0 until used */
	int64_t thread, seq, order, gap;
};

static struct kstate *kstate_get(struct kstate **tab, size_t *size, size_t *n, int uid,
				 int64_t thread)
{
	size_t i;

	if ((*n + 1) * 2 > *size) {
		struct kstate *old = *tab;
		size_t oldn = *size, j;
		*size *= 2;
		*tab = xcalloc(*size, sizeof(**tab));
		for (j = 0; j < oldn; j++) {
			if (!old[j].used)
				continue;
			for (i = hash_key(old[j].uid, old[j].thread) & (*size - 1); (*tab)[i].used;
			     i = (i + 1) & (*size - 1))
				;
			(*tab)[i] = old[j];
		}
		free(old);
	}
	for (i = hash_key(uid, thread) & (*size - 1); (*tab)[i].used; i = (i + 1) & (*size - 1))
		if ((*tab)[i].uid == uid && (*tab)[i].thread == thread)
			return &(*tab)[i];
	(*tab)[i].used = 1;
	(*tab)[i].uid = uid;
	(*tab)[i].thread = thread;
	(*tab)[i].mode = -1;
	(*n)++;
	return &(*tab)[i];
}

static int ctx_ok(struct json_object *x, size_t nu)
{
	int64_t caller;

	return json_object_is_type(x, json_type_array) && json_object_array_length(x) == 3 &&
	       column_ok(x, 3) && (caller = column_at(x, 0)) >= -1 && caller < (int64_t)nu &&
	       column_at(x, 1) >= 0 && column_at(x, 1) <= UINT32_MAX;
}

int compact_decode(struct json_object *snapshot, struct json_object *chunks, const char *what,
		   struct compact_call **out, size_t *nout, const char ***names, size_t *nnames)
{
	struct json_object *calls = member(snapshot, "calls"), *uids = member(chunks, "uids");
	struct json_object *ctxs = member(chunks, "contexts");
	struct compact_call *v = NULL;
	struct cthread *threads;
	size_t n = 0, alloc = 0, b, i, j, nu, tsize = 16, nthreads = 0, ksize = 64, nkeys = 0;
	struct kstate *keys;
	const char **nm = NULL;

	*out = NULL;
	*nout = 0;
	*names = NULL;
	*nnames = 0;
	if (!calls || !json_object_is_type(calls, json_type_array))
		return 0;
	if (!uids || !json_object_is_type(uids, json_type_array) || !ctxs ||
	    !json_object_is_type(ctxs, json_type_array) ||
	    json_object_array_length(ctxs) != json_object_array_length(uids))
		return pr_error("%s: compact calls need chunks.uids and chunks.contexts, lists of "
				"the same length", what);
	nu = json_object_array_length(uids);
	nm = xcalloc(nu ? nu : 1, sizeof(*nm));
	for (i = 0; i < nu; i++) {
		struct json_object *s = json_object_array_get_idx(uids, i);
		struct json_object *cl = json_object_array_get_idx(ctxs, i);
		if (!json_object_is_type(s, json_type_string)) {
			free(nm);
			return pr_error("%s: chunks.uids[%zu] must be a string", what, i);
		}
		nm[i] = json_object_get_string(s);
		for (j = 0; json_object_is_type(cl, json_type_array) &&
			    j < json_object_array_length(cl) &&
			    ctx_ok(json_object_array_get_idx(cl, j), nu);
		     j++)
			;
		if (!json_object_is_type(cl, json_type_array) || j < json_object_array_length(cl)) {
			free(nm);
			return pr_error("%s: chunks.contexts[%zu] must be a list of [caller uid or -1, "
					"depth, point]", what, i);
		}
	}
	/* allocated once the names are read: the refusals above return at once */
	keys = xcalloc(ksize, sizeof(*keys));
	for (b = 0; b < json_object_array_length(calls); b++) {
		struct json_object *blk = json_object_array_get_idx(calls, b), *col[NCOLS], *cl;
		struct json_object *u = member(blk, "uid"), *t = member(blk, "thread"), *jn = member(blk, "n");
		int64_t uid, bn, seq, order, nctx;
		struct kstate *ks;
		int gap;
		if (!u || !json_object_is_type(u, json_type_int) || (uid = json_object_get_int64(u)) < 0 ||
		    uid >= (int64_t)nu || !t || !json_object_is_type(t, json_type_int) || !jn ||
		    !json_object_is_type(jn, json_type_int) || (bn = json_object_get_int64(jn)) < 0 ||
		    bn > COMPACT_BLOCK_CALLS) {
			pr_error("%s: snapshots[0].calls[%zu] needs uid (an index of chunks.uids), "
				 "thread and n (at most %d)", what, b, COMPACT_BLOCK_CALLS);
			goto bad;
		}
		cl = json_object_array_get_idx(ctxs, (size_t)uid);
		ks = kstate_get(&keys, &ksize, &nkeys, (int)uid, json_object_get_int64(t));
		nctx = (int64_t)json_object_array_length(cl);
		gap = 0;
		for (j = 0; j < NCOLS; j++) {
			col[j] = member(blk, col_name[j]);
			if (j == C_ORDER && !col[j] && (col[j] = member(blk, "call-order-gap")))
				gap = 1;
			if (!col[j] || !column_ok(col[j], (size_t)bn)) {
				pr_error("%s: snapshots[0].calls[%zu].%s must be one integer or a "
					 "list of n = %" PRId64, what, b, col_name[j], bn);
				goto bad;
			}
		}
		/* seq and call-order (or its gap) continue from the key's last block */
		seq = ks->seq;
		order = ks->mode != gap ? 0 : gap ? ks->gap : ks->order;
		ks->mode = gap;
		for (i = 0; i < (size_t)bn; i++) {
			struct compact_call *cc;
			int64_t ctx = column_at(col[C_CTX], i);
			struct json_object *x;
			if (ctx < 0 || ctx >= nctx) {
				pr_error("%s: snapshots[0].calls[%zu].context[%zu] is not an index of "
					 "chunks.contexts[%" PRId64 "]", what, b, i, uid);
				goto bad;
			}
			if (column_at(col[C_AMOUNT], i) < 0 || column_at(col[C_CALLEE], i) < 0 ||
			    column_at(col[C_CALLEE], i) > column_at(col[C_AMOUNT], i)) {
				pr_error("%s: snapshots[0].calls[%zu], call %zu: amount %" PRId64
					 " and callee %" PRId64 " must be 0 <= callee <= amount: "
					 "amounts are never negative",
					 what, b, i, column_at(col[C_AMOUNT], i),
					 column_at(col[C_CALLEE], i));
				goto bad;
			}
			x = json_object_array_get_idx(cl, (size_t)ctx);
			if (n == alloc) {
				alloc = alloc ? alloc * 2 : 1024;
				v = xrealloc(v, alloc * sizeof(*v));
			}
			cc = &v[n++];
			memset(cc, 0, sizeof(*cc));
			seq += column_at(col[C_SEQ], i);
			order += column_at(col[C_ORDER], i);
			cc->seq = (uint64_t)seq;
			cc->r.probe = (int)uid;
			cc->r.thread = json_object_get_int64(t);
			cc->r.amount = (uint64_t)column_at(col[C_AMOUNT], i);
			cc->r.exclusive = cc->r.amount - (uint64_t)column_at(col[C_CALLEE], i);
			/* deltas from the thread's previous call, resolved below */
			cc->r.start = (uint64_t)column_at(col[C_END], i);
			cc->r.call_id = (uint64_t)column_at(col[C_ID], i);
			cc->r.caller_id = column_at(col[C_CALLER], i);
			cc->r.call_order = (uint64_t)order;	/* with gap: call-id - call-order */
			cc->gap = (unsigned char)gap;
			cc->r.caller_probe = (int)column_at(x, 0);
			cc->r.depth = (unsigned)column_at(x, 1);
			cc->r.point = column_at(x, 2) != 0;
		}
		ks->seq = seq;
		if (gap)
			ks->gap = order;
		else
			ks->order = order;
	}
	free(keys);
	keys = NULL;
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_seq);
	threads = xcalloc(tsize, sizeof(*threads));
	for (i = 0; i < n; i++) {
		struct call_record *r = &v[i].r;
		struct cthread *t = thread_get(&threads, &tsize, &nthreads, r->thread);
		int64_t end = t->prev_end + (int64_t)r->start, dist = t->prev_dist + r->caller_id;
		r->call_id = (uint64_t)(t->prev_id + (int64_t)r->call_id);
		r->start = (uint64_t)end - r->amount;
		r->caller_id = dist ? (int64_t)r->call_id - dist : -1;
		t->prev_end = end;
		t->prev_id = (int64_t)r->call_id;
		t->prev_dist = dist;
		if (v[i].gap)
			r->call_order = r->call_id - r->call_order;
	}
	free(threads);
	*out = v;
	*nout = n;
	*names = nm;
	*nnames = nu;
	return 0;
bad:
	free(keys);
	free(v);
	free(nm);
	return -1;
}
