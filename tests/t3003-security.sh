#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Security: a hostile local user (nobody, through setpriv) attacks root's
# perun through the module cache and the -z log files.  Each attack must be
# refused with a message naming the path, the reason and the fix, and nothing
# may be loaded or overwritten.  The swap races use tests/fixtures/swap.c
# (renameat2 RENAME_EXCHANGE in a loop).
. "$SRCDIR/tests/lib.sh"
require_live
command -v setpriv >/dev/null 2>&1 || skip_all "needs setpriv (util-linux)"
id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null 2>&1 ||
	skip_all "needs the user nobody and the group nogroup"

NOBODY=$(id -u nobody)
as_nobody() { setpriv --reuid nobody --regid nogroup --clear-groups "$@"; }
# the attacker must be able to reach the trash directory
chmod 755 "$TRASH"
# race rounds under a real collect (0.5 to 1.5 s each here): by default as
# many as fit in 25 s (at least 10, at most 200), to keep make check near a
# minute; PERUN_RACE_RUNS=200 runs exactly that many, however long it takes
if [ -n "${PERUN_RACE_RUNS:-}" ]; then
	RACE_RUNS=$PERUN_RACE_RUNS RACE_SECONDS=0
else
	RACE_RUNS=200 RACE_SECONDS=25
fi
# collects refused up front under nobody's swapping directory: each is refused
# for the same reason (the directory nobody owns, which the swaps inside it
# cannot change), so 50 rounds assert what 200 did in a quarter of the time
RACE1_RUNS=${PERUN_RACE_RUNS:-50}

collect() {
	out=$1
	shift
	# the module cache is stapbpf's (perun's own loader builds no module)
	"$PERUN" collect -c "$TRASH/small" -o "$out" trace -s custom -f leaf --loader stapbpf "$@"
}

# refused CMD...: runs it, wants exit 1, keeps stderr in err
refused() {
	set +e
	"$@" >out 2>err
	rc=$?
	set -e
	cat out err
	test $rc = 1
}

test_expect_success 'build the target and the swap helper' '
	cc -g -O0 -o small "$FIXTURES/small.c" &&
	cc -O2 -o swap "$FIXTURES/swap.c" &&
	chmod 755 small swap &&
	collect first.perf 2>err && cat err && grep "module cache: miss" err &&
	test "$(profile_counts first.perf)" = "leaf 10"
'

test_expect_success 'a cache below a directory another user owns is refused, nothing created' '
	mkdir nob && chown nobody:nogroup nob &&
	as_nobody mkdir nob/cache &&
	PERUN_CACHE_DIR="$TRASH/nob/cache" refused collect n.perf &&
	grep "$TRASH/nob is owned by uid $NOBODY, not root or you" err &&
	grep "set PERUN_CACHE_DIR to a directory that only you" err &&
	! test -e n.perf && ! test -e nob/cache/modules &&
	PERUN_CACHE_DIR="$TRASH/nob/cache" refused "$PERUN" cache list &&
	! test -e nob/cache/modules
'

test_expect_success 'so is XDG_CACHE_HOME or HOME pointing there (sudo -E)' '
	(unset PERUN_CACHE_DIR; XDG_CACHE_HOME="$TRASH/nob" refused collect x.perf) &&
	grep "$TRASH/nob is owned by uid $NOBODY" err &&
	(unset PERUN_CACHE_DIR XDG_CACHE_HOME; HOME="$TRASH/nob" refused collect x.perf) &&
	grep "$TRASH/nob is owned by uid $NOBODY" err && ! test -e x.perf &&
	! test -e nob/perun && ! test -e nob/.cache
'

test_expect_success 'a TMPDIR another user controls is refused (the module is copied there)' '
	TMPDIR="$TRASH/nob" refused collect x.perf &&
	grep "$TRASH/nob is owned by uid $NOBODY" err &&
	grep "unset TMPDIR or point it at a directory only you can write" err &&
	! test -e x.perf && test -z "$(ls nob | grep -v cache)"
'

test_expect_success 'a cache dir that is another user.s symbolic link is refused' '
	mkdir -m 1777 shared &&
	as_nobody ln -s "$PERUN_CACHE_DIR" shared/cache &&
	PERUN_CACHE_DIR="$TRASH/shared/cache" refused collect s.perf &&
	grep "shared/cache is a symbolic link (owned by uid $NOBODY)" err &&
	grep "give the real path or remove the link" err && ! test -e s.perf &&
	as_nobody mkdir shared/nobodys &&
	as_nobody ln -s "$TRASH/shared/nobodys" shared/cache2 &&
	PERUN_CACHE_DIR="$TRASH/shared/cache2/perun" refused collect s.perf &&
	grep "is a symbolic link" err && ! test -e shared/nobodys/perun
'

test_expect_success 'in a sticky shared dir (like /tmp) only a cache of ours is trusted' '
	PERUN_CACHE_DIR="$TRASH/shared/nobodys" refused "$PERUN" cache list &&
	grep "owned by uid $NOBODY" err &&
	PERUN_CACHE_DIR="$TRASH/shared/nobodys/perun" refused "$PERUN" cache list &&
	grep "shared/nobodys is owned by uid $NOBODY inside the shared directory" err &&
	PERUN_CACHE_DIR="$TRASH/shared/mine" "$PERUN" cache list &&
	test "$(stat -c %U:%a shared/mine)" = root:700
'

key_dir() { ls -d "$PERUN_CACHE_DIR"/modules/*/ | head -1; }

test_expect_success 'modules/ mode 0777 is refused, and an entry planted there too' '
	m="$PERUN_CACHE_DIR/modules" && d=$(key_dir) && k=$(basename "$d") &&
	chmod 777 "$m" && chmod 711 "$PERUN_CACHE_DIR" &&
	as_nobody mv "$m/$k" "$m/old-$k" &&
	as_nobody mkdir "$m/$k" && as_nobody cp "$m/old-$k"/* "$m/$k/" &&
	refused collect p.perf &&
	grep "modules is writable by group or others (mode 0777)" err &&
	grep "chmod go-w" err && ! test -e p.perf &&
	chmod 700 "$m" "$PERUN_CACHE_DIR" &&
	refused collect p.perf &&
	grep "refusing cache entry $m/$k: owned by another user" err && ! test -e p.perf &&
	rm -r "$m/$k" && mv "$m/old-$k" "$m/$k" &&
	collect p.perf 2>err && grep "module cache: hit" err
'

test_expect_success 'a meta file owned by another user with mode 0666 is refused' '
	meta="$(key_dir)meta" &&
	chown nobody "$meta" && chmod 666 "$meta" &&
	refused collect q.perf &&
	grep "refusing .*/meta: owned by uid $NOBODY, not you" err && ! test -e q.perf &&
	chown root "$meta" && refused collect q.perf &&
	grep "refusing .*/meta: writable by group or others (mode 0666)" err &&
	chmod 644 "$meta" && collect q.perf 2>err && grep "module cache: hit" err
'

test_expect_success 'a planted targets/*.tsv is set aside, never read nor removed, and the collect goes on' '
	tsv=$(ls "$PERUN_CACHE_DIR"/targets/*.tsv | head -1) && test -f "$tsv" &&
	cp "$tsv" saved.tsv &&
	chown nobody "$tsv" &&
	collect t.perf 2>err && cat err &&
	grep "ignoring $tsv: not owned by you" err &&
	test "$(profile_counts t.perf)" = "leaf 10" &&
	test "$(stat -c %U "$tsv")" = nobody && cmp "$tsv" saved.tsv &&
	rm "$tsv" && ln -s "$TRASH/saved.tsv" "$tsv" &&
	collect t.perf 2>err &&
	grep "ignoring $tsv: a symbolic link" err && test -L "$tsv" &&
	rm "$tsv" && cp saved.tsv "$tsv" && chmod 646 "$tsv" &&
	collect t.perf 2>err && grep "writable by group or others" err &&
	chmod 600 "$tsv" && collect t.perf 2>err && ! grep "ignoring" err
'

test_expect_success '-z: a perun-logs symlink to a root 0600 file is refused, the file unchanged' '
	echo "root secret" >secret && chmod 600 secret && cp secret secret.orig &&
	mkdir -m 1777 work1 && as_nobody ln -s "$TRASH/secret" work1/perun-logs &&
	{ (cd work1 && collect "$TRASH/z1.perf" -z) 2>err || :; } && cat err &&
	grep "refusing perun-logs: a symbolic link or not a directory" err &&
	grep "temp files not kept (-z)" err &&
	cmp secret secret.orig && test "$(stat -c %U:%a secret)" = root:600 &&
	{ (cd work1 && collect "$TRASH/i1.perf" -i) 2>err || :; } && cat err &&
	grep "refusing perun-logs: a symbolic link" err &&
	cmp secret secret.orig && test "$(stat -c %U:%a secret)" = root:600
'

test_expect_success '-z: a perun-logs dir of another user, or a link to a root dir, is refused' '
	mkdir -m 1777 work2 && as_nobody mkdir -m 777 work2/perun-logs &&
	now=$(date +%Y%m%d-%H%M%S) &&
	for f in trace.raw stap.log plan script.stp; do
		as_nobody ln -s "$TRASH/secret" "work2/perun-logs/trace-$now-$f.gz"
	done &&
	{ (cd work2 && collect "$TRASH/z2.perf" -z) 2>err || :; } && cat err &&
	grep "refusing perun-logs: owned by uid $NOBODY with mode 0777" err &&
	cmp secret secret.orig &&
	mkdir -m 700 rootdir && mkdir -m 1777 work3 && as_nobody ln -s "$TRASH/rootdir" work3/perun-logs &&
	{ (cd work3 && collect "$TRASH/z3.perf" -z) 2>err || :; } && cat err &&
	grep "refusing perun-logs: a symbolic link" err && test -z "$(ls rootdir)"
'

test_expect_success '-z: .perun/logs of another user is refused the same way' '
	mkdir -m 1777 work4 && as_nobody mkdir -p work4/.perun &&
	as_nobody ln -s "$TRASH/secret" work4/.perun/logs &&
	{ (cd work4 && collect "$TRASH/z4.perf" -z) 2>err || :; } && cat err &&
	grep "refusing .*work4/.perun/logs: a symbolic link" err && cmp secret secret.orig &&
	as_nobody rm work4/.perun/logs && as_nobody mkdir work4/.perun/logs &&
	{ (cd work4 && collect "$TRASH/z4.perf" -z) 2>err || :; } && cat err &&
	grep "refusing .*work4/.perun/logs: owned by uid $NOBODY" err &&
	test -z "$(ls work4/.perun/logs)"
'

test_expect_success '-z in a directory of ours: new private files with unguessable names' '
	mkdir work5 && { (cd work5 && collect "$TRASH/z5.perf" -z) 2>err || :; } && cat err &&
	ls work5/perun-logs >names && cat names &&
	grep -E "^trace-[0-9]{8}-[0-9]{6}-[0-9a-f]{8}-trace.raw.gz$" names &&
	test "$(stat -c %a work5/perun-logs/*trace.raw.gz)" = 600 &&
	zcat work5/perun-logs/*trace.raw.gz | grep -q .
'

test_expect_success "the swap race under a directory nobody controls: $RACE1_RUNS collects, all refused up front" '
	mkdir race && chown nobody:nogroup race && start=$(date +%s) &&
	as_nobody mkdir -p race/cache/modules race/lookalike/modules || exit 1
	setpriv --reuid nobody --regid nogroup --clear-groups ./swap race/cache race/lookalike \
		>swap.out &
	swapper=$!
	i=0 refusals=0
	while [ $i -lt $RACE1_RUNS ]; do
		i=$((i + 1))
		if PERUN_CACHE_DIR="$TRASH/race/cache" collect "r$i.perf" 2>rerr; then
			echo "run $i was not refused"; cat rerr
		elif grep -q "race is owned by uid $NOBODY, not root or you" rerr; then
			refusals=$((refusals + 1))
		else
			cat rerr
		fi
	done
	kill $swapper && wait $swapper || true
	echo "$RACE1_RUNS collects with the cache below nobody.s directory while nobody swapped it" \
		"($(cat swap.out)): $refusals refused up front in $(($(date +%s) - start)) s" |
		tee "$TRASH/summary.race1" &&
	test $refusals = $RACE1_RUNS && test -z "$(ls r*.perf 2>/dev/null)" &&
	test "$(sed "s/ .*//" swap.out)" -gt 0
'
test -f "$TRASH/summary.race1" && say "$(cat "$TRASH/summary.race1")"

# The tree below is ours: no other user can reach it, which is the point of
# the checks above.  Here the swapper runs as root and stands for anything
# that changes the module after perun verified it; the runtime must still get
# exactly the verified bytes.  The look-alike is a valid module compiled for
# main alone, so a load of it shows as "main 1" counted under leaf's probe
# (perun before this check loaded it in 13 of 40 such runs).
test_expect_success "the swap race on the load itself: cache-hit collects never load a swapped module" '
	"$PERUN" collect -c "$TRASH/small" -o evil.perf trace -s custom -f main --loader stapbpf \
		2>err && cat err &&
	good="$PERUN_CACHE_DIR/modules/$(profile_field first.perf trace.cache_key)/" &&
	evil="$PERUN_CACHE_DIR/modules/$(profile_field evil.perf trace.cache_key)/" &&
	test "$good" != "$evil" && test -f "$good/meta" && test -f "$evil/meta" &&
	start=$(date +%s) &&
	mod=$(ls "$good"*.bo) && goodsum=$(sha1sum <"$mod" | cut -c1-40) &&
	cp -a "$good" backup &&
	cp "$(ls "$evil"*.bo)" "$PERUN_CACHE_DIR/modules/.evil.bo" || exit 1
	./swap "$mod" "$PERUN_CACHE_DIR/modules/.evil.bo" >swap2.out &
	swapper=$!
	i=0 ok=0 failed=0 wrong=0
	while [ $i -lt $RACE_RUNS ]; do
		if [ $RACE_SECONDS -gt 0 ] && [ $i -ge 10 ] &&
		   [ $(($(date +%s) - start)) -ge $RACE_SECONDS ]; then
			break
		fi
		i=$((i + 1))
		rm -f l.perf
		if PERUN_STAP=/nonexistent/stap collect l.perf -k 2>lerr; then
			ok=$((ok + 1))
			test "$(profile_counts l.perf)" = "leaf 10" || { wrong=$((wrong + 1)); cat lerr; }
		else
			failed=$((failed + 1))
		fi
		kept=$(sed -n "s/^perun: temp files kept in //p" lerr)
		if [ -n "$kept" ] && [ -d "$kept/load" ]; then
			for f in "$kept"/load/*; do
				test "$(sha1sum <"$f" | cut -c1-40)" = "$goodsum" ||
					{ wrong=$((wrong + 1)); echo "run $i loaded $f"; }
			done
		fi
		test -z "$kept" || rm -rf "$kept"
		# a detected swap removes the entry (perun wrote it): restore it
		if ! test -f "$good/meta"; then
			rm -rf "$good" && cp -a backup "$good" &&
			cp "$(ls "$evil"*.bo)" "$PERUN_CACHE_DIR/modules/.evil.bo"
		fi
	done
	kill $swapper && wait $swapper || true
	cat swap2.out &&
	echo "$i cache-hit collects while the module was swapped ($(cat swap2.out))" \
		"in $(($(date +%s) - start)) s: $ok traced with the verified module," \
		"$failed refused (swap detected), $wrong loaded anything else" |
		tee "$TRASH/summary.race2" &&
	test $wrong = 0 && test "$(sed "s/ .*//" swap2.out)" -gt 0 &&
	# the swapper stopped at either state: put the real module back
	rm -rf "$good" && cp -a backup "$good" &&
	{ PERUN_STAP=/nonexistent/stap collect after.perf 2>err || :; } && cat err &&
	test "$(profile_counts after.perf)" = "leaf 10"
'
test -f "$TRASH/summary.race2" && say "$(cat "$TRASH/summary.race2")"

test_expect_success 'a limit smaller than one module keeps the module in use' '
	PERUN_CACHE_MAX_SIZE=1 collect lim1.perf -f main --aggregate 2>err && cat err &&
	grep "module cache: miss" err &&
	grep "smaller than the module just used .*: kept it; raise PERUN_CACHE_MAX_SIZE" err &&
	test "$(ls "$PERUN_CACHE_DIR"/modules | wc -l)" = 1 &&
	PERUN_CACHE_MAX_SIZE=1 collect lim2.perf -f main --aggregate 2>err && cat err &&
	grep "module cache: hit" err &&
	"$PERUN" cache clear &&
	PERUN_CACHE_MAX_SIZE=1e400 collect lim3.perf -f main --aggregate 2>err && cat err &&
	grep "PERUN_CACHE_MAX_SIZE=1e400 is not a size" err &&
	test "$(ls "$PERUN_CACHE_DIR"/modules | wc -l)" = 1
'

test_done
