/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Checking a store: every object (zlib data, 'profile TYPE LENGTH' header,
 * SHA-1 name) and every minor-version index (checksum, entries naming
 * existing, valid objects) of a .perun directory; with repair, damaged files
 * are moved to .perun/damaged/ and each damaged or lost index is rebuilt from
 * what it still holds and from the objects that record its minor version
 * (their origin).  Nothing is ever deleted.  */
#ifndef PERUN_FSCK_H
#define PERUN_FSCK_H

#include <stddef.h>

/* One line of what fsck found or did, without its newline.  */
struct fsck_line {
	char *text;
	int problem;	/* 1: counted in problems */
};

struct fsck_result {
	struct fsck_line *found;	/* what the check saw, in order */
	size_t nfound;
	struct fsck_line *repairs;	/* what the repair did, in order */
	size_t nrepairs;
	size_t objects, indexes;	/* files checked */
	size_t problems;		/* lines of found with problem set */
	int checked;			/* the whole store was read */
	int repaired;			/* a repair ran and did all it had to */
};

/* Checks the store in dir (a .perun directory) and, when repair is set and
 * there are problems, repairs it; the caller holds the repository lock for a
 * repair (it rewrites indexes from what the check saw).  0 when the check
 * (and the repair) ran; -1 after a message when the store could not be read
 * or a repair failed.  res holds what was found and done either way.  */
int store_fsck(const char *dir, int repair, struct fsck_result *res);
void fsck_result_release(struct fsck_result *res);

#endif
