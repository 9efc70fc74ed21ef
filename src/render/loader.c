/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <string.h>

#include "render/loader.h"

void render_loader_modes(const struct script_opt *so, struct uprobes_modes *m)
{
	memset(m, 0, sizeof(*m));
	if (!so)
		return;
	m->threshold = so->probing_threshold;
	m->reattach_ms = so->probing_reattach_ms;
	m->timed_ms = so->timed_period_ms;
	m->budget_ns = so->budget_allowed_ns;
	m->call_ns = so->budget_call_ns;
	m->stepped_ns = so->budget_stepped_ns;
	m->insn_ns = so->budget_insn_ns;
	m->window_ms = so->budget_window_ms;
}
