/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Control-flow graphs of x86-64 functions with capstone (cfg.h).
 *
 * Instructions are decoded without capstone's detail mode (about twice as
 * fast): branches are told apart by instruction id and their one operand is
 * read from the operand text ("0x401136", "qword ptr [rip + 0x2fe2]").  */
#include "config.h"

#define PR_FMT "cfg"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/cfg.h"
#include "util/log.h"
#include "util/strbuf.h"

struct cfg_disasm {
	csh cs;
	cs_insn *insn;
};

/* What an instruction does to the control flow.  */
enum {
	I_NORMAL,
	I_CALL,		/* call imm */
	I_CALL_SLOT,	/* call [rip+X] */
	I_CALL_IND,
	I_JMP,		/* jmp imm */
	I_JMP_SLOT,	/* jmp [rip+X] */
	I_JMP_IND,
	I_JCC,		/* conditional, imm */
	I_END,		/* hlt, ud2, int3, far returns: no successor */
	I_RET,		/* ret, ret imm16: no successor */
};

struct ins {
	uint64_t addr;
	uint64_t target;
	uint8_t size;
	uint8_t kind;
	uint8_t nofall;		/* the bytes after it did not decode */
	uint8_t notrack;	/* an indirect jump marked notrack: a switch table's */
};

int cfg_disasm_new(struct cfg_disasm **out)
{
	struct cfg_disasm *d = xcalloc(1, sizeof(*d));
	cs_err err = cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs);

	if (err != CS_ERR_OK) {
		free(d);
		return pr_error("cs_open: %s: reinstall libcapstone4", cs_strerror(err));
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_OFF);
	d->insn = cs_malloc(d->cs);
	if (!d->insn) {
		cs_close(&d->cs);
		free(d);
		return pr_error("cs_malloc: out of memory");
	}
	*out = d;
	return 0;
}

void cfg_disasm_free(struct cfg_disasm *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->cs);
	free(d);
}

/* An operand that is a plain number: the branch target.  */
static int parse_imm(const char *op, uint64_t *out)
{
	char *end;

	if (!(op[0] >= '0' && op[0] <= '9'))
		return 0;
	*out = strtoull(op, &end, 0);
	return *end == '\0';
}

/* A memory operand [rip +/- disp] and nothing else: the slot it reads.  */
static int parse_rip_slot(const char *op, uint64_t next, uint64_t *out)
{
	const char *p = strstr(op, "[rip");
	uint64_t disp = 0;
	char sign = '+', *end;

	if (!p)
		return 0;
	p += 4;
	while (*p == ' ')
		p++;
	if (*p == '+' || *p == '-') {
		sign = *p++;
		while (*p == ' ')
			p++;
		disp = strtoull(p, &end, 0);
		if (end == p)
			return 0;
		p = end;
	}
	if (*p != ']')
		return 0;
	*out = sign == '+' ? next + disp : next - disp;
	return 1;
}

static int classify(const cs_insn *in, uint64_t *target)
{
	uint64_t next = in->address + in->size;

	switch (in->id) {
	case X86_INS_CALL:
		if (parse_imm(in->op_str, target))
			return I_CALL;
		if (parse_rip_slot(in->op_str, next, target))
			return I_CALL_SLOT;
		return I_CALL_IND;
	case X86_INS_LCALL:
		return I_CALL_IND;
	case X86_INS_JMP:
		if (parse_imm(in->op_str, target))
			return I_JMP;
		if (parse_rip_slot(in->op_str, next, target))
			return I_JMP_SLOT;
		return I_JMP_IND;
	case X86_INS_LJMP:
		return I_JMP_IND;
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JE: case X86_INS_JGE:
	case X86_INS_JG: case X86_INS_JLE: case X86_INS_JL: case X86_INS_JNE:
	case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS: case X86_INS_JO:
	case X86_INS_JP: case X86_INS_JRCXZ: case X86_INS_JS: case X86_INS_LOOP:
	case X86_INS_LOOPE: case X86_INS_LOOPNE: case X86_INS_XBEGIN:
		if (parse_imm(in->op_str, target))
			return I_JCC;
		return I_NORMAL;
	case X86_INS_RET:
		return I_RET;
	case X86_INS_RETF: case X86_INS_RETFQ: case X86_INS_IRET:
	case X86_INS_IRETD: case X86_INS_IRETQ: case X86_INS_HLT: case X86_INS_UD2:
	case X86_INS_UD0: case X86_INS_INT3: case X86_INS_SYSRET:
		return I_END;
	default:
		return I_NORMAL;
	}
}

/* Decodes len bytes; bytes that do not decode are skipped one at a time,
 * and the instruction before them gets no fall-through.  */
static struct ins *decode(struct cfg_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
			  size_t *n_out, uint32_t *bad)
{
	struct ins *v = NULL;
	size_t n = 0, cap = 0, off = 0;

	*bad = 0;
	while (off < len) {
		const uint8_t *p = code + off;
		size_t left = len - off;
		uint64_t a = addr + off;

		while (cs_disasm_iter(d->cs, &p, &left, &a, d->insn)) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				v = xrealloc(v, cap * sizeof(*v));
			}
			v[n].addr = d->insn->address;
			v[n].size = (uint8_t)d->insn->size;
			v[n].target = 0;
			v[n].nofall = 0;
			v[n].kind = (uint8_t)classify(d->insn, &v[n].target);
			v[n].notrack = !strncmp(d->insn->mnemonic, "notrack", 7);
			n++;
		}
		off = len - left;
		if (off < len) {
			(*bad)++;
			off++;
			if (n)
				v[n - 1].nofall = 1;
		}
	}
	*n_out = n;
	return v;
}

static long find_insn(const struct ins *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].addr == addr)
			return (long)mid;
		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct edge {
	uint32_t from, to;
};

static void add_edge(struct edge **e, size_t *n, size_t *cap, uint32_t from, uint32_t to)
{
	if (*n && (*e)[*n - 1].from == from && (*e)[*n - 1].to == to)
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*e = xrealloc(*e, *cap * sizeof(**e));
	}
	(*e)[*n].from = from;
	(*e)[*n].to = to;
	(*n)++;
}

static void add_call(struct cfg *c, size_t *cap, const struct ins *in, uint64_t target,
		     uint32_t block, int kind)
{
	struct cfg_call *k;

	if (c->ncalls == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		c->calls = xrealloc(c->calls, *cap * sizeof(*c->calls));
	}
	k = &c->calls[c->ncalls++];
	k->site = in->addr;
	k->size = in->size;
	k->target = target;
	k->block = block;
	k->kind = (uint8_t)kind;
	k->loop_depth = 0;
}

int cfg_build(struct cfg_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
	      struct cfg *c)
{
	struct ins *v;
	size_t n, i, ne = 0, ecap = 0, ccap = 0, bcap = 0;
	uint8_t *leader;
	uint32_t *blk, b, norphans = 0;
	struct edge *e = NULL;
	uint32_t *npred;

	memset(c, 0, sizeof(*c));
	c->addr = addr;
	c->size = len;
	v = decode(d, code, len, addr, &n, &c->bad_bytes);
	c->ninsns = (uint32_t)n;
	if (!n) {
		free(v);
		return 0;
	}
	leader = xcalloc(n, 1);
	blk = xmalloc(n * sizeof(*blk));
	leader[0] = 1;
	for (i = 0; i < n; i++) {
		int k = v[i].kind;
		if ((k == I_JMP || k == I_JCC) && v[i].target >= addr && v[i].target < addr + len) {
			long j = find_insn(v, n, v[i].target);
			if (j >= 0)
				leader[j] = 1;
		}
		if ((k == I_JMP || k == I_JMP_SLOT || k == I_JMP_IND || k == I_JCC || k == I_END ||
		     k == I_RET ||
		     v[i].nofall) && i + 1 < n)
			leader[i + 1] = 1;
	}
	/* blocks */
	for (i = 0; i < n; i++) {
		if (leader[i]) {
			struct cfg_block *bl;
			if (c->nblocks + 1 >= bcap) {	/* room for the dispatch block too */
				bcap = bcap ? bcap * 2 : 16;
				c->blocks = xrealloc(c->blocks, bcap * sizeof(*c->blocks));
			}
			bl = &c->blocks[c->nblocks++];
			memset(bl, 0, sizeof(*bl));
			bl->addr = v[i].addr;
		}
		b = c->nblocks - 1;
		blk[i] = b;
		c->blocks[b].size += v[i].size;
		c->blocks[b].ninsns++;
		if (v[i].kind == I_CALL || v[i].kind == I_CALL_SLOT || v[i].kind == I_CALL_IND) {
			c->blocks[b].ncalls++;
			add_call(c, &ccap, &v[i], v[i].kind == I_CALL_IND ? 0 : v[i].target, b,
				 v[i].kind == I_CALL	  ? CFG_CALL_DIRECT
				 : v[i].kind == I_CALL_SLOT ? CFG_CALL_SLOT
							    : CFG_CALL_INDIRECT);
		}
	}
	/* edges, from each block's last instruction */
	for (i = 0; i < n; i++) {
		int k = v[i].kind, internal;
		long j;

		if (i + 1 < n && !leader[i + 1])
			continue;
		b = blk[i];
		internal = v[i].target >= addr && v[i].target < addr + len;
		j = (k == I_JMP || k == I_JCC) && internal ? find_insn(v, n, v[i].target) : -1;
		if (k == I_JCC || k == I_JMP) {
			if (j >= 0) {
				add_edge(&e, &ne, &ecap, b, blk[j]);
			} else {
				c->blocks[b].flags |= CFG_B_EXIT;
				if (k == I_JMP && !internal)
					add_call(c, &ccap, &v[i], v[i].target, b, CFG_CALL_TAIL);
			}
		} else if (k == I_JMP_SLOT) {
			c->blocks[b].flags |= CFG_B_EXIT;
			add_call(c, &ccap, &v[i], v[i].target, b, CFG_CALL_TAIL_SLOT);
		} else if (k == I_JMP_IND) {
			c->blocks[b].flags |= CFG_B_INDIRECT;
			c->indirect_jumps++;
		} else if (k == I_END || k == I_RET) {
			c->blocks[b].flags |= CFG_B_RET;
		}
		if (k != I_JMP && k != I_JMP_SLOT && k != I_JMP_IND && k != I_END && k != I_RET &&
		    !v[i].nofall &&
		    i + 1 < n)
			add_edge(&e, &ne, &ecap, b, blk[i + 1]);
	}
	/* An indirect jump is taken to go to every block nothing else reaches
	 * (its table's targets): through one virtual dispatch block, so a
	 * switch or computed-goto loop is still seen as a loop.  */
	npred = xcalloc(c->nblocks + 1, sizeof(*npred));
	for (i = 0; i < ne; i++)
		npred[e[i].to]++;
	for (b = 1; b < c->nblocks; b++)
		norphans += npred[b] == 0;
	if (c->indirect_jumps && norphans) {
		uint32_t disp = c->nblocks;
		struct cfg_block *bl = &c->blocks[c->nblocks++];
		memset(bl, 0, sizeof(*bl));
		bl->flags = CFG_B_DISPATCH;
		for (b = 0; b < disp; b++)
			if (c->blocks[b].flags & CFG_B_INDIRECT)
				add_edge(&e, &ne, &ecap, b, disp);
		for (b = 1; b < disp; b++)
			if (npred[b] == 0)
				add_edge(&e, &ne, &ecap, disp, b);
	}
	free(npred);
	/* successor lists (edges are already grouped by source but the
	 * dispatch ones; count and place) */
	{
		uint32_t *pos = xcalloc(c->nblocks + 1, sizeof(*pos));
		for (i = 0; i < ne; i++)
			c->blocks[e[i].from].nsucc++;
		for (b = 0; b < c->nblocks; b++) {
			c->blocks[b].succ = c->nsucc;
			pos[b] = c->nsucc;
			c->nsucc += c->blocks[b].nsucc;
		}
		c->succ = xmalloc((c->nsucc + 1) * sizeof(*c->succ));
		for (i = 0; i < ne; i++)
			c->succ[pos[e[i].from]++] = e[i].to;
		free(pos);
	}
	free(e);
	free(leader);
	free(blk);
	free(v);
	cfg_analyse_loops(c);
	return 0;
}

long cfg_exits(struct cfg_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
	       struct cfg_exit **out)
{
	struct cfg_exit *e = NULL;
	size_t n, i, ne = 0;
	uint32_t bad;
	struct ins *v = decode(d, code, len, addr, &n, &bad);

	*out = NULL;
	if (bad) {
		free(v);
		return -1;
	}
	for (i = 0; i < n; i++) {
		uint8_t kind;
		if (v[i].kind == I_RET)
			kind = CFG_EXIT_RET;
		else if (v[i].kind == I_JMP && (v[i].target < addr || v[i].target >= addr + len))
			kind = CFG_EXIT_JMP;
		else if (v[i].kind == I_JMP_SLOT || (v[i].kind == I_JMP_IND && !v[i].notrack) ||
			 (v[i].kind == I_JCC && (v[i].target < addr || v[i].target >= addr + len)))
			kind = CFG_EXIT_UNKNOWN;	/* a probe on a jcc fires taken or not */
		else
			continue;
		e = xrealloc(e, (ne + 1) * sizeof(*e));
		e[ne].addr = v[i].addr;
		e[ne].target = kind == CFG_EXIT_JMP ? v[i].target : 0;
		e[ne++].kind = kind;
	}
	free(v);
	*out = e;
	return (long)ne;
}

void cfg_release(struct cfg *c)
{
	free(c->blocks);
	free(c->succ);
	free(c->calls);
	memset(c, 0, sizeof(*c));
}

size_t cfg_each_insn(struct cfg_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
		     int (*fn)(const struct cfg_insn *insn, void *arg), void *arg)
{
	size_t off = 0, count = 0;
	struct cfg_insn out;

	while (off < len) {
		const uint8_t *p = code + off;
		size_t left = len - off;
		uint64_t a = addr + off;

		while (cs_disasm_iter(d->cs, &p, &left, &a, d->insn)) {
			out.addr = d->insn->address;
			out.size = d->insn->size;
			snprintf(out.mnemonic, sizeof(out.mnemonic), "%s", d->insn->mnemonic);
			snprintf(out.operands, sizeof(out.operands), "%s", d->insn->op_str);
			count++;
			if (fn && fn(&out, arg))
				return count;
		}
		off = len - left;
		if (off < len) {
			out.addr = addr + off;
			out.size = 1;
			snprintf(out.mnemonic, sizeof(out.mnemonic), "(bad)");
			snprintf(out.operands, sizeof(out.operands), "0x%02x", code[off]);
			off++;
			count++;
			if (fn && fn(&out, arg))
				return count;
		}
	}
	return count;
}

/* --- loops -------------------------------------------------------------- */

static uint32_t intersect(const uint32_t *idom, const uint32_t *rpo_no, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (rpo_no[a] > rpo_no[b])
			a = idom[a];
		while (rpo_no[b] > rpo_no[a])
			b = idom[b];
	}
	return a;
}

#define NONE UINT32_MAX

void cfg_analyse_loops(struct cfg *c)
{
	uint32_t n = c->nblocks, i, k, nrpo = 0, top, clock = 0;
	uint32_t *pred_start, *pred, *rpo, *rpo_no, *idom, *stack, *iter, *pre, *post, *kid_start,
		*kids, *mark, *work, *fstack;
	uint8_t *fwd, *inirr;
	int changed;

	c->nloops = 0;
	c->loop_depth = 0;
	c->calls_in_loops = 0;
	if (!n)
		return;
	/* predecessors */
	pred_start = xcalloc(n + 1, sizeof(*pred_start));
	pred = xmalloc((c->nsucc + 1) * sizeof(*pred));
	for (i = 0; i < c->nsucc; i++)
		pred_start[c->succ[i] + 1]++;
	for (i = 0; i < n; i++)
		pred_start[i + 1] += pred_start[i];
	{
		uint32_t *pos = xmalloc((n + 1) * sizeof(*pos));
		memcpy(pos, pred_start, (n + 1) * sizeof(*pos));
		for (i = 0; i < n; i++)
			for (k = 0; k < c->blocks[i].nsucc; k++)
				pred[pos[c->succ[c->blocks[i].succ + k]]++] = i;
		free(pos);
	}
	/* reverse postorder from block 0 (iterative DFS) */
	rpo = xmalloc(n * sizeof(*rpo));
	rpo_no = xmalloc(n * sizeof(*rpo_no));
	stack = xmalloc(n * sizeof(*stack));
	iter = xcalloc(n, sizeof(*iter));
	for (i = 0; i < n; i++)
		rpo_no[i] = NONE;
	{
		uint32_t *post_order = xmalloc(n * sizeof(*post_order)), npost = 0;
		uint8_t *seen = xcalloc(n, 1);
		top = 0;
		stack[top++] = 0;
		seen[0] = 1;
		while (top) {
			uint32_t x = stack[top - 1];
			if (iter[x] < c->blocks[x].nsucc) {
				uint32_t y = c->succ[c->blocks[x].succ + iter[x]++];
				if (!seen[y]) {
					seen[y] = 1;
					stack[top++] = y;
				}
			} else {
				post_order[npost++] = x;
				top--;
			}
		}
		for (i = 0; i < npost; i++) {
			rpo[i] = post_order[npost - 1 - i];
			rpo_no[rpo[i]] = i;
		}
		nrpo = npost;
		free(post_order);
		free(seen);
	}
	/* immediate dominators (Cooper, Harvey, Kennedy) */
	idom = xmalloc(n * sizeof(*idom));
	for (i = 0; i < n; i++)
		idom[i] = NONE;
	idom[0] = 0;
	do {
		changed = 0;
		for (i = 1; i < nrpo; i++) {
			uint32_t x = rpo[i], nid = NONE;
			for (k = pred_start[x]; k < pred_start[x + 1]; k++) {
				uint32_t p = pred[k];
				if (idom[p] == NONE)
					continue;
				nid = nid == NONE ? p : intersect(idom, rpo_no, p, nid);
			}
			if (nid != NONE && idom[x] != nid) {
				idom[x] = nid;
				changed = 1;
			}
		}
	} while (changed);
	/* dominator tree numbering: h dominates x iff pre[h] <= pre[x] and
	 * post[x] <= post[h] */
	kid_start = xcalloc(n + 1, sizeof(*kid_start));
	kids = xmalloc(n * sizeof(*kids));
	for (i = 1; i < nrpo; i++)
		kid_start[idom[rpo[i]] + 1]++;
	for (i = 0; i < n; i++)
		kid_start[i + 1] += kid_start[i];
	{
		uint32_t *pos = xmalloc((n + 1) * sizeof(*pos));
		memcpy(pos, kid_start, (n + 1) * sizeof(*pos));
		for (i = 1; i < nrpo; i++)
			kids[pos[idom[rpo[i]]]++] = rpo[i];
		free(pos);
	}
	pre = xmalloc(n * sizeof(*pre));
	post = xmalloc(n * sizeof(*post));
	memset(iter, 0, n * sizeof(*iter));
	top = 0;
	stack[top++] = 0;
	pre[0] = clock++;
	while (top) {
		uint32_t x = stack[top - 1];
		if (kid_start[x] + iter[x] < kid_start[x + 1]) {
			uint32_t y = kids[kid_start[x] + iter[x]++];
			pre[y] = clock++;
			stack[top++] = y;
		} else {
			post[x] = clock++;
			top--;
		}
	}
	/* natural loops: for each header, the blocks that reach one of its
	 * back edges' sources without passing through it; then irreducible
	 * cycles */
	mark = xmalloc(n * sizeof(*mark));
	work = xmalloc(n * sizeof(*work));
	fwd = xmalloc(n);
	inirr = xmalloc(n);
	fstack = xmalloc(n * sizeof(*fstack));
	for (i = 0; i < n; i++) {
		mark[i] = NONE;
		c->blocks[i].loop_depth = 0;
		c->blocks[i].flags &= (uint8_t)~(CFG_B_HEADER | CFG_B_UNREACHED);
		if (rpo_no[i] == NONE)
			c->blocks[i].flags |= CFG_B_UNREACHED;
	}
	/* pass 1: natural loops, one per header, nested by the blocks they share */
	for (i = 0; i < nrpo; i++) {
		uint32_t h = rpo[i], nw = 0;
		for (k = pred_start[h]; k < pred_start[h + 1]; k++) {
			uint32_t u = pred[k];
			if (rpo_no[u] == NONE || !(pre[h] <= pre[u] && post[u] <= post[h]))
				continue;	/* h does not dominate u: no back edge */
			if (mark[h] != h) {
				mark[h] = h;
				c->blocks[h].flags |= CFG_B_HEADER;
				c->nloops++;
			}
			if (mark[u] != h) {
				mark[u] = h;
				work[nw++] = u;
			}
		}
		while (nw) {
			uint32_t x = work[--nw];
			for (k = pred_start[x]; k < pred_start[x + 1]; k++) {
				uint32_t p = pred[k];
				if (rpo_no[p] != NONE && mark[p] != h) {
					mark[p] = h;
					work[nw++] = p;
				}
			}
		}
		if (mark[h] == h)
			for (k = 0; k < n; k++)
				if (mark[k] == h && c->blocks[k].loop_depth < UINT8_MAX)
					c->blocks[k].loop_depth++;
	}
	/* pass 2: a retreating edge to a block that does not dominate its
	 * source closes a cycle entered at more than one place (irreducible).
	 * Its body is what reaches the source without passing the target and
	 * is reached from the target; every block in some such body gets one
	 * more level, once: overlapping bodies are one region, not a nest.  */
	memset(inirr, 0, n);
	for (i = 0; i < n; i++)
		mark[i] = NONE;
	for (i = 0; i < nrpo; i++) {
		uint32_t h = rpo[i], nw = 0, nf = 0, x;
		for (k = pred_start[h]; k < pred_start[h + 1]; k++) {
			uint32_t u = pred[k];
			if (rpo_no[u] == NONE || rpo_no[u] < rpo_no[h] ||
			    (pre[h] <= pre[u] && post[u] <= post[h]))
				continue;
			if (mark[h] != h) {
				mark[h] = h;
				if (!(c->blocks[h].flags & CFG_B_HEADER)) {
					c->blocks[h].flags |= CFG_B_HEADER;
					c->nloops++;
				}
			}
			if (mark[u] != h) {
				mark[u] = h;
				work[nw++] = u;
			}
		}
		if (mark[h] != h)
			continue;
		memset(fwd, 0, n);
		fwd[h] = 1;
		fstack[nf++] = h;
		while (nf) {
			x = fstack[--nf];
			for (k = 0; k < c->blocks[x].nsucc; k++) {
				uint32_t y = c->succ[c->blocks[x].succ + k];
				if (!fwd[y]) {
					fwd[y] = 1;
					fstack[nf++] = y;
				}
			}
		}
		while (nw) {
			x = work[--nw];
			for (k = pred_start[x]; k < pred_start[x + 1]; k++) {
				uint32_t p = pred[k];
				if (rpo_no[p] != NONE && mark[p] != h && fwd[p]) {
					mark[p] = h;
					work[nw++] = p;
				}
			}
		}
		for (k = 0; k < n; k++)
			if (mark[k] == h)
				inirr[k] = 1;
	}
	for (i = 0; i < n; i++)
		if (inirr[i] && c->blocks[i].loop_depth < UINT8_MAX)
			c->blocks[i].loop_depth++;
	for (i = 0; i < n; i++) {
		if (c->blocks[i].loop_depth > c->loop_depth)
			c->loop_depth = c->blocks[i].loop_depth;
		if (c->blocks[i].loop_depth)
			c->calls_in_loops += c->blocks[i].ncalls;
	}
	for (i = 0; c->calls && i < c->ncalls; i++)
		if (c->calls[i].block < n)
			c->calls[i].loop_depth = c->blocks[c->calls[i].block].loop_depth;
	free(pred_start);
	free(pred);
	free(rpo);
	free(rpo_no);
	free(stack);
	free(iter);
	free(idom);
	free(kid_start);
	free(kids);
	free(pre);
	free(post);
	free(mark);
	free(work);
	free(fwd);
	free(inirr);
	free(fstack);
}

enum cfg_complexity cfg_complexity_of_depth(unsigned depth)
{
	return depth >= CFG_QUARTIC ? CFG_QUARTIC : (enum cfg_complexity)depth;
}

static const char *const complexity_names[] = {
	"constant", "linear", "quadratic", "cubic", "quartic",
};

const char *cfg_complexity_name(enum cfg_complexity c)
{
	return (unsigned)c <= CFG_QUARTIC ? complexity_names[c] : "unknown";
}

int cfg_complexity_parse(const char *name)
{
	int i;

	for (i = 0; i <= CFG_QUARTIC; i++)
		if (!strcmp(name, complexity_names[i]))
			return i;
	return -1;
}
