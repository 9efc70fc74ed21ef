#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The command line: help, version, every command's --help, and each man
# page's SYNOPSIS naming the options --help names.
. "$SRCDIR/tests/lib.sh"

test_expect_success 'perun --version' '
	"$PERUN" --version >out &&
	grep "^perun [0-9]" out
'

test_expect_success 'perun help lists the commands, exit 0' '
	"$PERUN" help >out &&
	for c in init status log add rm show collect cache calibrate callgraph doctor; do grep -q "^   $c " out || exit 1; done
'

test_expect_success 'no command: usage on stderr, exit 2' '
	test_expect_code 2 "$PERUN" >out 2>err &&
	grep usage err && ! test -s out
'

test_expect_success 'an unknown command: exit 2 naming it' '
	test_expect_code 2 "$PERUN" frobnicate 2>err &&
	grep "frobnicate. is not a perun command" err
'

# Every --long option of "perun CMD --help" appears in its man page.
man_names_options() {
	page=$1; [ "$1" = rm ] && page=add; [ "$1" = fetch ] && page=push
	man="$SRCDIR/man/perun-$page.1"
	grep "^\.TH PERUN-$(echo "$page" | tr a-z A-Z) 1" "$man" || { echo "bad .TH in $man"; return 1; }
	for opt in $("$PERUN" "$1" --help | grep -o -- "--[a-z][a-z-]*" | sort -u); do
		troff=$(printf "%s" "$opt" | sed "s/-/\\\\-/g")
		grep -qF -- "$troff" "$man" || grep -qF -- "$opt" "$man" ||
			{ echo "$opt missing from $man"; return 1; }
	done
}

# every command perun --help lists, including ones added later
cmds=$("$PERUN" --help | awk '/^   [a-z]/ { print $1 }')
for cmd in $cmds; do
	test_expect_success "perun $cmd --help and perun help $cmd" "
		\"\$PERUN\" $cmd --help >out &&
		grep \"usage: perun $cmd\" out &&
		\"\$PERUN\" help $cmd >out2 &&
		test_cmp out out2
	"
	test_expect_success "man page for $cmd names every option of --help" "man_names_options $cmd"
done

test_expect_success 'perun.1 lists every command' '
	for cmd in $cmds; do grep -qF "perun\\-$cmd" "$SRCDIR/man/perun.1" || { echo "perun.1 lacks $cmd"; exit 1; }; done
'

test_done
