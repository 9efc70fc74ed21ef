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

/* Registrations as an observed-remove set, so a removal removes only the
 * registrations it saw and a later add wins.  Each perun add gives its
 * registration a tag (TAG_HEXSZ random hex digits), listed in
 * .perun/added/<minor>: "perun-added 1\n", then "<id> <tag>" a line.  perun
 * rm lists the tags it removed in .perun/removed/<minor> (the tombstones):
 * "perun-removed 2\n", then "<id> <tag>" a line.  Push and fetch merge both
 * as unions; an index entry stays while its id has a tag that is added and
 * not removed.  Both files: lines sorted, each once.
 *
 * Data from before tags: an index entry whose id has no added line carries
 * the tag LEGACY_TAG (zeros), and a tombstone line of an id alone (all a
 * "perun-removed 1" file holds) removes that legacy tag for good and, on
 * the host that first sees it, the tags of its id that host held then.  */
#define TOMBSTONE_MAGIC "perun-removed 2\n"
#define TOMBSTONE_MAGIC_V1 "perun-removed 1\n"
#define ADDED_MAGIC "perun-added 1\n"
#define TAG_HEXSZ 16
#define LEGACY_TAG "0000000000000000"
/* "<id>" or "<id> <tag>" */
#define TAGLINE_SZ (SHA1_HEXSZ + 1 + TAG_HEXSZ + 1)
struct tagset {
	char (*v)[TAGLINE_SZ];
	size_t n, cap;
};
#define TAGSET_INIT { NULL, 0, 0 }
enum tagset_kind { TAGS_ADDED, TAGS_REMOVED };

void tagset_release(struct tagset *t);
/* Appends hex's line, with tag when not NULL; tagset_normalize() sorts
 * and drops repeats after a run of appends.  */
void tagset_append(struct tagset *t, const char *hex, const char *tag);
void tagset_normalize(struct tagset *t);
/* Whether the (normalized) set holds line ("<id>" or "<id> <tag>").  */
int tagset_has(const struct tagset *t, const char *line);
/* The lines of id hex: [*first, *first + result), the line of the id alone
 * (a v1 tombstone) first when there is one.  */
size_t tagset_range(const struct tagset *t, const char *hex, size_t *first);
/* Parses a file's bytes (the kind says which magic and lines); -1 with why
 * set when damaged, naming the line.  */
int tagset_parse(struct tagset *t, enum tagset_kind kind, const char *buf, size_t len,
		 struct strbuf *why);
/* Reads minor's added or removed file (empty when missing); -1 reported.  */
int store_read_tagset(const char *perun_dir, enum tagset_kind kind, const char *minor,
		      struct tagset *t);
/* Adds t's lines to minor's file and writes it atomically when that
 * changed anything; *grew (when not NULL) gets how many were new.  */
int store_add_tagset(const char *perun_dir, enum tagset_kind kind, const char *minor,
		     const struct tagset *t, size_t *grew);
/* The path of minor's added or removed file; caller frees.  */
char *store_tagset_path(const char *perun_dir, enum tagset_kind kind, const char *minor);
/* A fresh random tag, never LEGACY_TAG.  */
int tag_new(char tag[TAG_HEXSZ + 1]);
/* The live tags of id hex: its added tags that are not removed, or, when
 * it has none at all and is indexed (an index entry holds it), its legacy
 * tag unless that is removed; appended to out when not NULL.  Their
 * number.  */
size_t tags_live(const struct tagset *added, const struct tagset *removed, const char *hex,
		 int indexed, struct tagset *out);

#endif
