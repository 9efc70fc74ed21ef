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

#include "target/callgraph.h"
#include "target/target.h"
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

/* Version of the cache file layout and of what the extraction finds.  */
#define CG_CACHE_VERSION 3
static const char cg_magic[8] = { 'P', 'E', 'R', 'U', 'N', 'C', 'G', '\n' };

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
	memcpy(cg->blocks + cg->nblocks, c.blocks, c.nblocks * sizeof(*c.blocks));
	for (k = 0; k < c.nblocks; k++)
		cg->blocks[cg->nblocks + k].succ += cg->nsucc;
	cg->nblocks += c.nblocks;
	if (cg->nsucc + c.nsucc + 1 > b->scap) {
		while (cg->nsucc + c.nsucc + 1 > b->scap)
			b->scap = b->scap ? b->scap * 2 : 4096;
		cg->succ = xrealloc(cg->succ, b->scap * sizeof(*cg->succ));
	}
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
		fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
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

/* --- the cache file ---------------------------------------------------------
 * A header, then the nodes, edges, blocks and successors as fixed records
 * and the import names; the header holds a CRC-32 of all that follows and
 * the record sizes, so a damaged or foreign file is refused and rebuilt.  */

struct cg_head {
	char magic[8];
	uint32_t version, flags;	/* CG_NO_DWARF it was built with */
	uint32_t rec_sizes;	/* node, edge, block record sizes, one byte each */
	uint32_t nnodes, nfuncs, nedges, nblocks, nsucc, strsize;
	uint32_t dwarf_sites, insn_sites, has_dwarf, dwarf_disagree;
	uint64_t debug_id;
	uint32_t crc, pad;
};

struct cg_rec {
	uint64_t addr, size;
	uint32_t first_block, nblocks, ninsns, nloops, calls_in_loops, indirect_calls,
		unresolved_calls;
	uint8_t import, loop_depth, pad[2];
};

static uint32_t rec_sizes(void)
{
	return (uint32_t)sizeof(struct cg_rec) | (uint32_t)sizeof(struct cg_edge) << 8 |
	       (uint32_t)sizeof(struct cfg_block) << 16;
}

static void cache_store(const struct callgraph *cg, const char *path, unsigned flags,
			uint64_t debug_id)
{
	struct strbuf sb = STRBUF_INIT;
	struct cg_head h;
	size_t strsize = 0;
	uint32_t i;
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	for (i = cg->nfuncs; i < cg->nnodes; i++)
		strsize += strlen(cg->nodes[i].name) + 1;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, cg_magic, sizeof(h.magic));
	h.version = CG_CACHE_VERSION;
	h.flags = flags;
	h.rec_sizes = rec_sizes();
	h.nnodes = cg->nnodes;
	h.nfuncs = cg->nfuncs;
	h.nedges = cg->nedges;
	h.nblocks = cg->nblocks;
	h.nsucc = cg->nsucc;
	h.strsize = (uint32_t)strsize;
	h.dwarf_sites = cg->dwarf_sites;
	h.insn_sites = cg->insn_sites;
	h.has_dwarf = cg->has_dwarf;
	h.dwarf_disagree = cg->dwarf_disagree;
	h.debug_id = debug_id;
	strbuf_add(&sb, &h, sizeof(h));
	for (i = 0; i < cg->nnodes; i++) {
		const struct cg_node *n = &cg->nodes[i];
		struct cg_rec r;
		memset(&r, 0, sizeof(r));
		r.addr = n->addr;
		r.size = n->size;
		r.first_block = n->first_block;
		r.nblocks = n->nblocks;
		r.ninsns = n->ninsns;
		r.nloops = n->nloops;
		r.calls_in_loops = n->calls_in_loops;
		r.indirect_calls = n->indirect_calls;
		r.unresolved_calls = n->unresolved_calls;
		r.import = n->import;
		r.loop_depth = n->loop_depth;
		strbuf_add(&sb, &r, sizeof(r));
	}
	strbuf_add(&sb, cg->edges, cg->nedges * sizeof(*cg->edges));
	strbuf_add(&sb, cg->blocks, cg->nblocks * sizeof(*cg->blocks));
	strbuf_add(&sb, cg->succ, cg->nsucc * sizeof(*cg->succ));
	for (i = cg->nfuncs; i < cg->nnodes; i++)
		strbuf_add(&sb, cg->nodes[i].name, strlen(cg->nodes[i].name) + 1);
	h.crc = (uint32_t)crc32(0, (const Bytef *)sb.buf + sizeof(h), (uInt)(sb.len - sizeof(h)));
	memcpy(sb.buf, &h, sizeof(h));
	if (slash)
		*slash = '\0';
	if (fs_mkdir_p(dir, 0700) == 0 && fs_write_atomic(path, sb.buf, sb.len, 0600) == 0)
		pr_dbg("stored %s (%zu bytes)", path, sb.len);
	free(dir);
	strbuf_release(&sb);
}

/* 0 loaded, 1 missing or stale (quietly), -1 damaged (why says how).  */
static int cache_load(struct callgraph *cg, const struct target *t, const char *path,
		      unsigned flags, uint64_t debug_id, const char **why)
{
	struct strbuf sb = STRBUF_INIT;
	struct cg_head h;
	const char *p, *end;
	uint64_t want;
	uint32_t i;
	int ret = -1;

	if (fs_read_trusted(&sb, path) < 0) {
		strbuf_release(&sb);
		if (errno == ENOENT)
			return 1;
		*why = "not a file of yours";
		return -1;
	}
	*why = "truncated";
	if (sb.len < sizeof(h))
		goto out;
	memcpy(&h, sb.buf, sizeof(h));
	*why = "not a call-graph file";
	if (memcmp(h.magic, cg_magic, sizeof(h.magic)))
		goto out;
	if (h.version != CG_CACHE_VERSION || h.rec_sizes != rec_sizes() || h.flags != flags ||
	    h.debug_id != debug_id || h.nfuncs != t->nfuncs) {
		ret = 1;	/* another perun's, or the binary's debug info changed */
		goto out;
	}
	want = sizeof(h) + (uint64_t)h.nnodes * sizeof(struct cg_rec) +
	       (uint64_t)h.nedges * sizeof(struct cg_edge) +
	       (uint64_t)h.nblocks * sizeof(struct cfg_block) + (uint64_t)h.nsucc * 4 + h.strsize;
	*why = "wrong size";
	if (want != sb.len || h.nnodes < h.nfuncs)
		goto out;
	*why = "checksum mismatch";
	if (h.crc != (uint32_t)crc32(0, (const Bytef *)sb.buf + sizeof(h),
				     (uInt)(sb.len - sizeof(h))))
		goto out;
	p = sb.buf + sizeof(h);
	end = sb.buf + sb.len;
	cg->nnodes = h.nnodes;
	cg->nfuncs = h.nfuncs;
	cg->nedges = h.nedges;
	cg->nblocks = h.nblocks;
	cg->nsucc = h.nsucc;
	cg->dwarf_sites = h.dwarf_sites;
	cg->insn_sites = h.insn_sites;
	cg->has_dwarf = h.has_dwarf != 0;
	cg->dwarf_disagree = h.dwarf_disagree;
	cg->nodes = xcalloc(h.nnodes + 1, sizeof(*cg->nodes));
	cg->edges = xmalloc((h.nedges + 1) * sizeof(*cg->edges));
	cg->blocks = xmalloc((h.nblocks + 1) * sizeof(*cg->blocks));
	cg->succ = xmalloc((h.nsucc + 1) * sizeof(*cg->succ));
	cg->strings = xmalloc(h.strsize + 1);
	*why = "bad record";
	for (i = 0; i < h.nnodes; i++, p += sizeof(struct cg_rec)) {
		struct cg_rec r;
		struct cg_node *n = &cg->nodes[i];
		memcpy(&r, p, sizeof(r));
		if ((uint64_t)r.first_block + r.nblocks > h.nblocks || (i < h.nfuncs) == r.import ||
		    (i < h.nfuncs && r.addr != t->funcs[i].addr))
			goto out;
		n->addr = r.addr;
		n->size = r.size;
		n->first_block = r.first_block;
		n->nblocks = r.nblocks;
		n->ninsns = r.ninsns;
		n->nloops = r.nloops;
		n->calls_in_loops = r.calls_in_loops;
		n->indirect_calls = r.indirect_calls;
		n->unresolved_calls = r.unresolved_calls;
		n->import = r.import;
		n->loop_depth = r.loop_depth;
		if (i < h.nfuncs) {
			n->func = &t->funcs[i];
			n->name = t->funcs[i].name;
		}
	}
	memcpy(cg->edges, p, h.nedges * sizeof(*cg->edges));
	p += h.nedges * sizeof(*cg->edges);
	memcpy(cg->blocks, p, h.nblocks * sizeof(*cg->blocks));
	p += h.nblocks * sizeof(*cg->blocks);
	memcpy(cg->succ, p, h.nsucc * sizeof(*cg->succ));
	p += h.nsucc * sizeof(*cg->succ);
	memcpy(cg->strings, p, h.strsize);
	cg->strings[h.strsize] = '\0';
	if (p + h.strsize != end || (h.strsize && cg->strings[h.strsize - 1] != '\0'))
		goto out;
	for (i = 0; i < h.nedges; i++) {
		const struct cg_edge *e = &cg->edges[i];
		if (e->from >= h.nnodes || e->to >= h.nnodes ||
		    (i && (e->from < e[-1].from || (e->from == e[-1].from && e->to <= e[-1].to))))
			goto out;
	}
	for (i = 0; i < h.nnodes; i++) {
		const struct cg_node *n = &cg->nodes[i];
		uint32_t k, j;
		for (k = 0; k < n->nblocks; k++) {
			const struct cfg_block *bl = &cg->blocks[n->first_block + k];
			if ((uint64_t)bl->succ + bl->nsucc > h.nsucc)
				goto out;
			for (j = 0; j < bl->nsucc; j++)
				if (cg->succ[bl->succ + j] >= n->nblocks)
					goto out;
		}
	}
	{
		const char *s = cg->strings, *send = cg->strings + h.strsize;
		for (i = h.nfuncs; i < h.nnodes; i++) {
			if (s >= send)
				goto out;
			cg->nodes[i].name = s;
			s += strlen(s) + 1;
		}
		if (s != send)
			goto out;
	}
	ret = 0;
out:
	strbuf_release(&sb);
	return ret;
}

/* --- the rooted analysis ------------------------------------------------- */

static void build_adjacency(struct callgraph *cg)
{
	uint32_t i, n = cg->nnodes;
	uint32_t *pos;

	cg->out_start = xcalloc(n + 2, sizeof(*cg->out_start));
	cg->in_start = xcalloc(n + 2, sizeof(*cg->in_start));
	cg->in_edges = xmalloc((cg->nedges + 1) * sizeof(*cg->in_edges));
	for (i = 0; i < cg->nedges; i++) {
		cg->out_start[cg->edges[i].from + 1]++;
		cg->in_start[cg->edges[i].to + 1]++;
	}
	for (i = 0; i < n; i++) {
		cg->out_start[i + 1] += cg->out_start[i];
		cg->in_start[i + 1] += cg->in_start[i];
	}
	pos = xmalloc((n + 1) * sizeof(*pos));
	memcpy(pos, cg->in_start, (n + 1) * sizeof(*pos));
	for (i = 0; i < cg->nedges; i++)	/* by caller, as edges are */
		cg->in_edges[pos[cg->edges[i].to]++] = i;
	free(pos);
}

static void find_reachable(struct callgraph *cg)
{
	uint32_t *queue, head = 0, tail = 0, k;

	if (cg->root < 0)
		return;
	queue = xmalloc((cg->nnodes + 1) * sizeof(*queue));
	cg->nodes[cg->root].reachable = 1;
	queue[tail++] = (uint32_t)cg->root;
	while (head < tail) {
		uint32_t x = queue[head++];
		for (k = cg->out_start[x]; k < cg->out_start[x + 1]; k++) {
			uint32_t y = cg->edges[k].to;
			if (!cg->nodes[y].reachable) {
				cg->nodes[y].reachable = 1;
				queue[tail++] = y;
			}
		}
	}
	cg->nreachable = tail;
	free(queue);
}

/* A min-heap of (level estimate, name rank, node) for Algorithm 1's
 * lower-bound representatives; stale entries are skipped when popped.  */
struct cand {
	int level;
	uint32_t rank, node;
};

static int cand_less(const struct cand *a, const struct cand *b)
{
	return a->level != b->level ? a->level < b->level : a->rank < b->rank;
}

static void heap_push(struct cand *h, size_t *n, struct cand c)
{
	size_t i = (*n)++;

	h[i] = c;
	while (i && cand_less(&h[i], &h[(i - 1) / 2])) {
		struct cand tmp = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct cand heap_pop(struct cand *h, size_t *n)
{
	struct cand top = h[0];
	size_t i = 0;

	h[0] = h[--(*n)];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < *n && cand_less(&h[l], &h[m]))
			m = l;
		if (r < *n && cand_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			break;
		struct cand tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
	return top;
}

static const struct callgraph *sort_cg;

static int cmp_node_name(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(sort_cg->nodes[x].name, sort_cg->nodes[y].name);

	return c ? c : (x < y ? -1 : x > y);
}

/* Algorithm 1 (seeds/003, ch. 7.1.1): a global BFS from the root resolves a
 * node once all its (reachable) callers were inspected, at one more than
 * the highest level among its callers and callees seen so far; when the
 * queue runs dry, cycles are broken at the candidate with the lowest
 * estimate (ties by name).  */
static void estimate_levels(struct callgraph *cg)
{
	uint32_t n = cg->nnodes, i, k, head = 0, tail = 0;
	uint32_t *queue, *ncallers, *nseen, *rank, *order;
	int *seen_max;
	uint8_t *done;
	struct cand *heap;
	size_t nheap = 0;

	for (i = 0; i < n; i++)
		cg->nodes[i].level = -1;
	cg->depth = -1;
	if (cg->root < 0)
		return;
	queue = xmalloc((cg->nedges + 1) * sizeof(*queue));
	ncallers = xcalloc(n + 1, sizeof(*ncallers));
	nseen = xcalloc(n + 1, sizeof(*nseen));
	seen_max = xmalloc((n + 1) * sizeof(*seen_max));
	done = xcalloc(n + 1, 1);
	heap = xmalloc((cg->nedges + 1) * sizeof(*heap));
	rank = xmalloc((n + 1) * sizeof(*rank));
	order = xmalloc((n + 1) * sizeof(*order));
	for (i = 0; i < n; i++) {
		order[i] = i;
		seen_max[i] = -1;
	}
	sort_cg = cg;
	qsort(order, n, sizeof(*order), cmp_node_name);
	for (i = 0; i < n; i++)
		rank[order[i]] = i;
	for (i = 0; i < cg->nedges; i++)
		if (cg->nodes[cg->edges[i].from].reachable)
			ncallers[cg->edges[i].to]++;

	done[cg->root] = 1;
	cg->nodes[cg->root].level = 0;
	for (k = cg->out_start[cg->root]; k < cg->out_start[cg->root + 1]; k++)
		queue[tail++] = k;
	for (;;) {
		uint32_t x;
		while (head < tail) {
			const struct cg_edge *e = &cg->edges[queue[head++]];
			int lvl = cg->nodes[e->from].level;
			x = e->to;
			if (done[x])
				continue;
			nseen[x]++;
			if (lvl > seen_max[x]) {
				seen_max[x] = lvl;
				if (nseen[x] < ncallers[x])
					heap_push(heap, &nheap, (struct cand){ lvl, rank[x], x });
			}
			if (nseen[x] < ncallers[x])
				continue;
			goto resolve;
		}
		/* the focused phase: break a cycle */
		x = UINT32_MAX;
		while (nheap) {
			struct cand c = heap_pop(heap, &nheap);
			if (!done[c.node] && c.level == seen_max[c.node]) {
				x = c.node;
				break;
			}
		}
		if (x == UINT32_MAX)
			break;
resolve:
		{
			int callers_max = seen_max[x], callees_max = -1, lvl;
			for (k = cg->out_start[x]; k < cg->out_start[x + 1]; k++) {
				uint32_t y = cg->edges[k].to;
				int l = done[y] ? cg->nodes[y].level : seen_max[y];
				if (l > callees_max)
					callees_max = l;
			}
			if (callees_max < 0)
				callees_max = callers_max;
			lvl = (callers_max > callees_max ? callers_max : callees_max) + 1;
			cg->nodes[x].level = lvl;
			done[x] = 1;
			for (k = cg->out_start[x]; k < cg->out_start[x + 1]; k++)
				queue[tail++] = k;
		}
	}
	/* levels as lists */
	for (i = 0; i < n; i++)
		if (cg->nodes[i].level > cg->depth)
			cg->depth = cg->nodes[i].level;
	cg->level_start = xcalloc((size_t)cg->depth + 3, sizeof(*cg->level_start));
	cg->level_nodes = xmalloc((cg->nreachable + 1) * sizeof(*cg->level_nodes));
	for (i = 0; i < n; i++)
		if (cg->nodes[i].level >= 0)
			cg->level_start[cg->nodes[i].level + 1]++;
	for (i = 0; i < (uint32_t)cg->depth + 1; i++)
		cg->level_start[i + 1] += cg->level_start[i];
	{
		uint32_t *pos = xmalloc(((size_t)cg->depth + 2) * sizeof(*pos));
		memcpy(pos, cg->level_start, ((size_t)cg->depth + 2) * sizeof(*pos));
		for (i = 0; i < n; i++)
			if (cg->nodes[i].level >= 0)
				cg->level_nodes[pos[cg->nodes[i].level]++] = i;
		free(pos);
	}
	free(queue);
	free(ncallers);
	free(nseen);
	free(seen_max);
	free(done);
	free(heap);
	free(rank);
	free(order);
}

/* Strongly connected components (iterative Tarjan), recursion flags, and
 * per component the set of nodes it reaches with its own members
 * (components complete in reverse topological order).  */
static void find_components(struct callgraph *cg)
{
	uint32_t n = cg->nnodes, i, nscc = 0, idx = 0, sp = 0, top = 0;
	uint32_t *index, *low, *stack, *call, *iter;
	uint8_t *on;

	cg->scc = xmalloc((n + 1) * sizeof(*cg->scc));
	index = xmalloc((n + 1) * sizeof(*index));
	low = xmalloc((n + 1) * sizeof(*low));
	stack = xmalloc((n + 1) * sizeof(*stack));
	call = xmalloc((n + 1) * sizeof(*call));
	iter = xmalloc((n + 1) * sizeof(*iter));
	on = xcalloc(n + 1, 1);
	cg->nwords = (n + 63) / 64;
	/* one bit per node per component: 22 MB for CPython's 13,000 nodes;
	 * past 512 MB, reachability is walked on demand instead */
	cg->reach_bits = (uint64_t)n * cg->nwords * 8 <= (512u << 20)
				 ? xmalloc(((size_t)n + 1) * cg->nwords * sizeof(uint64_t))
				 : NULL;
	for (i = 0; i < n; i++)
		index[i] = UINT32_MAX;
	for (i = 0; i < n; i++) {
		if (index[i] != UINT32_MAX)
			continue;
		call[top] = i;
		iter[top++] = cg->out_start[i];
		index[i] = low[i] = idx++;
		stack[sp++] = i;
		on[i] = 1;
		while (top) {
			uint32_t x = call[top - 1];
			if (iter[top - 1] < cg->out_start[x + 1]) {
				uint32_t y = cg->edges[iter[top - 1]++].to;
				if (index[y] == UINT32_MAX) {
					index[y] = low[y] = idx++;
					stack[sp++] = y;
					on[y] = 1;
					call[top] = y;
					iter[top++] = cg->out_start[y];
				} else if (on[y] && index[y] < low[x]) {
					low[x] = index[y];
				}
				continue;
			}
			top--;
			if (top && low[x] < low[call[top - 1]])
				low[call[top - 1]] = low[x];
			if (low[x] == index[x]) {
				/* x's component is complete: every component it
				 * calls into already has its bits */
				uint64_t *bits;
				uint32_t first = sp, m, k, size;
				do
					first--;
				while (stack[first] != x);
				size = sp - first;
				bits = cg->reach_bits ? cg->reach_bits + (size_t)nscc * cg->nwords
						      : NULL;
				if (bits)
					memset(bits, 0, cg->nwords * sizeof(uint64_t));
				for (m = first; m < sp; m++) {
					uint32_t v = stack[m];
					on[v] = 0;
					cg->scc[v] = nscc;
					if (bits)
						bits[v / 64] |= 1ULL << (v % 64);
				}
				for (m = first; m < sp; m++) {
					uint32_t v = stack[m];
					for (k = cg->out_start[v]; k < cg->out_start[v + 1]; k++) {
						uint32_t y = cg->edges[k].to, w;
						const uint64_t *ob;
						if (y == v)
							cg->nodes[v].recursive = 1;
						if (cg->scc[y] == nscc || !bits)
							continue;
						ob = cg->reach_bits + (size_t)cg->scc[y] * cg->nwords;
						for (w = 0; w < cg->nwords; w++)
							bits[w] |= ob[w];
					}
					if (size > 1)
						cg->nodes[v].recursive = 1;
				}
				sp = first;
				nscc++;
			}
		}
	}
	for (i = 0; i < n && cg->reach_bits; i++) {
		const uint64_t *bits = cg->reach_bits + (size_t)cg->scc[i] * cg->nwords;
		uint32_t w, c = 0;
		for (w = 0; w < cg->nwords; w++)
			c += (uint32_t)__builtin_popcountll(bits[w]);
		cg->nodes[i].reach = c - (cg->nodes[i].recursive ? 0 : 1);
	}
	free(index);
	free(low);
	free(stack);
	free(call);
	free(iter);
	free(on);
}

static void analyse(struct callgraph *cg, const struct target *t, Elf *elf_or_null,
		    uint64_t entry)
{
	const struct func *mainf = target_find_func(t, "main");
	uint32_t i;

	(void)elf_or_null;
	cg->root = -1;
	if (mainf)
		cg->root = (int)(mainf - t->funcs);
	else if (entry && target_func_at(t, entry))
		cg->root = (int)(target_func_at(t, entry) - t->funcs);
	build_adjacency(cg);
	find_reachable(cg);
	estimate_levels(cg);
	find_components(cg);
	cg->leaves = xmalloc((cg->nnodes + 1) * sizeof(*cg->leaves));
	for (i = 0; i < cg->nnodes; i++) {
		struct cg_node *n = &cg->nodes[i];
		unsigned cx = cfg_complexity_of_depth(n->loop_depth);
		n->leaf = cg->out_start[i] == cg->out_start[i + 1];
		if (n->recursive && cx < CFG_LINEAR)
			cx = CFG_LINEAR;
		n->complexity = (uint8_t)cx;
		if (n->leaf && n->reachable)
			cg->leaves[cg->nleaves++] = i;
	}
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
	fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pr_error_errno("open %s", t->path);
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
		r = cache_load(cg, t, path, flags, debug_id, &why);
		if (r == 0) {
			cg->from_cache = 1;
			analyse(cg, t, elf, entry_point(elf));
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
		cache_store(cg, path, flags, debug_id);
	analyse(cg, t, elf, entry_point(elf));
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

/* --- queries ------------------------------------------------------------- */

int callgraph_find(const struct callgraph *cg, const char *name)
{
	const struct func *f = target_find_func(cg->target, name);
	uint32_t i;

	if (f)
		return (int)(f - cg->target->funcs);
	for (i = cg->nfuncs; i < cg->nnodes; i++)
		if (!strcmp(cg->nodes[i].name, name))
			return (int)i;
	return -1;
}

uint32_t callgraph_node_of(const struct callgraph *cg, const struct func *f)
{
	return (uint32_t)(f - cg->target->funcs);
}

const struct cg_edge *callgraph_callees(const struct callgraph *cg, uint32_t i, size_t *n)
{
	*n = cg->out_start[i + 1] - cg->out_start[i];
	return cg->edges + cg->out_start[i];
}

const uint32_t *callgraph_callers(const struct callgraph *cg, uint32_t i, size_t *n)
{
	*n = cg->in_start[i + 1] - cg->in_start[i];
	return cg->in_edges + cg->in_start[i];
}

const uint32_t *callgraph_level(const struct callgraph *cg, int l, size_t *n)
{
	if (l < 0 || l > cg->depth) {
		*n = 0;
		return NULL;
	}
	*n = cg->level_start[l + 1] - cg->level_start[l];
	return cg->level_nodes + cg->level_start[l];
}

/* Without the bit sets (huge graphs): a walk from a.  */
static int walk_reaches(const struct callgraph *cg, uint32_t a, uint32_t b)
{
	uint32_t *queue = xmalloc((cg->nnodes + 1) * sizeof(*queue)), head = 0, tail = 0, k;
	uint8_t *seen = xcalloc(cg->nnodes + 1, 1);
	int found = 0;

	queue[tail++] = a;
	while (head < tail && !found) {
		uint32_t x = queue[head++];
		for (k = cg->out_start[x]; k < cg->out_start[x + 1] && !found; k++) {
			uint32_t y = cg->edges[k].to;
			found = y == b;
			if (!seen[y]) {
				seen[y] = 1;
				queue[tail++] = y;
			}
		}
	}
	free(queue);
	free(seen);
	return found;
}

int callgraph_reaches(const struct callgraph *cg, uint32_t a, uint32_t b)
{
	const uint64_t *bits;

	if (a == b && !cg->nodes[a].recursive)
		return 0;
	if (cg->scc[a] == cg->scc[b] && a != b)
		return 1;
	if (!cg->reach_bits)
		return walk_reaches(cg, a, b);
	bits = cg->reach_bits + (size_t)cg->scc[a] * cg->nwords;
	return (bits[b / 64] >> (b % 64)) & 1;
}

size_t callgraph_reachable(const struct callgraph *cg, uint32_t a, uint32_t **out)
{
	uint32_t i;
	size_t k = 0;

	*out = xmalloc((cg->nnodes + 1) * sizeof(**out));
	for (i = 0; i < cg->nnodes; i++)
		if (callgraph_reaches(cg, a, i))
			(*out)[k++] = i;
	return k;
}

const struct cfg_block *callgraph_blocks(const struct callgraph *cg, uint32_t i, size_t *n)
{
	*n = cg->nodes[i].nblocks;
	return cg->blocks + cg->nodes[i].first_block;
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
	fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pr_error_errno("open %s", t->path);
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
