/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The directory of stored aggregates (store/aggregate-dir.h): reading,
 * writing and expiring its report files.  */
#include "config.h"

#define PR_FMT "aggregate"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profile/profile.h"
#include "store/aggregate-dir.h"
#include "store/aggregate.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "vcs/vcs.h"

static char *report_path(const char *dir, const char *release, int64_t box, const char *shard)
{
	return xstrfmt("%s/%s/aggregate/report.%lld.%s", dir, release, (long long)box, shard);
}

static int read_agg(struct agg *a, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	if (strbuf_read_file(&sb, path) < 0) {
		strbuf_release(&sb);
		return pr_error_errno("%s", path);
	}
	ret = agg_parse(a, sb.buf, sb.len, path);
	strbuf_release(&sb);
	return ret;
}

#define DIR_FIX "remove it or give another --dir"

/* DIR/release/... under a DIR already trusted: checked from '/' without
 * following links, each missing directory created beside its verified
 * parent, so nothing is created where another user points.  */
static int mkdir_trusted(const char *sub)
{
	return fs_make_trusted_dir(sub, 0755, DIR_FIX);
}

static int write_agg(const char *path, const struct agg *a)
{
	struct strbuf sb = STRBUF_INIT;
	char *dir = xstrdup(path);
	int ret;

	*strrchr(dir, '/') = '\0';
	agg_to_json(a, &sb);
	ret = mkdir_trusted(dir) < 0 ? -1 : fs_write_atomic(path, sb.buf, sb.len, 0644);
	free(dir);
	strbuf_release(&sb);
	return ret;
}

/* The report files of DIR/release/aggregate: report.<digits>.<shard>.  */
static int list_reports(const char *dir, const char *release, char ***out, size_t *n)
{
	char *adir = xstrfmt("%s/%s/aggregate", dir, release);
	DIR *d = opendir(adir);
	struct dirent *de;

	*out = NULL;
	*n = 0;
	if (!d) {
		/* a release without reports, or a file beside the releases */
		int ret = errno == ENOENT || errno == ENOTDIR ? 0 : pr_error_errno("%s", adir);
		free(adir);
		return ret;
	}
	while ((de = readdir(d))) {
		const char *p = de->d_name + 7;
		if (strncmp(de->d_name, "report.", 7) || !(*p >= '0' && *p <= '9'))
			continue;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p != '.' || !agg_valid_id(p + 1))
			continue;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = xstrfmt("%s/%s", adir, de->d_name);
	}
	closedir(d);
	free(adir);
	return 0;
}

int agg_load_path(const char *path, struct agg *a)
{
	struct stat st;
	char **files;
	size_t n, i;
	int ret = 0;

	if (stat(path, &st) < 0)
		return pr_error_errno("%s", path);
	if (!S_ISDIR(st.st_mode))
		return read_agg(a, path);
	/* a release directory: every shard and time box of it */
	{
		char *parent = xstrdup(path), *slash;
		size_t len = strlen(parent);
		while (len > 1 && parent[len - 1] == '/')
			parent[--len] = '\0';
		slash = strrchr(parent, '/');
		if (list_reports(slash ? (*slash = '\0', parent[0] ? parent : "/") : ".",
				 slash ? slash + 1 : parent, &files, &n) < 0) {
			free(parent);
			return -1;
		}
		agg_init(a, slash ? slash + 1 : parent, "*", 0, 0);
		free(parent);
	}
	if (!n)
		ret = pr_error("%s holds no aggregate/report.TIMEBOX.SHARD files: is it a release "
			       "directory that perun aggregate wrote?",
			       path);
	for (i = 0; i < n; i++) {
		struct agg one;
		if (!agg_is_aggregate_path(files[i])) {
			pr_warn("%s is not a perun aggregate: skipped", files[i]);
			free(files[i]);
			continue;
		}
		if (ret == 0 && read_agg(&one, files[i]) == 0)
			agg_merge(a, &one);
		else
			ret = -1;
		if (ret == 0)
			agg_release(&one);
		free(files[i]);
	}
	free(files);
	if (ret < 0)
		agg_release(a);
	return ret;
}

int agg_is_aggregate_path(const char *path)
{
	char buf[65];
	struct stat st;
	char *sub;
	ssize_t got;
	int yes = 0, fd;

	if (stat(path, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode)) {
		sub = xstrfmt("%s/aggregate", path);
		yes = fs_exists(sub);
		free(sub);
		return yes;
	}
	/* O_NONBLOCK: a FIFO among the reports must not hang perun */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	got = read(fd, buf, 64);
	close(fd);
	return got > 0 && agg_is_aggregate(buf, (size_t)got);
}

/* aggregate/metadata.SHARD (seeds/002: the number of samples aggregated):
 * the inputs of each of the shard's time boxes, and their sum.  */
static int write_metadata(const char *dir, const char *release, const char *shard)
{
	struct strbuf sb = STRBUF_INIT;
	char **files, *path;
	size_t n, i, total = 0, k = 0;
	int ret = -1;

	if (list_reports(dir, release, &files, &n) < 0)
		return -1;
	strbuf_addstr(&sb, "{\"perun_aggregate_metadata\":1,\"shard\":");
	strbuf_add_json_str(&sb, shard);
	strbuf_addstr(&sb, ",\"timeboxes\":{");
	for (i = 0; i < n; i++) {
		struct agg a;
		if (agg_is_aggregate_path(files[i]) && read_agg(&a, files[i]) == 0) {
			char *want = xstrfmt("report.%lld.%s", (long long)a.timebox, a.shard);
			/* a file counts when its name says what its content is */
			if (!strcmp(a.shard, shard) && !strcmp(strrchr(files[i], '/') + 1, want)) {
				strbuf_addf(&sb, "%s\"%lld\":%zu", k++ ? "," : "",
					    (long long)a.timebox, a.n);
				total += a.n;
			}
			free(want);
			agg_release(&a);
		}
		free(files[i]);
	}
	free(files);
	strbuf_addf(&sb, "},\"inputs\":%zu}\n", total);
	path = xstrfmt("%s/%s/aggregate/metadata.%s", dir, release, shard);
	ret = fs_write_atomic(path, sb.buf, sb.len, 0644);
	free(path);
	strbuf_release(&sb);
	return ret;
}

/* metadata.SHARD of every shard of release, after time boxes went.  */
static int refresh_metadata(const char *dir, const char *release)
{
	char *state = xstrfmt("%s/%s/__state__", dir, release);
	DIR *d = opendir(state);
	struct dirent *de;
	int ret = 0;

	free(state);
	if (!d)
		return 0;
	while (ret == 0 && (de = readdir(d)))
		if (!strncmp(de->d_name, "shard.", 6) && agg_valid_id(de->d_name + 6))
			ret = write_metadata(dir, release, de->d_name + 6);
	closedir(d);
	return ret;
}

static int cmp_agg(const void *a, const void *b)
{
	return strcmp(((const struct agg *)a)->release, ((const struct agg *)b)->release);
}

int agg_load_releases(const char *dir, struct agg **out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return 0;
	while (ret == 0 && (de = readdir(d))) {
		char *rel, *sub;
		int is;
		if (!agg_valid_id(de->d_name))
			continue;
		rel = xstrfmt("%s/%s", dir, de->d_name);
		sub = xstrfmt("%s/aggregate", rel);
		is = fs_exists(sub);
		free(sub);
		if (is) {
			*out = xrealloc(*out, (*n + 1) * sizeof(**out));
			if (agg_load_path(rel, &(*out)[*n]) < 0)
				ret = -1;
			else
				(*n)++;
		}
		free(rel);
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_agg);
	return ret;
}

/* Deletes the report files of release that end before t; returns how many.
 * Only files perun wrote go: DIR/release/aggregate is trusted (no link, no
 * other writer), each file is ours and says it is this box of this shard,
 * and it is unlinked through the checked directory.  */
static long expire_release(const char *dir, const char *release, int64_t t)
{
	char **files, *rdir, *adir;
	size_t n, i;
	long gone = 0;
	int dfd;
	struct stat st;

	rdir = xstrfmt("%s/%s", dir, release);
	adir = xstrfmt("%s/aggregate", rdir);
	/* a release without reports, or a file beside the releases */
	if (lstat(adir, &st) < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		free(rdir);
		free(adir);
		return 0;
	}
	if (fs_trust_dir(rdir, 0, DIR_FIX) < 0 || fs_trust_dir(adir, 0, DIR_FIX) < 0) {
		free(rdir);
		free(adir);
		return -1;
	}
	free(rdir);
	dfd = open(adir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		gone = pr_error_errno("%s", adir);
		free(adir);
		return gone;
	}
	free(adir);
	if (list_reports(dir, release, &files, &n) < 0) {
		close(dfd);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct agg a;
		struct strbuf sb = STRBUF_INIT;
		const char *base = strrchr(files[i], '/') + 1;
		char *want;
		int fd = -1;
		if (gone < 0) {
			/* an error: the rest are left alone */
		} else if ((fd = fs_open_trusted(files[i], 0)) < 0) {
			if (errno != ENOENT)
				pr_warn("%s: left alone", files[i]);
		} else if (fs_read_fd(fd, &sb) < 0 || sb.len < 1 ||
			   !agg_is_aggregate(sb.buf, sb.len < 64 ? sb.len : 64)) {
			pr_warn("%s is not a perun aggregate: left alone", files[i]);
		} else if (agg_parse(&a, sb.buf, sb.len, files[i]) == 0) {
			/* only what perun wrote: the file says it is this box of this shard */
			want = xstrfmt("report.%lld.%s", (long long)a.timebox, a.shard);
			if (!strcmp(want, base) && a.box_seconds > 0 &&
			    a.timebox + a.box_seconds <= t) {
				if (unlinkat(dfd, base, 0) < 0)
					gone = pr_error_errno("%s", files[i]);
				else
					gone++;
			}
			free(want);
			agg_release(&a);
		}
		if (fd >= 0)
			close(fd);
		strbuf_release(&sb);
		free(files[i]);
	}
	free(files);
	close(dfd);
	if (gone > 0)
		gone = refresh_metadata(dir, release) < 0 ? -1 : gone;
	return gone;
}

long agg_expire(const char *dir_arg, const char *release, int64_t t)
{
	DIR *d;
	struct dirent *de;
	long total = 0, k;
	char *dir = fs_absolute(dir_arg);

	if (!dir)
		return -1;
	if (release) {
		total = expire_release(dir, release, t);
	} else if ((d = opendir(dir))) {
		while (total >= 0 && (de = readdir(d)))
			if (agg_valid_id(de->d_name)) {
				k = expire_release(dir, de->d_name, t);
				total = k < 0 ? -1 : total + k;
			}
		closedir(d);
	} else if (errno != ENOENT) {
		total = pr_error_errno("%s", dir);
	}
	free(dir);
	return total;
}

/* One input: its row, or an aggregate's rows.  */
struct inputs {
	struct agg all; /* rows by id; release/shard unused */
	size_t dup;	/* inputs named twice on the command line */
};

static int add_input(struct inputs *in, struct repo *r, int have_repo, const char *minor,
		     struct pidx *index, const char *spec)
{
	struct profile p = {NULL};
	struct agg_input row;
	struct lookup l;
	struct stat st;
	char hex[SHA1_HEXSZ + 1];
	int64_t t;
	int ret = -1;

	memset(&l, 0, sizeof(l));
	if (fs_exists(spec) && agg_is_aggregate_path(spec)) {
		struct agg other;
		if (agg_load_path(spec, &other) < 0)
			return -1;
		agg_merge(&in->all, &other);
		agg_release(&other);
		return 0;
	}
	if (have_repo) {
		if (repo_lookup(r, minor, index, spec, &l) < 0 || repo_load(r, index, &l, &p) < 0)
			goto out;
	} else if (profile_load(&p, spec) < 0) {
		goto out;
	}
	if (l.registered) {
		repo_entry_hex(index, l.entry, hex);
		t = index->entries[l.entry].time;
	} else {
		/* a file: the id its object would have, as stored */
		struct strbuf obj = STRBUF_INIT;
		const char *json = profile_to_json(&p);
		object_build(&obj, profile_type(&p), json, strlen(json));
		sha1_hex(obj.buf, obj.len, hex);
		strbuf_release(&obj);
		t = stat(l.path ? l.path : spec, &st) == 0 ? (int64_t)st.st_mtime
							   : (int64_t)time(NULL);
	}
	agg_input_from_profile(&row, &p, hex, t);
	in->dup += agg_add(&in->all, &row);
	agg_input_release(&row);
	ret = 0;
out:
	free(l.path);
	profile_release(&p);
	return ret;
}


/* DIR, made absolute; perun runs as root: DIR, and every directory above
 * it, must be ours or root's and writable by no one else, or a link planted
 * by another user would take what perun writes or deletes.  */
static char *open_dir(const struct agg_job *job, const struct repo *r, int have_repo)
{
	char *dir, *abs;

	if (job->dir)
		dir = xstrdup(job->dir);
	else if (have_repo)
		dir = xstrfmt("%s/aggregates", r->dir);
	else {
		pr_error("not in a perun repository: say where aggregates live with --dir DIR");
		return NULL;
	}
	abs = fs_absolute(dir);
	free(dir);
	if (!abs)
		return NULL;
	if (job->nspecs) {
		struct stat st;
		int existed = lstat(abs, &st) == 0;
		if (fs_trust_dir(abs, 1, DIR_FIX) < 0)
			goto fail;
		/* made 0700 by fs_trust_dir; aggregates are for everyone to read */
		if (!existed && chmod(abs, 0755) < 0) {
			pr_error_errno("chmod %s", abs);
			goto fail;
		}
	}
	if (!job->nspecs && job->expire && fs_exists(abs) && fs_trust_dir(abs, 0, DIR_FIX) < 0)
		goto fail;
	return abs;
fail:
	free(abs);
	return NULL;
}

/* Every time box the inputs touch: read, add, write; then the shard's
 * metadata and flag.  */
static int store_inputs(const struct agg_job *job, const char *dir, struct inputs *in,
			struct agg_job_result *res)
{
	size_t k;
	char *flag, *sdir;
	int bad;

	for (k = 0; k < in->all.n;) {
		int64_t tb = agg_timebox(in->all.in[k].time, job->box);
		char *path = report_path(dir, job->release, tb, job->shard);
		struct agg a;
		size_t j;
		if (fs_exists(path)) {
			if (read_agg(&a, path) < 0) {
				free(path);
				return -1;
			}
			if (a.box_seconds != job->box) {
				pr_error(
				    "%s was written with --time-box %lld, not %lld: aggregate into "
				    "another --dir, or use the same box",
				    path, (long long)a.box_seconds, (long long)job->box);
				agg_release(&a);
				free(path);
				return -1;
			}
		} else {
			agg_init(&a, job->release, job->shard, tb, job->box);
		}
		/* the rows of this box, wherever they are in the list */
		for (j = k; j < in->all.n; j++)
			if (in->all.in[j].time != INT64_MIN &&
			    agg_timebox(in->all.in[j].time, job->box) == tb) {
				if (agg_add(&a, &in->all.in[j]))
					res->already++;
				else
					res->added++;
				in->all.in[j].time = INT64_MIN; /* done */
			}
		if (write_agg(path, &a) < 0) {
			agg_release(&a);
			free(path);
			return -1;
		}
		res->written++;
		agg_release(&a);
		free(path);
		while (k < in->all.n && in->all.in[k].time == INT64_MIN)
			k++;
	}
	if (write_metadata(dir, job->release, job->shard) < 0)
		return -1;
	flag = xstrfmt("%s/%s/__state__/shard.%s", dir, job->release, job->shard);
	sdir = xstrfmt("%s/%s/__state__", dir, job->release);
	bad = mkdir_trusted(sdir) < 0 || (!fs_exists(flag) && fs_write_atomic(flag, "", 0, 0644) < 0);
	free(flag);
	free(sdir);
	return bad ? -1 : 0;
}

int agg_job_run(const struct agg_job *job, struct agg_job_result *res)
{
	int have_repo = 0, ret = -1;
	char *pd = NULL, minor[41] = "";
	size_t k;
	struct inputs in;
	struct pidx index;
	struct repo r;

	memset(res, 0, sizeof(*res));
	res->expired = -1;
	memset(&r, 0, sizeof(r));
	r.lock_fd = -1;
	pidx_init(&index);
	agg_init(&in.all, "", "", 0, 0);
	in.dup = 0;
	pd = repo_locate();
	if (pd) {
		free(pd);
		if (repo_find(&r) < 0)
			goto out;
		have_repo = 1;
	}
	if (!(res->dir = open_dir(job, &r, have_repo)))
		goto out;
	if (have_repo && job->nspecs) {
		int unborn = job->explicit_rev ? 0 : vcs_unborn(r.worktree);
		if (unborn < 0 || (!unborn && (vcs_massage(r.worktree, job->rev, minor) < 0 ||
					       store_read_index(r.dir, minor, &index) < 0)))
			goto out;
		if (unborn)
			snprintf(minor, sizeof(minor), "HEAD");
	}
	for (k = 0; k < job->nspecs; k++)
		if (add_input(&in, &r, have_repo, minor, &index, job->specs[k]) < 0)
			goto out;
	if (job->nspecs) {
		if (store_inputs(job, res->dir, &in, res) < 0)
			goto out;
		res->already += in.dup;
		res->stored = 1;
	}
	if (job->expire && (res->expired = agg_expire(res->dir, job->release, job->before)) < 0)
		goto out;
	ret = 0;
out:
	agg_release(&in.all);
	pidx_release(&index);
	repo_release(&r);
	return ret;
}

void agg_job_result_release(struct agg_job_result *res)
{
	free(res->dir);
	res->dir = NULL;
}
