/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Many hosts, one history: .perun's objects, indexes, added tags and
 * tombstones travel through a git ref (vcs/vcs.h, VCS_SYNC_REF).  Objects
 * are named by their content, so two hosts' stores merge as a union: every
 * object of both, and per minor version the union of the added tags and of
 * the tombstones (store.h), and every index entry of both, each object
 * once, whose id still has a tag no tombstone names.  Whatever is fetched
 * is verified before anything of it is stored.  */
#ifndef PERUN_SYNC_H
#define PERUN_SYNC_H

#include <stddef.h>

struct repo;

struct sync_stats {
	size_t objects;	   /* objects stored that were not here */
	size_t entries;	   /* index entries added */
	size_t indexes;	   /* indexes written */
	size_t removed;	   /* index entries removed by tombstones (perun rm elsewhere) */
	size_t files;	   /* files the pushed tree holds */
	unsigned attempts; /* pushes tried */
	char tip[41];	   /* the remote's commit fetched, "" for none */
};

/* Fetches remote's profiles into r (which the caller has locked): verified
 * first, then merged.  Nothing is stored when anything fetched is damaged.  */
int sync_fetch(struct repo *r, const char *remote, struct sync_stats *st);
/* Fetches and merges, then publishes the union; retries (at most tries)
 * while other hosts push at the same time.  */
int sync_push(struct repo *r, const char *remote, unsigned tries, struct sync_stats *st);

#endif
