/* SPDX-License-Identifier: GPL-3.0-or-later */
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
	char **aliases;		/* other symbols at addr (weak, versioned, local copies) */
	size_t naliases;
	unsigned global : 1;	/* STB_GLOBAL or STB_WEAK */
	unsigned helper : 1;	/* compiler/runtime helper (_start, frame_dummy ...) */
	unsigned dwarf : 1;	/* a DWARF subprogram starts at addr (stap can use the address) */
	unsigned ifunc : 1;	/* STT_GNU_IFUNC: addr is the resolver, not the function */
	unsigned weak : 1;	/* STB_WEAK (prefers a strong alias's name) */
	unsigned dup_name : 1;	/* another function has the same symbol name (statics) */
};

/* A PT_LOAD segment, to turn addresses into file offsets (uprobe_events).  */
struct segment {
	uint64_t vaddr, offset, filesz;
};

struct usdt {
	char *provider;
	char *name;
	uint64_t pc;
	uint64_t sema;		/* the semaphore's address, or 0 */
	unsigned semaphore : 1;
};

/* Where a target's functions were read from.  */
enum target_syms {
	TARGET_SYMS_NONE,	/* nowhere: no symbol table, no exports, no debuginfo */
	TARGET_SYMS_SYMTAB,	/* the file's own .symtab */
	TARGET_SYMS_DEBUGINFO,	/* the .symtab of its separate debuginfo (debug_path) */
	TARGET_SYMS_MINIDEBUGINFO,	/* its .gnu_debugdata (Fedora) and .dynsym */
	TARGET_SYMS_DYNSYM,	/* only what it exports (.dynsym) */
};

struct target {
	char *path;		/* canonical path */
	char *debug_path;	/* the separate debuginfo file read, or NULL */
	enum target_syms syms;	/* where funcs came from */
	char build_id[129];	/* hex, or "" when the binary has none */
	uint64_t st_dev, st_ino, st_size;	/* the file's identity, for the cache */
	long long mtime_s;
	long mtime_ns;
	struct func *funcs;	/* sorted by address, one per address */
	size_t nfuncs;
	struct usdt *usdts;
	size_t nusdts;
	struct segment *segs;
	size_t nsegs;
	unsigned has_symtab : 1;
	unsigned has_dwarf : 1;
	unsigned shared : 1;	/* ET_DYN */
	unsigned pie : 1;	/* an executable, even when ET_DYN */
	unsigned exceptions : 1;	/* imports or defines __cxa_throw (C++ exceptions) */
	unsigned longjmp : 1;	/* imports setjmp or longjmp, or links longjmp in */
	unsigned go : 1;	/* built by Go (.go.buildinfo or .gopclntab) */
	unsigned debugdata_too_large : 1;	/* its MiniDebugInfo decompresses past the bound */
};

/* Reads path.  Functions come from its .symtab, else from the .symtab of its
 * separate debuginfo (target_open_debuginfo), else from its MiniDebugInfo
 * (.gnu_debugdata) with its .dynsym, else from its .dynsym; DWARF
 * from the file, else from the debuginfo.  A file none of them names a
 * function in loads with nfuncs 0 and syms TARGET_SYMS_NONE: its libraries
 * can still be traced (target_no_functions_error says what to install).
 * With cache_dir, reuses and stores results per build-id and file identity
 * (device, inode, size, mtime).  */
int target_load(struct target *t, const char *path, const char *cache_dir);
/* The separate debuginfo of the ELF file path, found as elfutils and stap
 * find it: by build-id under each debuginfo directory
 * (DIR/.build-id/xx/rest.debug), by .gnu_debuglink beside the file, in its
 * .debug/ and under each directory, then from debuginfod when DEBUGINFOD_URLS
 * is set.  The directories are $SYSTEMTAP_DEBUGINFO_PATH (the variable stap
 * reads) or elfutils' default, /usr/lib/debug.  Returns an open descriptor
 * and sets *found (caller frees), or -1 when there is none.  */
int target_open_debuginfo(const char *path, char **found);
/* fn is asked while a debuginfod download runs; nonzero ends the download
 * (a signal to perun must not wait for a slow server).  */
void target_set_cancel(int (*fn)(void));
/* What to install so that path's functions can be found: a sentence naming
 * the distribution's debug symbol package (Debian: PKG-dbgsym and the
 * debug archive's apt line; Fedora: dnf debuginfo-install PKG), or a
 * generic one when no package manager knows the file.  Caller frees.  */
char *target_debuginfo_hint(const char *path);
/* Reports (pr_error) that t names no function, with target_debuginfo_hint;
 * returns -1.  what says what was asked for ("-s userspace", "'main'").  */
int target_no_functions_error(const struct target *t, const char *what);
/* Where t's functions came from, for messages: ".symtab", ".dynsym (exports
 * only)", "debuginfo PATH", "nothing".  */
const char *target_syms_name(const struct target *t);
/* 1 when t's file has landing pads (.gcc_except_table: C++, or C built
 * with -fexceptions and cleanups), which an unwind runs frame by frame; 0
 * when it has none; -1 when the file cannot be read as ELF.  */
int target_has_cleanups(const struct target *t);
void target_release(struct target *t);
/* The path of an analysis file about t in cache_dir/targets, named by its
 * build-id and file identity and ending in suffix (".tsv" is target_load's
 * own, ".cg" the call graph's); caller frees.  */
char *target_cache_path(const struct target *t, const char *cache_dir, const char *suffix);
/* Finds a function by linkage or display name (or display up to '('), or
 * one of its aliases.  */
const struct func *target_find_func(const struct target *t, const char *name);
/* Every function the name could mean: the symbol (mangled) or demangled
 * name, or an alias; else every overload of a C++ name given without its
 * return type and parameter list ("Counter::bump", "accum<long>"); else
 * every instance of a template given without its arguments ("accum").  All
 * local functions sharing a name.  Fills out (up to max) and returns how
 * many there are.  */
size_t target_find_funcs(const struct target *t, const char *name, const struct func **out,
			 size_t max);
/* The function at exactly addr, or NULL.  */
const struct func *target_func_at(const struct target *t, uint64_t addr);
/* The function whose bytes hold addr, or NULL.  */
const struct func *target_func_containing(const struct target *t, uint64_t addr);
/* The addresses where source line LINE of FILE (a path, or its last
 * components) begins, as SystemTap's .statement("*@FILE:LINE") places its
 * probes: the first of the line's statements in each function.  Stores a
 * malloc'd array in *out (caller frees); returns how many, 0 when the line
 * has no code or the binary no DWARF line table.  */
size_t target_line_addrs(const struct target *t, const char *file, int line, uint64_t **out);
/* The addresses the DWARF line table marks as a prologue's end
 * (DW_LNS_set_prologue_end: where Go's stack check ends), sorted, in a
 * malloc'd *out (caller frees); how many, 0 without a line table.  */
size_t target_prologue_ends(const struct target *t, uint64_t **out);
/* The file offset of addr (what uprobe_events shows), or addr when no
 * segment holds it.  */
uint64_t target_file_offset(const struct target *t, uint64_t addr);
/* Addresses of the implementations an IFUNC can resolve to.  For a shared
 * library, the one the dynamic linker picks on this CPU (dlopen + dlsym in
 * a throwaway child process); otherwise every candidate symbol named
 * __NAME_* or NAME_*.  Returns how many were stored in out (up to max), 0
 * when none is known.  */
size_t target_ifunc_targets(const struct target *t, const struct func *ifunc, uint64_t *out,
			    size_t max);
/* True when name is a compiler or C runtime helper.  */
int target_is_helper(const char *name);
/* The shared libraries binary names (DT_NEEDED), space separated, or NULL
 * when it names none.  Caller frees.  */
char *target_needed(const char *binary);
/* Finds a shared library the binary could load: name may be a path, a file
 * name (libm.so.6) or a prefix (libm).  Caller frees.  */
char *target_find_library(const char *binary, const char *name);

#endif
