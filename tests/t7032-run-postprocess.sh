#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun run matrix applies the postprocessors of .perun/local.yml to
# each collected profile before it is registered, as Perun's runner does:
# the registered profiles carry the models and the postprocessors region;
# check --method linear-regression then compares two revisions on those
# models (the second makes work 30 times slower, which a busy shared host
# cannot hide).  A bad postprocessor
# stops the run before anything is collected.
. "$SRCDIR/tests/lib.sh"
require_live

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

test_expect_success 'a repository: work loops 20000 times, then 600000 (30x: plain on a busy host)' '
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T &&
	cat >app.c <<-\EOF &&
	#ifndef LOOPS
	#define LOOPS 20000
	#endif
	__attribute__((noinline)) unsigned long work(unsigned long x)
	{
		for (int i = 0; i < LOOPS; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		return x;
	}
	int main(void)
	{
		unsigned long x = 1;
		for (int i = 0; i < 30; i++)
			x = work(x);
		return x == 0;
	}
	EOF
	printf "app: app.c\n\tcc -g -O1 -o app app.c\n" >Makefile &&
	echo app >.gitignore && git add . && git commit -q -m fast &&
	sed -i "s/define LOOPS 20000/define LOOPS 600000/" app.c && git commit -q -am slow &&
	"$PERUN" init >/dev/null &&
	cat >.perun/local.yml <<-\EOF
	vcs: {type: git, url: .}
	cmds: [./app]
	collectors:
	  - name: trace
	    params:
	      strategy: custom
	      func: [work]
	postprocessors:
	  - name: regression_analysis
	    params:
	      method: full
	      regression_models: [constant, linear, quadratic]
	execute:
	  pre_run:
	    - make
	repeat: 2
	EOF
'

test_expect_success 'run matrix: every registered profile holds the models of work' '
	cd repo &&
	"$PERUN" run matrix HEAD~1 HEAD >../out 2>../err && cat ../out ../err &&
	cat >../expect <<-EOF &&
	$(git rev-parse --short=7 HEAD~1) ./app: registered 0@i 1@i
	$(git rev-parse --short=7 HEAD) ./app: registered 0@i 1@i
	EOF
	test_cmp ../expect ../out &&
	for r in HEAD~1 HEAD; do
		for i in 0 1; do
			"$PERUN" show -m $r $i@i --format json >p.json &&
			python3 - <<-\PY || exit 1
			import json
			p = json.load(open("p.json"))
			pp = p["postprocessors"]
			assert [x["name"] for x in pp] == ["regression_analysis"], pp
			assert pp[0]["params"]["models"] == ["constant", "linear", "quadratic"], pp
			ms = p["snapshots"][0]["models"]
			assert sorted(m["model"] for m in ms if m["uid"] == "work") == \
			    ["constant", "linear", "quadratic"], ms
			w = [m for m in ms if m["uid"] == "work" and m["model"] == "constant"][0]
			assert w["x_interval_start"] == 0 and w["x_interval_end"] == 29, w
			assert p["trace"]["summary"]["work"]["count"] == 30
			PY
		done
	done &&
	test "$(ls -A .perun/jobs | wc -l)" = 0
'

test_expect_success 'check --method linear-regression on the registered models: work degraded' '
	cd repo &&
	test_expect_code 1 "$PERUN" check HEAD~1 HEAD --method linear-regression >../out &&
	cat ../out &&
	grep "^  degradation  *inclusive  *+[0-9.]*% .* 2/2 runs  work" ../out &&
	grep "^1 degradation, 0 optimizations" ../out
'

test_expect_success 'an unknown postprocessor or param stops the run before any collect' '
	cd repo &&
	sed -i "s/name: regression_analysis/name: kernel_regression/" .perun/local.yml &&
	test_expect_code 1 "$PERUN" run matrix HEAD >../out 2>../err && cat ../err &&
	grep "unknown postprocessor .kernel_regression.: regression_analysis, regressogram or moving_average" ../err &&
	test_cmp /dev/null ../out &&
	sed -i "s/name: kernel_regression/name: regressogram/" .perun/local.yml &&
	test_expect_code 1 "$PERUN" run matrix HEAD >../out 2>../err && cat ../err &&
	grep "regressogram takes no option .method." ../err &&
	test_cmp /dev/null ../out
'

assert_nothing_left

test_done
