#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Run from its source tree, perun points at its man pages there ('man
# perun-collect' finds nothing before make install): the help names the
# 'man -l' command, and that command shows a page for every command.
. "$SRCDIR/tests/lib.sh"

test_expect_success 'perun --help names man -l with the tree'"'"'s man pages' '
	"$PERUN" --help >out &&
	sed -n "/--help${SQ} describes one command/,/after make install/p" out >actual &&
	cat >expect <<-EOF &&
	${SQ}perun <command> --help${SQ} describes one command; ${SQ}man -l $PERUN_DATADIR/man/perun-<command>.1${SQ} too
	(from this source tree; ${SQ}man perun-<command>${SQ} after make install).
	EOF
	test_cmp expect actual
'

test_expect_success 'every command listed has the page it names' '
	sed -n "s/^   \([a-z]*\) .*/\1/p" out >cmds &&
	test "$(wc -l <cmds)" -gt 10 &&
	while read -r c; do
		test -r "$PERUN_DATADIR/man/perun-$c.1" || { echo "no man page for $c"; exit 1; }
	done <cmds
'

test_expect_success 'man -l renders it' '
	if command -v man >/dev/null 2>&1; then
		MANPAGER=cat man -l "$PERUN_DATADIR/man/perun-collect.1" >page 2>/dev/null &&
		grep -q "perun-collect" page && grep -q "Stripped binaries" page
	else
		say "no man program: not rendered"
	fi
'

test_done
