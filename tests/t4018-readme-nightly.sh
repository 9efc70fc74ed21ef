#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# README's "Nightly jobs" section exactly as written: its local.yml lines
# become the project's .perun/local.yml and every perun command of it runs,
# in order, in a project of four commits whose third makes work 3x slower;
# each must exit 0 and bisect must name that commit.
. "$SRCDIR/tests/lib.sh"
require_live

GIT_CEILING_DIRECTORIES="$TRASH"
export GIT_CEILING_DIRECTORIES

readme_lines() {
	awk '
		$0 == "Nightly jobs" { on = 1; next }
		on && /^-+$/ && seen { exit }
		on && /^-+$/ { seen = 1; next }
		on && /^    / { sub(/^    /, ""); print }
	' "$SRCDIR/README"
}

test_expect_success 'the section has local.yml lines and commands' '
	readme_lines >lines && cat lines &&
	grep -v "^perun " lines >yml && grep "^perun " lines >cmds &&
	grep -q "^cmds:" yml && grep -q "pre_run" yml &&
	grep -q "^perun run matrix" cmds && grep -q "^perun bisect" cmds
'

test_expect_success 'a project of four commits; the third makes work 3x slower' '
	mkdir proj && cd proj &&
	git init -q && git config user.email t@example.com && git config user.name Tester &&
	cat >app.c <<-\EOF &&
	#include <stdlib.h>
	#include <string.h>
	static unsigned long spin(unsigned long n, unsigned long x)
	{
		for (unsigned long i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		return x;
	}
	__attribute__((noinline)) unsigned long work(unsigned long x) { return spin(50000UL * FACTOR, x); }
	int main(int argc, char **argv)
	{
		unsigned long x = 1;
		int n = argc > 2 && !strcmp(argv[1], "-n") ? atoi(argv[2]) : 20;
		for (int i = 0; i < n; i++)
			x = work(x);
		return x == 0;
	}
	EOF
	echo 1 >factor &&
	printf "app: app.c factor\n\tcc -g -O1 -DFACTOR=\$\$(cat factor) -o app app.c\n" >Makefile &&
	printf "app\n.perun/\n" >.gitignore && git add . && git commit -q -m "version 1" &&
	echo 2 >version && git add version && git commit -q -m "version 2" &&
	echo 3 >factor && git commit -q -am "version 3: work 3x slower" &&
	echo 4 >version && git commit -q -am "version 4" &&
	"$PERUN" init >/dev/null &&
	{ grep "^vcs:" -A2 .perun/local.yml && cat ../yml; } >local.yml &&
	mv local.yml .perun/local.yml && cat .perun/local.yml
'

test_expect_success 'every command of the section, as written' '
	cd proj &&
	PATH="$(dirname "$PERUN"):$PATH" && export PATH &&
	n=0 &&
	while IFS= read -r line; do
		n=$((n + 1))
		printf "%s\n" "$line" >"../cmd.$n"
		code=0
		sh -e "../cmd.$n" >"../said.$n" 2>&1 || code=$?
		echo "[$code] $line" && cat "../said.$n"
		[ $code = 0 ] || exit 1
	done <../cmds
'

test_expect_success 'and they did what the README says' '
	cd proj &&
	"$PERUN" log --short >../log && cat ../log &&
	grep "^$(git rev-parse --short=7 HEAD~2) .* profiles" ../log &&
	grep "is the first commit where work steps up: version 3: work 3x slower" ../said.* &&
	git status --porcelain >../status && test_cmp /dev/null ../status
'

assert_nothing_left

test_done
