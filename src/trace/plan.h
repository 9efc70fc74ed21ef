/* The probe plan: what is probed, where, and how often.  Ids index the
 * probes; the raw stream carries ids only, names live here.  */
#ifndef PERUN_PLAN_H
#define PERUN_PLAN_H

#include <stddef.h>
#include <stdint.h>

enum probe_kind {
	PROBE_FUNC,		/* function entry + return */
	PROBE_USDT_PAIR,	/* two USDT marks: begin and end */
	PROBE_USDT_POINT,	/* one USDT mark, no duration */
	PROBE_LINE,		/* a source line (-d file:line), no duration */
};

struct probe {
	int id;
	enum probe_kind kind;
	char *binary;		/* canonical path of the binary or library */
	char *name;		/* display name (function, provider:mark, file:line) */
	char *mark;		/* USDT begin mark, or NULL */
	char *mark_end;		/* USDT end mark, or NULL */
	char *file;		/* decl file or -d file */
	int line;
	uint64_t addr;		/* function address in binary (PROBE_FUNC) */
	unsigned sampling;	/* record one call in `sampling` (>= 1) */
};

struct plan {
	struct probe *probes;
	size_t n, alloc;
};

void plan_init(struct plan *p);
void plan_release(struct plan *p);
struct probe *plan_add(struct plan *p, enum probe_kind kind, const char *binary,
		       const char *name);
/* Number of kernel probe points (a function is two: entry and return).  */
size_t plan_probe_points(const struct plan *p);
const char *probe_kind_name(enum probe_kind k);
/* One line per probe, tab separated; read back by plan_load.  */
char *plan_serialize(const struct plan *p);
int plan_parse(struct plan *p, const char *text);
int plan_save(const struct plan *p, const char *path);
int plan_load(struct plan *p, const char *path);

#endif
