/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Dynamic statistics: computed from a profile, stored per minor version.  */
#include "config.h"

#define PR_FMT "stats"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/profile.h"
#include "store/repo.h"
#include "store/stats.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/sha1.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v)
		       ? v
		       : NULL;
}

static const char *str_of(struct json_object *o)
{
	return o ? json_object_get_string(o) : "";
}

/* --- computing ---------------------------------------------------------------- */

struct acc {
	char *name;
	double *a;
	size_t n, alloc;
	int aggregate;		/* saw per-thread summaries, not calls */
};

struct collect_ctx {
	struct acc *acc;
	size_t n, alloc;
};

static struct acc *acc_of(struct collect_ctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->acc[i].name, name))
			return &c->acc[i];
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 64;
		c->acc = xrealloc(c->acc, c->alloc * sizeof(*c->acc));
	}
	memset(&c->acc[c->n], 0, sizeof(*c->acc));
	c->acc[c->n].name = xstrdup(name);
	return &c->acc[c->n++];
}

static void one_resource(void *ctx, struct json_object *r)
{
	struct collect_ctx *c = ctx;
	struct json_object *u = get(r, "uid");
	struct acc *a;

	if (u && json_object_is_type(u, json_type_object))
		u = get(u, "function");
	if (!u)
		return;
	a = acc_of(c, json_object_get_string(u));
	if (get(r, "log2_hist")) {
		a->aggregate = 1;
		return;
	}
	if (a->n == a->alloc) {
		a->alloc = a->alloc ? 2 * a->alloc : 256;
		a->a = xrealloc(a->a, a->alloc * sizeof(*a->a));
	}
	a->a[a->n++] = json_object_get_double(get(r, "amount"));
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static int cmp_fn(const void *a, const void *b)
{
	return strcmp(((const struct fn_stats *)a)->name, ((const struct fn_stats *)b)->name);
}

/* The calls a function made at least: the summary's estimated_calls, which
 * sums them per probe when several probes share its name (each records its
 * own first call), else from the calls recorded and the sampling.  */
static uint64_t count_of(const struct fn_stats *f, struct json_object *ts)
{
	struct json_object *e = get(ts, "estimated_calls");

	if (e && json_object_get_int64(e) > 0)
		return (uint64_t)json_object_get_int64(e);
	/* the first call is always recorded (seeds/003 7.1.2) */
	return f->sampled_count ? f->sampled_count + (f->sampled_count - 1) * (f->sample - 1) : 0;
}

static void fill_from_summary(struct fn_stats *f, struct json_object *ts)
{
	struct json_object *h = get(ts, "log2_hist");
	uint64_t hist[64] = { 0 };
	size_t b;

	f->sampled_count = (uint64_t)json_object_get_int64(get(ts, "count"));
	f->total = json_object_get_double(get(ts, "total"));
	f->min = json_object_get_double(get(ts, "min"));
	f->max = json_object_get_double(get(ts, "max"));
	f->avg = json_object_get_double(get(ts, "mean"));
	for (b = 0; h && b < json_object_array_length(h) && b < 64; b++)
		hist[b] = (uint64_t)json_object_get_int64(json_object_array_get_idx(h, b));
	f->median = log2_hist_quantile(hist, 64, 0.5, f->min, f->max);
	f->q1 = log2_hist_quantile(hist, 64, 0.25, f->min, f->max);
	f->q3 = log2_hist_quantile(hist, 64, 0.75, f->min, f->max);
	f->from_histogram = 1;
}

int stats_from_profile(const struct profile *p, struct stats *s)
{
	struct json_object *hdr = get(p->root, "header");
	struct json_object *tsum = get(get(p->root, "trace"), "summary");
	struct collect_ctx c = { NULL, 0, 0 };
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!tsum && !get(p->root, "snapshots"))
		return pr_error("the profile has no trace summary and no snapshots: not a trace "
				"profile");
	s->cmd = xstrdup(str_of(get(hdr, "cmd")));
	s->args = xstrdup(str_of(get(hdr, "args")));
	s->workload = xstrdup(str_of(get(hdr, "workload")));
	s->collector = xstrdup(str_of(get(get(p->root, "collector_info"), "name")));
	profile_each_resource(p, one_resource, &c);
	/* functions the summary knows but no call of which was kept */
	if (tsum && json_object_is_type(tsum, json_type_object)) {
		json_object_object_foreach(tsum, key, val) {
			(void)val;
			acc_of(&c, key);
		}
	}
	s->fn = xcalloc(c.n ? c.n : 1, sizeof(*s->fn));
	for (i = 0; i < c.n; i++) {
		struct acc *a = &c.acc[i];
		struct fn_stats *f = &s->fn[s->n++];
		struct json_object *ts = get(tsum, a->name);
		size_t k;

		f->name = a->name;
		f->sample = get(ts, "sampled") ? (uint64_t)json_object_get_int64(get(ts, "sampled")) : 1;
		if (!f->sample)
			f->sample = 1;
		if (a->aggregate || (!a->n && ts)) {
			fill_from_summary(f, ts);
		} else {
			if (a->n > 1)
				qsort(a->a, a->n, sizeof(*a->a), cmp_double);
			f->sampled_count = a->n;
			for (k = 0; k < a->n; k++)
				f->total += a->a[k];
			f->min = a->n ? a->a[0] : 0;
			f->max = a->n ? a->a[a->n - 1] : 0;
			f->avg = a->n ? f->total / (double)a->n : 0;
			f->median = quantile_sorted(a->a, a->n, 0.5);
			f->q1 = quantile_sorted(a->a, a->n, 0.25);
			f->q3 = quantile_sorted(a->a, a->n, 0.75);
		}
		f->iqr = f->q3 - f->q1;
		f->partial = get(ts, "partial") && json_object_get_boolean(get(ts, "partial"));
		f->count = count_of(f, ts);
		free(a->a);
	}
	free(c.acc);
	if (s->n > 1)
		qsort(s->fn, s->n, sizeof(*s->fn), cmp_fn);
	return 0;
}

int stats_from_summary(struct json_object *header, const char *collector,
		       struct json_object *summary, struct stats *s)
{
	memset(s, 0, sizeof(*s));
	if (!summary || !json_object_is_type(summary, json_type_object))
		return pr_error("no trace summary to compute stats from");
	s->cmd = xstrdup(str_of(get(header, "cmd")));
	s->args = xstrdup(str_of(get(header, "args")));
	s->workload = xstrdup(str_of(get(header, "workload")));
	s->collector = xstrdup(collector ? collector : "");
	s->fn = xcalloc((size_t)json_object_object_length(summary) + 1, sizeof(*s->fn));
	{
		json_object_object_foreach(summary, key, ts) {
			struct fn_stats *f = &s->fn[s->n++];
			f->name = xstrdup(key);
			f->sample = get(ts, "sampled") ? (uint64_t)json_object_get_int64(get(ts, "sampled"))
						       : 1;
			if (!f->sample)
				f->sample = 1;
			fill_from_summary(f, ts);
			f->iqr = f->q3 - f->q1;
			f->partial = get(ts, "partial") && json_object_get_boolean(get(ts, "partial"));
			f->count = count_of(f, ts);
		}
	}
	if (s->n > 1)
		qsort(s->fn, s->n, sizeof(*s->fn), cmp_fn);
	return 0;
}

void stats_release(struct stats *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->fn[i].name);
	free(s->fn);
	free(s->cmd);
	free(s->args);
	free(s->workload);
	free(s->collector);
	free(s->profile);
	memset(s, 0, sizeof(*s));
}

const struct fn_stats *stats_find(const struct stats *s, const char *name)
{
	struct fn_stats key;

	key.name = (char *)name;
	return s->n ? bsearch(&key, s->fn, s->n, sizeof(*s->fn), cmp_fn) : NULL;
}

/* --- names ------------------------------------------------------------------------- */

char *stats_name(const char *cmd, const char *args, const char *workload)
{
	struct strbuf sb = STRBUF_INIT;
	const char *base = fs_basename(cmd && *cmd ? cmd : "command");
	unsigned char digest[SHA1_RAWSZ];
	char hex[SHA1_HEXSZ + 1];
	struct sha1_ctx h;
	size_t i;

	for (i = 0; base[i] && i < 40; i++) {
		char ch = base[i];
		int keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			   (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || (ch == '.' && i);
		strbuf_addch(&sb, keep ? ch : '_');
	}
	if (!sb.len)
		strbuf_addstr(&sb, "command");
	sha1_init(&h);
	sha1_update(&h, cmd ? cmd : "", strlen(cmd ? cmd : "") + 1);
	sha1_update(&h, args ? args : "", strlen(args ? args : "") + 1);
	sha1_update(&h, workload ? workload : "", strlen(workload ? workload : "") + 1);
	sha1_final(&h, digest);
	sha1_to_hex(digest, hex);
	strbuf_addf(&sb, "-%.16s.stats", hex);
	return strbuf_detach(&sb);
}

/* A stats file is a few KiB per function: larger ones are not read.  */
#define STATS_MAX_SIZE (64 << 20)

/* --- files ----------------------------------------------------------------------- */

int stats_valid_minor(const char *m)
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!((m[i] >= '0' && m[i] <= '9') || (m[i] >= 'a' && m[i] <= 'f')))
			return 0;
	return m[40] == '\0';
}

static int valid_name(const char *name)
{
	size_t n = strlen(name);

	return n > 6 && n < 200 && !strchr(name, '/') && name[0] != '.' &&
	       !strcmp(name + n - 6, ".stats");
}

static struct json_object *to_json(const struct stats *s)
{
	struct json_object *o = json_object_new_object(), *fns = json_object_new_object();
	size_t i;

	json_object_object_add(o, "perun-stats", json_object_new_int(STATS_FORMAT));
	json_object_object_add(o, "cmd", json_object_new_string(s->cmd ? s->cmd : ""));
	json_object_object_add(o, "args", json_object_new_string(s->args ? s->args : ""));
	json_object_object_add(o, "workload", json_object_new_string(s->workload ? s->workload : ""));
	json_object_object_add(o, "collector",
			       json_object_new_string(s->collector ? s->collector : ""));
	if (s->profile)
		json_object_object_add(o, "profile", json_object_new_string(s->profile));
	for (i = 0; i < s->n; i++) {
		const struct fn_stats *f = &s->fn[i];
		struct json_object *j = json_object_new_object();
		json_object_object_add(j, "sampled_count", json_object_new_int64((int64_t)f->sampled_count));
		json_object_object_add(j, "sample", json_object_new_int64((int64_t)f->sample));
		json_object_object_add(j, "count", json_object_new_int64((int64_t)f->count));
		json_object_object_add(j, "total", json_object_new_double(f->total));
		json_object_object_add(j, "min", json_object_new_double(f->min));
		json_object_object_add(j, "max", json_object_new_double(f->max));
		json_object_object_add(j, "avg", json_object_new_double(f->avg));
		json_object_object_add(j, "median", json_object_new_double(f->median));
		json_object_object_add(j, "Q1", json_object_new_double(f->q1));
		json_object_object_add(j, "Q3", json_object_new_double(f->q3));
		json_object_object_add(j, "IQR", json_object_new_double(f->iqr));
		if (f->from_histogram)
			json_object_object_add(j, "from_histogram", json_object_new_boolean(1));
		/* dynamic probing disarmed it, or timed sampling recorded part of
		 * its calls: count is a lower bound */
		if (f->partial)
			json_object_object_add(j, "partial", json_object_new_boolean(1));
		json_object_object_add(fns, f->name, j);
	}
	json_object_object_add(o, "functions", fns);
	return o;
}

static int from_json(struct json_object *o, struct stats *s, const char *what)
{
	struct json_object *fns = get(o, "functions");
	struct json_object *fmt = get(o, "perun-stats");

	memset(s, 0, sizeof(*s));
	if (!fmt || !json_object_is_type(fmt, json_type_int))
		return pr_error("%s: not a perun stats file (no perun-stats field)", what);
	if (json_object_get_int(fmt) != STATS_FORMAT)
		return pr_error("%s: stats format %d, this perun reads %d: run 'perun stats delete "
				"file' on it, the next collect writes it anew",
				what, json_object_get_int(fmt), STATS_FORMAT);
	if (!fns || !json_object_is_type(fns, json_type_object))
		return pr_error("%s: damaged stats file: no functions object; delete it with "
				"'perun stats delete file'", what);
	s->cmd = xstrdup(str_of(get(o, "cmd")));
	s->args = xstrdup(str_of(get(o, "args")));
	s->workload = xstrdup(str_of(get(o, "workload")));
	s->collector = xstrdup(str_of(get(o, "collector")));
	if (get(o, "profile"))
		s->profile = xstrdup(str_of(get(o, "profile")));
	s->fn = xcalloc((size_t)json_object_object_length(fns) + 1, sizeof(*s->fn));
	{
		json_object_object_foreach(fns, key, j) {
			struct fn_stats *f = &s->fn[s->n++];
			f->name = xstrdup(key);
			f->sampled_count = (uint64_t)json_object_get_int64(get(j, "sampled_count"));
			f->sample = (uint64_t)json_object_get_int64(get(j, "sample"));
			f->count = (uint64_t)json_object_get_int64(get(j, "count"));
			f->total = json_object_get_double(get(j, "total"));
			f->min = json_object_get_double(get(j, "min"));
			f->max = json_object_get_double(get(j, "max"));
			f->avg = json_object_get_double(get(j, "avg"));
			f->median = json_object_get_double(get(j, "median"));
			f->q1 = json_object_get_double(get(j, "Q1"));
			f->q3 = json_object_get_double(get(j, "Q3"));
			f->iqr = json_object_get_double(get(j, "IQR"));
			f->from_histogram = get(j, "from_histogram") != NULL;
			f->partial = get(j, "partial") != NULL;
			if (!f->sample)
				f->sample = 1;
		}
	}
	if (s->n > 1)
		qsort(s->fn, s->n, sizeof(*s->fn), cmp_fn);
	return 0;
}

int stats_save(const struct repo *r, const char *minor, const struct stats *s, char **path_out)
{
	char *dir, *path;
	const char *text;
	struct json_object *o;
	char *name = stats_name(s->cmd, s->args, s->workload);
	int ret;

	if (!stats_valid_minor(minor)) {
		free(name);
		return pr_error("'%s' is not a minor version (40 hex digits)", minor);
	}
	dir = xstrfmt("%s/stats/%s", r->dir, minor);
	if (fs_trust_dir(dir, 1, "remove it, 'perun stats sync' recreates what is needed") < 0) {
		free(dir);
		free(name);
		return -1;
	}
	path = xstrfmt("%s/%s", dir, name);
	o = to_json(s);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	ret = fs_write_atomic(path, text, strlen(text), 0644);
	json_object_put(o);
	if (!ret && path_out)
		*path_out = xstrdup(path);
	free(path);
	free(dir);
	free(name);
	return ret;
}

int stats_load(const struct repo *r, const char *minor, const char *name, struct stats *s)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_object *o;
	struct stat st;
	char *path, *dir;
	int ret, fd;

	memset(s, 0, sizeof(*s));
	if (!stats_valid_minor(minor) || !valid_name(name))
		return 1;
	dir = xstrfmt("%s/stats/%s", r->dir, minor);
	if (lstat(dir, &st) < 0 && errno == ENOENT) {
		free(dir);
		return 1;
	}
	/* names in a directory another user can write are theirs to swap */
	if (fs_trust_dir(dir, 0, "inspect it, then remove it or run 'chmod go-w' on it") < 0) {
		free(dir);
		return -1;
	}
	path = xstrfmt("%s/%s", dir, name);
	free(dir);
	fd = fs_open_trusted(path, 0);
	if (fd < 0) {
		ret = errno == ENOENT ? 1 : -1;
		free(path);
		return ret;
	}
	st.st_size = 0;
	if (fstat(fd, &st) < 0 || st.st_size > STATS_MAX_SIZE || fs_read_fd(fd, &sb) < 0) {
		if (st.st_size > STATS_MAX_SIZE)
			pr_error("refusing %s: %lld bytes, too large for a stats file (at most %d): "
				 "inspect it and remove it",
				 path, (long long)st.st_size, STATS_MAX_SIZE);
		else
			pr_error_errno("read %s", path);
		close(fd);
		free(path);
		strbuf_release(&sb);
		return -1;
	}
	close(fd);
	o = json_tokener_parse(sb.buf);
	if (!o)
		ret = pr_error("%s: damaged stats file (not JSON); delete it with 'perun stats "
			       "delete file %s'",
			       path, name);
	else
		ret = from_json(o, s, path);
	json_object_put(o);
	strbuf_release(&sb);
	free(path);
	return ret;
}

struct nearest_ctx {
	const struct repo *r;
	const char *name;
	struct stats *s;
	char *found;
	int result;		/* 1 none yet, 0 found, -1 error */
};

static int nearest_one(void *ctx, const struct minor_version *mv)
{
	struct nearest_ctx *c = ctx;
	int ret = stats_load(c->r, mv->sha, c->name, c->s);

	if (ret == 1)
		return 0;
	c->result = ret;
	if (!ret)
		memcpy(c->found, mv->sha, 41);
	return 1;	/* stop */
}

int stats_nearest(const struct repo *r, const char *sha, const char *name, size_t max,
		  struct stats *s, char found_minor[41])
{
	struct nearest_ctx c = { r, name, s, found_minor, 1 };

	if (vcs_walk(r->worktree, sha, max, nearest_one, &c) < 0)
		return -1;
	return c.result;
}

int stats_is_ours(int dirfd, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_object *o;
	struct stat st;
	int fd, ours = 0;

	if (!valid_name(name))
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    st.st_size <= STATS_MAX_SIZE && fs_read_fd(fd, &sb) == 0) {
		o = json_tokener_parse(sb.buf);
		ours = o && get(o, "perun-stats") != NULL && get(o, "functions") != NULL;
		json_object_put(o);
	}
	close(fd);
	strbuf_release(&sb);
	return ours;
}

/* Functions this collect did not probe (a pre-optimize method dropped them)
 * keep the stats the nearest earlier collect of the same command, arguments
 * and workload had for them, so the methods' choice holds on the next
 * collect instead of coming undone (thesis 7.2.2).  */
static void carry_over(const struct repo *r, const char *origin, struct stats *s)
{
	char *name = stats_name(s->cmd ? s->cmd : "", s->args ? s->args : "",
				s->workload ? s->workload : "");
	char found[41];
	struct stats old;
	size_t i, n0 = s->n;

	if (stats_nearest(r, origin, name, 20, &old, found) != 0) {
		free(name);
		return;
	}
	for (i = 0; i < old.n; i++) {
		if (bsearch(&old.fn[i], s->fn, n0, sizeof(*s->fn), cmp_fn))
			continue;
		s->fn = xrealloc(s->fn, (s->n + 1) * sizeof(*s->fn));
		s->fn[s->n] = old.fn[i];
		s->fn[s->n++].name = xstrdup(old.fn[i].name);
	}
	if (s->n != n0)
		qsort(s->fn, s->n, sizeof(*s->fn), cmp_fn);
	stats_release(&old);
	free(name);
}

int stats_after_collect(const char *profile_path, struct json_object *header,
			const char *collector, struct json_object *summary, uint64_t calls,
			const char *origin, int quiet, struct strv *said)
{
	char *dir = repo_locate(), *path = NULL;
	struct repo r;
	struct stats s;
	int ret = -1;

	if (!dir || !origin || !stats_valid_minor(origin)) {
		free(dir);
		return 0;
	}
	free(dir);
	if (repo_find(&r) < 0)
		return -1;
	if (calls <= STATS_EXACT_MAX_CALLS) {
		struct profile p;
		if (profile_load(&p, profile_path) == 0) {
			ret = stats_from_profile(&p, &s);
			profile_release(&p);
		}
	} else {
		ret = stats_from_summary(header, collector, summary, &s);
	}
	if (ret == 0) {
		s.profile = xstrdup(profile_path);
		carry_over(&r, origin, &s);
		ret = stats_save(&r, origin, &s, &path);
		stats_release(&s);
	}
	if (ret == 0 && !quiet) {
		size_t wl = strlen(r.worktree);
		const char *rel = !strncmp(path, r.worktree, wl) && path[wl] == '/' ? path + wl + 1 : path;
		log_keep(said, "perun", "stats: %s", rel);
	} else if (ret < 0) {
		log_keep(said, "perun: warning",
			 "no dynamic stats were stored for this run (see above); the profile is "
			 "complete");
	}
	free(path);
	repo_release(&r);
	return ret;
}
