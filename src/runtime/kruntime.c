/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "kruntime"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runtime/driver.h"
#include "runtime/kruntime.h"
#include "runtime/runtime.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

/* The first line of a stamp; the format tools/prepare-kernel-runtime.sh writes.  */
#define STAMP_MAGIC "perun-kruntime 1"

const char *kruntime_copy_dir(void)
{
	const char *e = getenv("PERUN_KRUNTIME_DIR");

	return e && *e ? e : KRUNTIME_DEFAULT_DIR;
}

char *kruntime_prepare_command(void)
{
	const char *d = runtime_datadir();
	char *p = xstrfmt("%s/prepare-kernel-runtime.sh", d);

	if (access(p, R_OK) != 0) {
		free(p);
		p = xstrfmt("%s/tools/prepare-kernel-runtime.sh", d);	/* a source tree */
	}
	{
		char *cmd = xstrfmt("sh %s", p);
		free(p);
		return cmd;
	}
}

int kruntime_has_patches(const char *version)
{
	const char *d = runtime_datadir();
	char *p;
	int r;

	if (!version)
		return 0;
	p = xstrfmt("%s/stap-runtime/%s", d, version);
	r = access(p, R_OK) == 0;
	free(p);
	if (!r) {
		p = xstrfmt("%s/tools/stap-runtime/%s", d, version);
		r = access(p, R_OK) == 0;
		free(p);
	}
	return r;
}

/* Checks one "file NAME SIZE MTIME" stamp line against the stock runtime.  */
static int fingerprint_ok(const char *source, const char *line)
{
	char name[256];
	long long size, mtime;
	struct stat st;
	char *p;
	int ok;

	if (sscanf(line, "file %255s %lld %lld", name, &size, &mtime) != 3)
		return 0;
	p = xstrfmt("%s/%s", source, name);
	ok = stat(p, &st) == 0 && (long long)st.st_size == size &&
	     (long long)st.st_mtim.tv_sec == mtime;
	free(p);
	return ok;
}

void kruntime_select(struct kruntime *kr)
{
	const char *dir = kruntime_copy_dir();
	char *stamp = xstrfmt("%s/.perun-kruntime", dir), *line, *save = NULL;
	char *source = NULL, *patches = NULL, *cmd;
	struct strbuf sb = STRBUF_INIT;
	int first = 1, fresh = 1;

	memset(kr, 0, sizeof(*kr));
	if (strbuf_read_file(&sb, stamp) < 0) {
		cmd = kruntime_prepare_command();
		kr->why = xstrfmt("stock runtime: no patched copy in %s (%s makes one when this "
				  "stap needs it)",
				  dir, cmd);
		free(cmd);
		goto stock;
	}
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (first && strcmp(line, STAMP_MAGIC))
			fresh = 0;
		first = 0;
		if (!strncmp(line, "stap ", 5) && !kr->version)
			kr->version = xstrdup(line + 5);
		else if (!strncmp(line, "source ", 7) && !source)
			source = xstrdup(line + 7);
		else if (!strncmp(line, "patches ", 8) && !patches)
			patches = xstrdup(line + 8);
		else if (!strncmp(line, "file ", 5) && (!source || !fingerprint_ok(source, line)))
			fresh = 0;
	}
	if (!fresh || !source || !patches) {
		cmd = kruntime_prepare_command();
		kr->why = xstrfmt("stock runtime: the patched copy in %s is stale (systemtap "
				  "changed since it was made): run %s",
				  dir, cmd);
		free(cmd);
		goto stock;
	}
	kr->dir = xstrdup(dir);
	kr->id = xstrfmt("patched %s", patches);
	kr->txfix = strstr(patches, "txfix") != NULL;
	kr->why = xstrfmt("patched copy %s: systemtap %s's runtime with %s%s", dir,
			  kr->version ? kr->version : "?", patches,
			  kr->txfix ? "" : " (stock relay transport: per-event output may be lost)");
	goto out;
stock:
	kr->id = xstrdup("stock");
out:
	free(stamp);
	free(source);
	free(patches);
	strbuf_release(&sb);
}

void kruntime_release(struct kruntime *kr)
{
	free(kr->dir);
	free(kr->id);
	free(kr->version);
	free(kr->why);
	memset(kr, 0, sizeof(*kr));
}

static void first_line(void *ctx, const char *line)
{
	char **out = ctx;

	if (!*out && *line)
		*out = xstrdup(line);
}

char *kruntime_stap_version(const char *stap)
{
	char *argv[] = { (char *)stap, (char *)"-V", NULL }, *line = NULL, *v = NULL, *p;
	struct run_spec spec;
	struct run_result res;

	if (!stap)
		return NULL;
	memset(&spec, 0, sizeof(spec));
	spec.argv = argv;
	spec.stdout_to_stderr = 1;	/* stap -V prints its version on stdout */
	if (driver_run(&spec, &res, first_line, &line) < 0 || !line)
		goto out;
	/* "Systemtap translator/driver (version 4.8/0.188, Debian version 4.8-2)" */
	p = strstr(line, "(version ");
	if (p) {
		size_t n;
		p += 9;
		n = strspn(p, "0123456789.");
		if (n)
			v = xstrfmt("%.*s", (int)n, p);
	}
out:
	free(line);
	return v;
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

int kruntime_usable(const char **why)
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

int kruntime_can_load(const char **why)
{
	if (access("/proc/modules", F_OK) != 0) {
		*why = "the kernel cannot load modules (CONFIG_MODULES is off)";
		return 0;
	}
	if (geteuid() != 0) {
		*why = "loading modules needs root";
		return 0;
	}
	*why = NULL;
	return 1;
}

int kruntime_can_build(const char *release, char **why)
{
	char *mk = xstrfmt("/lib/modules/%s/build/Makefile", release);
	int ok = access(mk, R_OK) == 0;

	*why = ok ? NULL
		  : xstrfmt("no kernel build tree for %s (/lib/modules/%s/build): apt-get "
			    "install linux-headers-%s",
			    release, release, release);
	free(mk);
	return ok;
}
