#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun push under contention: three clones of one bare remote, starting
# from an empty remote, each register a profile and push at the same time,
# round after round.  The first push creates refs/perun/profiles while the
# others do too, and every push writes and then deletes a private incoming
# ref while the others rewrite the remote's refs.  No push may fail and no
# profile may be lost.  Profiles come from the parser alone (no tracing).
. "$SRCDIR/tests/lib.sh"
# a full unwind for LSan, so that libgit2's leak in a push that races with
# another (see tests/lsan-libgit2.supp) is known by its frames
LSAN_OPTIONS="$LSAN_OPTIONS:fast_unwind_on_malloc=0"
GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES
ROUNDS=${PERUN_TEST_PUSH_ROUNDS:-5}

# mkprofs ROUNDS: HR.perf for each clone H and round R, its workload HR
mkprofs() {
	python3 - "$TRASH/base.perf" "$1" <<-\PY
	import json, sys
	for r in range(1, int(sys.argv[2]) + 1):
	    for h in "abc":
	        p = json.load(open(sys.argv[1]))
	        p["header"]["workload"] = "%s%d" % (h, r)
	        json.dump(p, open("%s%d.perf" % (h, r), "w"))
	PY
}

test_expect_success 'a profile from the parser, a bare remote and three clones' '
	printf "perun-plan 1\t2\n0\tfunc\t1\t1000\t0\t/bin/app\tmain\t\t\t\n1\tfunc\t1\t1010\t0\t/bin/app\twork\t\t\t\n" >plan &&
	printf "s 3e8 0 100\nr\n0 1 200\n2 1 300\n3 1 400\n1 1 500\nq\n" >raw &&
	"$PERUN" __parse plan raw parsed.perf >/dev/null &&
	python3 -c "
import json
p = json.load(open(\"parsed.perf\"))
p[\"header\"].update(units={\"mixed(time delta)\": \"ns\"}, cmd=\"./app\", args=\"\", workload=\"\")
json.dump(p, open(\"base.perf\", \"w\"))" &&
	git init -q --bare remote.git &&
	git init -q a && cd a && git config user.email a@example.com && git config user.name A &&
	echo one >f && git add f && git commit -q -m one &&
	git remote add origin ../remote.git && git push -q origin HEAD:refs/heads/main &&
	"$PERUN" init >/dev/null && cd .. &&
	for h in b c; do
		git clone -q -b main remote.git $h &&
		git -C $h config user.email $h@example.com && git -C $h config user.name $h &&
		(cd $h && "$PERUN" init >/dev/null) || return 1
	done
'

test_expect_success "$ROUNDS rounds of three simultaneous pushes: none fails, nothing is lost" '
	mkprofs $ROUNDS && r=1 && : >expect &&
	while [ $r -le $ROUNDS ]; do
		for h in a b c; do
			echo $h$r.perf >>expect &&
			(cd $h && "$PERUN" add -m HEAD ../$h$r.perf >/dev/null) || return 1
		done &&
		for h in a b c; do
			(set +e; cd $h; "$PERUN" push -q >../push-$h.out 2>&1; echo $? >../rc-$h) &
		done &&
		wait &&
		for h in a b c; do
			test "$(cat rc-$h)" = 0 || {
				echo "round $r: push from $h exited $(cat rc-$h):"; cat push-$h.out; return 1; }
		done &&
		r=$((r + 1))
	done &&
	sort expect >expect.sorted &&
	for h in a b c; do
		(cd $h && "$PERUN" fetch -q && "$PERUN" status --short) >status-$h &&
		sed -n "s/^ *[0-9]*@i *//p" status-$h | sort >names-$h &&
		test_cmp expect.sorted names-$h || { cat status-$h; return 1; }
	done &&
	git --git-dir=remote.git ls-tree -r refs/perun/profiles >tree &&
	cat tree &&
	# the profiles, the index and the adds'"'"' tags (added/MINOR)
	test "$(wc -l <tree)" = $((3 * ROUNDS + 2)) &&
	test "$(cut -f2 tree | sort -u | wc -l)" = $((3 * ROUNDS + 2)) &&
	test "$(grep -c "	added/" tree)" = 1 &&
	git --git-dir=remote.git for-each-ref refs/perun/incoming >incoming &&
	test_cmp /dev/null incoming
'

test_done
