/* SPDX-License-Identifier: GPL-3.0-or-later */
/* .perun/local.yml through libyaml: the wrapped VCS and the collection
 * jobs (written as empty lists, as Perun writes them; read as Perun's job
 * matrix).  */
#include "config.h"

#define PR_FMT "perun"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "store/localyml.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/number.h"
#include "util/strbuf.h"

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	strbuf_add(data, buffer, size);
	return 1;
}

static int scalar(yaml_emitter_t *em, const char *s)
{
	yaml_event_t ev;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
				     YAML_ANY_SCALAR_STYLE);
	return yaml_emitter_emit(em, &ev);
}

static int emit_kv(yaml_emitter_t *em, const char *k, const char *v)
{
	return scalar(em, k) && scalar(em, v);
}

static int empty_list(yaml_emitter_t *em, const char *k)
{
	yaml_event_t ev;

	if (!scalar(em, k))
		return 0;
	yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_SEQUENCE_STYLE);
	if (!yaml_emitter_emit(em, &ev))
		return 0;
	yaml_sequence_end_event_initialize(&ev);
	return yaml_emitter_emit(em, &ev);
}

int config_write_local(const char *path, const char *vcs_type, const char *vcs_url)
{
	static const char *const jobs[] = { "cmds", "args", "workloads", "collectors",
					    "postprocessors", NULL };
	yaml_emitter_t em;
	yaml_event_t ev;
	struct strbuf out = STRBUF_INIT;
	size_t i;
	int ok, ret = -1;

	yaml_emitter_initialize(&em);
	yaml_emitter_set_output(&em, write_handler, &out);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ok = yaml_emitter_emit(&em, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	ok = ok && yaml_emitter_emit(&em, &ev) && scalar(&em, "vcs");
	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	ok = ok && yaml_emitter_emit(&em, &ev) && emit_kv(&em, "type", vcs_type) &&
	     emit_kv(&em, "url", vcs_url);
	yaml_mapping_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&em, &ev);
	for (i = 0; jobs[i]; i++)
		ok = ok && empty_list(&em, jobs[i]);
	yaml_mapping_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_document_end_event_initialize(&ev, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_stream_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&em, &ev);
	if (!ok)
		pr_error("libyaml: cannot emit %s: %s", path, em.problem ? em.problem : "error");
	else
		ret = fs_write_atomic(path, out.buf, out.len, 0644);
	yaml_emitter_delete(&em);
	strbuf_release(&out);
	return ret;
}

int config_read_vcs(const char *path, char **type, char **url)
{
	FILE *f = fopen(path, "rb");
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, in_vcs = 0, ret = -1, done = 0;
	char *key = NULL;

	*type = *url = NULL;
	if (!f)
		return pr_error_errno("%s", path);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			pr_error("%s:%zu: %s", path, parser.problem_mark.line + 1,
				 parser.problem ? parser.problem : "YAML error");
			goto out;
		}
		switch (ev.type) {
		case YAML_MAPPING_START_EVENT:
			depth++;
			if (depth == 2 && key && !strcmp(key, "vcs"))
				in_vcs = 1;
			free(key);
			key = NULL;
			break;
		case YAML_MAPPING_END_EVENT:
			if (depth == 2)
				in_vcs = 0;
			depth--;
			break;
		case YAML_SCALAR_EVENT:
			if (!key) {
				key = xstrdup((const char *)ev.data.scalar.value);
			} else {
				if (in_vcs && !strcmp(key, "type"))
					*type = xstrdup((const char *)ev.data.scalar.value);
				else if (in_vcs && !strcmp(key, "url"))
					*url = xstrdup((const char *)ev.data.scalar.value);
				free(key);
				key = NULL;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
			free(key);
			key = NULL;
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	ret = *type ? 0 : pr_error("%s: no vcs.type", path);
out:
	free(key);
	yaml_parser_delete(&parser);
	fclose(f);
	return ret;
}

/* The value of key in the mapping node, or NULL.  */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

static const char *scalar_of(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A list of strings (a lone string is a list of one; null or missing is
 * empty) into out.  */
static int read_strings(const char *path, yaml_document_t *doc, yaml_node_t *n, const char *key,
			struct strv *out)
{
	yaml_node_item_t *it;

	if (!n || (n->type == YAML_SCALAR_NODE && !*scalar_of(n) &&
		   n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE))
		return 0;
	if (n->type == YAML_SCALAR_NODE) {
		strv_push(out, scalar_of(n));
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return pr_error("%s:%zu: %s is a list of strings", path, n->start_mark.line + 1, key);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const char *v = scalar_of(yaml_document_get_node(doc, *it));
		if (!v)
			return pr_error("%s:%zu: %s is a list of strings, and item %zu is not one", path,
					n->start_mark.line + 1, key,
					(size_t)(it - n->data.sequence.items.start) + 1);
		strv_push(out, v);
	}
	return 0;
}

static void unit_add(struct job_unit *u, const char *k, const char *v)
{
	u->params = xrealloc(u->params, (u->nparams + 1) * sizeof(*u->params));
	u->params[u->nparams].key = xstrdup(k);
	u->params[u->nparams++].value = xstrdup(v);
}

/* One mapping of params (key: scalar or list of scalars) into u.  */
static int read_param_map(const char *path, yaml_document_t *doc, yaml_node_t *m,
			  struct job_unit *u, const char *what)
{
	yaml_node_pair_t *p;

	for (p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar_of(yaml_document_get_node(doc, p->key));
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		yaml_node_item_t *it;
		if (!k)
			return pr_error("%s:%zu: %s '%s': a param's name is a string", path,
					m->start_mark.line + 1, what, u->name);
		if (v && v->type == YAML_SCALAR_NODE) {
			unit_add(u, k, scalar_of(v));
			continue;
		}
		if (!v || v->type != YAML_SEQUENCE_NODE)
			return pr_error("%s:%zu: %s '%s': param '%s' is a value or a list of values",
					path, m->start_mark.line + 1, what, u->name, k);
		for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
			const char *x = scalar_of(yaml_document_get_node(doc, *it));
			if (!x)
				return pr_error("%s:%zu: %s '%s': param '%s' is a list of values",
						path, v->start_mark.line + 1, what, u->name, k);
			unit_add(u, k, x);
		}
	}
	return 0;
}

/* collectors or postprocessors: a list of {name, params}; a lone name is a
 * unit without params.  */
static int read_units(const char *path, yaml_document_t *doc, yaml_node_t *n, const char *key,
		      struct job_unit **out, size_t *nout)
{
	yaml_node_item_t *it;

	if (!n || (n->type == YAML_SCALAR_NODE && !*scalar_of(n)))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return pr_error("%s:%zu: %s is a list of {name: NAME, params: {...}}", path,
				n->start_mark.line + 1, key);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(doc, *it), *params;
		struct job_unit *u;
		const char *name = scalar_of(e) ? scalar_of(e) : scalar_of(map_get(doc, e, "name"));
		if (!name || !*name)
			return pr_error("%s:%zu: %s: each entry has a name (name: NAME)", path,
					e ? e->start_mark.line + 1 : n->start_mark.line + 1, key);
		*out = xrealloc(*out, (*nout + 1) * sizeof(**out));
		u = &(*out)[(*nout)++];
		memset(u, 0, sizeof(*u));
		u->name = xstrdup(name);
		params = map_get(doc, e, "params");
		if (!params || (params->type == YAML_SCALAR_NODE && !*scalar_of(params)))
			continue;
		if (params->type == YAML_MAPPING_NODE) {
			if (read_param_map(path, doc, params, u, key) < 0)
				return -1;
		} else if (params->type == YAML_SEQUENCE_NODE) {
			yaml_node_item_t *pi;
			/* Perun's form: a list of one-key mappings */
			for (pi = params->data.sequence.items.start; pi < params->data.sequence.items.top;
			     pi++) {
				yaml_node_t *m = yaml_document_get_node(doc, *pi);
				if (!m || m->type != YAML_MAPPING_NODE)
					return pr_error("%s:%zu: %s '%s': params is a mapping or a list "
							"of mappings",
							path, params->start_mark.line + 1, key, name);
				if (read_param_map(path, doc, m, u, key) < 0)
					return -1;
			}
		} else {
			return pr_error("%s:%zu: %s '%s': params is a mapping (key: value)", path,
					params->start_mark.line + 1, key, name);
		}
	}
	return 0;
}

int config_read_jobs(const char *path, struct job_matrix *m)
{
	FILE *f = fopen(path, "rb");
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root, *n;
	int ret = -1;

	memset(m, 0, sizeof(*m));
	if (!f)
		return pr_error_errno("%s", path);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		pr_error("%s:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "YAML error");
		yaml_parser_delete(&parser);
		fclose(f);
		return -1;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE) {
		pr_error("%s: not a mapping of keys (cmds, args, workloads, collectors, ...)", path);
		goto out;
	}
	if (read_strings(path, &doc, map_get(&doc, root, "cmds"), "cmds", &m->cmds) < 0 ||
	    read_strings(path, &doc, map_get(&doc, root, "args"), "args", &m->args) < 0 ||
	    read_strings(path, &doc, map_get(&doc, root, "workloads"), "workloads", &m->workloads) < 0 ||
	    read_strings(path, &doc, map_get(&doc, map_get(&doc, root, "execute"), "pre_run"),
			 "execute.pre_run", &m->pre_run) < 0 ||
	    read_units(path, &doc, map_get(&doc, root, "collectors"), "collectors", &m->collectors,
		       &m->ncollectors) < 0 ||
	    read_units(path, &doc, map_get(&doc, root, "postprocessors"), "postprocessors",
		       &m->postprocessors, &m->npostprocessors) < 0)
		goto out;
	n = map_get(&doc, root, "repeat");
	if (n) {
		const char *v = scalar_of(n);
		uint64_t r;
		if (!v || parse_count(v, 1000, &r) < 0 || r < 1) {
			pr_error("%s:%zu: repeat is a number of runs from 1 to 1000", path,
				 n->start_mark.line + 1);
			goto out;
		}
		m->repeat = (unsigned)r;
	}
	n = map_get(&doc, root, "interleave_rounds");
	if (n) {
		const char *v = scalar_of(n);
		if (v && (!strcmp(v, "true") || !strcmp(v, "yes")))
			m->interleave_rounds = 1;
		else if (v && (!strcmp(v, "false") || !strcmp(v, "no")))
			m->interleave_rounds = -1;
		else {
			pr_error("%s:%zu: interleave_rounds is true or false", path,
				 n->start_mark.line + 1);
			goto out;
		}
	}
	n = map_get(&doc, root, "retries");
	if (n) {
		const char *v = scalar_of(n);
		uint64_t r;
		if (!v || parse_count(v, 100, &r) < 0) {
			pr_error("%s:%zu: retries is a number of retries from 0 to 100", path,
				 n->start_mark.line + 1);
			goto out;
		}
		m->retries = (unsigned)r;
		m->has_retries = 1;
	}
	n = map_get(&doc, root, "machine");
	if (n) {
		const char *v = scalar_of(n);
		if (!v || !config_machine_name_ok(v)) {
			pr_error("%s:%zu: machine is a name of letters, digits, '.', '_' and '-' "
				 "(at most 64)",
				 path, n->start_mark.line + 1);
			goto out;
		}
		m->machine = xstrdup(v);
	}
	ret = 0;
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (ret < 0)
		job_matrix_release(m);
	return ret;
}

int config_read_machine(const char *path, char **name)
{
	FILE *f;
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *n;
	int ret = 0;

	*name = NULL;
	if (!(f = fopen(path, "r")))
		return errno == ENOENT ? 0 : pr_error_errno("%s", path);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		pr_error("%s:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "YAML error");
		yaml_parser_delete(&parser);
		fclose(f);
		return -1;
	}
	n = map_get(&doc, yaml_document_get_root_node(&doc), "machine");
	if (n) {
		const char *v = scalar_of(n);
		if (!v || !config_machine_name_ok(v)) {
			ret = pr_error("%s:%zu: machine is a name of letters, digits, '.', '_' and "
				       "'-' (at most 64)",
				       path, n->start_mark.line + 1);
		} else {
			*name = xstrdup(v);
			ret = 1;
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return ret;
}

int config_machine_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static void units_free(struct job_unit *u, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < u[i].nparams; j++) {
			free(u[i].params[j].key);
			free(u[i].params[j].value);
		}
		free(u[i].params);
		free(u[i].name);
	}
	free(u);
}

void job_matrix_release(struct job_matrix *m)
{
	strv_clear(&m->cmds);
	strv_clear(&m->args);
	strv_clear(&m->workloads);
	strv_clear(&m->pre_run);
	units_free(m->collectors, m->ncollectors);
	units_free(m->postprocessors, m->npostprocessors);
	free(m->machine);
	memset(m, 0, sizeof(*m));
}
static void thresholds_free(char **regex, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(regex[i]);
	free(regex);
}

/* One threshold: a number >= 0; -1 after pr_error() naming where.  */
static int threshold_value(const char *path, const yaml_node_t *v, double *out)
{
	const char *s;

	if (v->type != YAML_SCALAR_NODE)
		return pr_error("%s:%zu: regressions_thresholds wants a number (0.05 = 5%%) for "
				"each regular expression",
				path, v->start_mark.line + 1);
	s = (const char *)v->data.scalar.value;
	if (parse_decimal(s, out) < 0 || !(*out >= 0))
		return pr_error("%s:%zu: regressions_thresholds: '%s' is not a ratio >= 0 (0.05 "
				"= 5%%)",
				path, v->start_mark.line + 1, s);
	return 0;
}

int config_read_thresholds(const char *path, char ***regex, double **threshold, size_t *n)
{
	FILE *f;
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root, *node = NULL;
	yaml_node_pair_t *pair;
	int ret = -1;

	*regex = NULL;
	*threshold = NULL;
	*n = 0;
	f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? 0 : pr_error_errno("%s", path);
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		pr_error("%s:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "YAML error");
		goto out_parser;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && root->type == YAML_MAPPING_NODE)
		for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top;
		     pair++) {
			yaml_node_t *k = yaml_document_get_node(&doc, pair->key);
			if (k && k->type == YAML_SCALAR_NODE &&
			    !strcmp((const char *)k->data.scalar.value, "regressions_thresholds"))
				node = yaml_document_get_node(&doc, pair->value);
		}
	if (!node) {
		ret = 0;
	} else if (node->type == YAML_SCALAR_NODE) { /* one number: every function */
		*regex = xcalloc(1, sizeof(**regex));
		*threshold = xcalloc(1, sizeof(**threshold));
		if (threshold_value(path, node, *threshold) == 0) {
			(*regex)[0] = xstrdup(".*");
			*n = 1;
			ret = 0;
		}
	} else if (node->type == YAML_MAPPING_NODE) {
		size_t cap = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
		*regex = xcalloc(cap ? cap : 1, sizeof(**regex));
		*threshold = xcalloc(cap ? cap : 1, sizeof(**threshold));
		ret = 0;
		for (pair = node->data.mapping.pairs.start;
		     ret == 0 && pair < node->data.mapping.pairs.top; pair++) {
			yaml_node_t *k = yaml_document_get_node(&doc, pair->key);
			yaml_node_t *v = yaml_document_get_node(&doc, pair->value);
			if (!k || k->type != YAML_SCALAR_NODE || !v) {
				ret = pr_error("%s:%zu: regressions_thresholds maps regular "
					       "expressions to numbers",
					       path, node->start_mark.line + 1);
				break;
			}
			ret = threshold_value(path, v, &(*threshold)[*n]);
			if (ret == 0)
				(*regex)[(*n)++] = xstrdup((const char *)k->data.scalar.value);
		}
	} else {
		pr_error("%s:%zu: regressions_thresholds maps regular expressions to numbers "
			 "(\"^parse$\": 0.2)",
			 path, node->start_mark.line + 1);
	}
	if (ret < 0) {
		thresholds_free(*regex, *n);
		free(*threshold);
		*regex = NULL;
		*threshold = NULL;
		*n = 0;
	}
	yaml_document_delete(&doc);
out_parser:
	yaml_parser_delete(&parser);
	fclose(f);
	return ret;
}
