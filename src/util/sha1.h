/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SHA-1 (FIPS 180-4): the object ids of .perun and the cache keys.  */
#ifndef PERUN_SHA1_H
#define PERUN_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_RAWSZ 20
#define SHA1_HEXSZ 40

struct sha1_ctx {
	uint32_t h[5];
	uint64_t len;
	unsigned char buf[64];
	size_t used;
};

void sha1_init(struct sha1_ctx *c);
void sha1_update(struct sha1_ctx *c, const void *data, size_t len);
void sha1_final(struct sha1_ctx *c, unsigned char out[SHA1_RAWSZ]);
/* Writes 40 lowercase hex digits and a NUL.  */
void sha1_to_hex(const unsigned char raw[SHA1_RAWSZ], char hex[SHA1_HEXSZ + 1]);
void sha1_hex(const void *data, size_t len, char hex[SHA1_HEXSZ + 1]);

#endif
