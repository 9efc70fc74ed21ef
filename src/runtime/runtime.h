/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Facts about this machine that decide how a trace can run.  */
#ifndef PERUN_RUNTIME_H
#define PERUN_RUNTIME_H

#include <stddef.h>

enum runtime { RUNTIME_AUTO, RUNTIME_KERNEL, RUNTIME_BPF };

const char *runtime_name(enum runtime r);
int runtime_parse(const char *s, enum runtime *out);
/* 1 when raising RLIMIT_MEMLOCK fails, so stapbpf needs perun's shim.  */
int runtime_needs_memlock_shim(void);
/* Path of perun-memlock-shim.so, or NULL when not found; caller frees.  Looked up in
 * $PERUN_LIBDIR, beside the binary (build tree), EXE/../lib/perun, then the install dir.  */
char *runtime_shim_path(void);
/* A helper file perun installs in its libdir (mode: access(2)'s): from
 * $PERUN_LIBDIR, else beside the executable (the build tree), else
 * PREFIX/lib/perun relative to it, else the configured libdir; caller
 * frees; NULL when none is there.  */
char *runtime_lib_path(const char *name, int mode);
/* Where templates/ and tapsets/ are: $PERUN_DATADIR, the build tree the binary runs
 * from (its source dir for VPATH builds), EXE/../share/perun, then the install dir.  */
const char *runtime_datadir(void);
/* The hard RLIMIT_NOFILE, which bounds stapbpf's probes.  */
unsigned long runtime_nofile_limit(void);
/* Kernel probe points stapbpf can hold here (one fd pair per point, headroom kept).  */
size_t runtime_bpf_probe_limit(void);
/* Path of a program from $PERUN_STAP / PATH / the configured default; caller frees.  */
char *runtime_find_program(const char *env, const char *name, const char *fallback);
/* Why runtime_find_program() found nothing: not installed (install PACKAGE), or
 * installed but not executable by us (root or stapusr membership needed).  With FIX,
 * *fix gets the remedy and the message leaves it out; otherwise the message ends with it.
 * Both are the caller's.  */
char *runtime_program_missing(const char *env, const char *name, const char *fallback,
			      const char *package, char **fix);

#endif
