/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Preloaded into stapbpf where root lacks CAP_SYS_RESOURCE: stapbpf 4.8
 * aborts when it cannot raise RLIMIT_MEMLOCK, although kernels >= 5.11
 * account BPF memory to the memory cgroup and need no such limit.  Other
 * setrlimit calls pass through.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

int setrlimit(__rlimit_resource_t r, const struct rlimit *l)
{
	static int (*real)(__rlimit_resource_t, const struct rlimit *);

	if (r == RLIMIT_MEMLOCK)
		return 0;
	if (!real)
		real = (int (*)(__rlimit_resource_t, const struct rlimit *))dlsym(RTLD_NEXT, "setrlimit");
	return real(r, l);
}

int setrlimit64(__rlimit_resource_t r, const struct rlimit64 *l)
{
	static int (*real)(__rlimit_resource_t, const struct rlimit64 *);

	if (r == RLIMIT_MEMLOCK)
		return 0;
	if (!real)
		real = (int (*)(__rlimit_resource_t, const struct rlimit64 *))dlsym(RTLD_NEXT, "setrlimit64");
	return real(r, l);
}
