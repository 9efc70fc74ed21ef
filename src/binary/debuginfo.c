/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What to install when a binary names no function: the distribution's
 * debug symbol package for the file, asked of its package manager.  */
#include "config.h"

#define PR_FMT "target"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binary/target.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Runs argv (no shell) and keeps the first line of its standard output in
 * out; 0 when it exits 0 and said something.  */
static int first_line_of(char *const argv[], struct strbuf *out)
{
	int fds[2], st, ret = -1;
	pid_t pid;
	char *nl;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (dup2(fds[1], 1) < 0 || (null >= 0 && (dup2(null, 0) < 0 || dup2(null, 2) < 0)))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	fs_read_fd(fds[0], out);
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	nl = out->len ? memchr(out->buf, '\n', out->len) : NULL;
	if (nl) {
		*nl = '\0';
		out->len = (size_t)(nl - out->buf);
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && out->len)
		ret = 0;
	return ret;
}

/* The Debian package that installed path ("xz-utils"), or NULL.  dpkg knows
 * a file by the path its package shipped, which on a merged /usr may be the
 * other one of /bin and /usr/bin.  */
static char *dpkg_package(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char *alt = !strncmp(path, "/usr/", 5) ? xstrdup(path + 4) : xstrfmt("/usr%s", path);
	const char *tries[2] = { path, alt };
	char *pkg = NULL;
	size_t i;

	for (i = 0; i < 2 && !pkg; i++) {
		char *argv[] = { "dpkg-query", "-S", (char *)tries[i], NULL };
		strbuf_reset(&sb);
		/* "pkg[:arch][, pkg2]: /path" (diversions say "diversion by ...") */
		if (first_line_of(argv, &sb) == 0 && strncmp(sb.buf, "diversion", 9)) {
			size_t n = strcspn(sb.buf, ":, ");
			if (n)
				pkg = xstrfmt("%.*s", (int)n, sb.buf);
		}
	}
	strbuf_release(&sb);
	free(alt);
	return pkg;
}

/* The RPM package that installed path ("xz"), or NULL.  */
static char *rpm_package(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char *argv[] = { "rpm", "-qf", "--qf", "%{NAME}\n", (char *)path, NULL };
	char *pkg = NULL;

	if (first_line_of(argv, &sb) == 0 && !strchr(sb.buf, ' '))
		pkg = strbuf_detach(&sb);
	strbuf_release(&sb);
	return pkg;
}

/* KEY's value in /etc/os-release (ID, VERSION_CODENAME), or NULL.  */
static char *os_release(const char *key)
{
	struct strbuf sb = STRBUF_INIT;
	size_t kl = strlen(key);
	char *line, *save = NULL, *val = NULL;

	if (strbuf_read_file(&sb, "/etc/os-release") < 0 &&
	    strbuf_read_file(&sb, "/usr/lib/os-release") < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	for (line = strtok_r(sb.buf, "\n", &save); line && !val;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t n;
		if (strncmp(line, key, kl) || line[kl] != '=')
			continue;
		line += kl + 1;
		n = strlen(line);
		if (n >= 2 && (*line == '"' || *line == '\'') && line[n - 1] == *line) {
			line[n - 1] = '\0';
			line++;
		}
		if (*line)
			val = xstrdup(line);
	}
	strbuf_release(&sb);
	return val;
}

char *target_debuginfo_hint(const char *path)
{
	char *pkg, *id, *code, *hint;

	pkg = dpkg_package(path);
	if (pkg) {
		id = os_release("ID");
		code = os_release("VERSION_CODENAME");
		if (id && !strcmp(id, "ubuntu"))
			hint = xstrfmt("install its debug symbols: apt-get install %s-dbgsym, from "
				       "Ubuntu's debug archive (the apt line 'deb "
				       "http://ddebs.ubuntu.com %s main', then apt-get update), or "
				       "set DEBUGINFOD_URLS=https://debuginfod.ubuntu.com",
				       pkg, code ? code : "CODENAME");
		else
			hint = xstrfmt("install its debug symbols: apt-get install %s-dbgsym, from "
				       "Debian's debug archive (the apt line 'deb "
				       "http://deb.debian.org/debian-debug %s-debug main', then "
				       "apt-get update), or set "
				       "DEBUGINFOD_URLS=https://debuginfod.debian.net",
				       pkg, code ? code : "CODENAME");
		free(id);
		free(code);
		free(pkg);
		return hint;
	}
	pkg = rpm_package(path);
	if (pkg) {
		hint = xstrfmt("install its debug symbols: dnf debuginfo-install %s, or set "
			       "DEBUGINFOD_URLS to your distribution's debuginfod server",
			       pkg);
		free(pkg);
		return hint;
	}
	return xstrdup("rebuild it without stripping (no -s, no strip), or put its debuginfo "
		       "where perun and stap look (/usr/lib/debug/.build-id/xx/rest.debug, "
		       "$SYSTEMTAP_DEBUGINFO_PATH), or set DEBUGINFOD_URLS");
}

int target_no_functions_error(const struct target *t, const char *what)
{
	char *hint = target_debuginfo_hint(t->path);

	pr_error("%s: no function symbols for %s (stripped, no .symtab; %s; %s): %s; functions "
		 "of its libraries are traced with -f LIB#NAME",
		 t->path, what,
		 t->syms == TARGET_SYMS_NONE ? "it exports no function" : "only its exports",
		 t->debugdata_too_large ? "its MiniDebugInfo is too large to read, no other "
					  "debuginfo found"
					: "no debuginfo found",
		 hint);
	free(hint);
	return -1;
}
