/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#define PR_FMT "perun"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profile/profile.h"
#include "store/localyml.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "vcs/vcs.h"

/* The nearest directory at or above dir holding .perun/, or NULL.  */
static char *walk_up(const char *start)
{
	char cwd[4096], *p;

	snprintf(cwd, sizeof(cwd), "%s", start);
	for (;;) {
		char *d = xstrfmt("%s/.perun", cwd);
		struct stat st;
		if (stat(d, &st) == 0 && S_ISDIR(st.st_mode))
			return d;
		free(d);
		p = strrchr(cwd, '/');
		if (!p || p == cwd)
			return NULL;
		*p = '\0';
	}
}

/* The .perun of the innermost git work tree around cwd: a .perun above a
 * nested work tree belongs to the outer one, whose HEAD is not ours.  *outer
 * (when not NULL) receives that outer .perun.  */
static char *locate(char **outer)
{
	char cwd[4096], *found, *wt;
	size_t n;

	if (outer)
		*outer = NULL;
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	found = walk_up(cwd);
	if (!found)
		return NULL;
	wt = vcs_find_worktree(cwd);
	n = strlen(found) - strlen("/.perun");
	if (wt && strlen(wt) > n && !strncmp(wt, found, n) && wt[n] == '/') {
		/* found is above the work tree we are in */
		if (outer)
			*outer = found;
		else
			free(found);
		free(wt);
		return NULL;
	}
	free(wt);
	return found;
}

char *repo_locate(void)
{
	return locate(NULL);
}

int repo_find(struct repo *r)
{
	char *yml, *type = NULL, *url = NULL, *slash, *outer;
	int bad;

	memset(r, 0, sizeof(*r));
	r->lock_fd = -1;
	r->dir = locate(&outer);
	if (!r->dir && outer) {
		char *wt = vcs_find_worktree(".");
		pr_error("not a perun repository: %s is a git work tree of its own, nested in the "
			 "one of %s: run 'perun init' here, or work from the outer tree",
			 wt ? wt : ".", outer);
		free(wt);
		free(outer);
		return -1;
	}
	if (!r->dir)
		return pr_error("not a perun repository (no .perun here or above): run 'perun init'");
	yml = xstrfmt("%s/local.yml", r->dir);
	bad = fs_exists(yml) && config_read_vcs(yml, &type, &url) < 0;
	if (!bad && type && strcmp(type, "git"))
		bad = pr_error("%s: vcs type '%s' is not supported (git is)", yml, type);
	free(yml);
	free(type);
	free(url);
	if (bad) {
		free(r->dir);
		r->dir = NULL;
		return -1;
	}
	r->worktree = xstrdup(r->dir);
	slash = strrchr(r->worktree, '/');
	*slash = '\0';
	return 0;
}

void repo_release(struct repo *r)
{
	repo_unlock(r);
	free(r->worktree);
	free(r->dir);
	r->worktree = r->dir = NULL;
}

int repo_init(const char *worktree)
{
	static const char *const subdirs[] = { "objects", "jobs", "logs", "stats", NULL };
	char *dir = xstrfmt("%s/.perun", worktree), *yml;
	size_t i;
	int ret = 0;

	for (i = 0; subdirs[i] && ret == 0; i++) {
		char *p = xstrfmt("%s/%s", dir, subdirs[i]);
		ret = fs_mkdir_p(p, 0755);
		free(p);
	}
	yml = xstrfmt("%s/local.yml", dir);
	if (ret == 0 && !fs_exists(yml))
		ret = config_write_local(yml, vcs_name(worktree), worktree);
	/* .perun/ is no file of the project's: a clean tree stays clean */
	if (ret == 0)
		ret = vcs_ignore(worktree, "/.perun/");
	free(yml);
	free(dir);
	return ret;
}

int repo_lock(struct repo *r)
{
	char *path = xstrfmt("%s/lock", r->dir);

	r->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (r->lock_fd < 0) {
		int ret = pr_error_errno("cannot lock %s", path);
		free(path);
		return ret;
	}
	free(path);
	while (flock(r->lock_fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return pr_error_errno("flock");
	return 0;
}

void repo_unlock(struct repo *r)
{
	if (r->lock_fd >= 0) {
		close(r->lock_fd);
		r->lock_fd = -1;
	}
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->path, y->path);
}

int repo_pending(const struct repo *r, struct pending **out, size_t *n)
{
	char *jobs = xstrfmt("%s/jobs", r->dir);
	DIR *d = opendir(jobs);
	struct dirent *de;

	*out = NULL;
	*n = 0;
	while (d && (de = readdir(d))) {
		struct stat st;
		size_t len = strlen(de->d_name);
		char *p;
		if (len < 6 || strcmp(de->d_name + len - 5, ".perf"))
			continue;
		p = xstrfmt("%s/%s", jobs, de->d_name);
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[*n].path = p;
		(*out)[*n].mtime = st.st_mtime;
		(*n)++;
	}
	if (d)
		closedir(d);
	free(jobs);
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), cmp_pending);
	return 0;
}

void pending_free(struct pending *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(p[i].path);
	free(p);
}

/* Whether spec names the pending profile name: a whole file name (ending in
 * .perf) only itself; part of a name only where a part of the name starts
 * (at its beginning or after a '-'), so app-trace never names
 * killapp-trace-....perf.  */
static int pending_matches(const char *name, const char *spec)
{
	size_t n = strlen(spec);
	const char *at;

	if (n > 5 && !strcmp(spec + n - 5, ".perf"))
		return !strcmp(name, spec);
	for (at = name; (at = strstr(at, spec)); at++)
		if (at == name || at[-1] == '-')
			return 1;
	return 0;
}

int repo_lookup(const struct repo *r, const char *minor, const struct pidx *index,
		const char *spec, struct lookup *out)
{
	struct pending *pend;
	struct strbuf cand = STRBUF_INIT;
	size_t npend, i, found = 0;
	char *end;
	unsigned long n = strtoul(spec, &end, 10);

	memset(out, 0, sizeof(*out));
	if (end != spec && isdigit((unsigned char)*spec) &&
	    (!strcmp(end, "@i") || !strcmp(end, "@p"))) {
		if (end[1] == 'i') {
			if (n >= index->n)
				return pr_error("%s: minor version %.7s has %zu registered profile%s", spec,
						minor, index->n, index->n == 1 ? "" : "s");
			out->registered = 1;
			out->entry = n;
			return 0;
		}
		repo_pending(r, &pend, &npend);
		if (n >= npend) {
			pending_free(pend, npend);
			return pr_error("%s: there %s %zu pending profile%s", spec,
					npend == 1 ? "is" : "are", npend, npend == 1 ? "" : "s");
		}
		out->path = xstrdup(pend[n].path);
		pending_free(pend, npend);
		return 0;
	}
	/* a path names exactly that file, never a registered name that ends alike */
	if (strchr(spec, '/')) {
		struct stat st;
		if (stat(spec, &st) < 0)
			return pr_error_errno("%s", spec);
		if (!S_ISREG(st.st_mode))
			return pr_error("%s is not a profile file", spec);
		out->path = xstrdup(spec);
		return 0;
	}
	/* a bare name: registered names, then a file here, then part of a jobs name;
	 * it must name one profile */
	for (i = 0; i < index->n; i++)
		if (!strcmp(fs_basename(index->entries[i].path), spec)) {
			strbuf_addf(&cand, "%s%zu@i", found ? ", " : "", i);
			if (!found++)
				out->entry = i;
		}
	if (found && fs_exists(spec))
		strbuf_addf(&cand, ", ./%s", spec), found++;
	if (found > 1) {
		pr_error("'%s' is ambiguous: it names %s; give one of these", spec, cand.buf);
		strbuf_release(&cand);
		return -1;
	}
	if (found == 1) {
		strbuf_release(&cand);
		out->registered = 1;
		return 0;
	}
	if (fs_exists(spec)) {
		out->path = xstrdup(spec);
		return 0;
	}
	repo_pending(r, &pend, &npend);
	for (i = 0; i < npend; i++)
		if (pending_matches(fs_basename(pend[i].path), spec)) {
			strbuf_addf(&cand, "%s%zu@p (%s)", found ? ", " : "", i,
				    fs_basename(pend[i].path));
			if (!found++)
				out->path = xstrdup(pend[i].path);
		}
	pending_free(pend, npend);
	if (found == 1) {
		strbuf_release(&cand);
		return 0;
	}
	free(out->path);
	out->path = NULL;
	if (found > 1)
		pr_error("'%s' matches several pending profiles: %s; give N@p or more of the name",
			 spec, cand.buf);
	else
		pr_error("profile '%s' not found: not N@i/N@p, not registered for %.7s, not a file, "
			 "not in .perun/jobs",
			 spec, minor);
	strbuf_release(&cand);
	return -1;
}

void repo_entry_hex(const struct pidx *index, size_t i, char hex[SHA1_HEXSZ + 1])
{
	sha1_to_hex(index->entries[i].id, hex);
}

int repo_load(const struct repo *r, const struct pidx *index, const struct lookup *l,
	      struct profile *p)
{
	struct strbuf json = STRBUF_INIT;
	char hex[SHA1_HEXSZ + 1];
	int ret;

	if (!l->registered)
		return profile_load(p, l->path);
	repo_entry_hex(index, l->entry, hex);
	if (store_read_object(r->dir, hex, &json, NULL) < 0) {
		strbuf_release(&json);
		return pr_error("profile %zu@i (%s, object %.12s) cannot be used: run 'perun fsck' "
				"to check the store (it names what is damaged and what to restore), or "
				"unregister it with 'perun rm %zu@i'",
				l->entry, index->entries[l->entry].path, hex, l->entry);
	}
	ret = profile_read(p, json.buf, json.len, hex);
	strbuf_release(&json);
	return ret;
}

/* The stored object keeps the origin (set to minor when the file had none):
 * it is how 'perun fsck' re-indexes objects whose index was damaged.  */
int repo_register(struct repo *r, const char *minor, int explicit_rev, const char *path, int keep,
		  size_t *entry, char hex[SHA1_HEXSZ + 1])
{
	struct pidx index;
	struct profile p = { NULL };
	struct stat st;
	char *origin = NULL, *jobs = NULL;
	unsigned char raw[SHA1_RAWSZ];
	struct tagset tags = TAGSET_INIT;
	char tag[TAG_HEXSZ + 1];
	const char *json;
	size_t i;
	int ret = -1;

	const char *why;
	char *shown = xstrdup_printable(path);

	pidx_init(&index);
	/* the file's name becomes the entry's name, which push publishes and
	 * every fetch checks: refused here, not on every other host */
	why = pidx_name_problem(fs_basename(path));
	if (why) {
		pr_error("%s: refusing to register a profile so named: %s; rename the file", shown,
			 why);
		goto out;
	}
	if (profile_load(&p, path) < 0 || profile_validate_for_store(&p, shown) < 0)
		goto out;
	origin = profile_take_origin(&p);
	if (!origin && !explicit_rev) {
		pr_error("%s has no origin: collect it inside the repository, or say which minor "
			 "version it belongs to with -m REV",
			 shown);
		goto out;
	}
	if (origin && strcmp(origin, minor)) {
		pr_error("%s was collected at %.7s, not %.7s: check that commit out, or give "
			 "-m %.7s",
			 shown, origin, minor, origin);
		goto out;
	}
	json_object_object_add(p.root, "origin", json_object_new_string(minor));
	json = profile_to_json(&p);
	if (store_write_object(r->dir, profile_type(&p), json, strlen(json), hex) < 0)
		goto out;
	for (i = 0; i < SHA1_RAWSZ; i++)
		sscanf(hex + 2 * i, "%2hhx", &raw[i]);
	if (repo_lock(r) < 0)
		goto out;
	/* read under the lock: another add may have written it meanwhile */
	if (store_read_index(r->dir, minor, &index) < 0)
		goto unlock;
	for (i = 0; i < index.n; i++)
		if (!memcmp(index.entries[i].id, raw, SHA1_RAWSZ)) {
			pr_error("%s: the same profile is already registered for %.7s as %zu@i (%s)",
				 shown, minor, i, index.entries[i].path);
			goto unlock;
		}
	if (stat(path, &st) < 0)
		st.st_mtime = time(NULL);
	/* this registration's own tag first: a removal elsewhere that did not
	 * see it leaves it registered */
	if (tag_new(tag) < 0)
		goto unlock;
	tagset_append(&tags, hex, tag);
	if (store_add_tagset(r->dir, TAGS_ADDED, minor, &tags, NULL) < 0)
		goto unlock;
	pidx_append(&index, (uint32_t)st.st_mtime, raw, fs_basename(path));
	if (store_write_index(r->dir, minor, &index) < 0)
		goto unlock;
	if (entry)
		*entry = index.n - 1;
	jobs = xstrfmt("%s/jobs/", r->dir);
	{
		char *abs = realpath(path, NULL);
		if (!keep && abs && !strncmp(abs, jobs, strlen(jobs)) && unlink(abs) < 0)
			pr_error_errno("cannot remove %s", abs);
		free(abs);
	}
	ret = 0;
unlock:
	repo_unlock(r);
out:
	free(shown);
	free(jobs);
	free(origin);
	tagset_release(&tags);
	profile_release(&p);
	pidx_release(&index);
	return ret;
}

int repo_remove(struct repo *r, const char *minor, int unborn, const char *const *names, size_t n,
		struct strv *dropped, struct strv *deleted)
{
	struct pidx index;
	size_t *drop, k, nd = 0, ndel = 0, i, j;
	char **del, *jobs;
	struct tagset added = TAGSET_INIT, removed = TAGSET_INIT, gone = TAGSET_INIT;
	int ret = 0;

	if (unborn ? (pidx_init(&index), 0) : store_read_index(r->dir, minor, &index) < 0)
		return -1;
	if (!unborn && (store_read_tagset(r->dir, TAGS_ADDED, minor, &added) < 0 ||
			store_read_tagset(r->dir, TAGS_REMOVED, minor, &removed) < 0)) {
		tagset_release(&added);
		pidx_release(&index);
		return -1;
	}
	drop = xcalloc(n ? n : 1, sizeof(*drop));
	del = xcalloc(n ? n : 1, sizeof(*del));
	jobs = xstrfmt("%s/jobs/", r->dir);
	/* resolve every argument before removing anything: numbers stay valid */
	for (i = 0; i < n; i++) {
		struct lookup l;
		char *abs;
		if (repo_lookup(r, minor, &index, names[i], &l) < 0) {
			ret = -1;
			continue;
		}
		if (l.registered) {
			drop[nd++] = l.entry;
			continue;
		}
		abs = realpath(l.path, NULL);
		free(l.path);
		if (!abs || strncmp(abs, jobs, strlen(jobs))) {
			pr_error("%s is not registered for %.7s and not a pending profile (perun rm "
				 "deletes no file outside .perun/jobs)",
				 names[i], minor);
			free(abs);
			ret = -1;
			continue;
		}
		for (j = 0; j < ndel && strcmp(del[j], abs); j++)
			;
		if (j < ndel)
			free(abs);
		else
			del[ndel++] = abs;
	}
	/* remove from the highest index down so numbers stay valid; each
	 * removal leaves tombstones that push and fetch carry: the tags of the
	 * registrations seen here, so an add this host has not seen survives */
	for (k = index.n; k-- > 0;) {
		int hit = 0;
		char hex[SHA1_HEXSZ + 1];
		for (j = 0; j < nd; j++)
			hit |= drop[j] == k;
		if (hit) {
			strv_push(dropped, index.entries[k].path);
			repo_entry_hex(&index, k, hex);
			tags_live(&added, &removed, hex, 1, &gone);
			pidx_remove(&index, k);
		}
	}
	if (nd && (store_add_tagset(r->dir, TAGS_REMOVED, minor, &gone, NULL) < 0 ||
		   store_write_index(r->dir, minor, &index) < 0))
		ret = -1;
	tagset_release(&added);
	tagset_release(&removed);
	tagset_release(&gone);
	for (j = 0; j < ndel; j++) {
		if (unlink(del[j]) < 0)
			ret = pr_error_errno("cannot remove %s", del[j]);
		else
			strv_push(deleted, fs_basename(del[j]));
		free(del[j]);
	}
	free(del);
	free(jobs);
	free(drop);
	pidx_release(&index);
	return ret;
}

int repo_add_paths(const struct repo *r, const char *minor, const char *const *names, size_t n,
		   char ***paths)
{
	struct pidx index;
	size_t i;
	int failed = 0;

	*paths = NULL;
	if (store_read_index(r->dir, minor, &index) < 0)
		return -1;
	*paths = xcalloc(n ? n : 1, sizeof(**paths));
	for (i = 0; i < n; i++) {
		struct lookup l;
		struct stat st;
		/* add registers files: a file of that name is meant, not a
		 * registered profile of the same name */
		if (!strchr(names[i], '@') && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			(*paths)[i] = xstrdup(names[i]);
			continue;
		}
		if (repo_lookup(r, minor, &index, names[i], &l) < 0) {
			failed++;
		} else if (l.registered) {
			pr_error("%s is already registered for %.7s as %zu@i", names[i], minor, l.entry);
			failed++;
		} else {
			(*paths)[i] = l.path;
		}
	}
	pidx_release(&index);
	return failed;
}

int repo_minor_types(const struct repo *r, const char *minor, char **types, size_t *n)
{
	struct strbuf sb = STRBUF_INIT;
	struct pidx index;
	size_t i;
	int ret = 0;

	if (store_read_index(r->dir, minor, &index) < 0) {
		ret = -1;
		pidx_init(&index);
	}
	for (i = 0; i < index.n; i++) {
		struct profile p;
		struct lookup l = { 1, i, NULL };
		if (repo_load(r, &index, &l, &p) == 0) {
			if (!strstr(strbuf_str(&sb), profile_type(&p)) && sb.len < 200) {
				if (sb.len)
					strbuf_addch(&sb, ',');
				strbuf_addstr(&sb, profile_type(&p));
			}
			profile_release(&p);
		}
	}
	*n = index.n;
	pidx_release(&index);
	*types = sb.len ? strbuf_detach(&sb) : xstrdup("");
	strbuf_release(&sb);
	return ret;
}
