/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "target"

#include <ctype.h>
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <lzma.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binary/target.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/strv.h"

/* libstdc++'s demangler has C linkage; we use it for C++ display names.  */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Version of the per-build-id analysis cache format (6: where the symbols
 * came from, the debuginfo file; a static program's longjmp counts only when
 * called; 5: longjmp and Go marks;
 * 4: unaddressable USDT names are no longer listed; entries keyed by file
 * identity too).  */
#define TARGET_CACHE_VERSION "perun-target 6"

/* Compiler and C runtime helpers that the userspace strategy leaves out.  */
static const char *const helper_names[] = {
	"_start", "_init", "_fini", "frame_dummy", "register_tm_clones",
	"deregister_tm_clones", "__do_global_dtors_aux", "__libc_csu_init",
	"__libc_csu_fini", "_dl_relocate_static_pie", "__stack_chk_fail_local",
	"runtime.etext",	/* Go: the end of its text, a label of size 0 */
	NULL,
};

/* Prefixes of generated helper names (static constructors, PIC thunks).  */
static const char *const helper_prefixes[] = {
	"_GLOBAL__sub_I_", "_GLOBAL__sub_D_", "__cxx_global_var_init",
	"__static_initialization_and_destruction_", "__x86.get_pc_thunk.", NULL,
};

int target_is_helper(const char *name)
{
	size_t i;

	if (strchr(name, '@'))	/* PLT stubs and versioned aliases */
		return 1;
	/* a function's cold part (foo.cold) is jumped to, never called: a
	 * return probe there would take its caller's return address */
	if (strstr(name, ".cold"))
		return 1;
	for (i = 0; helper_names[i]; i++)
		if (!strcmp(name, helper_names[i]))
			return 1;
	for (i = 0; helper_prefixes[i]; i++)
		if (!strncmp(name, helper_prefixes[i], strlen(helper_prefixes[i])))
			return 1;
	return 0;
}

static char *demangle(const char *name)
{
	int status = -1;
	char *d;

	if (strncmp(name, "_Z", 2))
		return xstrdup(name);
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0 || !d) {
		free(d);
		return xstrdup(name);
	}
	return d;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Orders by address; at one address the name users call comes first:
 * global over local, fewer leading underscores (malloc, not __libc_malloc;
 * puts, not _IO_puts), strong over weak, then the shortest.  */
static int cmp_func_addr(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->global != y->global)
		return y->global - x->global;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->weak != y->weak)
		return x->weak - y->weak;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void free_func(struct func *f)
{
	size_t i;

	free(f->name);
	free(f->display);
	free(f->file);
	for (i = 0; i < f->naliases; i++)
		free(f->aliases[i]);
	free(f->aliases);
}

static void add_alias(struct func *f, const char *name)
{
	size_t i;

	if (!strcmp(f->name, name))
		return;
	for (i = 0; i < f->naliases; i++)
		if (!strcmp(f->aliases[i], name))
			return;
	f->aliases = xrealloc(f->aliases, (f->naliases + 1) * sizeof(*f->aliases));
	f->aliases[f->naliases++] = xstrdup(name);
}

/* True for __cxa_throw and its versioned forms (__cxa_throw@CXXABI_1.3).  */
static int is_cxa_throw(const char *name)
{
	return !strncmp(name, "__cxa_throw", 11) && (name[11] == '\0' || name[11] == '@');
}

/* True when name (without its @VERSION) is f.  */
static int is_sym(const char *name, const char *f)
{
	size_t n = strlen(f);
	return !strncmp(name, f, n) && (name[n] == '\0' || name[n] == '@');
}

/* True for a setjmp or longjmp that a program imports: a longjmp jumps out of
 * the frames between the two, whose return probes then never fire.  */
static int is_jmp_import(const char *name)
{
	static const char *const names[] = {
		"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "longjmp", "_longjmp",
		"siglongjmp", "__longjmp_chk", NULL,
	};
	size_t i;

	for (i = 0; names[i]; i++)
		if (is_sym(name, names[i]))
			return 1;
	return 0;
}

/* True for the longjmp a static program links in when it calls one (libc's
 * own __longjmp and _setjmp are there in every static program, and a
 * threaded one links longjmp itself without calling it).  */
static int is_jmp_defined(const char *name)
{
	return is_sym(name, "longjmp") || is_sym(name, "_longjmp") ||
	       is_sym(name, "siglongjmp") || is_sym(name, "__longjmp_chk");
}

/* Addresses of the longjmp functions a file defines (static programs).  */
struct jmp_defs {
	uint64_t addr[8];
	size_t n;
};

static void add_jmp_def(struct jmp_defs *j, uint64_t addr)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		if (j->addr[i] == addr)
			return;
	if (j->n < sizeof(j->addr) / sizeof(j->addr[0]))
		j->addr[j->n++] = addr;
}

/* True when code in elf calls or jumps to one of the addresses directly
 * (call/jmp rel32, as a static program calls its longjmp).  */
static int calls_any(Elf *elf, const struct jmp_defs *j)
{
	Elf_Scn *scn = NULL;

	while (j->n && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const unsigned char *b;
		size_t i, k;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(data = elf_getdata(scn, NULL)) ||
		    !data->d_buf || data->d_size < 5)
			continue;
		b = data->d_buf;
		for (i = 0; i + 5 <= data->d_size; i++) {
			int32_t rel;
			uint64_t to;
			if (b[i] != 0xe8 && b[i] != 0xe9)
				continue;
			memcpy(&rel, b + i + 1, 4);
			to = sh.sh_addr + i + 5 + (uint64_t)(int64_t)rel;
			for (k = 0; k < j->n; k++)
				if (to == j->addr[k])
					return 1;
		}
	}
	return 0;
}

/* Takes one symbol: a function, or a mark (C++ exceptions, longjmp).  */
static void add_sym(struct target *t, const char *name, const GElf_Sym *sym, struct jmp_defs *jd,
		    size_t *cap)
{
	int type = GELF_ST_TYPE(sym->st_info), bind = GELF_ST_BIND(sym->st_info);
	struct func *f;

	if (!name || !*name)
		return;
	if (is_cxa_throw(name))
		t->exceptions = 1;
	if (sym->st_shndx == SHN_UNDEF && is_jmp_import(name))
		t->longjmp = 1;
	else if (sym->st_shndx != SHN_UNDEF && sym->st_value && is_jmp_defined(name))
		add_jmp_def(jd, sym->st_value);
	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym->st_shndx == SHN_UNDEF ||
	    sym->st_value == 0)
		return;
	if (t->nfuncs == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		t->funcs = xrealloc(t->funcs, *cap * sizeof(*t->funcs));
	}
	f = &t->funcs[t->nfuncs++];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->display = demangle(name);
	f->addr = sym->st_value;
	f->size = sym->st_size;
	f->global = bind == STB_GLOBAL || bind == STB_WEAK;
	f->weak = bind == STB_WEAK;
	f->ifunc = type == STT_GNU_IFUNC;
	f->helper = target_is_helper(name);
}

static int read_symbols(struct target *t, Elf *elf, int want_type, struct jmp_defs *jd)
{
	Elf_Scn *scn = NULL;
	size_t cap = t->nfuncs;
	int found = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (Elf64_Word)want_type)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !sh.sh_entsize)
			continue;
		found = 1;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;

			if (gelf_getsym(data, (int)i, &sym))
				add_sym(t, elf_strptr(elf, sh.sh_link, sym.st_name), &sym, jd, &cap);
		}
	}
	return found;
}

/* The symbols elfutils finds for path when it has no .symtab: its
 * MiniDebugInfo (.gnu_debugdata, an xz-compressed symbol table of its local
 * functions, as Fedora ships binaries) with its .dynsym.  Returns how many
 * functions were added.  */
static int no_debuginfo(Dwfl_Module *m, void **ud, const char *name, Dwarf_Addr base,
			const char *file, const char *link, GElf_Word crc, char **found)
{
	(void)m, (void)ud, (void)name, (void)base, (void)file, (void)link, (void)crc;
	*found = NULL;
	return -1;
}

/* The most a MiniDebugInfo section may decompress to: a real one is a
 * symbol table of a few MiB; an xz bomb is gigabytes, which elfutils would
 * hold in memory whole.  */
#define MINIDEBUGINFO_MAX (64u << 20)

/* Whether path's .gnu_debugdata decompresses to more than
 * MINIDEBUGINFO_MAX (said once per path); it is decompressed here into a
 * small buffer, counted and dropped, before elfutils would read it.  */
static int minidebuginfo_too_large(const char *path)
{
	static char *said;
	unsigned char out[65536];
	lzma_stream xz = LZMA_STREAM_INIT;
	Elf_Scn *scn = NULL;
	Elf_Data *data = NULL;
	Elf *elf = NULL;
	size_t shstrndx;
	int fd = fs_open_regular(path, 0, 0), big = 0;
	lzma_ret r;

	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".gnu_debugdata")) {
			data = elf_rawdata(scn, NULL);
			break;
		}
	}
	if (!data || !data->d_buf || lzma_stream_decoder(&xz, 64u << 20, 0) != LZMA_OK)
		goto out;
	xz.next_in = data->d_buf;
	xz.avail_in = data->d_size;
	do {
		xz.next_out = out;
		xz.avail_out = sizeof(out);
		r = lzma_code(&xz, LZMA_FINISH);
		big = xz.total_out > MINIDEBUGINFO_MAX;
	} while (r == LZMA_OK && !big);
	lzma_end(&xz);
	if (big && (!said || strcmp(said, path))) {
		pr_warn("%s: its MiniDebugInfo (.gnu_debugdata) decompresses to more than %u MiB: "
			"too large, not read",
			path, MINIDEBUGINFO_MAX >> 20);
		free(said);
		said = xstrdup(path);
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return big;
}

static size_t read_minidebuginfo(struct target *t, struct jmp_defs *jd)
{
	Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		/* only what the file holds: separate debuginfo was looked for */
		.find_debuginfo = no_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *m = NULL;
	size_t cap = t->nfuncs, before = t->nfuncs;
	int i, n, fd;

	if (!dwfl)
		return 0;
	if (minidebuginfo_too_large(t->path)) {
		t->debugdata_too_large = 1;
		dwfl_end(dwfl);
		return 0;
	}
	/* libdwfl would open the file itself, blocking; on success it owns fd */
	fd = fs_open_regular(t->path, 0, 0);
	if (fd >= 0)
		m = dwfl_report_offline(dwfl, t->path, t->path, fd);
	dwfl_report_end(dwfl, NULL, NULL);
	n = m ? dwfl_module_getsymtab(m) : -1;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m, i, &sym, &addr, &shndx, &elf, &bias);

		/* st_value stays the file's address; shndx is where it is */
		sym.st_shndx = (Elf64_Half)(shndx == SHN_XINDEX ? 1 : shndx);
		add_sym(t, name, &sym, jd, &cap);
	}
	dwfl_end(dwfl);
	return t->nfuncs - before;
}

/* One function per address: aliases (weak + strong, local copies) collapse
 * into the preferred name and keep theirs as aliases, so -f finds them.  */
static void dedup_funcs(struct target *t)
{
	size_t i, o = 0;

	if (t->nfuncs > 1)
		qsort(t->funcs, t->nfuncs, sizeof(*t->funcs), cmp_func_addr);
	for (i = 0; i < t->nfuncs; i++) {
		if (o && t->funcs[o - 1].addr == t->funcs[i].addr) {
			struct func *keep = &t->funcs[o - 1];
			add_alias(keep, t->funcs[i].name);
			keep->ifunc |= t->funcs[i].ifunc;
			if (t->funcs[i].size > keep->size)
				keep->size = t->funcs[i].size;
			free_func(&t->funcs[i]);
			continue;
		}
		t->funcs[o++] = t->funcs[i];
	}
	t->nfuncs = o;
}

static struct func *find_addr(struct target *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nfuncs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->funcs[mid].addr == addr)
			return &t->funcs[mid];
		if (t->funcs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void walk_dies(struct target *t, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;

	if (depth > 16)
		return;
	do {
		int tag = dwarf_tag(die);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr lo;
			if (dwarf_lowpc(die, &lo) == 0) {
				struct func *f = find_addr(t, lo);
				if (f)
					f->dwarf = 1;
				if (f && !f->file) {
					int line = 0;
					const char *file = dwarf_decl_file(die);
					if (file) {
						f->file = xstrdup(file);
						dwarf_decl_line(die, &line);
						f->line = line;
					}
				}
			}
		} else if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			    tag == DW_TAG_structure_type || tag == DW_TAG_compile_unit ||
			    tag == DW_TAG_partial_unit) &&
			   dwarf_child(die, &child) == 0) {
			walk_dies(t, &child, depth + 1);
		}
	} while (dwarf_siblingof(die, die) == 0);
}

static int read_dwarf(struct target *t, Elf *elf)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!dw)
		return 0;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0)
			walk_dies(t, &child, 0);
		off = next;
	}
	dwarf_end(dw);
	return 1;
}

static void read_notes(struct target *t, Elf *elf, int quiet)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *nm = (const char *)data->d_buf + name_off;
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(nm, "GNU", 4)) {
				size_t i, n = nh.n_descsz > 64 ? 64 : nh.n_descsz;
				for (i = 0; i < n; i++)
					snprintf(t->build_id + 2 * i, 3, "%02x", desc[i]);
			} else if (nh.n_type == 3 && nh.n_namesz == 8 && !memcmp(nm, "stapsdt", 8) &&
				   nh.n_descsz > 24) {
				/* pc, base, semaphore (3 x 8 bytes), then provider, name, args */
				const char *prov = (const char *)desc + 24;
				const char *end = (const char *)desc + nh.n_descsz;
				const char *name = memchr(prov, '\0', (size_t)(end - prov));
				uint64_t pc, sem;
				struct usdt *u;

				if (!name || ++name >= end || !memchr(name, '\0', (size_t)(end - name)))
					continue;
				if (name[strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						       "0123456789_")] || !*name) {
					if (!quiet)
						pr_warn("%s: skipping USDT probe '%s:%s': SystemTap cannot "
							"address its name", t->path, prov, name);
					continue;
				}
				memcpy(&pc, desc, 8);
				memcpy(&sem, desc + 16, 8);
				if (t->nusdts == cap) {
					cap = cap ? cap * 2 : 16;
					t->usdts = xrealloc(t->usdts, cap * sizeof(*t->usdts));
				}
				u = &t->usdts[t->nusdts++];
				u->provider = xstrdup(prov);
				u->name = xstrdup(name);
				u->pc = pc;
				u->sema = sem;
				u->semaphore = sem != 0;
			}
		}
	}
}

static int has_section(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want))
			return 1;
	}
	return 0;
}

/* Where elfutils' debuginfod client keeps what it fetched for m (it does
 * not tell libdwfl's callers the name): CACHE/BUILDID/debuginfo, CACHE being
 * $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
 * ~/.cache/debuginfod_client.  NULL when it is not there.  */
static char *debuginfod_cached(Dwfl_Module *m)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	struct strbuf sb = STRBUF_INIT;
	int n = dwfl_module_build_id(m, &bits, &vaddr), i;

	if (n <= 0)
		return NULL;
	if (env && *env)
		strbuf_addstr(&sb, env);
	else if (xdg && *xdg)
		strbuf_addf(&sb, "%s/debuginfod_client", xdg);
	else if (home && *home)
		strbuf_addf(&sb, "%s/.cache/debuginfod_client", home);
	else
		return NULL;
	strbuf_addch(&sb, '/');
	for (i = 0; i < n; i++)
		strbuf_addf(&sb, "%02x", bits[i]);
	strbuf_addstr(&sb, "/debuginfo");
	if (access(sb.buf, R_OK) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

/* Whether the candidate debuginfo file path is safe to open as elfutils
 * opens it (blocking): missing, or a regular file of a real file system.
 * A FIFO, a device or a procfs file there (a user may plant one beside her
 * binary or name one in its .gnu_debuglink) would hang or feed the open:
 * reported once and refused.  */
static int candidate_safe(const char *path)
{
	int fd = fs_open_regular(path, 0, 0);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	static char *warned;	/* the last path refused, said once */

	if (errno != EINVAL)
		return 1;
	if (!warned || strcmp(warned, path)) {
		pr_warn("%s: not a regular file: no separate debuginfo is read for this "
			"binary (remove it, or check who made it)",
			path);
		free(warned);
		warned = xstrdup(path);
	}
	return 0;
}

/* Every file elfutils' standard search tries for the debuginfo of file (as
 * libdwfl.h describes it): DIR/.build-id/xx/rest.debug for each absolute
 * element DIR of search, and the debuglink name (else BASENAME.debug) beside
 * file, in each relative element below file's directory, and under each
 * absolute element followed by file's directory and each of its tails.  */
static void debuginfo_candidates(Dwfl_Module *m, const char *search, const char *file,
				 const char *link, struct strv *out)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int nbits = dwfl_module_build_id(m, &bits, &vaddr), i;
	const char *slash = file ? strrchr(file, '/') : NULL, *e = search, *end;
	char *dir = slash ? xstrfmt("%.*s", (int)(slash - file), file) : xstrdup(".");
	char *name = link && *link ? xstrdup(link)
				   : file ? xstrfmt("%s.debug", fs_basename(file)) : NULL;
	struct strbuf sb = STRBUF_INIT;

	if (name && name[0] == '/')
		strv_push(out, name);
	for (; e; e = *end ? end + 1 : NULL) {
		int len;
		end = strchrnul(e, ':');
		if (*e == '+' || *e == '-')
			e++;
		len = (int)(end - e);
		if (len > 0 && *e == '/' && nbits > 0) {
			strbuf_reset(&sb);
			strbuf_addf(&sb, "%.*s/.build-id/%02x/", len, e, bits[0]);
			for (i = 1; i < nbits; i++)
				strbuf_addf(&sb, "%02x", bits[i]);
			strbuf_addstr(&sb, ".debug");
			strv_push(out, sb.buf);
		}
		if (!name)
			continue;
		strbuf_reset(&sb);
		if (len == 0) {
			strbuf_addf(&sb, "%s/%s", dir, name);
			strv_push(out, sb.buf);
		} else if (*e == '/') {
			const char *tail = dir;
			for (; tail; tail = strchr(tail + 1, '/')) {
				strbuf_reset(&sb);
				strbuf_addf(&sb, "%.*s%s/%s", len, e, tail, name);
				strv_push(out, sb.buf);
			}
			strbuf_reset(&sb);
			strbuf_addf(&sb, "%.*s/%s", len, e, name);
			strv_push(out, sb.buf);
		} else {
			strbuf_addf(&sb, "%s/%.*s/%s", dir, len, e, name);
			strv_push(out, sb.buf);
		}
	}
	strbuf_release(&sb);
	free(name);
	free(dir);
}

/* The debuginfo path of the session target_open_debuginfo runs.  */
static char **search_path;

/* dwfl_standard_find_debuginfo once every file it would open is known not
 * to block: elfutils opens them without O_NONBLOCK.  */
static int safe_find_debuginfo(Dwfl_Module *m, void **ud, const char *name, Dwarf_Addr base,
			       const char *file, const char *link, GElf_Word crc, char **found)
{
	struct strv cand = STRV_INIT;
	const char *search = search_path && *search_path ? *search_path : ":.debug:/usr/lib/debug";
	size_t i;
	int safe = 1;

	*found = NULL;
	debuginfo_candidates(m, search, file, link, &cand);
	for (i = 0; i < cand.n && safe; i++)
		safe = candidate_safe(cand.v[i]);
	strv_clear(&cand);
	if (!safe) {
		errno = EINVAL;
		return -1;
	}
	return dwfl_standard_find_debuginfo(m, ud, name, base, file, link, crc, found);
}

/* Asked while a debuginfod download runs: nonzero ends it.  */
static int (*cancelled)(void);

void target_set_cancel(int (*fn)(void))
{
	cancelled = fn;
}

static int debuginfod_progress(debuginfod_client *c, long done, long total)
{
	(void)c, (void)done, (void)total;
	return cancelled && cancelled();
}

/* Lets a signal end the downloads of dwfl's debuginfod client: elfutils
 * loads libdebuginfod itself and waits in it (it polls, retrying on EINTR)
 * until the download ends; its progress function is asked every second and
 * may end it.  */
static void cancellable_debuginfod(Dwfl *dwfl)
{
	typedef void (*set_progressfn)(debuginfod_client *,
				       int (*)(debuginfod_client *, long, long));
	debuginfod_client *c;
	void *h, *sym;

	if (!getenv("DEBUGINFOD_URLS") || !*getenv("DEBUGINFOD_URLS") ||
	    !(c = dwfl_get_debuginfod_client(dwfl)))
		return;
	h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return;
	sym = dlsym(h, "debuginfod_set_progressfn");
	if (sym) {
		set_progressfn set;
		memcpy(&set, &sym, sizeof(set));
		set(c, debuginfod_progress);
	}
	dlclose(h);
}

/* Bounds for elfutils' debuginfod client, unless the user set her own: a
 * server (or whoever answers in its place) may send gigabytes into root's
 * cache, or a byte a second for ever.  */
static void bound_debuginfod(void)
{
	static const char *const defaults[][2] = {
		{ "DEBUGINFOD_MAXSIZE", "1073741824" },	/* bytes */
		{ "DEBUGINFOD_MAXTIME", "120" },	/* seconds for one download */
		{ "DEBUGINFOD_TIMEOUT", "15" },	/* seconds without 100 bytes/s */
	};
	size_t i;

	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		setenv(defaults[i][0], defaults[i][1], 0);
}

int target_open_debuginfo(const char *path, char **found)
{
	const char *env = getenv("SYSTEMTAP_DEBUGINFO_PATH");
	char *dpath = env && *env ? xstrdup(env) : NULL;
	Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = safe_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &dpath,
	};
	Dwfl *dwfl;
	Dwfl_Module *m = NULL;
	char *from_debuginfod = NULL;
	int fd = -1, mfd;

	*found = NULL;
	bound_debuginfod();
	dwfl = dwfl_begin(&cb);
	if (!dwfl) {
		free(dpath);
		return -1;
	}
	search_path = &dpath;
	cancellable_debuginfod(dwfl);
	/* libdwfl would open path itself, blocking; on success it owns mfd */
	mfd = fs_open_regular(path, 0, 0);
	if (mfd >= 0)
		m = dwfl_report_offline(dwfl, path, path, mfd);
	dwfl_report_end(dwfl, NULL, NULL);
	if (m) {
		Dwarf_Addr bias;
		const char *mainfile = NULL, *debugfile = NULL;

		/* elfutils searches for what the file lacks: DWARF first, else a
		 * symbol table (a debuginfo file made without -g has only that) */
		if (!dwfl_module_getdwarf(m, &bias) && !minidebuginfo_too_large(path))
			dwfl_module_getsymtab(m);
		dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
		if (!debugfile && getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS"))
			debugfile = from_debuginfod = debuginfod_cached(m);
		if (debugfile && (!mainfile || strcmp(debugfile, mainfile))) {
			*found = fs_realpath(debugfile);
			if (*found)
				fd = fs_open_regular(*found, 0, 1);
			if (fd < 0) {
				free(*found);
				*found = NULL;
			}
		}
	}
	dwfl_end(dwfl);
	search_path = NULL;
	free(from_debuginfod);
	free(dpath);
	return fd;
}

/* Opens t's separate debuginfo as an ELF file, or returns NULL.  A file with
 * a symbol table of its own wants only the DWARF: it is looked for on disk,
 * not asked of debuginfod (a program of one's own is on no server, and
 * every collect would wait for the answer).  */
static Elf *open_separate(struct target *t, int *fdp, int local_only)
{
	char *found, *urls = NULL;
	Elf *elf;
	int fd;

	if (local_only && getenv("DEBUGINFOD_URLS")) {
		urls = xstrdup(getenv("DEBUGINFOD_URLS"));
		unsetenv("DEBUGINFOD_URLS");
	}
	fd = target_open_debuginfo(t->path, &found);
	if (urls) {
		setenv("DEBUGINFOD_URLS", urls, 1);
		free(urls);
	}

	*fdp = -1;
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		free(found);
		return NULL;
	}
	*fdp = fd;
	t->debug_path = found;
	return elf;
}

int target_has_cleanups(const struct target *t)
{
	Elf *elf;
	size_t shstrndx;
	int fd, found = -1;

	/* the binary may have been swapped since it was read: never block on
	 * a FIFO in its place */
	if (!t->path || (fd = fs_open_regular(t->path, 0, 0)) < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		found = has_section(elf, ".gcc_except_table");
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

const char *target_syms_name(const struct target *t)
{
	switch (t->syms) {
	case TARGET_SYMS_SYMTAB:
		return ".symtab";
	case TARGET_SYMS_DEBUGINFO:
		return "debuginfo";
	case TARGET_SYMS_MINIDEBUGINFO:
		return "MiniDebugInfo (.gnu_debugdata)";
	case TARGET_SYMS_DYNSYM:
		return ".dynsym (exports only)";
	case TARGET_SYMS_NONE:
		break;
	}
	return "nothing";
}

/* --- per-binary cache: one line per function, tab separated ---------------
 * Keyed by build-id and the file's identity: two programs linked from the
 * same objects can share a build-id and still differ.  */

char *target_cache_path(const struct target *t, const char *cache_dir, const char *suffix)
{
	return xstrfmt("%s/targets/%s-%llx-%llx-%llx-%lld.%09ld%s", cache_dir, t->build_id,
		       (unsigned long long)t->st_dev, (unsigned long long)t->st_ino,
		       (unsigned long long)t->st_size, (long long)t->mtime_s, t->mtime_ns, suffix);
}

static char *cache_path(const struct target *t, const char *cache_dir)
{
	return target_cache_path(t, cache_dir, ".tsv");
}

static void put_field(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++)
		strbuf_addch(sb, *s == '\t' || *s == '\n' ? ' ' : *s);
}

static void save_analysis(const struct target *t, const char *cache_dir)
{
	struct strbuf sb = STRBUF_INIT;
	char *dir = xstrfmt("%s/targets", cache_dir), *path = cache_path(t, cache_dir);
	size_t i, j;

	strbuf_addf(&sb, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t", TARGET_CACHE_VERSION, t->has_symtab,
		    t->has_dwarf, t->shared, t->exceptions, t->longjmp, t->go, (int)t->syms);
	put_field(&sb, t->debug_path);
	strbuf_addch(&sb, '\n');
	for (i = 0; i < t->nfuncs; i++) {
		const struct func *f = &t->funcs[i];
		strbuf_addf(&sb, "F\t%llx\t%llx\t%d\t%d\t%d\t%d\t%d\t", (unsigned long long)f->addr,
			    (unsigned long long)f->size, f->global, f->helper, f->line, f->dwarf,
			    f->ifunc);
		put_field(&sb, f->name);
		strbuf_addch(&sb, '\t');
		put_field(&sb, f->display);
		strbuf_addch(&sb, '\t');
		put_field(&sb, f->file);
		strbuf_addch(&sb, '\t');
		for (j = 0; j < f->naliases; j++) {
			if (j)
				strbuf_addch(&sb, ' ');
			put_field(&sb, f->aliases[j]);
		}
		strbuf_addch(&sb, '\n');
	}
	for (i = 0; i < t->nusdts; i++) {
		const struct usdt *u = &t->usdts[i];
		strbuf_addf(&sb, "U\t%llx\t%llx\t", (unsigned long long)u->pc,
			    (unsigned long long)u->sema);
		put_field(&sb, u->provider);
		strbuf_addch(&sb, '\t');
		put_field(&sb, u->name);
		strbuf_addch(&sb, '\n');
	}
	/* a file there that perun did not write is left as it is */
	if (fs_mkdir_p(dir, 0700) == 0 && fs_replaceable(path))
		fs_write_atomic(path, sb.buf, sb.len, 0600);
	strbuf_release(&sb);
	free(dir);
	free(path);
}

static char *next_field(char **p)
{
	char *s = *p, *tab;

	if (!s)
		return NULL;
	tab = strchr(s, '\t');
	if (tab) {
		*tab = '\0';
		*p = tab + 1;
	} else {
		*p = NULL;
	}
	return s;
}

/* True when the separate debuginfo of path is still the file was (or
 * still none).  */
static int same_debuginfo(const char *path, const char *was)
{
	char *found;
	int fd = target_open_debuginfo(path, &found), same;

	if (fd >= 0)
		close(fd);
	same = found ? !strcmp(found, was) : !*was;
	free(found);
	return same;
}

static int cache_load(struct target *t, const char *cache_dir)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = cache_path(t, cache_dir), *line, *save = NULL;
	size_t fcap = 0, ucap = 0;
	int ret = -1, first = 1;

	/* O_NOFOLLOW, ours, writable by no one else; a file there that is not
	 * (the cache check named it) is not read */
	if (!fs_replaceable(path) || fs_read_trusted(&sb, path) < 0)
		goto out;
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line;
		char *kind = next_field(&p);
		if (first) {
			int a, b, c, d, e, g, sy;
			char *dp;
			first = 0;
			if (strcmp(kind, TARGET_CACHE_VERSION) || !p ||
			    sscanf(p, "%d\t%d\t%d\t%d\t%d\t%d\t%d", &a, &b, &c, &d, &e, &g, &sy) != 7)
				goto out;
			dp = strrchr(p, '\t');
			if (!dp)
				goto out;
			dp++;
			/* the debuginfo found now must be the one read then (a
			 * package removed or installed since, another search path) */
			if ((sy == TARGET_SYMS_DEBUGINFO || *dp) && !same_debuginfo(t->path, dp))
				goto out;
			t->syms = (enum target_syms)sy;
			t->debug_path = *dp ? xstrdup(dp) : NULL;
			t->has_symtab = a;
			t->has_dwarf = b;
			t->shared = c;
			t->exceptions = d;
			t->longjmp = e;
			t->go = g;
		} else if (!strcmp(kind, "F")) {
			char *f[11], *al, *asave = NULL;
			struct func *fn;
			int i;
			for (i = 0; i < 11; i++)
				f[i] = next_field(&p);
			if (!f[10])
				goto out;
			if (t->nfuncs == fcap) {
				fcap = fcap ? fcap * 2 : 256;
				t->funcs = xrealloc(t->funcs, fcap * sizeof(*t->funcs));
			}
			fn = &t->funcs[t->nfuncs++];
			memset(fn, 0, sizeof(*fn));
			fn->addr = strtoull(f[0], NULL, 16);
			fn->size = strtoull(f[1], NULL, 16);
			fn->global = atoi(f[2]);
			fn->helper = atoi(f[3]);
			fn->line = atoi(f[4]);
			fn->dwarf = atoi(f[5]) != 0;
			fn->ifunc = atoi(f[6]) != 0;
			fn->name = xstrdup(f[7]);
			fn->display = xstrdup(f[8]);
			fn->file = *f[9] ? xstrdup(f[9]) : NULL;
			for (al = strtok_r(f[10], " ", &asave); al; al = strtok_r(NULL, " ", &asave))
				add_alias(fn, al);
		} else if (!strcmp(kind, "U")) {
			char *f[4];
			struct usdt *u;
			int i;
			for (i = 0; i < 4; i++)
				f[i] = next_field(&p);
			if (!f[3])
				goto out;
			if (t->nusdts == ucap) {
				ucap = ucap ? ucap * 2 : 16;
				t->usdts = xrealloc(t->usdts, ucap * sizeof(*t->usdts));
			}
			u = &t->usdts[t->nusdts++];
			u->pc = strtoull(f[0], NULL, 16);
			u->sema = strtoull(f[1], NULL, 16);
			u->semaphore = u->sema != 0;
			u->provider = xstrdup(f[2]);
			u->name = xstrdup(f[3]);
		} else {
			goto out;
		}
	}
	ret = first ? -1 : 0;
out:
	free(path);
	strbuf_release(&sb);
	return ret;
}

/* PT_LOAD segments, and whether an ET_DYN file is an executable (PIE).  */
static void read_layout(struct target *t, Elf *elf)
{
	size_t i, n;
	Elf_Scn *scn = NULL;

	if (elf_getphdrnum(elf, &n) == 0) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			t->segs = xrealloc(t->segs, (t->nsegs + 1) * sizeof(*t->segs));
			t->segs[t->nsegs].vaddr = ph.p_vaddr;
			t->segs[t->nsegs].offset = ph.p_offset;
			t->segs[t->nsegs].filesz = ph.p_filesz;
			t->nsegs++;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t k;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (k = 0; data && k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Dyn dyn;
			if (gelf_getdyn(data, (int)k, &dyn) && dyn.d_tag == DT_FLAGS_1 &&
			    (dyn.d_un.d_val & DF_1_PIE))
				t->pie = 1;
		}
	}
}

uint64_t target_file_offset(const struct target *t, uint64_t addr)
{
	size_t i;

	for (i = 0; i < t->nsegs; i++)
		if (addr >= t->segs[i].vaddr && addr < t->segs[i].vaddr + t->segs[i].filesz)
			return addr - t->segs[i].vaddr + t->segs[i].offset;
	return addr;
}

static int cmp_name_ptr(const void *a, const void *b)
{
	const struct func *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* Marks functions whose symbol name another function shares: by name, stap
 * would place both, so only one of them can be probed without DWARF.  */
static void mark_dup_names(struct target *t)
{
	struct func **v;
	size_t i;

	if (t->nfuncs < 2)
		return;
	v = xmalloc(t->nfuncs * sizeof(*v));
	for (i = 0; i < t->nfuncs; i++)
		v[i] = &t->funcs[i];
	qsort(v, t->nfuncs, sizeof(*v), cmp_name_ptr);
	for (i = 1; i < t->nfuncs; i++)
		if (!strcmp(v[i - 1]->name, v[i]->name))
			v[i - 1]->dup_name = v[i]->dup_name = 1;
	free(v);
}

static void clear_lists(struct target *t)
{
	size_t i;

	for (i = 0; i < t->nfuncs; i++)
		free_func(&t->funcs[i]);
	for (i = 0; i < t->nusdts; i++) {
		free(t->usdts[i].provider);
		free(t->usdts[i].name);
	}
	free(t->funcs);
	free(t->usdts);
	t->funcs = NULL;
	t->usdts = NULL;
	t->nfuncs = t->nusdts = 0;
}

/* True when path goes through a process's root (/proc/PID/root/...).  */
static int proc_root_path(const char *path)
{
	const char *p = path + 6;

	if (strncmp(path, "/proc/", 6) || !(*p >= '0' && *p <= '9'))
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return !strncmp(p, "/root/", 6);
}

int target_load(struct target *t, const char *path, const char *cache_dir)
{
	struct stat st;
	Elf *elf = NULL, *dbg = NULL;
	GElf_Ehdr eh;
	struct jmp_defs jd = { .n = 0 };
	int fd = -1, dbg_fd = -1, ret = -1;

	memset(t, 0, sizeof(*t));
	/* /proc/PID/root/...: a file of another mount namespace, which realpath
	 * would take for the same path in perun's own (the root link reads "/") */
	t->path = proc_root_path(path) ? xstrdup(path) : fs_realpath(path);
	if (!t->path) {
		if (errno == ENOENT)
			return pr_error("%s: no such file: check the path given with -c or -b", path);
		return pr_error_errno("%s", path);
	}
	/* a user may own the file: a FIFO or a device must not hang the open */
	fd = fs_open_regular(t->path, 0, 1);
	if (fd < 0) {
		if (errno != EINVAL)
			pr_error_errno("open %s", t->path);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		pr_error_errno("fstat %s", t->path);
		goto out;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		pr_error("%s: not an ELF file: give the compiled binary, not a script or archive",
			 path);
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		pr_error("%s: not an executable or shared library (ELF type %d)", path, eh.e_type);
		goto out;
	}
	t->shared = eh.e_type == ET_DYN;
	t->st_dev = (uint64_t)st.st_dev;
	t->st_ino = (uint64_t)st.st_ino;
	t->st_size = (uint64_t)st.st_size;
	t->mtime_s = (long long)st.st_mtim.tv_sec;
	t->mtime_ns = st.st_mtim.tv_nsec;
	read_layout(t, elf);
	read_notes(t, elf, 0);
	if (cache_dir && t->build_id[0]) {
		if (cache_load(t, cache_dir) == 0) {
			mark_dup_names(t);
			ret = 0;
			goto out;
		}
		clear_lists(t);
		free(t->debug_path);
		t->debug_path = NULL;
		t->syms = TARGET_SYMS_NONE;
		read_notes(t, elf, 1);
	}
	if (read_symbols(t, elf, SHT_SYMTAB, &jd) && t->nfuncs)
		t->syms = TARGET_SYMS_SYMTAB;
	/* separate debuginfo: the symbols of a stripped file, the DWARF of one
	 * built without -g in place */
	if (!t->nfuncs || !has_section(elf, ".debug_info"))
		dbg = open_separate(t, &dbg_fd, t->nfuncs != 0);
	if (!t->nfuncs && dbg && read_symbols(t, dbg, SHT_SYMTAB, &jd) && t->nfuncs)
		t->syms = TARGET_SYMS_DEBUGINFO;
	if (!t->nfuncs && has_section(elf, ".gnu_debugdata") && read_minidebuginfo(t, &jd))
		t->syms = TARGET_SYMS_MINIDEBUGINFO;
	if (!t->nfuncs && read_symbols(t, elf, SHT_DYNSYM, &jd) && t->nfuncs)
		t->syms = TARGET_SYMS_DYNSYM;
	t->has_symtab = t->syms == TARGET_SYMS_SYMTAB || t->syms == TARGET_SYMS_DEBUGINFO ||
			t->syms == TARGET_SYMS_MINIDEBUGINFO;
	/* a static program links longjmp in for libc's own use too: it uses it
	 * when its code calls it */
	if (!t->longjmp && jd.n)
		t->longjmp = calls_any(elf, &jd);
	dedup_funcs(t);
	mark_dup_names(t);
	t->go = has_section(elf, ".go.buildinfo") || has_section(elf, ".gopclntab");
	if (has_section(elf, ".debug_info"))
		t->has_dwarf = read_dwarf(t, elf);
	else if (dbg && has_section(dbg, ".debug_info"))
		t->has_dwarf = read_dwarf(t, dbg);
	if (!t->has_dwarf && t->debug_path && t->syms != TARGET_SYMS_DEBUGINFO) {
		/* found, but of no use: not named as the source */
		free(t->debug_path);
		t->debug_path = NULL;
	}
	if (cache_dir && t->build_id[0] && t->nfuncs && t->syms != TARGET_SYMS_DYNSYM)
		save_analysis(t, cache_dir);
	ret = 0;
out:
	if (dbg)
		elf_end(dbg);
	if (dbg_fd >= 0)
		close(dbg_fd);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		target_release(t);
	return ret;
}

void target_release(struct target *t)
{
	clear_lists(t);
	free(t->segs);
	t->segs = NULL;
	t->nsegs = 0;
	free(t->path);
	t->path = NULL;
	free(t->debug_path);
	t->debug_path = NULL;
}

static int has_alias(const struct func *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->naliases; i++)
		if (!strcmp(f->aliases[i], name))
			return 1;
	return 0;
}

/* The qualified name in a demangled display name, without the return type
 * a template function's display starts with and without the parameter list
 * and qualifiers after it: "long accum<long>(long const*, int)" gives
 * "accum<long>", "ns::C::f(int) const" gives "ns::C::f".  Written to out
 * (size n), where it starts in d to *startp; returns 0, or -1 when it does
 * not fit.  */
static int display_key(const char *d, char *out, size_t n, size_t *startp)
{
	size_t i = 0, start = 0, end;
	int angle = 0;

	for (;;) {
		if (!d[i]) {
			end = i;
			break;
		}
		if (!strncmp(d + i, "(anonymous namespace)", 21)) {
			i += 21;
			continue;
		}
		/* operator names hold (), <, > and spaces of their own */
		if (angle == 0 && !strncmp(d + i, "operator", 8) &&
		    (i == 0 || !(isalnum((unsigned char)d[i - 1]) || d[i - 1] == '_')) &&
		    !(isalnum((unsigned char)d[i + 8]) || d[i + 8] == '_')) {
			i += 8;
			if (d[i] == '(' && d[i + 1] == ')')
				i += 2;
			while (d[i] && d[i] != '(')
				i++;
			continue;
		}
		if (d[i] == '<')
			angle++;
		else if (d[i] == '>' && angle > 0)
			angle--;
		else if (d[i] == '(' && angle == 0) {
			end = i;
			break;
		} else if (d[i] == ' ' && angle == 0)
			start = i + 1;
		i++;
	}
	if (end <= start || end - start >= n)
		return -1;
	*startp = start;
	memcpy(out, d + start, end - start);
	out[end - start] = '\0';
	return 0;
}

/* key without its template arguments: "ns::C<int>::f<long>" gives "ns::C::f".  */
static void strip_templates(char *key)
{
	char *o = key;
	int angle = 0;

	for (const char *p = key; *p; p++) {
		if (*p == '<' && !(p - key >= 8 && !strncmp(p - 8, "operator", 8)))
			angle++;
		else if (*p == '>' && angle > 0)
			angle--;
		else if (angle == 0)
			*o++ = *p;
	}
	*o = '\0';
}

/* Demangled names of the aliases are not kept: an alias matches by its
 * symbol name only.  A name matches, in this order: a function's symbol
 * (mangled) name, display name or alias exactly; its display name without
 * return type and parameter list (every overload of a C++ name, a template
 * instance as "accum<long>"); that without template arguments (every
 * instance of a template, "accum").  */
size_t target_find_funcs(const struct target *t, const char *name, const struct func **out,
			 size_t max)
{
	size_t i, k = 0, n = strlen(name);
	char key[1024];
	int pass;

	for (i = 0; i < t->nfuncs; i++) {
		const struct func *f = &t->funcs[i];
		if (!strcmp(f->name, name) || !strcmp(f->display, name) || has_alias(f, name)) {
			if (k < max)
				out[k] = f;
			k++;
		}
	}
	if (k || n >= sizeof(key))
		return k;
	for (pass = 0; pass < 2 && !k; pass++) {
		/* a name with template arguments names one instance */
		if (pass == 1 && strchr(name, '<'))
			break;
		for (i = 0; i < t->nfuncs; i++) {
			const struct func *f = &t->funcs[i];
			size_t start;
			if (!strchr(f->display, '(') ||
			    display_key(f->display, key, sizeof(key), &start) < 0)
				continue;
			if (pass == 1)
				strip_templates(key);
			/* also: the display without its return type, or up to the
			 * parameter list with it */
			if (!strcmp(key, name) || (pass == 0 && !strcmp(f->display + start, name)) ||
			    (pass == 0 && !strncmp(f->display, name, n) && f->display[n] == '(')) {
				if (k < max)
					out[k] = f;
				k++;
			}
		}
	}
	return k;
}

const struct func *target_find_func(const struct target *t, const char *name)
{
	const struct func *f = NULL;

	return target_find_funcs(t, name, &f, 1) ? f : NULL;
}

const struct func *target_func_at(const struct target *t, uint64_t addr)
{
	return find_addr((struct target *)t, addr);
}

/* Asks the dynamic linker, in a child process so that the library's
 * constructors and resolvers never run in perun: dlopen the library, dlsym
 * the IFUNC (which runs its resolver for this CPU), and report the
 * implementation's address in the file.  0 when it cannot tell.  */
static uint64_t ifunc_by_dlsym(const char *path, const char *name)
{
	int fds[2];
	pid_t pid;
	uint64_t addr = 0;
	int st;

	if (pipe(fds) < 0)
		return 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	if (pid == 0) {
		void *h, *sym;
		struct link_map *lm = NULL;
		uint64_t v = 0;
		close(fds[0]);
		h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
		if (h && (sym = dlsym(h, name)) && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
			v = (uint64_t)(uintptr_t)sym - (uint64_t)lm->l_addr;
		if (write(fds[1], &v, sizeof(v)) != (ssize_t)sizeof(v))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &addr, sizeof(addr)) != (ssize_t)sizeof(addr))
		addr = 0;
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return addr;
}

size_t target_ifunc_targets(const struct target *t, const struct func *ifunc, uint64_t *out,
			    size_t max)
{
	const char *base = ifunc->name + leading_underscores(ifunc->name);
	size_t i, k = 0, bl = strlen(base);

	if (t->shared && !t->pie && max) {
		uint64_t a = ifunc_by_dlsym(t->path, ifunc->name);
		if (a && a != ifunc->addr) {
			out[0] = a;
			return 1;
		}
	}
	for (i = 0; i < t->nfuncs && k < max; i++) {
		const struct func *f = &t->funcs[i];
		const char *nm = f->name + leading_underscores(f->name);
		if (f == ifunc || f->ifunc || strncmp(nm, base, bl) || nm[bl] != '_' || !nm[bl + 1])
			continue;
		out[k++] = f->addr;
	}
	return k;
}

static char *try_dir(const char *dir, const char *name)
{
	char *p = xstrfmt("%s/%s", dir, name);

	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* Lists the binary's DT_NEEDED names and run paths.  */
static void dynamic_info(const char *binary, struct strbuf *needed, struct strbuf *runpath)
{
	int fd = fs_open_regular(binary, 0, 0);
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;
			if (!gelf_getdyn(data, (int)i, &dyn))
				continue;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			strbuf_addstr(dyn.d_tag == DT_NEEDED ? needed : runpath, s);
			strbuf_addch(dyn.d_tag == DT_NEEDED ? needed : runpath, ':');
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

char *target_needed(const char *binary)
{
	struct strbuf needed = STRBUF_INIT, dirs = STRBUF_INIT;
	char *p;

	dynamic_info(binary, &needed, &dirs);
	strbuf_release(&dirs);
	if (!needed.len) {
		strbuf_release(&needed);
		return NULL;
	}
	needed.buf[--needed.len] = '\0';	/* the last ':' */
	for (p = needed.buf; *p; p++)
		if (*p == ':')
			*p = ' ';
	return strbuf_detach(&needed);
}

/* The library name (a DT_NEEDED name, or the start of one) that binary
 * itself loads, where ld.so would find it; caller frees.  */
static char *find_needed(const char *binary, const char *name)
{
	struct strbuf needed = STRBUF_INIT, dirs = STRBUF_INIT;
	char *found = NULL, *bindir, *slash, *save = NULL, *d, *dcopy;
	const char *ldp = getenv("LD_LIBRARY_PATH");
	size_t n = strlen(name);

	bindir = xstrdup(binary);
	slash = strrchr(bindir, '/');
	if (slash)
		*slash = '\0';
	dynamic_info(binary, &needed, &dirs);
	if (ldp)
		strbuf_addf(&dirs, "%s:", ldp);
	strbuf_addstr(&dirs, "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:"
			     "/lib:/usr/lib:/usr/local/lib");
	dcopy = xstrdup(strbuf_str(&dirs));
	for (d = strtok_r(dcopy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *dir = !strncmp(d, "$ORIGIN", 7) ? xstrfmt("%s%s", bindir, d + 7) : xstrdup(d);
		char *nsave = NULL, *ncopy = xstrdup(strbuf_str(&needed)), *nd;
		/* a DT_NEEDED entry that starts with the given name wins */
		for (nd = strtok_r(ncopy, ":", &nsave); nd && !found; nd = strtok_r(NULL, ":", &nsave))
			if (!strncmp(nd, name, n) && (nd[n] == '.' || nd[n] == '\0' || nd[n] == '-'))
				found = try_dir(dir, nd);
		if (!found)
			found = try_dir(dir, name);
		free(ncopy);
		free(dir);
	}
	if (found) {
		char *r = fs_realpath(found);
		free(found);
		found = r;
	}
	free(dcopy);
	free(bindir);
	strbuf_release(&needed);
	strbuf_release(&dirs);
	return found;
}

/* Most libraries the search for a library walks through.  */
#define MAX_LIBS_WALKED 256

char *target_find_library(const char *binary, const char *name)
{
	struct strv libs = STRV_INIT;
	char *found;
	size_t i, j;

	if (strchr(name, '/'))
		return fs_realpath(name);
	found = find_needed(binary, name);
	/* then the libraries those load, breadth first, as ld.so maps them */
	strv_push(&libs, binary);
	for (i = 0; !found && i < libs.n && libs.n < MAX_LIBS_WALKED; i++) {
		struct strbuf needed = STRBUF_INIT, dirs = STRBUF_INIT;
		char *ncopy, *nd, *save = NULL;

		dynamic_info(libs.v[i], &needed, &dirs);
		ncopy = xstrdup(strbuf_str(&needed));
		for (nd = strtok_r(ncopy, ":", &save); nd && !found; nd = strtok_r(NULL, ":", &save)) {
			char *lib = find_needed(libs.v[i], nd);
			if (!lib)
				continue;
			for (j = 0; j < libs.n && strcmp(libs.v[j], lib); j++)
				;
			if (j == libs.n) {
				strv_push(&libs, lib);
				found = find_needed(lib, name);
			}
			free(lib);
		}
		free(ncopy);
		strbuf_release(&needed);
		strbuf_release(&dirs);
	}
	strv_clear(&libs);
	return found;
}

/* True when the line table's source name src is the file a rule names:
 * the same path, or src ending in "/" file.  */
static int same_source(const char *src, const char *file)
{
	size_t ls = strlen(src), lf = strlen(file);

	if (!strcmp(src, file))
		return 1;
	return ls > lf && src[ls - lf - 1] == '/' && !strcmp(src + ls - lf, file);
}

/* Appends to *out (*n of *cap) the address of every row of the DWARF line
 * tables of elf that want() takes.  */
static void each_line_addr(Elf *elf, int (*want)(Dwarf_Line *l, const void *ctx),
			   const void *ctx, uint64_t **out, size_t *n, size_t *cap)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!dw)
		return;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t nl, i;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &nl) == 0)
			for (i = 0; i < nl; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				Dwarf_Addr a;

				if (!l || !want(l, ctx) || dwarf_lineaddr(l, &a))
					continue;
				if (*n == *cap) {
					*cap = *cap ? *cap * 2 : 64;
					*out = xrealloc(*out, *cap * sizeof(**out));
				}
				(*out)[(*n)++] = a;
			}
		off = next;
	}
	dwarf_end(dw);
}

/* The addresses of the rows want() takes, from the target's own line
 * tables, else its separate debug file's; a malloc'd *out; how many.  */
static size_t target_line_rows(const struct target *t, int (*want)(Dwarf_Line *l, const void *ctx),
			       const void *ctx, uint64_t **out)
{
	const char *paths[2] = { t->path, t->debug_path };
	size_t n = 0, cap = 0, i;

	*out = NULL;
	elf_version(EV_CURRENT);
	for (i = 0; i < 2 && !n; i++) {
		int fd = paths[i] ? fs_open_regular(paths[i], 0, 0) : -1;
		Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

		if (elf && has_section(elf, ".debug_line"))
			each_line_addr(elf, want, ctx, out, &n, &cap);
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
	}
	return n;
}

struct line_want {
	const char *file;
	int line;
};

/* A statement's first row of line w->line of a file named w->file.  */
static int want_line(Dwarf_Line *l, const void *ctx)
{
	const struct line_want *w = ctx;
	const char *src;
	bool stmt = false, end = true;
	int no;

	return !dwarf_lineno(l, &no) && no == w->line && !dwarf_linebeginstatement(l, &stmt) &&
	       stmt && !dwarf_lineendsequence(l, &end) && !end &&
	       (src = dwarf_linesrc(l, NULL, NULL)) && same_source(src, w->file);
}

size_t target_line_addrs(const struct target *t, const char *file, int line, uint64_t **out)
{
	struct line_want w = { file, line };
	size_t n = target_line_rows(t, want_line, &w, out), i, j, k;
	/* the first address of the line in each function, as stap places a
	 * statement probe: a line the compiler split runs once per visit */
	for (i = 0, k = 0; i < n; i++) {
		const struct func *f = target_func_containing(t, (*out)[i]);
		for (j = 0; j < k; j++) {
			const struct func *g = target_func_containing(t, (*out)[j]);
			if (f && f == g)
				break;
			if (!f && (*out)[j] == (*out)[i])
				break;
		}
		if (j == k)
			(*out)[k++] = (*out)[i];
		else if ((*out)[i] < (*out)[j])
			(*out)[j] = (*out)[i];
	}
	return k;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* A row that ends a prologue.  */
static int want_prologue_end(Dwarf_Line *l, const void *ctx)
{
	bool pe = false;

	(void)ctx;
	return !dwarf_lineprologueend(l, &pe) && pe;
}

size_t target_prologue_ends(const struct target *t, uint64_t **out)
{
	size_t n = target_line_rows(t, want_prologue_end, NULL, out);

	if (n > 1)
		qsort(*out, n, sizeof(**out), cmp_u64);
	return n;
}

const struct func *target_func_containing(const struct target *t, uint64_t addr)
{
	size_t i;

	for (i = 0; i < t->nfuncs; i++)
		if (!t->funcs[i].ifunc && addr >= t->funcs[i].addr &&
		    addr < t->funcs[i].addr + (t->funcs[i].size ? t->funcs[i].size : 1))
			return &t->funcs[i];
	return NULL;
}
