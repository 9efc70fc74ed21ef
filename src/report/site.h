/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun report: a static site like asv's publish (seeds/004): index.json,
 * graphs/<function>.json (one series each), graphs/flame/<commit>.svg and
 * index.html, whose inline script (no network) draws each series over the
 * commits as SVG with its steps marked, above a table of the regressions.  */
#ifndef PERUN_SITE_H
#define PERUN_SITE_H

#include <stddef.h>

struct agg;
struct history;
struct repo;

/* Writes the site into dir (created, or empty, or holding a site perun
 * wrote: its .perun-report marker; any other directory is refused, so a
 * user's own index.html is never replaced); r gives the profiles for the flame
 * graphs.  aggs (n of them, each a release with every shard merged, as
 * perun aggregate wrote them) get a table each and aggregates/REV.json.  1 when an earlier site was replaced, 0 when
 * the directory was new or empty, -1 with a message.  */
int site_write(const struct history *h, const struct repo *r, const char *dir,
	       const struct agg *aggs, size_t naggs);
/* The file name of a function's series: characters outside [A-Za-z0-9_.-]
 * as _XX, so any C++ name is one safe file name; caller frees.  */
char *site_series_name(const char *function);

#endif
