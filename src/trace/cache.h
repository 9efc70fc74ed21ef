/* The module cache (DESIGN.md): compiled modules keyed by a hash of
 * everything that decides their content.  Entries are directories
 * modules/<key>/ holding the module, the plan, the script and a meta file
 * that records the key and the module's SHA-1; a module is loaded only
 * after its hash, owner and mode check out.  */
#ifndef PERUN_CACHE_H
#define PERUN_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util/sha1.h"

struct cache {
	char *dir;
	int lock_fd;
};

struct cache_entry {
	char key[SHA1_HEXSZ + 1];
	char *dir;		/* modules/<key> */
	char *module;		/* path of the .ko or .bo */
	char *runtime;
	char *target;
	char *stap;		/* identity of the stap that built it */
	size_t nprobes;
	uint64_t size;		/* bytes of every file in the entry */
	time_t last_used;
};

/* $PERUN_CACHE_DIR, else $XDG_CACHE_HOME/perun, else ~/.cache/perun; caller frees.  */
char *cache_default_dir(void);
/* Creates the directory (0700) and refuses one another user could write.  */
int cache_open(struct cache *c, const char *dir);
void cache_close(struct cache *c);
/* Exclusive lock over compile-and-store; blocks until granted.  */
int cache_lock(struct cache *c);
void cache_unlock(struct cache *c);

/* Hash of the inputs; each part is length-prefixed.  */
void cache_key(char out[SHA1_HEXSZ + 1], const char *const *parts, size_t n);
/* 1 hit (e filled), 0 miss, -1 refused (wrong owner or mode: do not load).
 * A corrupted entry is reported, removed, and counts as a miss; so is one
 * built by another stap, when stap_id (the installed stap) is given.  */
int cache_lookup(struct cache *c, const char *key, const char *stap_id, struct cache_entry *e);
/* Stores module (copied) with plan and script text under key, atomically.  */
int cache_store(struct cache *c, const char *key, const char *module_path, const char *runtime,
		const char *target, size_t nprobes, const char *stap_id, const char *plan_text,
		const char *script, struct cache_entry *e);
void cache_entry_release(struct cache_entry *e);

/* All entries, oldest use first; caller releases each and frees the array.  */
int cache_list(struct cache *c, struct cache_entry **out, size_t *n);
/* Checks one entry fully; 0 good, -1 bad (reason printed).  */
int cache_verify_entry(struct cache *c, const struct cache_entry *e);
/* Evicts least recently used entries until the total is <= max_bytes.  */
int cache_prune(struct cache *c, uint64_t max_bytes, size_t *removed);
int cache_clear(struct cache *c, size_t *removed);
/* Size limit: $PERUN_CACHE_MAX_SIZE (bytes, K/M/G suffixes) or 1 GiB.  */
uint64_t cache_max_size(void);
int cache_parse_size(const char *s, uint64_t *out);

#endif
