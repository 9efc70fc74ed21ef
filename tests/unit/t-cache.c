/* The module cache: miss, store, hit, corruption, permission refusal, LRU.  */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "trace/cache.h"
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

int main(void)
{
	struct cache c;
	struct cache_entry e, *list;
	char *dir = fs_mkdtemp("perun-t-cache"), *cdir = xstrfmt("%s/cache", dir), *mod, *p;
	char key[SHA1_HEXSZ + 1], key2[SHA1_HEXSZ + 1];
	const char *parts[] = { "script", "tapset", "bpf", "6.1" };
	const char *parts2[] = { "script", "tapsetx", "bpf", "6.1" };
	const char *split1[] = { "ab", "c" }, *split2[] = { "a", "bc" };
	size_t n, removed;

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
		ok(cache_clear(&c, &removed) == 0 && removed == 1, "clear");
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
	fs_remove_tree(dir);
	free(p);
	free(mod);
	free(cdir);
	free(dir);
	return tap_done();
}
