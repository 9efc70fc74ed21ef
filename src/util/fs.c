/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "fs"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

int fs_mkdir_p(const char *path, mode_t mode)
{
	char *p, *s;
	int ret = 0;

	/* The walk below starts after the first byte: "" has none.  */
	if (!*path) {
		errno = ENOENT;
		return pr_error_errno("mkdir ''");
	}
	p = xstrdup(path);
	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				ret = pr_error_errno("mkdir %s", p);
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return ret;
}

/* The file in a temp dir of fs_mkdtemp that says its directory is locked by
 * the perun that made it: made only once the lock is held, so a directory
 * with it and without the lock is a dead perun's.  */
#define TEMP_MARK ".perun-lock"

/* The temp dirs this process made and the descriptors that hold their locks
 * (flock, closed on exec): released when the directory is removed, kept, or
 * the process ends, however it ends.  */
static struct temp_lock {
	char *path;
	int fd;
} *temp_locks;
static size_t ntemp_locks;

/* Whether name is prefix, '-' and six characters of mkdtemp's alphabet.  */
static int temp_name_of(const char *name, const char *prefix, const char *sep)
{
	size_t np = strlen(prefix), ns = strlen(sep), i;

	if (strncmp(name, prefix, np) || strncmp(name + np, sep, ns))
		return 0;
	name += np + ns;
	for (i = 0; i < 6; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return 0;
	}
	return name[6] == '\0';
}

/* A directory in which no one but its owner can rename or remove what is
 * ours: writable by no one else, or sticky.  */
static int dir_holds_names(int dfd)
{
	struct stat st;

	return fstat(dfd, &st) == 0 &&
	       (!(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX));
}

static int remove_at(int parent, const char *name);

/* Removes the entries of the directory open on fd (not the directory).  */
static int remove_contents(int fd)
{
	int dup_fd = dup(fd), ret = 0;
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -1;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (remove_at(dirfd(d), de->d_name) < 0)
			ret = -1;
	}
	closedir(d);
	return ret;
}

/* Removes tmp/name when it is a temp dir a dead perun left: a directory of
 * ours, private, holding TEMP_MARK, whose lock no one holds (taken here, so
 * two perun runs never remove one directory together).  Removed through its
 * descriptor: a directory swapped in under the name meanwhile is not touched
 * (rmdir of the name then fails, it is not empty, or removes an empty one).  */
static int remove_dead_temp_dir(int tfd, const char *tmp, const char *name)
{
	int fd = openat(tfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st, mark, now;
	int removed = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 077) &&
	    fstatat(fd, TEMP_MARK, &mark, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(mark.st_mode) &&
	    mark.st_uid == geteuid() && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
	    remove_contents(fd) == 0 && fstatat(tfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	    now.st_dev == st.st_dev && now.st_ino == st.st_ino &&
	    unlinkat(tfd, name, AT_REMOVEDIR) == 0) {
		pr_info("perun: removed %s/%s, left by a perun that was killed", tmp, name);
		removed = 1;
	}
	close(fd);
	return removed;
}

int fs_remove_dead_temp_dirs(const char *prefix)
{
	const char *tmp = getenv("TMPDIR");
	int tfd, dup_fd, n = 0;
	DIR *d;
	struct dirent *de;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	tfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0)
		return 0;
	dup_fd = dir_holds_names(tfd) ? dup(tfd) : -1;
	d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		close(tfd);
		return 0;
	}
	while ((de = readdir(d)))
		if (temp_name_of(de->d_name, prefix, "-"))
			n += remove_dead_temp_dir(tfd, tmp, de->d_name);
	closedir(d);
	close(tfd);
	return n;
}

/* Locks the new temp dir path for as long as this process lives and marks
 * it as locked.  Without a lock (a file system without flock) there is no
 * mark, and no later run removes it.  */
static void lock_temp_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), mfd;

	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return;
	}
	mfd = openat(fd, TEMP_MARK, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (mfd < 0) {
		close(fd);
		return;
	}
	close(mfd);
	temp_locks = xrealloc(temp_locks, (ntemp_locks + 1) * sizeof(*temp_locks));
	temp_locks[ntemp_locks].path = xstrdup(path);
	temp_locks[ntemp_locks++].fd = fd;
}

/* Releases the lock of temp dir path, when this process holds one.  */
static void unlock_temp_dir(const char *path)
{
	size_t i;

	for (i = 0; i < ntemp_locks; i++) {
		if (strcmp(temp_locks[i].path, path))
			continue;
		close(temp_locks[i].fd);
		free(temp_locks[i].path);
		temp_locks[i] = temp_locks[--ntemp_locks];
		return;
	}
}

void fs_keep_temp_dir(const char *path)
{
	size_t i;

	for (i = 0; i < ntemp_locks; i++)
		if (!strcmp(temp_locks[i].path, path))
			unlinkat(temp_locks[i].fd, TEMP_MARK, 0);
	unlock_temp_dir(path);
}

char *fs_mkdtemp(const char *prefix)
{
	const char *tmp = getenv("TMPDIR");
	char *path;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	fs_remove_dead_temp_dirs(prefix);
	path = xstrfmt("%s/%s-XXXXXX", tmp, prefix);
	if (!mkdtemp(path)) {
		pr_error_errno("mkdtemp %s", path);
		free(path);
		return NULL;
	}
	/* what perun later loads may be copied here: no one else may reach it */
	if (fs_trust_dir(path, 0, "unset TMPDIR or point it at a directory only you can write") < 0) {
		rmdir(path);
		free(path);
		return NULL;
	}
	lock_temp_dir(path);
	return path;
}

static int remove_at(int parent, const char *name)
{
	struct stat st;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISDIR(st.st_mode)) {
		int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d;
		struct dirent *de;
		int ret = 0;

		if (fd < 0)
			return -1;
		d = fdopendir(fd);
		if (!d) {
			close(fd);
			return -1;
		}
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (remove_at(dirfd(d), de->d_name) < 0)
				ret = -1;
		}
		closedir(d);
		if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			ret = -1;
		return ret;
	}
	if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int fs_remove_tree(const char *path)
{
	int ret = remove_at(AT_FDCWD, path);

	unlock_temp_dir(path);
	if (ret < 0)
		return pr_error_errno("remove %s", path);
	return 0;
}

/* The directory part of path, "." when it has none; caller frees.  */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrfmt("%.*s", (int)(slash - path), path);
}

/* A file with no name in path's directory, locked, then linked as
 * path.tmpXXXXXX: it has a name only while its writer holds its lock.  -1
 * when the file system has no unnamed files (the caller falls back).  */
static int open_locked_unnamed(const char *path, char **tmp_out)
{
	char *dir = dir_of(path), hex[7], proc[64];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600), tries;

	free(dir);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX) < 0) {
		close(fd);
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (tries = 0; tries < 100; tries++) {
		char *tmp;

		if (fs_random_hex(hex, 6) < 0)
			break;
		tmp = xstrfmt("%s.tmp%s", path, hex);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0 ||
		    (errno == ENOENT && linkat(fd, "", AT_FDCWD, tmp, AT_EMPTY_PATH) == 0)) {
			*tmp_out = tmp;
			return fd;
		}
		free(tmp);
		if (errno != EEXIST)
			break;
	}
	close(fd);
	return -1;
}

int fs_open_temp_beside(const char *path, char **tmp_out)
{
	char *tmp;
	int fd = open_locked_unnamed(path, tmp_out);

	if (fd >= 0)
		return fd;
	tmp = xstrfmt("%s.tmpXXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		pr_error_errno("mkstemp %s", tmp);
		free(tmp);
		return -1;
	}
	flock(fd, LOCK_EX | LOCK_NB);
	*tmp_out = tmp;
	return fd;
}

int fs_remove_dead_temps_beside(const char *path)
{
	char *dir = dir_of(path);
	const char *base = fs_basename(path);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), dup_fd, n = 0;
	DIR *d;
	struct dirent *de;

	dup_fd = dfd >= 0 && dir_holds_names(dfd) ? dup(dfd) : -1;
	d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		if (dfd >= 0)
			close(dfd);
		free(dir);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat st, now;
		int fd;

		if (!*base || !temp_name_of(de->d_name, base, ".tmp"))
			continue;
		fd = openat(dfd, de->d_name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    st.st_nlink == 1 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    fstatat(dfd, de->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now.st_dev == st.st_dev && now.st_ino == st.st_ino &&
		    unlinkat(dfd, de->d_name, 0) == 0) {
			pr_info("perun: removed %s/%s, left by a perun that was killed", dir,
				de->d_name);
			n++;
		}
		close(fd);
	}
	closedir(d);
	close(dfd);
	free(dir);
	return n;
}

int fs_commit_temp(int fd, const char *tmp, const char *path)
{
	if (fsync(fd) < 0) {
		pr_error_errno("fsync %s", tmp);
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0) {
		pr_error_errno("close %s", tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		pr_error_errno("rename %s to %s", tmp, path);
		unlink(tmp);
		return -1;
	}
	return 0;
}

int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char *tmp = NULL;
	const char *p = data;
	int fd = fs_open_temp_beside(path, &tmp);
	int ret = -1;

	if (fd < 0)
		return -1;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_error_errno("write %s", tmp);
			close(fd);
			unlink(tmp);
			goto out;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fchmod(fd, mode) < 0) {
		pr_error_errno("chmod %s", tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	ret = fs_commit_temp(fd, tmp, path);
out:
	free(tmp);
	return ret;
}

int fs_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

char *fs_which(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL;

	if (strchr(name, '/')) {
		struct stat st;
		/* root may "execute" a directory: a program is a regular file */
		return stat(name, &st) == 0 && S_ISREG(st.st_mode) && access(name, X_OK) == 0
			       ? xstrdup(name)
			       : NULL;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *cand = xstrfmt("%s/%s", *dir ? dir : ".", name);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
			found = cand;
			break;
		}
		free(cand);
	}
	free(copy);
	return found;
}

const char *fs_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

char *fs_realpath(const char *path)
{
	char *r = realpath(path, NULL);

	if (!r)
		return NULL;
	return r;
}

/* --- trusted paths: what perun loads or writes as root ---------------------- */

static const char *owner_desc(uid_t uid)
{
	static char buf[2][32];
	static int i;

	i = !i;
	snprintf(buf[i], sizeof(buf[i]), "uid %d", (int)uid);
	return buf[i];
}

static int trust_dir(const char *path, int create, mode_t mode, const char *fix)
{
	uid_t me = geteuid();
	char comp[NAME_MAX + 1], *sofar, *prev;
	const char *s = path;
	struct stat st, cst;
	int fd, nfd, ret = -1, shared, made;

	if (path[0] != '/')
		return pr_error("%s: not an absolute path: %s", path, fix);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return pr_error_errno("open /");
	}
	sofar = xcalloc(1, strlen(path) + 2);
	prev = xcalloc(1, strlen(path) + 2);
	strcpy(sofar, "/");
	while (*s == '/')
		s++;
	if (!*s) {
		pr_error("%s: the root directory cannot hold perun's files: %s", path, fix);
		goto out;
	}
	while (*s) {
		size_t n = strcspn(s, "/"), len;

		if (n > NAME_MAX) {
			pr_error("%s: a name in the path is too long", path);
			goto out;
		}
		memcpy(comp, s, n);
		comp[n] = '\0';
		s += n;
		while (*s == '/')
			s++;
		strcpy(prev, sofar);
		len = strlen(sofar);
		sprintf(sofar + len, "%s%s", len > 1 ? "/" : "", comp);
		/* the directory we are in: root's or ours; shared only when sticky */
		if (st.st_uid != 0 && st.st_uid != me) {
			pr_error("%s: %s is owned by %s, not root or you: that user could replace "
				 "what perun trusts; %s",
				 path, prev, owner_desc(st.st_uid), fix);
			goto out;
		}
		shared = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
		if (shared && !(st.st_mode & S_ISVTX)) {
			pr_error("%s: %s is writable by group or others (mode %04o) and not sticky: "
				 "they could replace what perun trusts; %s",
				 path, prev, (unsigned)(st.st_mode & 07777), fix);
			goto out;
		}
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			pr_error("%s: '%s' in the path: give it without . or ..", path, comp);
			goto out;
		}
		made = 0;
		if (fstatat(fd, comp, &cst, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0700) == 0)
				made = 1;
			else if (errno != EEXIST) {
				pr_error_errno("mkdir %s", sofar);
				goto out;
			}
		}
		if (fstatat(fd, comp, &cst, AT_SYMLINK_NOFOLLOW) < 0) {
			pr_error_errno("stat %s", sofar);
			goto out;
		}
		if (S_ISLNK(cst.st_mode)) {
			pr_error("%s: %s is a symbolic link (owned by %s): perun follows no links in "
				 "the paths it trusts; give the real path or remove the link; %s",
				 path, sofar, owner_desc(cst.st_uid), fix);
			goto out;
		}
		if (!S_ISDIR(cst.st_mode)) {
			pr_error("%s: %s is not a directory; %s", path, sofar, fix);
			goto out;
		}
		if (shared && cst.st_uid != 0 && cst.st_uid != me) {
			pr_error("%s: %s is owned by %s inside the shared directory %s: that user "
				 "could replace what perun trusts; %s",
				 path, sofar, owner_desc(cst.st_uid), prev, fix);
			goto out;
		}
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			pr_error_errno("open %s", sofar);
			goto out;
		}
		close(fd);
		fd = nfd;
		if (fstat(fd, &st) < 0 || st.st_ino != cst.st_ino || st.st_dev != cst.st_dev) {
			pr_error("%s: %s changed while perun checked it; %s", path, sofar, fix);
			goto out;
		}
		/* made here, private until now: the mode asked for, on the open
		 * directory itself */
		if (made && mode != 0700 && (fchmod(fd, mode) < 0 || fstat(fd, &st) < 0)) {
			pr_error_errno("chmod %s", sofar);
			goto out;
		}
	}
	/* the directory itself: ours and private */
	if (st.st_uid != me) {
		pr_error("%s is owned by %s, not you (%s): perun only trusts its own files "
			 "here; %s",
			 path, owner_desc(st.st_uid), owner_desc(me), fix);
		goto out;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		pr_error("%s is writable by group or others (mode %04o): run 'chmod go-w %s'; %s",
			 path, (unsigned)(st.st_mode & 07777), path, fix);
		goto out;
	}
	ret = 0;
out:
	close(fd);
	free(sofar);
	free(prev);
	return ret;
}

int fs_trust_dir(const char *path, int create, const char *fix)
{
	return trust_dir(path, create, 0700, fix);
}

int fs_make_trusted_dir(const char *path, mode_t mode, const char *fix)
{
	return trust_dir(path, 1, mode, fix);
}

int fs_replaceable(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT;
	return S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

int fs_open_trusted(const char *path, int flags)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | flags);

	if (fd < 0) {
		if (errno == ENOENT)
			return -1;
		if (errno == ELOOP) {
			pr_error("refusing %s: a symbolic link where perun expects its own file: "
				 "remove it",
				 path);
			errno = EPERM;
			return -1;
		}
		return pr_error_errno("open %s", path);
	}
	if (fstat(fd, &st) < 0) {
		int err = errno;
		pr_error_errno("fstat %s", path);
		close(fd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_error("refusing %s: not a regular file: remove it", path);
		goto refuse;
	}
	if (st.st_uid != geteuid()) {
		pr_error("refusing %s: owned by %s, not you (%s): perun trusts only its own "
			 "files; inspect and remove it",
			 path, owner_desc(st.st_uid), owner_desc(geteuid()));
		goto refuse;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		pr_error("refusing %s: writable by group or others (mode %04o): inspect it, then "
			 "remove it or run 'chmod go-w %s'",
			 path, (unsigned)(st.st_mode & 07777), path);
		goto refuse;
	}
	/* back to blocking reads */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
refuse:
	close(fd);
	errno = EPERM;
	return -1;
}

int fs_read_fd(int fd, struct strbuf *sb)
{
	for (;;) {
		ssize_t n;
		strbuf_grow(sb, 8192);
		n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		sb->len += (size_t)n;
	}
	sb->buf[sb->len] = '\0';
	return 0;
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

/* The name of a kernel pseudo file system whose "regular" files are not
 * data on disk (a read may block, never end or have side effects), or NULL.  */
static const char *pseudo_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return NULL;
	switch ((unsigned long)sf.f_type) {
	case PROC_SUPER_MAGIC:
		return "procfs";
	case SYSFS_MAGIC:
		return "sysfs";
	case DEBUGFS_MAGIC:
		return "debugfs";
	case TRACEFS_MAGIC:
		return "tracefs";
	case SECURITYFS_MAGIC:
		return "securityfs";
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
		return "cgroupfs";
	case BPF_FS_MAGIC:
		return "bpffs";
	case PSTOREFS_MAGIC:
		return "pstore";
	case EFIVARFS_MAGIC:
		return "efivarfs";
	}
	return NULL;
}

int fs_open_regular(const char *path, int flags, int report)
{
	struct stat st;
	const char *fs;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | flags), err;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		if (report)
			pr_error("%s is %s, not a file: give the path of a regular file", path,
				 file_kind(st.st_mode));
		errno = EINVAL;
		return -1;
	}
	if ((fs = pseudo_fs(fd))) {
		close(fd);
		if (report)
				pr_error("%s is a file of %s, not a regular file on disk: give the path "
				 "of a regular file",
				 path, fs);
		errno = EINVAL;
		return -1;
	}
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int fs_read_regular(struct strbuf *sb, const char *path)
{
	int fd = fs_open_regular(path, 0, 1), ret, err;

	if (fd < 0)
		return -1;
	ret = fs_read_fd(fd, sb);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

int fs_read_trusted(struct strbuf *sb, const char *path)
{
	int fd = fs_open_trusted(path, 0), ret, err;

	if (fd < 0)
		return -1;
	ret = fs_read_fd(fd, sb);
	err = errno;
	close(fd);
	errno = err;
	if (ret < 0)
		pr_error_errno("read %s", path);
	return ret;
}

int fs_open_private_dir(const char *path, mode_t mode)
{
	struct stat st;
	int fd;

	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return pr_error_errno("mkdir %s", path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return pr_error("refusing %s: a symbolic link or not a directory: perun writes "
					"only into directories of its own; remove it",
					path);
		return pr_error_errno("open %s", path);
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return pr_error_errno("fstat %s", path);
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		pr_error("refusing %s: owned by %s with mode %04o; perun writes only into "
			 "directories it owns that no one else can write: remove it or run "
			 "'chown %d %s; chmod go-w %s'",
			 path, owner_desc(st.st_uid), (unsigned)(st.st_mode & 07777),
			 (int)geteuid(), path, path);
		close(fd);
		return -1;
	}
	return fd;
}

int fs_random_hex(char *out, size_t nhex)
{
	unsigned char raw[32];
	size_t i, n = (nhex + 1) / 2;
	int fd;

	if (n > sizeof(raw))
		n = sizeof(raw);
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, raw, n) != (ssize_t)n) {
		if (fd >= 0)
			close(fd);
		return pr_error_errno("read /dev/urandom");
	}
	close(fd);
	for (i = 0; i < nhex && i / 2 < n; i++)
		out[i] = "0123456789abcdef"[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
	out[i] = '\0';
	return 0;
}

char *fs_absolute(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char *cwd, *copy, *tok, *save = NULL;
	struct stat st;

	if (path[0] != '/') {
		if (!(cwd = getcwd(NULL, 0))) {
			pr_error_errno("getcwd");
			return NULL;
		}
		strbuf_addstr(&sb, strcmp(cwd, "/") ? cwd : "");
		free(cwd);
	}
	copy = xstrdup(path);
	for (tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		char *slash;
		if (!strcmp(tok, "."))
			continue;
		if (strcmp(tok, "..")) {
			strbuf_addf(&sb, "/%s", tok);
			continue;
		}
		if (sb.len && (lstat(sb.buf, &st) < 0 || !S_ISDIR(st.st_mode))) {
			pr_error("%s: %s is not a directory before '..': give the path without "
				 "'..'",
				 path, sb.buf);
			free(copy);
			strbuf_release(&sb);
			return NULL;
		}
		if (sb.len && (slash = strrchr(sb.buf, '/'))) {
			sb.len = (size_t)(slash - sb.buf);
			sb.buf[sb.len] = '\0';
		}
	}
	free(copy);
	if (!sb.len)
		strbuf_addstr(&sb, "/");
	copy = xstrdup(sb.buf);
	strbuf_release(&sb);
	return copy;
}
