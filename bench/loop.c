/* Benchmark target: calls f() N times, each spinning SPIN ns (default 0),
 * and prints how long the loop took, so tracing overhead is measured inside
 * the traced process itself.  With a third argument "rec" it calls g()
 * instead: the same, but g can recurse (it never does here), so perun's
 * loader probes its return instructions rather than giving it a uretprobe.  */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long spin_ns;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

__attribute__((noinline)) int f(int x)
{
	if (spin_ns) {
		long long end = now_ns() + spin_ns;
		while (now_ns() < end)
			;
	}
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int g(int x, int depth)
{
	if (depth > 0)
		return g(x, depth - 1) + 1;
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, i;
	struct timespec t0, t1;
	int s = 0, rec = argc > 3 && argv[3][0] == 'r';

	spin_ns = argc > 2 ? atol(argv[2]) : 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rec)
		for (i = 0; i < n; i++)
			s += g((int)i, 0);
	else
		for (i = 0; i < n; i++)
			s += f((int)i);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("loop_ns %lld calls %ld sum %d\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec), n, s);
	return 0;
}
