/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "util/owner.h"
#include "util/strbuf.h"

/* Deeper than .perun/objects/xx/ ever goes.  */
#define MAX_DEPTH 8

/* Walks the directory open as DFD (ours to close); every lookup is relative to an
 * open directory and never follows a symlink, so a rename race cannot redirect it.  */
static int restore_dir(int dfd, uid_t uid, gid_t gid, int depth)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (fstat(dfd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(dfd);
		return 0;
	}
	if (st.st_uid == 0 && fchown(dfd, uid, gid) == 0)
		n++;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return n;
	}
	while ((de = readdir(d))) {
		int fd;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		fd = openat(dirfd(d), de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0) {
			close(fd);
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct stat st2;
			if (sub >= 0 && fstat(sub, &st2) == 0 && st2.st_ino == st.st_ino &&
			    st2.st_dev == st.st_dev)
				n += restore_dir(sub, uid, gid, depth + 1);
			else if (sub >= 0)
				close(sub);
		} else if (S_ISREG(st.st_mode) && st.st_uid == 0 && st.st_nlink == 1) {
			/* a hard link could be someone else's file: leave those alone */
			if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH) == 0)
				n++;
		}
		close(fd);
	}
	closedir(d);
	return n;
}

int owner_restore(const char *perun_dir)
{
	char *parent, *slash;
	struct stat st;
	int pfd, fd;

	if (geteuid() != 0)
		return 0;
	parent = xstrdup(perun_dir);
	slash = strrchr(parent, '/');
	if (!slash || strcmp(slash, "/.perun")) {
		free(parent);
		return 0;
	}
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	/* the owner and .perun come from one open directory, so swapping a path
	 * component in between cannot pair one user's owner with another's files */
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(parent);
	if (pfd < 0)
		return pr_error_errno("open %s/..", perun_dir);
	if (fstat(pfd, &st) < 0 || st.st_uid == 0) {
		close(pfd);
		return 0;
	}
	fd = openat(pfd, ".perun", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (fd < 0)
		return pr_error_errno("open %s", perun_dir);
	return restore_dir(fd, st.st_uid, st.st_gid, 0);
}
