/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The checks of perun doctor: the tracing environment of this machine and
 * the symbols of the binaries asked about.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "binary/target.h"
#include "loader/uprobes.h"
#include "runtime/doctor.h"
#include "runtime/driver.h"
#include "runtime/kruntime.h"
#include "runtime/runtime.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Appends a check; takes detail and fix (dropped when ok).  */
static void add(struct doctor_report *rep, const char *name, int ok, int required,
		char *detail, char *fix)
{
	struct doctor_check *c;

	rep->checks = xrealloc(rep->checks, (rep->n + 1) * sizeof(*rep->checks));
	c = &rep->checks[rep->n++];
	c->name = xstrdup(name);
	c->ok = ok;
	c->required = required;
	c->detail = detail;
	c->fix = ok ? (free(fix), NULL) : fix;
}

/* Adds the check for program NAME; returns its path or NULL.  */
static char *program(struct doctor_report *rep, const char *name, const char *env,
		     const char *fallback, const char *package, int required)
{
	char *path = runtime_find_program(env, name, fallback);
	char *why, *fix;

	if (path) {
		add(rep, name, 1, required, xstrdup(path), NULL);
		return path;
	}
	why = runtime_program_missing(env, name, fallback, package, &fix);
	add(rep, name, 0, required, why, fix);
	return NULL;
}

/* Looks for "NAME=y" in the running kernel's config, when it is readable.  */
static int kconfig(const char *name)
{
	gzFile gz = gzopen("/proc/config.gz", "rb");
	char line[256];
	size_t n = strlen(name);
	int found = -1;

	if (!gz)
		return -1;
	found = 0;
	while (gzgets(gz, line, sizeof(line)))
		if (!strncmp(line, name, n) && line[n] == '=' && (line[n + 1] == 'y' || line[n + 1] == 'm'))
			found = 1;
	gzclose(gz);
	return found;
}

/* Where the functions of a binary come from (its symbol table, its separate
 * debuginfo, only its exports, nothing), and what to install when they are
 * not all known.  */
static void binary_check(struct doctor_report *rep, const char *path)
{
	struct target t;
	char *name = xstrfmt("symbols %s", fs_basename(path));
	const char *nodebug;
	size_t i, nfuncs;

	if (target_load(&t, path, NULL) < 0) {
		add(rep, name, 0, 0, xstrfmt("%s: not readable as an ELF binary (see above)", path),
		    xstrdup("give the path of an executable or shared library"));
		free(name);
		return;
	}
	nodebug = t.debugdata_too_large ? "its MiniDebugInfo is too large to read (an xz bomb?), "
					  "no other debuginfo found"
					: "no debuginfo found";
	/* the functions -s userspace probes: not the helpers (_start,
	 * frame_dummy, ...) nor IFUNC resolvers, as collect counts them */
	for (i = nfuncs = 0; i < t.nfuncs; i++)
		nfuncs += !t.funcs[i].helper && !t.funcs[i].ifunc;
	if (t.syms == TARGET_SYMS_SYMTAB || t.syms == TARGET_SYMS_DEBUGINFO ||
	    t.syms == TARGET_SYMS_MINIDEBUGINFO)
		add(rep, name, 1, 0,
		    t.syms == TARGET_SYMS_DEBUGINFO
			    ? xstrfmt("%s: %zu functions from its debuginfo %s%s", t.path, nfuncs,
				      t.debug_path, t.has_dwarf ? ", DWARF" : "")
			    : xstrfmt("%s: %zu functions from its %s%s", t.path, nfuncs,
				      target_syms_name(&t), t.has_dwarf ? ", DWARF" : ""),
		    NULL);
	else
		add(rep, name, 0, 0,
		    t.syms == TARGET_SYMS_DYNSYM
			    ? xstrfmt("%s: stripped, %s: only the %zu functions it exports can be "
				      "traced",
				      t.path, nodebug, nfuncs)
			    : xstrfmt("%s: stripped, %s, exports no function: only its libraries' "
				      "functions can be traced (-f LIB#NAME)",
				      t.path, nodebug),
		    target_debuginfo_hint(t.path));
	target_release(&t);
	free(name);
}

/* --runtime kernel: loading modules here, and which runtime sources stap
 * builds them from (stock, or perun's patched copy) and why.  */
static void kernel_checks(struct doctor_report *rep, const char *stap)
{
	struct kruntime kr;
	const char *why = NULL;
	char *ver = kruntime_stap_version(stap), *cmd = kruntime_prepare_command();
	int load = kruntime_can_load(&why), patches = kruntime_has_patches(ver);

	add(rep, "kernel modules", load, 0,
	    xstrdup(load ? "staprun can load modules here" : why),
	    xstrdup("a kernel with CONFIG_MODULES=y, run as root; elsewhere use --runtime bpf"));
	kruntime_select(&kr);
	if (kr.dir && ver && kr.version && strcmp(ver, kr.version))
		add(rep, "kernel rt sources", 0, 0,
		    xstrfmt("stap %s, but %s was made for %s", ver, kr.dir, kr.version),
		    xstrdup(cmd));
	else if (kr.dir)
		add(rep, "kernel rt sources", 1, 0,
		    xstrfmt("%s; used with stap -R (stap %s)", kr.why, ver ? ver : "not found"),
		    NULL);
	else if (patches)
		add(rep, "kernel rt sources", 0, 0,
		    xstrfmt("stap %s, %s; stap %s's stock runtime cannot build modules for Linux "
			    "6.1.y past 6.1.103 (task_work_cancel) and loses per-event output at "
			    "high rates",
			    ver, kr.why, ver),
		    xstrdup(cmd));
	else
		add(rep, "kernel rt sources", 1, 0,
		    xstrfmt("stap %s: stock runtime (perun ships no runtime fixes for it)",
			    ver ? ver : "not found"),
		    NULL);
	kruntime_release(&kr);
	free(ver);
	free(cmd);
}

/* perun's own loader: uprobe_multi links bound to the traced process.  */
static void loader_check(struct doctor_report *rep)
{
	struct bpfmap_err uerr = { "" };
	char *up = runtime_lib_path("perun-uprobes", X_OK);
	int multi = uprobes_supported(&uerr);

	add(rep, "bpf loader", multi && up, 0,
	    multi && up ? xstrdup("perun's own (uprobe_multi links bound to the traced "
				  "process, a ring buffer; no probe limit, --pid isolates)")
	    : !up ? xstrdup("perun-uprobes is missing: stapbpf attaches every probe")
		  : xstrfmt("stapbpf: the kernel has no uprobe_multi links (%s)", uerr.msg),
	    !up ? xstrdup("reinstall perun (make install puts perun-uprobes in its libdir)")
		: xstrdup("Linux 6.6 or later attaches and detaches thousands of probes in "
			  "milliseconds, in the traced process only"));
	free(up);
}

void doctor_run(struct doctor_report *rep, const char *const *bins, size_t nbins)
{
	struct utsname u;
	char *stap, *stapbpf, *staprun, *shim, *p;
	char *prep = xstrfmt("%s/prepare-tracing.sh", runtime_datadir());
	const char *why = NULL, *ev;
	int bpf_ok = 1, kernel_ok, modules, r;
	size_t k;

	memset(rep, 0, sizeof(*rep));
	if (!fs_exists(prep)) { /* the source tree keeps it in tools/ */
		free(prep);
		prep = xstrfmt("%s/tools/prepare-tracing.sh", runtime_datadir());
	}
	uname(&u);
	add(rep, "root", geteuid() == 0, 1, xstrfmt("euid %d", (int)geteuid()),
	    xstrdup("run perun as root (sudo perun ...): probes and modules need it; the "
		    "read-only commands (show, log, status, cache list) do not"));
	stap = program(rep, "stap", "PERUN_STAP", STAP_PATH, "systemtap", 1);
	stapbpf = program(rep, "stapbpf", "PERUN_STAPBPF", STAPBPF_PATH, "systemtap", 1);
	staprun = program(rep, "staprun", "PERUN_STAPRUN", STAPRUN_PATH, "systemtap-runtime", 0);
	modules = access("/proc/modules", F_OK) == 0;
	p = xstrfmt("/lib/modules/%s/build/.config", u.release);
	r = access(p, R_OK) == 0;
	add(rep, "kernel build tree", r, 1, xstrfmt("%s %s", p, r ? "present" : "missing"),
	    modules ? xstrfmt("apt-get install linux-headers-%s, or for the bpf runtime only: sh %s",
			      u.release, prep)
		    : xstrfmt("this kernel cannot load modules (CONFIG_MODULES is off), so only the "
			      "bpf runtime works, and stap still wants a build tree: sh %s makes a "
			      "stub one",
			      prep));
	free(p);
	ev = driver_uprobe_events_path();
	if (!ev && geteuid() != 0 && access("/sys/kernel/tracing", F_OK) == 0)
		add(rep, "tracefs", 0, 1, xstrdup("/sys/kernel/tracing is for root only"),
		    xstrdup("run perun as root (sudo perun ...)"));
	else
		add(rep, "tracefs", ev != NULL, 1, xstrdup(ev ? ev : "no uprobe_events"),
		    xstrdup("mount -t debugfs nodev /sys/kernel/debug; mount -t tracefs nodev "
			    "/sys/kernel/tracing"));
	r = access("/sys/bus/event_source/devices/uprobe", F_OK) == 0 ||
	    kconfig("CONFIG_UPROBES") == 1;
	add(rep, "uprobes", r, 1, xstrdup(r ? "CONFIG_UPROBES" : "no uprobe PMU"),
	    xstrdup("boot a kernel built with CONFIG_UPROBES=y"));
	r = kconfig("CONFIG_BPF_SYSCALL");
	if (r < 0)
		r = access("/sys/fs/bpf", F_OK) == 0 || access("/sys/kernel/btf/vmlinux", F_OK) == 0;
	add(rep, "bpf", r, 1, xstrdup(r ? "CONFIG_BPF_SYSCALL" : "no BPF syscall"),
	    xstrdup("boot a kernel built with CONFIG_BPF_SYSCALL=y, or use --runtime kernel"));
	shim = runtime_shim_path();
	r = !runtime_needs_memlock_shim() || shim;
	add(rep, "memlock", r, 1,
	    xstrdup(!runtime_needs_memlock_shim() ? "RLIMIT_MEMLOCK can be raised"
		    : shim ? "cannot raise RLIMIT_MEMLOCK; perun preloads its shim into stapbpf"
			   : "cannot raise RLIMIT_MEMLOCK and perun-memlock-shim.so is missing"),
	    xstrdup("reinstall perun (make install puts perun-memlock-shim.so in its libdir)"));
	loader_check(rep);
	add(rep, "open files", runtime_nofile_limit() >= 4096, 0,
	    xstrfmt("hard limit %lu: about %zu probe points for stapbpf", runtime_nofile_limit(),
		    runtime_bpf_probe_limit()),
	    xstrdup("raise it: ulimit -Hn 65536 (or LimitNOFILE= in a unit)"));
	p = xstrfmt("%s/templates/header.stp.in", runtime_datadir());
	r = access(p, R_OK) == 0;
	add(rep, "perun data", r, 1, p,
	    xstrdup("reinstall perun, or set PERUN_DATADIR to its source tree"));
	kernel_checks(rep, stap);
	kernel_ok = kruntime_usable(&why);
	add(rep, "kernel runtime", kernel_ok && staprun, 0,
	    xstrdup(kernel_ok ? "modules can be built and loaded" : why),
	    modules ? xstrdup("install linux-headers-$(uname -r) and prepare the runtime sources "
			      "(above)")
		    : xstrdup("none here: modules are off in this kernel, so perun uses the bpf "
			      "runtime (a kernel built with CONFIG_MODULES=y would allow both)"));
	for (k = 0; k < nbins; k++)
		binary_check(rep, bins[k]);
	for (k = 0; k < rep->n; k++)
		if (rep->checks[k].required && !rep->checks[k].ok)
			bpf_ok = 0;
	rep->can_trace = bpf_ok || (kernel_ok && staprun && stap);
	rep->runtime = kernel_ok && staprun ? "kernel" : bpf_ok ? "bpf" : "none";
	free(stap);
	free(stapbpf);
	free(staprun);
	free(shim);
	free(prep);
}

void doctor_report_release(struct doctor_report *rep)
{
	size_t k;

	for (k = 0; k < rep->n; k++) {
		free(rep->checks[k].name);
		free(rep->checks[k].detail);
		free(rep->checks[k].fix);
	}
	free(rep->checks);
	memset(rep, 0, sizeof(*rep));
}
