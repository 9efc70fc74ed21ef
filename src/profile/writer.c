/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "profile"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/compact.h"
#include "profile/writer.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/quantile.h"
#include "util/strbuf.h"

#define WBUF 65536

/* One probe's recorded calls, in order: inclusive and calibrated amounts.  */
struct summary_values {
	double *raw, *cal;
	size_t n, alloc;
};

static void flush(struct profile_writer *w)
{
	if (w->blen && fwrite(w->buf, 1, w->blen, w->f) != w->blen)
		w->error = 1;
	w->blen = 0;
}

static void put(struct profile_writer *w, const char *s, size_t n)
{
	if (w->blen + n > WBUF) {
		flush(w);
		if (n > WBUF) {
			if (fwrite(s, 1, n, w->f) != n)
				w->error = 1;
			return;
		}
	}
	memcpy(w->buf + w->blen, s, n);
	w->blen += n;
}

static void puts_(struct profile_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

/* Unsigned decimal, fast.  */
static void putu(struct profile_writer *w, uint64_t v)
{
	char tmp[24];
	int i = 24;

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, tmp + i, (size_t)(24 - i));
}

static void puti(struct profile_writer *w, int64_t v)
{
	if (v < 0) {
		put(w, "-", 1);
		putu(w, (uint64_t)(-(v + 1)) + 1);
	} else {
		putu(w, (uint64_t)v);
	}
}

static void put_json(struct profile_writer *w, struct json_object *o)
{
	puts_(w, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* Opens snapshots[0] up to where the calls go: its resources, or in the
 * compact form (profile/compact.h) its calls.  */
static void open_snapshot(struct profile_writer *w)
{
	puts_(w, w->cs ? ",\"snapshots\":[{\"resources\":[],\"calls\":["
		       : ",\"snapshots\":[{\"resources\":[");
}

/* Where the compact form's blocks go.  */
static void put_block(void *ctx, const char *text, size_t len)
{
	put(ctx, text, len);
}

static int call_error(struct profile_writer *w)
{
	w->error = 1;
	return pr_error("a call's caller-id is its own call-id or below -1: it has no compact "
			"form; write it with --per-call");
}

int profile_writer_open(struct profile_writer *w, const char *path,
			const struct profile_column *cols, size_t ncols, const char *origin, struct json_object *header,
			struct json_object *collector_info, struct json_object *machine, int per_call)
{
	int fd;
	size_t i;

	memset(w, 0, sizeof(*w));
	w->per_call = per_call;
	w->path = xstrdup(path);
	fs_remove_dead_temps_beside(path);
	fd = fs_open_temp_beside(path, &w->tmp);
	if (fd < 0)
		return -1;
	fchmod(fd, 0644);
	w->f = fdopen(fd, "w");
	if (!w->f) {
		close(fd);
		unlink(w->tmp);
		return pr_error_errno("fdopen %s", w->tmp);
	}
	w->buf = xmalloc(WBUF);
	w->uids = xcalloc(ncols ? ncols : 1, sizeof(*w->uids));
	w->sum = xcalloc(ncols ? ncols : 1, sizeof(*w->sum));
	w->nuids = ncols;
	for (i = 0; i < ncols; i++) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_add_json_str(&sb, cols[i].name);
		w->uids[i] = strbuf_detach(&sb);
		w->sum[i].min = UINT64_MAX;
		w->sum[i].sampled = cols[i].sampling;
		w->sum[i].entry = cols[i].entry;
	}
	if (per_call != PROFILE_SUMMARIES)
		w->vals = xcalloc(ncols ? ncols : 1, sizeof(*w->vals));
	if (per_call == PROFILE_COMPACT)
		w->cs = compact_new(ncols, put_block, w);
	puts_(w, "{");
	if (origin) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, "\"origin\":");
		strbuf_add_json_str(&sb, origin);
		strbuf_addch(&sb, ',');
		put(w, sb.buf, sb.len);
		strbuf_release(&sb);
	}
	puts_(w, "\"header\":");
	put_json(w, header);
	puts_(w, ",\"collector_info\":");
	put_json(w, collector_info);
	if (machine) {
		puts_(w, ",\"machine\":");
		put_json(w, machine);
	}
	puts_(w, ",\"postprocessors\":[]");
	open_snapshot(w);
	return 0;
}

int profile_writer_open_stream(struct profile_writer *w, FILE *f, size_t n,
			       const char *const *names, const char *prefix, int form)
{
	size_t i;

	memset(w, 0, sizeof(*w));
	w->per_call = form;
	w->f = f;
	w->buf = xmalloc(WBUF);
	w->nuids = n;
	w->uids = xcalloc(n ? n : 1, sizeof(*w->uids));
	w->sum = xcalloc(n ? n : 1, sizeof(*w->sum));
	for (i = 0; i < n; i++) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_add_json_str(&sb, names[i]);
		w->uids[i] = strbuf_detach(&sb);
		w->sum[i].min = UINT64_MAX;
	}
	if (form == PROFILE_COMPACT)
		w->cs = compact_new(n, put_block, w);
	puts_(w, "{");
	puts_(w, prefix);
	open_snapshot(w);
	return 0;
}

/* floor(log2(v)), 0 for 0 and 1.  */
static unsigned log2_bucket(uint64_t v)
{
	return v > 1 ? 63u - (unsigned)__builtin_clzll(v) : 0;
}

static double own_cost(const struct probe_cost *c, int stepped, int insn)
{
	double v = stepped && c->stepped_ns > 0 ? c->stepped_ns : c->probe_ns;

	if (insn && c->insn_probe_ns > 0)
		v += c->insn_probe_ns - c->probe_ns;
	return v;
}

static double insn_pair(const struct probe_cost *c)
{
	return c->insn_pair_ns > 0 ? c->insn_pair_ns : c->pair_ns;
}

double probe_cost_inclusive(const struct probe_cost *c, int stepped, int insn, uint64_t amount,
			    uint64_t callees, uint64_t callees_insn)
{
	double v = (double)amount - own_cost(c, stepped, insn) -
		   (double)(callees - callees_insn) * c->pair_ns - (double)callees_insn * insn_pair(c);

	return v > 0 ? v : 0;
}

double probe_cost_exclusive(const struct probe_cost *c, int stepped, int insn, uint64_t exclusive,
			    uint64_t children, uint64_t children_insn)
{
	double outside = c->pair_ns > c->probe_ns ? c->pair_ns - c->probe_ns : 0;
	double iprobe = c->insn_probe_ns > 0 ? c->insn_probe_ns : c->probe_ns;
	double ioutside = insn_pair(c) > iprobe ? insn_pair(c) - iprobe : 0;
	double v = (double)exclusive - own_cost(c, stepped, insn) -
		   (double)(children - children_insn) * outside - (double)children_insn * ioutside;

	return v > 0 ? v : 0;
}

void profile_writer_calibrate(struct profile_writer *w, const struct probe_cost *cost,
			      const unsigned char *stepped)
{
	size_t i;

	w->cost = cost;
	w->stepped = stepped;
	for (i = 0; stepped && i < w->nuids; i++)
		w->sum[i].stepped = stepped[i] && cost->stepped_ns > 0;
}

void profile_writer_set_returns(struct profile_writer *w, const unsigned char *insn)
{
	size_t i;

	w->insn = insn;
	for (i = 0; insn && i < w->nuids; i++)
		w->sum[i].ret = insn[i] ? 2 : 1;
}

static void drop_values(struct profile_writer *w)
{
	size_t i;

	for (i = 0; w->vals && i < w->nuids; i++) {
		free(w->vals[i].raw);
		free(w->vals[i].cal);
	}
	free(w->vals);
	w->vals = NULL;
}

static void keep_value(struct profile_writer *w, size_t probe, double raw, double cal)
{
	struct summary_values *v = &w->vals[probe];

	if (w->nvals >= SUMMARY_EXACT_MAX) {
		drop_values(w);	/* too many to hold: histograms for all */
		return;
	}
	if (v->n == v->alloc) {
		v->alloc = v->alloc ? 2 * v->alloc : 16;
		v->raw = xrealloc(v->raw, v->alloc * sizeof(*v->raw));
		v->cal = xrealloc(v->cal, v->alloc * sizeof(*v->cal));
	}
	v->raw[v->n] = raw;
	v->cal[v->n++] = cal;
	w->nvals++;
}

int profile_writer_call(void *ctx, const struct call_record *r)
{
	struct profile_writer *w = ctx;
	struct probe_summary *s = &w->sum[r->probe];
	double ci;

	s->count++;
	s->sum += r->amount;
	if (!r->nested)
		s->total += r->amount;
	s->exclusive += r->exclusive;
	if (r->amount < s->min)
		s->min = r->amount;
	if (r->amount > s->max)
		s->max = r->amount;
	s->hist[log2_bucket(r->amount)]++;
	ci = (double)r->amount;
	if (w->cost && !r->point) {
		int st = w->stepped && w->stepped[r->probe];
		int in = w->insn && w->insn[r->probe];
		ci = probe_cost_inclusive(w->cost, st, in, r->amount, r->callees, r->callees_insn);
		s->cal_hist[log2_bucket((uint64_t)(ci + 0.5))]++;
		s->calibrated = 1;
		s->cal_sum += ci;
		if (!r->nested)
			s->cal_total += ci;
		s->cal_exclusive += probe_cost_exclusive(w->cost, st, in, r->exclusive, r->children,
							 r->children_insn);
	}
	if (w->vals)
		keep_value(w, r->probe, (double)r->amount, ci);
	if (!w->per_call)
		return w->error ? -1 : 0;
	if (w->cs) {
		w->nresources++;
		if (compact_add(w->cs, r) < 0)
			return call_error(w);
		return w->error ? -1 : 0;
	}
	if (w->nresources++)
		put(w, ",", 1);
	puts_(w, "{\"amount\":");
	putu(w, r->amount);
	puts_(w, ",\"exclusive\":");
	putu(w, r->exclusive);
	puts_(w, ",\"uid\":");
	puts_(w, w->uids[r->probe]);
	puts_(w, r->point ? ",\"type\":\"mixed\",\"subtype\":\"point\",\"thread\":"
			  : ",\"type\":\"mixed\",\"subtype\":\"time delta\",\"thread\":");
	puti(w, r->thread);
	puts_(w, ",\"call-order\":");
	putu(w, r->call_order);
	puts_(w, ",\"timestamp\":");
	putu(w, r->start);
	puts_(w, ",\"depth\":");
	putu(w, r->depth);
	puts_(w, ",\"call-id\":");
	putu(w, r->call_id);
	puts_(w, ",\"caller-id\":");
	puti(w, r->caller_id);
	puts_(w, ",\"caller\":");
	puts_(w, r->caller_probe >= 0 ? w->uids[r->caller_probe] : "null");
	put(w, "}", 1);
	return w->error ? -1 : 0;
}

uint64_t probe_summary_estimate(const struct probe_summary *s)
{
	if (s->est_calls)
		return s->est_calls;
	if (s->counted)
		return s->counted;
	if (!s->count)
		return 0;
	return s->sampled > 1 ? (s->count - 1) * s->sampled + 1 : s->count;
}

void probe_summary_merge(struct probe_summary *to, const struct probe_summary *from)
{
	uint64_t est = probe_summary_estimate(to) + probe_summary_estimate(from);
	int i;

	to->untimed += from->untimed;
	to->below_min += from->below_min;
	if (!from->count)
		return;
	if (!to->count) {
		unsigned sampled = to->sampled;
		uint64_t untimed = to->untimed, below_min = to->below_min;
		*to = *from;
		to->untimed = untimed;
		to->below_min = below_min;
		if (sampled > to->sampled)
			to->sampled = sampled;
		return;
	}
	to->count += from->count;
	to->total += from->total;
	to->sum += from->sum;
	to->exclusive += from->exclusive;
	if (from->min < to->min)
		to->min = from->min;
	if (from->max > to->max)
		to->max = from->max;
	for (i = 0; i < 64; i++) {
		to->hist[i] += from->hist[i];
		to->cal_hist[i] += from->cal_hist[i];
	}
	if (from->entry != to->entry)
		to->entry = 0;	/* copies of one name probed on different instructions */
	if (from->ret != to->ret)
		to->ret = 0;
	if (from->sampled > to->sampled)
		to->sampled = from->sampled;
	to->aggregate |= from->aggregate;
	to->calibrated |= from->calibrated;
	to->stepped |= from->stepped;
	to->cal_total += from->cal_total;
	to->cal_sum += from->cal_sum;
	to->cal_exclusive += from->cal_exclusive;
	/* counted only when every copy was */
	to->counted = to->counted && from->counted ? to->counted + from->counted : 0;
	to->est_calls = est;
}

/* A function's median and p95, inclusive and calibrated.  */
struct summary_quantiles {
	int exact;	/* over every recorded call; else from the log2 histograms */
	double median, p95, cal_median, cal_p95;
};

static void hist_quantiles(const struct probe_summary *s, struct summary_quantiles *q)
{
	double min = s->count ? (double)s->min : 0;
	uint64_t cmin = 0, cmax = 0;
	int i, seen = 0;

	q->exact = 0;
	q->median = log2_hist_quantile(s->hist, 64, 0.5, min, (double)s->max);
	q->p95 = log2_hist_quantile(s->hist, 64, 0.95, min, (double)s->max);
	/* the calibrated histogram's range: its outer buckets */
	for (i = 0; i < 64; i++)
		if (s->cal_hist[i]) {
			cmax = i ? (uint64_t)1 << (i < 63 ? i + 1 : 63) : 2;
			if (!seen++)
				cmin = i ? (uint64_t)1 << i : 0;
		}
	q->cal_median = log2_hist_quantile(s->cal_hist, 64, 0.5, (double)cmin, (double)cmax);
	q->cal_p95 = log2_hist_quantile(s->cal_hist, 64, 0.95, (double)cmin, (double)cmax);
	if (q->cal_median > q->median)	/* never above the raw amounts */
		q->cal_median = q->median;
	if (q->cal_p95 > q->p95)
		q->cal_p95 = q->p95;
}

static struct json_object *summary_json(const struct probe_summary *s,
					const struct summary_quantiles *q);

struct json_object *probe_summary_json(const struct probe_summary *s)
{
	struct summary_quantiles q;

	hist_quantiles(s, &q);
	return summary_json(s, &q);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct json_object *profile_writer_summary_json(const struct profile_writer *w,
						const size_t *ids, size_t n)
{
	struct probe_summary m;
	struct summary_quantiles q;
	size_t i, nv = 0, k = 0;
	double *raw, *cal;

	if (!n)
		return NULL;
	m = w->sum[ids[0]];
	for (i = 1; i < n; i++)
		probe_summary_merge(&m, &w->sum[ids[i]]);
	if (!m.count && !m.untimed && !m.below_min)
		return NULL;
	for (i = 0; w->vals && i < n; i++)
		nv += w->vals[ids[i]].n;
	if (!w->vals || !m.count || nv != m.count) {
		hist_quantiles(&m, &q);
		return summary_json(&m, &q);
	}
	raw = xmalloc(nv * sizeof(*raw));
	cal = xmalloc(nv * sizeof(*cal));
	for (i = 0; i < n; i++) {
		const struct summary_values *v = &w->vals[ids[i]];
		if (!v->n)
			continue;
		memcpy(raw + k, v->raw, v->n * sizeof(*raw));
		memcpy(cal + k, v->cal, v->n * sizeof(*cal));
		k += v->n;
	}
	qsort(raw, nv, sizeof(*raw), cmp_double);
	qsort(cal, nv, sizeof(*cal), cmp_double);
	q.exact = 1;
	q.median = quantile_sorted(raw, nv, 0.5);
	q.p95 = quantile_sorted(raw, nv, 0.95);
	q.cal_median = quantile_sorted(cal, nv, 0.5);
	q.cal_p95 = quantile_sorted(cal, nv, 0.95);
	free(raw);
	free(cal);
	return summary_json(&m, &q);
}

static struct json_object *summary_json(const struct probe_summary *s,
					const struct summary_quantiles *q)
{
	struct json_object *o = json_object_new_object(), *h = json_object_new_array();
	double cnt = (double)s->count;
	int i, last = -1;

	/* every call seen; the amounts below are those of the calls with one */
	json_object_object_add(o, "count", json_object_new_int64((int64_t)(s->count + s->untimed +
									       s->below_min)));
	if (s->untimed)
		json_object_object_add(o, "no_duration", json_object_new_int64((int64_t)s->untimed));
	if (s->below_min)
		json_object_object_add(o, "below_min_duration",
				       json_object_new_int64((int64_t)s->below_min));
	json_object_object_add(o, "total", json_object_new_int64((int64_t)s->total));
	json_object_object_add(o, "exclusive", json_object_new_int64((int64_t)s->exclusive));
	json_object_object_add(o, "min", json_object_new_int64(s->count ? (int64_t)s->min : 0));
	json_object_object_add(o, "max", json_object_new_int64((int64_t)s->max));
	json_object_object_add(o, "mean", json_object_new_double(s->count ? (double)s->sum / cnt
									  : 0));
	json_object_object_add(o, "median", json_object_new_double(q->median));
	json_object_object_add(o, "p95", json_object_new_double(q->p95));
	/* how median and p95 (and their calibrated twins) were found */
	json_object_object_add(o, "quantiles",
			       json_object_new_string(q->exact ? "exact" : "log2-histogram"));
	/* with --aggregate the script's sums hold nested calls of a recursion */
	json_object_object_add(o, "total_outermost_only", json_object_new_boolean(!s->aggregate));
	if (s->sampled > 1) {
		json_object_object_add(o, "sampled", json_object_new_int64((int64_t)s->sampled));
		json_object_object_add(o, "estimated_calls",
				       json_object_new_int64((int64_t)probe_summary_estimate(s)));
		/* the runtime counted them all: the estimate above is that count */
		if (s->counted)
			json_object_object_add(o, "counted_calls",
					       json_object_new_int64((int64_t)s->counted));
	}
	if (s->calibrated) {
		json_object_object_add(o, "calibrated_total", json_object_new_double(s->cal_total));
		json_object_object_add(o, "calibrated_mean", json_object_new_double(
								     s->count ? s->cal_sum / cnt : 0));
		json_object_object_add(o, "calibrated_median", json_object_new_double(q->cal_median));
		json_object_object_add(o, "calibrated_p95", json_object_new_double(q->cal_p95));
		json_object_object_add(o, "calibrated_exclusive",
				       json_object_new_double(s->cal_exclusive));
		/* its first instruction is stepped out of line: stepped_probe_ns applied */
		if (s->stepped)
			json_object_object_add(o, "probe_stepped", json_object_new_boolean(1));
	}
	/* the instruction its entry probe sits on: emulated or stepped out of
	 * line by the kernel (the calibration subtracts that kind's cost) */
	if (s->entry)
		json_object_object_add(o, "probe_entry",
				       json_object_new_string(s->entry == 2 ? "stepped" : "emulated"));
	/* perun's loader: its returns' probe, a uretprobe or its return
	 * instructions (the calibration subtracts that kind's cost) */
	if (s->ret && !s->aggregate)
		json_object_object_add(o, "probe_return",
				       json_object_new_string(s->ret == 2 ? "instructions" : "uretprobe"));
	for (i = 0; i < 64; i++)
		if (s->hist[i])
			last = i;
	for (i = 0; i <= last; i++)
		json_object_array_add(h, json_object_new_int64((int64_t)s->hist[i]));
	json_object_object_add(o, "log2_hist", h);
	return o;
}

int profile_writer_aggregate(struct profile_writer *w, const struct agg_record *a)
{
	struct probe_summary *s = &w->sum[a->probe];
	struct json_object *h;
	int i, last = -1;

	if (!a->count)
		return 0;
	s->aggregate = 1;
	s->count += a->count;
	s->total += a->sum;
	s->sum += a->sum;
	if (a->min < s->min)
		s->min = a->min;
	if (a->max > s->max)
		s->max = a->max;
	for (i = 0; i < 64; i++) {
		s->hist[i] += a->hist[i];
		if (a->hist[i])
			last = i;
	}
	if (w->nresources++)
		put(w, ",", 1);
	puts_(w, "{\"amount\":");
	putu(w, a->sum);
	puts_(w, ",\"uid\":");
	puts_(w, w->uids[a->probe]);
	puts_(w, ",\"type\":\"mixed\",\"subtype\":\"time summary\",\"thread\":");
	puti(w, a->thread);
	puts_(w, ",\"count\":");
	putu(w, a->count);
	puts_(w, ",\"min\":");
	putu(w, a->min);
	puts_(w, ",\"max\":");
	putu(w, a->max);
	puts_(w, ",\"log2_hist\":");
	h = json_object_new_array();
	for (i = 0; i <= last; i++)
		json_object_array_add(h, json_object_new_int64((int64_t)a->hist[i]));
	put_json(w, h);
	json_object_put(h);
	put(w, "}", 1);
	return w->error ? -1 : 0;
}

/* Ends the calls, writes the snapshot's time and models (JSON texts) and the
 * chunks region.  */
static int close_snapshot(struct profile_writer *w, const char *time, const char *models)
{
	long len;
	const char *text;

	if (w->cs)
		compact_flush(w->cs);
	puts_(w, "],\"time\":");
	puts_(w, time);
	puts_(w, ",\"models\":");
	puts_(w, models);
	puts_(w, "}],\"chunks\":{");
	if (w->cs) {
		text = compact_chunks(w->cs, w->uids, &len);
		put(w, text, (size_t)len);
	}
	puts_(w, "}");
	return 0;
}

int profile_writer_finish_stream(struct profile_writer *w, const char *time, const char *models,
				 const char *rest)
{
	int ret = 0;

	if (close_snapshot(w, time, models) < 0)
		ret = -1;
	puts_(w, rest);
	puts_(w, "}\n");
	flush(w);
	if (fflush(w->f) != 0 || w->error)
		ret = ret < 0 ? ret : pr_error_errno("write");
	w->f = NULL;		/* the caller's */
	profile_writer_abort(w);
	return ret;
}

int profile_writer_close(struct profile_writer *w, const struct parse_stats *st,
			 struct json_object *extra)
{
	char tbuf[64];
	int fd, ret;

	snprintf(tbuf, sizeof(tbuf), "\"%.9f\"", (double)st->duration / 1e9);
	if (close_snapshot(w, tbuf, "[]") < 0) {
		profile_writer_abort(w);
		return -1;
	}
	if (extra) {
		puts_(w, ",\"trace\":");
		put_json(w, extra);
	}
	puts_(w, "}\n");
	flush(w);
	if (fflush(w->f) != 0 || w->error) {
		pr_error_errno("write %s", w->tmp);
		profile_writer_abort(w);
		return -1;
	}
	fd = dup(fileno(w->f));
	fclose(w->f);
	w->f = NULL;
	ret = fs_commit_temp(fd, w->tmp, w->path);
	profile_writer_abort(w);
	return ret;
}

void profile_writer_abort(struct profile_writer *w)
{
	size_t i;

	if (w->f) {
		fclose(w->f);
		w->f = NULL;
		if (w->tmp)
			unlink(w->tmp);
	}
	if (w->uids)
		for (i = 0; i < w->nuids; i++)
			free(w->uids[i]);
	compact_free(w->cs);
	w->cs = NULL;
	drop_values(w);
	free(w->uids);
	free(w->sum);
	free(w->buf);
	free(w->tmp);
	free(w->path);
	w->uids = NULL;
	w->sum = NULL;
	w->buf = NULL;
	w->tmp = NULL;
	w->path = NULL;
}
