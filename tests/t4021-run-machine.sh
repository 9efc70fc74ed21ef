#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: a machine named by the user (local.yml's machine, --machine), as
# asv machine names one.  The profiles carry the name in their machine
# region (perun run's and perun collect's in the repository); when the host is renamed (a UTS namespace with another host name),
# check pairs the runs of one name as one machine and history keeps one
# series; runs of another name are left out as another machine's.
. "$SRCDIR/tests/lib.sh"
require_live
command -v unshare >/dev/null || skip_all "no unshare(1)"

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# code CMD...: runs CMD with its stdout in ../out and stderr in ../err, and
# prints its exit status
code() { rc=0; "$@" >../out 2>../err || rc=$?; echo $rc; }

# name and host of the machine region of profile $2 of revision $1
machine_of() {
	"$PERUN" show -m "$1" "$2" --format json | python3 -c '
import json, sys
m = json.load(sys.stdin)["machine"]
print(m.get("name", "-"), m["host"])'
}

test_expect_success 'two commits of a program; local.yml names the machine ci-1' '
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T &&
	printf "static const char *v = \"v1\";\n__attribute__((noinline)) int work(int x) { return x + 1; }\nint main(void) { int x = 0; for (int i = 0; i < 5; i++) x = work(x); return v[0] == (char)x; }\n" >app.c &&
	printf "app: app.c\n\tcc -g -O0 -o app app.c\n" >Makefile &&
	echo app >.gitignore && git add . && git commit -q -m one &&
	sed -i s/v1/v2/ app.c && git commit -q -am two &&
	"$PERUN" init >/dev/null &&
	cat >.perun/local.yml <<-EOF
	vcs: {type: git, url: .}
	cmds: [./app]
	collectors:
	  - name: trace
	    params: {strategy: custom, func: [work]}
	execute:
	  pre_run: [make]
	machine: ci-1
	EOF
'

test_expect_success 'the profiles carry the name; the host is renamed in between' '
	cd repo &&
	"$PERUN" run matrix -q HEAD~1 &&
	unshare -u sh -c "hostname perun-t4021-renamed && \"\$0\" run matrix -q HEAD" "$PERUN" &&
	echo "ci-1 $(hostname)" >../expect && machine_of HEAD~1 0@i >../actual &&
	test_cmp ../expect ../actual &&
	echo "ci-1 perun-t4021-renamed" >../expect && machine_of HEAD 0@i >../actual &&
	test_cmp ../expect ../actual
'

test_expect_success 'check pairs the two hosts of one name as one machine' '
	cd repo &&
	test "$(code "$PERUN" check HEAD~1 HEAD)" = 0 && cat ../out ../err &&
	! grep "another machine" ../err &&
	grep "ci-1" ../out
'

test_expect_success 'history keeps one series over the rename' '
	cd repo &&
	"$PERUN" history work --format json >../h.json &&
	python3 -c "
import json
h = json.load(open(\"../h.json\"))
print(h[\"machine\"], h[\"skipped_other_machine\"], sum(1 for c in h[\"commits\"] if c[\"profiles\"]))" >../actual &&
	echo "ci-1 0 2" >../expect && test_cmp ../expect ../actual
'

test_expect_success '--machine overrides local.yml; another name is another machine' '
	cd repo &&
	"$PERUN" run matrix -q --machine ci-2 HEAD~1 &&
	echo "ci-2 $(hostname)" >../expect && machine_of HEAD~1 1@i >../actual &&
	test_cmp ../expect ../actual &&
	test "$(code "$PERUN" check HEAD~1 HEAD)" = 0 && cat ../out ../err &&
	grep "left out 1 baseline run from another machine" ../err
'

test_expect_success 'perun collect in the repository carries local.yml'"'"'s name too' '
	cd repo && make -s >/dev/null &&
	"$PERUN" collect -c ./app -o ../c.perf trace -q -s custom -f work >/dev/null 2>../err &&
	python3 -c "
import json
print(json.load(open(\"../c.perf\"))[\"machine\"][\"name\"])" >../actual &&
	echo ci-1 >../expect && test_cmp ../expect ../actual && rm -f app ../c.perf
'

test_expect_success 'a machine name that is not a name is refused' '
	cd repo &&
	test "$(code "$PERUN" run matrix --machine "a b" HEAD)" = 2 &&
	grep -- "--machine wants a name of letters, digits" ../err &&
	sed -i "s/^machine: .*/machine: \"x;y\"/" .perun/local.yml &&
	test "$(code "$PERUN" run matrix HEAD)" = 1 &&
	grep "local.yml:8: machine is a name of letters, digits" ../err &&
	make -s >/dev/null &&
	"$PERUN" collect -c ./app -o ../c.perf trace -q -s custom -f work >/dev/null 2>../err &&
	cat ../err && rm -f app &&
	grep "local.yml:8: machine is a name of letters, digits" ../err &&
	grep "warning: the profile carries no machine name: local.yml.s machine is bad" ../err &&
	python3 -c "
import json
print(json.load(open(\"../c.perf\"))[\"machine\"].get(\"name\", \"-\"))" >../actual &&
	echo - >../expect && test_cmp ../expect ../actual
'

assert_nothing_left

test_done
