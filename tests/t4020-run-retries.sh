#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: perun run tries again a collect the runtime broke.  The runtime is
# the FAKE stapbpf of tests/fixtures (for fault paths only), which dies
# before it arms its probes the first $FAKE_STAPBPF_FAILS times and is the
# real stapbpf after: one failure is retried, said on stderr and recorded in
# the registered profile, whose counts are the program's own; failures past
# --retries turn the run red, naming the job and the reason; --retries 0 (or
# retries: 0 in local.yml) tries once; a target that fails is not retried.
. "$SRCDIR/tests/lib.sh"
require_live

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES
PERUN_STAPBPF="$FIXTURES/fake-stapbpf.sh"
FAKE_STAPBPF_MODE=failfirst
FAKE_STAPBPF_REAL=$(command -v stapbpf)
FAKE_STAPBPF_COUNT="$TRASH/stapbpf-runs"
export PERUN_STAPBPF FAKE_STAPBPF_MODE FAKE_STAPBPF_REAL FAKE_STAPBPF_COUNT

rev() { git -C "$TRASH/repo" rev-parse --short=7 "$1"; }

# code CMD...: runs CMD with its stdout in ../out and stderr in ../err, and
# prints its exit status
code() { rc=0; "$@" >../out 2>../err || rc=$?; echo $rc; }

# local.yml with the given cmds and extra lines
local_yml() {
	cat >.perun/local.yml <<-EOF
	vcs: {type: git, url: .}
	cmds: $1
	collectors:
	  - name: trace
	    params: {strategy: custom, func: [work], loader: stapbpf}
	execute:
	  pre_run: [make]
	${2:-}
	EOF
}

test_expect_success 'a repository whose program calls work 7 times' '
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T &&
	printf "__attribute__((noinline)) int work(int x) { return x + 1; }\nint main(int c, char **v) { int x = 0; for (int i = 0; i < 7; i++) x = work(x); return c > 1 ? 1 : x - 7; }\n" >app.c &&
	printf "app: app.c\n\tcc -g -O0 -o app app.c\n" >Makefile &&
	echo app >.gitignore && git add . && git commit -q -m one &&
	"$PERUN" init >/dev/null && local_yml "[./app]"
'

test_expect_success 'one broken collect is retried: said, recorded, registered, exit 0' '
	cd repo && rm -f "$FAKE_STAPBPF_COUNT" &&
	test "$(FAKE_STAPBPF_FAILS=1 code "$PERUN" run matrix HEAD)" = 0 && cat ../out ../err &&
	echo "$(rev HEAD) ./app: registered 0@i" >../expect && test_cmp ../expect ../out &&
	cat >../expect <<-EOF &&
	perun run: warning: $(rev HEAD): job 1 (./app), run 1: the runtime ended before it armed its probes: retry 1 of 2
	perun run: warning: 1 collect the runtime broke was tried again (each said above)
	EOF
	grep "^perun run: warning: " ../err >../actual && test_cmp ../expect ../actual &&
	test "$(cat "$FAKE_STAPBPF_COUNT")" = 2 &&
	"$PERUN" show -m HEAD 0@i --format json >../p.json &&
	python3 -c "
import json, sys
p = json.load(open(\"../p.json\"))
print(p[\"retries\"])
print(p[\"trace\"][\"summary\"][\"work\"][\"count\"])" >../actual &&
	cat >../expect <<-\EOF &&
	[{'"'"'attempt'"'"': 1, '"'"'reason'"'"': '"'"'the runtime ended before it armed its probes'"'"'}]
	7
	EOF
	test_cmp ../expect ../actual
'

test_expect_success 'failures past --retries: red, the job and the reason named' '
	cd repo && rm -f "$FAKE_STAPBPF_COUNT" &&
	test "$(FAKE_STAPBPF_FAILS=3 code "$PERUN" run matrix --retries 2 HEAD)" = 1 &&
	cat ../out ../err &&
	! test -s ../out &&
	grep -c ": retry [12] of 2$" ../err >../n && test "$(cat ../n)" = 2 &&
	grep "^perun run: $(rev HEAD): job 1 (./app), run 1: the collect failed 3 times: the runtime ended before it armed its probes$" ../err &&
	grep "^perun run: 1 of 1 revision had a failure (named above); 0 profiles registered$" ../err &&
	test "$(cat "$FAKE_STAPBPF_COUNT")" = 3
'

test_expect_success 'retries: 0 in local.yml tries once; --retries overrides it' '
	cd repo && local_yml "[./app]" "retries: 0" && rm -f "$FAKE_STAPBPF_COUNT" &&
	test "$(FAKE_STAPBPF_FAILS=1 code "$PERUN" run matrix HEAD)" = 1 && cat ../err &&
	! grep "retry" ../err &&
	grep "the collect failed 1 time: the runtime ended before it armed its probes$" ../err &&
	rm -f "$FAKE_STAPBPF_COUNT" &&
	test "$(FAKE_STAPBPF_FAILS=1 code "$PERUN" run matrix --retries 1 HEAD)" = 0 &&
	grep ": retry 1 of 1$" ../err
'

test_expect_success 'a target that fails is not retried' '
	cd repo && local_yml "[./missing]" && rm -f "$FAKE_STAPBPF_COUNT" &&
	test "$(FAKE_STAPBPF_FAILS=0 code "$PERUN" run matrix HEAD)" = 1 && cat ../err &&
	! grep "retry" ../err &&
	grep "job 1 (./missing): ./missing: no such file in " ../err
'

test_expect_success 'a bad retries value in local.yml or on the command line is refused' '
	cd repo && local_yml "[./app]" "retries: many" &&
	test "$(code "$PERUN" run matrix HEAD)" = 1 &&
	grep "local.yml:8: retries is a number of retries from 0 to 100" ../err &&
	local_yml "[./app]" &&
	test "$(code "$PERUN" run matrix --retries -1 HEAD)" = 2 &&
	grep "retries wants a number of retries from 0 to 100, not .-1." ../err
'

test_expect_success 'nothing is left behind' '
	ls -A "$PERUN_CACHE_DIR/worktrees" >left && cat left &&
	test "$(grep -vc "\.lock$" left)" = 0 &&
	test "$(ls -A repo/.perun/jobs | wc -l)" = 0
'

assert_nothing_left

test_done
