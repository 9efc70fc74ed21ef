/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun callgraph's output: text, JSON and dot.  */
#include "config.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/target.h"
#include "report/callgraph-output.h"

static const char *edge_flags(uint8_t fl, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", fl & CG_E_DWARF ? "dwarf," : "", fl & CG_E_INSN ? "insn," : "",
		 fl & CG_E_TAIL ? "tail," : "", fl & CG_E_PLT ? "plt," : "");
	if (*buf)
		buf[strlen(buf) - 1] = '\0';
	return buf;
}

static json_object *json_hex(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_object_new_string(buf);
}

static json_object *json_edge(const struct callgraph *cg, const struct cg_edge *e, int callee)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name",
			       json_object_new_string(cg->nodes[callee ? e->to : e->from].name));
	json_object_object_add(o, "sites", json_object_new_int64(e->sites));
	json_object_object_add(o, "loop_depth", json_object_new_int(e->loop_depth));
	json_object_object_add(o, "dwarf", json_object_new_boolean(e->flags & CG_E_DWARF));
	json_object_object_add(o, "insn", json_object_new_boolean(e->flags & CG_E_INSN));
	json_object_object_add(o, "tail", json_object_new_boolean(e->flags & CG_E_TAIL));
	json_object_object_add(o, "plt", json_object_new_boolean(e->flags & CG_E_PLT));
	return o;
}

static json_object *json_node(const struct callgraph *cg, uint32_t i)
{
	const struct cg_node *n = &cg->nodes[i];
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	const struct cg_edge *e;
	size_t k, ne;

	json_object_object_add(o, "name", json_object_new_string(n->name));
	if (n->func && strcmp(n->func->display, n->name))
		json_object_object_add(o, "display", json_object_new_string(n->func->display));
	json_object_object_add(o, "addr", json_hex(n->addr));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)n->size));
	json_object_object_add(o, "import", json_object_new_boolean(n->import));
	json_object_object_add(o, "reachable", json_object_new_boolean(n->reachable));
	json_object_object_add(o, "level", json_object_new_int(n->level));
	json_object_object_add(o, "leaf", json_object_new_boolean(n->leaf));
	json_object_object_add(o, "recursive", json_object_new_boolean(n->recursive));
	json_object_object_add(o, "reach", json_object_new_int64(n->reach));
	json_object_object_add(o, "blocks", json_object_new_int64(n->nblocks));
	json_object_object_add(o, "insns", json_object_new_int64(n->ninsns));
	json_object_object_add(o, "loops", json_object_new_int64(n->nloops));
	json_object_object_add(o, "loop_depth", json_object_new_int(n->loop_depth));
	json_object_object_add(o, "calls_in_loops", json_object_new_int64(n->calls_in_loops));
	json_object_object_add(o, "indirect_calls", json_object_new_int64(n->indirect_calls));
	json_object_object_add(o, "unresolved_calls", json_object_new_int64(n->unresolved_calls));
	json_object_object_add(o, "complexity",
			       json_object_new_string(cfg_complexity_name(n->complexity)));
	e = callgraph_callees(cg, i, &ne);
	for (k = 0; k < ne; k++)
		json_object_array_add(a, json_edge(cg, &e[k], 1));
	json_object_object_add(o, "callees", a);
	return o;
}

static json_object *json_names(const struct callgraph *cg, const uint32_t *v, size_t n)
{
	json_object *a = json_object_new_array();
	size_t k;

	for (k = 0; k < n; k++)
		json_object_array_add(a, json_object_new_string(cg->nodes[v[k]].name));
	return a;
}

static void json_summary(const struct callgraph *cg, json_object *o)
{
	const struct target *t = cg->target;

	json_object_object_add(o, "binary", json_object_new_string(t->path));
	json_object_object_add(o, "build_id", json_object_new_string(t->build_id));
	json_object_object_add(o, "root", cg->root >= 0 ? json_object_new_string(
								  cg->nodes[cg->root].name)
							: NULL);
	json_object_object_add(o, "depth", json_object_new_int(cg->depth));
	json_object_object_add(o, "functions", json_object_new_int64(cg->nfuncs));
	json_object_object_add(o, "imports", json_object_new_int64(cg->nnodes - cg->nfuncs));
	json_object_object_add(o, "reachable", json_object_new_int64(cg->nreachable));
	json_object_object_add(o, "edges", json_object_new_int64(cg->nedges));
	json_object_object_add(o, "dwarf_sites", json_object_new_int64(cg->dwarf_sites));
	json_object_object_add(o, "insn_sites", json_object_new_int64(cg->insn_sites));
	json_object_object_add(o, "dwarf_disagree", json_object_new_int64(cg->dwarf_disagree));
	json_object_object_add(o, "has_dwarf", json_object_new_boolean(cg->has_dwarf));
	json_object_object_add(o, "from_cache", json_object_new_boolean(cg->from_cache));
}

struct insn_out {
	FILE *f;
	json_object *arr;
	const struct callgraph *cg;
	uint32_t node;
};

/* Prints one instruction, with the block boundary and loop depth before a
 * block's first one.  */
static int print_insn(const struct cfg_insn *in, void *arg)
{
	struct insn_out *o = arg;
	size_t nb, k;
	const struct cfg_block *b = callgraph_blocks(o->cg, o->node, &nb);

	if (o->arr) {
		json_object *j = json_object_new_object();
		char buf[256];
		snprintf(buf, sizeof(buf), "%s %s", in->mnemonic, in->operands);
		json_object_object_add(j, "addr", json_hex(in->addr));
		json_object_object_add(j, "text", json_object_new_string(buf));
		json_object_array_add(o->arr, j);
		return 0;
	}
	for (k = 0; k < nb; k++)
		if (b[k].addr == in->addr && b[k].size)
			fprintf(o->f, "  block %zu  loop depth %u%s\n", k, b[k].loop_depth,
				b[k].flags & CFG_B_HEADER ? "  (loop header)" : "");
	fprintf(o->f, "    %llx  %s %s\n", (unsigned long long)in->addr, in->mnemonic,
		in->operands);
	return 0;
}

static json_object *json_cfg(const struct callgraph *cg, uint32_t i)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t nb, k, s;
	const struct cfg_block *b = callgraph_blocks(cg, i, &nb);
	struct insn_out io = { NULL, json_object_new_array(), cg, i };

	for (k = 0; k < nb; k++) {
		json_object *j = json_object_new_object(), *succ = json_object_new_array();
		json_object_object_add(j, "addr", json_hex(b[k].addr));
		json_object_object_add(j, "size", json_object_new_int64(b[k].size));
		json_object_object_add(j, "insns", json_object_new_int64(b[k].ninsns));
		json_object_object_add(j, "calls", json_object_new_int64(b[k].ncalls));
		json_object_object_add(j, "loop_depth", json_object_new_int(b[k].loop_depth));
		json_object_object_add(j, "loop_header",
				       json_object_new_boolean(b[k].flags & CFG_B_HEADER));
		json_object_object_add(j, "dispatch",
				       json_object_new_boolean(b[k].flags & CFG_B_DISPATCH));
		for (s = 0; s < b[k].nsucc; s++)
			json_object_array_add(succ, json_object_new_int64(cg->succ[b[k].succ + s]));
		json_object_object_add(j, "succ", succ);
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "blocks", a);
	callgraph_function_insns(cg, i, print_insn, &io);
	json_object_object_add(o, "instructions", io.arr);
	return o;
}

static void show_function_json(const struct callgraph *cg, uint32_t i)
{
	json_object *o = json_node(cg, i), *callers = json_object_new_array();
	const uint32_t *in;
	uint32_t *reach;
	size_t n, k;

	in = callgraph_callers(cg, i, &n);
	for (k = 0; k < n; k++)
		json_object_array_add(callers, json_edge(cg, &cg->edges[in[k]], 0));
	json_object_object_add(o, "callers", callers);
	n = callgraph_reachable(cg, i, &reach);
	json_object_object_add(o, "reachable_set", json_names(cg, reach, n));
	free(reach);
	json_object_object_add(o, "cfg", json_cfg(cg, i));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return;
}

static void show_json(const struct callgraph *cg)
{
	json_object *o = json_object_new_object(), *levels = json_object_new_array(),
		    *funcs = json_object_new_array();
	uint32_t i;
	int l;

	json_summary(cg, o);
	for (l = 0; l <= cg->depth; l++) {
		size_t n;
		const uint32_t *v = callgraph_level(cg, l, &n);
		json_object_array_add(levels, json_names(cg, v, n));
	}
	json_object_object_add(o, "levels", levels);
	json_object_object_add(o, "leaves", json_names(cg, cg->leaves, cg->nleaves));
	for (i = 0; i < cg->nnodes; i++)
		json_object_array_add(funcs, json_node(cg, i));
	json_object_object_add(o, "nodes", funcs);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return;
}

static void print_edges(const struct callgraph *cg, const char *what, const struct cg_edge *e,
			int callee)
{
	char fl[64];

	printf("  %s %-30s sites %u, loop depth %u (%s)\n", what,
	       cg->nodes[callee ? e->to : e->from].name, e->sites, e->loop_depth,
	       edge_flags(e->flags, fl, sizeof(fl)));
}

static void print_node_line(const struct cg_node *n)
{
	printf("%s: %s%s%s, level %d, reaches %u; %u blocks, %u loops, loop depth %u, %s; "
	       "%u calls in loops, %u indirect calls\n",
	       n->name, n->import ? "import" : "function", n->leaf ? ", leaf" : "",
	       n->recursive ? ", recursive" : "", n->level, n->reach, n->nblocks, n->nloops,
	       n->loop_depth, cfg_complexity_name(n->complexity), n->calls_in_loops,
	       n->indirect_calls);
}

static void show_function_text(const struct callgraph *cg, uint32_t i)
{
	const struct cg_node *n = &cg->nodes[i];
	const struct cg_edge *e;
	const uint32_t *in;
	uint32_t *reach;
	size_t ne, k;
	struct insn_out io = { stdout, NULL, cg, i };

	print_node_line(n);
	in = callgraph_callers(cg, i, &ne);
	for (k = 0; k < ne; k++)
		print_edges(cg, "caller", &cg->edges[in[k]], 0);
	e = callgraph_callees(cg, i, &ne);
	for (k = 0; k < ne; k++)
		print_edges(cg, "callee", &e[k], 1);
	ne = callgraph_reachable(cg, i, &reach);
	printf("  reaches:");
	for (k = 0; k < ne; k++)
		printf(" %s", cg->nodes[reach[k]].name);
	printf("\n");
	free(reach);
	if (!n->import)
		callgraph_function_insns(cg, i, print_insn, &io);
	return;
}

static void show_text(const struct callgraph *cg)
{
	int l;
	size_t k, ne;

	printf("binary:    %s\nbuild-id:  %s\n", cg->target->path,
	       cg->target->build_id[0] ? cg->target->build_id : "(none)");
	printf("root:      %s\ndepth:     %d\n", cg->root >= 0 ? cg->nodes[cg->root].name : "(none)",
	       cg->depth);
	printf("nodes:     %u functions, %u imports; %u reachable, %u leaves\n", cg->nfuncs,
	       cg->nnodes - cg->nfuncs, cg->nreachable, cg->nleaves);
	printf("edges:     %u (%u call sites from DWARF%s, %u from instructions)\n", cg->nedges,
	       cg->dwarf_sites, cg->has_dwarf ? "" : ": none read", cg->insn_sites);
	printf("cache:     %s\n\n", cg->from_cache ? "hit" : "built");
	printf("level  function -> callees\n");
	for (l = 0; l <= cg->depth; l++) {
		size_t n;
		const uint32_t *v = callgraph_level(cg, l, &n);
		for (k = 0; k < n; k++) {
			const struct cg_edge *e = callgraph_callees(cg, v[k], &ne);
			size_t j;
			printf("%5d  %s%s ->", l, cg->nodes[v[k]].name,
			       cg->nodes[v[k]].import ? " (import)" : "");
			for (j = 0; j < ne; j++)
				printf(" %s", cg->nodes[e[j].to].name);
			printf("\n");
		}
	}
	if (cg->root < 0) {	/* a library: every function that calls something */
		uint32_t i;
		for (i = 0; i < cg->nnodes; i++) {
			const struct cg_edge *e = callgraph_callees(cg, i, &ne);
			size_t j;
			if (!ne)
				continue;
			printf("    -  %s ->", cg->nodes[i].name);
			for (j = 0; j < ne; j++)
				printf(" %s", cg->nodes[e[j].to].name);
			printf("\n");
		}
	}
	return;
}

static void dot_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

static void show_dot(const struct callgraph *cg)
{
	uint32_t i;

	printf("digraph callgraph {\n\tnode [shape=ellipse];\n");
	for (i = 0; i < cg->nnodes; i++) {
		if (!cg->nodes[i].reachable)
			continue;
		printf("\tn%u [label=", i);
		dot_str(cg->nodes[i].name);
		printf(", tooltip=\"level %d\"%s];\n", cg->nodes[i].level,
		       cg->nodes[i].import ? ", shape=box" : "");
	}
	for (i = 0; i < cg->nedges; i++) {
		const struct cg_edge *e = &cg->edges[i];
		if (!cg->nodes[e->from].reachable)
			continue;
		printf("\tn%u -> n%u%s;\n", e->from, e->to,
		       e->flags & CG_E_TAIL ? " [style=dashed]" : "");
	}
	printf("}\n");
	return;
}

static void show_function_dot(const struct callgraph *cg, uint32_t i)
{
	size_t nb, k, s;
	const struct cfg_block *b = callgraph_blocks(cg, i, &nb);

	printf("digraph cfg {\n\tlabel=");
	dot_str(cg->nodes[i].name);
	printf(";\n\tnode [shape=box];\n");
	for (k = 0; k < nb; k++) {
		if (b[k].flags & CFG_B_DISPATCH)
			printf("\tb%zu [label=\"dispatch\", shape=diamond];\n", k);
		else
			printf("\tb%zu [label=\"%llx\\n%u insns, depth %u\"%s];\n", k,
			       (unsigned long long)b[k].addr, b[k].ninsns, b[k].loop_depth,
			       b[k].flags & CFG_B_HEADER ? ", style=bold" : "");
	}
	for (k = 0; k < nb; k++)
		for (s = 0; s < b[k].nsucc; s++)
			printf("\tb%zu -> b%u;\n", k, cg->succ[b[k].succ + s]);
	printf("}\n");
	return;
}

void callgraph_output(const struct callgraph *cg, int node, enum cg_format fmt)
{
	if (fmt == CG_JSON) {
		if (node >= 0)
			show_function_json(cg, (uint32_t)node);
		else
			show_json(cg);
	} else if (fmt == CG_DOT) {
		if (node >= 0)
			show_function_dot(cg, (uint32_t)node);
		else
			show_dot(cg);
	} else if (node >= 0) {
		show_function_text(cg, (uint32_t)node);
	} else {
		show_text(cg);
	}
}
