/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Root working in another user's repository: the files it made there go back to
 * that user, so a later 'perun add' or 'git clean' by the user is not refused.  */
#ifndef PERUN_OWNER_H
#define PERUN_OWNER_H

/* When we are root and the work tree holding PERUN_DIR (its parent) belongs to
 * someone else, gives every root-owned directory and single-link regular file in
 * PERUN_DIR to that owner.  Symlinks are never followed or changed.  Returns the
 * number of entries changed, or -1 after pr_error().  */
int owner_restore(const char *perun_dir);

#endif
