/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "runtime"

#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runtime/runtime.h"
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

int runtime_needs_memlock_shim(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)
		return 0;
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	return setrlimit(RLIMIT_MEMLOCK, &rl) != 0;
}

/* The directory of the running perun binary, resolved once; NULL if unknown.  */
static const char *exe_dir(void)
{
	static char dir[PATH_MAX];
	static int done;
	ssize_t n;
	char *slash;

	if (done)
		return dir[0] ? dir : NULL;
	done = 1;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		dir[0] = '\0';
		return NULL;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash) {
		dir[0] = '\0';
		return NULL;
	}
	*slash = '\0';
	return dir;
}

/* 1 when DIR/NAME is readable.  */
static int has_file(const char *dir, const char *name)
{
	char *p = xstrfmt("%s/%s", dir, name);
	int ok = access(p, R_OK) == 0;

	free(p);
	return ok;
}

#if defined(PERUN_SRCDIR) && defined(PERUN_BUILDDIR)
/* 1 when the binary runs from the build tree it was compiled in.  */
static int in_build_tree(const char *dir)
{
	char *a = fs_realpath(dir), *b = fs_realpath(PERUN_BUILDDIR);
	int same = a && b && !strcmp(a, b);

	free(a);
	free(b);
	return same;
}
#endif

/* Like git's runtime prefix: the directory holding NAME relative to the binary,
 * else INSTALLED; written to BUF.  */
static const char *relocated(char *buf, size_t n, const char *name, const char *sub,
			     const char *installed)
{
	const char *d = exe_dir();
	char *p;

	if (d) {
		/* the build tree (srcdir == builddir, or the shim beside the binary) */
		if (has_file(d, name)) {
			snprintf(buf, n, "%s", d);
			return buf;
		}
#if defined(PERUN_SRCDIR) && defined(PERUN_BUILDDIR)
		/* a VPATH build tree: the sources are elsewhere */
		if (in_build_tree(d) && has_file(PERUN_SRCDIR, name)) {
			snprintf(buf, n, "%s", PERUN_SRCDIR);
			return buf;
		}
#endif
		/* installed: PREFIX/bin/perun beside PREFIX/SUB */
		p = xstrfmt("%s/../%s", d, sub);
		if (has_file(p, name)) {
			char *r = fs_realpath(p);
			snprintf(buf, n, "%s", r ? r : p);
			free(r);
			free(p);
			return buf;
		}
		free(p);
	}
	snprintf(buf, n, "%s", installed);
	return buf;
}

char *runtime_lib_path(const char *name, int mode)
{
	char dir[PATH_MAX];
	const char *env = getenv("PERUN_LIBDIR");
	char *p;

	if (env && *env) {
		p = xstrfmt("%s/%s", env, name);
		if (access(p, mode) == 0)
			return p;
		free(p);
	}
	p = xstrfmt("%s/%s", relocated(dir, sizeof(dir), name, "lib/perun", PKGLIBDIR), name);
	if (access(p, mode) == 0)
		return p;
	free(p);
	return NULL;
}

char *runtime_shim_path(void)
{
	return runtime_lib_path("perun-memlock-shim.so", R_OK);
}

const char *runtime_datadir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("PERUN_DATADIR");

	if (env && *env)
		return env;
	if (!dir[0])
		relocated(dir, sizeof(dir), "templates/header.stp.in", "share/perun", PKGDATADIR);
	return dir;
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

/* Describes why PATH, which exists, cannot be run by us; *fix gets the remedy.  */
static char *not_executable(const char *path, const struct stat *st, char **fix)
{
	struct passwd *pw = getpwuid(st->st_uid);
	struct group *gr = getgrgid(st->st_gid);
	char owner[64], group[64];
	int by_group = gr && (st->st_mode & S_IXGRP);

	if (pw)
		snprintf(owner, sizeof(owner), "%s", pw->pw_name);
	else
		snprintf(owner, sizeof(owner), "%d", (int)st->st_uid);
	if (gr)
		snprintf(group, sizeof(group), "%s", gr->gr_name);
	else
		snprintf(group, sizeof(group), "%d", (int)st->st_gid);
	*fix = xstrfmt("run perun as root (sudo perun ...)%s%s%s", by_group ? ", or join the group " : "",
		       by_group ? group : "",
		       by_group && !strcmp(group, "stapusr")
			       ? " (usermod -aG stapusr,stapdev USER, then log in again)"
			       : "");
	return xstrfmt("%s is installed but not executable by uid %d (mode %04o %s:%s)", path,
		       (int)geteuid(), (unsigned)(st->st_mode & 07777), owner, group);
}

char *runtime_program_missing(const char *env, const char *name, const char *fallback,
			      const char *package, char **fix)
{
	const char *e = env ? getenv(env) : NULL;
	const char *path = getenv("PATH");
	struct stat st;
	char *dirs, *dir, *save = NULL, *p, *msg = NULL, *f = NULL, *full;

	if (e && *e) {
		if (stat(e, &st) == 0 && S_ISREG(st.st_mode)) {
			msg = not_executable(e, &st, &f);
		} else {
			msg = xstrfmt("%s=%s: no such program", env, e);
			f = xstrfmt("unset %s or fix the path", env);
		}
		goto out;
	}
	dirs = xstrdup(path && *path ? path : "/usr/bin:/bin");
	for (dir = strtok_r(dirs, ":", &save); dir && !msg; dir = strtok_r(NULL, ":", &save)) {
		p = xstrfmt("%s/%s", *dir ? dir : ".", name);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) != 0)
			msg = not_executable(p, &st, &f);
		free(p);
	}
	free(dirs);
	if (!msg && fallback && stat(fallback, &st) == 0 && S_ISREG(st.st_mode))
		msg = not_executable(fallback, &st, &f);
	if (!msg) {
		msg = xstrfmt("%s not found", name);
		f = xstrfmt("install the %s package (apt-get install %s)", package, package);
	}
out:
	if (fix) {
		*fix = f;
		return msg;
	}
	full = xstrfmt("%s: %s", msg, f);
	free(msg);
	free(f);
	return full;
}
