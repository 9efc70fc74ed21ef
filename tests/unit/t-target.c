/* SPDX-License-Identifier: GPL-3.0-or-later */
/* target/elf on programs built here: where functions come from when a binary
 * is stripped (.symtab, separate debuginfo by build-id or .gnu_debuglink,
 * .dynsym, nothing), the analysis cache keeping that, longjmp detection in
 * static programs, and C++ names as users write them.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "binary/target.h"
#include "util/fs.h"
#include "util/strbuf.h"

static char *dir;

/* Runs a shell command in dir; 0 when it succeeds.  */
static int sh(const char *cmd)
{
	char *full = xstrfmt("cd '%s' && (%s) >/dev/null 2>&1", dir, cmd);
	int r = system(full);

	free(full);
	return r;
}

static char *at(const char *name)
{
	return xstrfmt("%s/%s", dir, name);
}

static const char prog[] =
	"#include <stdio.h>\n"
	"static __attribute__((noinline)) int step(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) int work(int n) { int s = 0; for (int i = 0; i < n; i++) "
	"s += step(i); return s; }\n"
	"int main(int argc, char **argv) { (void)argv; return work(argc) == 0; }\n";

static int has(const struct target *t, const char *name)
{
	return target_find_func(t, name) != NULL;
}

static char *build_id_path(const char *root, const char *id)
{
	return xstrfmt("%s/.build-id/%.2s/%s.debug", root, id, id + 2);
}

static void test_sources(void)
{
	struct target t;
	char *p, *dbgroot = at("dbg"), *want, *cache = at("cache");

	/* not stripped: its own .symtab and DWARF */
	p = at("full");
	ok(target_load(&t, p, NULL) == 0, "a -g program loads");
	ok(t.syms == TARGET_SYMS_SYMTAB && t.has_symtab && t.has_dwarf && !t.debug_path,
	   "functions from its .symtab, DWARF in place");
	ok(has(&t, "step") && has(&t, "work") && has(&t, "main"), "static and global functions");
	is_str(target_syms_name(&t), ".symtab", "named .symtab");
	target_release(&t);
	free(p);

	/* stripped, no debuginfo anywhere, no exports: loads, names nothing */
	p = at("bare");
	ok(target_load(&t, p, NULL) == 0, "a stripped program still loads");
	ok(t.syms == TARGET_SYMS_NONE && t.nfuncs == 0 && !t.has_symtab && !t.has_dwarf,
	   "with no functions: its libraries can still be traced");
	target_release(&t);
	free(p);

	/* stripped, -rdynamic: what it exports */
	p = at("exports");
	ok(target_load(&t, p, NULL) == 0 && t.syms == TARGET_SYMS_DYNSYM,
	   "an exporting stripped program: functions from .dynsym");
	ok(has(&t, "work") && has(&t, "main") && !has(&t, "step"),
	   "its exports, not its static function");
	target_release(&t);
	free(p);

	/* stripped, debuginfo by build-id under a debuginfo directory */
	p = at("byid");
	setenv("SYSTEMTAP_DEBUGINFO_PATH", dbgroot, 1);
	ok(target_load(&t, p, NULL) == 0 && t.syms == TARGET_SYMS_DEBUGINFO,
	   "debuginfo found by build-id under SYSTEMTAP_DEBUGINFO_PATH");
	want = build_id_path(dbgroot, t.build_id);
	is_str(t.debug_path, want, "and named");
	ok(t.has_symtab && t.has_dwarf && has(&t, "step") && has(&t, "work"),
	   "its .symtab and DWARF: the static function too");
	ok(target_find_func(&t, "step") && target_find_func(&t, "step")->dwarf,
	   "placed by DWARF address");
	target_release(&t);

	/* the analysis cache keeps the source, and notices when it is gone */
	ok(target_load(&t, p, cache) == 0 && t.syms == TARGET_SYMS_DEBUGINFO,
	   "first load with a cache");
	target_release(&t);
	ok(target_load(&t, p, cache) == 0 && t.syms == TARGET_SYMS_DEBUGINFO && t.debug_path &&
		   !strcmp(t.debug_path, want) && has(&t, "step"),
	   "from the cache: the same source, file and functions");
	target_release(&t);
	unsetenv("SYSTEMTAP_DEBUGINFO_PATH");
	ok(target_load(&t, p, cache) == 0 && t.syms == TARGET_SYMS_NONE && !t.debug_path,
	   "a cached debuginfo no longer found is not used");
	target_release(&t);
	free(want);
	free(p);

	/* stripped, no build-id, a .gnu_debuglink to a file beside it */
	p = at("linked");
	ok(target_load(&t, p, NULL) == 0 && t.syms == TARGET_SYMS_DEBUGINFO && !t.build_id[0],
	   "debuginfo found by .gnu_debuglink (no build-id)");
	want = at("linked.dbg");
	is_str(t.debug_path, want, "the file the link names");
	ok(has(&t, "step") && t.has_dwarf, "with its functions and DWARF");
	target_release(&t);
	free(want);
	free(p);

	/* debuginfo without DWARF (built without -g): still the symbols */
	p = at("nog");
	setenv("SYSTEMTAP_DEBUGINFO_PATH", dbgroot, 1);
	ok(target_load(&t, p, NULL) == 0 && t.syms == TARGET_SYMS_DEBUGINFO && !t.has_dwarf &&
		   has(&t, "step"),
	   "a debuginfo file with only a .symtab gives the functions, placed by symbol");
	unsetenv("SYSTEMTAP_DEBUGINFO_PATH");
	target_release(&t);
	free(p);
	free(dbgroot);
	free(cache);
}

/* The commands Fedora's find-debuginfo runs to give a stripped binary a
 * MiniDebugInfo: the local function symbols, xz-compressed, in
 * .gnu_debugdata.  */
#define MINIDEBUGINFO(bin)                                                                       \
	"nm " bin " --format=posix --defined-only | awk '$2 == \"T\" || $2 == \"t\" "          \
	"{ print $1 }' | sort >" bin ".funcs && "                                                \
	"nm -D " bin " --format=posix --defined-only | awk '{ print $1 }' | sort >" bin ".dyn && " \
	"comm -13 " bin ".dyn " bin ".funcs >" bin ".keep && "                                   \
	"objcopy --only-keep-debug " bin " " bin ".full && "                                     \
	"objcopy -S --remove-section .comment --keep-symbols=" bin ".keep " bin ".full " bin     \
	".mini && xz -f " bin ".mini && strip --strip-all " bin " && "                           \
	"objcopy --add-section .gnu_debugdata=" bin ".mini.xz " bin

static void test_minidebuginfo(void)
{
	struct target t;
	char *p = at("mini");

	if (sh("cc -g -O1 -o mini p.c && " MINIDEBUGINFO("mini")) != 0) {
		printf("# no xz: MiniDebugInfo not checked\n");
		free(p);
		return;
	}
	ok(target_load(&t, p, NULL) == 0 && t.syms == TARGET_SYMS_MINIDEBUGINFO && t.has_symtab,
	   "a stripped binary with MiniDebugInfo: functions from .gnu_debugdata");
	ok(has(&t, "step") && has(&t, "work") && has(&t, "main") && !t.has_dwarf,
	   "its local functions too, placed by symbol (no DWARF)");
	ok(target_find_func(&t, "step") && !target_find_func(&t, "step")->global &&
		   target_find_func(&t, "work")->global,
	   "local and global as they were");
	target_release(&t);
	free(p);
}

static void test_longjmp(void)
{
	struct target t;
	char *p;

	p = at("static-threads");
	ok(target_load(&t, p, NULL) == 0 && !t.longjmp,
	   "a static threaded program links longjmp in but never calls it: no longjmp mark");
	target_release(&t);
	free(p);
	p = at("static-jumps");
	ok(target_load(&t, p, NULL) == 0 && t.longjmp, "a static program that calls longjmp");
	target_release(&t);
	free(p);
	p = at("dyn-jumps");
	ok(target_load(&t, p, NULL) == 0 && t.longjmp, "a dynamic one that imports it");
	target_release(&t);
	free(p);
}

static void test_cxx_names(void)
{
	struct target t;
	const struct func *f[8];
	char *p = at("tpl");

	ok(target_load(&t, p, NULL) == 0, "a C++ program with templates");
	ok(target_find_funcs(&t, "accum<long>", f, 8) == 1 &&
		   !strcmp(f[0]->display, "long accum<long>(long const*, int)"),
	   "accum<long>: the instance, without return type and parameters");
	ok(target_find_funcs(&t, "accum<long>(long const*, int)", f, 8) == 1,
	   "with its parameters, without its return type");
	ok(target_find_funcs(&t, "long accum<long>(long const*, int)", f, 8) == 1,
	   "the whole demangled name");
	ok(target_find_funcs(&t, "_Z5accumIlET_PKS0_i", f, 8) == 1 &&
		   !strcmp(f[0]->display, "long accum<long>(long const*, int)"),
	   "the mangled name");
	is_int(target_find_funcs(&t, "accum", f, 8), 2, "accum: every instance");
	is_int(target_find_funcs(&t, "accum<char>", f, 8), 0, "no such instance");
	is_int(target_find_funcs(&t, "S::get", f, 8), 2, "a method: every overload");
	is_int(target_find_funcs(&t, "S::operator()", f, 8), 1, "operator()");
	is_int(target_find_funcs(&t, "S::operator<", f, 8), 1, "operator<");
	target_release(&t);
	free(p);
}

static int write_file(const char *name, const char *text)
{
	char *p = at(name);
	FILE *f = fopen(p, "w");
	int r = f && fputs(text, f) >= 0 ? 0 : -1;

	if (f && fclose(f) != 0)
		r = -1;
	free(p);
	return r;
}

static const char templates[] =
	"template <typename T> __attribute__((noinline)) T accum(const T *v, int n)\n"
	"{ T s = 0; for (int i = 0; i < n; i++) s += v[i]; return s; }\n"
	"struct S { int v;\n"
	" __attribute__((noinline)) int get(int a) const { return v + a; }\n"
	" __attribute__((noinline)) long get(long a) const { return v + a; }\n"
	" __attribute__((noinline)) int operator()(int a) const { return v * a; }\n"
	" __attribute__((noinline)) bool operator<(const S &o) const { return v < o.v; } };\n"
	"int main() { long l[2] = { 1, 2 }; int i[2] = { 3, 4 }; S a{1}, b{2};\n"
	" return (int)accum(l, 2) + accum(i, 2) + a.get(1) + (int)a.get(2L) + a(3) + (a < b); }\n";

static const char jumps[] = "#include <setjmp.h>\n#include <stdio.h>\njmp_buf b;\n"
			    "__attribute__((noinline)) void f(void) { longjmp(b, 1); }\n"
			    "int main(void) { if (!setjmp(b)) f(); puts(\"x\"); return 0; }\n";

static const char threads[] = "#include <pthread.h>\nstatic void *t(void *a) { return a; }\n"
			      "int main(void) { pthread_t x; pthread_create(&x, 0, t, 0); "
			      "return pthread_join(x, 0); }\n";

int main(void)
{
	char tmpl[] = "/tmp/perun-t-target.XXXXXX";

	if (!mkdtemp(tmpl)) {
		printf("1..0 # SKIP mkdtemp failed\n");
		return 0;
	}
	dir = tmpl;
	if (write_file("p.c", prog) < 0 || write_file("t.cc", templates) < 0 ||
	    write_file("j.c", jumps) < 0 || write_file("th.c", threads) < 0) {
		printf("Bail out! cannot write the fixtures in %s\n", dir);
		return 1;
	}
	if (sh("cc -g -O1 -o full p.c && cp full bare && strip --strip-all bare && "
	       "cc -g -O1 -rdynamic -o exports p.c && strip --strip-all exports && "
	       "cc -g -O1 -o byid p.c && objcopy --only-keep-debug byid byid.dbg && "
	       "strip --strip-all byid && "
	       "id=$(readelf -n byid | sed -n 's/^ *Build ID: //p') && "
	       "mkdir -p dbg/.build-id/$(echo $id | cut -c1-2) && "
	       "mv byid.dbg dbg/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug && "
	       "cc -g -O1 -Wl,--build-id=none -o linked p.c && "
	       "objcopy --only-keep-debug linked linked.dbg && strip --strip-all linked && "
	       "objcopy --add-gnu-debuglink=linked.dbg linked && "
	       "cc -O1 -o nog p.c && objcopy --only-keep-debug nog nog.dbg && "
	       "strip --strip-all nog && "
	       "id=$(readelf -n nog | sed -n 's/^ *Build ID: //p') && "
	       "mkdir -p dbg/.build-id/$(echo $id | cut -c1-2) && "
	       "mv nog.dbg dbg/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug && "
	       "c++ -g -O1 -o tpl t.cc && cc -O1 -o dyn-jumps j.c") != 0) {
		printf("1..0 # SKIP no C/C++ toolchain (cc, c++, objcopy, strip, readelf)\n");
		fs_remove_tree(dir);
		return 0;
	}
	unsetenv("SYSTEMTAP_DEBUGINFO_PATH");
	unsetenv("DEBUGINFOD_URLS");
	test_sources();
	test_minidebuginfo();
	test_cxx_names();
	if (sh("cc -O1 -static -pthread -o static-threads th.c && "
	       "cc -O1 -static -o static-jumps j.c") == 0)
		test_longjmp();
	else
		printf("# no static libc: longjmp in static programs not checked\n");
	fs_remove_tree(dir);
	return tap_done();
}
