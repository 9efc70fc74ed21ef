#include "config.h"

#define PR_FMT "runtime"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "trace/kruntime.h"
#include "trace/runtime.h"
#include "util/fs.h"
#include "util/strbuf.h"

const char *runtime_name(enum runtime r)
{
	return r == RUNTIME_KERNEL ? "kernel" : r == RUNTIME_BPF ? "bpf" : "auto";
}

int runtime_parse(const char *s, enum runtime *out)
{
	if (!strcmp(s, "auto"))
		*out = RUNTIME_AUTO;
	else if (!strcmp(s, "kernel") || !strcmp(s, "kmod"))
		*out = RUNTIME_KERNEL;
	else if (!strcmp(s, "bpf"))
		*out = RUNTIME_BPF;
	else
		return -1;
	return 0;
}

/* 0 when stap needs perun's patched runtime copy and it is not prepared.  */
static int kernel_sources_ok(void)
{
	struct kruntime kr;
	char *stap, *ver;
	int ok;

	kruntime_select(&kr);
	ok = kr.dir != NULL;
	kruntime_release(&kr);
	if (ok)
		return 1;
	stap = runtime_find_program("PERUN_STAP", "stap", STAP_PATH);
	ver = kruntime_stap_version(stap);
	ok = !kruntime_has_patches(ver);
	free(ver);
	free(stap);
	return ok;
}

int runtime_kernel_usable(const char **why)
{
	struct utsname u;
	char *mk;
	int ok;

	if (access("/proc/modules", F_OK) != 0) {
		*why = "the kernel cannot load modules (CONFIG_MODULES is off)";
		return 0;
	}
	uname(&u);
	mk = xstrfmt("/lib/modules/%s/build/Makefile", u.release);
	ok = access(mk, R_OK) == 0;
	free(mk);
	if (!ok) {
		*why = "no kernel build tree for the running kernel (install linux-headers-$(uname -r))";
		return 0;
	}
	if (!kernel_sources_ok()) {
		*why = "this stap needs perun's patched kernel runtime (run prepare-kernel-runtime.sh "
		       "from perun's data directory; see perun doctor)";
		return 0;
	}
	*why = NULL;
	return 1;
}

int runtime_needs_memlock_shim(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)
		return 0;
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	return setrlimit(RLIMIT_MEMLOCK, &rl) != 0;
}

char *runtime_shim_path(void)
{
	const char *env = getenv("PERUN_LIBDIR");
	char *p;

	if (env && *env) {
		p = xstrfmt("%s/perun-memlock-shim.so", env);
		if (access(p, R_OK) == 0)
			return p;
		free(p);
	}
	p = xstrfmt("%s/perun-memlock-shim.so", PKGLIBDIR);
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

const char *runtime_datadir(void)
{
	const char *env = getenv("PERUN_DATADIR");

	return env && *env ? env : PKGDATADIR;
}

unsigned long runtime_nofile_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	return rl.rlim_max == RLIM_INFINITY ? 1048576 : (unsigned long)rl.rlim_max;
}

size_t runtime_bpf_probe_limit(void)
{
	unsigned long n = runtime_nofile_limit();

	/* stapbpf holds about two descriptors per probe point, plus its own */
	return n > 512 ? (size_t)(n - 256) / 2 : 128;
}

char *runtime_find_program(const char *env, const char *name, const char *fallback)
{
	const char *e = env ? getenv(env) : NULL;
	char *p;

	if (e && *e)
		return access(e, X_OK) == 0 ? xstrdup(e) : NULL;
	p = fs_which(name);
	if (p)
		return p;
	if (fallback && access(fallback, X_OK) == 0)
		return xstrdup(fallback);
	return NULL;
}
