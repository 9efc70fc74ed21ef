/* SPDX-License-Identifier: GPL-3.0-or-later */
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

#include "runtime/cache.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

#define META_MAGIC "perun-cache 1"
#define DEFAULT_MAX_SIZE (1ull << 30)

/* The fix every refusal of the cache path ends with.  */
#define CACHE_FIX                                                                          \
	"set PERUN_CACHE_DIR to a directory that only you (or root) can write, or collect "  \
	"with --stap-cache-off"

char *cache_default_dir(void)
{
	const char *d = getenv("PERUN_CACHE_DIR");
	char *dir, cwd[4096];

	if (d && *d)
		dir = xstrdup(d);
	else if ((d = getenv("XDG_CACHE_HOME")) && *d)
		dir = xstrfmt("%s/perun", d);
	else
		dir = xstrfmt("%s/.cache/perun", (d = getenv("HOME")) && *d ? d : "/root");
	if (dir[0] != '/' && getcwd(cwd, sizeof(cwd))) {
		char *abs = xstrfmt("%s/%s", cwd, dir);
		free(dir);
		dir = abs;
	}
	return dir;
}

int cache_key_name_ok(const char *name)
{
	size_t i;

	for (i = 0; i < SHA1_HEXSZ; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return name[i] == '\0';
}

/* A targets/ file name perun writes (target_cache_path): the build-id, then
 * the file's identity <dev>-<ino>-<size>-<sec>.<nsec> (older perun wrote the
 * build-id alone), then .tsv (the function list) or .cg (the call graph);
 * or the temp file of one.  */
static int target_name_ok(const char *name)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strspn(name, hex), i, k;

	if (n < 4)
		return 0;
	if (name[n] == '-') {
		for (i = 0; i < 3; i++) {
			k = strspn(name + n + 1, hex);
			if (!k || name[n + 1 + k] != '-')
				return 0;
			n += 1 + k;
		}
		k = strspn(name + n + 1, "0123456789");
		if (!k || name[n + 1 + k] != '.')
			return 0;
		n += 1 + k;
		k = strspn(name + n + 1, "0123456789");
		if (!k)
			return 0;
		n += 1 + k;
	}
	if (!strncmp(name + n, ".tsv", 4))
		n += 4;
	else if (!strncmp(name + n, ".cg", 3))
		n += 3;
	else
		return 0;
	return name[n] == '\0' || !strncmp(name + n, ".tmp", 4);
}

/* Makes dir/sub (0700) and checks it is ours and private.  */
static int private_subdir(const char *dir, const char *sub)
{
	char *p = xstrfmt("%s/%s", dir, sub);
	int ret = 0;

	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		ret = pr_error_errno("mkdir %s", p);
	else
		ret = fs_trust_dir(p, 0, CACHE_FIX);
	free(p);
	return ret;
}

/* Set once the foreign entries of targets/ were named: a run checks the
 * cache more than once and says so once.  */
static int warned;

int cache_check_dir(const char *dir)
{
	char *tgt;
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (fs_trust_dir(dir, 1, CACHE_FIX) < 0 || private_subdir(dir, "modules") < 0 ||
	    private_subdir(dir, "targets") < 0)
		return -1;
	/* every analysis perun will read back is its own; anything else here is
	 * set aside (never read, never removed) with a warning, and the
	 * collect goes on */
	tgt = xstrfmt("%s/targets", dir);
	d = opendir(tgt);
	while (d && (de = readdir(d))) {
		const char *why = NULL;
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode))
			why = "a symbolic link";
		else if (!S_ISREG(st.st_mode))
			why = S_ISDIR(st.st_mode) ? "a directory" : "not a regular file";
		else if (st.st_uid != geteuid())
			why = "not owned by you";
		else if (st.st_mode & (S_IWGRP | S_IWOTH))
			why = "writable by group or others";
		else if (!target_name_ok(de->d_name))
			why = "not a name perun writes";
		if (why && !warned)
			pr_warn("ignoring %s/%s: %s, so not an analysis perun wrote; perun leaves it "
				"alone (remove it if nobody needs it)",
				tgt, de->d_name, why);
	}
	if (d)
		closedir(d);
	warned = 1;
	free(tgt);
	return ret;
}

int cache_open(struct cache *c, const char *dir)
{
	c->dir = xstrdup(dir);
	c->lock_fd = -1;
	if (cache_check_dir(dir) < 0) {
		free(c->dir);
		c->dir = NULL;
		return -1;
	}
	return 0;
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

static void sha1_hex_of(const void *data, size_t len, char hex[SHA1_HEXSZ + 1])
{
	struct sha1_ctx ctx;
	unsigned char raw[SHA1_RAWSZ];

	sha1_init(&ctx);
	sha1_update(&ctx, data, len);
	sha1_final(&ctx, raw);
	sha1_to_hex(raw, hex);
}

/* Reads dir/meta, which must be a file of ours no one else can write, and
 * fills e (e->sha1 the module's recorded hash).  0 ok, -1 missing or
 * damaged, -2 refused (reported).  */
static int read_meta(const char *dir, struct cache_entry *e)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/meta", dir), *line, *save = NULL, *module = NULL;
	int ret = -1, magic = 0;

	e->sha1[0] = '\0';
	if (fs_read_trusted(&sb, path) < 0) {
		if (errno == EPERM)
			ret = -2;
		goto out;
	}
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
		else if (!strcmp(line, "module") && !strchr(v, '/') && *v && *v != '.' && !module)
			module = xstrdup(v);
		else if (!strcmp(line, "sha1"))
			snprintf(e->sha1, sizeof(e->sha1), "%s", v);
		else if (!strcmp(line, "runtime") && !e->runtime)
			e->runtime = xstrdup(v);
		else if (!strcmp(line, "target") && !e->target)
			e->target = xstrdup(v);
		else if (!strcmp(line, "stap") && !e->stap)
			e->stap = xstrdup(v);
		else if (!strcmp(line, "probes"))
			e->nprobes = strtoul(v, NULL, 10);
	}
	if (magic && module && e->runtime && cache_key_name_ok(e->sha1)) {
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

static int load_entry(struct cache *c, const char *key, struct cache_entry *e)
{
	int r;

	memset(e, 0, sizeof(*e));
	e->dir = xstrfmt("%s/modules/%s", c->dir, key);
	r = read_meta(e->dir, e);
	if (r < 0) {
		snprintf(e->key, sizeof(e->key), "%s", key);
		return r;
	}
	e->size = dir_size(e->dir, &e->last_used);
	return 0;
}

/* lstat path: a real directory of ours that no one else can write.  */
static int own_dir(const char *path, const char **why)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		*why = "cannot be read";
	else if (S_ISLNK(st.st_mode))
		*why = "a symbolic link";
	else if (!S_ISDIR(st.st_mode))
		*why = "not a directory";
	else if (st.st_uid != geteuid())
		*why = "owned by another user";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		*why = "writable by group or others";
	else
		return 1;
	return 0;
}

/* Only what perun itself wrote into an entry: meta, plan, script.stp and the
 * module the meta names, each a regular file of ours.  */
static int only_our_files(const char *dir, const char *module, const char **why)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ok = 1;

	if (!d) {
		*why = "cannot be read";
		return 0;
	}
	while (ok && (de = readdir(d))) {
		struct stat st;
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (strcmp(n, "meta") && strcmp(n, "plan") && strcmp(n, "script.stp") &&
		    (!module || strcmp(n, module))) {
			*why = "holds files perun never writes";
			ok = 0;
		} else if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			   !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			*why = "holds a file that is not a regular file of yours";
			ok = 0;
		}
	}
	closedir(d);
	return ok;
}

int cache_entry_is_ours(struct cache *c, const char *name, const char **why)
{
	struct cache_entry e;
	struct stat st;
	char *dir = xstrfmt("%s/modules/%s", c->dir, name), *meta = xstrfmt("%s/meta", dir);
	int ok = 0;

	*why = NULL;
	memset(&e, 0, sizeof(e));
	if (!cache_key_name_ok(name)) {
		*why = "not named by a cache key";
		goto out;
	}
	if (!own_dir(dir, why))
		goto out;
	/* checked quietly first, so that reading it reports nothing */
	if (lstat(meta, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		*why = "no meta file of yours that only you can write";
		goto out;
	}
	if (load_entry(c, name, &e) < 0)
		*why = "its meta file is damaged";
	else if (strcmp(e.key, name))
		*why = "its meta file records another key";
	else
		ok = only_our_files(dir, fs_basename(e.module), why);
out:
	cache_entry_release(&e);
	free(meta);
	free(dir);
	return ok;
}

/* Opens and reads the module e names, checks owner, mode and hash on what was
 * read; fills data.  0 good, -1 bad (reported), -2 refused (reported).  */
static int read_module(const struct cache_entry *e, struct strbuf *data)
{
	char actual[SHA1_HEXSZ + 1];
	int fd = fs_open_trusted(e->module, 0), r;

	if (fd < 0) {
		if (errno == EPERM)
			return -2;
		return pr_error("cache entry %s: module %s missing", e->dir, e->module);
	}
	r = fs_read_fd(fd, data);
	close(fd);
	if (r < 0)
		return pr_error_errno("read %s", e->module);
	sha1_hex_of(data->buf, data->len, actual);
	if (strcmp(actual, e->sha1))
		return pr_error("cache entry %s: module hash %s does not match the recorded %s "
				"(corrupted)",
				e->dir, actual, e->sha1);
	return 0;
}

int cache_verify_entry(struct cache *c, const struct cache_entry *e)
{
	struct cache_entry tmp;
	struct strbuf data = STRBUF_INIT;
	const char *base = fs_basename(e->dir), *why;
	int ret = -1, r;

	r = load_entry(c, base, &tmp);
	if (r == -2) {
		ret = -2;
		goto out;
	}
	if (r < 0) {
		pr_error("cache entry %s: meta file missing or damaged", e->dir);
		goto out;
	}
	if (strcmp(tmp.key, base)) {
		pr_error("cache entry %s: records key %s, not its own", e->dir, tmp.key);
		goto out;
	}
	if (!own_dir(tmp.dir, &why)) {
		pr_error("refusing cache entry %s: %s: inspect and remove it", tmp.dir, why);
		ret = -2;
		goto out;
	}
	ret = read_module(&tmp, &data);
out:
	strbuf_release(&data);
	cache_entry_release(&tmp);
	return ret;
}

/* Moves an entry perun cannot prove is its own out of the key's way; keeps it.  */
static int move_aside(struct cache *c, const char *key)
{
	char rnd[17], *from = xstrfmt("%s/modules/%s", c->dir, key), *to;
	int ret = 0;

	if (fs_random_hex(rnd, 16) < 0) {
		free(from);
		return -1;
	}
	to = xstrfmt("%s/modules/.damaged-%.16s-%s", c->dir, key, rnd);
	if (rename(from, to) < 0)
		ret = pr_error_errno("rename %s to %s", from, to);
	else
		pr_warn("cache entry %s has no valid meta file: moved it to %s (remove it when "
			"done) and rebuilding",
			from, to);
	free(from);
	free(to);
	return ret;
}

int cache_lookup(struct cache *c, const char *key, const char *stap_id, struct cache_entry *e)
{
	char *dir = xstrfmt("%s/modules/%s", c->dir, key);
	const char *why;
	struct stat st;
	int v;

	memset(e, 0, sizeof(*e));
	v = lstat(dir, &st);
	if (v < 0) {
		free(dir);
		return errno == ENOENT ? 0 : pr_error_errno("stat %s/modules/%s", c->dir, key);
	}
	if (!own_dir(dir, &why)) {
		pr_error("refusing cache entry %s: %s: perun never loads what another user could "
			 "have written; inspect and remove it",
			 dir, why);
		free(dir);
		return -1;
	}
	free(dir);
	v = load_entry(c, key, e);
	if (v == -2) {
		cache_entry_release(e);
		return -1;
	}
	if (v < 0 || strcmp(e->key, key)) {
		cache_entry_release(e);
		return move_aside(c, key) < 0 ? -1 : 0;
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
		utimensat(AT_FDCWD, meta, NULL, AT_SYMLINK_NOFOLLOW);
		free(meta);
	}
	return 1;
corrupt:
	cache_entry_release(e);
	if (!cache_entry_is_ours(c, key, &why)) {
		pr_error("cache entry %s/modules/%s is stale but perun cannot prove it wrote it "
			 "(%s): left alone; remove it yourself",
			 c->dir, key, why);
		return -1;
	}
	dir = xstrfmt("%s/modules/%s", c->dir, key);
	fs_remove_tree(dir);
	free(dir);
	return 0;
}

int cache_export_module(const struct cache_entry *e, const char *dir, char **out)
{
	struct strbuf data = STRBUF_INIT;
	const char *base = fs_basename(e->module);
	char *sub = xstrfmt("%s/load", dir), *path = xstrfmt("%s/%s", sub, base);
	size_t off = 0;
	int dfd = -1, fd = -1, ret = -1;

	*out = NULL;
	/* one open, one read: the bytes hashed are the bytes the runtime gets */
	if (read_module(e, &data) < 0)
		goto out;
	dfd = fs_open_private_dir(sub, 0700);
	if (dfd < 0)
		goto out;
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_error_errno("create %s", path);
		goto out;
	}
	while (off < data.len) {
		ssize_t n = write(fd, data.buf + off, data.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pr_error_errno("write %s", path);
			goto out;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0) {
		fd = -1;
		pr_error_errno("close %s", path);
		goto out;
	}
	fd = -1;
	*out = path;
	path = NULL;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	strbuf_release(&data);
	free(sub);
	free(path);
	return ret;
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

int cache_store(struct cache *c, const char *key, const char *module_path, const char *runtime,
		const char *target, size_t nprobes, const char *stap_id, const char *plan_text,
		const char *script, struct cache_entry *e)
{
	char *tmp = xstrfmt("%s/modules/.tmp-XXXXXX", c->dir), *final = NULL, *p = NULL;
	const char *base = strrchr(module_path, '/');
	char hash[SHA1_HEXSZ + 1];
	struct strbuf meta = STRBUF_INIT, data = STRBUF_INIT;
	int ret = -1;

	base = base ? base + 1 : module_path;
	if (!*base || *base == '.' || !strcmp(base, "meta") || !strcmp(base, "plan") ||
	    !strcmp(base, "script.stp")) {
		pr_error("cache: bad module name %s", module_path);
		goto out;
	}
	if (strbuf_read_file(&data, module_path) < 0) {
		pr_error_errno("read %s", module_path);
		goto out;
	}
	sha1_hex_of(data.buf, data.len, hash);
	if (!mkdtemp(tmp)) {
		pr_error_errno("mkdtemp %s", tmp);
		goto out;
	}
	chmod(tmp, 0755);
	p = xstrfmt("%s/%s", tmp, base);
	if (write_new(p, data.buf, data.len, 0644) < 0)
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
	if (load_entry(c, key, e) < 0) {
		pr_error("cache entry %s unreadable right after storing it", final);
		goto out;
	}
	ret = 0;
	goto out;
fail:
	fs_remove_tree(tmp);
out:
	strbuf_release(&data);
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
		struct cache_entry e;
		if (de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		if (load_entry(c, de->d_name, &e) < 0) {
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

int cache_prune(struct cache *c, uint64_t max_bytes, const char *keep, size_t *removed)
{
	struct cache_entry *list;
	size_t n, i;
	uint64_t total = 0, kept = 0;
	char *ours;
	const char *why;

	*removed = 0;
	if (cache_list(c, &list, &n) < 0)
		return -1;
	ours = xcalloc(n ? n : 1, 1);
	/* the limit is on perun's own entries; it never touches anything else */
	for (i = 0; i < n; i++) {
		ours[i] = (char)cache_entry_is_ours(c, fs_basename(list[i].dir), &why);
		if (ours[i])
			total += list[i].size;
	}
	for (i = 0; i < n && total > max_bytes; i++) {
		if (!ours[i]) {
			cache_entry_is_ours(c, fs_basename(list[i].dir), &why);
			pr_warn("left alone: %s (%s)", list[i].dir, why ? why : "not perun's");
			continue;
		}
		if (keep && !strcmp(fs_basename(list[i].dir), keep)) {
			kept = list[i].size;
			continue;
		}
		if (fs_remove_tree(list[i].dir) == 0) {
			total -= list[i].size;
			(*removed)++;
		}
	}
	if (kept && total > max_bytes)
		pr_warn("the cache limit (%llu bytes) is smaller than the module just used (%llu "
			"bytes): kept it; raise PERUN_CACHE_MAX_SIZE",
			(unsigned long long)max_bytes, (unsigned long long)kept);
	for (i = 0; i < n; i++)
		cache_entry_release(&list[i]);
	free(list);
	free(ours);
	return 0;
}

/* A leftover of an interrupted store: .tmp-XXXXXX of ours holding only
 * what cache_store writes.  */
static int our_temp(const char *dir, const char *name)
{
	const char *why;
	DIR *d;
	struct dirent *de;
	int ok;

	if (strncmp(name, ".tmp-", 5) || strlen(name) != 11 || !own_dir(dir, &why))
		return 0;
	d = opendir(dir);
	ok = d != NULL;
	while (ok && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (strcmp(de->d_name, "meta") && strcmp(de->d_name, "plan") &&
		    strcmp(de->d_name, "script.stp") &&
		    (l < 4 || (strcmp(de->d_name + l - 3, ".bo") && strcmp(de->d_name + l - 3, ".ko"))))
			ok = 0;
		else if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			 !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			ok = 0;
	}
	if (d)
		closedir(d);
	return ok;
}

int cache_clear(struct cache *c, size_t *removed, size_t *analyses)
{
	char *mods = xstrfmt("%s/modules", c->dir), *tgt = xstrfmt("%s/targets", c->dir);
	DIR *d = opendir(mods);
	struct dirent *de;
	const char *why;
	int ret = 0;

	*removed = *analyses = 0;
	while (d && (de = readdir(d))) {
		char *p;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = xstrfmt("%s/%s", mods, de->d_name);
		if (our_temp(p, de->d_name)) {
			if (fs_remove_tree(p) < 0)
				ret = -1;
		} else if (!cache_entry_is_ours(c, de->d_name, &why)) {
			pr_warn("left alone: %s (%s)", p,
				!strncmp(de->d_name, ".damaged-", 9) ? "set aside as damaged" : why);
		} else if (fs_remove_tree(p) < 0) {
			ret = -1;
		} else {
			(*removed)++;
		}
		free(p);
	}
	if (d)
		closedir(d);
	d = opendir(tgt);
	while (d && (de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (target_name_ok(de->d_name) &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
			if (unlinkat(dirfd(d), de->d_name, 0) < 0)
				ret = pr_error_errno("remove %s/%s", tgt, de->d_name);
			else
				(*analyses)++;
		} else {
			pr_warn("left alone: %s/%s (not an analysis file of yours)", tgt,
				de->d_name);
		}
	}
	if (d)
		closedir(d);
	free(mods);
	free(tgt);
	return ret;
}

int cache_parse_size(const char *s, uint64_t *out)
{
	const char *p = s;
	double v, mult = 1;
	size_t n = strspn(p, "0123456789");

	/* digits, an optional fraction and unit: no sign, exponent, nan or inf */
	if (!n)
		return -1;
	p += n;
	if (*p == '.') {
		n = strspn(++p, "0123456789");
		if (!n)
			return -1;
		p += n;
	}
	switch (*p) {
	case 'k': case 'K': mult = 1024.0; break;
	case 'm': case 'M': mult = 1024.0 * 1024; break;
	case 'g': case 'G': mult = 1024.0 * 1024 * 1024; break;
	case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
	default: break;
	}
	if (mult != 1)
		p++;
	if (*p == 'B' || *p == 'b')
		p++;
	if (*p)
		return -1;
	v = strtod(s, NULL) * mult;
	/* 2^64: the first value a uint64_t cannot hold */
	if (!(v >= 0) || v >= 18446744073709551616.0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int cache_max_size_env(uint64_t *out)
{
	const char *s = getenv("PERUN_CACHE_MAX_SIZE");

	*out = DEFAULT_MAX_SIZE;
	if (s && *s && cache_parse_size(s, out) < 0) {
		*out = DEFAULT_MAX_SIZE;
		return -1;
	}
	return 0;
}

uint64_t cache_max_size(void)
{
	uint64_t v;

	if (cache_max_size_env(&v) < 0)
		pr_warn("PERUN_CACHE_MAX_SIZE=%s is not a size (e.g. 500M, 2G): using 1G",
			getenv("PERUN_CACHE_MAX_SIZE"));
	return v;
}
