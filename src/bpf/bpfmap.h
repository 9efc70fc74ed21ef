/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading another process's BPF maps: the fast way out of the bpf runtime's
 * in-map recorder.  stapbpf's end probe reads its map with one bpf() call per
 * entry; perun instead finds the map in /proc/PID/fdinfo, opens it by id and
 * reads and deletes it in batches.  Raw bpf(2), no libbpf.
 *
 * Every failure here is expected somewhere (no CAP_BPF, an old kernel, no
 * such map) and the caller falls back to the end probe, so these functions
 * print nothing: they return -1 with the reason in err.  */
#ifndef PERUN_BPFMAP_H
#define PERUN_BPFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Map types as in <linux/bpf.h>.  */
#define BPFMAP_HASH 1

struct bpfmap_info {
	int fd;			/* in the owner's table */
	unsigned type, key_size, value_size, max_entries, id;
};

/* Why the last call failed: "CALL: reason".  */
struct bpfmap_err {
	char msg[256];
};

/* Fills err (when not NULL) with fmt and errnum's text; returns -1.  */
int bpfmap_fail(struct bpfmap_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* bpf(2): the raw system call, attr of size bytes.  */
long bpfmap_sys(int cmd, void *attr, size_t size);

/* Parses the text of one /proc/PID/fdinfo/FD file: 1 when it describes a BPF
 * map (every field found), 0 when not.  */
int bpfmap_parse_fdinfo(const char *text, struct bpfmap_info *out);

/* The BPF maps pid holds: *out (the caller frees it) and *n; -1 on failure.  */
int bpfmap_list(pid_t pid, struct bpfmap_info **out, size_t *n, struct bpfmap_err *err);

/* The one map in list that is a hash map with 8-byte keys and values and
 * max_entries entries; NULL (and why in err) when none or several are.  */
const struct bpfmap_info *bpfmap_find_u64_hash(const struct bpfmap_info *list, size_t n,
					       unsigned max_entries, struct bpfmap_err *err);

/* A new fd for the map with this id (BPF_MAP_GET_FD_BY_ID), or -1.  */
int bpfmap_open_id(unsigned id, struct bpfmap_err *err);

/* Sets key to val in a map with 8-byte keys and values; 0, or -1.  */
int bpfmap_update_u64(int fd, uint64_t key, uint64_t val, struct bpfmap_err *err);

/* A selection (--one-module): sets each of ids to 1 in the one map of pid
 * that is a hash of slots 8-byte keys and values; 0, or -1 (why in err).  */
int bpfmap_fill_selection(pid_t pid, unsigned long long slots, const uint64_t *ids, size_t nids,
			  struct bpfmap_err *err);

/* Receives one batch of entries; returns 0, or -1 to stop.  */
typedef int (*bpfmap_batch_fn)(void *ctx, const uint64_t *keys, const uint64_t *vals, size_t n);

/* Reads and deletes every entry of a hash map with 8-byte keys and values,
 * handing them to fn a batch at a time: BPF_MAP_LOOKUP_AND_DELETE_BATCH, or
 * where the kernel lacks it, lookup batches then deletes, or one key at a
 * time.  Every entry fn saw is gone from the map, and every entry deleted was
 * given to fn.  Returns 0 when the map was emptied, -1 when it stopped early
 * (what was read so far went to fn).  *count gets the entries read, *how the
 * method ("lookup_and_delete_batch", "lookup_batch", "get_next_key").  */
int bpfmap_drain_u64(int fd, bpfmap_batch_fn fn, void *ctx, size_t *count, const char **how,
		     struct bpfmap_err *err);

/* The same, starting from the given method (the older kernels' fallbacks,
 * for tests): 0 lookup_and_delete_batch, 1 lookup_batch, 2 get_next_key.  */
int bpfmap_drain_u64_from(int fd, int method, bpfmap_batch_fn fn, void *ctx, size_t *count,
			  const char **how, struct bpfmap_err *err);

#endif
