/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SHA-1 against FIPS 180 test vectors.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util/sha1.h"

int main(void)
{
	char hex[SHA1_HEXSZ + 1];
	struct sha1_ctx c;
	unsigned char raw[SHA1_RAWSZ];
	char *million = malloc(1000000);
	size_t i;

	sha1_hex("", 0, hex);
	is_str(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709", "empty input");
	sha1_hex("abc", 3, hex);
	is_str(hex, "a9993e364706816aba3e25717850c26c9cd0d89d", "abc");
	sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	is_str(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1", "two blocks");
	memset(million, 'a', 1000000);
	sha1_init(&c);
	for (i = 0; i < 1000000; i += 999)
		sha1_update(&c, million + i, i + 999 <= 1000000 ? 999 : 1000000 - i);
	sha1_final(&c, raw);
	sha1_to_hex(raw, hex);
	is_str(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f", "a million a, fed in odd pieces");
	free(million);
	return tap_done();
}
