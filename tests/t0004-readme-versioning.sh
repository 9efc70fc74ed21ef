#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# README's "Profiles that version with git" section, every example exactly as
# written, in order, in a git work tree whose three earlier commits were
# profiled the same way (so HEAD~3, check, diff and history have something to
# work on) and which has a remote to push to.  Every line must exit 0, except
# check, which exits 1 when it finds a degradation (the same program on every
# commit: it may or may not, on a shared machine; it must not fail otherwise).
. "$SRCDIR/tests/lib.sh"
require_live

readme_lines() {
	awk '
		index($0, "Profiles that version with git") == 1 { on = 1; next }
		on && /^-+$/ && seen { exit }
		on && /^-+$/ { seen = 1; next }
		on && /^[A-Z][a-z]+$/ { exit }
		on && /^    / { sub(/^    /, ""); print }
	' "$SRCDIR/README"
}

test_expect_success 'the section has examples' '
	readme_lines >lines && cat lines &&
	test "$(wc -l <lines)" -ge 10 &&
	grep -q "^perun init" lines && grep -q "^perun collect -c ./app trace" lines
'

test_expect_success 'a work tree with a remote and three profiled commits' '
	git init -q --bare remote.git &&
	mkdir proj && cd proj &&
	git init -q && git config user.email t@example.com && git config user.name Tester &&
	git remote add origin ../remote.git &&
	cat >app.c <<-\EOC &&
	int work(int x) { int s = 0; for (int i = 0; i < 2000; i++) s += i ^ x; return s; }
	int helper(int x) { return work(x) + 1; }
	int main(void) { int s = 0; for (int i = 0; i < 300; i++) s += helper(i); return s == 42; }
	EOC
	cc -g -O1 -o app app.c && printf "app\n.perun/\nsite/\n" >.gitignore &&
	git add app.c .gitignore && git commit -q -m "version 1" &&
	"$PERUN" init >/dev/null &&
	for v in 2 3 4; do
		"$PERUN" collect -c ./app trace 2>../collect.err && "$PERUN" add 0@p >/dev/null &&
		echo "$v" >version && git add version && git commit -q -m "version $v" || { cat ../collect.err; exit 1; }
	done &&
	git push -q origin HEAD 2>/dev/null &&
	test "$(git rev-list --count HEAD)" = 4
'

test_expect_success 'every example of the section, as written' '
	cd proj &&
	# the README set-up puts the built perun on PATH
	PATH="$(dirname "$PERUN"):$PATH" && export PATH &&
	n=0 &&
	while IFS= read -r line; do
		n=$((n + 1))
		printf "%s\n" "$line" >"../cmd.$n"
		code=0
		sh -e "../cmd.$n" >"../out.$n" 2>&1 || code=$?
		echo "[$code] $line"
		case "$line" in
		"perun check"*) [ $code -le 1 ] || { cat "../out.$n"; exit 1; } ;;
		*) [ $code = 0 ] || { cat "../out.$n"; exit 1; } ;;
		esac
	done <../lines
'

test_expect_success 'and they did what the README says' '
	cd proj &&
	"$PERUN" status >st && grep "0@i" st &&
	"$PERUN" log --short >log && cat log && test "$(grep -c " 1 profile " log)" = 4 &&
	"$PERUN" stats list-files >stats && cat stats && test "$(grep -c "| app-" stats)" -ge 3 &&
	if grep -q "^perun report -o site" ../lines; then test -s site/index.html; fi &&
	if grep -q "^perun push" ../lines; then
		git ls-remote ../remote.git >refs && cat refs && grep -q "refs/perun/" refs
	fi
'

test_done
