/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "store"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "store/store.h"
#include "util/fs.h"
#include "util/log.h"

void pidx_init(struct pidx *x)
{
	x->entries = NULL;
	x->n = 0;
}

void pidx_release(struct pidx *x)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		free(x->entries[i].path);
	free(x->entries);
	pidx_init(x);
}

void pidx_append(struct pidx *x, uint32_t time, const unsigned char id[SHA1_RAWSZ],
		 const char *path)
{
	struct pidx_entry *e;

	x->entries = xrealloc(x->entries, (x->n + 1) * sizeof(*x->entries));
	e = &x->entries[x->n++];
	e->time = time;
	memcpy(e->id, id, SHA1_RAWSZ);
	e->path = xstrdup(path);
}

void pidx_remove(struct pidx *x, size_t i)
{
	free(x->entries[i].path);
	memmove(&x->entries[i], &x->entries[i + 1], (x->n - i - 1) * sizeof(*x->entries));
	x->n--;
}

static void put_u32(struct strbuf *sb, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 24) };
	strbuf_add(sb, b, 4);
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

const char *pidx_name_problem(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	if (!*p || !strcmp(name, ".") || !strcmp(name, ".."))
		return "not a file name";
	if (strchr(name, '/'))
		return "it holds a '/': an entry names a file, not a path";
	while (*p) {
		size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 :
			   (*p & 0xf8) == 0xf0 ? 4 : 0, k;
		if (*p < 0x20 || *p == 0x7f)
			return "it holds a control character";
		if (!n || (n == 2 && *p < 0xc2))
			return "it is not valid UTF-8";
		for (k = 1; k < n; k++)
			if ((p[k] & 0xc0) != 0x80)
				return "it is not valid UTF-8";
		if (n == 2 && *p == 0xc2 && p[1] < 0xa0)
			return "it holds a control character";
		p += n;
	}
	return NULL;
}

void pidx_serialize(const struct pidx *x, struct strbuf *out)
{
	unsigned char sum[SHA1_RAWSZ];
	struct sha1_ctx c;
	size_t i, start = out->len;

	strbuf_add(out, "pidx", 4);
	put_u32(out, PIDX_VERSION);
	put_u32(out, (uint32_t)x->n);
	for (i = 0; i < x->n; i++) {
		put_u32(out, x->entries[i].time);
		strbuf_add(out, x->entries[i].id, SHA1_RAWSZ);
		strbuf_add(out, x->entries[i].path, strlen(x->entries[i].path) + 1);
	}
	sha1_init(&c);
	sha1_update(&c, out->buf + start, out->len - start);
	sha1_final(&c, sum);
	strbuf_add(out, sum, SHA1_RAWSZ);
}

int pidx_parse(struct pidx *x, const unsigned char *buf, size_t len, const char *what)
{
	unsigned char sum[SHA1_RAWSZ];
	struct sha1_ctx c;
	size_t off = 12, i;
	uint32_t n;

	pidx_init(x);
	if (len < 12 + SHA1_RAWSZ || memcmp(buf, "pidx", 4))
		return pr_error("%s: not a perun index (bad signature or too short): run 'perun "
				"fsck --repair' to re-index its profiles (the damaged file is kept "
				"aside)",
				what);
	if (get_u32(buf + 4) != PIDX_VERSION)
		return pr_error("%s: index version %u is not supported (perun reads %d)", what,
				get_u32(buf + 4), PIDX_VERSION);
	sha1_init(&c);
	sha1_update(&c, buf, len - SHA1_RAWSZ);
	sha1_final(&c, sum);
	if (memcmp(sum, buf + len - SHA1_RAWSZ, SHA1_RAWSZ))
		return pr_error("%s: index checksum mismatch (corrupted): run 'perun fsck --repair' "
				"to re-index its profiles (the damaged file is kept aside)",
				what);
	n = get_u32(buf + 8);
	for (i = 0; i < n; i++) {
		const unsigned char *nul;
		if (off + 4 + SHA1_RAWSZ >= len - SHA1_RAWSZ)
			goto bad;
		nul = memchr(buf + off + 4 + SHA1_RAWSZ, '\0',
			     len - SHA1_RAWSZ - (off + 4 + SHA1_RAWSZ));
		if (!nul)
			goto bad;
		pidx_append(x, get_u32(buf + off), buf + off + 4,
			    (const char *)buf + off + 4 + SHA1_RAWSZ);
		off = (size_t)(nul - buf) + 1;
	}
	if (off != len - SHA1_RAWSZ)
		goto bad;
	return 0;
bad:
	pidx_release(x);
	return pr_error("%s: index entries do not match its count of %u (corrupted): run "
			"'perun fsck --repair' to re-index its profiles", what, n);
}

void object_build(struct strbuf *out, const char *type, const char *json, size_t len)
{
	strbuf_addf(out, "profile %s %zu", type, len);
	strbuf_addch(out, '\0');
	strbuf_add(out, json, len);
}

char *store_object_path(const char *perun_dir, const char *hex)
{
	return xstrfmt("%s/objects/%.2s/%s", perun_dir, hex, hex + 2);
}

static int write_file_new(const char *path, const void *data, size_t len, mode_t mode)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int ret;

	if (slash)
		*slash = '\0';
	ret = fs_mkdir_p(dir, 0755);
	free(dir);
	if (ret < 0)
		return -1;
	return fs_write_atomic(path, data, len, mode);
}

int store_write_object(const char *perun_dir, const char *type, const char *json, size_t len,
		       char hex[SHA1_HEXSZ + 1])
{
	struct strbuf obj = STRBUF_INIT;
	unsigned char *z = NULL;
	uLongf zlen;
	char *path = NULL;
	int ret = -1;

	object_build(&obj, type, json, len);
	sha1_hex(obj.buf, obj.len, hex);
	path = store_object_path(perun_dir, hex);
	if (fs_exists(path)) {
		ret = 0;	/* the same content is stored already */
		goto out;
	}
	zlen = compressBound(obj.len);
	z = xmalloc(zlen);
	if (compress(z, &zlen, (const Bytef *)obj.buf, obj.len) != Z_OK) {
		pr_error("zlib compress failed for object %s", hex);
		goto out;
	}
	ret = write_file_new(path, z, zlen, 0444);
out:
	free(z);
	free(path);
	strbuf_release(&obj);
	return ret;
}

/* The most an object may inflate to: a fetched object is checked before it
 * is trusted, and a small zlib bomb must not take the memory of the host.  */
#define OBJECT_MAX_INFLATED ((size_t)1 << 30)
#define OBJECT_MAX_HEADER 256

/* Inflates in fixed chunks, hashing as it goes: at most the header and the
 * length it claims (and never more than OBJECT_MAX_INFLATED) are read, and
 * the content is kept only when json asks for it.  */
int store_check_object_bytes(const char *hex, const void *data, size_t zlen, struct strbuf *json,
			     char **type, struct strbuf *why)
{
	unsigned char chunk[65536], raw[SHA1_RAWSZ];
	char hdr[OBJECT_MAX_HEADER + 1], got[SHA1_HEXSZ + 1];
	struct sha1_ctx c;
	z_stream zs;
	int zr = Z_OK, ret = -1, have_hdr = 0;
	size_t hlen = 0, total = 0, want = 0, body = 0, json0 = json ? json->len : 0;
	char *sp1 = NULL, *sp2 = NULL, *end;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK) {
		strbuf_addstr(why, "zlib inflateInit failed (out of memory?)");
		return -1;
	}
	sha1_init(&c);
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)zlen;
	while (zr == Z_OK) {
		size_t n, off = 0;
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END)
			break;
		n = sizeof(chunk) - zs.avail_out;
		if (!n && zr == Z_OK && !zs.avail_in)
			break;
		sha1_update(&c, chunk, n);
		total += n;
		while (!have_hdr && off < n) {
			if (hlen == OBJECT_MAX_HEADER) {
				strbuf_addstr(why, "bad header (not 'profile TYPE LENGTH')");
				goto out;
			}
			hdr[hlen++] = (char)chunk[off++];
			if (hdr[hlen - 1] != '\0')
				continue;
			have_hdr = 1;
			if (strncmp(hdr, "profile ", 8) || !(sp1 = strchr(hdr, ' ')) ||
			    !(sp2 = strchr(sp1 + 1, ' ')) || sp2 == sp1 + 1 || sp2[1] < '0' ||
			    sp2[1] > '9') {
				strbuf_addstr(why, "bad header (not 'profile TYPE LENGTH')");
				goto out;
			}
			errno = 0;
			want = strtoul(sp2 + 1, &end, 10);
			if (*end || errno || want > OBJECT_MAX_INFLATED - hlen) {
				strbuf_addf(why, "header claims %s bytes (more than %zu; refused)",
					    sp2 + 1, OBJECT_MAX_INFLATED - hlen);
				goto out;
			}
		}
		body = total - hlen;
		if (have_hdr && body > want) {
			strbuf_addf(why, "header says %zu bytes, holds more", want);
			goto out;
		}
		if (!have_hdr && total > OBJECT_MAX_HEADER) {
			strbuf_addstr(why, "bad header (not 'profile TYPE LENGTH')");
			goto out;
		}
		if (json && have_hdr)
			strbuf_add(json, chunk + off, n - off);
	}
	if (zr != Z_STREAM_END) {
		strbuf_addstr(why, "not valid zlib data (corrupted)");
		goto out;
	}
	sha1_final(&c, raw);
	sha1_to_hex(raw, got);
	if (strcmp(got, hex)) {
		strbuf_addf(why, "content hashes to %s (corrupted)", got);
		goto out;
	}
	if (!have_hdr) {
		strbuf_addstr(why, "bad header (not 'profile TYPE LENGTH')");
		goto out;
	}
	if (body != want) {
		strbuf_addf(why, "header says %zu bytes, holds %zu", want, body);
		goto out;
	}
	if (type)
		*type = strndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	ret = 0;
out:
	inflateEnd(&zs);
	if (ret < 0 && json && json->len > json0) {
		json->len = json0;
		json->buf[json0] = '\0';
	}
	return ret;
}

int store_check_object(const char *perun_dir, const char *hex, struct strbuf *json, char **type,
		       struct strbuf *why)
{
	struct strbuf z = STRBUF_INIT, sub = STRBUF_INIT;
	char *path = store_object_path(perun_dir, hex);
	int ret = -1;

	if (strbuf_read_file(&z, path) < 0) {
		strbuf_addf(why, "object %s (%s): %s", hex, path, strerror(errno));
		goto out;
	}
	ret = store_check_object_bytes(hex, z.buf, z.len, json, type, &sub);
	if (ret < 0) {
		/* the messages fsck and show have always printed */
		if (strstr(sub.buf, "header"))
			strbuf_addf(why, "object %s: %s", hex, sub.buf);
		else
			strbuf_addf(why, "object %s (%s): %s", hex, path, sub.buf);
	}
out:
	free(path);
	strbuf_release(&z);
	strbuf_release(&sub);
	return ret;
}

int store_put_file(const char *perun_dir, const char *hex, const void *data, size_t len,
		   mode_t mode)
{
	char *path = store_object_path(perun_dir, hex);
	int ret = write_file_new(path, data, len, mode);

	free(path);
	return ret;
}

int store_read_object(const char *perun_dir, const char *hex, struct strbuf *json, char **type)
{
	struct strbuf why = STRBUF_INIT;
	int ret = store_check_object(perun_dir, hex, json, type, &why);

	if (ret < 0)
		pr_error("%s", why.buf);
	strbuf_release(&why);
	return ret;
}

/* The entries of buf[0..body) that can be read, up to n; *end gets the
 * offset after the last one.  */
static size_t salvage_entries(struct pidx *x, const unsigned char *buf, size_t body, uint32_t n,
			      size_t *end)
{
	size_t off = 12, i;

	pidx_init(x);
	for (i = 0; i < n; i++) {
		const unsigned char *nul;
		if (off + 4 + SHA1_RAWSZ >= body)
			break;
		nul = memchr(buf + off + 4 + SHA1_RAWSZ, '\0', body - (off + 4 + SHA1_RAWSZ));
		if (!nul)
			break;
		pidx_append(x, get_u32(buf + off), buf + off + 4,
			    (const char *)buf + off + 4 + SHA1_RAWSZ);
		off = (size_t)(nul - buf) + 1;
	}
	*end = off;
	return i;
}

int pidx_salvage(struct pidx *x, const unsigned char *buf, size_t len, struct strbuf *why)
{
	unsigned char sum[SHA1_RAWSZ];
	struct sha1_ctx c;
	size_t off, body, i;
	uint32_t n;
	int damaged = 0;

	pidx_init(x);
	if (len < 12 || memcmp(buf, "pidx", 4)) {
		strbuf_addstr(why, "not a perun index (bad signature or too short)");
		return 1;
	}
	if (get_u32(buf + 4) != PIDX_VERSION) {
		strbuf_addf(why, "index version %u is not supported", get_u32(buf + 4));
		return 1;
	}
	body = len >= 12 + SHA1_RAWSZ ? len - SHA1_RAWSZ : len;
	if (len < 12 + SHA1_RAWSZ) {
		strbuf_addstr(why, "checksum missing (truncated)");
		damaged = 1;
	} else {
		sha1_init(&c);
		sha1_update(&c, buf, body);
		sha1_final(&c, sum);
		if (memcmp(sum, buf + body, SHA1_RAWSZ)) {
			strbuf_addstr(why, "checksum mismatch");
			damaged = 1;
		}
	}
	n = get_u32(buf + 8);
	i = salvage_entries(x, buf, body, n, &off);
	if (damaged && body != len) {
		/* a truncated file has no checksum: its last bytes may be entries */
		struct pidx y;
		size_t off2, k = salvage_entries(&y, buf, len, n, &off2);
		if (k > x->n) {
			pidx_release(x);
			*x = y;
			i = k;
			off = off2;
			body = len;
		} else {
			pidx_release(&y);
		}
	}
	if (i < n || off != body) {
		strbuf_addf(why, "%sentries do not match its count of %u", damaged ? ", " : "", n);
		damaged = 1;
	}
	return damaged;
}

int store_read_index(const char *perun_dir, const char *minor, struct pidx *x)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = store_object_path(perun_dir, minor);
	int ret;

	pidx_init(x);
	if (strbuf_read_file(&sb, path) < 0) {
		ret = errno == ENOENT ? 0 : pr_error_errno("index %s", path);
	} else {
		ret = pidx_parse(x, (const unsigned char *)sb.buf, sb.len, path);
	}
	free(path);
	strbuf_release(&sb);
	return ret;
}

int store_write_index(const char *perun_dir, const char *minor, const struct pidx *x)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = store_object_path(perun_dir, minor);
	int ret;

	pidx_serialize(x, &sb);
	ret = write_file_new(path, sb.buf, sb.len, 0644);
	free(path);
	strbuf_release(&sb);
	return ret;
}

/* --- added tags and tombstones --------------------------------------------- */

void tagset_release(struct tagset *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int hex_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

void tagset_append(struct tagset *t, const char *hex, const char *tag)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	memcpy(t->v[t->n], hex, SHA1_HEXSZ);
	if (tag) {
		t->v[t->n][SHA1_HEXSZ] = ' ';
		memcpy(t->v[t->n] + SHA1_HEXSZ + 1, tag, TAG_HEXSZ);
		t->v[t->n][TAGLINE_SZ - 1] = '\0';
	} else {
		t->v[t->n][SHA1_HEXSZ] = '\0';
	}
	t->n++;
}

/* Sorts the lines and keeps each once: O(n log n) for any number of lines
 * a remote sends, where adding them one by one in order was quadratic.  */
void tagset_normalize(struct tagset *t)
{
	size_t i, out = 0;

	if (!t->n)
		return;
	qsort(t->v, t->n, sizeof(*t->v), cmp_line);
	for (i = 0; i < t->n; i++)
		if (!out || strcmp(t->v[out - 1], t->v[i]))
			memmove(t->v[out++], t->v[i], TAGLINE_SZ);
	t->n = out;
}

int tagset_has(const struct tagset *t, const char *line)
{
	return t->n && bsearch(line, t->v, t->n, sizeof(*t->v), cmp_line) != NULL;
}

size_t tagset_range(const struct tagset *t, const char *hex, size_t *first)
{
	size_t lo = 0, hi = t->n, end;

	/* the first line not below hex: "<id>" sorts before "<id> <tag>" */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(t->v[mid], hex, SHA1_HEXSZ) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < t->n && !strncmp(t->v[end], hex, SHA1_HEXSZ); end++)
		;
	*first = lo;
	return end - lo;
}

int tagset_parse(struct tagset *t, enum tagset_kind kind, const char *buf, size_t len,
		 struct strbuf *why)
{
	const char *magic = kind == TAGS_ADDED ? ADDED_MAGIC : TOMBSTONE_MAGIC;
	size_t off = strlen(magic), line = 1;
	int v1 = 0;

	memset(t, 0, sizeof(*t));
	if (kind == TAGS_REMOVED && len >= off && !memcmp(buf, TOMBSTONE_MAGIC_V1, off))
		v1 = 1;
	else if (len < off || memcmp(buf, magic, off)) {
		strbuf_addf(why, "not a perun %s file (no '%.*s' line)",
			    kind == TAGS_ADDED ? "added-tags" : "tombstone", (int)off - 1, magic);
		return -1;
	}
	while (off < len) {
		const char *s = buf + off, *nl = memchr(s, '\n', len - off);
		size_t n = nl ? (size_t)(nl - s) : 0;
		line++;
		if (n == SHA1_HEXSZ && kind == TAGS_REMOVED && hex_ok(s, n)) {
			tagset_append(t, s, NULL);
		} else if (n == TAGLINE_SZ - 1 && !v1 && hex_ok(s, SHA1_HEXSZ) &&
			   s[SHA1_HEXSZ] == ' ' && hex_ok(s + SHA1_HEXSZ + 1, TAG_HEXSZ) &&
			   (kind == TAGS_REMOVED ||
			    memcmp(s + SHA1_HEXSZ + 1, LEGACY_TAG, TAG_HEXSZ))) {
			tagset_append(t, s, s + SHA1_HEXSZ + 1);
		} else {
			tagset_release(t);
			strbuf_addf(why, "line %zu is not %s", line,
				    v1 ? "an object id"
				    : kind == TAGS_ADDED
					? "an object id and a tag of 16 hex digits, not zeros"
					: "an object id, alone or with a tag of 16 hex digits");
			return -1;
		}
		off = (size_t)(nl - buf) + 1;
	}
	tagset_normalize(t);
	return 0;
}

char *store_tagset_path(const char *perun_dir, enum tagset_kind kind, const char *minor)
{
	return xstrfmt("%s/%s/%s", perun_dir, kind == TAGS_ADDED ? "added" : "removed", minor);
}

int store_read_tagset(const char *perun_dir, enum tagset_kind kind, const char *minor,
		      struct tagset *t)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	char *path = store_tagset_path(perun_dir, kind, minor);
	int ret = 0;

	memset(t, 0, sizeof(*t));
	if (fs_read_trusted(&sb, path) < 0) {
		if (errno != ENOENT)
			ret = -1;
	} else if (tagset_parse(t, kind, sb.buf ? sb.buf : "", sb.len, &why) < 0) {
		ret = pr_error("%s: %s: run 'perun fsck'", path, why.buf);
	}
	free(path);
	strbuf_release(&sb);
	strbuf_release(&why);
	return ret;
}

int store_add_tagset(const char *perun_dir, enum tagset_kind kind, const char *minor,
		     const struct tagset *add, size_t *grew)
{
	struct tagset t;
	struct strbuf sb = STRBUF_INIT;
	char *dir = xstrfmt("%s/%s", perun_dir, kind == TAGS_ADDED ? "added" : "removed");
	char *path = store_tagset_path(perun_dir, kind, minor);
	size_t i, before;
	int ret = -1;

	if (grew)
		*grew = 0;
	if (store_read_tagset(perun_dir, kind, minor, &t) < 0)
		goto out;
	before = t.n;
	for (i = 0; i < add->n; i++)
		if (!tagset_has(&t, add->v[i]))
			tagset_append(&t, add->v[i],
				      add->v[i][SHA1_HEXSZ] ? add->v[i] + SHA1_HEXSZ + 1 : NULL);
	tagset_normalize(&t);
	if (grew)
		*grew = t.n - before;
	if (t.n == before) {
		ret = 0;
		goto out;
	}
	strbuf_addstr(&sb, kind == TAGS_ADDED ? ADDED_MAGIC : TOMBSTONE_MAGIC);
	for (i = 0; i < t.n; i++)
		strbuf_addf(&sb, "%s\n", t.v[i]);
	if ((mkdir(dir, 0755) < 0 && errno != EEXIST) ||
	    fs_write_atomic(path, sb.buf, sb.len, 0644) < 0)
		goto out;
	ret = 0;
out:
	tagset_release(&t);
	strbuf_release(&sb);
	free(dir);
	free(path);
	return ret;
}

int tag_new(char tag[TAG_HEXSZ + 1])
{
	unsigned char b[TAG_HEXSZ / 2];
	size_t i;

	do {
		if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
			return pr_error_errno("getrandom");
		for (i = 0; i < sizeof(b); i++)
			snprintf(tag + 2 * i, 3, "%02x", b[i]);
	} while (!strcmp(tag, LEGACY_TAG));
	return 0;
}

size_t tags_live(const struct tagset *added, const struct tagset *removed, const char *hex,
		 int indexed, struct tagset *out)
{
	size_t first, n, i, live = 0, rf;
	char line[TAGLINE_SZ];

	/* the legacy tag: an entry's whose id was never added with a tag; an
	 * id alone among the tombstones removes it too */
	n = tagset_range(added, hex, &first);
	if (indexed && !n) {
		snprintf(line, sizeof(line), "%.*s %s", SHA1_HEXSZ, hex, LEGACY_TAG);
		if (!tagset_has(removed, line) &&
		    !(tagset_range(removed, hex, &rf) && !removed->v[rf][SHA1_HEXSZ])) {
			live++;
			if (out)
				tagset_append(out, hex, LEGACY_TAG);
		}
	}
	for (i = first; i < first + n; i++)
		if (!tagset_has(removed, added->v[i])) {
			live++;
			if (out)
				tagset_append(out, hex, added->v[i] + SHA1_HEXSZ + 1);
		}
	return live;
}
