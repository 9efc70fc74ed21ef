#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# perun cache on an empty and a damaged cache, without tracing; prune and
# clear remove only what perun can prove it wrote; sizes are parsed strictly.
. "$SRCDIR/tests/lib.sh"

# make_entry KEY: an entry exactly as perun writes one (meta records the key
# and the module's SHA-1), without running stap.
make_entry() {
	d="$PERUN_CACHE_DIR/modules/$1" &&
	mkdir -m 755 "$d" &&
	printf "module %s" "$1" >"$d/perun_x.bo" &&
	echo plan >"$d/plan" && echo script >"$d/script.stp" &&
	printf "perun-cache 1\nkey %s\nmodule perun_x.bo\nsha1 %s\nruntime bpf\ntarget /bin/true\nprobes 1\n" \
		"$1" "$(sha1sum <"$d/perun_x.bo" | cut -c1-40)" >"$d/meta"
}
K1=1111111111111111111111111111111111111111
K2=2222222222222222222222222222222222222222
K3=3333333333333333333333333333333333333333
m="$PERUN_CACHE_DIR/modules" t="$PERUN_CACHE_DIR/targets"

test_expect_success 'an empty cache lists nothing' '
	"$PERUN" cache list >out && grep "^0 entries" out &&
	"$PERUN" cache list --json >json &&
	python3 -c "import json; assert json.load(open(\"json\")) == []"
'

test_expect_success 'the cache dir is private' '
	test "$(stat -c %a "$PERUN_CACHE_DIR")" = 700
'

test_expect_success 'verify reports a damaged entry and exits 1' '
	mkdir -p "$PERUN_CACHE_DIR/modules/0123456789abcdef0123456789abcdef01234567" &&
	echo junk >"$PERUN_CACHE_DIR/modules/0123456789abcdef0123456789abcdef01234567/meta" &&
	set +e; "$PERUN" cache verify >out 2>err; rc=$?; set -e
	cat out err &&
	test $rc = 1 && grep "1 bad" out && grep "not perun.s (its meta file is damaged)" err
'

test_expect_success 'clear leaves a directory perun never wrote alone, and says so' '
	"$PERUN" cache clear >out 2>err && cat out err &&
	grep "removed 0 entries" out &&
	grep "left alone: .*/modules/0123456789abcdef0123456789abcdef01234567" err &&
	test -f "$PERUN_CACHE_DIR/modules/0123456789abcdef0123456789abcdef01234567/meta" &&
	rm -r "$PERUN_CACHE_DIR/modules/0123456789abcdef0123456789abcdef01234567" &&
	"$PERUN" cache verify
'

test_expect_success 'an entry written the way perun writes it verifies and clears' '
	make_entry $K1 && "$PERUN" cache verify >out && grep "ok  $K1" out &&
	"$PERUN" cache clear >out && grep "removed 1 entries" out &&
	! test -e "$PERUN_CACHE_DIR/modules/$K1"
'

plant_foreign() {
	mkdir -p "$m/my-notes" "$t" && echo keep >"$m/my-notes/notes.txt" &&
	make_entry $K2 && echo mine >"$m/$K2/precious.txt" &&
	make_entry $K3 && sed -i "s/^key .*/key $K1/" "$m/$K3/meta" &&
	echo keep >"$t/README" &&
	mkdir "$m/$K1" && echo keep >"$m/$K1/data"
}

check_foreign_kept() {
	test "$(cat "$m/my-notes/notes.txt")" = keep &&
	test "$(cat "$m/$K2/precious.txt")" = mine && test -f "$m/$K2/perun_x.bo" &&
	test -f "$m/$K3/perun_x.bo" && test "$(cat "$t/README")" = keep &&
	test "$(cat "$m/$K1/data")" = keep
}

test_expect_success 'clear keeps every directory and file perun cannot prove its own' '
	plant_foreign &&
	make_entry 4444444444444444444444444444444444444444 &&
	"$PERUN" cache clear >out 2>err && cat out err &&
	grep "removed 1 entries" out &&
	! test -e "$m/4444444444444444444444444444444444444444" &&
	check_foreign_kept &&
	grep "left alone: .*/my-notes (not named by a cache key)" err &&
	grep "left alone: .*/$K2 (holds files perun never writes)" err &&
	grep "left alone: .*/$K3 (its meta file records another key)" err &&
	grep "left alone: .*/$K1 (no meta file of yours" err &&
	grep "left alone: .*/targets/README" err
'

test_expect_success 'prune --max-size 0 evicts only perun entries too' '
	make_entry 5555555555555555555555555555555555555555 &&
	"$PERUN" cache prune --max-size 0 >out 2>err && cat out err &&
	grep "removed 1 entries" out &&
	! test -e "$m/5555555555555555555555555555555555555555" &&
	check_foreign_kept && grep "left alone: .*/$K2" err
'

test_expect_success 'a foreign meta (another owner, mode 0666) is never trusted' '
	make_entry 6666666666666666666666666666666666666666 &&
	f="$m/6666666666666666666666666666666666666666/meta" &&
	chown 65534 "$f" && chmod 666 "$f" &&
	"$PERUN" cache clear >out 2>err && cat out err &&
	grep "left alone: .*/6666666666666666666666666666666666666666 (no meta file of yours" err &&
	test -f "$f" &&
	set +e; "$PERUN" cache verify >out 2>err; rc=$?; set -e; cat out err &&
	test $rc = 1 && grep "6666666666666666666666666666666666666666 is not perun.s" err &&
	rm -r "$m"/* "$t/README"
'

for bad in 1e400 -5 -1K nan NaN inf 1e3 0x10 abc "" " 5" 5X 1.5.5 1.K 99999999999999999999999 16777216T; do
	test_expect_success "--max-size '$bad' is a usage error and removes nothing" '
		make_entry 7777777777777777777777777777777777777777 2>/dev/null || true
		set +e; "$PERUN" cache prune --max-size "'"$bad"'" >out 2>err; rc=$?; set -e
		cat out err &&
		test $rc = 2 && grep "bad size" err &&
		test -f "$PERUN_CACHE_DIR/modules/7777777777777777777777777777777777777777/meta"
	'
done

test_expect_success 'sizes with units are accepted (after the verb too)' '
	"$PERUN" cache prune --max-size 1.5K >out && grep "limit 1536 bytes" out &&
	"$PERUN" cache prune --max-size 2G >out && grep "limit 2147483648 bytes" out &&
	"$PERUN" cache prune --max-size 10b >out && grep "limit 10 bytes" out &&
	"$PERUN" --help >/dev/null 2>&1 || true
'

test_expect_success 'a bad PERUN_CACHE_MAX_SIZE is a usage error for prune' '
	set +e; PERUN_CACHE_MAX_SIZE=1e400 "$PERUN" cache prune >out 2>err; rc=$?; set -e
	cat out err && test $rc = 2 && grep "PERUN_CACHE_MAX_SIZE" err &&
	PERUN_CACHE_MAX_SIZE=1M "$PERUN" cache prune >out && grep "limit 1048576 bytes" out
'

test_expect_success 'a cache dir writable by others is refused' '
	chmod 777 "$PERUN_CACHE_DIR" &&
	set +e; "$PERUN" cache list 2>err; rc=$?; set -e
	chmod 700 "$PERUN_CACHE_DIR" &&
	test $rc = 1 && grep "writable by group or others" err
'

test_done
