/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Checking and repairing a store (store/fsck.h).  */
#include "config.h"

#define PR_FMT "fsck"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profile/profile.h"
#include "store/fsck.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strv.h"

/* One file under .perun/objects/xx/.  */
struct item {
	char hex[SHA1_HEXSZ + 1];
	int is_index;		/* starts with "pidx" */
	int bad;		/* object: unreadable; index: damaged */
	char *why;
	time_t mtime;
	/* objects */
	char *origin;
	int referenced;
	/* indexes */
	struct pidx idx;	/* intact, or what could be salvaged */
	int bad_entries;	/* entries naming missing or damaged objects */
};

struct fsck {
	const char *dir;	/* the .perun directory */
	struct item *items;
	size_t n;
	struct fsck_result *res;
};

static void add_line(struct fsck_line **lines, size_t *n, int problem, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	*lines = xrealloc(*lines, (*n + 1) * sizeof(**lines));
	(*lines)[*n].text = strbuf_detach(&sb);
	(*lines)[*n].problem = problem;
	(*n)++;
}

/* A line of what the check found; a problem when problem is set.  */
__attribute__((format(printf, 3, 4)))
static void found(struct fsck *f, int problem, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(&f->res->found, &f->res->nfound, problem, fmt, ap);
	va_end(ap);
	if (problem)
		f->res->problems++;
}

/* A line of what the repair did.  */
__attribute__((format(printf, 2, 3)))
static void repaired(struct fsck *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(&f->res->repairs, &f->res->nrepairs, 0, fmt, ap);
	va_end(ap);
}

static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return 0;
	return s[n] == '\0';
}

static int cmp_hex(const void *a, const void *b)
{
	return strcmp(((const struct item *)a)->hex, ((const struct item *)b)->hex);
}

/* The item named hex; the items are sorted once the scan is done.  */
static struct item *find(struct fsck *f, const char *hex)
{
	struct item key;

	snprintf(key.hex, sizeof(key.hex), "%s", hex);
	return f->n ? bsearch(&key, f->items, f->n, sizeof(*f->items), cmp_hex) : NULL;
}

/* The origin an object records.  perun add appends it, so it ends the
 * JSON: read there without parsing what may be a very large profile.  */
static char *object_origin(const struct strbuf *json)
{
	static const char key[] = ",\"origin\":\"";
	size_t tail = sizeof(key) - 1 + SHA1_HEXSZ + 2;
	const char *t;
	struct profile p = { NULL };
	char *out = NULL;

	if (json->len > tail) {
		t = json->buf + json->len - tail;
		if (!memcmp(t, key, sizeof(key) - 1) && !strcmp(t + tail - 2, "\"}")) {
			out = strndup(t + sizeof(key) - 1, SHA1_HEXSZ);
			if (is_hex(out, SHA1_HEXSZ))
				return out;
			free(out);
			out = NULL;
		}
	}
	/* elsewhere (a profile written by other tools): parse it */
	if (profile_parse(&p, json->buf, json->len, "object") == 0) {
		const char *o = profile_str(&p, "origin");
		if (o && strlen(o) == SHA1_HEXSZ && is_hex(o, SHA1_HEXSZ))
			out = xstrdup(o);
	}
	profile_release(&p);
	return out;
}

/* The base name of the command of an object's profile, for the name of a
 * re-indexed entry; "profile" when unknown.  */
static char *object_cmd(struct fsck *f, const char *hex)
{
	struct strbuf json = STRBUF_INIT;
	struct profile p = { NULL };
	const char *c;
	char *out;

	if (store_read_object(f->dir, hex, &json, NULL) == 0 &&
	    profile_parse(&p, json.buf, json.len, hex) == 0 &&
	    (c = profile_str(&p, "header.cmd")) && *fs_basename(c))
		out = xstrdup(fs_basename(c));
	else
		out = xstrdup("profile");
	profile_release(&p);
	strbuf_release(&json);
	return out;
}

/* Reads one file of objects/xx/: an index or an object, checked.  */
static void check_file(struct fsck *f, const char *path, const char *hex)
{
	struct item *it;
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT, json = STRBUF_INIT;
	struct stat st;

	f->items = xrealloc(f->items, (f->n + 1) * sizeof(*f->items));
	it = &f->items[f->n++];
	memset(it, 0, sizeof(*it));
	memcpy(it->hex, hex, sizeof(it->hex));
	pidx_init(&it->idx);
	it->mtime = stat(path, &st) == 0 ? st.st_mtime : time(NULL);
	if (strbuf_read_file(&sb, path) < 0) {
		strbuf_addf(&why, "%s: %s", path, strerror(errno));
		it->bad = 1;
	} else if (sb.len >= 4 && !memcmp(sb.buf, "pidx", 4)) {
		it->is_index = 1;
		it->bad = pidx_salvage(&it->idx, (const unsigned char *)sb.buf, sb.len, &why);
	} else if (store_check_object(f->dir, hex, &json, NULL, &why) < 0) {
		it->bad = 1;
	} else {
		it->origin = object_origin(&json);
	}
	it->why = it->bad ? strbuf_detach(&why) : NULL;
	strbuf_release(&why);
	strbuf_release(&sb);
	strbuf_release(&json);
}

static int scan(struct fsck *f)
{
	char *objects = xstrfmt("%s/objects", f->dir);
	DIR *d = opendir(objects), *sub;
	struct dirent *de, *se;

	if (!d) {
		int ret = errno == ENOENT ? 0 : pr_error_errno("%s", objects);
		free(objects);
		return ret;
	}
	while ((de = readdir(d))) {
		char *subdir;
		if (de->d_name[0] == '.')
			continue;
		subdir = xstrfmt("%s/%s", objects, de->d_name);
		if (!is_hex(de->d_name, 2) || !(sub = opendir(subdir))) {
			found(f, 0, "unknown entry %s left alone (not a perun object directory)", subdir);
			free(subdir);
			continue;
		}
		while ((se = readdir(sub))) {
			char hex[SHA1_HEXSZ + 1], *path;
			if (se->d_name[0] == '.' && (!se->d_name[1] ||
						     (se->d_name[1] == '.' && !se->d_name[2])))
				continue;
			path = xstrfmt("%s/%s", subdir, se->d_name);
			if (strstr(se->d_name, ".tmp")) {
				found(f, 0, "leftover temp file %s (an interrupted write; safe to remove)",
				      path);
			} else if (!is_hex(se->d_name, SHA1_HEXSZ - 2)) {
				found(f, 0, "unknown file %s left alone (not named by a SHA-1)", path);
			} else {
				memcpy(hex, de->d_name, 2);
				memcpy(hex + 2, se->d_name, SHA1_HEXSZ - 2);
				hex[SHA1_HEXSZ] = '\0';
				check_file(f, path, hex);
			}
			free(path);
		}
		closedir(sub);
		free(subdir);
	}
	closedir(d);
	free(objects);
	if (f->n > 1)
		qsort(f->items, f->n, sizeof(*f->items), cmp_hex);
	return 0;
}

/* The added tags and tombstones, per minor version (store.h): checked
 * line by line, and the tombstones listed, since they remove entries on
 * every host that fetches them.  An entry whose tags are all removed is
 * named: the next push or fetch unregisters it.  */
static void report_tags(struct fsck *f, enum tagset_kind kind)
{
	const char *what = kind == TAGS_ADDED ? "added" : "removed";
	char *dir = xstrfmt("%s/%s", f->dir, what);
	DIR *d = opendir(dir);
	struct dirent *de;
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT, raw = STRBUF_INIT;

	while (d && (de = readdir(d))) {
		struct tagset t = TAGSET_INIT;
		char *path;
		size_t k, ids = 0;
		if (de->d_name[0] == '.')
			continue;
		if (strlen(de->d_name) != SHA1_HEXSZ || !is_hex(de->d_name, SHA1_HEXSZ)) {
			char *shown = xstrdup_printable(de->d_name);
			found(f, 0, "unknown file %s/%s left alone (not named by a SHA-1)", dir, shown);
			free(shown);
			continue;
		}
		path = xstrfmt("%s/%s", dir, de->d_name);
		strbuf_reset(&why);
		strbuf_reset(&raw);
		if (fs_read_trusted(&raw, path) < 0) {
			found(f, 1, "unreadable %s: %s", path, strerror(errno));
		} else if (tagset_parse(&t, kind, raw.buf ? raw.buf : "", raw.len, &why) < 0) {
			found(f, 1, "damaged %s of %.7s (%s): %s", kind == TAGS_ADDED ? "added tags" :
				    "tombstones", de->d_name, path, why.buf);
		} else if (kind == TAGS_REMOVED) {
			strbuf_reset(&sb);
			for (k = 0; k < t.n; k++)
				if (!k || strncmp(t.v[k - 1], t.v[k], SHA1_HEXSZ)) {
					strbuf_addf(&sb, " %.12s", t.v[k]);
					ids++;
				}
			found(f, 0, "tombstones of %.7s: %zu entr%s removed with perun rm (push and "
				    "fetch remove %s on other hosts too):%s",
			      de->d_name, ids, ids == 1 ? "y" : "ies", ids == 1 ? "it" : "them",
			      strbuf_str(&sb));
		}
		free(path);
		tagset_release(&t);
	}
	if (d)
		closedir(d);
	strbuf_release(&sb);
	strbuf_release(&why);
	strbuf_release(&raw);
	free(dir);
}

/* Entries of intact indexes none of whose tags lives.  */
static void check_live(struct fsck *f)
{
	size_t i, j;

	for (i = 0; i < f->n; i++) {
		struct item *it = &f->items[i];
		struct tagset added = TAGSET_INIT, removed = TAGSET_INIT;
		if (!it->is_index || it->bad)
			continue;
		if (store_read_tagset(f->dir, TAGS_ADDED, it->hex, &added) < 0 ||
		    store_read_tagset(f->dir, TAGS_REMOVED, it->hex, &removed) < 0) {
			tagset_release(&added);
			continue;	/* reported as damaged */
		}
		for (j = 0; j < it->idx.n; j++) {
			char hex[SHA1_HEXSZ + 1];
			sha1_to_hex(it->idx.entries[j].id, hex);
			if (!tags_live(&added, &removed, hex, 1, NULL)) {
				char *shown = xstrdup_printable(it->idx.entries[j].path);
				found(f, 0, "index %.7s: %zu@i (%s) was removed with perun rm and "
					    "none of its registrations is left: the next push or "
					    "fetch unregisters it (perun rm and perun add it again "
					    "to keep it)",
				      it->hex, j, shown);
				free(shown);
			}
		}
		tagset_release(&added);
		tagset_release(&removed);
	}
}

/* What the items say: damage, entries naming what is not there, objects
 * in no index, tombstones.  */
static void check_items(struct fsck *f)
{
	size_t i, j, nobj = 0, nidx = 0;

	for (i = 0; i < f->n; i++) {
		struct item *it = &f->items[i];
		if (it->is_index) {
			nidx++;
			if (it->bad)
				found(f, 1, "damaged index %.7s (%s): %s; %zu entr%s still readable",
				      it->hex, it->hex, it->why, it->idx.n,
				      it->idx.n == 1 ? "y" : "ies");
		} else {
			nobj++;
			if (it->bad)
				found(f, 1, "damaged %s", it->why);
		}
	}
	/* entries must have a file name and name valid objects */
	for (i = 0; i < f->n; i++) {
		struct item *it = &f->items[i];
		for (j = 0; it->is_index && j < it->idx.n; j++) {
			char hex[SHA1_HEXSZ + 1];
			struct item *o;
			const char *why = pidx_name_problem(it->idx.entries[j].path);
			if (why) {
				char *shown = xstrdup_printable(it->idx.entries[j].path);
				found(f, 1, "index %.7s: %zu@i has a damaged name, '%s': %s", it->hex,
				      j, shown, why);
				free(shown);
				it->bad_entries++;
			}
			sha1_to_hex(it->idx.entries[j].id, hex);
			o = find(f, hex);
			if (!o || o->is_index || o->bad) {
				char *shown = xstrdup_printable(it->idx.entries[j].path);
				found(f, 1, "index %.7s: %zu@i (%s) names %s object %.12s", it->hex, j,
				      shown, !o ? "a missing" : "a damaged", hex);
				free(shown);
				it->bad_entries++;
				continue;
			}
			o->referenced = 1;
			if (o->origin && strcmp(o->origin, it->hex)) {
				char *shown = xstrdup_printable(it->idx.entries[j].path);
				found(f, 0, "index %.7s: %zu@i (%s) was collected at %.7s", it->hex, j,
				      shown, o->origin);
				free(shown);
			}
		}
	}
	/* objects in no index: unregistered (perun rm), or their index was lost */
	for (i = 0; i < f->n; i++) {
		struct item *it = &f->items[i], *x;
		if (it->is_index || it->bad || it->referenced)
			continue;
		x = it->origin ? find(f, it->origin) : NULL;
		if (!it->origin)
			found(f, 0, "object %.12s is in no index and records no minor version "
				    "(stored by an older perun): it is kept",
			      it->hex);
		else if (x && x->is_index && !x->bad && !x->bad_entries)
			found(f, 0, "object %.12s (of %.7s) is in no index: unregistered with "
				    "perun rm; it is kept",
			      it->hex, it->origin);
		else if (!x || !x->is_index)
			found(f, 1, "object %.12s belongs to %.7s, whose index is missing", it->hex,
			      it->origin);
	}
	report_tags(f, TAGS_ADDED);
	report_tags(f, TAGS_REMOVED);
	check_live(f);
	f->res->objects = nobj;
	f->res->indexes = nidx;
}

/* Moves path into .perun/damaged/ as name (never replacing a file there);
 * returns the new path.  */
static char *move_aside(struct fsck *f, const char *path, const char *name)
{
	char *dir = xstrfmt("%s/damaged", f->dir), *to = NULL;
	int k;

	if (fs_mkdir_p(dir, 0755) < 0)
		goto out;
	for (k = 1; k < 1000; k++) {
		to = k == 1 ? xstrfmt("%s/%s", dir, name) : xstrfmt("%s/%s.%d", dir, name, k);
		if (link(path, to) == 0) {
			if (unlink(path) < 0) {
				pr_error_errno("cannot remove %s (a copy is in %s)", path, to);
				free(to);
				to = NULL;
			}
			goto out;
		}
		if (errno != EEXIST) {
			pr_error_errno("cannot move %s to %s", path, to);
			free(to);
			to = NULL;
			goto out;
		}
		free(to);
		to = NULL;
	}
	pr_error("cannot move %s aside: %s holds too many copies", path, dir);
out:
	free(dir);
	return to;
}

static int cmp_mtime(const void *a, const void *b)
{
	const struct item *x = *(struct item *const *)a, *y = *(struct item *const *)b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->hex, y->hex);
}

/* Rebuilds the index of minor: the readable entries that name valid
 * objects (a damaged name replaced by one made from the command), then the
 * objects that record minor and are in no index.  Says what became of each
 * N@i that moved, was dropped or renamed, and of each entry re-indexed: the
 * numbers of the rest shift.  */
static int reindex(struct fsck *f, const char *minor, struct item *old)
{
	struct pidx x;
	struct item **add = NULL;
	size_t i, j, nadd = 0, kept = 0, dropped = 0;
	char *path = store_object_path(f->dir, minor), *aside = NULL, *shown;
	struct strv moves = STRV_INIT;	/* what became of each N@i */
	struct strbuf line = STRBUF_INIT;
	int ret = -1;

	pidx_init(&x);
	for (i = 0; old && i < old->idx.n; i++) {
		char hex[SHA1_HEXSZ + 1];
		struct item *o;
		sha1_to_hex(old->idx.entries[i].id, hex);
		o = find(f, hex);
		for (j = 0; j < x.n && memcmp(x.entries[j].id, old->idx.entries[i].id, SHA1_RAWSZ);
		     j++)
			;
		shown = xstrdup_printable(old->idx.entries[i].path);
		if (!o || o->is_index || o->bad || j < x.n) {
			if (j == x.n) {
				dropped++;
				strbuf_reset(&line);
				strbuf_addf(&line, "  %zu@i (%s) dropped: its object is missing or "
					    "damaged", i, shown);
				strv_push(&moves, strbuf_str(&line));
			}
			free(shown);
			continue;
		}
		if (pidx_name_problem(old->idx.entries[i].path)) {
			char *cmd = object_cmd(f, hex);
			char *name = xstrfmt("%s-recovered-%.7s.perf", cmd, hex);
			pidx_append(&x, old->idx.entries[i].time, old->idx.entries[i].id, name);
			strbuf_reset(&line);
			strbuf_addf(&line, "  %zu@i (damaged name '%s') renamed %s", i, shown, name);
			strv_push(&moves, strbuf_str(&line));
			free(cmd);
			free(name);
		} else {
			pidx_append(&x, old->idx.entries[i].time, old->idx.entries[i].id,
				    old->idx.entries[i].path);
		}
		if (x.n - 1 != i) {
			strbuf_reset(&line);
			strbuf_addf(&line, "  %zu@i (%s) is now %zu@i", i, shown, x.n - 1);
			strv_push(&moves, strbuf_str(&line));
		}
		free(shown);
		kept++;
	}
	for (i = 0; i < f->n; i++) {
		struct item *o = &f->items[i];
		unsigned char id[SHA1_RAWSZ];
		if (o->is_index || o->bad || !o->origin || strcmp(o->origin, minor))
			continue;
		for (j = 0; j < SHA1_RAWSZ; j++)
			sscanf(o->hex + 2 * j, "%2hhx", &id[j]);
		for (j = 0; j < x.n && memcmp(x.entries[j].id, id, SHA1_RAWSZ); j++)
			;
		if (j < x.n)
			continue;
		add = xrealloc(add, (nadd + 1) * sizeof(*add));
		add[nadd++] = o;
	}
	if (nadd > 1)
		qsort(add, nadd, sizeof(*add), cmp_mtime);
	for (i = 0; i < nadd; i++) {
		unsigned char id[SHA1_RAWSZ];
		char *cmd = object_cmd(f, add[i]->hex);
		char *name = xstrfmt("%s-recovered-%.7s.perf", cmd, add[i]->hex);
		free(cmd);
		for (j = 0; j < SHA1_RAWSZ; j++)
			sscanf(add[i]->hex + 2 * j, "%2hhx", &id[j]);
		pidx_append(&x, (uint32_t)add[i]->mtime, id, name);
		strbuf_reset(&line);
		strbuf_addf(&line, "  %s (object %.12s) re-indexed as %zu@i", name, add[i]->hex,
			    x.n - 1);
		strv_push(&moves, strbuf_str(&line));
		add[i]->referenced = 1;
		free(name);
	}
	if (old) {
		char *name = xstrfmt("index-%s", minor);
		aside = move_aside(f, path, name);
		free(name);
		if (!aside)
			goto out;
	}
	if (store_write_index(f->dir, minor, &x) < 0)
		goto out;
	repaired(f, "repaired index %.7s: %zu entr%s kept, %zu re-indexed from objects, %zu "
		    "dropped (their objects are missing or damaged)%s%s",
		 minor, kept, kept == 1 ? "y" : "ies", nadd, dropped,
		 aside ? "; the old index is in " : "", aside ? aside : "");
	for (i = 0; i < moves.n; i++)
		repaired(f, "%s", moves.v[i]);
	ret = 0;
out:
	strv_clear(&moves);
	strbuf_release(&line);
	free(aside);
	free(add);
	free(path);
	pidx_release(&x);
	return ret;
}

static int repair_items(struct fsck *f)
{
	size_t i;
	int ret = 0;

	/* damaged objects out of the way first: their index entries go */
	for (i = 0; i < f->n; i++) {
		struct item *it = &f->items[i];
		char *path, *name, *aside;
		if (it->is_index || !it->bad)
			continue;
		path = store_object_path(f->dir, it->hex);
		name = xstrfmt("object-%s", it->hex);
		aside = move_aside(f, path, name);
		if (aside)
			repaired(f, "moved damaged object %.12s to %s", it->hex, aside);
		else
			ret = -1;
		free(aside);
		free(name);
		free(path);
	}
	for (i = 0; i < f->n; i++) {
		struct item *it = &f->items[i];
		if (it->is_index && (it->bad || it->bad_entries) && reindex(f, it->hex, it) < 0)
			ret = -1;
	}
	/* indexes that are gone: rebuilt from the objects that record them */
	for (i = 0; i < f->n; i++) {
		struct item *it = &f->items[i], *x;
		if (it->is_index || it->bad || it->referenced || !it->origin)
			continue;
		x = find(f, it->origin);
		if (x && x->is_index)
			continue;
		/* reindex marks every object of that minor: the loop skips the rest */
		if (reindex(f, it->origin, NULL) < 0)
			ret = -1;
	}
	return ret;
}

int store_fsck(const char *dir, int repair, struct fsck_result *res)
{
	struct fsck f;
	size_t i;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&f, 0, sizeof(f));
	f.dir = dir;
	f.res = res;
	if (scan(&f) < 0)
		goto out;
	check_items(&f);
	res->checked = 1;
	ret = 0;
	if (repair && res->problems) {
		ret = repair_items(&f);
		res->repaired = ret == 0;
	}
out:
	for (i = 0; i < f.n; i++) {
		free(f.items[i].why);
		free(f.items[i].origin);
		pidx_release(&f.items[i].idx);
	}
	free(f.items);
	return ret;
}

static void lines_free(struct fsck_line *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(l[i].text);
	free(l);
}

void fsck_result_release(struct fsck_result *res)
{
	lines_free(res->found, res->nfound);
	lines_free(res->repairs, res->nrepairs);
	memset(res, 0, sizeof(*res));
}
