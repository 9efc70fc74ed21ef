/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "calibrate"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "plan/plan.h"
#include "runtime/cache.h"
#include "runtime/calibrate.h"
#include "runtime/kruntime.h"
#include "runtime/runtime.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

#define CALIB_FIX "fix the cache directory's owner and mode, or set PERUN_CACHE_DIR"

char *calibrate_path(const char *dir, const char *runtime, const char *loader,
		     const char *release)
{
	char *rel = xstrdup(release), *p;

	for (p = rel; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '+' || *p == '_'))
			*p = '_';
	p = xstrfmt("%s/calibration-%s%s-%s.json", dir, runtime,
		    loader && !strcmp(loader, "stapbpf") ? "-stapbpf" : "", rel);
	free(rel);
	return p;
}

char *calibrate_helper_path(void)
{
	return runtime_lib_path("perun-calib", X_OK);
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int number(struct json_object *o, const char *key, double *out)
{
	struct json_object *v = get(o, key);

	if (!v || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return -1;
	*out = json_object_get_double(v);
	return *out == *out && *out >= 0 && *out < 1e9 ? 0 : -1;
}

int calibrate_load(const char *path, const char *runtime, const char *loader,
		   const char *release, struct calibration *c)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_object *o;
	char *dir;
	const char *rt, *kr, *lo;
	double calls = 0;
	int ret = -1;

	memset(c, 0, sizeof(*c));
	if (!fs_exists(path))
		return 0;
	dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	if (fs_trust_dir(dir, 0, CALIB_FIX) < 0) {
		free(dir);
		return -1;
	}
	free(dir);
	if (fs_read_trusted(&sb, path) < 0) {
		strbuf_release(&sb);
		return errno == ENOENT ? 0 : -1;
	}
	o = json_tokener_parse(strbuf_str(&sb));
	rt = json_object_get_string(get(o, "runtime"));
	kr = json_object_get_string(get(o, "kernel"));
	if (!o || !json_object_is_type(o, json_type_object) || number(o, "probe_ns", &c->probe_ns) < 0 ||
	    number(o, "pair_ns", &c->pair_ns) < 0 || number(o, "untraced_ns", &c->untraced_ns) < 0 ||
	    number(o, "calls", &calls) < 0 || !rt || !kr || strcmp(rt, runtime) ||
	    strcmp(kr, release)) {
		pr_error("%s: not a calibration of the %s runtime on kernel %s: remove it and run "
			 "'perun calibrate'", path, runtime, release);
		goto out;
	}
	/* a bpf calibration of another loader, or from before the loader was
	 * recorded (stapbpf's then): not this trace's cost, so none */
	lo = json_object_get_string(get(o, "loader"));
	if (loader && *loader && (!lo || strcmp(lo, loader))) {
		memset(c, 0, sizeof(*c));
		ret = 0;
		goto out;
	}
	/* perun's loader times the returns of some functions with uretprobes
	 * since 2026-11-28: a calibration from before has one cost for all */
	if ((number(o, "insn_probe_ns", &c->insn_probe_ns) < 0 ||
	     number(o, "insn_pair_ns", &c->insn_pair_ns) < 0) &&
	    loader && !strcmp(loader, "perun")) {
		memset(c, 0, sizeof(*c));
		ret = 0;
		goto out;
	}
	if (c->insn_pair_ns <= 0) {
		c->insn_probe_ns = c->probe_ns;
		c->insn_pair_ns = c->pair_ns;
	}
	snprintf(c->loader, sizeof(c->loader), "%s", lo ? lo : "");
	c->calls = (uint64_t)calls;
	number(o, "stepped_probe_ns", &c->stepped_ns);
	c->when = get(o, "measured") ? json_object_get_int64(get(o, "measured")) : 0;
	snprintf(c->runtime, sizeof(c->runtime), "%s", rt);
	snprintf(c->kernel, sizeof(c->kernel), "%s", kr);
	ret = 1;
out:
	json_object_put(o);
	strbuf_release(&sb);
	return ret;
}

/* A double printed with one decimal, not json-c's 17 digits.  */
static struct json_object *tenths(double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.1f", v);
	return json_object_new_double_s((double)(int64_t)(v * 10 + 0.5) / 10, buf);
}

struct json_object *calibration_json(const struct calibration *c)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "probe_ns", tenths(c->probe_ns));
	json_object_object_add(o, "pair_ns", tenths(c->pair_ns));
	json_object_object_add(o, "untraced_ns", tenths(c->untraced_ns));
	json_object_object_add(o, "stepped_probe_ns", tenths(c->stepped_ns));
	json_object_object_add(o, "insn_probe_ns", tenths(c->insn_probe_ns));
	json_object_object_add(o, "insn_pair_ns", tenths(c->insn_pair_ns));
	json_object_object_add(o, "calls", json_object_new_int64((int64_t)c->calls));
	json_object_object_add(o, "runtime", json_object_new_string(c->runtime));
	if (c->loader[0])
		json_object_object_add(o, "loader", json_object_new_string(c->loader));
	json_object_object_add(o, "kernel", json_object_new_string(c->kernel));
	json_object_object_add(o, "measured", json_object_new_int64(c->when));
	return o;
}

int calibrate_store(const char *path, const struct calibration *c)
{
	struct json_object *o = calibration_json(c);
	char *text = xstrfmt("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	int ret = fs_write_atomic(path, text, strlen(text), 0600);

	free(text);
	json_object_put(o);
	return ret;
}

int calibrate_insn_stepped(const unsigned char *b, size_t n)
{
	size_t i = 0;

	if (n && b[0] == 0x41)	/* REX.B: push %r8..%r15 */
		i = 1;
	if (i < n && b[i] >= 0x50 && b[i] <= 0x57)
		return 0;	/* push */
	if (i)
		return 1;
	if (!n)
		return 1;
	switch (b[0]) {
	case 0x90:		/* nop */
	case 0xe8:		/* call rel32 */
	case 0xe9:		/* jmp rel32 */
	case 0xeb:		/* jmp rel8 */
		return 0;
	case 0x0f:		/* jcc rel32 */
		return !(n > 1 && b[1] >= 0x80 && b[1] <= 0x8f);
	default:
		return !(b[0] >= 0x70 && b[0] <= 0x7f);	/* jcc rel8 */
	}
}

/* The first bytes at virtual address addr of an ELF64 file; 0 or -1.  */
static int read_at_vaddr(int fd, uint64_t addr, unsigned char *out, size_t n)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned i;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph))
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			return -1;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr + n > ph.p_vaddr + ph.p_filesz)
			continue;
		return pread(fd, out, n, (off_t)(addr - ph.p_vaddr + ph.p_offset)) == (ssize_t)n
			       ? 0 : -1;
	}
	return -1;
}

void calibrate_plan_entries(struct plan *plan, int at_entry)
{
	const char *open_bin = NULL;
	unsigned char b[4];
	size_t i;
	int fd = -1;

	for (i = 0; i < plan->n; i++) {
		struct probe *pr = &plan->probes[i];
		pr->flags &= ~PROBE_F_ENTRY_MASK;
		if (pr->kind != PROBE_FUNC || !at_entry)
			continue;
		if (!open_bin || strcmp(open_bin, pr->binary)) {
			if (fd >= 0)
				close(fd);
			fd = fs_open_regular(pr->binary, 0, 0);
			open_bin = pr->binary;
		}
		if (fd >= 0 && read_at_vaddr(fd, pr->addr, b, sizeof(b)) == 0)
			pr->flags |= calibrate_insn_stepped(b, sizeof(b)) ? PROBE_F_ENTRY_STEPPED
									   : PROBE_F_ENTRY_EMULATED;
	}
	if (fd >= 0)
		close(fd);
}

int calibrate_cached(int runtime, const char *loader, int quiet, struct calibration *c)
{
	enum runtime rt = (enum runtime)runtime;
	struct utsname u;
	const char *why;
	char *dir, *path;
	int r;

	if (rt == RUNTIME_AUTO)
		rt = kruntime_usable(&why) ? RUNTIME_KERNEL : RUNTIME_BPF;
	uname(&u);
	dir = cache_default_dir();
	if (rt != RUNTIME_BPF)
		loader = NULL;
	path = calibrate_path(dir, runtime_name(rt), loader, u.release);
	r = calibrate_load(path, runtime_name(rt), loader, u.release, c);
	if (r == 1 && !quiet && c->insn_pair_ns > c->pair_ns)
		fprintf(stderr, "perun: calibrated amounts subtract a probe cost of %.0f ns per call "
				"(%.0f ns per recorded callee; %.0f and %.0f where returns are probed "
				"on their instructions), measured by perun calibrate\n",
			c->probe_ns, c->pair_ns, c->insn_probe_ns, c->insn_pair_ns);
	else if (r == 1 && !quiet)
		fprintf(stderr, "perun: calibrated amounts subtract a probe cost of %.0f ns per call "
				"(%.0f ns per recorded callee), measured by perun calibrate\n",
			c->probe_ns, c->pair_ns);
	free(dir);
	free(path);
	return r;
}
