/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The call graph's cache file (callgraph-cache.h).  */
#include "config.h"

#define PR_FMT "callgraph"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "binary/callgraph-cache.h"
#include "binary/callgraph.h"
#include "binary/target.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Version of the cache file layout and of what the extraction finds.  */
#define CG_CACHE_VERSION 3
static const char cg_magic[8] = { 'P', 'E', 'R', 'U', 'N', 'C', 'G', '\n' };

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

void callgraph_cache_store(const struct callgraph *cg, const char *path, unsigned flags,
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
	if (cg->nblocks)
		strbuf_add(&sb, cg->blocks, cg->nblocks * sizeof(*cg->blocks));
	if (cg->nsucc)
		strbuf_add(&sb, cg->succ, cg->nsucc * sizeof(*cg->succ));
	for (i = cg->nfuncs; i < cg->nnodes; i++)
		strbuf_add(&sb, cg->nodes[i].name, strlen(cg->nodes[i].name) + 1);
	h.crc = (uint32_t)crc32(0, (const Bytef *)sb.buf + sizeof(h), (uInt)(sb.len - sizeof(h)));
	memcpy(sb.buf, &h, sizeof(h));
	if (slash)
		*slash = '\0';
	if (fs_mkdir_p(dir, 0700) == 0 && fs_replaceable(path) &&
	    fs_write_atomic(path, sb.buf, sb.len, 0600) == 0)
		pr_dbg("stored %s (%zu bytes)", path, sb.len);
	free(dir);
	strbuf_release(&sb);
}

int callgraph_cache_load(struct callgraph *cg, const struct target *t, const char *path,
			 unsigned flags, uint64_t debug_id, const char **why)
{
	struct strbuf sb = STRBUF_INIT;
	struct cg_head h;
	const char *p, *end;
	uint64_t want;
	uint32_t i;
	int ret = -1;

	/* a file there that perun did not write was named by the cache check:
	 * not read, as if missing */
	if (!fs_replaceable(path))
		return 1;
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

