/* What perun knows about a binary: its functions and USDT probes.  The only
 * module that talks to libelf/libdw; nothing of theirs leaks through here.  */
#ifndef PERUN_TARGET_H
#define PERUN_TARGET_H

#include <stddef.h>
#include <stdint.h>

struct func {
	char *name;		/* linkage (symbol) name */
	char *display;		/* demangled name, or name */
	uint64_t addr;		/* address as in the ELF file */
	uint64_t size;
	char *file;		/* DWARF decl file, or NULL */
	int line;		/* DWARF decl line, or 0 */
	unsigned global : 1;	/* STB_GLOBAL or STB_WEAK */
	unsigned helper : 1;	/* compiler/runtime helper (_start, frame_dummy ...) */
};

struct usdt {
	char *provider;
	char *name;
	uint64_t pc;
	unsigned semaphore : 1;
};

struct target {
	char *path;		/* canonical path */
	char build_id[129];	/* hex, or "" when the binary has none */
	struct func *funcs;	/* sorted by address, one per address */
	size_t nfuncs;
	struct usdt *usdts;
	size_t nusdts;
	unsigned has_symtab : 1;
	unsigned has_dwarf : 1;
	unsigned shared : 1;	/* ET_DYN */
};

/* Reads path.  With cache_dir, reuses and stores results per build-id.  */
int target_load(struct target *t, const char *path, const char *cache_dir);
void target_release(struct target *t);
/* Finds a function by linkage or display name (or display up to '(').  */
const struct func *target_find_func(const struct target *t, const char *name);
/* True when name is a compiler or C runtime helper.  */
int target_is_helper(const char *name);
/* Finds a shared library the binary could load: name may be a path, a file
 * name (libm.so.6) or a prefix (libm).  Caller frees.  */
char *target_find_library(const char *binary, const char *name);

#endif
