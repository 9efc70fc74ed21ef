/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "sync"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/repo.h"
#include "store/store.h"
#include "store/sync.h"
#include "util/fs.h"
#include "util/log.h"
#include "vcs/vcs.h"

/* One file of the fetched tree, verified.  */
struct fetched {
	char hex[SHA1_HEXSZ + 1];
	unsigned char *data;
	size_t len;
	int is_index;
	struct pidx index;
	int is_tags;		/* added/<hex> or removed/<hex> of minor hex */
	enum tagset_kind kind;
	struct tagset tags;
};

struct fetch_set {
	const char *remote;
	const char *dir;	/* the local .perun: objects it holds are skipped */
	struct fetched *v;
	size_t n, alloc;
	size_t held;		/* bytes of v[].data, at most FETCH_MAX_HELD */
};

/* A remote is not trusted: what a fetch keeps in memory until it is
 * checked is bounded.  */
#define FETCH_MAX_HELD ((size_t)1 << 30)

static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0' || s[n] == '/';
}

/* objects/xx/yyyy... to its 40-hex name, or -1.  */
static int path_hex(const char *path, char hex[SHA1_HEXSZ + 1])
{
	if (strncmp(path, "objects/", 8) || strlen(path) != 8 + 2 + 1 + 38 || path[10] != '/' ||
	    !is_hex(path + 8, 2) || !is_hex(path + 11, 38))
		return -1;
	memcpy(hex, path + 8, 2);
	memcpy(hex + 2, path + 11, 38);
	hex[40] = '\0';
	return 0;
}

static int fetched_file(void *ctx, const char *path, const unsigned char *data, size_t len)
{
	struct fetch_set *s = ctx;
	struct strbuf why = STRBUF_INIT;
	struct fetched *f;
	int ret = 0;

	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 64;
		s->v = xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	f = &s->v[s->n];
	memset(f, 0, sizeof(*f));
	pidx_init(&f->index);
	if (!strncmp(path, "removed/", 8) || !strncmp(path, "added/", 6)) {
		size_t pre = path[0] == 'r' ? 8 : 6;
		f->kind = path[0] == 'r' ? TAGS_REMOVED : TAGS_ADDED;
		if (!is_hex(path + pre, SHA1_HEXSZ) || path[pre + SHA1_HEXSZ])
			return pr_error("%s fetched from %s is not a perun %s file (refused, "
					"nothing was stored): is %s's %s written by perun push?",
					path, s->remote,
					f->kind == TAGS_ADDED ? "added-tags" : "tombstone", s->remote,
					VCS_SYNC_REF);
		if (tagset_parse(&f->tags, f->kind, (const char *)data, len, &why) < 0) {
			pr_error("%s fetched from %s: %s (refused, nothing was stored)", path,
				 s->remote, why.buf);
			strbuf_release(&why);
			return -1;
		}
		memcpy(f->hex, path + pre, SHA1_HEXSZ + 1);
		f->is_tags = 1;
		s->n++;
		return 0;
	}
	if (path_hex(path, f->hex) == 0 && !(len >= 4 && !memcmp(data, "pidx", 4))) {
		/* An object held here already is not checked nor kept again.  */
		char *have = store_object_path(s->dir, f->hex);
		int here = fs_exists(have);
		free(have);
		if (here)
			return 0;
	}
	if (len > FETCH_MAX_HELD - s->held)
		return pr_error("%s fetched from %s: more than %zu bytes fetched (refused, nothing "
				"was stored): is %s's %s written by perun push?",
				path, s->remote, FETCH_MAX_HELD, s->remote, VCS_SYNC_REF);
	if (path_hex(path, f->hex) < 0)
		return pr_error("%s fetched from %s is not a perun object or index (refused, "
				"nothing was stored): is %s's %s written by perun push?",
				path, s->remote, s->remote, VCS_SYNC_REF);
	if (len >= 4 && !memcmp(data, "pidx", 4)) {
		f->is_index = 1;
		if (pidx_salvage(&f->index, data, len, &why) != 0) {
			pidx_release(&f->index);
			ret = pr_error("index %s fetched from %s: %s (corrupted; refused, nothing "
				       "was stored): push it again from a host whose copy 'perun "
				       "fsck' finds intact",
				       f->hex, s->remote, why.buf);
		}
	} else if (store_check_object_bytes(f->hex, data, len, NULL, NULL, &why) < 0) {
		ret = pr_error("object %s fetched from %s: %s (refused, nothing was stored): push "
			       "it again from a host whose copy 'perun fsck' finds intact",
			       f->hex, s->remote, why.buf);
	}
	strbuf_release(&why);
	if (ret < 0)
		return -1;
	f->data = xmalloc(len ? len : 1);
	memcpy(f->data, data, len);
	f->len = len;
	s->held += len;
	s->n++;
	return 0;
}

static void fetch_set_release(struct fetch_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].data);
		pidx_release(&s->v[i].index);
		tagset_release(&s->v[i].tags);
	}
	free(s->v);
	s->v = NULL;
	s->n = s->alloc = 0;
}

static int cmp_hex(const void *a, const void *b)
{
	return strcmp(((const struct fetched *)a)->hex, ((const struct fetched *)b)->hex);
}

/* The files of one minor version sort together: objects/ (its index),
 * added/ and removed/ all carry its name.  */
static int cmp_fetched(const void *a, const void *b)
{
	const struct fetched *x = a, *y = b;
	int c = strcmp(x->hex, y->hex);

	if (c)
		return c;
	return (x->is_tags ? 1 + (int)x->kind : 0) - (y->is_tags ? 1 + (int)y->kind : 0);
}

/* Every entry of a fetched index names an object fetched with it or here.  */
static int check_entries(const struct repo *r, const struct fetch_set *s)
{
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		const struct fetched *f = &s->v[i];
		for (j = 0; f->is_index && j < f->index.n; j++) {
			struct fetched key;
			const struct fetched *hit;
			const char *why = pidx_name_problem(f->index.entries[j].path);
			memset(&key, 0, sizeof(key));
			char *path;
			int here;
			if (why) {
				char *shown = xstrdup_printable(f->index.entries[j].path);
				pr_error("index %s fetched from %s: entry %zu is named '%s': %s "
					 "(refused, nothing was stored): is %s's %s written by "
					 "perun push?",
					 f->hex, s->remote, j, shown, why, s->remote, VCS_SYNC_REF);
				free(shown);
				return -1;
			}
			repo_entry_hex(&f->index, j, key.hex);
			hit = s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), cmp_hex) : NULL;
			while (hit && hit > s->v && !strcmp(hit[-1].hex, hit->hex))
				hit--;	/* an object sorts first among files of its name */
			if (hit && !hit->is_index && !hit->is_tags)
				continue;
			path = store_object_path(r->dir, key.hex);
			here = fs_exists(path);
			free(path);
			if (!here)
				return pr_error(
				    "index %s fetched from %s names object %s, which "
				    "neither it nor this repository holds (refused, "
				    "nothing was stored): push again from the host that "
				    "registered it",
				    f->hex, s->remote, key.hex);
		}
	}
	return 0;
}

static int has_id(const struct pidx *x, const unsigned char *id)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		if (!memcmp(x->entries[i].id, id, SHA1_RAWSZ))
			return 1;
	return 0;
}

/* Merges what was fetched of minor hex (its index, added tags and
 * tombstones, each when fetched) into this host's: the union of the tags,
 * then the entries of both indexes whose id still has a live tag.  A
 * tombstone of an id alone that this host sees for the first time removes
 * the tags of that id this host holds now (its meaning before tags).  */
static int merge_minor(struct repo *r, const char *hex, const struct pidx *index,
		       const struct tagset *fadded, const struct tagset *fremoved,
		       struct sync_stats *st)
{
	struct tagset added = TAGSET_INIT, removed = TAGSET_INIT, conv = TAGSET_INIT;
	struct pidx local, merged;
	char ehex[SHA1_HEXSZ + 1];
	size_t i, gone = 0, came = 0;
	int ret = -1;

	pidx_init(&local);
	pidx_init(&merged);
	if (store_read_tagset(r->dir, TAGS_ADDED, hex, &added) < 0 ||
	    store_read_tagset(r->dir, TAGS_REMOVED, hex, &removed) < 0 ||
	    store_read_index(r->dir, hex, &local) < 0)
		goto out;
	for (i = 0; fremoved && i < fremoved->n; i++) {
		const char *line = fremoved->v[i];
		if (line[SHA1_HEXSZ] || tagset_has(&removed, line))
			continue;
		/* a v1 tombstone first seen: the tags held here now */
		tagset_append(&conv, line, NULL);
		tags_live(&added, &removed, line, 0, &conv);
	}
	if (fremoved && (store_add_tagset(r->dir, TAGS_REMOVED, hex, fremoved, NULL) < 0 ||
			 store_add_tagset(r->dir, TAGS_REMOVED, hex, &conv, NULL) < 0))
		goto out;
	if (fadded && store_add_tagset(r->dir, TAGS_ADDED, hex, fadded, NULL) < 0)
		goto out;
	tagset_release(&added);
	tagset_release(&removed);
	if (store_read_tagset(r->dir, TAGS_ADDED, hex, &added) < 0 ||
	    store_read_tagset(r->dir, TAGS_REMOVED, hex, &removed) < 0)
		goto out;
	for (i = 0; i < local.n; i++) {
		repo_entry_hex(&local, i, ehex);
		if (tags_live(&added, &removed, ehex, 1, NULL))
			pidx_append(&merged, local.entries[i].time, local.entries[i].id,
				    local.entries[i].path);
		else
			gone++;
	}
	for (i = 0; index && i < index->n; i++) {
		repo_entry_hex(index, i, ehex);
		if (has_id(&merged, index->entries[i].id) ||
		    !tags_live(&added, &removed, ehex, 1, NULL))
			continue;
		pidx_append(&merged, index->entries[i].time, index->entries[i].id,
			    index->entries[i].path);
		came++;
	}
	if ((gone || came) && store_write_index(r->dir, hex, &merged) < 0)
		goto out;
	st->removed += gone;
	st->entries += came;
	st->indexes += came > 0;
	ret = 0;
out:
	tagset_release(&added);
	tagset_release(&removed);
	tagset_release(&conv);
	pidx_release(&local);
	pidx_release(&merged);
	return ret;
}

/* Stores what is new: objects first, so an index never names a missing
 * one, then per minor version its index and tags merged.  */
static int import(struct repo *r, const struct fetch_set *s, struct sync_stats *st)
{
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		char *path;
		int here;
		if (s->v[i].is_index || s->v[i].is_tags)
			continue;
		path = store_object_path(r->dir, s->v[i].hex);
		here = fs_exists(path);
		free(path);
		if (here)
			continue;
		if (store_put_file(r->dir, s->v[i].hex, s->v[i].data, s->v[i].len, 0444) < 0)
			return -1;
		st->objects++;
	}
	for (i = 0; i < s->n; i = j) {
		const struct pidx *index = NULL;
		const struct tagset *added = NULL, *removed = NULL;
		for (j = i; j < s->n && !strcmp(s->v[j].hex, s->v[i].hex); j++) {
			if (s->v[j].is_index)
				index = &s->v[j].index;
			else if (s->v[j].is_tags && s->v[j].kind == TAGS_ADDED)
				added = &s->v[j].tags;
			else if (s->v[j].is_tags)
				removed = &s->v[j].tags;
		}
		if ((index || added || removed) &&
		    merge_minor(r, s->v[i].hex, index, added, removed, st) < 0)
			return -1;
	}
	return 0;
}

int sync_fetch(struct repo *r, const char *remote, struct sync_stats *st)
{
	struct fetch_set s = {remote, r->dir, NULL, 0, 0, 0};
	int ret = -1;

	if (vcs_sync_fetch(r->worktree, remote, fetched_file, &s, st->tip) < 0)
		goto out;
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), cmp_fetched);
	if (check_entries(r, &s) < 0 || import(r, &s, st) < 0)
		goto out;
	ret = 0;
out:
	fetch_set_release(&s);
	return ret;
}

/* A damaged file pushed would make every other host's fetch refuse the
 * remote: each file is checked as fetch will check it, and what is pushed
 * is data, the bytes checked (vcs_read_fn).  */
static int check_local(void *ctx, const char *rel, struct strbuf *data)
{
	const struct repo *r = ctx;
	struct strbuf why = STRBUF_INIT;
	char *path = xstrfmt("%s/%s", r->dir, rel);
	char hex[SHA1_HEXSZ + 1];
	struct pidx x;
	int ret = 0;

	strbuf_reset(data);
	if (!strncmp(rel, "removed/", 8) || !strncmp(rel, "added/", 6)) {
		struct tagset t;
		if (strbuf_read_file(data, path) < 0)
			ret = pr_error_errno("%s", path);
		else if (tagset_parse(&t, rel[0] == 'r' ? TAGS_REMOVED : TAGS_ADDED,
				      data->buf ? data->buf : "", data->len, &why) < 0)
			ret = pr_error("%s: %s: nothing was pushed", path, why.buf);
		else
			tagset_release(&t);
	} else if (path_hex(rel, hex) < 0) {
		ret = pr_error("%s: not a perun object or index: nothing was pushed", path);
	} else if (strbuf_read_file(data, path) < 0) {
		ret = pr_error_errno("%s", path);
	} else if (data->len >= 4 && !memcmp(data->buf, "pidx", 4)) {
		if (pidx_salvage(&x, (const unsigned char *)data->buf, data->len, &why) != 0)
			ret = pr_error("index %s (%s): %s: nothing was pushed; run 'perun fsck "
				       "--repair' first",
				       hex, path, why.buf);
		pidx_release(&x);
	} else if (store_check_object_bytes(hex, data->buf, data->len, NULL, NULL, &why) < 0) {
		ret = pr_error("object %s (%s): %s: nothing was pushed; run 'perun fsck --repair' "
			       "first",
			       hex, path, why.buf);
	}
	free(path);
	strbuf_release(&why);
	return ret;
}

/* The files of .perun/<what>/ named by a minor version, as what/<hex>.  */
static void list_tags(const struct repo *r, const char *what, char ***out, size_t *n,
		      size_t *alloc)
{
	char *dir = xstrfmt("%s/%s", r->dir, what);
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		if (strlen(de->d_name) != SHA1_HEXSZ || !is_hex(de->d_name, SHA1_HEXSZ))
			continue;
		if (*n == *alloc) {
			*alloc = *alloc ? 2 * *alloc : 64;
			*out = xrealloc(*out, *alloc * sizeof(**out));
		}
		(*out)[(*n)++] = xstrfmt("%s/%s", what, de->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
}

/* The files of .perun/objects (objects and indexes), as objects/xx/yyyy;
 * push checks each as it reads it (check_local).  */
static int list_local(const struct repo *r, char ***out, size_t *n)
{
	char *objects = xstrfmt("%s/objects", r->dir), *sub;
	DIR *d = opendir(objects), *dd;
	struct dirent *de, *fe;
	size_t alloc = 0;
	char hex[SHA1_HEXSZ + 1];

	*out = NULL;
	*n = 0;
	if (!d) {
		int ret = errno == ENOENT ? 0 : pr_error_errno("%s", objects);
		free(objects);
		return ret;
	}
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != 2 || !is_hex(de->d_name, 2))
			continue;
		sub = xstrfmt("%s/%s", objects, de->d_name);
		if (!(dd = opendir(sub))) {
			free(sub);
			continue;
		}
		while ((fe = readdir(dd))) {
			char *rel = xstrfmt("objects/%s/%s", de->d_name, fe->d_name);
			if (path_hex(rel, hex) < 0) {
				free(rel);
				continue; /* temp files, fsck's damaged copies */
			}
			if (*n == alloc) {
				alloc = alloc ? 2 * alloc : 64;
				*out = xrealloc(*out, alloc * sizeof(**out));
			}
			(*out)[(*n)++] = rel;
		}
		closedir(dd);
		free(sub);
	}
	closedir(d);
	free(objects);
	/* the tags of perun add and the tombstones of perun rm */
	list_tags(r, "added", out, n, &alloc);
	list_tags(r, "removed", out, n, &alloc);
	return 0;
}

int sync_push(struct repo *r, const char *remote, unsigned tries, struct sync_stats *st)
{
	unsigned attempt;
	struct timespec ts;
	long ms;

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (attempt = 1; attempt <= tries; attempt++) {
		char **files = NULL;
		size_t n = 0, i;
		int r2;
		st->attempts = attempt;
		if (sync_fetch(r, remote, st) < 0 || list_local(r, &files, &n) < 0)
			return pr_error("nothing was pushed to %s", remote);
		st->files = n;
		r2 = vcs_sync_push(r->worktree, remote, check_local, r, files, n, st->tip);
		for (i = 0; i < n; i++)
			free(files[i]);
		free(files);
		if (r2 <= 0)
			return r2;
		/* another host pushed since our fetch: back off a little, merge again */
		ms = 50 + rand() % (100 * (long)attempt);
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
	return pr_error("the profiles ref of %s kept moving: %u pushes were overtaken by other "
			"hosts; run 'perun push %s' again",
			remote, tries, remote);
}
