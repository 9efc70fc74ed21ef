# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced after tests/lib.sh by the live tests of perun bisect (t4017,
# t4019): a repository of a small program where one commit makes a function
# slower, set up for perun run (pre_run builds it).

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

# bisect_repo COMMITS STEP FACTOR FUNC... <app.c: makes ./repo (and cds
# into it) with COMMITS commits c1, c2, ... of app.c, each with its own
# version string; app.c is built with -DFACTOR=1 up to cSTEP excluded and
# with -DFACTOR=FACTOR from cSTEP on.  $TRASH/planted holds cSTEP's sha; the
# job traces FUNC... of ./app.  STEP and FACTOR may be lists ("4 7" and
# "1.2 2"): a step at each, $TRASH/planted holding the first one's sha and
# $TRASH/planted.N cN's.
bisect_repo() {
	bisect_n=$1 bisect_steps=$2 bisect_factors=$3
	shift 3
	mkdir repo && cd repo && git init -q && git config user.email t@example.com &&
	git config user.name T &&
	cat >app.c &&
	echo 1 >factor &&
	printf "app: app.c factor\n\tcc -g -O1 -DFACTOR=\$\$(cat factor) -o app app.c\n" >Makefile &&
	echo app >.gitignore && git add . && git commit -q -m c1 &&
	for i in $(seq 2 "$bisect_n"); do
		sed -i "s/\"v[0-9]*\"/\"v$i\"/" app.c &&
		bisect_k=1 &&
		for bisect_s in $bisect_steps; do
			if [ "$i" = "$bisect_s" ]; then
				echo "$bisect_factors" | cut -d" " -f$bisect_k >factor
			fi
			bisect_k=$((bisect_k + 1))
		done &&
		git commit -q -am "c$i" || return 1
	done &&
	for bisect_s in $bisect_steps; do
		git rev-parse "HEAD~$((bisect_n - bisect_s))" >"$TRASH/planted.$bisect_s" &&
		test "$(git log -1 --format=%s "HEAD~$((bisect_n - bisect_s))")" = "c$bisect_s" ||
			return 1
	done &&
	cp "$TRASH/planted.${bisect_steps%% *}" "$TRASH/planted" &&
	"$PERUN" init >/dev/null &&
	cat >.perun/local.yml <<-EOF
	vcs: {type: git, url: .}
	cmds: [./app]
	collectors:
	  - name: trace
	    params: {strategy: custom, func: [$(echo "$*" | sed "s/ /, /g")]}
	execute:
	  pre_run: [make]
	EOF
}

# bisect's output with its measured times and their change in percent as N
bisect_shape() {
	sed -e "s/[0-9][0-9.]* \([num]\{0,1\}s\)\b/N \1/g" -e "s/(+[0-9]* %)/(+N %)/g" "$@"
}

# commit_of SUBJECT: the commit of that subject, as perun prints it
commit_of() {
	git log --format="%H %s" | sed -n "s/^\([0-9a-f]\{7\}\)[0-9a-f]* $1\$/\1/p"
}
