/* SPDX-License-Identifier: GPL-3.0-or-later */
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
	char sha1[SHA1_HEXSZ + 1];	/* the module's, as meta records it */
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
/* Creates dir, modules/ and targets/ (0700) and refuses a cache another user
 * could change: any ancestor not root's or ours or writable by others (unless
 * sticky), a symbolic link anywhere in the path, a modules/ or targets/ that
 * is not ours and private, a targets/ file not ours or writable by others.  */
int cache_check_dir(const char *dir);
/* cache_check_dir, then ready for use.  */
int cache_open(struct cache *c, const char *dir);
void cache_close(struct cache *c);
/* Exclusive lock over compile-and-store; blocks until granted.  */
int cache_lock(struct cache *c);
void cache_unlock(struct cache *c);

/* Hash of the inputs; each part is length-prefixed.  */
void cache_key(char out[SHA1_HEXSZ + 1], const char *const *parts, size_t n);
/* 1 hit (e filled), 0 miss, -1 refused (wrong owner or mode: do not load).
 * A corrupted entry of perun's own is reported, removed, and counts as a
 * miss; so is one built by another stap, when stap_id (the installed stap) is
 * given.  One without a valid meta file is moved aside (kept), then a miss.  */
int cache_lookup(struct cache *c, const char *key, const char *stap_id, struct cache_entry *e);
/* Stores module (copied) with plan and script text under key, atomically.  */
int cache_store(struct cache *c, const char *key, const char *module_path, const char *runtime,
		const char *target, size_t nprobes, const char *stap_id, const char *plan_text,
		const char *script, struct cache_entry *e);
void cache_entry_release(struct cache_entry *e);
/* Reads e's module once (O_NOFOLLOW), checks owner, mode and hash on the
 * bytes read, and writes those bytes to dir/load/<module name> (0600, a new
 * file in a new private directory): the runtime loads exactly what was
 * verified, whatever happens to the cache afterwards.  *out the path.  */
int cache_export_module(const struct cache_entry *e, const char *dir, char **out);
/* 40 lowercase hex digits: the only names perun gives entries.  */
int cache_key_name_ok(const char *name);
/* 1 when modules/<name> is provably perun's own: a key name, a private
 * directory of ours, a meta file of ours recording that key, and nothing
 * but the files perun writes.  0 with *why otherwise.  */
int cache_entry_is_ours(struct cache *c, const char *name, const char **why);

/* All entries, oldest use first; caller releases each and frees the array.  */
int cache_list(struct cache *c, struct cache_entry **out, size_t *n);
/* Checks one entry fully; 0 good, -1 bad, -2 refused (reason printed).  */
int cache_verify_entry(struct cache *c, const struct cache_entry *e);
/* Evicts perun's own least recently used entries until their total is <=
 * max_bytes, never the entry keep (may be NULL: warns when it alone is over
 * the limit).  Entries perun cannot prove its own are reported, never removed.  */
int cache_prune(struct cache *c, uint64_t max_bytes, const char *keep, size_t *removed);
/* Removes perun's own entries (*removed: how many) and analysis files
 * (*analyses: call graphs and symbol tables of targets); reports and keeps
 * the rest.  */
int cache_clear(struct cache *c, size_t *removed, size_t *analyses);
/* Size limit: $PERUN_CACHE_MAX_SIZE or 1 GiB; a bad value warns, then 1 GiB.  */
uint64_t cache_max_size(void);
/* The same; -1 (and 1 GiB in out) when the variable is not a size.  */
int cache_max_size_env(uint64_t *out);
/* Digits with an optional fraction and K/M/G/T suffix (B optional); -1 for
 * anything else, and for a value a uint64_t cannot hold.  */
int cache_parse_size(const char *s, uint64_t *out);

#endif
