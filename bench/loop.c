/* Benchmark target: calls f() N times and prints how long the loop took,
 * so tracing overhead is measured inside the traced process itself.  */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) int f(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, i;
	struct timespec t0, t1;
	int s = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		s += f((int)i);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("loop_ns %lld calls %ld sum %d\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec), n, s);
	return 0;
}
