/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "bpfmap"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf/bpfmap.h"
#include "util/log.h"
#include "util/strbuf.h"

/* The kernel's "operation not supported" that <errno.h> does not name.  */
#define ENOTSUPP_KERNEL 524

/* Entries per batch call; doubled when one hash bucket holds more.  */
#define BATCH 8192
#define BATCH_MAX (1 << 20)

int bpfmap_fail(struct bpfmap_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	if (errnum && len < sizeof(err->msg))
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(errnum));
	return -1;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return bpfmap_sys(cmd, attr, sizeof(*attr));
}

long bpfmap_sys(int cmd, void *attr, size_t size)
{
	return syscall(__NR_bpf, cmd, attr, size);
}

/* The value of "name:\t123" at the start of a line of text, or -1.  */
static long long field(const char *text, const char *name)
{
	size_t len = strlen(name);
	const char *s = text;

	while (s && *s) {
		if (!strncmp(s, name, len) && s[len] == ':') {
			char *end;
			long long v;
			s += len + 1;
			while (*s == ' ' || *s == '\t')
				s++;
			errno = 0;
			v = strtoll(s, &end, 10);
			if (end == s || errno || v < 0 || v > 0xffffffffll ||
			    (*end && *end != '\n'))
				return -1;
			return v;
		}
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	return -1;
}

int bpfmap_parse_fdinfo(const char *text, struct bpfmap_info *out)
{
	long long v[5];
	static const char *const names[5] = { "map_type", "key_size", "value_size", "max_entries",
					      "map_id" };
	int i;

	for (i = 0; i < 5; i++)
		if ((v[i] = field(text, names[i])) < 0)
			return 0;
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->type = (unsigned)v[0];
	out->key_size = (unsigned)v[1];
	out->value_size = (unsigned)v[2];
	out->max_entries = (unsigned)v[3];
	out->id = (unsigned)v[4];
	return 1;
}

int bpfmap_list(pid_t pid, struct bpfmap_info **out, size_t *n, struct bpfmap_err *err)
{
	char dir[64];
	DIR *d;
	struct dirent *de;
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	d = opendir(dir);
	if (!d)
		return bpfmap_fail(err, errno, "opendir %s", dir);
	while ((de = readdir(d))) {
		char *path;
		struct strbuf sb = STRBUF_INIT;
		struct bpfmap_info info;
		int ok;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		/* an fd closed meanwhile is simply not a map */
		ok = strbuf_read_file(&sb, path) >= 0 && bpfmap_parse_fdinfo(sb.buf, &info);
		free(path);
		strbuf_release(&sb);
		if (!ok)
			continue;
		info.fd = atoi(de->d_name);
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		(*out)[(*n)++] = info;
	}
	closedir(d);
	return 0;
}

const struct bpfmap_info *bpfmap_find_u64_hash(const struct bpfmap_info *list, size_t n,
					       unsigned max_entries, struct bpfmap_err *err)
{
	const struct bpfmap_info *found = NULL;
	size_t i, hits = 0;

	for (i = 0; i < n; i++) {
		const struct bpfmap_info *m = &list[i];
		if (m->type == BPFMAP_HASH && m->key_size == 8 && m->value_size == 8 &&
		    m->max_entries == max_entries) {
			/* the same map open twice is one map */
			if (!found || found->id != m->id)
				hits++;
			found = m;
		}
	}
	if (hits == 1)
		return found;
	bpfmap_fail(err, 0, "%zu hash maps of 8-byte keys and values with %u entries among %zu maps", hits,
	     max_entries, n);
	return NULL;
}

int bpfmap_open_id(unsigned id, struct bpfmap_err *err)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_id = id;
	attr.open_flags = 0;
	fd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &attr);
	if (fd < 0)
		return bpfmap_fail(err, errno, "bpf(BPF_MAP_GET_FD_BY_ID, %u)", id);
	if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
		int e = errno;
		close((int)fd);
		return bpfmap_fail(err, e, "fcntl on map %u", id);
	}
	return (int)fd;
}

static int unsupported(int e)
{
	return e == EINVAL || e == ENOTSUPP_KERNEL || e == EOPNOTSUPP || e == ENOSYS;
}

/* One batch call; 0 more to come, 1 done, -1 error (errno set).  */
static int batch_call(int cmd, int fd, uint64_t *in, uint64_t *out, int first, uint64_t *keys,
		      uint64_t *vals, size_t max, size_t *got)
{
	union bpf_attr attr;
	long r;

	memset(&attr, 0, sizeof(attr));
	attr.batch.in_batch = first ? 0 : (uint64_t)(uintptr_t)in;
	attr.batch.out_batch = (uint64_t)(uintptr_t)out;
	attr.batch.keys = (uint64_t)(uintptr_t)keys;
	attr.batch.values = (uint64_t)(uintptr_t)vals;
	attr.batch.count = (uint32_t)max;
	attr.batch.map_fd = (uint32_t)fd;
	r = sys_bpf(cmd, &attr);
	*got = attr.batch.count;
	if (r == 0)
		return 0;
	if (errno == ENOENT)
		return 1;
	/* count is not written back on early errors (an unknown command, EINVAL,
	 * EFAULT): nothing is taken as read.  A lookup-and-delete that failed
	 * after deleting would lose those entries; the recorder's per-thread
	 * counts then show them as missing.  */
	*got = 0;
	return -1;
}

int bpfmap_update_u64(int fd, uint64_t key, uint64_t val, struct bpfmap_err *err)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)&val;
	attr.flags = BPF_ANY;
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &attr) < 0)
		return bpfmap_fail(err, errno, "BPF_MAP_UPDATE_ELEM");
	return 0;
}

static int delete_key(int fd, uint64_t key)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	return sys_bpf(BPF_MAP_DELETE_ELEM, &attr) < 0 && errno != ENOENT ? -1 : 0;
}

/* Batches: with delete, the kernel removes what it returns; without, each
 * key is deleted after fn has it.  */
static int drain_batches(int fd, int cmd, bpfmap_batch_fn fn, void *ctx, size_t *count,
			 int *errp, struct bpfmap_err *err)
{
	size_t max = BATCH;
	/* zeroed: valgrind does not know what every bpf command writes */
	uint64_t *keys = xcalloc(max, sizeof(*keys)), *vals = xcalloc(max, sizeof(*vals));
	uint64_t in = 0, out = 0;
	int first = 1, ret = -1;
	const char *name = cmd == BPF_MAP_LOOKUP_AND_DELETE_BATCH ? "BPF_MAP_LOOKUP_AND_DELETE_BATCH"
								   : "BPF_MAP_LOOKUP_BATCH";

	for (;;) {
		size_t got = 0, i;
		int r = batch_call(cmd, fd, &in, &out, first, keys, vals, max, &got);
		int e = errno;

		if (r < 0 && e == ENOSPC && !got && max < BATCH_MAX) {
			/* one bucket holds more than a batch */
			max *= 2;
			free(keys);
			free(vals);
			keys = xcalloc(max, sizeof(*keys));
			vals = xcalloc(max, sizeof(*vals));
			continue;
		}
		if (got) {
			if (fn(ctx, keys, vals, got) < 0) {
				bpfmap_fail(err, 0, "writing the entries failed");
				goto out;
			}
			*count += got;
			if (cmd == BPF_MAP_LOOKUP_BATCH)
				for (i = 0; i < got; i++)
					if (delete_key(fd, keys[i]) < 0) {
						bpfmap_fail(err, errno, "bpf(BPF_MAP_DELETE_ELEM)");
						goto out;
					}
		}
		if (r == 1) {
			ret = 0;
			break;
		}
		if (r < 0) {
			*errp = e;
			bpfmap_fail(err, e, "bpf(%s)", name);
			goto out;
		}
		in = out;
		first = 0;
	}
out:
	free(keys);
	free(vals);
	return ret;
}

/* One key at a time, the oldest kernels' way: up to 256 keys walked with
 * get_next_key, looked up, handed over, deleted; then from the start again.  */
static int drain_keys(int fd, bpfmap_batch_fn fn, void *ctx, size_t *count, struct bpfmap_err *err)
{
	uint64_t keys[256] = { 0 }, vals[256] = { 0 };

	for (;;) {
		size_t n = 0, i;
		int e = 0;

		while (n < 256) {
			union bpf_attr attr;

			memset(&attr, 0, sizeof(attr));
			attr.map_fd = (uint32_t)fd;
			attr.key = n ? (uint64_t)(uintptr_t)&keys[n - 1] : 0;
			attr.next_key = (uint64_t)(uintptr_t)&keys[n];
			if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &attr) < 0) {
				e = errno;
				break;
			}
			memset(&attr, 0, sizeof(attr));
			attr.map_fd = (uint32_t)fd;
			attr.key = (uint64_t)(uintptr_t)&keys[n];
			attr.value = (uint64_t)(uintptr_t)&vals[n];
			if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr) < 0) {
				e = errno;
				break;
			}
			n++;
		}
		if (n && fn(ctx, keys, vals, n) < 0)
			return bpfmap_fail(err, 0, "writing the entries failed");
		*count += n;
		for (i = 0; i < n; i++)
			if (delete_key(fd, keys[i]) < 0)
				return bpfmap_fail(err, errno, "bpf(BPF_MAP_DELETE_ELEM)");
		if (e == ENOENT && !n)
			return 0;
		if (e && e != ENOENT)
			return bpfmap_fail(err, e, "bpf(BPF_MAP_GET_NEXT_KEY)");
	}
}

int bpfmap_drain_u64_from(int fd, int method, bpfmap_batch_fn fn, void *ctx, size_t *count,
			  const char **how, struct bpfmap_err *err)
{
	int e = 0;

	*count = 0;
	if (method <= 0) {
		*how = "lookup_and_delete_batch";
		if (drain_batches(fd, BPF_MAP_LOOKUP_AND_DELETE_BATCH, fn, ctx, count, &e, err) == 0)
			return 0;
		if (*count || !unsupported(e))
			return -1;
	}
	if (method <= 1) {
		*how = "lookup_batch";
		e = 0;
		if (drain_batches(fd, BPF_MAP_LOOKUP_BATCH, fn, ctx, count, &e, err) == 0)
			return 0;
		if (*count || !unsupported(e))
			return -1;
	}
	*how = "get_next_key";
	return drain_keys(fd, fn, ctx, count, err);
}

int bpfmap_drain_u64(int fd, bpfmap_batch_fn fn, void *ctx, size_t *count, const char **how,
		     struct bpfmap_err *err)
{
	return bpfmap_drain_u64_from(fd, 0, fn, ctx, count, how, err);
}

int bpfmap_fill_selection(pid_t pid, unsigned long long slots, const uint64_t *ids, size_t nids,
			  struct bpfmap_err *err)
{
	struct bpfmap_info *maps = NULL;
	const struct bpfmap_info *m;
	size_t n = 0, i;
	int fd = -1, ret = -1;

	if (bpfmap_list(pid, &maps, &n, err) < 0 ||
	    !(m = bpfmap_find_u64_hash(maps, n, (unsigned)slots, err)) ||
	    (fd = bpfmap_open_id(m->id, err)) < 0)
		goto out;
	for (i = 0; i < nids; i++)
		if (bpfmap_update_u64(fd, ids[i], 1, err) < 0)
			goto out;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(maps);
	return ret;
}
