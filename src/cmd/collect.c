/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun collect [-c CMD] [-a ARGS] [-w WORKLOAD] [-o FILE] trace [options]: the
 * options (cmd/opt-collect.c), the collect pipeline (src/collect/), and what it
 * made, printed.  */
#include "config.h"

#define PR_FMT "perun collect"

#include <stdio.h>

#include "cmd/cmd.h"
#include "collect/session.h"
#include "report/collect-output.h"
#include "runtime/driver.h"
#include "util/log.h"

int cmd_collect(int argc, char **argv, struct ctx *ctx)
{
	(void)ctx;
	struct collect_opts o;
	struct session s;
	struct strbuf sb = STRBUF_INIT;
	int ret = EXIT_FAIL, parsed;

	collect_opts_init(&o);
	parsed = collect_args_parse(argc, argv, &o);
	if (parsed) {
		ret = parsed < 0 ? EXIT_OK : parsed;
		goto out_opts;
	}
	session_init(&s, &o);
	driver_install_signals();
	if (o.quiet)
		log_level = 0;
	collect_pipeline(&s, o.script_only    ? COLLECT_UNTIL_SCRIPT
			     : o.compile_only ? COLLECT_UNTIL_MODULE
					      : COLLECT_UNTIL_PROFILE);
	ret = collect_exit_code(&s.result);
	if (o.script_only && ret == EXIT_OK)
		fwrite(s.script.buf, 1, s.script.len, stdout);
	else if (o.compile_only && ret == EXIT_OK)
		collect_say_module(&s);
	collect_output_say_written(&s.result, o.quiet);
	collect_output_rescued(&s.result, &sb);
	fputs(strbuf_str(&sb), stderr);
	strbuf_release(&sb);
	session_release(&s);
out_opts:
	collect_opts_release(&o);
	return ret;
}
