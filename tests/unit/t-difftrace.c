/* SPDX-License-Identifier: GPL-3.0-or-later */
/* optimize/difftrace: renames and new functions on hand-made call graphs;
 * then a git repository with two versions of a C file, both built: the
 * function whose code changed is found (in the modes that see its change),
 * an untouched one is not, a renamed one is matched and not changed.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "optimize/difftrace.h"
#include "tap.h"
#include "binary/callgraph.h"
#include "binary/target.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

#define E(a, b) { a, b, 1, CG_E_INSN, 0 }

static int node(const struct callgraph *cg, const char *name)
{
	return callgraph_find(cg, name);
}

static void test_graphs(void)
{
	/* base: main -> parse, compute, gone; parse -> lex; compute -> old_helper -> lex
	 * cur:  main -> parse, compute, fresh; parse -> lex; compute -> new_helper -> lex;
	 *       fresh -> lex, parse */
	static const char *const bn[] = { "main", "parse", "compute", "lex", "old_helper", "gone" };
	static const struct cg_edge be[] = { E(0, 1), E(0, 2), E(0, 5), E(1, 3), E(2, 4), E(4, 3) };
	static const char *const cn[] = { "main", "parse", "compute", "lex", "new_helper", "fresh" };
	static const struct cg_edge ce[] = { E(0, 1), E(0, 2), E(0, 5), E(1, 3),
					     E(2, 4), E(4, 3), E(5, 3), E(5, 1) };
	struct callgraph base, cur;
	struct difftrace d;
	char name[64];

	callgraph_from_edges(&base, bn, 6, be, 6, 0);
	callgraph_from_edges(&cur, cn, 6, ce, 8, 0);

	difftrace_init(&d, &cur, &base);
	difftrace_compare_cg(&d, 0);
	is_int(d.nnew, 1, "one new function");
	ok(d.why[node(&cur, "fresh")] & DT_NEW, "fresh is new: its neighbours match no removed one");
	is_int(d.nrenamed, 1, "one rename");
	ok(d.why[node(&cur, "new_helper")] & DT_RENAMED, "new_helper is a rename");
	is_int(d.old_of[node(&cur, "new_helper")], node(&base, "old_helper"),
	       "of old_helper: the same caller and callee");
	is_int(d.nremoved, 1, "gone is removed");
	is_int(d.old_of[node(&cur, "parse")], node(&base, "parse"), "same names map");
	ok(!(d.why[node(&cur, "main")] & DT_CALLEES), "no callee check without inspect_all");
	/* a diff names lex: with no CFG to compare, a candidate counts as changed */
	d.why[node(&cur, "lex")] |= DT_SOURCE;
	difftrace_compare_cfg(&d, DT_CFG_SEMISTRICT);
	difftrace_finish(&d, 0);
	ok(d.why[node(&cur, "fresh")] & DT_CHANGED, "a new function is changed");
	ok(d.why[node(&cur, "new_helper")] & DT_CHANGED, "a rename without CFGs is changed");
	ok(d.why[node(&cur, "lex")] & DT_CHANGED, "lex changed");
	ok(!difftrace_protects(&d, "lex"), "lex is a leaf: not protected without keep_leaf");
	ok(difftrace_protects(&d, "fresh") && difftrace_protects(&d, "new_helper"),
	   "the changed non-leaves are protected");
	ok(!(d.why[node(&cur, "parse")] & DT_CHANGED) && !difftrace_protects(&d, "parse"),
	   "parse did not change");
	ok(!(d.why[node(&cur, "main")] & DT_CHANGED), "main did not change without inspect_all");
	difftrace_finish(&d, 1);
	ok(difftrace_protects(&d, "lex"), "keep_leaf protects the changed leaf");
	difftrace_release(&d);

	difftrace_init(&d, &cur, &base);
	difftrace_compare_cg(&d, 1);
	ok(d.why[node(&cur, "main")] & DT_CALLEES, "inspect_all: main calls fresh, not gone");
	ok(!(d.why[node(&cur, "compute")] & DT_CALLEES),
	   "compute calls the renamed helper: no difference");
	difftrace_release(&d);

	ok(difftrace_header_name("@@ -3,2 +3,3 @@ static int f(int x)", 33, name, sizeof(name)) ==
			   0 &&
		   !strcmp(name, "f"),
	   "hunk header context names f");
	ok(difftrace_header_name("@@ -3 +3 @@", 11, name, sizeof(name)) < 0,
	   "no context, no name");
	ok(difftrace_header_name("@@ -3 +3 @@ if (x) g(y)", 23, name, sizeof(name)) == 0 &&
		   !strcmp(name, "g"),
	   "keywords are skipped");
	ok(difftrace_definition_name("unsigned long *make_list(int n)\n", 32, name, sizeof(name)) ==
			   0 &&
		   !strcmp(name, "make_list"),
	   "a definition line names its function");
	ok(difftrace_definition_name("\treturn g(x);\n", 14, name, sizeof(name)) < 0,
	   "a statement is no definition");
	callgraph_release(&base);
	callgraph_release(&cur);
}

/* Version 1 and 2 of the fixture: changed() gains an operation, tweaked()
 * only a constant, old_name() becomes new_name(), untouched() stays.  */
static const char *const v1 =
	"#include <stdio.h>\n"
	"#define NI __attribute__((noinline, noclone))\n"
	"NI int untouched(int x)\n{\n\tint s = 0;\n\tfor (int i = 0; i < x; i++)\n"
	"\t\ts += i * 3;\n\treturn s;\n}\n\n"
	"NI int changed(int x)\n{\n\tint s = 1;\n\tfor (int i = 0; i < x; i++)\n"
	"\t\ts = s * 3 + i;\n\treturn s;\n}\n\n"
	"NI int tweaked(int x)\n{\n\treturn x * 10 + 1;\n}\n\n"
	"NI int old_name(int x)\n{\n\treturn untouched(x) + changed(x) * 7 + tweaked(x);\n}\n\n"
	"int main(int argc, char **argv)\n{\n\t(void)argv;\n"
	"\tprintf(\"%d\\n\", old_name(argc));\n\treturn 0;\n}\n";
static const char *const v2 =
	"#include <stdio.h>\n"
	"#define NI __attribute__((noinline, noclone))\n"
	"NI int untouched(int x)\n{\n\tint s = 0;\n\tfor (int i = 0; i < x; i++)\n"
	"\t\ts += i * 3;\n\treturn s;\n}\n\n"
	"NI int changed(int x)\n{\n\tint s = 1;\n\tfor (int i = 0; i < x; i++)\n"
	"\t\ts = (s * 3 + i) ^ x;\n\treturn s;\n}\n\n"
	"NI int tweaked(int x)\n{\n\treturn x * 12 + 1;\n}\n\n"
	"NI int new_name(int x)\n{\n\treturn untouched(x) + changed(x) * 7 + tweaked(x);\n}\n\n"
	"int main(int argc, char **argv)\n{\n\t(void)argv;\n"
	"\tprintf(\"%d\\n\", new_name(argc));\n\treturn 0;\n}\n";

static int run(const char *cmd_in_dir, const char *dir)
{
	char *cmd = xstrfmt("cd %s && %s", dir, cmd_in_dir);
	int r = system(cmd);

	free(cmd);
	return r;
}

static int commit_version(const char *dir, const char *text, const char *bin)
{
	char *src = xstrfmt("%s/app.c", dir);
	FILE *f = fopen(src, "w");
	char *cc, *commit;
	int r;

	free(src);
	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	cc = xstrfmt("cc -O1 -g -fno-inline -o %s app.c", bin);
	commit = xstrfmt("git add app.c && git -c user.name=t -c user.email=t@example.com "
			       "commit -qm %s",
			       bin);
	r = run(cc, dir) != 0 || run(commit, dir) != 0 ? -1 : 0;

	free(cc);
	free(commit);
	return r;
}

struct version {
	struct target t;
	struct callgraph cg;
};

static int load(struct version *v, const char *dir, const char *bin)
{
	char *p = xstrfmt("%s/%s", dir, bin);
	int r = target_load(&v->t, p, NULL);

	free(p);
	return r < 0 ? -1 : callgraph_load(&v->cg, &v->t, NULL, 0);
}

static uint8_t why(const struct version *cur, const struct difftrace *d, const char *name)
{
	int i = node(&cur->cg, name);

	return i < 0 ? 0xff : d->why[i];
}

static void test_repository(void)
{
	char *dir = fs_mkdtemp("perun-t-difftrace");
	char old[41], head[41];
	struct version a, b;
	struct difftrace d;
	int modes[] = { DT_CFG_SOFT, DT_CFG_SEMISTRICT, DT_CFG_STRICT }, m;

	if (run("git init -q .", dir) != 0 || commit_version(dir, v1, "v1") < 0 ||
	    commit_version(dir, v2, "v2") < 0) {
		ok(0, "the test repository (git, cc) could be made");
		return;
	}
	ok(vcs_massage(dir, "HEAD~1", old) == 0 && vcs_head(dir, head) == 0, "two versions");
	ok(load(&a, dir, "v1") == 0 && load(&b, dir, "v2") == 0, "both builds load");

	for (m = 0; m < 3; m++) {
		difftrace_init(&d, &b.cg, &a.cg);
		difftrace_compare_cg(&d, 1);
		ok(difftrace_vcs(&d, dir, old, head) == 0, "the git diff of HEAD~1..HEAD");
		difftrace_compare_cfg(&d, (enum dt_cfg_mode)modes[m]);
		difftrace_finish(&d, 1);
		ok(why(&b, &d, "changed") & DT_SOURCE, "the diff names changed");
		ok(why(&b, &d, "changed") & DT_CHANGED, "mode %d: changed() is found", m);
		ok(!(why(&b, &d, "untouched") & DT_CHANGED), "mode %d: untouched() is not", m);
		ok(why(&b, &d, "new_name") & DT_RENAMED, "mode %d: new_name() is a rename", m);
		is_int(d.old_of[node(&b.cg, "new_name")], node(&a.cg, "old_name"),
		       "mode %d: of old_name()", m);
		ok(!(why(&b, &d, "new_name") & DT_CHANGED),
		   "mode %d: the rename's code is the same", m);
		ok(!(why(&b, &d, "main") & DT_CHANGED), "mode %d: main only calls the new name", m);
		if (modes[m] == DT_CFG_STRICT)
			ok(why(&b, &d, "tweaked") & DT_CHANGED, "strict: a changed constant counts");
		else
			ok(!(why(&b, &d, "tweaked") & DT_CHANGED),
			   "mode %d: a changed constant does not count", m);
		ok(difftrace_protects(&d, "changed"), "changed() is protected (keep_leaf)");
		difftrace_release(&d);
	}

	/* against the work tree: nothing changed since HEAD */
	difftrace_init(&d, &b.cg, &b.cg);
	difftrace_compare_cg(&d, 1);
	ok(difftrace_vcs(&d, dir, head, NULL) == 0 && d.nsource == 0,
	   "a clean work tree names nothing");
	difftrace_compare_cfg(&d, DT_CFG_STRICT);
	difftrace_finish(&d, 1);
	is_int(d.nchanged, 0, "a version against itself: nothing changed");
	difftrace_release(&d);

	callgraph_release(&a.cg);
	callgraph_release(&b.cg);
	target_release(&a.t);
	target_release(&b.t);
	fs_remove_tree(dir);
	free(dir);
}

int main(void)
{
	test_graphs();
	test_repository();
	return tap_done();
}
