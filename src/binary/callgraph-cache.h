/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The call graph's cache file in targets/ (private to binary/callgraph*.c):
 * a header with the record sizes, counts and a CRC-32 of the rest, then the
 * nodes, edges, blocks and successors as fixed records, and the import
 * names.  The rooted analysis is not stored: it is recomputed on load.  */
#ifndef PERUN_CALLGRAPH_CACHE_H
#define PERUN_CALLGRAPH_CACHE_H

#include <stdint.h>

struct callgraph;
struct target;

/* Writes cg's extraction to path (temp file, fsync, rename); failures are
 * reported and otherwise ignored (the cache is an optimization).  flags and
 * debug_id are what it was built with.  */
void callgraph_cache_store(const struct callgraph *cg, const char *path, unsigned flags,
			   uint64_t debug_id);
/* Fills cg's extraction from path, for target t.  0 loaded; 1 missing or
 * stale (another version, flags, debug file or function list), quietly;
 * -1 damaged, *why says how (cut short, checksum, sizes, indices).  */
int callgraph_cache_load(struct callgraph *cg, const struct target *t, const char *path,
			 unsigned flags, uint64_t debug_id, const char **why);

#endif
