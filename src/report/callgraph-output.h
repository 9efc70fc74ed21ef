/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A call graph (binary/callgraph.h) as text for people, JSON for machines,
 * or Graphviz dot: the whole graph or one function.  */
#ifndef PERUN_REPORT_CALLGRAPH_OUTPUT_H
#define PERUN_REPORT_CALLGRAPH_OUTPUT_H

#include "binary/callgraph.h"

enum cg_format { CG_TEXT, CG_JSON, CG_DOT };

/* Prints cg on stdout in fmt: the whole graph when node < 0, else the
 * function of that node (its callers, callees, reachable set, blocks,
 * loops and instructions).  */
void callgraph_output(const struct callgraph *cg, int node, enum cg_format fmt);

#endif
