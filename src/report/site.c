/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "report"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/profile.h"
#include "report/calls-view.h"
#include "report/history.h"
#include "report/site.h"
#include "store/aggregate.h"
#include "store/repo.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/log.h"

char *site_series_name(const char *function)
{
	struct strbuf sb = STRBUF_INIT;
	const unsigned char *p;

	for (p = (const unsigned char *)function; *p; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' ||
		    (*p == '.' && p != (const unsigned char *)function))
			strbuf_addch(&sb, (char)*p);
		else
			strbuf_addf(&sb, "_%02X", *p);
	if (sb.len > 200) {
		/* long template names: a prefix and a hash of the rest */
		char hex[SHA1_HEXSZ + 1];
		sha1_hex(function, strlen(function), hex);
		sb.len = 160;
		sb.buf[sb.len] = '\0';
		strbuf_addf(&sb, "_%.16s", hex);
	}
	strbuf_addstr(&sb, ".json");
	return strbuf_detach(&sb);
}

static void html_escape(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '<':
			strbuf_addstr(sb, "&lt;");
			break;
		case '>':
			strbuf_addstr(sb, "&gt;");
			break;
		case '&':
			strbuf_addstr(sb, "&amp;");
			break;
		case '"':
			strbuf_addstr(sb, "&quot;");
			break;
		case '\'':
			strbuf_addstr(sb, "&#39;");
			break;
		default:
			strbuf_addch(sb, *s);
		}
}

/* JSON inside <script>: no '<' at all, so no "</script>" can end it early.  */
static void script_safe(struct strbuf *out, const struct strbuf *json)
{
	size_t i;

	for (i = 0; i < json->len; i++)
		if (json->buf[i] == '<')
			strbuf_addstr(out, "\\u003c");
		else
			strbuf_addch(out, json->buf[i]);
}

/* Replaces only a file perun wrote: one there already must be a regular
 * file of ours that no one else may write (the directories are trusted).  */
static int write_text(const char *path, const struct strbuf *sb)
{
	int fd = fs_open_trusted(path, 0);

	if (fd >= 0)
		close(fd);
	else if (errno != ENOENT)
		return -1;
	return fs_write_atomic(path, sb->buf ? sb->buf : "", sb->len, 0644);
}

#define SITE_FIX "remove it or give another -o DIR"
/* The file that says perun wrote the site in a directory.  */
#define SITE_MARKER ".perun-report"

/* A directory of the site, under a trusted DIR: checked from '/' without
 * following a link, and created beside its verified parent.  */
static int site_subdir(const char *dir, const char *sub)
{
	char *path = xstrfmt("%s/%s", dir, sub);
	int ret = fs_make_trusted_dir(path, 0755, SITE_FIX);

	free(path);
	return ret;
}

/* The latency of each function at the newest commit with profiles (its
 * first profile, as its flame graph): hist's quantiles.  */
struct site_latency {
	const char *sha;	/* NULL: none */
	struct calls_latency *rows;
	size_t n;
};

/* graphs/flame/<sha>.svg of each commit's first matching profile, and the
 * newest one's latency into *lat.  */
static int write_flames(const struct history *h, const struct repo *r, const char *dir,
			size_t *written, struct site_latency *lat)
{
	size_t i, last = h->nc;

	while (last > 0 && !h->c[last - 1].first[0])
		last--;
	*written = 0;
	for (i = 0; i < h->nc; i++) {
		struct strbuf json = STRBUF_INIT, folded = STRBUF_INIT, svg = STRBUF_INIT,
			      title = STRBUF_INIT;
		struct profile p = {0};
		char *path;
		int bad;
		if (!h->c[i].first[0])
			continue;
		if (store_read_object(r->dir, h->c[i].first, &json, NULL) < 0 ||
		    profile_read(&p, json.buf, json.len, h->c[i].first) < 0) {
			strbuf_release(&json);
			return -1;
		}
		if (i + 1 == last &&
		    calls_latency(&p, h->c[i].first, &lat->rows, &lat->n) == 0 && lat->n)
			lat->sha = h->c[i].sha;
		profile_folded(&p, &folded);
		strbuf_addf(&title, "%s at %.7s: %s", h->cmd ? h->cmd : "", h->c[i].sha,
			    h->c[i].subject);
		profile_flamegraph(strbuf_str(&folded), title.buf, &svg);
		path = xstrfmt("%s/graphs/flame/%s.svg", dir, h->c[i].sha);
		bad = write_text(path, &svg) < 0;
		free(path);
		profile_release(&p);
		strbuf_release(&json);
		strbuf_release(&folded);
		strbuf_release(&svg);
		strbuf_release(&title);
		if (bad)
			return -1;
		(*written)++;
	}
	return 0;
}

static void write_latency_json(const struct site_latency *l, struct strbuf *sb)
{
	size_t i, j;

	strbuf_addstr(sb, ",\"latency\":");
	if (!l->sha) {
		strbuf_addstr(sb, "null");
		return;
	}
	strbuf_addf(sb, "{\"commit\":\"%s\",\"functions\":[", l->sha);
	for (i = 0; i < l->n; i++) {
		strbuf_addstr(sb, i ? ",{\"name\":" : "{\"name\":");
		strbuf_add_json_str(sb, l->rows[i].name);
		strbuf_addf(sb, ",\"calls\":%" PRIu64, l->rows[i].count);
		for (j = 0; j < 4; j++)
			strbuf_addf(sb, ",\"%s\":%.17g", calls_latency_qname[j], l->rows[i].q[j]);
		strbuf_addf(sb, ",\"max\":%.17g,\"from\":\"%s\"}", l->rows[i].max,
			    l->rows[i].from_hist ? "log2" : "calls");
	}
	strbuf_addstr(sb, "]}");
}

static void write_latency_html(const struct site_latency *l, struct strbuf *out)
{
	size_t i, j;

	if (!l->sha)
		return;
	strbuf_addf(out,
		    "<h2>Latency at <a href=\"graphs/flame/%s.svg\">%.7s</a></h2>\n<p>Per "
		    "function, the newest commit's first profile: quantiles of its exact calls "
		    "(or of its log2 histograms, from log2), as <code>perun show --format "
		    "hist</code> prints them.</p>\n<table id=\"latency\"><tr><th>function</th>"
		    "<th>calls</th>",
		    l->sha, l->sha);
	for (j = 0; j < 4; j++)
		strbuf_addf(out, "<th>%s</th>", calls_latency_qname[j]);
	strbuf_addstr(out, "<th>max</th><th>from</th></tr>\n");
	for (i = 0; i < l->n; i++) {
		strbuf_addstr(out, "<tr><td>");
		html_escape(out, l->rows[i].name);
		strbuf_addf(out, "</td><td class=\"num\">%" PRIu64 "</td>", l->rows[i].count);
		for (j = 0; j < 4; j++) {
			strbuf_addstr(out, "<td class=\"num\">");
			strbuf_add_ns(out, l->rows[i].q[j]);
			strbuf_addstr(out, "</td>");
		}
		strbuf_addstr(out, "<td class=\"num\">");
		strbuf_add_ns(out, l->rows[i].max);
		strbuf_addf(out, "</td><td>%s</td></tr>\n", l->rows[i].from_hist ? "log2" : "calls");
	}
	strbuf_addstr(out, "</table>\n");
}

/* Steps that made a function slower, largest first.  */
struct regression {
	const struct history_series *s;
	const struct history_step *st;
	const char *stat; /* "median" or "p95" */
};

/* The median's steps first (what most calls felt), then the p95's; each
 * group largest first.  */
static int cmp_regression(const void *a, const void *b)
{
	const struct regression *p = a, *q = b;
	double x = p->st->rel, y = q->st->rel;
	int mp = !strcmp(p->stat, "median"), mq = !strcmp(q->stat, "median");

	if (mp != mq)
		return mq - mp;
	return x < y ? 1 : x > y ? -1 : 0;
}

static size_t regressions(const struct history *h, struct regression **out)
{
	size_t i, j, n = 0;

	*out = NULL;
	for (i = 0; i < h->ns; i++) {
		for (j = 0; j < h->s[i].nsteps; j++)
			if (h->s[i].steps[j].rel > 0) {
				*out = xrealloc(*out, (n + 1) * sizeof(**out));
				(*out)[n].s = &h->s[i];
				(*out)[n].st = &h->s[i].steps[j];
				(*out)[n].stat = "median";
				n++;
			}
		for (j = 0; j < h->s[i].np95_steps; j++)
			if (h->s[i].p95_steps[j].rel > 0) {
				*out = xrealloc(*out, (n + 1) * sizeof(**out));
				(*out)[n].s = &h->s[i];
				(*out)[n].st = &h->s[i].p95_steps[j];
				(*out)[n].stat = "p95";
				n++;
			}
	}
	if (n)
		qsort(*out, n, sizeof(**out), cmp_regression);
	return n;
}

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<title>perun report</title>\n<style>\n"
    "body{font:14px/1.4 sans-serif;margin:1.5em;color:#222}\n"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}\n"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}\n"
    "td.num{text-align:right}\n.incomplete{color:#b00;margin:0}\n.up{color:#b00}.down{color:#070}\n"
    "section.fn{margin:0 0 1.2em}\nsection.fn h2{font-size:15px;margin:.2em 0}\n"
    "svg.graph{border:1px solid #ddd;background:#fff}\n"
    ".legend span{margin-right:1.5em}\n"
    "</style></head>\n<body>\n";

/* Draws every series of the embedded data as an SVG graph; written for this
 * page, no library and no network.  */
static const char page_script[] =
    "<script>\n"
    "(function () {\n"
    "  'use strict';\n"
    "  var d = JSON.parse(document.getElementById('data').textContent);\n"
    "  var NS = 'http://www.w3.org/2000/svg';\n"
    "  var host = document.getElementById('graphs'), drawn = 0;\n"
    "  function el(tag, attrs, parent) {\n"
    "    var e = document.createElementNS(NS, tag);\n"
    "    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });\n"
    "    if (parent) parent.appendChild(e);\n"
    "    return e;\n"
    "  }\n"
    "  function text(parent, x, y, s, attrs) {\n"
    "    var t = el('text', Object.assign({x: x, y: y, 'font-size': 11}, attrs || {}), parent);\n"
    "    t.textContent = s;\n"
    "    return t;\n"
    "  }\n"
    "  function fmt(v) {\n"
    "    if (v === null || v === undefined) return '-';\n"
    "    if (v === 0) return '0';\n"
    "    if (v >= 1e9) return (v / 1e9).toPrecision(3) + ' s';\n"
    "    if (v >= 1e6) return (v / 1e6).toPrecision(3) + ' ms';\n"
    "    if (v >= 1e3) return (v / 1e3).toPrecision(3) + ' us';\n"
    "    return v.toPrecision(3) + ' ns';\n"
    "  }\n"
    "  var m = d.commits.length, W = 780, H = 230, L = 70, R = 40, T = 14, B = 42;\n"
    "  function X(i) { return L + (m > 1 ? i * (W - L - R) / (m - 1) : (W - L - R) / 2); }\n"
    "  d.series.forEach(function (s) {\n"
    "    var sec = document.createElement('section');\n"
    "    sec.className = 'fn';\n"
    "    sec.id = 'fn-' + drawn;\n"
    "    var h = document.createElement('h2');\n"
    "    h.textContent = s.function + (s.steps.length ? ' \\u2014 ' + s.steps.length +\n"
    "      (s.steps.length === 1 ? ' step' : ' steps') : '');\n"
    "    sec.appendChild(h);\n"
    "    var max = 0;\n"
    "    s.p95.concat(s.median).forEach(function (v) { if (v !== null && v > max) max = v; });\n"
    "    max = (max || 1) * 1.1;\n"
    "    function Y(v) { return T + (H - T - B) * (1 - v / max); }\n"
    "    var svg = el('svg', {'class': 'graph', width: W, height: H,\n"
    "      viewBox: '0 0 ' + W + ' ' + H, role: 'img'}, sec);\n"
    "    el('title', {}, svg).textContent = s.function + ': median and p95 over commits';\n"
    "    el('line', {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#888'}, svg);\n"
    "    el('line', {x1: L, y1: T, x2: L, y2: H - B, stroke: '#888'}, svg);\n"
    "    [0, 0.5, 1].forEach(function (f) {\n"
    "      var v = max / 1.1 * f;\n"
    "      text(svg, L - 6, Y(v) + 4, fmt(v), {'text-anchor': 'end'});\n"
    "      el('line', {x1: L, y1: Y(v), x2: W - R, y2: Y(v), stroke: '#eee'}, svg);\n"
    "    });\n"
    "    var every = Math.max(1, Math.ceil(m / 8));\n"
    "    d.commits.forEach(function (c, i) {\n"
    "      if (i % every === 0 || i === m - 1)\n"
    "        text(svg, X(i), H - B + 16, c.sha.slice(0, 7), {'text-anchor': 'middle'});\n"
    "    });\n"
    "    var marks = s.steps.map(function (st) { return {st: st, what: ''}; })\n"
    "      .concat(s.p95_steps.map(function (st) { return {st: st, what: 'p95 '}; }));\n"
    "    marks.sort(function (a, b) { return a.st.index - b.st.index; });\n"
    "    var rows = [], labels = [];\n"
    "    marks.forEach(function (mk) {\n"
    "      var st = mk.st, x = st.index > 0 ? (X(st.index - 1) + X(st.index)) / 2 : X(0);\n"
    "      var up = st.rel >= 0, colour = up ? '#d22' : '#282';\n"
    "      el('line', {'class': mk.what ? 'step p95-step' : 'step', x1: x, y1: T, x2: x,\n"
    "        y2: H - B, stroke: colour, 'stroke-width': mk.what ? 1.5 : 2,\n"
    "        'stroke-dasharray': mk.what ? '2 3' : '5 3'}, svg);\n"
    "      var label = mk.what + (up ? '+' : '') + (100 * st.rel).toFixed(1) + '% at ' +\n"
    "        st.commit.slice(0, 7), w = 6.2 * label.length + 8;\n"
    "      var left = x + 4 + w > W - 2 ? x - 4 - w : x + 4, row = 0;\n"
    "      while (rows[row] !== undefined && rows[row] > left) row++;\n"
    "      rows[row] = left + w;\n"
    "      var t = text(svg, left, T + 10 + 13 * row, label, {fill: colour, 'class': 'step-label'});\n"
    "      var bg = el('rect', {x: left - 2, y: T + 10 + 13 * row - 10, width: w - 4, height: 13,\n"
    "        fill: '#fff', 'fill-opacity': 0.85}, null);\n"
    "      svg.insertBefore(bg, t);\n"
    "      labels.push(bg, t);\n"
    "    });\n"
    "    [['p95', '#8fa8c8', '4 3'], ['normalised', '#e39b2d', '2 2'], ['median', '#1f5fbf', '']]\n"
    "    .forEach(function (k) {\n"
    "      var pts = [];\n"
    "      if (!s[k[0]]) return;\n"
    "      s[k[0]].forEach(function (v, i) { if (v !== null) pts.push(X(i) + ',' + Y(v)); });\n"
    "      el('polyline', {points: pts.join(' '), fill: 'none', stroke: k[1],\n"
    "        'stroke-width': 2, 'stroke-dasharray': k[2]}, svg);\n"
    "    });\n"
    "    s.median.forEach(function (v, i) {\n"
    "      if (v === null) return;\n"
    "      var c = el('circle', {'class': 'point', cx: X(i), cy: Y(v), r: 3.5, fill: '#1f5fbf'}, "
    "svg);\n"
    "      el('title', {}, c).textContent = d.commits[i].sha.slice(0, 7) + ' ' +\n"
    "        d.commits[i].subject + ': median ' + fmt(v) + ', p95 ' + fmt(s.p95[i]) +\n"
    "        ', ' + s.calls[i] + ' calls';\n"
    "    });\n"
    "    /* the step labels over the lines and points, on their white */\n"
    "    labels.forEach(function (e) { svg.appendChild(e); });\n"
    "    host.appendChild(sec);\n"
    "    drawn++;\n"
    "  });\n"
    "  document.body.setAttribute('data-rendered', String(drawn));\n"
    "})();\n"
    "</script>\n";

/* A table per release: every shard and time box merged.  */
static void write_aggregates(const struct agg *aggs, size_t naggs, struct strbuf *out)
{
	size_t i, j;

	strbuf_addf(out, "<h2>Aggregates (%zu release%s)</h2>\n", naggs, naggs == 1 ? "" : "s");
	for (i = 0; i < naggs; i++) {
		struct agg_func *t;
		size_t n = agg_totals(&aggs[i], &t);
		char *file = site_series_name(aggs[i].release);
		strbuf_addstr(out, "<h3>release ");
		html_escape(out, aggs[i].release);
		strbuf_addf(out,
			    "</h3>\n<p>%zu input profile%s; <a href=\"aggregates/%s\">JSON</a>"
			    "</p>\n<table class=\"aggregate\"><tr><th>function</th><th>calls</th>"
			    "<th>mean</th><th>median</th><th>p95</th><th>min</th><th>max</th>"
			    "</tr>\n",
			    aggs[i].n, aggs[i].n == 1 ? "" : "s", file);
		free(file);
		for (j = 0; j < n; j++) {
			strbuf_addstr(out, "<tr><td>");
			html_escape(out, t[j].name);
			strbuf_addf(out, "</td><td class=\"num\">%llu</td><td class=\"num\">",
				    (unsigned long long)t[j].calls);
			strbuf_add_ns(out, t[j].calls ? (double)t[j].total / (double)t[j].calls : NAN);
			strbuf_addstr(out, "</td><td class=\"num\">");
			strbuf_add_ns(out, log2_hist_quantile(t[j].hist, AGG_BUCKETS, 0.5,
						       (double)t[j].min, (double)t[j].max));
			strbuf_addstr(out, "</td><td class=\"num\">");
			strbuf_add_ns(out, log2_hist_quantile(t[j].hist, AGG_BUCKETS, 0.95,
						       (double)t[j].min, (double)t[j].max));
			strbuf_addstr(out, "</td><td class=\"num\">");
			strbuf_add_ns(out, (double)t[j].min);
			strbuf_addstr(out, "</td><td class=\"num\">");
			strbuf_add_ns(out, (double)t[j].max);
			strbuf_addstr(out, "</td></tr>\n");
		}
		strbuf_addstr(out, "</table>\n");
		agg_funcs_free(t, n);
	}
}

static void write_page(const struct history *h, const struct agg *aggs, size_t naggs,
		       const struct site_latency *lat, struct strbuf *out)
{
	struct strbuf data = STRBUF_INIT;
	struct regression *rg;
	size_t i, nr = regressions(h, &rg);

	strbuf_addstr(out, page_head);
	strbuf_addstr(out, "<h1>perun report</h1>\n<p>");
	html_escape(out, h->cmd ? h->cmd : "");
	if (h->args && *h->args) {
		strbuf_addch(out, ' ');
		html_escape(out, h->args);
	}
	if (h->workload && *h->workload) {
		strbuf_addstr(out, ", workload ");
		html_escape(out, h->workload);
	}
	strbuf_addstr(out, " (collector ");
	html_escape(out, h->collector ? h->collector : "");
	strbuf_addf(out,
		    "): %zu commit%s with profiles, first parents, oldest first; %zu "
		    "function%s.  Data: <a href=\"index.json\">index.json</a>, "
		    "<a href=\"graphs/\">graphs/</a>.</p>\n",
		    h->nc, h->nc == 1 ? "" : "s", h->ns, h->ns == 1 ? "" : "s");
	strbuf_addf(out, "<h2>Regressions (%zu)</h2>\n", nr);
	if (nr) {
		strbuf_addstr(out,
			      "<table id=\"regressions\"><tr><th>function</th><th>commit where "
			      "it starts</th><th>before</th><th>after</th><th>change</th>"
			      "<th>of</th></tr>\n");
		for (i = 0; i < nr; i++) {
			const struct history_commit *c = &h->c[rg[i].st->index];
			strbuf_addstr(out, "<tr><td>");
			html_escape(out, rg[i].s->name);
			strbuf_addf(out, "</td><td><a href=\"graphs/flame/%s.svg\">%.7s</a> ",
				    c->sha, c->sha);
			html_escape(out, c->subject);
			strbuf_addstr(out, "</td><td class=\"num\">");
			strbuf_add_ns(out, rg[i].st->before);
			strbuf_addstr(out, "</td><td class=\"num\">");
			strbuf_add_ns(out, rg[i].st->after);
			strbuf_addf(out, "</td><td class=\"num up\">%+.1f%%</td><td>%s</td></tr>\n",
				    100.0 * rg[i].st->rel, rg[i].stat);
		}
		strbuf_addstr(out, "</table>\n");
	} else {
		strbuf_addstr(out, "<p id=\"regressions\">No step made a function slower.</p>\n");
	}
	{
		size_t ninc = 0;
		for (i = 0; i < h->nc; i++)
			ninc += h->c[i].incomplete != NULL;
		if (ninc)
			strbuf_addf(out, "<p class=\"incomplete\">%zu commit%s with incomplete "
					 "profiles (events lost or probes not attached): their "
					 "numbers miss those calls; what each lost is under "
					 "Commits.</p>\n",
				    ninc, ninc == 1 ? "" : "s");
	}
	write_latency_html(lat, out);
	strbuf_addstr(out, "<p class=\"legend\"><span style=\"color:#1f5fbf\">&#9473; median"
			   "</span><span style=\"color:#8fa8c8\">&#9476; p95</span>");
	if (h->control)
		strbuf_addf(out, "<span style=\"color:#e39b2d\">&#9476; median with each run's "
				 "speed taken out (the in-run control of %zu functions; its steps "
				 "are the median's)</span>",
			    h->control);
	strbuf_addstr(out, "<span style=\"color:#d22\">&#9476; step (the commit where the new "
			   "level starts; dotted: of the p95)</span></p>\n<div id=\"graphs\"></div>\n");
	strbuf_addstr(out, "<h2>Commits</h2>\n<table id=\"commits\"><tr><th>commit</th>"
			   "<th>profiles</th><th>subject</th></tr>\n");
	for (i = h->nc; i-- > 0;) {
		strbuf_addf(out,
			    "<tr><td><a href=\"graphs/flame/%s.svg\">%.7s</a></td><td "
			    "class=\"num\">%zu</td><td>",
			    h->c[i].sha, h->c[i].sha, h->c[i].profiles);
		html_escape(out, h->c[i].subject);
		if (h->c[i].incomplete) {
			strbuf_addstr(out, "<pre class=\"incomplete\">");
			html_escape(out, h->c[i].incomplete);
			strbuf_addstr(out, "</pre>");
		}
		strbuf_addstr(out, "</td></tr>\n");
	}
	strbuf_addstr(out, "</table>\n");
	if (naggs)
		write_aggregates(aggs, naggs, out);
	strbuf_addstr(out, "<script id=\"data\" type=\"application/json\">");
	history_to_json(h, NULL, &data);
	script_safe(out, &data);
	strbuf_addstr(out, "</script>\n");
	strbuf_addstr(out, page_script);
	strbuf_addstr(out, "</body></html>\n");
	strbuf_release(&data);
	free(rg);
}

/* Whether dir (trusted) may take the site: a report perun wrote before (its
 * marker SITE_MARKER, a file of ours, is there: 1), or an empty directory
 * (the marker is written: 0).  A directory holding anything else is
 * refused: its index.html may be a user's own page.  */
static int site_claim(const char *dir)
{
	char *marker = xstrfmt("%s/" SITE_MARKER, dir);
	struct dirent *e;
	DIR *d;
	int fd = fs_open_trusted(marker, 0), ret = -1;

	if (fd >= 0) {
		close(fd);
		free(marker);
		return 1;
	}
	if (errno != ENOENT) {
		free(marker);
		return -1;
	}
	if (!(d = opendir(dir))) {
		pr_error_errno("opendir %s", dir);
		goto out;
	}
	while ((e = readdir(d)) && (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")))
		;
	if (e) {
		pr_error("refusing to write the report into %s: it holds %s, and perun did not "
			 "write a report there (no " SITE_MARKER "): give a new or empty directory",
			 dir, e->d_name);
		closedir(d);
		goto out;
	}
	closedir(d);
	{
		static const char text[] = "a site written by perun report: perun replaces its files\n";
		ret = fs_write_atomic(marker, text, sizeof(text) - 1, 0644) < 0 ? -1 : 0;
	}
out:
	free(marker);
	return ret;
}

int site_write(const struct history *h, const struct repo *r, const char *dir_arg,
	       const struct agg *aggs, size_t naggs)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = NULL, *dir = fs_absolute(dir_arg);
	struct regression *rg;
	struct site_latency lat = { NULL, NULL, 0 };
	size_t i, nr, nflames;
	struct stat st;
	int ret = -1, existed, replaced = 0;

	if (!dir)
		return -1;
	/* perun runs as root: DIR and its directories must be ours, with no
	 * link another user planted, before a file is written in them */
	existed = lstat(dir, &st) == 0;
	if (fs_trust_dir(dir, 1, SITE_FIX) < 0)
		goto out;
	if (!existed && chmod(dir, 0755) < 0) {
		pr_error_errno("chmod %s", dir);
		goto out;
	}
	if ((replaced = site_claim(dir)) < 0)
		goto out;
	if (site_subdir(dir, "graphs") < 0 || site_subdir(dir, "graphs/flame") < 0)
		goto out;
	/* graphs/<function>.json: one series each, with the commits it is over */
	for (i = 0; i < h->ns; i++) {
		char *name = site_series_name(h->s[i].name);
		size_t k;
		strbuf_reset(&sb);
		strbuf_addstr(&sb, "{\"commits\":[");
		for (k = 0; k < h->nc; k++)
			strbuf_addf(&sb, "%s\"%s\"", k ? "," : "", h->c[k].sha);
		strbuf_addstr(&sb, "],\"series\":");
		history_series_json(h, &h->s[i], &sb);
		strbuf_addstr(&sb, "}\n");
		free(path);
		path = xstrfmt("%s/graphs/%s", dir, name);
		free(name);
		if (write_text(path, &sb) < 0)
			goto out;
	}
	if (write_flames(h, r, dir, &nflames, &lat) < 0)
		goto out;
	/* index.json: what there is, and where */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "{\"perun_report\":1,\"history\":");
	{
		struct strbuf hj = STRBUF_INIT;
		history_to_json(h, "", &hj); /* no series: the commits and the config */
		while (hj.len && hj.buf[hj.len - 1] == '\n')
			hj.buf[--hj.len] = '\0';
		strbuf_add(&sb, hj.buf, hj.len);
		strbuf_release(&hj);
	}
	strbuf_addstr(&sb, ",\"functions\":[");
	for (i = 0; i < h->ns; i++) {
		char *name = site_series_name(h->s[i].name);
		strbuf_addstr(&sb, i ? "," : "");
		strbuf_addstr(&sb, "{\"name\":");
		strbuf_add_json_str(&sb, h->s[i].name);
		strbuf_addf(&sb, ",\"graph\":\"graphs/%s\",\"steps\":%zu}", name, h->s[i].nsteps);
		free(name);
	}
	strbuf_addstr(&sb, "],\"regressions\":[");
	nr = regressions(h, &rg);
	for (i = 0; i < nr; i++) {
		strbuf_addstr(&sb, i ? "," : "");
		strbuf_addstr(&sb, "{\"function\":");
		strbuf_add_json_str(&sb, rg[i].s->name);
		strbuf_addf(&sb,
			    ",\"of\":\"%s\",\"commit\":\"%s\",\"before\":%.17g,\"after\":%.17g,"
			    "\"rel\":%.17g}",
			    rg[i].stat, h->c[rg[i].st->index].sha, rg[i].st->before,
			    rg[i].st->after, isfinite(rg[i].st->rel) ? rg[i].st->rel : 1e308);
	}
	free(rg);
	strbuf_addstr(&sb, "]");
	write_latency_json(&lat, &sb);
	strbuf_addf(&sb, ",\"flamegraphs\":%zu,\"aggregates\":[", nflames);
	for (i = 0; i < naggs; i++) {
		char *name = site_series_name(aggs[i].release);
		struct strbuf aj = STRBUF_INIT;
		char *apath = xstrfmt("%s/aggregates/%s", dir, name);
		int bad;
		strbuf_addstr(&sb, i ? "," : "");
		strbuf_addstr(&sb, "{\"release\":");
		strbuf_add_json_str(&sb, aggs[i].release);
		strbuf_addf(&sb, ",\"inputs\":%zu,\"file\":\"aggregates/%s\"}", aggs[i].n, name);
		agg_to_json(&aggs[i], &aj);
		bad = site_subdir(dir, "aggregates") < 0 || write_text(apath, &aj) < 0;
		free(name);
		free(apath);
		strbuf_release(&aj);
		if (bad)
			goto out;
	}
	strbuf_addstr(&sb, "]}\n");
	free(path);
	path = xstrfmt("%s/index.json", dir);
	if (write_text(path, &sb) < 0)
		goto out;
	strbuf_reset(&sb);
	write_page(h, aggs, naggs, &lat, &sb);
	free(path);
	path = xstrfmt("%s/index.html", dir);
	if (write_text(path, &sb) < 0)
		goto out;
	ret = replaced;
out:
	calls_latency_free(lat.rows, lat.n);
	free(path);
	free(dir);
	strbuf_release(&sb);
	return ret;
}
