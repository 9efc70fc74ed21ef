#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Security: a debuginfod server (or whoever answers at its address) cannot
# hold root's perun for ever, fill root's cache, or make it deaf to a
# signal.  perun bounds elfutils' debuginfod client (size, time, speed)
# unless the user set her own bounds, and a signal ends a download.  The
# server is a small local one on 127.0.0.1 that sends a huge file or drips
# a byte a second.
. "$SRCDIR/tests/lib.sh"
require_live
# libdebuginfod's leak (see the file) is matched only with the slow unwinder
LSAN_OPTIONS="$LSAN_OPTIONS:fast_unwind_on_malloc=0"
export LSAN_OPTIONS
unset DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS
export DEBUGINFOD_CACHE_PATH="$TRASH/dcache"

cat >"$TRASH/server.py" <<\PY
import http.server, os, socketserver, sys, time
mode = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        with open("requests", "a") as f:
            f.write(self.path + "\n")
        self.send_response(200)
        self.send_header("Content-Length", str(2 << 30 if mode == "huge" else 10 << 20))
        self.end_headers()
        try:
            if mode == "huge":
                for i in range(2048):
                    self.wfile.write(b"\0" * (1 << 20))
            else:
                for i in range(1000):
                    self.wfile.write(b"\0"); self.wfile.flush(); time.sleep(1)
        except OSError:
            pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
open("port.tmp", "w").write(str(s.server_address[1]))
os.rename("port.tmp", "port")
s.serve_forever()
PY

# serve MODE: starts the server, sets DEBUGINFOD_URLS to it
serve() {
	rm -f port requests
	python3 server.py "$1" & echo $! >server.pid
	for i in $(seq 100); do test -f port && break; sleep 0.1; done
	DEBUGINFOD_URLS="http://127.0.0.1:$(cat port)"
	export DEBUGINFOD_URLS
	rm -rf "$DEBUGINFOD_CACHE_PATH"
}
unserve() { kill "$(cat server.pid)"; wait "$(cat server.pid)" 2>/dev/null || :; }

# a stripped program: its functions are asked of debuginfod
test_expect_success 'a stripped program' '
	cc -g -O0 -o app "$FIXTURES/small.c" && strip --strip-all app
'

test_expect_success 'a server sending 2 GiB: refused at once (DEBUGINFOD_MAXSIZE), cache stays small' '
	serve huge &&
	rc=0 && timeout -s KILL 60 "$PERUN" collect -c ./app -o x.perf trace -s custom -f leaf \
		2>err || rc=$? && cat err && unserve &&
	test $rc = 1 && test -s requests &&
	grep "no function symbols for ${SQ}leaf${SQ}" err &&
	test "$(du -sm "$DEBUGINFOD_CACHE_PATH" | cut -f1)" -lt 16
'

test_expect_success 'a server dripping a byte a second: SIGTERM ends perun within seconds' '
	serve drip &&
	{ "$PERUN" collect -c ./app -o x.perf trace -s custom -f leaf 2>err & echo $! >perun.pid; } &&
	for i in $(seq 300); do test -s requests && break; sleep 0.1; done && test -s requests &&
	sleep 1 && kill -TERM "$(cat perun.pid)" &&
	for i in $(seq 100); do kill -0 "$(cat perun.pid)" 2>/dev/null || break; sleep 0.1; done &&
	if kill -0 "$(cat perun.pid)" 2>/dev/null; then
		echo "perun still runs 10 s after SIGTERM"; kill -KILL "$(cat perun.pid)"; unserve; false
	fi &&
	rc=0 && wait "$(cat perun.pid)" || rc=$? && cat err && unserve &&
	test $rc = 143 &&
	grep "interrupted by signal 15 before the trace started: nothing was traced" err &&
	! test -e x.perf
'

test_expect_success 'and without a signal the download ends by itself (DEBUGINFOD_TIMEOUT, 15 s)' '
	serve drip &&
	start=$(date +%s) &&
	rc=0 && timeout -s KILL 100 "$PERUN" collect -c ./app -o x.perf trace -s custom -f leaf \
		2>err || rc=$? && cat err && unserve &&
	took=$(( $(date +%s) - start )) && echo "took $took s" &&
	test $rc = 1 && test $took -lt 60
'

test_expect_success 'bounds the user set are hers: DEBUGINFOD_TIMEOUT=2' '
	serve drip &&
	start=$(date +%s) &&
	rc=0 && DEBUGINFOD_TIMEOUT=2 timeout -s KILL 100 "$PERUN" collect -c ./app -o x.perf \
		trace -s custom -f leaf 2>err || rc=$? && cat err && unserve &&
	took=$(( $(date +%s) - start )) && echo "took $took s" &&
	test $rc = 1 && test $took -lt 12
'

test_done
