/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The collect session: helpers every phase uses.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "collect/session.h"
#include "render/script.h"
#include "util/fs.h"
#include "util/log.h"

/* Splits S into words like a shell, without expanding anything: blanks separate
 * words; '...' keeps everything literally; "..." keeps everything but \\, \", \$ and
 * \` escapes; a backslash outside quotes keeps the next character.  $VAR, ~, globs and
 * command substitution stay as written, and | ; & < > are ordinary characters.  */
int collect_split_words(const char *s, struct strv *out, const char *what)
{
	struct strbuf w = STRBUF_INIT;
	const char *p = s;
	int in_word = 0;

	if (!s)
		return 0;
	for (;;) {
		char c = *p;
		if (!c || c == ' ' || c == '\t' || c == '\n') {
			if (in_word)
				strv_push(out, strbuf_str(&w));
			strbuf_reset(&w);
			in_word = 0;
			if (!c)
				break;
			p++;
			continue;
		}
		in_word = 1;
		if (c == '\'') {
			const char *q = strchr(p + 1, '\'');
			if (!q)
				goto unterminated;
			strbuf_add(&w, p + 1, (size_t)(q - p - 1));
			p = q + 1;
		} else if (c == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1] && strchr("\\\"$`", p[1]))
					p++;
				strbuf_addch(&w, *p);
			}
			if (!*p)
				goto unterminated;
			p++;
		} else if (c == '\\' && p[1]) {
			strbuf_addch(&w, p[1]);
			p += 2;
		} else {
			strbuf_addch(&w, c);
			p++;
		}
	}
	strbuf_release(&w);
	return 0;
unterminated:
	strbuf_release(&w);
	return pr_error("cannot split %s '%s': a quote is not closed", what, s);
}

double collect_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Identity of a file for the cache key: size and mtime.  */
char *collect_file_identity(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) < 0)
		return xstrdup("-");
	return xstrfmt("%s:%lld:%lld.%09ld", path, (long long)st.st_size,
		       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

void collect_wd(struct watchdog *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->f)
		return;
	fprintf(w->f, "[%10.6f] ", collect_now() - w->t0);
	va_start(ap, fmt);
	vfprintf(w->f, fmt, ap);
	va_end(ap);
	fputc('\n', w->f);
	fflush(w->f);
}

void collect_progress_end(struct stap_log *l)
{
	if (!l->progress_shown)
		return;
	fputs("\r\033[K", stderr);
	l->progress_shown = 0;
}

/* n with a comma every three digits.  */
static const char *grouped(uint64_t n, char *buf, size_t size)
{
	char digits[32];
	size_t len = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, n), i, j = 0;

	for (i = 0; i < len && j + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = digits[i];
	}
	buf[j] = '\0';
	return buf;
}

/* The loader's "perun-progress: MS EVENTS LOST", redrawn in place.  */
static void show_progress(struct stap_log *l, const char *line)
{
	unsigned long long ms, events, lost;
	char e[32], r[32], x[32];
	double s;

	if (sscanf(line, "perun-progress: %llu %llu %llu", &ms, &events, &lost) != 3)
		return;
	s = (double)ms / 1e3;
	fprintf(stderr, "\rperun: tracing for %.0f s: %s events (%s/s), %s lost\033[K", s,
		grouped(events, e, sizeof(e)),
		grouped(s > 0 ? (uint64_t)((double)(events - l->progress_events) /
					   (s - l->progress_s > 0 ? s - l->progress_s : 1))
			      : 0,
			r, sizeof(r)),
		grouped(lost, x, sizeof(x)));
	l->progress_events = events;
	l->progress_s = s;
	l->progress_shown = 1;
}

void collect_stap_line(void *ctx, const char *line)
{
	struct stap_log *l = ctx;
	unsigned long long lost;
	int cpu;

	if (!*line)
		return;
	if (!strncmp(line, "perun-progress: ", 16)) {
		if (l->trace_progress && !l->quiet)
			show_progress(l, line);
		return;
	}
	collect_progress_end(l);
	strbuf_addstr(&l->all, line);
	strbuf_addch(&l->all, '\n');
	/* the loader's detach: said once, in the closing line */
	if (sscanf(line, "perun: detached %*u probe points in %lf ms", &l->detach_ms) == 1)
		return;
	/* perun's own loader speaks to the user directly */
	if (!strncmp(line, "perun: ", 7)) {
		if (!l->quiet)
			pr_info("%s", line);
		return;
	}
	if (!strncmp(line, "Pass ", 5) && line[5] >= '1' && line[5] <= '5') {
		l->pass = line[5] - '0';
		if (l->progress)
			fprintf(stderr, "\rperun: compiling %zu probes: pass %d/4 done ", l->nprobes,
				l->pass);
		return;
	}
	if (sscanf(line, "WARNING: lost %llu perf_events on cpu %d", &lost, &cpu) == 2)
		l->lost_events += lost;
	/* kernel runtime: each failure is one probe's output the relay dropped (a
	 * lower bound: stock stap 4.8's stapio also drops data silently) */
	if (sscanf(line, "WARNING: There were %llu transport failures", &lost) == 1)
		l->lost_events += lost;
	/* stapbpf sends a printf as several perf records; when its 32 KB per-CPU
	 * rings overflow mid-printf its reader aborts with one of these */
	if (strstr(line, "printf already started") || strstr(line, "printf not started") ||
	    strstr(line, "wrong number of printf args") || strstr(line, "printf format is missing") ||
	    strstr(line, "could not read from perf_event buffer") ||
	    strstr(line, "transport failure") || strstr(line, "unknown perf_event type"))
		l->transport_errors++;
	if (strstr(line, "ERROR") || strstr(line, "error:"))
		l->errors++;
	if (json_object_array_length(l->messages) < MAX_STAP_MESSAGES)
		json_object_array_add(l->messages, json_object_new_string(line));
	/* stap says it once per probe of a binary without DWARF ("cannot find
	 * module M debuginfo: No DWARF information found [man
	 * warning::debuginfo]"): perun placed those probes by symbol because it
	 * knew, and said where each binary's functions came from; the line
	 * stays in the log and the profile's messages */
	if (strstr(line, "[man warning::debuginfo]") ||
	    (strstr(line, "WARNING") && strstr(line, "debuginfo"))) {
		l->debuginfo_warned++;
		return;
	}
	if (!l->quiet && (strstr(line, "WARNING") || strstr(line, "ERROR")) && !l->progress)
		pr_info("stap: %s", line);
}

/* Compresses src into a new file name in the directory dfd: created with
 * O_EXCL|O_NOFOLLOW (never through a link, never over a file).  */
static int gzip_file(const char *src, int dfd, const char *name, const char *shown)
{
	struct strbuf sb = STRBUF_INIT;
	gzFile gz;
	int fd, ret = -1;

	if (strbuf_read_file(&sb, src) < 0)
		return -1;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_error_errno("create %s", shown);
	} else if (!(gz = gzdopen(fd, "wb9"))) {
		pr_error("gzdopen %s: out of memory", shown);
		close(fd);
	} else {
		if (sb.len == 0 || gzwrite(gz, sb.buf, (unsigned)sb.len) > 0)
			ret = 0;
		if (gzclose(gz) != Z_OK)
			ret = -1;
	}
	strbuf_release(&sb);
	return ret;
}

void collect_zip_temps(const char *tmpdir, const char *logdir, const char *stamp, int quiet)
{
	static const char *const files[] = { "trace.raw", "trace.rec", "stap.log", "watchdog.log",
					     "output.log", "script.stp", "plan", NULL };
	char rnd[9];
	size_t i;
	int dfd;

	/* a directory of ours no one else can write; names no one can guess */
	if (fs_random_hex(rnd, 8) < 0)
		return;
	dfd = fs_open_private_dir(logdir, 0755);
	if (dfd < 0) {
		pr_error("temp files not kept (-z): %s is not a safe place for them", logdir);
		return;
	}
	for (i = 0; files[i]; i++) {
		char *src = xstrfmt("%s/%s", tmpdir, files[i]);
		char *name = xstrfmt("trace-%s-%s-%s.gz", stamp, rnd, files[i]);
		char *dst = xstrfmt("%s/%s", logdir, name);
		if (fs_exists(src) && gzip_file(src, dfd, name, dst) == 0 && !quiet)
			pr_info("perun: kept %s", dst);
		free(src);
		free(name);
		free(dst);
	}
	close(dfd);
}

/* --aggregate, else --transport, else record: on bpf, perf rings drop
 * per-event printfs; on the kernel runtime, record costs 1.4x a bare
 * counting module and print 3x (bench/kernel.sh).  An attach on the kernel
 * runtime prints: the recorder's map is written out only when the trace
 * ends, so a service traced for as long as it runs would fill any map,
 * while the relay (with perun's transport fix) drains into the raw file as
 * the trace runs.  perun's own bpf loader streams through its ring.  */
enum script_mode collect_script_mode(const struct session *s)
{
	if (s->o->aggregate)
		return SCRIPT_AGGREGATE;
	if (s->o->transport)
		return strcmp(s->o->transport, "record") ? SCRIPT_PRINT : SCRIPT_RECORD;
	if (s->runtime == RUNTIME_KERNEL && s->o->pid > 0)
		return SCRIPT_PRINT;
	return SCRIPT_RECORD;
}

/* The recorder's map size in the script: --buffer-size, moved off the sizes
 * of stap's other maps (its default 2048, the tapset's 16384 and 65536) so
 * that the fast read below finds the map by its size alone.  */
size_t collect_recorder_slots(size_t n)
{
	return n == 2048 || n == 16384 || n == 65536 || n == SCRIPT_FOLLOW_TREE_SLOTS ||
			       n == SCRIPT_FOLLOW_TIDS_SLOTS
		       ? n + 1
		       : n;
}
