# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced after tests/lib.sh by the tests of perun history and report
# (t7002, t7003, t7004): a repository whose profiles come from the parser
# alone (no tracing), with seeded noise.

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# hist_plan BINARY FUNC...: writes $TRASH/plan, probing main and each FUNC of
# BINARY (probe 0 is main, probe N the Nth FUNC)
hist_plan() {
	hist_bin=$1
	shift
	{
		printf "perun-plan 1\t%d\n" $(($# + 1))
		printf "0\tfunc\t1\t1000\t0\t%s\tmain\t\t\t\n" "$hist_bin"
		hist_i=1
		for hist_f; do
			printf "%d\tfunc\t1\t%d\t0\t%s\t%s\t\t\t\n" \
				$hist_i $((1000 + 10 * hist_i)) "$hist_bin" "$hist_f"
			hist_i=$((hist_i + 1))
		done
	} >"$TRASH/plan"
}

# hist_prof SEED SPREAD WORKLOAD HOST LEVEL...: registers for HEAD a profile
# of main calling the plan's functions in turn 15 times, the Nth function
# LEVEL_N ns a call, within +-SPREAD (0.1: 10%) of it; a non-empty HOST
# gives the profile a machine region of that host.
hist_prof() {
	python3 - "$@" <<-\PY >"$TRASH/raw" &&
	import random, sys
	rnd = random.Random(int(sys.argv[1]))
	spread = float(sys.argv[2])
	levels = [int(l) for l in sys.argv[5:]]
	print("s 3e8 0 100"); print("r")
	t = 0x100
	print("0 1 %x" % t)
	for i in range(15):
	    for probe, level in enumerate(levels, 1):
	        t += 10; print("%x 1 %x" % (2 * probe, t))
	        t += int(level * rnd.uniform(1 - spread, 1 + spread)); print("%x 1 %x" % (2 * probe + 1, t))
	t += 10; print("1 1 %x" % t); print("q")
	PY
	"$PERUN" __parse "$TRASH/plan" "$TRASH/raw" "$TRASH/p.tmp" >/dev/null &&
	python3 - "$TRASH/p.tmp" "$TRASH/p.perf" "$3" "$4" <<-\PY &&
	import json, sys
	p = json.load(open(sys.argv[1]))
	p["header"].update(units={"mixed(time delta)": "ns"}, cmd="./app", args="", workload=sys.argv[3])
	if sys.argv[4]:
	    p["machine"] = {"host": sys.argv[4], "system": "Linux", "release": "6.1",
	                    "architecture": "x86_64", "cpu": {"total": 2, "model": "m"},
	                    "memory": {"total_ram": 8 << 30}}
	json.dump(p, open(sys.argv[2], "w"))
	PY
	"$PERUN" add -m HEAD "$TRASH/p.perf" >/dev/null
}

# commit MESSAGE: a commit changing the file f
commit() { echo "$1" >>f && git add f && git commit -q -m "$1"; }

# at N: the first parent N commits before HEAD, as history prints it
at() { git rev-parse "HEAD~$1" | cut -c1-7; }

# history's text output with its numbers (times and the percents of steps,
# noise of seeded runs) as T and PCT, the dates of commits as DATE, and runs
# of spaces as one
history_shape() {
	sed -e "s/[0-9][0-9.]* [num]\{0,1\}s\b/T/g" -e "s/(+[0-9.]*%)/(+PCT)/g" \
		-e "s/[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]/DATE/" -e "s/   */ /g" "$@"
}
