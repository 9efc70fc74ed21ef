/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Finding and draining the bpf recorder's map: fdinfo text as stapbpf's maps
 * show it, and (as root) a real hash map of this process.  */
#include "config.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tap.h"
#include "bpf/bpfmap.h"

/* /proc/PID/fdinfo of a stapbpf running a recorder script (kernel 6.18).  */
static const char *const stapbpf_maps[] = {
	"pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\nmap_type:\t1\nkey_size:\t4\n"
	"value_size:\t8\nmax_entries:\t2\nmap_flags:\t0x0\nmap_extra:\t0x0\nmemlock:\t4096\n"
	"map_id:\t8862\nfrozen:\t0\n",
	"pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\nmap_type:\t4\nkey_size:\t4\n"
	"value_size:\t4\nmax_entries:\t2\nmap_flags:\t0x0\nmap_extra:\t0x0\nmemlock:\t4096\n"
	"map_id:\t8863\nfrozen:\t0\n",
	"pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\nmap_type:\t2\nkey_size:\t4\n"
	"value_size:\t8\nmax_entries:\t3\nmap_flags:\t0x0\nmap_extra:\t0x0\nmemlock:\t4096\n"
	"map_id:\t8864\nfrozen:\t0\n",
	"pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\nmap_type:\t1\nkey_size:\t8\n"
	"value_size:\t8\nmax_entries:\t16384\nmap_flags:\t0x0\nmap_extra:\t0x0\nmemlock:\t1310720\n"
	"map_id:\t8865\nfrozen:\t0\n",
	"pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\nmap_type:\t1\nkey_size:\t16\n"
	"value_size:\t8\nmax_entries:\t16384\nmap_flags:\t0x0\nmap_extra:\t0x0\nmemlock:\t1441792\n"
	"map_id:\t8866\nfrozen:\t0\n",
	"pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\nmap_type:\t1\nkey_size:\t8\n"
	"value_size:\t8\nmax_entries:\t1000000\nmap_flags:\t0x0\nmap_extra:\t0x0\n"
	"memlock:\t80000000\nmap_id:\t8867\nfrozen:\t0\n",
};

static size_t drained;
static uint64_t key_sum, val_sum;

static int take(void *ctx, const uint64_t *keys, const uint64_t *vals, size_t n)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < n; i++) {
		key_sum += keys[i];
		val_sum += vals[i];
	}
	drained += n;
	return 0;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* A hash map of this process, filled, found by its size, drained with the
 * given method.  */
static void live(int method, const char *name)
{
	union bpf_attr a;
	struct bpfmap_info *maps;
	struct bpfmap_err err = { "" };
	const struct bpfmap_info *m;
	const char *how = NULL;
	size_t n, count = 0;
	uint64_t k, v, want_keys = 0, want_vals = 0;
	int fd, fd2;
	const unsigned entries = method == 2 ? 3001 : 50003 + (unsigned)method;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 8;
	a.value_size = 8;
	a.max_entries = entries;
	fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
	if (fd < 0) {
		printf("# no bpf maps here (%s): live part skipped\n", strerror(errno));
		return;
	}
	for (k = 0; k < entries; k++) {
		uint64_t key = (k % 7) << 32 | k;
		v = k * 1000 + 17;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&v;
		if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0)
			break;
		want_keys += key;
		want_vals += v;
	}
	is_int(k, entries, "the map is filled");
	ok(bpfmap_list(getpid(), &maps, &n, &err) == 0, "maps of this process listed");
	m = bpfmap_find_u64_hash(maps, n, entries, &err);
	ok(m && m->fd == fd, "our map found by its size (%s)", err.msg);
	fd2 = m ? bpfmap_open_id(m->id, &err) : -1;
	ok(fd2 >= 0, "opened by id (%s)", err.msg);
	drained = 0;
	key_sum = val_sum = 0;
	ok(bpfmap_drain_u64_from(fd2, method, take, NULL, &count, &how, &err) == 0, "%s: drained (%s)",
	   name, err.msg);
	is_int(count, entries, "every entry counted");
	is_int(drained, entries, "every entry handed over once");
	ok(key_sum == want_keys && val_sum == want_vals, "keys and values intact");
	is_str(how, name, "%s: the method used", name);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = 0;
	a.next_key = (uint64_t)(uintptr_t)&k;
	ok(sys_bpf(BPF_MAP_GET_NEXT_KEY, &a) < 0 && errno == ENOENT, "the map is empty after");
	ok(bpfmap_drain_u64(fd2, take, NULL, &count, &how, &err) == 0 && count == 0,
	   "draining an empty map reads nothing");
	free(maps);
	close(fd2);
	close(fd);
}

int main(void)
{
	struct bpfmap_info list[8], info;
	struct bpfmap_err err = { "" };
	const struct bpfmap_info *m;
	size_t i, n = sizeof(stapbpf_maps) / sizeof(stapbpf_maps[0]);

	for (i = 0; i < n; i++) {
		ok(bpfmap_parse_fdinfo(stapbpf_maps[i], &list[i]) == 1, "stapbpf map %zu parsed", i);
		list[i].fd = (int)i + 6;
	}
	is_int(list[5].type, BPFMAP_HASH, "map_type");
	is_int(list[5].key_size, 8, "key_size");
	is_int(list[5].value_size, 8, "value_size");
	is_int(list[5].max_entries, 1000000, "max_entries");
	is_int(list[5].id, 8867, "map_id");
	is_int(list[1].type, 4, "the perf event array's type");

	ok(bpfmap_parse_fdinfo("pos:\t0\nflags:\t0100000\nmnt_id:\t24\nino:\t3\n", &info) == 0,
	   "a plain file is no map");
	ok(bpfmap_parse_fdinfo("pos:\t0\nprog_type:\t2\nprog_jited:\t1\nprog_id:\t5\n", &info) == 0,
	   "a program is no map");
	ok(bpfmap_parse_fdinfo("map_type:\t1\nkey_size:\t8\nvalue_size:\t8\nmax_entries:\t9\n",
			       &info) == 0,
	   "no map_id: not taken");
	ok(bpfmap_parse_fdinfo("map_type:\t1\nkey_size:\t8x\nvalue_size:\t8\nmax_entries:\t9\n"
			       "map_id:\t3\n",
			       &info) == 0,
	   "a number with junk: not taken");
	ok(bpfmap_parse_fdinfo("map_type:\t1\nkey_size:\t-8\nvalue_size:\t8\nmax_entries:\t9\n"
			       "map_id:\t3\n",
			       &info) == 0,
	   "a negative size: not taken");
	ok(bpfmap_parse_fdinfo("map_type:\t1\nkey_size:\t8\nvalue_size:\t8\nmax_entries:\t99999999999\n"
			       "map_id:\t3\n",
			       &info) == 0,
	   "too big for 32 bits: not taken");
	ok(bpfmap_parse_fdinfo("xmap_type:\t1\nmap_type:\t1\nkey_size:\t8\nvalue_size:\t8\n"
			       "max_entries:\t9\nmap_id:\t3",
			       &info) == 1 &&
		   info.type == 1 && info.id == 3,
	   "fields only at the start of a line; the last line may lack its newline");

	m = bpfmap_find_u64_hash(list, n, 1000000, &err);
	ok(m && m->id == 8867 && m->fd == 11, "the recorder's map found by its size");
	m = bpfmap_find_u64_hash(list, n, 16384, &err);
	ok(m && m->id == 8865, "16384: __perun_seq only, the lost map has 16-byte keys");
	m = bpfmap_find_u64_hash(list, n, 4242, &err);
	ok(!m && strstr(err.msg, "0 hash maps"), "no such size: none (%s)", err.msg);
	list[4] = list[3];	/* two 16384 maps of 8-byte keys */
	list[4].id = 9999;
	m = bpfmap_find_u64_hash(list, n, 16384, &err);
	ok(!m && strstr(err.msg, "2 hash maps"), "two candidates: refused (%s)", err.msg);
	list[4].id = list[3].id;	/* the same map open twice */
	m = bpfmap_find_u64_hash(list, n, 16384, &err);
	ok(m && m->id == 8865, "one map open twice is one map");

	ok(bpfmap_list(999999999, &(struct bpfmap_info *){ NULL }, &n, &err) < 0 &&
		   strstr(err.msg, "opendir /proc/999999999/fdinfo"),
	   "a gone process: the failing call named (%s)", err.msg);
	ok(bpfmap_open_id(0xfffffff0u, &err) < 0 && strstr(err.msg, "BPF_MAP_GET_FD_BY_ID"),
	   "a map id that does not exist (%s)", err.msg);
	live(0, "lookup_and_delete_batch");
	live(1, "lookup_batch");
	live(2, "get_next_key");
	return tap_done();
}
