#include "config.h"

#define PR_FMT "cache"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/cache.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

#define META_MAGIC "perun-cache 1"
#define DEFAULT_MAX_SIZE (1ull << 30)

char *cache_default_dir(void)
{
	const char *d = getenv("PERUN_CACHE_DIR");

	if (d && *d)
		return xstrdup(d);
	d = getenv("XDG_CACHE_HOME");
	if (d && *d)
		return xstrfmt("%s/perun", d);
	d = getenv("HOME");
	return xstrfmt("%s/.cache/perun", d && *d ? d : "/root");
}

/* Owned by us and writable by nobody else.  */
static int safe_stat(const char *path, const struct stat *st)
{
	if (st->st_uid != geteuid())
		return pr_error("refusing %s: owned by uid %d, not %d: remove it or run "
				"'perun cache clear'",
				path, (int)st->st_uid, (int)geteuid());
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return pr_error("refusing %s: writable by group or others (mode %03o): "
				"run 'chmod go-w %s' or 'perun cache clear'",
				path, (unsigned)(st->st_mode & 0777), path);
	return 0;
}

int cache_open(struct cache *c, const char *dir)
{
	struct stat st;
	char *mods;

	c->dir = xstrdup(dir);
	c->lock_fd = -1;
	if (fs_mkdir_p(dir, 0700) < 0)
		goto fail;
	if (stat(dir, &st) < 0) {
		pr_error_errno("stat %s", dir);
		goto fail;
	}
	if (safe_stat(dir, &st) < 0)
		goto fail;
	mods = xstrfmt("%s/modules", dir);
	if (mkdir(mods, 0700) < 0 && errno != EEXIST) {
		pr_error_errno("mkdir %s", mods);
		free(mods);
		goto fail;
	}
	free(mods);
	return 0;
fail:
	free(c->dir);
	c->dir = NULL;
	return -1;
}

void cache_close(struct cache *c)
{
	cache_unlock(c);
	free(c->dir);
	c->dir = NULL;
}

int cache_lock(struct cache *c)
{
	char *path = xstrfmt("%s/lock", c->dir);

	c->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (c->lock_fd < 0) {
		pr_error_errno("open %s", path);
		free(path);
		return -1;
	}
	free(path);
	while (flock(c->lock_fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			pr_error_errno("flock");
			close(c->lock_fd);
			c->lock_fd = -1;
			return -1;
		}
	}
	return 0;
}

void cache_unlock(struct cache *c)
{
	if (c->lock_fd >= 0) {
		flock(c->lock_fd, LOCK_UN);
		close(c->lock_fd);
		c->lock_fd = -1;
	}
}

void cache_key(char out[SHA1_HEXSZ + 1], const char *const *parts, size_t n)
{
	struct sha1_ctx ctx;
	unsigned char raw[SHA1_RAWSZ];
	size_t i;

	sha1_init(&ctx);
	sha1_update(&ctx, META_MAGIC, sizeof(META_MAGIC));
	for (i = 0; i < n; i++) {
		char len[32];
		const char *s = parts[i] ? parts[i] : "";
		int l = snprintf(len, sizeof(len), "%zu:", strlen(s));
		sha1_update(&ctx, len, (size_t)l);
		sha1_update(&ctx, s, strlen(s));
	}
	sha1_final(&ctx, raw);
	sha1_to_hex(raw, out);
}

void cache_entry_release(struct cache_entry *e)
{
	free(e->dir);
	free(e->module);
	free(e->runtime);
	free(e->target);
	free(e->stap);
	memset(e, 0, sizeof(*e));
}

static int file_sha1(const char *path, char hex[SHA1_HEXSZ + 1], uint64_t *size)
{
	struct sha1_ctx ctx;
	unsigned char raw[SHA1_RAWSZ], buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	sha1_init(&ctx);
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		sha1_update(&ctx, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	close(fd);
	if (n < 0)
		return -1;
	sha1_final(&ctx, raw);
	sha1_to_hex(raw, hex);
	return 0;
}

/* Reads meta; fills e; returns the recorded module hash in hash.  */
static int read_meta(const char *dir, struct cache_entry *e, char hash[SHA1_HEXSZ + 1])
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/meta", dir), *line, *save = NULL, *module = NULL;
	int ret = -1, magic = 0;

	hash[0] = '\0';
	if (strbuf_read_file(&sb, path) < 0)
		goto out;
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, ' ');
		if (!strcmp(line, META_MAGIC)) {
			magic = 1;
			continue;
		}
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "key"))
			snprintf(e->key, sizeof(e->key), "%s", v);
		else if (!strcmp(line, "module") && !strchr(v, '/'))
			module = xstrdup(v);
		else if (!strcmp(line, "sha1"))
			snprintf(hash, SHA1_HEXSZ + 1, "%s", v);
		else if (!strcmp(line, "runtime"))
			e->runtime = xstrdup(v);
		else if (!strcmp(line, "target"))
			e->target = xstrdup(v);
		else if (!strcmp(line, "stap"))
			e->stap = xstrdup(v);
		else if (!strcmp(line, "probes"))
			e->nprobes = strtoul(v, NULL, 10);
	}
	if (magic && module && e->runtime && strlen(hash) == SHA1_HEXSZ) {
		e->module = xstrfmt("%s/%s", dir, module);
		ret = 0;
	}
out:
	free(module);
	free(path);
	strbuf_release(&sb);
	return ret;
}

static uint64_t dir_size(const char *dir, time_t *mtime)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint64_t total = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode)) {
			total += (uint64_t)st.st_size;
			if (mtime && !strcmp(de->d_name, "meta"))
				*mtime = st.st_mtime;
		}
	}
	closedir(d);
	return total;
}

static int load_entry(struct cache *c, const char *key, struct cache_entry *e,
		      char hash[SHA1_HEXSZ + 1])
{
	memset(e, 0, sizeof(*e));
	e->dir = xstrfmt("%s/modules/%s", c->dir, key);
	if (read_meta(e->dir, e, hash) < 0) {
		snprintf(e->key, sizeof(e->key), "%s", key);
		return -1;
	}
	e->size = dir_size(e->dir, &e->last_used);
	return 0;
}

int cache_verify_entry(struct cache *c, const struct cache_entry *e)
{
	struct stat st;
	char hash[SHA1_HEXSZ + 1], actual[SHA1_HEXSZ + 1];
	struct cache_entry tmp;
	uint64_t size;
	const char *base = strrchr(e->dir, '/');
	int ret = -1;

	if (load_entry(c, base ? base + 1 : e->dir, &tmp, hash) < 0) {
		pr_error("cache entry %s: meta file missing or damaged", e->dir);
		goto out;
	}
	if (strcmp(tmp.key, base ? base + 1 : "")) {
		pr_error("cache entry %s: records key %s, not its own", e->dir, tmp.key);
		goto out;
	}
	if (lstat(tmp.dir, &st) < 0 || !S_ISDIR(st.st_mode) || safe_stat(tmp.dir, &st) < 0)
		goto out;
	if (lstat(tmp.module, &st) < 0 || !S_ISREG(st.st_mode)) {
		pr_error("cache entry %s: module %s missing", e->dir, tmp.module);
		goto out;
	}
	if (safe_stat(tmp.module, &st) < 0) {
		ret = -2;
		goto out;
	}
	if (file_sha1(tmp.module, actual, &size) < 0 || strcmp(actual, hash)) {
		pr_error("cache entry %s: module hash %s does not match the recorded %s "
			 "(corrupted)",
			 e->dir, actual, hash);
		goto out;
	}
	ret = 0;
out:
	cache_entry_release(&tmp);
	return ret;
}

int cache_lookup(struct cache *c, const char *key, const char *stap_id, struct cache_entry *e)
{
	char hash[SHA1_HEXSZ + 1];
	struct stat st;
	char *dir = xstrfmt("%s/modules/%s", c->dir, key);
	int v;

	memset(e, 0, sizeof(*e));
	v = lstat(dir, &st);
	if (v == 0 && safe_stat(dir, &st) < 0) {
		free(dir);
		return -1;
	}
	free(dir);
	if (v < 0)
		return 0;
	if (load_entry(c, key, e, hash) < 0) {
		pr_warn("cache entry %s is damaged (no valid meta): rebuilding it", key);
		goto corrupt;
	}
	v = cache_verify_entry(c, e);
	if (v == -2) {
		cache_entry_release(e);
		return -1;
	}
	if (v < 0) {
		pr_warn("cache entry %s failed verification: rebuilding it", key);
		goto corrupt;
	}
	if (stap_id && e->stap && strcmp(stap_id, e->stap)) {
		pr_info("cache entry %.16s was built by another stap: rebuilding it", key);
		goto corrupt;
	}
	/* LRU: the meta file's mtime is the last use */
	{
		char *meta = xstrfmt("%s/meta", e->dir);
		utimensat(AT_FDCWD, meta, NULL, 0);
		free(meta);
	}
	return 1;
corrupt:
	dir = xstrfmt("%s/modules/%s", c->dir, key);
	fs_remove_tree(dir);
	free(dir);
	cache_entry_release(e);
	return 0;
}

/* Creates path (which must not exist) with data, and fsyncs it.  */
static int write_new(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	const char *p = data;
	size_t off = 0;

	if (fd < 0)
		return pr_error_errno("create %s", path);
	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return pr_error_errno("write %s", path);
		}
		off += (size_t)n;
	}
	if (fsync(fd) < 0 || close(fd) < 0)
		return pr_error_errno("fsync %s", path);
	return 0;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	if (strbuf_read_file(&sb, from) < 0)
		return pr_error_errno("read %s", from);
	ret = write_new(to, sb.buf, sb.len, mode);
	strbuf_release(&sb);
	return ret;
}

int cache_store(struct cache *c, const char *key, const char *module_path, const char *runtime,
		const char *target, size_t nprobes, const char *stap_id, const char *plan_text,
		const char *script, struct cache_entry *e)
{
	char *tmp = xstrfmt("%s/modules/.tmp-XXXXXX", c->dir), *final = NULL, *p = NULL;
	const char *base = strrchr(module_path, '/');
	char hash[SHA1_HEXSZ + 1];
	uint64_t size;
	struct strbuf meta = STRBUF_INIT;
	int ret = -1;

	base = base ? base + 1 : module_path;
	if (!mkdtemp(tmp)) {
		pr_error_errno("mkdtemp %s", tmp);
		goto out;
	}
	chmod(tmp, 0755);
	p = xstrfmt("%s/%s", tmp, base);
	if (copy_file(module_path, p, 0644) < 0 || file_sha1(p, hash, &size) < 0)
		goto fail;
	free(p);
	p = xstrfmt("%s/plan", tmp);
	if (write_new(p, plan_text, strlen(plan_text), 0644) < 0)
		goto fail;
	free(p);
	p = xstrfmt("%s/script.stp", tmp);
	if (write_new(p, script, strlen(script), 0644) < 0)
		goto fail;
	free(p);
	strbuf_addf(&meta, "%s\nkey %s\nmodule %s\nsha1 %s\nruntime %s\ntarget %s\nprobes %zu\n",
		    META_MAGIC, key, base, hash, runtime, target, nprobes);
	if (stap_id)
		strbuf_addf(&meta, "stap %s\n", stap_id);
	p = xstrfmt("%s/meta", tmp);
	if (write_new(p, meta.buf, meta.len, 0644) < 0)
		goto fail;
	final = xstrfmt("%s/modules/%s", c->dir, key);
	if (rename(tmp, final) < 0) {
		if (errno == EEXIST || errno == ENOTEMPTY) {
			/* stored meanwhile by another collect: keep theirs */
			fs_remove_tree(tmp);
		} else {
			pr_error_errno("rename %s to %s", tmp, final);
			goto fail;
		}
	}
	{
		char h2[SHA1_HEXSZ + 1];
		if (load_entry(c, key, e, h2) < 0) {
			pr_error("cache entry %s unreadable right after storing it", final);
			goto out;
		}
	}
	ret = 0;
	goto out;
fail:
	fs_remove_tree(tmp);
out:
	strbuf_release(&meta);
	free(p);
	free(tmp);
	free(final);
	return ret;
}

static int cmp_lru(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	if (x->last_used != y->last_used)
		return x->last_used < y->last_used ? -1 : 1;
	return strcmp(x->key, y->key);
}

int cache_list(struct cache *c, struct cache_entry **out, size_t *n)
{
	char *mods = xstrfmt("%s/modules", c->dir);
	DIR *d = opendir(mods);
	struct dirent *de;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!d) {
		int ret = errno == ENOENT ? 0 : pr_error_errno("opendir %s", mods);
		free(mods);
		return ret;
	}
	while ((de = readdir(d))) {
		char hash[SHA1_HEXSZ + 1];
		struct cache_entry e;
		if (de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		if (load_entry(c, de->d_name, &e, hash) < 0) {
			/* listed anyway so verify and clear can see it */
			e.size = dir_size(e.dir, &e.last_used);
		}
		(*out)[(*n)++] = e;
	}
	closedir(d);
	free(mods);
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), cmp_lru);
	return 0;
}

int cache_prune(struct cache *c, uint64_t max_bytes, size_t *removed)
{
	struct cache_entry *list;
	size_t n, i;
	uint64_t total = 0;

	*removed = 0;
	if (cache_list(c, &list, &n) < 0)
		return -1;
	for (i = 0; i < n; i++)
		total += list[i].size;
	for (i = 0; i < n && total > max_bytes; i++) {
		if (fs_remove_tree(list[i].dir) == 0) {
			total -= list[i].size;
			(*removed)++;
		}
	}
	for (i = 0; i < n; i++)
		cache_entry_release(&list[i]);
	free(list);
	return 0;
}

int cache_clear(struct cache *c, size_t *removed)
{
	char *mods = xstrfmt("%s/modules", c->dir), *tgt = xstrfmt("%s/targets", c->dir);
	DIR *d = opendir(mods);
	struct dirent *de;
	int ret = 0;

	*removed = 0;
	while (d && (de = readdir(d))) {
		char *p;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = xstrfmt("%s/%s", mods, de->d_name);
		if (fs_remove_tree(p) < 0)
			ret = -1;
		else if (de->d_name[0] != '.')
			(*removed)++;
		free(p);
	}
	if (d)
		closedir(d);
	if (fs_remove_tree(tgt) < 0)
		ret = -1;
	free(mods);
	free(tgt);
	return ret;
}

int cache_parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	default: return -1;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

uint64_t cache_max_size(void)
{
	const char *s = getenv("PERUN_CACHE_MAX_SIZE");
	uint64_t v;

	if (s && cache_parse_size(s, &v) == 0)
		return v;
	return DEFAULT_MAX_SIZE;
}
