/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun aggregate --release REV --shard HOST [--time-box SECONDS] [--dir DIR]
 *                 [-m REV] PROFILE...
 * perun aggregate [--release REV] --expire-before TIME [--dir DIR]
 * Per-release, per-shard, time-boxed aggregates (report/aggregate.h).  */
#include "config.h"

#define PR_FMT "perun aggregate"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "profile/profile.h"
#include "report/aggregate.h"
#include "store/repo.h"
#include "util/fs.h"
#include "util/log.h"
#include "vcs/vcs.h"

#define USAGE                                                                                      \
	"usage: perun aggregate --release REV --shard HOST [--time-box SECONDS] [--dir DIR]\n"     \
	"                       [-m REV] PROFILE...\n"                                             \
	"   or: perun aggregate [--release REV] --expire-before TIME [--dir DIR]\n"

static void usage_aggregate(FILE *f)
{
	fprintf(f, USAGE
		"\n"
		"Merges profiles (N@i, N@p, names, paths, or other aggregates) into\n"
		"DIR/REV/aggregate/report.TIMEBOX.HOST, one file per time box of SECONDS\n"
		"(default 86400) holding per function calls, total, exclusive, min, max and a\n"
		"log2 histogram for quantiles.  Each input is keyed by its object id, so the\n"
		"same profile aggregated twice counts once.  DIR defaults to\n"
		".perun/aggregates.  --expire-before TIME (seconds since the epoch, or\n"
		"YYYY-MM-DD) deletes the time boxes that end before TIME: only report files\n"
		"perun wrote.  'perun show FILE|DIR/REV' prints an aggregate.\n");
}

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
		if (!is_aggregate_path(files[i])) {
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

int show_aggregate(const char *path, const char *format)
{
	struct strbuf out = STRBUF_INIT;
	struct agg a;

	if (strcmp(format, "summary") && strcmp(format, "json")) {
		fprintf(stderr,
			"perun show: an aggregate holds no call stacks: use --format summary "
			"or json\n");
		return EXIT_USAGE;
	}
	if (agg_load_path(path, &a) < 0)
		return EXIT_FAIL;
	if (!strcmp(format, "json"))
		agg_to_json(&a, &out);
	else
		agg_summary(&a, &out);
	fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
	strbuf_release(&out);
	agg_release(&a);
	return EXIT_OK;
}

int is_aggregate_path(const char *path)
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
		if (is_aggregate_path(files[i]) && read_agg(&a, files[i]) == 0) {
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

/* TIME: seconds since the epoch, or YYYY-MM-DD (UTC).  */
static int parse_time(const char *s, int64_t *t)
{
	struct tm tm;
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s && !*end) {
		*t = v;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (!end || *end)
		return -1;
	*t = (int64_t)timegm(&tm);
	return 0;
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

static int expire(const char *dir, const char *release, int64_t t)
{
	DIR *d;
	struct dirent *de;
	long total = 0, k;

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
		return pr_error_errno("%s", dir);
	}
	if (total < 0)
		return -1;
	printf("expired %ld time box%s ending before %lld\n", total, total == 1 ? "" : "es",
	       (long long)t);
	return 0;
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
	if (fs_exists(spec) && is_aggregate_path(spec)) {
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

int cmd_aggregate(int argc, char **argv, struct ctx *ctx)
{
	const char *release = NULL, *shard = NULL, *dir_opt = NULL, *rev = "HEAD";
	int64_t box = 86400, before = 0;
	int have_before = 0, have_repo = 0, explicit_rev = 0, ret = EXIT_FAIL, i;
	char **specs = NULL, *dir = NULL, *pd = NULL, minor[41] = "";
	size_t nspecs = 0, k, written = 0, added = 0, already = 0;
	struct inputs in;
	struct pidx index;
	struct repo r;

	(void)ctx;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage_aggregate(stdout);
			free(specs);
			return EXIT_OK;
		} else if (!strcmp(a, "--release") && i + 1 < argc) {
			release = argv[++i];
		} else if (!strcmp(a, "--shard") && i + 1 < argc) {
			shard = argv[++i];
		} else if (!strcmp(a, "--dir") && i + 1 < argc) {
			dir_opt = argv[++i];
		} else if (!strcmp(a, "-m") && i + 1 < argc) {
			rev = argv[++i];
			explicit_rev = 1;
		} else if (!strcmp(a, "--time-box") && i + 1 < argc) {
			char *end;
			long long v = strtoll(argv[++i], &end, 10);
			if (*end || v <= 0) {
				fprintf(stderr,
					"perun aggregate: --time-box takes a positive number "
					"of seconds, not '%s'\n",
					argv[i]);
				free(specs);
				return EXIT_USAGE;
			}
			box = v;
		} else if (!strcmp(a, "--expire-before") && i + 1 < argc) {
			if (parse_time(argv[++i], &before) < 0) {
				fprintf(stderr,
					"perun aggregate: --expire-before takes seconds since "
					"the epoch or YYYY-MM-DD, not '%s'\n",
					argv[i]);
				free(specs);
				return EXIT_USAGE;
			}
			have_before = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr,
				"perun aggregate: unknown option or missing value '%s'\n" USAGE, a);
			free(specs);
			return EXIT_USAGE;
		} else {
			specs = xrealloc(specs, (nspecs + 1) * sizeof(*specs));
			specs[nspecs++] = argv[i];
		}
	}
	if ((release && !agg_valid_id(release)) || (shard && !agg_valid_id(shard))) {
		fprintf(stderr, "perun aggregate: release and shard ids name files: no '/', no "
				"leading '.', no spaces\n");
		free(specs);
		return EXIT_USAGE;
	}
	if (!have_before && (!release || !shard || !nspecs)) {
		fprintf(stderr, "perun aggregate: --release, --shard and at least one PROFILE are "
				"needed (or --expire-before)\n" USAGE);
		free(specs);
		return EXIT_USAGE;
	}
	if (nspecs && (!release || !shard)) {
		fprintf(stderr, "perun aggregate: profiles need --release and --shard\n" USAGE);
		free(specs);
		return EXIT_USAGE;
	}
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
	if (dir_opt)
		dir = xstrdup(dir_opt);
	else if (have_repo)
		dir = xstrfmt("%s/aggregates", r.dir);
	else {
		pr_error("not in a perun repository: say where aggregates live with --dir DIR");
		goto out;
	}
	{
		char *abs = fs_absolute(dir);
		if (!abs)
			goto out;
		free(dir);
		dir = abs;
	}
	/* perun runs as root: DIR, and every directory above it, must be ours
	 * or root's and writable by no one else, or a link planted by another
	 * user would take what perun writes or deletes */
	if (nspecs) {
		struct stat st;
		int existed = lstat(dir, &st) == 0;
		if (fs_trust_dir(dir, 1, DIR_FIX) < 0)
			goto out;
		/* made 0700 by fs_trust_dir; aggregates are for everyone to read */
		if (!existed && chmod(dir, 0755) < 0) {
			pr_error_errno("chmod %s", dir);
			goto out;
		}
	}
	if (!nspecs && have_before && fs_exists(dir) && fs_trust_dir(dir, 0, DIR_FIX) < 0)
		goto out;
	if (have_repo && nspecs) {
		int unborn = explicit_rev ? 0 : vcs_unborn(r.worktree);
		if (unborn < 0 || (!unborn && (vcs_massage(r.worktree, rev, minor) < 0 ||
					       store_read_index(r.dir, minor, &index) < 0)))
			goto out;
		if (unborn)
			snprintf(minor, sizeof(minor), "HEAD");
	}
	for (k = 0; k < nspecs; k++)
		if (add_input(&in, &r, have_repo, minor, &index, specs[k]) < 0)
			goto out;
	/* every time box touched: read, add, write */
	for (k = 0; k < in.all.n;) {
		int64_t tb = agg_timebox(in.all.in[k].time, box);
		char *path = report_path(dir, release, tb, shard);
		struct agg a;
		size_t j;
		if (fs_exists(path)) {
			if (read_agg(&a, path) < 0) {
				free(path);
				goto out;
			}
			if (a.box_seconds != box) {
				pr_error(
				    "%s was written with --time-box %lld, not %lld: aggregate into "
				    "another --dir, or use the same box",
				    path, (long long)a.box_seconds, (long long)box);
				agg_release(&a);
				free(path);
				goto out;
			}
		} else {
			agg_init(&a, release, shard, tb, box);
		}
		/* the rows of this box, wherever they are in the list */
		for (j = k; j < in.all.n; j++)
			if (in.all.in[j].time != INT64_MIN &&
			    agg_timebox(in.all.in[j].time, box) == tb) {
				if (agg_add(&a, &in.all.in[j]))
					already++;
				else
					added++;
				in.all.in[j].time = INT64_MIN; /* done */
			}
		if (write_agg(path, &a) < 0) {
			agg_release(&a);
			free(path);
			goto out;
		}
		written++;
		agg_release(&a);
		free(path);
		while (k < in.all.n && in.all.in[k].time == INT64_MIN)
			k++;
	}
	if (nspecs && write_metadata(dir, release, shard) < 0)
		goto out;
	if (nspecs) {
		char *flag = xstrfmt("%s/%s/__state__/shard.%s", dir, release, shard);
		char *sdir = xstrfmt("%s/%s/__state__", dir, release);
		int bad = mkdir_trusted(sdir) < 0 ||
			  (!fs_exists(flag) && fs_write_atomic(flag, "", 0, 0644) < 0);
		free(flag);
		free(sdir);
		if (bad)
			goto out;
		printf("release %s shard %s: %zu input%s added, %zu already aggregated, %zu time "
		       "box%s written under %s/%s\n",
		       release, shard, added, added == 1 ? "" : "s", already + in.dup, written,
		       written == 1 ? "" : "es", dir, release);
	}
	if (have_before && expire(dir, release, before) < 0)
		goto out;
	ret = EXIT_OK;
out:
	agg_release(&in.all);
	pidx_release(&index);
	repo_release(&r);
	free(dir);
	free(specs);
	return ret;
}
