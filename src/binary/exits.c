/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "target"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/cfg.h"
#include "binary/exits.h"
#include "util/log.h"
#include "util/strbuf.h"

/* A tail call's target: another function's start, not a part of one
 * (gcc's NAME.cold holds a function's unlikely code, which may return).  */
static int function_start(const struct target *t, uint64_t addr)
{
	const struct func *g = target_func_at(t, addr);

	return g && !strstr(g->name, ".cold");
}

long target_func_exits(const struct target *t, const struct func *f, int fd,
		       struct cfg_disasm *d, uint64_t **offs)
{
	struct cfg_exit *e = NULL;
	uint8_t *code;
	ssize_t got;
	long n, i, k = 0;

	*offs = NULL;
	if (t->go || !f->size || f->ifunc || f->size > (64u << 20))
		return 0;
	code = xmalloc(f->size);
	got = pread(fd, code, f->size, (off_t)target_file_offset(t, f->addr));
	if (got < 0) {
		free(code);
		return pr_error_errno("read %s", t->path);
	}
	n = (size_t)got == f->size ? cfg_exits(d, code, f->size, f->addr, &e) : -1;
	free(code);
	/* an exit at the function's own first instruction (an empty function's
	 * ret) shares its address with the entry probe, and the two cannot be
	 * told apart: its returns are seen by a uretprobe */
	for (i = 0; i < n; i++)
		if (e[i].kind == CFG_EXIT_UNKNOWN || e[i].addr == f->addr ||
		    (e[i].kind == CFG_EXIT_JMP && !function_start(t, e[i].target)))
			n = -1;
	if (n > 0) {
		*offs = xmalloc((size_t)n * sizeof(**offs));
		for (i = 0; i < n; i++)
			(*offs)[k++] = target_file_offset(t, e[i].addr);
	}
	free(e);
	return n > 0 ? k : 0;
}
