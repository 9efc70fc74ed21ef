#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Live: diff-tracing standalone on the bpf runtime traces only what changed
# between two commits of tests/fixtures/difftrace.c (and main), counts it
# exactly, and records what it found in the profile.
. "$SRCDIR/tests/lib.sh"
require_live

test_expect_success 'a repository with two versions, both built' '
	mkdir repo && cd repo &&
	git init -q && git config user.email t@example.org && git config user.name t &&
	cp "$FIXTURES/difftrace.c" app.c && git add app.c && git commit -qm one &&
	cc -g -O1 -o ../v1 app.c &&
	sed -i "s/s = s \* 3 + i;/s = (s * 3 + i) ^ x;/; s/x \* 10 + 1/x * 12 + 1/; s/old_name/new_name/g" app.c &&
	git commit -qam two &&
	cc -g -O1 -o app app.c
'

test_expect_success 'strict, keep-leaf: changed, tweaked and main traced, counted exactly' '
	cd repo &&
	"$PERUN" collect -c ./app -a 10 -o dt.perf trace -s userspace -on diff-tracing \
		-oa diff-baseline ../v1 -oa diff-keep-leaf true -oa diff-cfg-mode strict \
		2>err >out &&
	cat err &&
	grep "^perun: diff-tracing: 2 functions changed since HEAD~1 (0 new, 1 renamed, 2 by code, 0 by callees); 2 kept; standalone: 3 of 6 probes left" err &&
	profile_counts dt.perf >actual &&
	printf "changed 20\nmain 1\ntweaked 10\n" >expect &&
	test_cmp expect actual &&
	test "$(profile_field dt.perf trace.optimization.diff_tracing.counts.changed)" = 2 &&
	test "$(profile_field dt.perf trace.optimization.diff_tracing.renamed)" = "{\"new_name\": \"old_name\"}" &&
	test "$(profile_field dt.perf trace.optimization.diff_tracing.mode)" = standalone &&
	test "$(profile_field dt.perf trace.complete)" = true
'

test_expect_success 'with --one-module, another CFG mode runs on the same module, without stap' '
	cd repo &&
	"$PERUN" collect -c ./app -a 10 -o s.perf trace -s userspace -on diff-tracing \
		-oa diff-baseline ../v1 -oa diff-keep-leaf true -oa diff-cfg-mode strict \
		--one-module 2>err >out &&
	cat err &&
	profile_counts s.perf >actual &&
	printf "changed 20\nmain 1\ntweaked 10\n" >expect &&
	test_cmp expect actual &&
	PERUN_STAP=/nonexistent/stap "$PERUN" collect -c ./app -a 10 -o soft.perf trace \
		-s userspace -on diff-tracing -oa diff-baseline ../v1 -oa diff-keep-leaf true \
		-oa diff-cfg-mode soft --one-module 2>err >out &&
	cat err &&
	grep "(module cache: hit)" err &&
	profile_counts soft.perf >actual &&
	printf "changed 20\nmain 1\n" >expect &&
	test_cmp expect actual
'

test_done
