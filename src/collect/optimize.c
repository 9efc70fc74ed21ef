/* The pre-optimize and post-optimize phases: the optimization methods of the
 * selection (src/optimize/) around the collect, and what they did in the
 * profile.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/session.h"
#include "optimize/optimize.h"
#include "store/repo.h"
#include "store/stats.h"
#include "trace/parse.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "vcs/vcs.h"

/* Most disarmed functions named on stderr (all of them go to the profile).  */
#define MAX_DISARMED_SHOWN 5

/* True when an earlier collect of this command, arguments and workload left
 * dynamic stats in .perun/stats, on HEAD or one of its 20 first parents.  */
static int have_stats(const struct session *s)
{
	const struct collect_opts *o = s->o;
	char *pd = repo_locate(), *name;
	char head[41], found[41];
	struct repo r;
	struct stats st;
	int ret = 0;

	if (!pd)
		return 0;
	free(pd);
	if (repo_find(&r) < 0)
		return 0;
	if (vcs_head(r.worktree, head) == 0) {
		name = stats_name(o->cmd, o->args ? o->args : "", o->workload ? o->workload : "");
		if (stats_nearest(&r, head, name, 20, &st, found) == 0) {
			ret = 1;
			stats_release(&st);
		}
		free(name);
	}
	repo_release(&r);
	return ret;
}

/* What this collect can give the methods.  */
static unsigned resources(const struct session *s)
{
	unsigned have = 0;
	char *wt;

	if (!s->o->aggregate)
		have |= OPT_REQ_PER_CALL;
	wt = vcs_find_worktree(".");
	if (wt)
		have |= OPT_REQ_VCS;
	free(wt);
	if (have_stats(s))
		have |= OPT_REQ_STATS;
	/* not yet: the call-graph resource (src/target/callgraph), the target's
	 * sources */
	return have;
}

int collect_reset_optimization_cache(struct session *s)
{
	/* the binaries' analyses (targets/) and the methods' own data (optimize/) */
	static const char *const dirs[] = { "targets", "optimize", NULL };
	size_t i;

	for (i = 0; dirs[i]; i++) {
		char *dir = xstrfmt("%s/%s", s->cache_dir, dirs[i]);
		if (fs_exists(dir)) {
			if (fs_remove_tree(dir) < 0) {
				pr_error("cannot remove %s: remove it by hand", dir);
				free(dir);
				return -1;
			}
			if (!s->o->quiet)
				fprintf(stderr, "perun: removed the cached optimization data in %s\n",
					dir);
		}
		free(dir);
	}
	return 0;
}

int collect_pre_optimize(struct session *s)
{
	struct opt_selection *os = &s->o->opt;

	if (!os->pipeline && !os->ntoggles)
		return 0;
	opt_resolve(os, resources(s), s->o->quiet ? NULL : stderr);
	if (collect_diff_tracing(s) < 0)
		return -1;
	memset(&s->sopt, 0, sizeof(s->sopt));
	if (os->active[OPT_TIMED_SAMPLING]) {
		double f = opt_value_real(os, "timed-sample-freq");
		long ms = (long)(1000.0 / f + 0.5);
		s->sopt.timed_freq = f;
		s->sopt.timed_period_ms = (unsigned)(ms < 1 ? 1 : ms);
	}
	if (os->active[OPT_DYNAMIC_PROBING])
		s->sopt.probing_threshold = (uint64_t)opt_value_int(os, "probing-threshold");
	collect_wd(&s->wd, "pre-optimize: %s%s%s", os->pipeline ? "pipeline " : "",
		   os->pipeline ? os->pipeline : "",
		   s->sopt.timed_period_ms || s->sopt.probing_threshold ? " (run-optimize code)" : "");
	return 0;
}

int collect_optimizing(const struct session *s)
{
	return s->o->opt.pipeline || s->o->opt.ntoggles;
}

/* Marks a function's summary: its count is not every call.  */
static void mark_partial(struct json_object *sum, const char *name, const char *key,
			 struct json_object *val)
{
	struct json_object *fs;

	if (!json_object_object_get_ex(sum, name, &fs)) {
		json_object_put(val);
		return;
	}
	json_object_object_add(fs, "partial", json_object_new_boolean(1));
	json_object_object_add(fs, key, val);
}

void collect_post_optimize(struct session *s, const struct parser *parser,
			   struct json_object *extra, struct json_object *sum)
{
	const struct opt_selection *os = &s->o->opt;
	const struct parse_opt_record *r;
	struct json_object *o;
	size_t n, i, ndis = 0;
	int sampled = 0;

	if (!collect_optimizing(s))
		return;
	r = parser_opt_records(parser, &n);
	o = json_object_new_object();
	if (os->active[OPT_DYNAMIC_PROBING]) {
		struct json_object *dp = json_object_new_object(), *dis = json_object_new_object();
		struct strbuf names = STRBUF_INIT;
		for (i = 0; i < n; i++) {
			const char *name;
			if (r[i].method != PARSE_OPT_DISARMED || r[i].id >= s->plan.n)
				continue;
			name = s->plan.probes[r[i].id].name;
			json_object_object_add(dis, name, json_object_new_int64((int64_t)r[i].value));
			mark_partial(sum, name, "disarmed_after",
				     json_object_new_int64((int64_t)r[i].value));
			if (ndis < MAX_DISARMED_SHOWN)
				strbuf_addf(&names, "%s%s", ndis ? ", " : "", name);
			else if (ndis == MAX_DISARMED_SHOWN)
				strbuf_addstr(&names, ", ...");
			ndis++;
		}
		json_object_object_add(dp, "threshold",
				       json_object_new_int64((int64_t)s->sopt.probing_threshold));
		json_object_object_add(dp, "disarmed", dis);
		json_object_object_add(o, "dynamic_probing", dp);
		if (ndis)
			fprintf(stderr, "perun: dynamic probing disarmed %zu probe%s after %llu "
					"calls, so their counts are partial: %s\n",
				ndis, ndis == 1 ? "" : "s",
				(unsigned long long)s->sopt.probing_threshold, names.buf);
		strbuf_release(&names);
		sampled |= ndis > 0;
	}
	if (os->active[OPT_TIMED_SAMPLING]) {
		struct json_object *ts = json_object_new_object();
		uint64_t flips = 0;
		for (i = 0; i < n; i++)
			if (r[i].method == PARSE_OPT_FLIPS)
				flips = r[i].value;
		json_object_object_add(ts, "freq_hz", json_object_new_double(s->sopt.timed_freq));
		json_object_object_add(ts, "period_ms",
				       json_object_new_int64((int64_t)s->sopt.timed_period_ms));
		json_object_object_add(ts, "flips", json_object_new_int64((int64_t)flips));
		json_object_object_add(o, "timed_sampling", ts);
		json_object_object_foreach(sum, name, val)
		{
			(void)val;
			mark_partial(sum, name, "sampled_by", json_object_new_string("timed-sampling"));
		}
		fprintf(stderr, "perun: the trace is sampled: timed sampling recorded calls only in "
				"its gather windows (%u ms on, %u ms off)\n",
			s->sopt.timed_period_ms, s->sopt.timed_period_ms);
		sampled = 1;
	}
	if (s->diff_j)
		json_object_object_add(o, "diff_tracing", json_object_get(s->diff_j));
	json_object_object_add(extra, "optimization", o);
	/* intended sampling: the trace is complete, but not every call is in it */
	json_object_object_add(extra, "sampled", json_object_new_boolean(sampled));
}
