/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The kernel runtime (stap -p4 .ko, staprun): which copy of SystemTap's
 * runtime sources perun builds modules with, and what a host needs to build
 * or to load them.
 *
 * Debian 12's stap 4.8 needs two fixes (tools/stap-runtime/4.8/ holds them as patches):
 * without the first it cannot build modules for current Debian 6.1 kernels,
 * without the second its relay transport loses most per-event output.
 * tools/prepare-kernel-runtime.sh applies them to a private copy (default
 * /var/lib/perun/stap-runtime, or $PERUN_KRUNTIME_DIR) and stamps it; perun
 * then compiles with 'stap -R COPY' while the stamp matches the stock runtime.  */
#ifndef PERUN_KRUNTIME_H
#define PERUN_KRUNTIME_H

/* Where perun looks for its patched runtime copy.  */
#define KRUNTIME_DEFAULT_DIR "/var/lib/perun/stap-runtime"

struct kruntime {
	char *dir;		/* for stap -R, or NULL: stap's stock runtime */
	char *id;		/* "stock" or "patched <patches>": recorded with modules */
	char *version;		/* stap version from the copy's stamp, or NULL */
	char *why;		/* one line: which runtime and why */
	int txfix;		/* the relay transport fix is in the copy */
};

/* $PERUN_KRUNTIME_DIR, else KRUNTIME_DEFAULT_DIR.  */
const char *kruntime_copy_dir(void);
/* Picks the patched copy when its stamp matches the stock runtime, else the
 * stock runtime (kr->why says why).  Never fails; release with kruntime_release.  */
void kruntime_select(struct kruntime *kr);
void kruntime_release(struct kruntime *kr);
/* "4.8" from 'stap -V', or NULL; caller frees.  Runs stap.  */
char *kruntime_stap_version(const char *stap);
/* 1 when perun ships runtime patches for this stap version.  */
int kruntime_has_patches(const char *version);
/* The command that prepares the copy ("sh .../prepare-kernel-runtime.sh"); caller frees.  */
char *kruntime_prepare_command(void);
/* 1 when modules can be built and loaded for the running kernel with what
 * this stap needs; otherwise *why says what is missing.  */
int kruntime_usable(const char **why);
/* 1 when modules can be loaded here (CONFIG_MODULES, root); else *why.  */
int kruntime_can_load(const char **why);
/* 1 when modules can be built for release (its build tree exists); else
 * *why says what to install (caller frees).  */
int kruntime_can_build(const char *release, char **why);
#endif
