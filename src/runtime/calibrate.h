/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The probe effect: what an empty traced call costs on this host and
 * runtime, measured once (perun calibrate) on perun-calib, a program with an
 * empty function and an untraced twin, and cached per runtime and kernel
 * release in the module cache directory.  */
#ifndef PERUN_CALIBRATE_H
#define PERUN_CALIBRATE_H

#include <stdint.h>

struct json_object;
struct plan;

struct calibration {
	double probe_ns;	/* recorded amount of an empty call (median) */
	double pair_ns;		/* what a recorded call costs its caller: traced - untraced */
	double untraced_ns;	/* an untraced call of the empty twin */
	double stepped_ns;	/* recorded amount of a function whose first instruction
				 * is stepped out of line (median), 0 when not measured */
	/* the same for a function whose returns perun's loader probes on its
	 * return instructions (stepped out of line), not with a uretprobe;
	 * equal to probe_ns and pair_ns where every return is a uretprobe */
	double insn_probe_ns, insn_pair_ns;
	uint64_t calls;		/* traced calls measured */
	int64_t when;		/* seconds since the epoch */
	char runtime[16];
	char loader[16];	/* the bpf runtime's loader measured (perun, stapbpf),
				 * "" on the kernel runtime */
	char kernel[128];
};

/* The traced functions of perun-calib.  */
#define CALIB_FUNC "perun_calib_empty"
#define CALIB_STEPPED "perun_calib_stepped"
#define CALIB_DEEP "perun_calib_deep"

/* dir/calibration-RUNTIME-RELEASE.json, or calibration-bpf-stapbpf-RELEASE.json
 * for stapbpf's cost (unsafe characters of the release replaced); caller
 * frees.  loader: "perun", "stapbpf", or NULL on the kernel runtime.  */
char *calibrate_path(const char *dir, const char *runtime, const char *loader,
		     const char *release);
/* Path of the installed perun-calib ($PERUN_LIBDIR or the pkglibdir), or
 * NULL when missing; caller frees.  */
char *calibrate_helper_path(void);
/* Reads a cached calibration written by perun (ours, not writable by
 * others, no link).  1 loaded, 0 none, -1 refused or corrupt (reported).  */
int calibrate_load(const char *path, const char *runtime, const char *loader,
		   const char *release, struct calibration *c);
/* The calibration perun calibrate cached for runtime (an enum runtime; auto
 * resolved as collect resolves it) on the running kernel, said on stderr
 * unless quiet: 1 loaded into c, 0 none, -1 refused or corrupt (reported).  */
int calibrate_cached(int runtime, const char *loader, int quiet, struct calibration *c);
/* Writes c through a new temp file (O_EXCL, never a link) renamed into place.  */
int calibrate_store(const char *path, const struct calibration *c);
/* 1 when x86's uprobes step the instruction b[0..n) out of line (a trap
 * more per hit), 0 when they emulate it: push, call, jmp, jcc, nop.  */
int calibrate_insn_stepped(const unsigned char *b, size_t n);
/* Sets the entry flags (PROBE_F_ENTRY_*) of the plan's function probes
 * from the instruction at the function's address, read from the binary's
 * file, where the entry probe sits; clears them where it cannot be read or
 * where at_entry is 0 (stap placed the probe after the prologue).  */
void calibrate_plan_entries(struct plan *plan, int at_entry);
/* A new object {"probe_ns", "pair_ns", "untraced_ns", "calls", "runtime",
 * "kernel", "measured"}.  */
struct json_object *calibration_json(const struct calibration *c);

#endif
