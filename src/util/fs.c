#include "config.h"

#define PR_FMT "fs"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

int fs_mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path), *s;
	int ret = 0;

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

char *fs_mkdtemp(const char *prefix)
{
	const char *tmp = getenv("TMPDIR");
	char *path;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	path = xstrfmt("%s/%s-XXXXXX", tmp, prefix);
	if (!mkdtemp(path)) {
		pr_error_errno("mkdtemp %s", path);
		free(path);
		return NULL;
	}
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
	if (remove_at(AT_FDCWD, path) < 0)
		return pr_error_errno("remove %s", path);
	return 0;
}

int fs_open_temp_beside(const char *path, char **tmp_out)
{
	char *tmp = xstrfmt("%s.tmpXXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC);

	if (fd < 0) {
		pr_error_errno("mkstemp %s", tmp);
		free(tmp);
		return -1;
	}
	*tmp_out = tmp;
	return fd;
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

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
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
