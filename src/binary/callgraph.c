/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The call-graph resource (callgraph.h): extraction from ELF, DWARF and
 * machine code, its cache, and the rooted analysis (Algorithm 1 of
 * seeds/003, ch. 7.1.1).  */
#include "config.h"

#define PR_FMT "callgraph"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "binary/callgraph-cache.h"
#include "binary/callgraph.h"
#include "binary/target.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

#ifndef DW_TAG_call_site
#define DW_TAG_call_site 0x48
#endif
#ifndef DW_AT_call_return_pc
#define DW_AT_call_return_pc 0x7d
#endif
#ifndef DW_AT_call_origin
#define DW_AT_call_origin 0x7f
#endif
#ifndef DW_AT_call_tail_call
#define DW_AT_call_tail_call 0x82
#endif


/* --- building ------------------------------------------------------------ */

/* An executable section's bytes.  */
struct xsec {
	uint64_t addr, size;
	const uint8_t *data;
	int plt;
};

/* A GOT slot the dynamic linker fills: the node it points to.  */
struct slot {
	uint64_t addr;
	uint32_t node;
};

/* A PLT entry's jump: entry addresses up to 15 bytes before it are it.  */
struct stub {
	uint64_t jmp;
	uint32_t node;
};

/* A name that calls can resolve to.  */
struct name_ref {
	const char *name;
	uint32_t node;
};

/* A call instruction's return address and callee, to check DWARF by.  */
struct site {
	uint64_t ret;
	uint32_t to;
};

/* An edge before merging: one per call site and source.  */
struct raw_edge {
	uint32_t from, to;
	uint8_t flags, loop_depth;
};

struct builder {
	const struct target *t;
	struct callgraph *cg;
	struct xsec *secs;
	size_t nsecs;
	struct slot *slots;
	size_t nslots;
	struct stub *stubs;
	size_t nstubs;
	char **imports;		/* names, sorted, unique */
	size_t nimports;
	struct name_ref *names;	/* every function name and alias, and the imports */
	size_t nnames;
	struct raw_edge *raw;
	size_t nraw, rawcap;
	uint32_t *parent;	/* node whose calls a function's are (foo.cold -> foo) */
	size_t bcap, scap;	/* allocated cg->blocks, cg->succ */
	struct site *sites;	/* resolved call instructions, by return address */
	size_t nsites, sitecap;
};

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_stub(const void *a, const void *b)
{
	const struct stub *x = a, *y = b;

	return x->jmp < y->jmp ? -1 : x->jmp > y->jmp;
}

static int cmp_name_ref(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->node < y->node ? -1 : x->node > y->node);
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static long find_import(const struct builder *b, const char *name)
{
	size_t lo = 0, hi = b->nimports;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(b->imports[mid], name);
		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The node a name means: the first function (or import) of that name.  */
static long find_name(const struct builder *b, const char *name)
{
	size_t lo = 0, hi = b->nnames;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(b->names[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < b->nnames && !strcmp(b->names[lo].name, name))
		return (long)b->names[lo].node;
	return -1;
}

/* The target function that contains addr, or -1.  */
static long func_containing(const struct target *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	lo--;
	if (addr < t->funcs[lo].addr + (t->funcs[lo].size ? t->funcs[lo].size : 1))
		return (long)lo;
	return -1;
}

static long func_starting(const struct target *t, uint64_t addr)
{
	const struct func *f = target_func_at(t, addr);

	return f ? f - t->funcs : -1;
}

static long slot_node(const struct builder *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nslots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->slots[mid].addr == addr)
			return b->slots[mid].node;
		if (b->slots[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The node of the PLT entry at addr, or -1.  */
static long stub_node(const struct builder *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nstubs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->stubs[mid].jmp < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < b->nstubs && b->stubs[lo].jmp - addr < 16)
		return b->stubs[lo].node;
	return -1;
}

static const struct xsec *section_of(const struct builder *b, uint64_t addr)
{
	size_t i;

	for (i = 0; i < b->nsecs; i++)
		if (addr >= b->secs[i].addr && addr < b->secs[i].addr + b->secs[i].size)
			return &b->secs[i];
	return NULL;
}

static void add_raw(struct builder *b, uint32_t from, uint32_t to, int flags, int depth)
{
	struct raw_edge *e;

	if (b->nraw == b->rawcap) {
		b->rawcap = b->rawcap ? b->rawcap * 2 : 1024;
		b->raw = xrealloc(b->raw, b->rawcap * sizeof(*b->raw));
	}
	e = &b->raw[b->nraw++];
	e->from = from;
	e->to = to;
	e->flags = (uint8_t)flags;
	e->loop_depth = (uint8_t)depth;
}

/* Executable sections, and which are PLTs.  */
static void read_sections(struct builder *b, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *name;
		struct xsec *x;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		data = elf_rawdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		b->secs = xrealloc(b->secs, (b->nsecs + 1) * sizeof(*b->secs));
		x = &b->secs[b->nsecs++];
		x->addr = sh.sh_addr;
		x->size = sh.sh_size;
		x->data = data->d_buf;
		x->plt = name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
				  !strcmp(name, ".plt.got"));
	}
}

/* Pass 1: names of the imports the GOT slots of JUMP_SLOT and GLOB_DAT
 * relocations are filled with.  Pass 2: the slots, with their nodes.  */
static void read_relocs(struct builder *b, Elf *elf, int pass)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *data, *symdata;
		Elf_Scn *symscn;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh))
			continue;
		data = elf_getdata(scn, NULL);
		symdata = elf_getdata(symscn, NULL);
		if (!data || !symdata)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;
			int type;

			if (!gelf_getrela(data, (int)i, &r))
				continue;
			type = (int)GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			if (!gelf_getsym(symdata, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC &&
			    GELF_ST_TYPE(sym.st_info) != STT_NOTYPE)
				continue;
			if (pass == 1) {
				if (sym.st_shndx == SHN_UNDEF) {
					b->imports = xrealloc(b->imports,
							      (b->nimports + 1) * sizeof(*b->imports));
					b->imports[b->nimports++] = xstrdup(name);
				}
			} else {
				long node = -1;
				if (sym.st_shndx != SHN_UNDEF && sym.st_value)
					node = func_starting(b->t, sym.st_value);
				else if (sym.st_shndx == SHN_UNDEF)
					node = find_import(b, name);
				if (node < 0)
					continue;
				if (sym.st_shndx == SHN_UNDEF)
					node += (long)b->t->nfuncs;
				b->slots = xrealloc(b->slots, (b->nslots + 1) * sizeof(*b->slots));
				b->slots[b->nslots].addr = r.r_offset;
				b->slots[b->nslots].node = (uint32_t)node;
				b->nslots++;
			}
		}
	}
}

static void unique_imports(struct builder *b)
{
	size_t i, o = 0;

	if (b->nimports > 1)
		qsort(b->imports, b->nimports, sizeof(*b->imports), cmp_str_ptr);
	for (i = 0; i < b->nimports; i++) {
		if (o && !strcmp(b->imports[o - 1], b->imports[i])) {
			free(b->imports[i]);
			continue;
		}
		b->imports[o++] = b->imports[i];
	}
	b->nimports = o;
}

/* PLT entries: each one's jmp [rip+slot] names its import.  */
static int read_stubs(struct builder *b, struct cfg_disasm *d)
{
	size_t i, k;

	for (i = 0; i < b->nsecs; i++) {
		struct cfg c;
		if (!b->secs[i].plt)
			continue;
		if (cfg_build(d, b->secs[i].data, b->secs[i].size, b->secs[i].addr, &c) < 0)
			return -1;
		for (k = 0; k < c.ncalls; k++) {
			long node;
			if (c.calls[k].kind != CFG_CALL_TAIL_SLOT)
				continue;
			node = slot_node(b, c.calls[k].target);
			if (node < 0)
				continue;
			b->stubs = xrealloc(b->stubs, (b->nstubs + 1) * sizeof(*b->stubs));
			b->stubs[b->nstubs].jmp = c.calls[k].site;
			b->stubs[b->nstubs].node = (uint32_t)node;
			b->nstubs++;
		}
		cfg_release(&c);
	}
	if (b->nstubs > 1)
		qsort(b->stubs, b->nstubs, sizeof(*b->stubs), cmp_stub);
	return 0;
}

static void build_names(struct builder *b)
{
	const struct target *t = b->t;
	size_t i, j, n = b->nimports;

	for (i = 0; i < t->nfuncs; i++)
		n += 1 + t->funcs[i].naliases;
	b->names = xmalloc((n + 1) * sizeof(*b->names));
	for (i = 0; i < t->nfuncs; i++) {
		b->names[b->nnames].name = t->funcs[i].name;
		b->names[b->nnames++].node = (uint32_t)i;
		for (j = 0; j < t->funcs[i].naliases; j++) {
			b->names[b->nnames].name = t->funcs[i].aliases[j];
			b->names[b->nnames++].node = (uint32_t)i;
		}
	}
	for (i = 0; i < b->nimports; i++) {
		b->names[b->nnames].name = b->imports[i];
		b->names[b->nnames++].node = (uint32_t)(t->nfuncs + i);
	}
	qsort(b->names, b->nnames, sizeof(*b->names), cmp_name_ref);
}

/* foo.cold and foo.part.N's .cold pieces are foo's code: their calls are
 * foo's.  */
static void find_parents(struct builder *b)
{
	const struct target *t = b->t;
	size_t i;

	b->parent = xmalloc((t->nfuncs + 1) * sizeof(*b->parent));
	for (i = 0; i < t->nfuncs; i++) {
		const char *cold = strstr(t->funcs[i].name, ".cold");
		b->parent[i] = (uint32_t)i;
		if (cold && cold != t->funcs[i].name) {
			char *base = xstrfmt("%.*s", (int)(cold - t->funcs[i].name), t->funcs[i].name);
			long p = find_name(b, base);
			if (p >= 0 && (size_t)p < t->nfuncs)
				b->parent[i] = (uint32_t)p;
			free(base);
		}
	}
}

static int is_cold(const struct func *f)
{
	return strstr(f->name, ".cold") != NULL;
}

/* One function's CFG, its blocks kept and its calls turned into edges.  */
static int scan_function(struct builder *b, struct cfg_disasm *d, uint32_t i)
{
	const struct target *t = b->t;
	const struct func *f = &t->funcs[i];
	struct callgraph *cg = b->cg;
	struct cg_node *nd = &cg->nodes[i];
	const struct xsec *x = section_of(b, f->addr);
	uint64_t len = f->size;
	uint32_t from = b->parent[i], k;
	struct cfg c;

	if (!x || !len)
		return 0;
	if (f->addr + len > x->addr + x->size)
		len = x->addr + x->size - f->addr;
	if (cfg_build(d, x->data + (f->addr - x->addr), len, f->addr, &c) < 0)
		return -1;
	nd->first_block = cg->nblocks;
	nd->nblocks = c.nblocks;
	nd->ninsns = c.ninsns;
	nd->nloops = c.nloops;
	nd->calls_in_loops = c.calls_in_loops;
	nd->loop_depth = c.loop_depth;
	if (cg->nblocks + c.nblocks > b->bcap) {
		while (cg->nblocks + c.nblocks > b->bcap)
			b->bcap = b->bcap ? b->bcap * 2 : 4096;
		cg->blocks = xrealloc(cg->blocks, b->bcap * sizeof(*cg->blocks));
	}
	if (c.nblocks)
		memcpy(cg->blocks + cg->nblocks, c.blocks, c.nblocks * sizeof(*c.blocks));
	for (k = 0; k < c.nblocks; k++)
		cg->blocks[cg->nblocks + k].succ += cg->nsucc;
	cg->nblocks += c.nblocks;
	if (cg->nsucc + c.nsucc + 1 > b->scap) {
		while (cg->nsucc + c.nsucc + 1 > b->scap)
			b->scap = b->scap ? b->scap * 2 : 4096;
		cg->succ = xrealloc(cg->succ, b->scap * sizeof(*cg->succ));
	}
	if (c.nsucc)
		memcpy(cg->succ + cg->nsucc, c.succ, c.nsucc * sizeof(*c.succ));
	cg->nsucc += c.nsucc;
	for (k = 0; k < c.ncalls; k++) {
		const struct cfg_call *call = &c.calls[k];
		long to = -1;
		int flags = CG_E_INSN;

		switch (call->kind) {
		case CFG_CALL_DIRECT:
			to = func_starting(t, call->target);
			if (to < 0 && (to = stub_node(b, call->target)) >= 0)
				flags |= CG_E_PLT;
			if (to < 0 && !(call->target >= f->addr && call->target < f->addr + f->size))
				cg->nodes[from].unresolved_calls++;
			break;
		case CFG_CALL_SLOT:
			to = slot_node(b, call->target);
			if (to < 0)
				cg->nodes[from].indirect_calls++;
			flags |= CG_E_PLT;
			break;
		case CFG_CALL_INDIRECT:
			cg->nodes[from].indirect_calls++;
			break;
		case CFG_CALL_TAIL:
			to = func_starting(t, call->target);
			if (to >= 0 && (is_cold(&t->funcs[to]) || b->parent[to] == from))
				to = -1;
			else if (to < 0 && (to = stub_node(b, call->target)) >= 0)
				flags |= CG_E_PLT;
			flags |= CG_E_TAIL;
			break;
		case CFG_CALL_TAIL_SLOT:
			to = slot_node(b, call->target);
			if (to < 0)
				cg->nodes[from].indirect_calls++;
			flags |= CG_E_TAIL | CG_E_PLT;
			break;
		}
		if (to >= 0) {
			add_raw(b, from, (uint32_t)to, flags, call->loop_depth);
			cg->insn_sites++;
			if (b->nsites == b->sitecap) {
				b->sitecap = b->sitecap ? b->sitecap * 2 : 1024;
				b->sites = xrealloc(b->sites, b->sitecap * sizeof(*b->sites));
			}
			b->sites[b->nsites].ret = call->site + call->size;
			b->sites[b->nsites++].to = (uint32_t)to;
		}
	}
	cfg_release(&c);
	return 0;
}

/* The loop depth of the block of function i that holds pc.  */
static int depth_at(const struct callgraph *cg, uint32_t i, uint64_t pc)
{
	const struct cg_node *nd = &cg->nodes[i];
	uint32_t k;

	for (k = 0; k < nd->nblocks; k++) {
		const struct cfg_block *bl = &cg->blocks[nd->first_block + k];
		if (pc >= bl->addr && pc < bl->addr + bl->size)
			return bl->loop_depth;
	}
	return 0;
}

/* The callee of the call instruction returning to ret, or -1.  */
static long site_callee(const struct builder *b, uint64_t ret)
{
	size_t lo = 0, hi = b->nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->sites[mid].ret == ret)
			return b->sites[mid].to;
		if (b->sites[mid].ret < ret)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int cmp_site(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return x->ret < y->ret ? -1 : x->ret > y->ret;
}

static void call_site(struct builder *b, Dwarf_Die *die)
{
	const struct target *t = b->t;
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	Dwarf_Addr ret = 0, lo;
	long caller, callee = -1, site;
	bool tail;
	int flags = CG_E_DWARF;

	if (dwarf_attr(die, DW_AT_call_return_pc, &attr)) {
		if (dwarf_formaddr(&attr, &ret) != 0)
			return;
	} else if (dwarf_attr(die, DW_AT_low_pc, &attr)) {
		if (dwarf_formaddr(&attr, &ret) != 0)
			return;
	} else {
		return;
	}
	if (!(dwarf_attr(die, DW_AT_call_origin, &attr) ||
	      dwarf_attr(die, DW_AT_abstract_origin, &attr)) ||
	    !dwarf_formref_die(&attr, &origin))
		return;		/* through a pointer: the instructions count it */
	/* an inlined or abstract instance points at its abstract origin */
	while (!(dwarf_lowpc(&origin, &lo) == 0) &&
	       dwarf_attr(&origin, DW_AT_abstract_origin, &attr) &&
	       dwarf_formref_die(&attr, &origin))
		;
	if (dwarf_lowpc(&origin, &lo) == 0)
		callee = func_starting(t, lo);
	if (callee < 0) {
		Dwarf_Die spec = origin;
		const char *name = NULL;
		if (dwarf_attr(&spec, DW_AT_linkage_name, &attr))
			name = dwarf_formstring(&attr);
		if (!name && dwarf_attr(&spec, DW_AT_specification, &attr) &&
		    dwarf_formref_die(&attr, &spec) && dwarf_attr(&spec, DW_AT_linkage_name, &attr))
			name = dwarf_formstring(&attr);
		if (!name)
			name = dwarf_diename(&origin);
		if (name)
			callee = find_name(b, name);
	}
	/* The instruction at the site says where the call goes: the DWARF
	 * origin of a clone, or of one of several same-named static copies,
	 * is found by name and may be another function.  Count those.  */
	site = site_callee(b, ret);
	if (site >= 0) {
		if (callee >= 0 && callee != site)
			b->cg->dwarf_disagree++;
		callee = site;
	}
	if (callee < 0)
		return;
	if ((size_t)callee >= t->nfuncs)
		flags |= CG_E_PLT;
	caller = func_containing(t, ret - 1);
	if (caller < 0)
		return;
	if (dwarf_attr(die, DW_AT_call_tail_call, &attr) ||
	    dwarf_attr(die, DW_AT_GNU_tail_call, &attr)) {
		if (dwarf_formflag(&attr, &tail) == 0 && tail)
			flags |= CG_E_TAIL;
	}
	caller = b->parent[caller];
	add_raw(b, (uint32_t)caller, (uint32_t)callee, flags,
		depth_at(b->cg, (uint32_t)caller, ret - 1));
	b->cg->dwarf_sites++;
}

static void walk_sites(struct builder *b, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;

	if (depth > 64)
		return;
	do {
		int tag = dwarf_tag(die);
		if (tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) {
			call_site(b, die);
		} else if ((tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
			    tag == DW_TAG_inlined_subroutine || tag == DW_TAG_namespace ||
			    tag == DW_TAG_class_type || tag == DW_TAG_structure_type) &&
			   dwarf_haschildren(die) && dwarf_child(die, &child) == 0) {
			walk_sites(b, &child, depth + 1);
		}
	} while (dwarf_siblingof(die, die) == 0);
}

static int read_sites(struct builder *b, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int any = 0;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			walk_sites(b, &child, 0);
			any = 1;
		}
		off = next;
	}
	return any;
}

/* The separate debug file of a -dbgsym package, by build-id.  */
static char *debug_file(const struct target *t)
{
	if (strlen(t->build_id) < 4)
		return NULL;
	return xstrfmt("/usr/lib/debug/.build-id/%.2s/%s.debug", t->build_id, t->build_id + 2);
}

/* Identity of the separate debug file (0 when there is none), so that
 * installing one rebuilds the cached graph.  */
static uint64_t debug_identity(const struct target *t, int in_binary)
{
	char *path;
	struct stat st;
	uint64_t id = 0;

	if (in_binary)
		return 1;
	path = debug_file(t);
	if (path && stat(path, &st) == 0) {
		char buf[128];
		int n = snprintf(buf, sizeof(buf), "%llx-%llx-%llx-%lld.%ld",
				 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
				 (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
				 st.st_mtim.tv_nsec);
		id = ((uint64_t)crc32(0, (const Bytef *)buf, (uInt)n) << 32) | 2;
	}
	free(path);
	return id;
}

static int has_debug_info(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS)
			return 1;
	}
	return 0;
}

static void dwarf_edges(struct builder *b, Elf *elf)
{
	Dwarf *dw = NULL;
	Elf *delf = NULL;
	int fd = -1;

	if (has_debug_info(elf)) {
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	} else {
		char *path = debug_file(b->t);
		fd = path ? fs_open_regular(path, 0, 0) : -1;
		free(path);
		if (fd >= 0 && (delf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) && has_debug_info(delf))
			dw = dwarf_begin_elf(delf, DWARF_C_READ, NULL);
	}
	if (dw) {
		b->cg->has_dwarf = read_sites(b, dw) != 0;
		dwarf_end(dw);
	}
	if (delf)
		elf_end(delf);
	if (fd >= 0)
		close(fd);
}

/* Merges raw edges into one per (caller, callee): sites counts the
 * instructions, or the DWARF entries when no instruction was seen.  */
static void merge_edges(struct builder *b)
{
	struct callgraph *cg = b->cg;
	size_t i = 0;

	if (b->nraw > 1)
		qsort(b->raw, b->nraw, sizeof(*b->raw), cmp_raw);
	cg->edges = xcalloc(b->nraw + 1, sizeof(*cg->edges));
	while (i < b->nraw) {
		struct cg_edge *e = &cg->edges[cg->nedges++];
		uint32_t insn = 0, dw = 0;
		size_t j = i;
		e->from = b->raw[i].from;
		e->to = b->raw[i].to;
		for (; j < b->nraw && b->raw[j].from == e->from && b->raw[j].to == e->to; j++) {
			e->flags |= b->raw[j].flags;
			if (b->raw[j].loop_depth > e->loop_depth)
				e->loop_depth = b->raw[j].loop_depth;
			if (b->raw[j].flags & CG_E_INSN)
				insn++;
			else
				dw++;
		}
		e->sites = insn ? insn : dw;
		i = j;
	}
}

static void builder_release(struct builder *b)
{
	size_t i;

	free(b->secs);
	free(b->slots);
	free(b->stubs);
	for (i = 0; i < b->nimports; i++)
		free(b->imports[i]);
	free(b->imports);
	free(b->names);
	free(b->raw);
	free(b->parent);
	free(b->sites);
}

static int extract(struct callgraph *cg, const struct target *t, unsigned flags, Elf *elf)
{
	struct builder b;
	struct cfg_disasm *d = NULL;
	struct strbuf strs = STRBUF_INIT;
	size_t i;
	int ret = -1;

	memset(&b, 0, sizeof(b));
	b.t = t;
	b.cg = cg;
	read_sections(&b, elf);
	read_relocs(&b, elf, 1);
	unique_imports(&b);
	read_relocs(&b, elf, 2);
	if (b.nslots > 1)
		qsort(b.slots, b.nslots, sizeof(*b.slots), cmp_slot);
	cg->nfuncs = (uint32_t)t->nfuncs;
	cg->nnodes = (uint32_t)(t->nfuncs + b.nimports);
	cg->nodes = xcalloc(cg->nnodes + 1, sizeof(*cg->nodes));
	for (i = 0; i < t->nfuncs; i++) {
		cg->nodes[i].name = t->funcs[i].name;
		cg->nodes[i].addr = t->funcs[i].addr;
		cg->nodes[i].size = t->funcs[i].size;
		cg->nodes[i].func = &t->funcs[i];
	}
	for (i = 0; i < b.nimports; i++) {
		strbuf_addstr(&strs, b.imports[i]);
		strbuf_addch(&strs, '\0');
	}
	cg->strings = strs.len ? strbuf_detach(&strs) : xstrdup("");
	{
		const char *p = cg->strings;
		for (i = 0; i < b.nimports; i++) {
			cg->nodes[t->nfuncs + i].name = p;
			cg->nodes[t->nfuncs + i].import = 1;
			p += strlen(p) + 1;
		}
	}
	build_names(&b);
	find_parents(&b);
	if (cfg_disasm_new(&d) < 0 || read_stubs(&b, d) < 0)
		goto out;
	for (i = 0; i < t->nfuncs; i++)
		if (scan_function(&b, d, (uint32_t)i) < 0)
			goto out;
	if (b.nsites > 1)
		qsort(b.sites, b.nsites, sizeof(*b.sites), cmp_site);
	if (!(flags & CG_NO_DWARF))
		dwarf_edges(&b, elf);
	merge_edges(&b);
	ret = 0;
out:
	cfg_disasm_free(d);
	builder_release(&b);
	strbuf_release(&strs);
	return ret;
}

/* The root: main, else the function at the entry point.  */
static void find_root(struct callgraph *cg, const struct target *t, uint64_t entry)
{
	const struct func *mainf = target_find_func(t, "main");

	cg->root = -1;
	if (mainf)
		cg->root = (int)(mainf - t->funcs);
	else if (entry && target_func_at(t, entry))
		cg->root = (int)(target_func_at(t, entry) - t->funcs);
}

static uint64_t entry_point(Elf *elf)
{
	GElf_Ehdr eh;

	return gelf_getehdr(elf, &eh) ? eh.e_entry : 0;
}

int callgraph_load(struct callgraph *cg, const struct target *t, const char *cache_dir,
		   unsigned flags)
{
	Elf *elf = NULL;
	GElf_Ehdr eh;
	char *path = NULL;
	uint64_t debug_id;
	int fd, ret = -1;

	memset(cg, 0, sizeof(*cg));
	cg->target = t;
	fd = fs_open_regular(t->path, 0, 1);
	if (fd < 0)
		return errno == EINVAL ? -1 : pr_error_errno("open %s", t->path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		pr_error("%s: elf_begin: %s", t->path, elf_errmsg(-1));
		goto out;
	}
	if (eh.e_machine != EM_X86_64) {
		pr_error("%s: ELF machine %d: the call graph reads x86-64 code only", t->path,
			 eh.e_machine);
		goto out;
	}
	debug_id = flags & CG_NO_DWARF ? 0 : debug_identity(t, has_debug_info(elf));
	if (cache_dir && t->build_id[0]) {
		const char *why = NULL;
		int r;
		path = target_cache_path(t, cache_dir, ".cg");
		r = callgraph_cache_load(cg, t, path, flags, debug_id, &why);
		if (r == 0) {
			cg->from_cache = 1;
			find_root(cg, t, entry_point(elf));
			callgraph_analyse(cg);
			ret = 0;
			goto out;
		}
		if (r < 0)
			pr_warn("%s: damaged call-graph cache entry (%s): rebuilding it", path, why);
		callgraph_release(cg);
		memset(cg, 0, sizeof(*cg));
		cg->target = t;
	}
	if (extract(cg, t, flags, elf) < 0) {
		callgraph_release(cg);
		goto out;
	}
	if (path)
		callgraph_cache_store(cg, path, flags, debug_id);
	find_root(cg, t, entry_point(elf));
	callgraph_analyse(cg);
	ret = 0;
out:
	free(path);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

void callgraph_release(struct callgraph *cg)
{
	free(cg->nodes);
	free(cg->edges);
	free(cg->out_start);
	free(cg->in_start);
	free(cg->in_edges);
	free(cg->blocks);
	free(cg->succ);
	free(cg->level_start);
	free(cg->level_nodes);
	free(cg->leaves);
	free(cg->scc);
	free(cg->reach_bits);
	free(cg->strings);
	memset(cg, 0, sizeof(*cg));
}

/* Reads node i's code from the binary.  */
static int read_code(const struct callgraph *cg, uint32_t i, uint8_t **code, size_t *len)
{
	const struct cg_node *nd = &cg->nodes[i];
	const struct target *t = cg->target;
	uint64_t off;
	int fd;
	ssize_t got;

	*code = NULL;
	*len = 0;
	if (nd->import || !nd->size)
		return 0;
	off = target_file_offset(t, nd->addr);
	fd = fs_open_regular(t->path, 0, 1);
	if (fd < 0)
		return errno == EINVAL ? -1 : pr_error_errno("open %s", t->path);
	*code = xmalloc(nd->size);
	got = pread(fd, *code, nd->size, (off_t)off);
	close(fd);
	if (got < 0) {
		free(*code);
		*code = NULL;
		return pr_error_errno("read %s", t->path);
	}
	*len = (size_t)got;
	return 0;
}

int callgraph_function_cfg(const struct callgraph *cg, uint32_t i, struct cfg *out)
{
	struct cfg_disasm *d;
	uint8_t *code;
	size_t len;
	int ret;

	memset(out, 0, sizeof(*out));
	if (read_code(cg, i, &code, &len) < 0)
		return -1;
	if (cfg_disasm_new(&d) < 0) {
		free(code);
		return -1;
	}
	ret = len ? cfg_build(d, code, len, cg->nodes[i].addr, out) : 0;
	cfg_disasm_free(d);
	free(code);
	return ret;
}

int callgraph_function_insns(const struct callgraph *cg, uint32_t i,
			     int (*fn)(const struct cfg_insn *insn, void *arg), void *arg)
{
	struct cfg_disasm *d;
	uint8_t *code;
	size_t len;

	if (read_code(cg, i, &code, &len) < 0)
		return -1;
	if (cfg_disasm_new(&d) < 0) {
		free(code);
		return -1;
	}
	if (len)
		cfg_each_insn(d, code, len, cg->nodes[i].addr, fn, arg);
	cfg_disasm_free(d);
	free(code);
	return 0;
}
