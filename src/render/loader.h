/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The plan rendered for perun's loader, the twin of render/script.h: the
 * probe plan goes to perun-uprobes as the saved plan file (plan_save),
 * which it reads itself, and the run-time methods the script's code
 * carries (struct script_opt) become the settings of the loader's gate
 * (loader/uprobes-modes.h), with the same meaning.  */
#ifndef PERUN_RENDER_LOADER_H
#define PERUN_RENDER_LOADER_H

#include "loader/uprobes-modes.h"
#include "render/script.h"

/* so's methods as the loader takes them (so may be NULL: none).  */
void render_loader_modes(const struct script_opt *so, struct uprobes_modes *m);

#endif
