/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun doctor [--json] [BINARY...]: can this machine trace, and where do
 * the functions of each BINARY come from?  Runs doctor_run()
 * (runtime/doctor.h) and prints its checks; every failed check names the
 * command that fixes it.  Exit 0 only when a collect can work.  */
#include "config.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "runtime/doctor.h"
#include "util/log.h"
#include "util/parse-options.h"

/* Most BINARY arguments doctor takes.  */
#define MAX_BINARIES 16

static void print_json(const struct doctor_report *rep)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t k;

	for (k = 0; k < rep->n; k++) {
		const struct doctor_check *ck = &rep->checks[k];
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "check", json_object_new_string(ck->name));
		json_object_object_add(c, "ok", json_object_new_boolean(ck->ok));
		json_object_object_add(c, "required", json_object_new_boolean(ck->required));
		json_object_object_add(c, "detail", json_object_new_string(ck->detail));
		if (ck->fix)
			json_object_object_add(c, "fix", json_object_new_string(ck->fix));
		json_object_array_add(a, c);
	}
	json_object_object_add(o, "checks", a);
	json_object_object_add(o, "can_trace", json_object_new_boolean(rep->can_trace));
	json_object_object_add(o, "runtime", json_object_new_string(rep->runtime));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void print_text(const struct doctor_report *rep)
{
	size_t k;

	for (k = 0; k < rep->n; k++) {
		const struct doctor_check *ck = &rep->checks[k];
		printf("%-4s %-18s %s\n", ck->ok ? "ok" : ck->required ? "FAIL" : "warn", ck->name,
		       ck->detail);
		if (ck->fix)
			printf("     %-18s fix: %s\n", "", ck->fix);
	}
	printf("%s\n", !rep->can_trace ? "perun cannot trace here yet: apply the fixes above"
		       : !strcmp(rep->runtime, "kernel") ? "perun can trace here (kernel runtime)"
							 : "perun can trace here (bpf runtime)");
}

int cmd_doctor(int argc, char **argv, struct ctx *ctx)
{
	static const char usage[] =
		"usage: perun doctor [--json] [BINARY...]\n\nChecks stap, stapbpf/staprun, the "
		"kernel build tree, debugfs/tracefs, uprobes, BPF, the\nmemlock and open-file "
		"limits; prints what is missing and the command that fixes it.\nFor each BINARY, "
		"where its functions come from (.symtab, separate debuginfo, only\nits exports) "
		"and the debug symbol package to install when they are not all known.\n"
		"Exit 0 only when 'perun collect' can trace on this machine.\n";
	struct doctor_report rep;
	int json = 0, n, ret;
	struct popt opts[] = {
		OPT_BOOL(0, "json", &json, "print the checks as one JSON object"),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "doctor", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n > MAX_BINARIES) {
		fprintf(stderr, "perun doctor: more than %d binaries: ask about fewer at once\n",
			MAX_BINARIES);
		return EXIT_USAGE;
	}
	doctor_run(&rep, (const char *const *)argv, (size_t)n);
	if (json)
		print_json(&rep);
	else
		print_text(&rep);
	ret = rep.can_trace ? EXIT_OK : EXIT_FAIL;
	doctor_report_release(&rep);
	return ret;
}
