/* SPDX-License-Identifier: GPL-3.0-or-later */
/* local.yml's job matrix (Perun's keys) and the jobs perun run makes of it:
 * every cmd x args x workload x collector, a collector's params as trace
 * options, and the errors that name the key.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "store/localyml.h"
#include "tap.h"
#include "util/fs.h"
#include "util/strbuf.h"

static char *dir;

/* Writes text to dir/local.yml and reads it into m.  */
static int read_yml(const char *text, struct job_matrix *m)
{
	char *path = xstrfmt("%s/local.yml", dir);
	int r;

	fs_write_atomic(path, text, strlen(text), 0644);
	r = config_read_jobs(path, m);
	free(path);
	return r;
}

static char *joined(const struct strv *v)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < v->n; i++)
		strbuf_addf(&sb, "%s%s", i ? "|" : "", v->v[i]);
	return strbuf_detach(&sb);
}

int main(void)
{
	struct job_matrix m;
	struct run_job *jobs;
	size_t n;
	char *s;

	dir = fs_mkdtemp("perun-t-localyml");

	/* what perun init writes: empty lists, nothing to run */
	ok(read_yml("vcs:\n  type: git\n  url: /x\ncmds: []\nargs: []\nworkloads: []\n"
		    "collectors: []\npostprocessors: []\n", &m) == 0, "perun init's file reads");
	ok(m.cmds.n == 0 && m.ncollectors == 0 && m.repeat == 0 && m.pre_run.n == 0,
	   "with nothing in it");
	ok(run_jobs_from_matrix(&m, &jobs, &n) < 0 && n == 0, "and makes no job (said)");
	job_matrix_release(&m);

	/* Perun's documented example, with the list-of-mappings params */
	ok(read_yml("cmds:\n  - perun\nargs:\n  - log\n  - log --short\nworkloads:\n  - HEAD\n"
		    "  - HEAD~1\ncollectors:\n  - name: trace\n    params:\n      - strategy: custom\n"
		    "      - func: [work, main]\n      - with_usdt: false\n      - metrics: true\n"
		    "postprocessors:\n  - name: regression_analysis\n    params:\n"
		    "      - method: full\n      - steps: 10\nexecute:\n  pre_run:\n    - make\n"
		    "    - make check\nrepeat: 3\n", &m) == 0, "Perun's example reads");
	is_int((int)m.cmds.n, 1, "one cmd");
	is_int((int)m.args.n, 2, "two args");
	is_int((int)m.workloads.n, 2, "two workloads");
	is_int((int)m.repeat, 3, "repeat");
	s = joined(&m.pre_run);
	is_str(s, "make|make check", "execute.pre_run in order");
	free(s);
	ok(m.npostprocessors == 1 && m.postprocessors[0].nparams == 2 &&
	   !strcmp(m.postprocessors[0].params[1].key, "steps") &&
	   !strcmp(m.postprocessors[0].params[1].value, "10"), "postprocessor params");
	ok(run_jobs_from_matrix(&m, &jobs, &n) == 0, "jobs made");
	is_int((int)n, 4, "cmds x args x workloads x collectors = 4 jobs");
	is_str(jobs[0].label, "perun log HEAD", "the first job");
	is_str(jobs[1].label, "perun log HEAD~1", "workloads vary fastest");
	is_str(jobs[3].label, "perun log --short HEAD~1", "then args");
	s = joined(&jobs[0].trace);
	is_str(s, "trace|--strategy|custom|--func|work|--func|main|--metrics",
	       "params as trace options: a list repeats, true is a flag, false is left out");
	free(s);
	run_jobs_free(jobs, n);
	job_matrix_release(&m);

	/* a mapping of params, lone scalars, no args or workloads */
	ok(read_yml("cmds: ./app\ncollectors:\n  - name: trace\n    params: {strategy: userspace, t: 5}\n"
		    "  - trace\n", &m) == 0, "a mapping of params and a lone collector name");
	ok(run_jobs_from_matrix(&m, &jobs, &n) == 0 && n == 2, "one job per collector");
	is_str(jobs[0].label, "./app", "no args, no workload");
	ok(jobs[0].args == NULL && jobs[0].workload == NULL, "both NULL");
	s = joined(&jobs[0].trace);
	is_str(s, "trace|--strategy|userspace|-t|5", "a one-letter key is a short option");
	free(s);
	s = joined(&jobs[1].trace);
	is_str(s, "trace", "a collector without params: collect's defaults");
	free(s);
	run_jobs_free(jobs, n);
	job_matrix_release(&m);

	/* errors name the key */
	ok(read_yml("cmds: {a: b}\n", &m) < 0, "cmds as a mapping is refused");
	ok(read_yml("cmds: [./app]\ncollectors: [{params: {}}]\n", &m) < 0,
	   "a collector without a name is refused");
	ok(read_yml("cmds: [./app]\nrepeat: 0\n", &m) < 0, "repeat 0 is refused");
	ok(read_yml("cmds: [./app]\nrepeat: -2\n", &m) < 0, "a negative repeat is refused");
	ok(read_yml("cmds: [./app\n", &m) < 0, "bad YAML is refused");
	ok(read_yml("cmds: [./app]\ncollectors: [{name: time}]\n", &m) == 0 &&
	   run_jobs_from_matrix(&m, &jobs, &n) < 0, "a collector other than trace makes no job");
	job_matrix_release(&m);
	ok(read_yml("cmds: [./app]\ncollectors: [{name: trace, params: {strategy: nope}}]\n", &m) == 0 &&
	   run_jobs_from_matrix(&m, &jobs, &n) < 0, "a param collect refuses makes no job");
	job_matrix_release(&m);

	/* perun's nightly keys: rounds, retries, the machine's name */
	ok(read_yml("cmds: [./app]\n", &m) == 0 && m.interleave_rounds == 0 && !m.has_retries &&
	   !m.machine, "rounds, retries and machine unsaid by default");
	job_matrix_release(&m);
	ok(read_yml("cmds: [./app]\ninterleave_rounds: false\nretries: 0\nmachine: ci-1.a_b\n",
		    &m) == 0 &&
	   m.interleave_rounds == -1 && m.has_retries && m.retries == 0 && m.machine &&
	   !strcmp(m.machine, "ci-1.a_b"),
	   "interleave_rounds: false, retries: 0, machine: ci-1.a_b");
	job_matrix_release(&m);
	ok(read_yml("cmds: [./app]\ninterleave_rounds: true\nretries: 5\n", &m) == 0 &&
	   m.interleave_rounds == 1 && m.retries == 5, "interleave_rounds: true, retries: 5");
	job_matrix_release(&m);
	ok(read_yml("cmds: [./app]\ninterleave_rounds: maybe\n", &m) < 0,
	   "interleave_rounds other than true or false is refused");
	ok(read_yml("cmds: [./app]\nretries: 101\n", &m) < 0, "retries past 100 is refused");
	ok(read_yml("cmds: [./app]\nmachine: \"a b\"\n", &m) < 0, "a machine name with a space is refused");
	ok(read_yml("cmds: [./app]\nmachine: [a]\n", &m) < 0, "a machine that is a list is refused");
	ok(config_machine_name_ok("x") && !config_machine_name_ok("") &&
	   !config_machine_name_ok("a/b") &&
	   !config_machine_name_ok("0123456789012345678901234567890123456789012345678901234567890123456789"),
	   "machine names: 1 to 64 of letters, digits, '.', '_', '-'");

	fs_remove_tree(dir);
	free(dir);
	return tap_done();
}
