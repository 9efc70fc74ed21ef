/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The .perun store (seeds/000): zlib objects named by the SHA-1 of
 * "profile <type> <len>\0<json>", and one binary index (pidx) per minor
 * version listing the profiles registered for it.
 *
 * pidx layout, integers little-endian (what Perun's struct.pack('i') writes
 * on x86-64):
 *   "pidx" | u32 version (1) | u32 count |
 *   count x ( u32 time | 20-byte object id | origin path | NUL ) |
 *   20-byte SHA-1 of everything before it
 */
#ifndef PERUN_STORE_H
#define PERUN_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/sha1.h"
#include "util/strbuf.h"

#define PIDX_VERSION 1

struct pidx_entry {
	uint32_t time;
	unsigned char id[SHA1_RAWSZ];
	char *path;
};

struct pidx {
	struct pidx_entry *entries;
	size_t n;
};

void pidx_init(struct pidx *x);
void pidx_release(struct pidx *x);
void pidx_append(struct pidx *x, uint32_t time, const unsigned char id[SHA1_RAWSZ],
		 const char *path);
/* Removes entry i, keeping the order of the rest.  */
void pidx_remove(struct pidx *x, size_t i);
void pidx_serialize(const struct pidx *x, struct strbuf *out);
/* Parses and verifies; what names the file in messages.  */
int pidx_parse(struct pidx *x, const unsigned char *buf, size_t len, const char *what);

/* Whether name can be an index entry's name (a profile file's base name):
 * not empty, not . or .., no '/', no control character, valid UTF-8.
 * NULL when it can, else why not.  */
const char *pidx_name_problem(const char *name);

/* Reads what it can of a possibly damaged index, for perun fsck: 0 when it
 * is intact, 1 when damaged (why says how; x holds the entries that could
 * still be read, in order).  Prints nothing.  */
int pidx_salvage(struct pidx *x, const unsigned char *buf, size_t len, struct strbuf *why);

/* The object bytes before compression: "profile <type> <len>\0<json>".  */
void object_build(struct strbuf *out, const char *type, const char *json, size_t len);
/* Path of an object or index: dir/objects/xx/yyyy...  */
char *store_object_path(const char *perun_dir, const char *hex);
/* Writes the object (zlib, mode 0444, temp + rename); an existing object is
 * kept.  hex receives its id.  */
int store_write_object(const char *perun_dir, const char *type, const char *json, size_t len,
		       char hex[SHA1_HEXSZ + 1]);
/* Reads and verifies an object: the id must match its content.  */
int store_read_object(const char *perun_dir, const char *hex, struct strbuf *json,
		      char **type);
/* store_read_object without the message: why receives it.  json and type
 * may be NULL.  */
int store_check_object(const char *perun_dir, const char *hex, struct strbuf *json, char **type,
		       struct strbuf *why);
/* store_check_object on the zlib bytes of an object named hex (a fetched
 * copy); why receives the reason without the object's name.  */
int store_check_object_bytes(const char *hex, const void *data, size_t zlen, struct strbuf *json,
			     char **type, struct strbuf *why);
/* Writes data as objects/xx/yyyy (temp + rename) with mode.  */
int store_put_file(const char *perun_dir, const char *hex, const void *data, size_t len,
		   mode_t mode);
/* Index of a minor version: missing is empty; corrupt is an error.  */
int store_read_index(const char *perun_dir, const char *minor, struct pidx *x);
int store_write_index(const char *perun_dir, const char *minor, const struct pidx *x);

/* Tombstones: the ids of the entries 'perun rm' removed from the index of
 * a minor version, in .perun/removed/<minor>, so a push and a fetch (which
 * merge stores as a union) remove them on other hosts too instead of
 * bringing them back.  The file: "perun-removed 1\n", then one object id
 * in hex a line, sorted, each once.  */
#define TOMBSTONE_MAGIC "perun-removed 1\n"
struct tombstones {
	char (*hex)[SHA1_HEXSZ + 1];
	size_t n;
};
void tombstones_release(struct tombstones *t);
/* Parses a tombstone file's bytes; -1 with why set when damaged.  */
int tombstones_parse(struct tombstones *t, const char *buf, size_t len, const char **why);
/* Reads the tombstones of minor (none when the file is missing).  */
int store_read_tombstones(const char *perun_dir, const char *minor, struct tombstones *t);
/* Adds ids (hex) to the tombstones of minor and writes them atomically.  */
int store_add_tombstones(const char *perun_dir, const char *minor,
			 const struct tombstones *add);
/* Whether hex is among t's ids.  */
int tombstones_has(const struct tombstones *t, const char *hex);
/* The path of minor's tombstone file; caller frees.  */
char *store_tombstone_path(const char *perun_dir, const char *minor);

#endif
