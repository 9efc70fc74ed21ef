#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Diff Tracing chooses the probes (--script-only: no tracing needed): a git
# repository with two versions of tests/fixtures/difftrace.c, both built;
# standalone, only the changed functions (and main) keep their probes, by
# CFG mode; without a baseline binary the method switches off with a notice.
. "$SRCDIR/tests/lib.sh"

# The function names the script probes, sorted (addresses through nm).
probed() {
	nm app | while read -r a t n; do
		case $t in T|t) printf "0x%x %s\n" "0x$a" "$n" ;; esac
	done >map &&
	sed -n 's/^probe process("[^"]*")\.function(\(0x[0-9a-f]*\))\.call.*/\1/p' "$1" |
	while read -r a; do
		awk -v a="$a" '$1 == a { print $2 }' map
	done | sort
}

test_expect_success 'a repository with two versions, both built' '
	mkdir repo && cd repo &&
	git init -q && git config user.email t@example.org && git config user.name t &&
	cp "$FIXTURES/difftrace.c" app.c && git add app.c && git commit -qm one &&
	cc -g -O1 -o ../v1 app.c &&
	sed -i "s/s = s \* 3 + i;/s = (s * 3 + i) ^ x;/; s/x \* 10 + 1/x * 12 + 1/; s/old_name/new_name/g" app.c &&
	git commit -qam two &&
	cc -g -O1 -o app app.c
'

test_expect_success 'no baseline binary: switched off with a notice, all functions traced' '
	cd repo &&
	"$PERUN" collect -c ./app trace -s userspace -on diff-tracing --script-only >s.stp 2>err &&
	echo "perun: optimization diff-tracing switched off: no baseline binary; build the baseline version (HEAD~1) and give it with -oa diff-baseline PATH" >expect &&
	test_cmp expect err &&
	probed s.stp >actual &&
	printf "changed\nmain\nnew_name\ntweaked\ntwice\nuntouched\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'standalone, semistrict: changed() (a leaf: only with keep-leaf), not the renamed or the untouched' '
	cd repo &&
	"$PERUN" collect -c ./app trace -s userspace -on diff-tracing -oa diff-baseline ../v1 \
		--script-only >s.stp 2>err &&
	echo "perun: diff-tracing: 1 function changed since HEAD~1 (0 new, 1 renamed, 1 by code, 0 by callees); 0 kept (1 changed leaves only with -oa diff-keep-leaf true); standalone: 1 of 6 probes left (the kept, main, -f)" >expect &&
	test_cmp expect err &&
	probed s.stp >actual &&
	printf "main\n" >expect &&
	test_cmp expect actual &&
	"$PERUN" collect -c ./app trace -s userspace -on diff-tracing -oa diff-baseline ../v1 \
		-oa diff-keep-leaf true --script-only >s.stp 2>err &&
	probed s.stp >actual &&
	printf "changed\nmain\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'strict also sees the changed constant in tweaked(); soft does not' '
	cd repo &&
	"$PERUN" collect -c ./app trace -s userspace -on diff-tracing -oa diff-baseline ../v1 \
		-oa diff-keep-leaf true -oa diff-cfg-mode strict --script-only >s.stp 2>err &&
	probed s.stp >actual &&
	printf "changed\nmain\ntweaked\n" >expect &&
	test_cmp expect actual &&
	"$PERUN" collect -c ./app trace -s userspace -on diff-tracing -oa diff-baseline ../v1 \
		-oa diff-keep-leaf true -oa diff-cfg-mode soft --script-only >s.stp 2>err &&
	probed s.stp >actual &&
	printf "changed\nmain\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'the baseline version is a parameter: against itself nothing changed' '
	cd repo &&
	cc -g -O1 -o ../v2 app.c &&
	"$PERUN" collect -c ./app trace -s userspace -on diff-tracing -oa diff-baseline ../v2 \
		-oa diff-version HEAD -oa diff-keep-leaf true --script-only >s.stp 2>err &&
	echo "perun: diff-tracing: 0 functions changed since HEAD (0 new, 0 renamed, 0 by code, 0 by callees); 0 kept; standalone: 1 of 6 probes left (the kept, main, -f)" >expect &&
	test_cmp expect err &&
	probed s.stp >actual &&
	printf "main\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'a baseline that is no binary is an error naming the fix' '
	cd repo &&
	! "$PERUN" collect -c ./app trace -s userspace -on diff-tracing -oa diff-baseline ../nosuch \
		--script-only >s.stp 2>err &&
	cat >expect <<-\EOF &&
	target: ../nosuch: no such file: check the path given with -c or -b
	perun collect: -oa diff-baseline ../nosuch: cannot read the baseline binary: give the binary built at HEAD~1
	EOF
	test_cmp expect err
'

test_done
