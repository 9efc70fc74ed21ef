/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The store check (store/fsck.h) on a store built here, then damaged: what
 * it finds, what the repair moves aside and rebuilds, and that nothing is
 * deleted.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "store/fsck.h"
#include "store/store.h"
#include "util/fs.h"

#define MINOR "0123456789abcdef0123456789abcdef01234567"

static void put_object(const char *dir, const char *cmd, char hex[SHA1_HEXSZ + 1])
{
	char *json = xstrfmt("{\"header\":{\"type\":\"time\",\"cmd\":\"%s\"},\"origin\":\"" MINOR
			     "\"}", cmd);

	if (store_write_object(dir, "time", json, strlen(json), hex) < 0)
		exit(99);
	free(json);
}

static void hex_to_id(const char *hex, unsigned char id[SHA1_RAWSZ])
{
	int i;

	for (i = 0; i < SHA1_RAWSZ; i++)
		sscanf(hex + 2 * i, "%2hhx", &id[i]);
}

/* The lines of what was found (or repaired), one string, for is_str.  */
static char *lines(const struct fsck_line *l, size_t n, const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, dlen = strlen(dir);

	for (i = 0; i < n; i++) {
		const char *t = l[i].text, *p;
		strbuf_addstr(&sb, l[i].problem ? "! " : "");
		/* the temporary directory as DIR */
		while ((p = strstr(t, dir))) {
			strbuf_add(&sb, t, (size_t)(p - t));
			strbuf_addstr(&sb, "DIR");
			t = p + dlen;
		}
		strbuf_addf(&sb, "%s\n", t);
	}
	return strbuf_detach(&sb);
}

int main(void)
{
	char *top = fs_mkdtemp("perun-t-fsck"), *dir = xstrfmt("%s/.perun", top), *path, *got, *want;
	char a[SHA1_HEXSZ + 1], b[SHA1_HEXSZ + 1];
	unsigned char id[SHA1_RAWSZ];
	struct fsck_result res;
	struct pidx x;
	FILE *f;

	if (!top || fs_mkdir_p(dir, 0755) < 0)
		return 99;
	put_object(dir, "/usr/bin/app", a);
	put_object(dir, "/usr/bin/other", b);
	pidx_init(&x);
	hex_to_id(a, id);
	pidx_append(&x, 1000, id, "app.perf");
	hex_to_id(b, id);
	pidx_append(&x, 2000, id, "other.perf");
	if (store_write_index(dir, MINOR, &x) < 0)
		return 99;
	pidx_release(&x);

	/* a sound store */
	is_int(store_fsck(dir, 0, &res), 0, "a sound store: checked");
	ok(res.checked && res.objects == 2 && res.indexes == 1 && res.problems == 0 &&
	   res.nfound == 0, "2 objects, 1 index, nothing found");
	fsck_result_release(&res);

	/* b damaged: its bytes replaced */
	path = store_object_path(dir, b);
	if (unlink(path) < 0 || !(f = fopen(path, "w")))
		return 99;
	fputs("not zlib", f);
	fclose(f);
	is_int(store_fsck(dir, 0, &res), 0, "a damaged object: checked");
	got = lines(res.found, res.nfound, dir);
	want = xstrfmt("! damaged object %s (DIR/objects/%.2s/%s): not valid zlib data "
		       "(corrupted)\n"
		       "! index %.7s: 1@i (other.perf) names a damaged object %.12s\n",
		       b, b, b + 2, MINOR, b);
	is_str(got, want, "the damaged object and the entry naming it, as problems");
	is_int(res.problems, 2, "2 problems");
	ok(!res.repaired && res.nrepairs == 0, "no repair without repair");
	ok(fs_exists(path), "the check alone moves nothing");
	free(got);
	free(want);
	fsck_result_release(&res);

	/* repaired: b moved aside, the index rebuilt without it */
	is_int(store_fsck(dir, 1, &res), 0, "repair: done");
	ok(res.repaired, "repair: says it repaired");
	got = lines(res.repairs, res.nrepairs, dir);
	want = xstrfmt("moved damaged object %.12s to DIR/damaged/object-%s\n"
		       "repaired index %.7s: 1 entry kept, 0 re-indexed from objects, 1 dropped "
		       "(their objects are missing or damaged); the old index is in "
		       "DIR/damaged/index-%s\n"
		       "  1@i (other.perf) dropped: its object is missing or damaged\n",
		       b, b, MINOR, MINOR);
	is_str(got, want, "repair: what moved and what the index kept");
	free(got);
	free(want);
	fsck_result_release(&res);
	ok(!fs_exists(path), "the damaged object left objects/");
	free(path);
	path = xstrfmt("%s/damaged/object-%s", dir, b);
	ok(fs_exists(path), "and is kept in damaged/");
	free(path);
	is_int(store_read_index(dir, MINOR, &x), 0, "the rebuilt index reads");
	ok(x.n == 1 && !strcmp(x.entries[0].path, "app.perf") && x.entries[0].time == 1000,
	   "and holds app.perf as it was");
	pidx_release(&x);

	/* the index lost: rebuilt from the object that records its minor */
	path = store_object_path(dir, MINOR);
	if (unlink(path) < 0)
		return 99;
	free(path);
	is_int(store_fsck(dir, 0, &res), 0, "a lost index: checked");
	got = lines(res.found, res.nfound, dir);
	want = xstrfmt("! object %.12s belongs to %.7s, whose index is missing\n", a, MINOR);
	is_str(got, want, "the object whose index is gone, as a problem");
	free(got);
	free(want);
	fsck_result_release(&res);
	is_int(store_fsck(dir, 1, &res), 0, "repair of a lost index: done");
	got = lines(res.repairs, res.nrepairs, dir);
	want = xstrfmt("repaired index %.7s: 0 entries kept, 1 re-indexed from objects, 0 dropped "
		       "(their objects are missing or damaged)\n"
		       "  app-recovered-%.7s.perf (object %.12s) re-indexed as 0@i\n",
		       MINOR, a, a);
	is_str(got, want, "re-indexed under a name made from its command");
	free(got);
	free(want);
	fsck_result_release(&res);
	is_int(store_fsck(dir, 0, &res), 0, "after the repairs: checked");
	ok(res.problems == 0 && res.objects == 1 && res.indexes == 1, "no problems are left");
	fsck_result_release(&res);

	/* a store that cannot be read: -1, and the result says it was not checked */
	path = xstrfmt("%s/objects", dir);
	if (chmod(path, 0) == 0 && geteuid() != 0) {
		ok(store_fsck(dir, 0, &res) < 0 && !res.checked, "an unreadable store: -1, unchecked");
		fsck_result_release(&res);
		chmod(path, 0755);
	} else {
		chmod(path, 0755);
		ok(1, "# SKIP root reads any directory");
	}
	free(path);

	fs_remove_tree(top);
	free(top);
	free(dir);
	return tap_done();
}
