#include "config.h"

#define PR_FMT "plan"

#include <stdlib.h>
#include <string.h>

#include "trace/plan.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

#define PLAN_MAGIC "perun-plan 1"

void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
}

void plan_release(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->probes[i].binary);
		free(p->probes[i].name);
		free(p->probes[i].mark);
		free(p->probes[i].mark_end);
		free(p->probes[i].file);
	}
	free(p->probes);
	plan_init(p);
}

struct probe *plan_add(struct plan *p, enum probe_kind kind, const char *binary, const char *name)
{
	struct probe *pr;

	if (p->n == p->alloc) {
		p->alloc = p->alloc ? p->alloc * 2 : 64;
		p->probes = xrealloc(p->probes, p->alloc * sizeof(*p->probes));
	}
	pr = &p->probes[p->n];
	memset(pr, 0, sizeof(*pr));
	pr->id = (int)p->n++;
	pr->kind = kind;
	pr->binary = xstrdup(binary);
	pr->name = xstrdup(name);
	pr->sampling = 1;
	return pr;
}

size_t plan_probe_points(const struct plan *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++)
		n += p->probes[i].kind == PROBE_FUNC || p->probes[i].kind == PROBE_USDT_PAIR ? 2 : 1;
	return n;
}

static const char *const kind_names[] = { "func", "usdt", "usdt-point", "line" };

const char *probe_kind_name(enum probe_kind k)
{
	return kind_names[k];
}

/* Tabs and newlines cannot occur in the fields we store, but a hostile name
 * must not break the format: they are replaced, never interpreted.  */
static void put(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\t');
	for (; s && *s; s++)
		strbuf_addch(sb, *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

char *plan_serialize(const struct plan *p)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addf(&sb, "%s\t%zu\n", PLAN_MAGIC, p->n);
	for (i = 0; i < p->n; i++) {
		const struct probe *pr = &p->probes[i];
		strbuf_addf(&sb, "%d\t%s\t%u\t%llx\t%d", pr->id, kind_names[pr->kind], pr->sampling,
			    (unsigned long long)pr->addr, pr->line);
		put(&sb, pr->binary);
		put(&sb, pr->name);
		put(&sb, pr->mark);
		put(&sb, pr->mark_end);
		put(&sb, pr->file);
		strbuf_addch(&sb, '\n');
	}
	return strbuf_detach(&sb);
}

static char *field(char **p)
{
	char *s = *p, *tab;

	if (!s)
		return NULL;
	tab = strpbrk(s, "\t\n");
	if (tab) {
		*tab = '\0';
		*p = tab + 1;
	} else {
		*p = NULL;
	}
	return s;
}

int plan_parse(struct plan *p, const char *text)
{
	char *copy = xstrdup(text), *line, *save = NULL;
	size_t expect = 0;
	int first = 1, ret = -1;

	plan_init(p);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[10], *q = line;
		struct probe *pr;
		int i, k;

		if (first) {
			first = 0;
			if (strncmp(line, PLAN_MAGIC "\t", sizeof(PLAN_MAGIC))) {
				pr_error("not a probe plan (bad magic)");
				goto out;
			}
			expect = strtoul(line + sizeof(PLAN_MAGIC), NULL, 10);
			continue;
		}
		for (i = 0; i < 10; i++)
			f[i] = field(&q);
		if (!f[9]) {
			pr_error("probe plan line %zu: too few fields", p->n + 2);
			goto out;
		}
		for (k = 0; k < 4 && strcmp(kind_names[k], f[1]); k++)
			;
		if (k == 4 || atoi(f[0]) != (int)p->n) {
			pr_error("probe plan line %zu: bad kind or id", p->n + 2);
			goto out;
		}
		pr = plan_add(p, (enum probe_kind)k, f[5], f[6]);
		pr->sampling = (unsigned)strtoul(f[2], NULL, 10);
		if (!pr->sampling)
			pr->sampling = 1;
		pr->addr = strtoull(f[3], NULL, 16);
		pr->line = atoi(f[4]);
		pr->mark = *f[7] ? xstrdup(f[7]) : NULL;
		pr->mark_end = *f[8] ? xstrdup(f[8]) : NULL;
		pr->file = *f[9] ? xstrdup(f[9]) : NULL;
	}
	if (first || p->n != expect) {
		pr_error("probe plan truncated: %zu of %zu probes", p->n, expect);
		goto out;
	}
	ret = 0;
out:
	free(copy);
	if (ret < 0)
		plan_release(p);
	return ret;
}

int plan_save(const struct plan *p, const char *path)
{
	char *s = plan_serialize(p);
	int ret = fs_write_atomic(path, s, strlen(s), 0644);

	free(s);
	return ret;
}

int plan_load(struct plan *p, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	if (strbuf_read_file(&sb, path) < 0) {
		plan_init(p);
		return pr_error_errno("%s", path);
	}
	ret = plan_parse(p, sb.buf);
	strbuf_release(&sb);
	return ret;
}
