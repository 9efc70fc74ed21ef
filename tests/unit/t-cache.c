/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The module cache: miss, store, hit, corruption, permission refusal, LRU.  */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "runtime/cache.h"
#include "util/fs.h"
#include "util/strbuf.h"

static char *make_module(const char *dir, const char *name, const char *content)
{
	char *p = xstrfmt("%s/%s", dir, name);
	fs_write_atomic(p, content, strlen(content), 0644);
	return p;
}

static int count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

/* fs_trust_dir and cache_check_dir: every ancestor, links, modes, owners.  */
static void path_checks(const char *dir)
{
	char *a = xstrfmt("%s/pc", dir), *p, *q;
	struct cache c;

	ok(fs_trust_dir(a, 1, "fix") == 0, "a new private path is trusted (and created)");
	ok(fs_trust_dir("relative/dir", 1, "fix") < 0, "a relative path is refused");
	p = xstrfmt("%s/../pc", a);
	ok(fs_trust_dir(p, 0, "fix") < 0, "a path with .. is refused");
	free(p);
	/* a 0777 ancestor without the sticky bit */
	chmod(a, 0777);
	p = xstrfmt("%s/cache", a);
	ok(fs_trust_dir(p, 1, "fix") < 0, "an ancestor writable by others is refused");
	ok(!fs_exists(p), "and nothing is created below it");
	/* sticky and shared, like /tmp: fine while the child is ours */
	chmod(a, 01777);
	ok(fs_trust_dir(p, 1, "fix") == 0, "a sticky shared ancestor with our child is trusted");
	/* a symbolic link anywhere in the path */
	q = xstrfmt("%s/link", a);
	ok(symlink(p, q) == 0, "symlink");
	free(p);
	p = xstrfmt("%s/link/x", a);
	ok(fs_trust_dir(q, 0, "fix") < 0, "the cache dir as a symbolic link is refused");
	ok(fs_trust_dir(p, 1, "fix") < 0, "a symbolic link as an ancestor is refused");
	free(p);
	free(q);
	if (geteuid() == 0) {
		p = xstrfmt("%s/cache", a);
		ok(chown(p, 65534, 65534) == 0, "chown the child to nobody");
		ok(fs_trust_dir(p, 0, "fix") < 0, "another user's dir in a sticky dir is refused");
		q = xstrfmt("%s/sub", p);
		ok(fs_trust_dir(q, 1, "fix") < 0 && !fs_exists(q),
		   "so is anything below it, and nothing is created there");
		free(q);
		ok(chown(p, 0, 0) == 0, "chown back");
		chmod(a, 0755);
		ok(chown(a, 65534, 65534) == 0, "chown an ancestor to nobody");
		ok(fs_trust_dir(p, 0, "fix") < 0, "an ancestor owned by another user is refused");
		ok(chown(a, 0, 0) == 0, "chown back");
		free(p);
	}
	chmod(a, 0755);
	/* the cache's own directories and files */
	p = xstrfmt("%s/c2", a);
	ok(cache_check_dir(p) == 0, "a fresh cache checks out");
	q = xstrfmt("%s/modules", p);
	chmod(q, 0777);
	ok(cache_open(&c, p) < 0, "modules/ mode 0777 is refused");
	chmod(q, 0700);
	free(q);
	q = xstrfmt("%s/targets/0123abcd.tsv", p);
	fs_write_atomic(q, "x", 1, 0666);
	/* a targets/ entry perun did not write is set aside (warned about,
	 * never read, never removed) and the cache stays usable */
	ok(cache_check_dir(p) == 0 && fs_exists(q),
	   "a targets file writable by others is set aside, kept, and the cache checks out");
	chmod(q, 0600);
	ok(cache_check_dir(p) == 0, "fixed, it checks out");
	unlink(q);
	ok(symlink("/etc/passwd", q) == 0 && cache_check_dir(p) == 0 && fs_exists(q) &&
	   access("/etc/passwd", F_OK) == 0,
	   "a targets file that is a symbolic link is set aside, it and its target kept");
	unlink(q);
	if (geteuid() == 0) {
		fs_write_atomic(q, "x", 1, 0600);
		ok(chown(q, 65534, 65534) == 0 && cache_check_dir(p) == 0 && fs_exists(q),
		   "a targets file owned by another user is set aside and kept");
		unlink(q);
	}
	free(q);
	free(p);
	free(a);
}

static void sizes(void)
{
	static const char *const bad[] = { "1e400", "-5", "nan", "inf", "", " 1", "1 ", "0x10",
					   "1e3", "5X", "1..5", "1.", ".5", "18446744073709551616",
					   "16777216T", "K", NULL };
	uint64_t v = 42;
	size_t i;
	int all = 1;

	for (i = 0; bad[i]; i++)
		if (cache_parse_size(bad[i], &v) == 0) {
			printf("# accepted '%s'\n", bad[i]);
			all = 0;
		}
	ok(all && v == 42, "out-of-range, negative, NaN, exponent and garbage sizes are refused");
	ok(cache_parse_size("0", &v) == 0 && v == 0, "0");
	ok(cache_parse_size("1.5K", &v) == 0 && v == 1536, "1.5K");
	ok(cache_parse_size("2G", &v) == 0 && v == 2147483648ull, "2G");
	ok(cache_parse_size("10MB", &v) == 0 && v == 10485760ull, "10MB");
	ok(cache_parse_size("18446744073709549568", &v) == 0 && v == 18446744073709549568ull,
	   "the largest double below 2^64");
	setenv("PERUN_CACHE_MAX_SIZE", "1e400", 1);
	ok(cache_max_size_env(&v) < 0 && v == 1ull << 30, "a bad PERUN_CACHE_MAX_SIZE: 1G");
	unsetenv("PERUN_CACHE_MAX_SIZE");
}

/* prune and clear remove only what perun can prove it wrote.  */
static void ownership_rules(const char *dir, const char *mod)
{
	char *cd = xstrfmt("%s/own", dir), k[5][SHA1_HEXSZ + 1], *p, *q;
	const char *names[] = { "o0", "o1", "o2", "o3", "o4" }, *why;
	struct cache c;
	struct cache_entry e;
	size_t removed, analyses, i;

	ok(cache_open(&c, cd) == 0, "open an ownership cache");
	for (i = 0; i < 5; i++) {
		const char *part[] = { names[i] };
		cache_key(k[i], part, 1);
		cache_store(&c, k[i], mod, "bpf", "/bin/a", 1, NULL, "plan", "script", &e);
		cache_entry_release(&e);
	}
	ok(cache_entry_is_ours(&c, k[0], &why), "a stored entry is provably ours");
	/* 1: a file perun never writes inside */
	p = xstrfmt("%s/modules/%s/notes.txt", cd, k[1]);
	fs_write_atomic(p, "mine", 4, 0600);
	ok(!cache_entry_is_ours(&c, k[1], &why) && !strcmp(why, "holds files perun never writes"),
	   "an entry holding a foreign file is not ours");
	free(p);
	/* 2: meta records another key */
	p = xstrfmt("%s/modules/%s", cd, k[2]);
	q = xstrfmt("%s/modules/%s", cd, "0000000000000000000000000000000000000000");
	ok(rename(p, q) == 0 && !cache_entry_is_ours(&c, fs_basename(q), &why) &&
	   !strcmp(why, "its meta file records another key"),
	   "an entry whose meta records another key is not ours");
	free(p);
	free(q);
	/* 3: meta owned by another user, 4: the entry a symbolic link */
	if (geteuid() == 0) {
		p = xstrfmt("%s/modules/%s/meta", cd, k[3]);
		ok(chown(p, 65534, 65534) == 0 && !cache_entry_is_ours(&c, k[3], &why),
		   "an entry whose meta is another user's is not ours");
		free(p);
	}
	p = xstrfmt("%s/modules/%s", cd, k[4]);
	q = xstrfmt("%s/moved", cd);
	ok(rename(p, q) == 0 && symlink(q, p) == 0 && !cache_entry_is_ours(&c, k[4], &why) &&
	   !strcmp(why, "a symbolic link"),
	   "an entry that is a symbolic link is not ours");
	free(p);
	free(q);
	p = xstrfmt("%s/modules/notakey", cd);
	ok(mkdir(p, 0700) == 0 && !cache_entry_is_ours(&c, "notakey", &why) &&
	   !strcmp(why, "not named by a cache key"),
	   "a directory not named by a key is not ours");
	free(p);
	p = xstrfmt("%s/targets/README", cd);
	fs_write_atomic(p, "x", 1, 0600);
	free(p);
	ok(cache_prune(&c, 0, NULL, &removed) == 0 && removed == 1, "prune to 0 removes only ours");
	for (i = 1; i < 5; i++) {
		p = xstrfmt("%s/modules/%s", cd,
			    i == 2 ? "0000000000000000000000000000000000000000" : k[i]);
		ok(fs_exists(p), "foreign entry %zu kept by prune", i);
		free(p);
	}
	ok(cache_clear(&c, &removed, &analyses) == 0 && removed == 0, "clear removes nothing foreign");
	p = xstrfmt("%s/targets/README", cd);
	q = xstrfmt("%s/modules/notakey", cd);
	ok(fs_exists(p) && fs_exists(q), "clear keeps foreign files in targets/ and modules/");
	free(p);
	free(q);
	p = xstrfmt("%s/moved/meta", cd);
	ok(fs_exists(p), "and never follows an entry's link");
	free(p);
	cache_close(&c);
	free(cd);
}

/* A limit smaller than one module never evicts the module a collect uses.  */
static void prune_keeps_the_module_in_use(const char *dir, const char *mod)
{
	char *cd = xstrfmt("%s/pk", dir), k1[SHA1_HEXSZ + 1], k2[SHA1_HEXSZ + 1];
	const char *a[] = { "pk1" }, *b[] = { "pk2" };
	struct cache c;
	struct cache_entry e;
	size_t removed = 0;
	char *p;

	cache_key(k1, a, 1);
	cache_key(k2, b, 1);
	ok(cache_open(&c, cd) == 0, "open a second cache");
	cache_store(&c, k1, mod, "bpf", "/bin/a", 1, NULL, "plan", "script", &e);
	cache_entry_release(&e);
	cache_store(&c, k2, mod, "bpf", "/bin/b", 1, NULL, "plan", "script", &e);
	cache_entry_release(&e);
	ok(cache_prune(&c, 1, k2, &removed) == 0 && removed == 1, "limit 1 byte: one evicted");
	p = xstrfmt("%s/modules/%s/meta", cd, k2);
	ok(fs_exists(p), "the module in use is kept");
	free(p);
	is_int(cache_lookup(&c, k2, NULL, &e), 1, "and still a hit");
	cache_entry_release(&e);
	cache_close(&c);
	free(cd);
}

/* The swap race on the load: another process exchanges the cached module
 * with a look-alike in a loop (renameat2 RENAME_EXCHANGE) while perun
 * verifies and exports it; the exported bytes must always be the verified
 * ones.  A check-then-open-by-path reader over the same race shows the
 * swapper does win such races.  */
static void export_race(const char *dir, const char *mod)
{
	char *cd = xstrfmt("%s/race", dir), key[SHA1_HEXSZ + 1], *m, *evil, *out = NULL, *meta;
	const char *parts[] = { "race" };
	struct cache c;
	struct cache_entry e;
	struct strbuf good = STRBUF_INIT;
	int i, exported = 0, refused = 0, wrong = 0, path_wins = 0, control;
	pid_t pid;

	cache_key(key, parts, 1);
	ok(cache_open(&c, cd) == 0, "open the race cache");
	cache_store(&c, key, mod, "bpf", "/bin/a", 1, NULL, "plan", "script", &e);
	strbuf_read_file(&good, e.module);
	m = xstrdup(e.module);
	meta = xstrfmt("%s/meta", e.dir);
	cache_entry_release(&e);
	evil = xstrfmt("%s/modules/.evil.bo", cd);
	fs_write_atomic(evil, "EVIL EVIL EVIL!", 15, 0644);
	pid = fork();
	if (pid == 0) {
		for (;;)
			renameat2(AT_FDCWD, m, AT_FDCWD, evil, RENAME_EXCHANGE);
	}
	/* the control: hash by path, then open by path again, as a runtime would */
	/* on a loaded machine the swapper may not be scheduled for a while: go on
	 * past 200 rounds (up to 10^6) until it has won once */
	for (i = 0; i < 1000000 && (i < 200 || !path_wins); i++) {
		struct strbuf a1 = STRBUF_INIT, a2 = STRBUF_INIT;
		if (strbuf_read_file(&a1, m) == 0 && a1.len == good.len &&
		    !memcmp(a1.buf, good.buf, good.len) && strbuf_read_file(&a2, m) == 0 &&
		    (a2.len != good.len || memcmp(a2.buf, good.buf, good.len)))
			path_wins++;
		strbuf_release(&a1);
		strbuf_release(&a2);
	}
	control = i;
	for (i = 0; i < 200; i++) {
		int r = cache_lookup(&c, key, NULL, &e);
		char *outdir = xstrfmt("%s/out%d", dir, i);
		mkdir(outdir, 0700);
		if (r == 1 && cache_export_module(&e, outdir, &out) == 0) {
			struct strbuf got = STRBUF_INIT;
			strbuf_read_file(&got, out);
			exported++;
			if (got.len != good.len || memcmp(got.buf, good.buf, good.len))
				wrong++;
			strbuf_release(&got);
			free(out);
		} else {
			refused++;
		}
		cache_entry_release(&e);
		fs_remove_tree(outdir);
		free(outdir);
		/* a mismatch removes the entry: store it again for the next round */
		if (!fs_exists(meta)) {
			cache_store(&c, key, mod, "bpf", "/bin/a", 1, NULL, "plan", "script", &e);
			cache_entry_release(&e);
			fs_write_atomic(evil, "EVIL EVIL EVIL!", 15, 0644);
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("# swap race: %d exported, %d refused or rebuilt, %d wrong; "
	       "check-then-open-by-path lost %d of %d\n",
	       exported, refused, wrong, path_wins, control);
	ok(wrong == 0, "200 verify+export rounds under the swap race: never a byte not verified");
	ok(exported > 0, "and some rounds did export the module");
	ok(path_wins > 0, "while checking by path and opening again loses the race");
	cache_close(&c);
	strbuf_release(&good);
	free(m);
	free(meta);
	free(evil);
	free(cd);
}

int main(void)
{
	struct cache c;
	struct cache_entry e, *list;
	char *dir = fs_mkdtemp("perun-t-cache"), *cdir = xstrfmt("%s/cache", dir), *mod, *p;
	char key[SHA1_HEXSZ + 1], key2[SHA1_HEXSZ + 1];
	const char *parts[] = { "script", "tapset", "bpf", "6.1" };
	const char *parts2[] = { "script", "tapsetx", "bpf", "6.1" };
	const char *split1[] = { "ab", "c" }, *split2[] = { "a", "bc" };
	size_t n, removed, analyses;

	cache_key(key, parts, 4);
	cache_key(key2, parts2, 4);
	ok(strcmp(key, key2) != 0, "a changed input changes the key");
	cache_key(key2, parts, 4);
	is_str(key, key2, "the key is deterministic");
	cache_key(key, split1, 2);
	cache_key(key2, split2, 2);
	ok(strcmp(key, key2) != 0, "parts are length-prefixed: ab|c differs from a|bc");
	cache_key(key, parts, 4);

	ok(cache_open(&c, cdir) == 0, "open creates the cache dir");
	memset(&e, 0, sizeof(e));
	is_int(cache_lookup(&c, key, "stap-1", &e), 0, "empty cache: a miss");
	mod = make_module(dir, "perun_x.bo", "module bytes v1");
	ok(cache_store(&c, key, mod, "bpf", "/bin/app", 4, "stap-1", "plan", "script", &e) == 0,
	   "store");
	cache_entry_release(&e);
	is_int(cache_lookup(&c, key, "stap-1", &e), 1, "then a hit");
	ok(e.module && strstr(e.module, "perun_x.bo") && e.nprobes == 4, "entry names its module");
	cache_entry_release(&e);
	is_int(cache_lookup(&c, key, NULL, &e), 1, "a hit without stap installed");
	cache_entry_release(&e);
	ok(cache_store(&c, key, mod, "bpf", "/bin/app", 4, "stap-1", "plan", "script", &e) == 0,
	   "storing the same key again keeps the first entry");
	cache_entry_release(&e);

	/* corruption: flip the module's content */
	p = xstrfmt("%s/modules/%s/perun_x.bo", cdir, key);
	fs_write_atomic(p, "module bytes v2", 15, 0644);
	is_int(cache_lookup(&c, key, "stap-1", &e), 0, "a corrupted module is a miss");
	ok(!fs_exists(p), "and the entry is removed");

	/* refused: group-writable, or another owner */
	ok(cache_store(&c, key, mod, "bpf", "/bin/app", 4, "stap-1", "plan", "script", &e) == 0,
	   "stored again");
	cache_entry_release(&e);
	chmod(p, 0664);
	is_int(cache_lookup(&c, key, "stap-1", &e), -1, "a group-writable module is refused");
	ok(fs_exists(p), "and left for the user to inspect");
	chmod(p, 0644);
	if (geteuid() == 0) {
		ok(chown(p, 65534, 65534) == 0, "chown to nobody");
		is_int(cache_lookup(&c, key, "stap-1", &e), -1, "a module owned by another user is refused");
		ok(chown(p, 0, 0) == 0, "chown back");
	}
	is_int(cache_lookup(&c, key, "stap-2", &e), 0, "built by another stap: stale, a miss");

	/* damaged meta */
	ok(cache_store(&c, key, mod, "bpf", "/bin/app", 4, "stap-1", "plan", "script", &e) == 0,
	   "stored once more");
	cache_entry_release(&e);
	free(p);
	p = xstrfmt("%s/modules/%s/meta", cdir, key);
	fs_write_atomic(p, "garbage\n", 8, 0644);
	is_int(cache_lookup(&c, key, "stap-1", &e), 0, "a damaged meta file is a miss");
	{
		char *m = xstrfmt("%s/modules", cdir);
		ok(count_prefix(m, ".damaged-") == 1, "and that entry is moved aside, not deleted");
		free(m);
	}

	/* LRU prune and clear */
	{
		const char *a[] = { "a" }, *b[] = { "b" };
		char ka[SHA1_HEXSZ + 1], kb[SHA1_HEXSZ + 1];
		cache_key(ka, a, 1);
		cache_key(kb, b, 1);
		cache_store(&c, ka, mod, "bpf", "/bin/a", 2, NULL, "plan", "script", &e);
		cache_entry_release(&e);
		sleep(1);
		cache_store(&c, kb, mod, "bpf", "/bin/b", 2, NULL, "plan", "script", &e);
		cache_entry_release(&e);
		ok(cache_list(&c, &list, &n) == 0 && n == 2, "two entries listed");
		ok(!strcmp(list[0].key, ka), "oldest first");
		ok(cache_prune(&c, list[1].size, NULL, &removed) == 0 && removed == 1,
		   "prune removes one");
		while (n)
			cache_entry_release(&list[--n]);
		free(list);
		ok(cache_list(&c, &list, &n) == 0 && n == 1 && !strcmp(list[0].key, kb),
		   "the most recent stays");
		cache_entry_release(&list[0]);
		free(list);
		ok(cache_clear(&c, &removed, &analyses) == 0 && removed == 1, "clear");
		{
			char *m = xstrfmt("%s/modules", cdir);
			ok(count_prefix(m, ".damaged-") == 1, "clear leaves the damaged entry alone");
			free(m);
		}
	}
	cache_close(&c);

	/* a cache dir another user could write is refused */
	chmod(cdir, 0777);
	ok(cache_open(&c, cdir) < 0, "a world-writable cache dir is refused");
	chmod(cdir, 0700);
	path_checks(dir);
	sizes();
	prune_keeps_the_module_in_use(dir, mod);
	ownership_rules(dir, mod);
	export_race(dir, mod);
	fs_remove_tree(dir);
	free(p);
	free(mod);
	free(cdir);
	free(dir);
	return tap_done();
}
