#!/bin/sh
# perun cache on an empty and a damaged cache, without tracing.
. "$SRCDIR/tests/lib.sh"

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
	test $rc = 1 && grep "1 bad" out && grep "meta file missing or damaged" err
'

test_expect_success 'clear removes it' '
	"$PERUN" cache clear >out && grep "removed 1 entries" out &&
	"$PERUN" cache verify
'

test_expect_success 'a cache dir writable by others is refused' '
	chmod 777 "$PERUN_CACHE_DIR" &&
	set +e; "$PERUN" cache list 2>err; rc=$?; set -e
	chmod 700 "$PERUN_CACHE_DIR" &&
	test $rc = 1 && grep "writable by group or others" err
'

test_done
