/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The store's byte formats: objects and pidx indexes, golden bytes,
 * round trips, and corruption detection.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tap.h"
#include "store/output.h"
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

	/* salvage for fsck: what a damaged index still holds */
	{
		struct strbuf ib = STRBUF_INIT, why = STRBUF_INIT;
		pidx_init(&x);
		pidx_append(&x, 1, id, "one.perf");
		pidx_append(&x, 2, id, "two.perf");
		pidx_serialize(&x, &ib);
		pidx_release(&x);
		ok(pidx_salvage(&y, (unsigned char *)ib.buf, ib.len, &why) == 0 && y.n == 2 && !why.len,
		   "salvage: an intact index is intact");
		pidx_release(&y);
		ib.buf[13] ^= 1;
		ok(pidx_salvage(&y, (unsigned char *)ib.buf, ib.len, &why) == 1 && y.n == 2 &&
		   strstr(why.buf, "checksum mismatch") && !strcmp(y.entries[1].path, "two.perf"),
		   "salvage: a flipped time keeps both entries, says checksum mismatch");
		pidx_release(&y);
		strbuf_reset(&why);
		/* cut inside the last entry: the first one is kept */
		ok(pidx_salvage(&y, (unsigned char *)ib.buf, ib.len - 25, &why) == 1 && y.n == 1 &&
		   !strcmp(y.entries[0].path, "one.perf"),
		   "salvage: a truncated index keeps the entries before the cut (%zu)", y.n);
		pidx_release(&y);
		strbuf_reset(&why);
		ok(pidx_salvage(&y, (unsigned char *)ib.buf, ib.len - SHA1_RAWSZ, &why) == 1 &&
		   y.n == 2, "salvage: an index without its checksum keeps every entry");
		pidx_release(&y);
		strbuf_reset(&why);
		ok(pidx_salvage(&y, (unsigned char *)"junk", 4, &why) == 1 && y.n == 0 &&
		   strstr(why.buf, "not a perun index"), "salvage: junk holds nothing");
		pidx_release(&y);
		strbuf_release(&why);
		strbuf_release(&ib);
	}
	/* check without a message: why says what is wrong */
	{
		struct strbuf why = STRBUF_INIT;
		char h2[SHA1_HEXSZ + 1];
		ok(store_write_object(dir, "mixed", "{}", 2, h2) == 0 &&
		   store_check_object(dir, h2, NULL, NULL, &why) == 0 && !why.len,
		   "check: a sound object");
		ok(store_check_object(dir, hex, NULL, NULL, &why) < 0 && strstr(why.buf, "zlib"),
		   "check: says 'not valid zlib data' (%s)", why.buf);
		strbuf_reset(&why);
		ok(store_check_object(dir, "00112233445566778899aabbccddeeff00112233", NULL, NULL,
				      &why) < 0 && strstr(why.buf, "No such file"),
		   "check: a missing object");
		strbuf_release(&why);
	}

	/* where collect writes: -o checked first, no name taken twice, rescue */
	{
		char *d = xstrfmt("%s/out", dir), *f = xstrfmt("%s/out/p.perf", dir);
		char *nodir = xstrfmt("%s/none/p.perf", dir), *st1, *st2, *n1, *n2, *r;
		struct strbuf c = STRBUF_INIT;
		fs_mkdir_p(d, 0755);
		ok(output_check(f) == 0, "-o: a new file in an existing directory");
		ok(output_check(d) < 0, "-o: a directory is refused");
		ok(output_check(nodir) < 0, "-o: a missing directory is refused");
		ok(output_check("") < 0, "-o: an empty name is refused");
		st1 = output_stage(f);
		st2 = output_stage(f);
		ok(st1 && st2 && strcmp(st1, st2) && fs_exists(st1) && strstr(st1, "/.p.perf.new-"),
		   "stage: two hidden files beside the profile");
		fs_write_atomic(st1, "one", 3, 0644);
		fs_write_atomic(st2, "two", 3, 0644);
		n1 = output_publish(st1, f);
		n2 = output_publish(st2, f);
		ok(n1 && !strcmp(n1, f) && !fs_exists(st1), "publish: the name asked for when free");
		ok(n2 && strstr(n2, "/out/p-2.perf") && strbuf_read_file(&c, n2) == 0 &&
		   !strcmp(c.buf, "two"), "publish: p-2.perf when taken, never replacing p.perf");
		strbuf_reset(&c);
		ok(strbuf_read_file(&c, f) == 0 && !strcmp(c.buf, "one"), "publish: p.perf unchanged");
		r = output_rescue(d, nodir);
		ok(r && !strncmp(r, d, strlen(d)) && strstr(r, "/p-rescue-") && fs_exists(r),
		   "rescue: a new p-rescue-XXXXXX.perf in the jobs directory (%s)", r ? r : "none");
		free(r);
		r = output_rescue(nodir, nodir);
		ok(r && !strncmp(r, "./p-rescue-", 11), "rescue: else the current directory (%s)",
		   r ? r : "none");
		if (r)
			unlink(r);
		free(r);
		strbuf_release(&c);
		free(st1);
		free(st2);
		free(n1);
		free(n2);
		free(nodir);
		free(f);
		free(d);
	}

	fs_remove_tree(dir);
	free(dir);
	free(path);
	strbuf_release(&sb);
	strbuf_release(&json);
	return tap_done();
}
