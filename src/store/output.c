/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/output.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

/* The directory part of path ("." when none); caller frees.  */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return strndup(path, (size_t)(slash - path));
}

int output_check(const char *path)
{
	struct stat st;
	char *dir;
	int ret = 0;

	if (!*path)
		return pr_error("-o needs a file name");
	if (path[strlen(path) - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return pr_error("-o %s is a directory: give a file name, such as -o %s%sprofile.perf",
				path, path, path[strlen(path) - 1] == '/' ? "" : "/");
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return pr_error("-o %s exists and is not a regular file: give another name", path);
	dir = dir_of(path);
	if (stat(dir, &st) < 0)
		ret = errno == ENOENT ? pr_error("-o %s: directory %s does not exist: create it "
						 "first (mkdir -p %s)",
						 path, dir, dir)
				      : pr_error_errno("-o %s: %s", path, dir);
	else if (!S_ISDIR(st.st_mode))
		ret = pr_error("-o %s: %s is not a directory", path, dir);
	else if (access(dir, W_OK | X_OK) < 0)
		ret = pr_error_errno("-o %s: cannot create files in %s", path, dir);
	free(dir);
	return ret;
}

/* Creates path new and empty; 0, or -1 with errno.  */
static int create_new(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Six random characters for a file name.  */
static void random_tag(char out[7])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char b[6];
	size_t i;

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		for (i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)(rand() ^ getpid() >> i);
	for (i = 0; i < 6; i++)
		out[i] = set[b[i] % (sizeof(set) - 1)];
	out[6] = '\0';
}

static char *numbered(const char *final, int n);

char *output_stage_fd(const char *final, int *fd_out)
{
	char *dir = dir_of(final), *path = NULL, tag[7];
	int k, fd;

	for (k = 0; k < 100; k++) {
		random_tag(tag);
		path = xstrfmt("%s/.%s.new-%s", dir, fs_basename(final), tag);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			*fd_out = fd;
			break;
		}
		if (errno != EEXIST) {
			pr_error_errno("cannot create %s", path);
			free(path);
			path = NULL;
			break;
		}
		free(path);
		path = NULL;
	}
	free(dir);
	return path;
}

char *output_stage(const char *final)
{
	int fd;
	char *path = output_stage_fd(final, &fd);

	if (path)
		close(fd);
	return path;
}

/* True when path names the file open on fd (not followed when a link).  */
static int names_fd(const char *path, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

void output_discard(int fd, const char *staged)
{
	if (names_fd(staged, fd))
		unlink(staged);
}

char *output_publish_fd(int fd, const char *staged, const char *final)
{
	char proc[64], *name;
	int n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (n = 1; n < 1000; n++) {
		name = n == 1 ? xstrdup(final) : numbered(final, n);
		/* the file written, by descriptor: another user who can write the
		 * directory may have put something else under the staging name */
		if (linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH) == 0 ||
		    ((errno == ENOENT || errno == EPERM) &&
		     linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0)) {
			output_discard(fd, staged);
			return name;
		}
		if (errno != EEXIST) {
			pr_error_errno("cannot name the profile %s (it is kept in %s)", name, staged);
			free(name);
			return NULL;
		}
		free(name);
	}
	pr_error("%s and 999 numbered names beside it exist: the profile is kept in %s", final,
		 staged);
	return NULL;
}

/* final with "-N" before its ".perf" (or at its end).  */
static char *numbered(const char *final, int n)
{
	size_t len = strlen(final);

	if (len > 5 && !strcmp(final + len - 5, ".perf"))
		return xstrfmt("%.*s-%d.perf", (int)(len - 5), final, n);
	return xstrfmt("%s-%d", final, n);
}

char *output_publish(const char *staged, const char *final)
{
	char *name;
	int n;

	for (n = 1; n < 1000; n++) {
		name = n == 1 ? xstrdup(final) : numbered(final, n);
		if (link(staged, name) == 0) {
			unlink(staged);
			return name;
		}
		if (errno != EEXIST) {
			pr_error_errno("cannot name the profile %s (it is kept in %s)", name, staged);
			free(name);
			return NULL;
		}
		free(name);
	}
	pr_error("%s and 999 numbered names beside it exist: the profile is kept in %s", final,
		 staged);
	return NULL;
}

char *output_rescue(const char *jobs_dir, const char *wanted)
{
	const char *tmp = getenv("TMPDIR");
	const char *dirs[3];
	char *stem = xstrdup(fs_basename(wanted)), tag[7];
	size_t i, nd = 0, len = strlen(stem);

	if (len > 5 && !strcmp(stem + len - 5, ".perf"))
		stem[len - 5] = '\0';
	if (jobs_dir)
		dirs[nd++] = jobs_dir;
	dirs[nd++] = ".";
	dirs[nd++] = tmp && *tmp ? tmp : "/tmp";
	for (i = 0; i < nd; i++) {
		int k;
		for (k = 0; k < 100; k++) {
			char *path;
			random_tag(tag);
			path = xstrfmt("%s/%s-rescue-%s.perf", dirs[i], *stem ? stem : "profile", tag);
			if (create_new(path) == 0) {
				free(stem);
				return path;
			}
			free(path);
			if (errno != EEXIST)
				break;
		}
	}
	free(stem);
	pr_error("no place to keep the profile: %s%s the current directory and %s cannot be "
		 "written",
		 jobs_dir ? jobs_dir : "", jobs_dir ? "," : "", dirs[nd - 1]);
	return NULL;
}

char *output_pending_path(const char *label, const char *suffix, int *no_repo)
{
	char *pd = repo_locate(), *base, *dot, *out;

	*no_repo = !pd;
	if (!pd)
		return NULL;
	base = xstrdup(fs_basename(label));
	for (dot = base; *dot; dot++)
		if (*dot == ':' || *dot == '@')
			*dot = '-';
	if ((dot = strstr(base, ".perf")) && !dot[5])
		*dot = 0;
	out = xstrfmt("%s/jobs", pd);
	/* a jobs directory that is a link, or another user's, would take root's
	 * profile wherever it points */
	if (fs_trust_dir(out, 1, "remove it or give -o PATH") < 0) {
		free(out);
		free(base);
		free(pd);
		return NULL;
	}
	free(out);
	out = xstrfmt("%s/jobs/%s-%s.perf", pd, base, suffix);
	free(base);
	free(pd);
	return out;
}
