/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun fsck [--repair]: checks every object and index of .perun and, with
 * --repair, repairs the store (store/fsck.h); prints what it found.  */
#include "config.h"

#define PR_FMT "perun fsck"

#include <stdio.h>

#include "cmd/cmd.h"
#include "store/fsck.h"
#include "store/repo.h"
#include "util/log.h"
#include "util/parse-options.h"

static const char usage[] =
	"usage: perun fsck [--repair]\n\n"
	"Checks every object in .perun/objects (zlib data, 'profile TYPE LENGTH' header,\n"
	"SHA-1 name) and every minor-version index (checksum, entries naming existing,\n"
	"valid objects), and says what is wrong.  --repair moves damaged files to\n"
	".perun/damaged/ and rebuilds each damaged or lost index from what it still\n"
	"holds and from the objects recorded for its minor version.  Nothing is deleted.\n"
	"Exit status: 0 when the store is sound (or was repaired), 1 when problems remain.\n";

static void print_lines(const struct fsck_line *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%s\n", l[i].text);
}

int cmd_fsck(int argc, char **argv, struct ctx *ctx)
{
	struct fsck_result res;
	struct repo r;
	int repair = 0, ret = EXIT_FAIL, n;
	struct popt opts[] = {
		OPT_BOOL(0, "repair", &repair,
			 "move damaged files to .perun/damaged/, rebuild the indexes"),
		OPT_END(),
	};

	(void)ctx;
	n = parse_options(argc, argv, "fsck", usage, opts);
	if (n < 0)
		return POPT_EXIT(n);
	if (n) {
		fprintf(stderr, "perun fsck: unknown argument '%s'\n%s", argv[0], usage);
		return EXIT_USAGE;
	}
	if (repo_find(&r) < 0)
		return EXIT_FAIL;
	/* a repair rewrites indexes from what the check saw: no add in between */
	if (repair && repo_lock(&r) < 0) {
		repo_release(&r);
		return EXIT_FAIL;
	}
	store_fsck(r.dir, repair, &res);
	print_lines(res.found, res.nfound);
	if (!res.checked)
		goto out;
	printf("checked %zu object%s and %zu index%s in %s\n", res.objects,
	       res.objects == 1 ? "" : "s", res.indexes, res.indexes == 1 ? "" : "es", r.dir);
	if (!res.problems) {
		printf("no problems found\n");
		ret = EXIT_OK;
	} else if (!repair) {
		printf("%zu problem%s: 'perun fsck --repair' moves damaged files to %s/damaged and "
		       "rebuilds the indexes (nothing is deleted)\n",
		       res.problems, res.problems == 1 ? "" : "s", r.dir);
	} else {
		print_lines(res.repairs, res.nrepairs);
		if (res.repaired) {
			printf("repaired: run 'perun fsck' again to check\n");
			ret = EXIT_OK;
		}
	}
out:
	fsck_result_release(&res);
	repo_release(&r);
	return ret;
}
