/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Diff Tracing (thesis 7.2.4): which functions of the current version of a
 * binary changed since a baseline version, by three comparisons, each
 * refining the one before:
 *
 *   1. call graphs: functions new and removed by name; a new function whose
 *      callers and callees match a removed one's is a rename (matched in
 *      level order, so renamed callers are mapped first); with inspect_all,
 *      a common function whose callees differ changed;
 *   2. the git diff of the two versions (libgit2): the functions its hunk
 *      headers and definition lines name (PCRE2), and the functions whose
 *      DWARF declaration lines the hunks cover, are candidates;
 *   3. CFGs: each candidate (and each rename) is compared block by block,
 *      soft (instruction counts), semistrict (instruction kinds) or strict
 *      (instructions and operands, branch and call targets as block
 *      indices and function names, rip-relative displacements ignored).
 *
 * Changed: new, callees differ, or the CFG differs (a candidate whose CFG
 * cannot be compared counts as changed: no false negative on purpose).
 * The protected set is the changed functions, leaves only with keep_leaf.
 * No I/O here but libgit2's (through vcs/).  */
#ifndef PERUN_DIFFTRACE_H
#define PERUN_DIFFTRACE_H

#include <stddef.h>
#include <stdint.h>

struct callgraph;
struct json_object;

enum dt_cfg_mode { DT_CFG_SOFT, DT_CFG_SEMISTRICT, DT_CFG_STRICT };

/* Why, per function of the current version.  */
enum {
	DT_NEW = 1,		/* no baseline function of its name or its neighbours */
	DT_RENAMED = 2,		/* a removed function's callers and callees match */
	DT_CALLEES = 4,		/* inspect_all: its callees differ */
	DT_SOURCE = 8,		/* the diff names it */
	DT_CFG = 16,		/* its CFG differs (or could not be compared) */
	DT_CHANGED = 32,	/* the verdict */
	DT_PROTECTED = 64,	/* changed, and not a leaf unless keep_leaf */
};

struct difftrace {
	const struct callgraph *cur, *base;
	uint8_t *why;		/* per current node: DT_* */
	int32_t *old_of;	/* per current node: its baseline node, or -1 */
	int32_t *new_of;	/* per baseline node: its current node, or -1 */
	uint32_t nnew, nremoved, nrenamed, ncallees, nsource, ncompared, ncfg, nchanged,
		nprotected;
	int vcs_used;		/* the diff was read (else every common function is a
				 * candidate) */
	char **protect;		/* names of the protected functions, sorted */
	size_t nprotect;
};

/* d compares cur (the current version) with base; both must outlive d.  */
void difftrace_init(struct difftrace *d, const struct callgraph *cur,
		    const struct callgraph *base);
void difftrace_release(struct difftrace *d);

/* 1: new, removed, renamed; with inspect_all, callee differences.  */
void difftrace_compare_cg(struct difftrace *d, int inspect_all);

/* The function a hunk header's context names ("@@ -3,2 +3,2 @@ static int
 * f(int x)" -> "f"), or a definition line ("int g(void) {" -> "g"); into out
 * (size n).  0 found, -1 none.  */
int difftrace_header_name(const char *text, size_t len, char *out, size_t n);
int difftrace_definition_name(const char *text, size_t len, char *out, size_t n);

/* 2: marks DT_SOURCE on the functions the diff of the commit from against
 * the commit to (NULL: the work tree) in worktree names.  -1 (reported) when
 * the diff cannot be made.  */
int difftrace_vcs(struct difftrace *d, const char *worktree, const char *from,
		  const char *to);

/* 3: compares the CFGs of the candidates (DT_SOURCE or DT_RENAMED, or every
 * common function when no diff was read) that are not already changed.  */
void difftrace_compare_cfg(struct difftrace *d, enum dt_cfg_mode mode);

/* The verdict and the protected set.  */
void difftrace_finish(struct difftrace *d, int keep_leaf);

/* True when name (a function of the current version) is protected.  */
int difftrace_protects(const struct difftrace *d, const char *name);

/* {"changed": [...], "new": [...], "renamed": {"new": "old"}, "removed":
 * [...], "counts": {...}} for the profile.  */
struct json_object *difftrace_json(const struct difftrace *d);

#endif
