/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "plan"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/plan.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

#define PLAN_MAGIC "perun-plan 2"
#define PLAN_MAGIC_V1 "perun-plan 1"
#define PLAN_FIELDS 14

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
		free(p->probes[i].sym);
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

int probe_is_point(const struct probe *pr)
{
	return pr->kind == PROBE_USDT_POINT || pr->kind == PROBE_LINE ||
	       (pr->kind == PROBE_FUNC && (pr->flags & PROBE_F_ENTRY_ONLY));
}

unsigned probe_points(const struct probe *pr)
{
	return probe_is_point(pr) ? 1 : 2;
}

size_t plan_probe_points(const struct plan *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++)
		n += probe_points(&p->probes[i]);
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

const char *probe_entry_name(const struct probe *pr)
{
	if (pr->flags & PROBE_F_ENTRY_STEPPED)
		return "stepped";
	if (pr->flags & PROBE_F_ENTRY_EMULATED)
		return "emulated";
	return "unknown";
}

char *plan_serialize(const struct plan *p)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addf(&sb, "%s\t%zu\n", PLAN_MAGIC, p->n);
	for (i = 0; i < p->n; i++) {
		const struct probe *pr = &p->probes[i];
		strbuf_addf(&sb, "%d\t%s\t%u\t%llx\t%d\t%u\t%llx\t%llx", pr->id,
			    kind_names[pr->kind], pr->sampling, (unsigned long long)pr->addr, pr->line,
			    pr->flags, (unsigned long long)pr->foff, (unsigned long long)pr->size);
		put(&sb, pr->binary);
		put(&sb, pr->name);
		put(&sb, pr->mark);
		put(&sb, pr->mark_end);
		put(&sb, pr->file);
		put(&sb, pr->sym);
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
	int first = 1, ret = -1, v1 = 0;

	plan_init(p);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[PLAN_FIELDS], *q = line;
		struct probe *pr;
		int i, k;

		if (first) {
			first = 0;
			/* format 1 (perun before 2026-11-22): no flags, file
			 * offset, size or symbol; still read */
			v1 = !strncmp(line, PLAN_MAGIC_V1 "\t", sizeof(PLAN_MAGIC_V1));
			if (!v1 && strncmp(line, PLAN_MAGIC "\t", sizeof(PLAN_MAGIC))) {
				pr_error("not a probe plan (bad magic)");
				goto out;
			}
			expect = strtoul(line + sizeof(PLAN_MAGIC), NULL, 10);
			continue;
		}
		if (v1) {
			static const int at[] = { 0, 1, 2, 3, 4, 8, 9, 10, 11, 12 };
			for (i = 0; i < PLAN_FIELDS; i++)
				f[i] = (char *)"";
			for (i = 0; i < 10; i++) {
				f[at[i]] = field(&q);
				if (!f[at[i]])
					break;
			}
			if (i < 10)
				f[PLAN_FIELDS - 1] = NULL;
		} else {
			for (i = 0; i < PLAN_FIELDS; i++)
				f[i] = field(&q);
		}
		if (!f[PLAN_FIELDS - 1]) {
			pr_error("probe plan line %zu: too few fields", p->n + 2);
			goto out;
		}
		for (k = 0; k < 4 && strcmp(kind_names[k], f[1]); k++)
			;
		if (k == 4 || atoi(f[0]) != (int)p->n) {
			pr_error("probe plan line %zu: bad kind or id", p->n + 2);
			goto out;
		}
		pr = plan_add(p, (enum probe_kind)k, f[8], f[9]);
		pr->sampling = (unsigned)strtoul(f[2], NULL, 10);
		if (!pr->sampling)
			pr->sampling = 1;
		pr->addr = strtoull(f[3], NULL, 16);
		pr->line = atoi(f[4]);
		pr->flags = (unsigned)strtoul(f[5], NULL, 10);
		pr->foff = strtoull(f[6], NULL, 16);
		pr->size = strtoull(f[7], NULL, 16);
		pr->mark = *f[10] ? xstrdup(f[10]) : NULL;
		pr->mark_end = *f[11] ? xstrdup(f[11]) : NULL;
		pr->file = *f[12] ? xstrdup(f[12]) : NULL;
		pr->sym = *f[13] ? xstrdup(f[13]) : NULL;
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

/* --- what the runtime attached ------------------------------------------- */

/* Same file: equal paths, or the same inode (/lib vs /usr/lib).  */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return 1;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* One point the runtime resolved: binary, address or file offset, kind.  */
struct rpoint {
	char *path;
	uint64_t value;
	int by_addr;		/* value is an address, else a file offset */
	int ret;
	enum probe_kind other;	/* PROBE_FUNC, or the mark/statement it came from */
	int done;
	int refused;		/* plan_insn_refused */
	int insn;		/* a return: perun's loader's return instructions */
};

int plan_insn_refused(const char *path, uint64_t off)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned char b[15];
	ssize_t n, i;
	/* the binary may have been replaced since the attach: never block on a
	 * FIFO or read a device in its place */
	int fd = fs_open_regular(path, 0, 0);

	if (fd < 0)
		return 0;
	n = pread(fd, b, sizeof(b), (off_t)off);
	close(fd);
	/* legacy prefixes, then at most one REX; the kernel's is_prefix_bad() */
	for (i = 0; i < n; i++) {
		switch (b[i]) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0xf0:
			return 1;
		case 0x64: case 0x65: case 0x66: case 0x67: case 0xf2: case 0xf3:
			continue;
		}
		break;
	}
	return 0;
#else
	(void)path;
	(void)off;
	return 0;
#endif
}

static uint64_t where(const struct probe *pr, int by_addr)
{
	return by_addr ? pr->addr : pr->foff;
}

static int take(struct probe_attach *a, int ret, int pair)
{
	if (ret) {
		if (a->ret || !pair)
			return 0;
		a->ret = 1;
	} else {
		if (a->entry)
			return 0;
		a->entry = 1;
	}
	return 1;
}

/* Pass 1: returns and entries at a function's first byte, marks at their
 * address.  Pass 2: entries inside a function (stap places a DWARF entry
 * probe after the prologue).  Pass 3: what is left, to the lines and marks
 * of that binary.  */
static size_t credit_all(const struct plan *p, struct rpoint *rp, size_t nrp,
			 struct probe_attach *att)
{
	size_t n = 0, i, k;
	int pass;

	for (pass = 1; pass <= 3; pass++) {
		for (k = 0; k < nrp; k++) {
			struct rpoint *r = &rp[k];
			if (r->done)
				continue;
			for (i = 0; i < p->n && !r->done; i++) {
				const struct probe *pr = &p->probes[i];
				uint64_t w = where(pr, r->by_addr);
				int fn = pr->kind == PROBE_FUNC, pair = !probe_is_point(pr);
				if (pass == 1 && (fn ? r->other != PROBE_FUNC || w != r->value
						     : pr->kind == PROBE_LINE || !pr->addr ||
							       w != r->value))
					continue;
				if (pass == 2 && (!fn || r->ret || r->other != PROBE_FUNC ||
						  r->value < w || r->value >= w + (pr->size ? pr->size : 1)))
					continue;
				if (pass == 3 && (fn || (r->other != PROBE_FUNC && r->other != PROBE_USDT_POINT &&
							 r->other != pr->kind &&
							 !(r->other == PROBE_LINE && pr->kind == PROBE_LINE))))
					continue;
				if (pass == 3 && r->other == PROBE_USDT_POINT && pr->kind == PROBE_LINE)
					continue;
				if (!same_file(pr->binary, r->path))
					continue;
				if (pass == 3 && pr->kind == PROBE_USDT_PAIR)
					r->ret = att[i].entry;	/* the second mark of a pair */
				if (take(&att[i], r->ret, pair)) {
					r->done = 1;
					if (r->ret && r->insn)
						att[i].ret_insn = 1;
					if (!r->refused) {
						n++;
						continue;
					}
					/* registered, but it will never fire */
					if (r->ret)
						att[i].ret = 0;
					else
						att[i].entry = 0;
					att[i].refused = 1;
				}
			}
		}
	}
	for (k = 0; k < nrp; k++)
		free(rp[k].path);
	free(rp);
	return n;
}

static void push_point(struct rpoint **rp, size_t *n, const char *path, uint64_t value,
		       int by_addr, int ret, enum probe_kind other)
{
	struct rpoint *r;

	*rp = xrealloc(*rp, (*n + 1) * sizeof(**rp));
	r = &(*rp)[(*n)++];
	r->path = xstrdup(path);
	r->value = value;
	r->by_addr = by_addr;
	r->ret = ret;
	r->other = other;
	r->done = 0;
	r->refused = 0;
	r->insn = 0;
}

/* After "stapprobe_": the return instructions' name (0_iID, or iID after
 * a pid's prefix).  */
static int insn_name(const char *rest)
{
	rest += strspn(rest, "0123456789");
	if (*rest == '_')
		rest++;
	return *rest == 'i';
}

size_t plan_match_uprobe_events(const struct plan *p, const char *text, long pid,
				struct probe_attach *att)
{
	char *copy = xstrdup(text), *line, *save = NULL, prefix[64];
	struct rpoint *rp = NULL;
	size_t nrp = 0;

	if (pid < 0)
		snprintf(prefix, sizeof(prefix), "/stapprobe_");
	else
		snprintf(prefix, sizeof(prefix), "/stapprobe_%ld_", pid);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp, *colon;
		int ret;

		if ((line[0] != 'p' && line[0] != 'r') || line[1] != ':')
			continue;
		ret = line[0] == 'r';
		sp = strchr(line, ' ');
		if (!sp || !strstr(line, prefix) || strstr(line, prefix) > sp)
			continue;
		/* PATH:0xOFFSET, and the path may hold colons */
		colon = strstr(sp + 1, ":0x");
		while (colon && strstr(colon + 1, ":0x"))
			colon = strstr(colon + 1, ":0x");
		if (!colon)
			continue;
		*colon = '\0';
		/* uprobe_events does not say whether a line came from a function,
		 * a mark or a statement: functions first, the rest after */
		push_point(&rp, &nrp, sp + 1, strtoull(colon + 3, NULL, 16), 0, ret, PROBE_FUNC);
		/* perun's loader names a function's return instructions, all
		 * attached, stapprobe_0_iID */
		rp[nrp - 1].insn = ret && insn_name(strstr(line, prefix) + strlen(prefix));
		/* a return probe sits on the function's first instruction too */
		rp[nrp - 1].refused = plan_insn_refused(sp + 1, rp[nrp - 1].value);
	}
	free(copy);
	return credit_all(p, rp, nrp, att);
}

size_t plan_match_resolved(const struct plan *p, const char *text, struct probe_attach *att)
{
	char *copy = xstrdup(text), *line, *save = NULL;
	struct rpoint *rp = NULL;
	size_t nrp = 0;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *path, *q, *pc, *rest, *cmt, *r;
		enum probe_kind other = PROBE_FUNC;
		uint64_t v = 0;
		int by_addr = 1;

		if (strncmp(line, "process(\"", 9))
			continue;
		path = line + 9;
		for (q = path; *q && !(q[0] == '"' && q[1] == ')'); q++)
			if (*q == '\\' && q[1])
				memmove(q, q + 1, strlen(q));
		if (!*q)
			continue;
		*q = '\0';
		rest = q + 2;
		pc = strstr(rest, "pc=");
		if (pc && !strncmp(pc + 3, ".absolute+", 10)) {
			by_addr = 0;
			v = strtoull(pc + 13, NULL, 16);
		} else if (pc && strchr(pc, '+')) {
			v = strtoull(strchr(pc, '+') + 1, NULL, 16);
		}
		if (!strncmp(rest, ".mark(", 6))
			other = PROBE_USDT_POINT;
		else if (!strncmp(rest, ".statement(", 11))
			other = PROBE_LINE;
		else if (strncmp(rest, ".function(", 10) || !pc)
			continue;
		cmt = strstr(rest, "/*");
		r = strstr(rest, ").return");
		push_point(&rp, &nrp, path, v, by_addr, r && (!cmt || r < cmt), other);
	}
	free(copy);
	return credit_all(p, rp, nrp, att);
}

size_t plan_attach_failures(const struct plan *p, const struct probe_attach *att,
			    int own_loader, char ***lines)
{
	size_t i, k = 0;

	*lines = NULL;
	for (i = 0; i < p->n; i++) {
		const struct probe *pr = &p->probes[i];
		int two = probe_points(pr) == 2;
		const char *why;
		char *msg;

		if (att[i].entry && (!two || att[i].ret))
			continue;
		if (att[i].refused)
			why = "its first instruction has a LOCK or segment prefix, which x86 uprobes "
			      "cannot single-step: the kernel takes the probe and never fires it";
		else if (att[i].entry)
			why = "its return probe was not attached";
		else if (two && att[i].ret)
			why = "its entry probe was not attached";
		else if (pr->kind == PROBE_LINE)
			why = "no code at that line in the DWARF line table (check the file name "
			      "and line, and build with -g)";
		else if (own_loader)
			why = "the kernel refused its uprobe (perun-uprobes said why on stderr)";
		else if (pr->kind != PROBE_FUNC)
			why = "SystemTap could not place the USDT mark";
		else if (pr->flags & PROBE_F_SYMBOL)
			why = "SystemTap found no symbol of that name (stripped, or only a local "
			      "alias)";
		else
			why = "SystemTap found no DWARF function at that address";
		if (pr->kind == PROBE_FUNC)
			msg = xstrfmt("%s (%s at 0x%llx): %s", pr->name, pr->binary,
				      (unsigned long long)pr->addr, why);
		else
			msg = xstrfmt("%s (%s): %s", pr->name, pr->binary, why);
		*lines = xrealloc(*lines, (k + 2) * sizeof(**lines));
		(*lines)[k++] = msg;
		(*lines)[k] = NULL;
	}
	return k;
}

unsigned char *plan_stepped(const struct plan *plan)
{
	unsigned char *st = xcalloc(plan->n ? plan->n : 1, 1);
	size_t i;

	for (i = 0; i < plan->n; i++)
		st[i] = !!(plan->probes[i].flags & PROBE_F_ENTRY_STEPPED);
	return st;
}
