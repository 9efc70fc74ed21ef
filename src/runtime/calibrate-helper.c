/* SPDX-License-Identifier: GPL-3.0-or-later */
/* perun-calib CALLS REPORT: calls an empty function CALLS times, and an
 * identical untraced twin as often, in turn, times each call, and writes the
 * median call time of each to REPORT (untraced_ns includes a clock read).
 * perun traces perun_calib_empty, so the difference is what one recorded
 * call costs; and perun_calib_stepped, called CALLS / 10 times, whose first
 * instruction the kernel steps out of line; and perun_calib_deep, the same
 * as perun_calib_empty but recursive, with its twin, timed as those are
 * (traced_deep_ns, untraced_deep_ns).  Built without sanitizers and
 * with -fno-ipa-icf: the functions must stay apart.  */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* O0: both begin with push %rbp, as most functions begin with a push; the
 * kernel emulates a probed push, while a probe on a lone ret or a sub is
 * stepped out of line, which costs several times more here.  */
__attribute__((noinline, used, optimize("O0"))) void perun_calib_empty(void);
__attribute__((noinline, used, optimize("O0"))) void perun_calib_twin(void);

void perun_calib_empty(void)
{
	__asm__ volatile("" ::: "memory");
}

void perun_calib_twin(void)
{
	__asm__ volatile("nop" ::: "memory");
}

/* Recursive (a cycle of the call graph), so that perun's loader times its
 * returns on its return instructions, each stepped out of line, not with a
 * uretprobe (collect/returns.c); called with 0, it is as empty as
 * perun_calib_empty, and its twin is the same code untraced.  */
__attribute__((noinline, used, optimize("O0"))) void perun_calib_deep(int n);
__attribute__((noinline, used, optimize("O0"))) void perun_calib_deep_twin(int n);

void perun_calib_deep(int n)
{
	if (n > 0)
		perun_calib_deep(n - 1);
}

void perun_calib_deep_twin(int n)
{
	if (n > 0)
		perun_calib_deep_twin(n - 1);
}

/* Begins with sub $N,%rsp (a local array, a call): what functions that need
 * stack space but save no register begin with.  */
__attribute__((noinline, used, optimize("omit-frame-pointer"))) void perun_calib_stepped(void);
void perun_calib_stepped(void)
{
	volatile char buf[32];

	buf[0] = 0;
	perun_calib_twin();
	buf[1] = buf[0];
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Calls come about a microsecond apart, as in code that does some work
 * between them: back to back, each probe hit also waits for the last one's
 * work in the kernel, and an empty call then shows more than a real one.  */
static void gap(void)
{
	double t0 = now_ns();

	while (now_ns() - t0 < 1000)
		;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	double *twin, *empty, *dtwin, *deep, t0;
	long n, i;
	FILE *f;

	if (argc != 3 || (n = atol(argv[1])) < 10) {
		fprintf(stderr, "usage: perun-calib CALLS REPORT\n");
		return 2;
	}
	twin = malloc((size_t)n * sizeof(*twin));
	empty = malloc((size_t)n * sizeof(*empty));
	dtwin = malloc((size_t)n * sizeof(*dtwin));
	deep = malloc((size_t)n * sizeof(*deep));
	if (!twin || !empty || !dtwin || !deep)
		return 1;
	/* each call timed on its own, twin and traced in turn: the medians shrug
	 * off preemption, and the clock's own cost is in both */
	for (i = 0; i < n; i++) {
		gap();
		t0 = now_ns();
		perun_calib_twin();
		twin[i] = now_ns() - t0;
		gap();
		t0 = now_ns();
		perun_calib_empty();
		empty[i] = now_ns() - t0;
		gap();
		t0 = now_ns();
		perun_calib_deep_twin(0);
		dtwin[i] = now_ns() - t0;
		gap();
		t0 = now_ns();
		perun_calib_deep(0);
		deep[i] = now_ns() - t0;
	}
	for (i = 0; i < n / 10; i++) {
		gap();
		perun_calib_stepped();
	}
	qsort(twin, (size_t)n, sizeof(double), cmp);
	qsort(empty, (size_t)n, sizeof(double), cmp);
	qsort(dtwin, (size_t)n, sizeof(double), cmp);
	qsort(deep, (size_t)n, sizeof(double), cmp);
	f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	fprintf(f, "calls %ld\nuntraced_ns %.3f\ntraced_ns %.3f\nuntraced_deep_ns %.3f\n"
		   "traced_deep_ns %.3f\n",
		n, twin[n / 2], empty[n / 2], dtwin[n / 2], deep[n / 2]);
	free(twin);
	free(empty);
	free(dtwin);
	free(deep);
	return fclose(f) ? 1 : 0;
}
