/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A self-contained interactive flame graph (SVG with an inline script: click
 * a frame to zoom into it, click "reset" to come back), drawn from folded
 * stacks.  Every node of the stack trie is one <g class="frame">, so the
 * frame count can be checked against the folded input.  */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

struct node {
	char *name;
	double value;		/* inclusive */
	double base;		/* differential graphs: the same frame's value in A */
	struct node **kids;
	size_t nkids;
};

static struct node *child(struct node *n, const char *name, size_t len)
{
	size_t i;
	struct node *c;

	for (i = 0; i < n->nkids; i++)
		if (strlen(n->kids[i]->name) == len && !strncmp(n->kids[i]->name, name, len))
			return n->kids[i];
	c = xcalloc(1, sizeof(*c));
	c->name = strndup(name, len);
	n->kids = xrealloc(n->kids, (n->nkids + 1) * sizeof(*n->kids));
	n->kids[n->nkids++] = c;
	return c;
}

static void free_node(struct node *n)
{
	size_t i;

	for (i = 0; i < n->nkids; i++)
		free_node(n->kids[i]);
	free(n->kids);
	free(n->name);
	free(n);
}

static void xml(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&apos;"); break;
		default:
			if ((unsigned char)*s >= 0x20)
				strbuf_addch(sb, *s);
		}
	}
}

#define WIDTH 1200.0
#define FRAME_H 17
#define PAD_TOP 40

static int max_depth(const struct node *n)
{
	int m = 0;
	size_t i;

	for (i = 0; i < n->nkids; i++) {
		int d = max_depth(n->kids[i]) + 1;
		if (d > m)
			m = d;
	}
	return m;
}

/* A differential frame's colour: its share of B's total against its share
 * of A's (so that runs of different length compare), red where it grew,
 * blue where it shrank, white when equal; full colour at 2x.  */
static void diff_colour(const struct node *n, double total, double base_total, unsigned rgb[3])
{
	double b = total > 0 ? n->value / total : 0, a = base_total > 0 ? n->base / base_total : 0;
	double r = a > 0 ? b / a : b > 0 ? 4 : 1, t;

	t = r >= 1 ? (r - 1) : (1 / r - 1);	/* 0 equal, 1 at 2x */
	if (t > 1)
		t = 1;
	if (r >= 1) {
		rgb[0] = 255, rgb[1] = (unsigned)(255 - 175 * t), rgb[2] = (unsigned)(255 - 175 * t);
	} else {
		rgb[0] = (unsigned)(255 - 175 * t), rgb[1] = (unsigned)(255 - 175 * t), rgb[2] = 255;
	}
}

static void draw(struct strbuf *sb, const struct node *n, double x, int depth, double scale,
		 double total, int height, size_t *frames, int diff, double base_total)
{
	unsigned rgb[3];
	double w = n->value * scale, cx = x;
	uint32_t h = 2166136261u;
	const char *c;
	size_t i;

	for (c = n->name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	(*frames)++;
	strbuf_addf(sb, "<g class=\"frame\" data-x=\"%.3f\" data-w=\"%.3f\" data-d=\"%d\">", x, w,
		    depth);
	strbuf_addstr(sb, "<title>");
	xml(sb, n->name);
	if (diff) {
		double sa = base_total > 0 ? 100 * n->base / base_total : 0;
		double sb_ = total > 0 ? 100 * n->value / total : 0;
		strbuf_addf(sb, " (%.0f, %.2f%% of B; A: %.0f, %.2f%%; %+.2f points)</title>", n->value,
			    sb_, n->base, sa, sb_ - sa);
		diff_colour(n, total, base_total, rgb);
	} else {
		strbuf_addf(sb, " (%.0f, %.2f%%)</title>", n->value,
			    total > 0 ? 100 * n->value / total : 0);
		rgb[0] = 205 + h % 50, rgb[1] = 90 + (h >> 8) % 130, rgb[2] = 40 + (h >> 16) % 50;
	}
	strbuf_addf(sb, "<rect x=\"%.3f\" y=\"%d\" width=\"%.3f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" "
			"rx=\"2\"/>",
		    x, height - (depth + 1) * FRAME_H, w > 0.1 ? w - 0.1 : w, FRAME_H - 1, rgb[0],
		    rgb[1], rgb[2]);
	strbuf_addf(sb, "<text x=\"%.3f\" y=\"%d\">", x + 3, height - depth * FRAME_H - 5);
	if (w > 30) {
		size_t fit = (size_t)((w - 6) / 7), len = strlen(n->name);
		if (len <= fit) {
			xml(sb, n->name);
		} else if (fit > 2) {
			char *cut = strndup(n->name, fit - 2);
			xml(sb, cut);
			strbuf_addstr(sb, "..");
			free(cut);
		}
	}
	strbuf_addstr(sb, "</text></g>\n");
	for (i = 0; i < n->nkids; i++) {
		draw(sb, n->kids[i], cx, depth + 1, scale, total, height, frames, diff, base_total);
		cx += n->kids[i]->value * scale;
	}
}

/* Adds folded stacks to the trie: to value, or to base when base is set.  */
static void add_folded(struct node *root, const char *folded, int base)
{
	const char *line = folded;

	while (line && *line) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *sp = end;
		double v;
		while (sp > line && sp[-1] != ' ')
			sp--;
		if (sp > line) {
			struct node *n = root;
			const char *f = line, *stop = sp - 1;
			v = strtod(sp, NULL);
			if (base)
				root->base += v;
			else
				root->value += v;
			while (f < stop) {
				const char *semi = memchr(f, ';', (size_t)(stop - f));
				const char *fe = semi ? semi : stop;
				n = child(n, f, (size_t)(fe - f));
				if (base)
					n->base += v;
				else
					n->value += v;
				f = semi ? semi + 1 : stop;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
}

static size_t render(struct node *root, const char *title, int diff, struct strbuf *svg);

size_t profile_flamegraph(const char *folded, const char *title, struct strbuf *svg)
{
	struct node *root = xcalloc(1, sizeof(*root));

	root->name = xstrdup("all");
	add_folded(root, folded, 0);
	return render(root, title, 0, svg);
}

size_t profile_flamegraph_diff(const char *folded_a, const char *folded_b, const char *title,
			       struct strbuf *svg)
{
	struct node *root = xcalloc(1, sizeof(*root));

	root->name = xstrdup("all");
	add_folded(root, folded_b, 0);
	add_folded(root, folded_a, 1);
	return render(root, title, 1, svg);
}

static size_t render(struct node *root, const char *title, int diff, struct strbuf *svg)
{
	size_t frames = 0, i;
	int height;
	double x = 10, scale;

	height = (max_depth(root) + 1) * FRAME_H + PAD_TOP + 10;
	scale = root->value > 0 ? (WIDTH - 20) / root->value : 0;
	strbuf_addf(svg,
		    "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		    "<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" viewBox=\"0 0 %.0f %d\" "
		    "xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n"
		    "<style>text{font:12px monospace;fill:#000;pointer-events:none}"
		    ".frame:hover rect{stroke:#000;stroke-width:0.5}#title{font-size:17px}"
		    "#reset{cursor:pointer;fill:#246}</style>\n"
		    "<rect width=\"100%%\" height=\"100%%\" fill=\"#fbfaf5\"/>\n"
		    "<text id=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">",
		    WIDTH, height, WIDTH, height, WIDTH / 2);
	xml(svg, title);
	strbuf_addstr(svg, "</text>\n<text id=\"reset\" x=\"10\" y=\"24\" onclick=\"unzoom()\">"
			   "reset zoom</text>\n<g id=\"frames\">\n");
	for (i = 0; i < root->nkids; i++) {
		draw(svg, root->kids[i], x, 0, scale, root->value, height - 10, &frames, diff,
		     root->base);
		x += root->kids[i]->value * scale;
	}
	strbuf_addstr(svg,
		      "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n"
		      "var frames;\n"
		      "function init(evt) {\n"
		      "  frames = document.querySelectorAll('g.frame');\n"
		      "  frames.forEach(function (g) { g.onclick = function () { zoom(g); }; });\n"
		      "}\n"
		      "function place(g, x, w) {\n"
		      "  var r = g.querySelector('rect'), t = g.querySelector('text');\n"
		      "  r.setAttribute('x', x); r.setAttribute('width', Math.max(w - 0.1, 0));\n"
		      "  t.setAttribute('x', x + 3);\n"
		      "  var name = g.querySelector('title').textContent.replace(/ \\([^(]*$/, '');\n"
		      "  var fit = Math.floor((w - 6) / 7);\n"
		      "  t.textContent = w < 30 ? '' : name.length <= fit ? name : name.slice(0, fit - 2) + '..';\n"
		      "}\n"
		      "function zoom(z) {\n"
		      "  var zx = +z.dataset.x, zw = +z.dataset.w, zd = +z.dataset.d, s = 1180 / zw;\n"
		      "  frames.forEach(function (g) {\n"
		      "    var x = +g.dataset.x, w = +g.dataset.w, d = +g.dataset.d;\n"
		      "    var inside = x >= zx - 1e-6 && x + w <= zx + zw + 1e-6;\n"
		      "    var below = d < zd && x <= zx + 1e-6 && x + w >= zx + zw - 1e-6;\n"
		      "    if (inside && d >= zd) { g.style.display = ''; place(g, 10 + (x - zx) * s, w * s); }\n"
		      "    else if (below) { g.style.display = ''; g.style.opacity = 0.6; place(g, 10, 1180); }\n"
		      "    else g.style.display = 'none';\n"
		      "  });\n"
		      "}\n"
		      "function unzoom() {\n"
		      "  frames.forEach(function (g) { g.style.display = ''; g.style.opacity = 1;\n"
		      "    place(g, +g.dataset.x, +g.dataset.w); });\n"
		      "}\n"
		      "]]></script>\n</svg>\n");
	free_node(root);
	return frames;
}
