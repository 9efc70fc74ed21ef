/* The store's byte formats: objects and pidx indexes, golden bytes,
 * round trips, and corruption detection.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "tap.h"
#include "store/store.h"
#include "util/fs.h"

static void hexdump(const struct strbuf *sb, char *out)
{
	size_t i;

	for (i = 0; i < sb->len; i++)
		sprintf(out + 2 * i, "%02x", (unsigned char)sb->buf[i]);
}

int main(void)
{
	struct pidx x, y;
	struct strbuf sb = STRBUF_INIT, json = STRBUF_INIT;
	unsigned char id[SHA1_RAWSZ];
	char hex[SHA1_HEXSZ + 1], dump[1024], *dir = fs_mkdtemp("perun-t-store"), *type = NULL;
	char *path;
	const char *profile = "{\"header\":{\"type\":\"mixed\"}}";
	int i;

	/* an object's bytes and id */
	object_build(&sb, "mixed", profile, strlen(profile));
	ok(sb.len == 16 + 1 + strlen(profile) && !memcmp(sb.buf, "profile mixed 27", 16) &&
	   sb.buf[16] == '\0', "object: 'profile mixed 27' NUL then the JSON");
	sha1_hex(sb.buf, sb.len, hex);
	strbuf_reset(&sb);

	/* golden index bytes */
	for (i = 0; i < SHA1_RAWSZ; i++)
		id[i] = (unsigned char)i;
	pidx_init(&x);
	pidx_append(&x, 0x01020304, id, "a.perf");
	pidx_serialize(&x, &sb);
	hexdump(&sb, dump);
	is_str(dump,
	       "70696478" "01000000" "01000000"	/* pidx, version 1, one entry */
	       "04030201"			/* time, little-endian */
	       "000102030405060708090a0b0c0d0e0f10111213" "612e7065726600"
	       "636c626971d305f9729f4de62edc94046c81b454",	/* hashlib.sha1 of the rest */
	       "index golden bytes");
	ok(pidx_parse(&y, (unsigned char *)sb.buf, sb.len, "golden") == 0 && y.n == 1 &&
	   y.entries[0].time == 0x01020304 && !strcmp(y.entries[0].path, "a.perf") &&
	   !memcmp(y.entries[0].id, id, SHA1_RAWSZ), "index round trip");
	pidx_release(&y);

	/* corruption */
	sb.buf[14] ^= 1;
	ok(pidx_parse(&y, (unsigned char *)sb.buf, sb.len, "flipped") < 0, "a flipped bit fails the checksum");
	sb.buf[14] ^= 1;
	ok(pidx_parse(&y, (unsigned char *)sb.buf, sb.len - 3, "short") < 0, "a truncated index fails");
	ok(pidx_parse(&y, (unsigned char *)"pidx", 4, "tiny") < 0, "a tiny file fails");
	pidx_release(&x);

	/* objects on disk */
	ok(store_write_object(dir, "mixed", profile, strlen(profile), hex) == 0, "write an object");
	path = store_object_path(dir, hex);
	{
		struct stat st;
		ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0444, "stored read-only at objects/xx/...");
	}
	ok(store_write_object(dir, "mixed", profile, strlen(profile), hex) == 0, "writing it again is a no-op");
	ok(store_read_object(dir, hex, &json, &type) == 0 && !strcmp(json.buf, profile) &&
	   !strcmp(type, "mixed"), "read it back, type and content");
	free(type);
	/* corrupt the object: recompress other content under the same name */
	{
		const char *bad = "profile mixed 2\0{}";
		unsigned char z[128];
		uLongf zl = sizeof(z);
		compress(z, &zl, (const Bytef *)bad, 18);
		chmod(path, 0644);
		fs_write_atomic(path, z, zl, 0444);
		strbuf_reset(&json);
		ok(store_read_object(dir, hex, &json, NULL) < 0, "content that does not hash to the id is refused");
		fs_write_atomic(path, "garbage", 7, 0444);
		ok(store_read_object(dir, hex, &json, NULL) < 0, "non-zlib data is refused");
	}

	/* indexes on disk */
	pidx_init(&x);
	ok(store_read_index(dir, "0123456789abcdef0123456789abcdef01234567", &x) == 0 && x.n == 0,
	   "a missing index is empty");
	pidx_append(&x, 7, id, "p1.perf");
	pidx_append(&x, 8, id, "p2.perf");
	ok(store_write_index(dir, "0123456789abcdef0123456789abcdef01234567", &x) == 0, "write index");
	pidx_release(&x);
	ok(store_read_index(dir, "0123456789abcdef0123456789abcdef01234567", &x) == 0 && x.n == 2 &&
	   !strcmp(x.entries[1].path, "p2.perf"), "read index back");
	pidx_remove(&x, 0);
	ok(x.n == 1 && !strcmp(x.entries[0].path, "p2.perf"), "remove keeps the rest in order");
	pidx_release(&x);

	fs_remove_tree(dir);
	free(dir);
	free(path);
	strbuf_release(&sb);
	strbuf_release(&json);
	return tap_done();
}
