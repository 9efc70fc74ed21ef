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

# cache warnings come in the order of readdir: compared sorted
test_expect_success 'an empty cache lists nothing' '
	"$PERUN" cache list >actual &&
	cat >expect <<-EOF &&
	KEY              RUNTIME  PROBES     SIZE LAST USED           TARGET
	0 entries, 0B in $PERUN_CACHE_DIR
	EOF
	test_cmp expect actual &&
	"$PERUN" cache list --json >json &&
	python3 -c "import json; assert json.load(open(\"json\")) == []"
'

test_expect_success 'the cache dir is private' '
	test "$(stat -c %a "$PERUN_CACHE_DIR")" = 700
'

test_expect_success 'verify reports a damaged entry and exits 1' '
	mkdir -p "$m/0123456789abcdef0123456789abcdef01234567" &&
	echo junk >"$m/0123456789abcdef0123456789abcdef01234567/meta" &&
	test_expect_code 1 "$PERUN" cache verify >out 2>err &&
	echo "1 entries, 1 bad: remove them with ${SQ}perun cache clear${SQ} or ${SQ}perun cache prune${SQ}" >expect &&
	test_cmp expect out &&
	echo "perun cache: $m/0123456789abcdef0123456789abcdef01234567 is not perun${SQ}s (its meta file is damaged): perun leaves it alone; inspect and remove it" >expect &&
	test_cmp expect err
'

test_expect_success 'clear leaves a directory perun never wrote alone, and says so' '
	"$PERUN" cache clear >out 2>err &&
	echo "removed 0 entries from $PERUN_CACHE_DIR" >expect &&
	test_cmp expect out &&
	echo "cache: warning: left alone: $m/0123456789abcdef0123456789abcdef01234567 (its meta file is damaged)" >expect &&
	test_cmp expect err &&
	test -f "$m/0123456789abcdef0123456789abcdef01234567/meta" &&
	rm -r "$m/0123456789abcdef0123456789abcdef01234567" &&
	"$PERUN" cache verify
'

test_expect_success 'an entry written the way perun writes it verifies and clears' '
	make_entry $K1 && "$PERUN" cache verify >actual &&
	cat >expect <<-EOF &&
	ok  $K1
	1 entries, 0 bad
	EOF
	test_cmp expect actual &&
	"$PERUN" cache clear >actual &&
	echo "removed 1 entries from $PERUN_CACHE_DIR" >expect &&
	test_cmp expect actual &&
	! test -e "$m/$K1"
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

# what clear and prune say of the directories and files plant_foreign left
foreign_left_alone() {
	cat <<-EOF
	cache: warning: left alone: $m/my-notes (not named by a cache key)
	cache: warning: left alone: $m/$K2 (holds files perun never writes)
	cache: warning: left alone: $m/$K3 (its meta file records another key)
	cache: warning: left alone: $m/$K1 (no meta file of yours that only you can write)
	EOF
}
readme_ignored() {
	cat <<-EOF
	cache: warning: ignoring $t/README: not a name perun writes, so not an analysis perun wrote; perun leaves it alone (remove it if nobody needs it)
	EOF
}

test_expect_success 'clear keeps every directory and file perun cannot prove its own' '
	plant_foreign &&
	make_entry 4444444444444444444444444444444444444444 &&
	"$PERUN" cache clear >out 2>err &&
	echo "removed 1 entries from $PERUN_CACHE_DIR" >expect &&
	test_cmp expect out &&
	! test -e "$m/4444444444444444444444444444444444444444" &&
	check_foreign_kept &&
	{ foreign_left_alone && readme_ignored &&
	  echo "cache: warning: left alone: $t/README (not an analysis file of yours)"; } | sort >expect &&
	sort err >actual &&
	test_cmp expect actual
'

test_expect_success 'prune --max-size 0 evicts only perun entries too' '
	make_entry 5555555555555555555555555555555555555555 &&
	"$PERUN" cache prune --max-size 0 >out 2>err &&
	echo "removed 1 entries; limit 0 bytes" >expect &&
	test_cmp expect out &&
	! test -e "$m/5555555555555555555555555555555555555555" &&
	check_foreign_kept &&
	{ foreign_left_alone && readme_ignored; } | sort >expect &&
	sort err >actual &&
	test_cmp expect actual
'

test_expect_success 'a foreign meta (another owner, mode 0666) is never trusted' '
	make_entry 6666666666666666666666666666666666666666 &&
	f="$m/6666666666666666666666666666666666666666/meta" &&
	chown 65534 "$f" && chmod 666 "$f" &&
	"$PERUN" cache clear >out 2>err && cat out &&
	{ foreign_left_alone && readme_ignored &&
	  echo "cache: warning: left alone: $m/6666666666666666666666666666666666666666 (no meta file of yours that only you can write)" &&
	  echo "cache: warning: left alone: $t/README (not an analysis file of yours)"; } | sort >expect &&
	sort err >actual &&
	test_cmp expect actual &&
	test -f "$f" &&
	test_expect_code 1 "$PERUN" cache verify >out 2>err &&
	{ readme_ignored &&
	  echo "fs: refusing $f: owned by uid 65534, not you (uid 0): perun trusts only its own files; inspect and remove it" &&
	  foreign_left_alone | sed "s/^cache: warning: left alone: \([^ ]*\) \(.*\)/perun cache: \1 is not perun${SQ}s \2: perun leaves it alone; inspect and remove it/" &&
	  echo "perun cache: $m/6666666666666666666666666666666666666666 is not perun${SQ}s (no meta file of yours that only you can write): perun leaves it alone; inspect and remove it"; } | sort >expect &&
	sort err >actual &&
	test_cmp expect actual &&
	rm -r "$m"/* "$t/README"
'

for bad in 1e400 -5 -1K nan NaN inf 1e3 0x10 abc "" " 5" 5X 1.5.5 1.K 99999999999999999999999 16777216T; do
	test_expect_success "--max-size '$bad' is a usage error and removes nothing" '
		make_entry 7777777777777777777777777777777777777777 2>/dev/null || true
		test_expect_code 2 "$PERUN" cache prune --max-size "'"$bad"'" >out 2>err &&
		! test -s out &&
		echo "perun cache: bad size ${SQ}'"$bad"'${SQ}: give bytes with an optional K, M, G or T suffix (e.g. 500M, 2G)" >expect &&
		head -n 1 err >first && test_cmp expect first &&
		sed -n 2p err | grep "^usage: perun cache list" &&
		test -f "$m/7777777777777777777777777777777777777777/meta"
	'
done

test_expect_success 'sizes with units are accepted (after the verb too)' '
	"$PERUN" cache prune --max-size 1.5K >actual &&
	echo "removed 0 entries; limit 1536 bytes" >expect &&
	test_cmp expect actual &&
	"$PERUN" cache prune --max-size 2G >actual &&
	echo "removed 0 entries; limit 2147483648 bytes" >expect &&
	test_cmp expect actual &&
	"$PERUN" cache prune --max-size 10b >actual &&
	echo "removed 1 entries; limit 10 bytes" >expect &&
	test_cmp expect actual &&
	"$PERUN" --help >/dev/null 2>&1 || true
'

test_expect_success 'a bad PERUN_CACHE_MAX_SIZE is a usage error for prune' '
	test_expect_code 2 env PERUN_CACHE_MAX_SIZE=1e400 "$PERUN" cache prune >out 2>err &&
	echo "perun cache: PERUN_CACHE_MAX_SIZE=${SQ}1e400${SQ} is not a size: give bytes with an optional K, M, G or T suffix, or --max-size" >expect &&
	test_cmp expect err &&
	PERUN_CACHE_MAX_SIZE=1M "$PERUN" cache prune >actual &&
	echo "removed 0 entries; limit 1048576 bytes" >expect &&
	test_cmp expect actual
'

test_expect_success 'a cache dir writable by others is refused' '
	chmod 777 "$PERUN_CACHE_DIR" &&
	got=0 && { "$PERUN" cache list 2>err || got=$?; } &&
	chmod 700 "$PERUN_CACHE_DIR" &&
	test $got = 1 &&
	echo "fs: $PERUN_CACHE_DIR is writable by group or others (mode 0777): run ${SQ}chmod go-w $PERUN_CACHE_DIR${SQ}; set PERUN_CACHE_DIR to a directory that only you (or root) can write, or collect with --stap-cache-off" >expect &&
	test_cmp expect err
'

test_done
