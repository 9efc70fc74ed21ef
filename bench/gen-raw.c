/* Writes a raw stream of N events in perun's format (tapsets/perun.stp):
 * 4 threads, nested calls three deep over 200 probes, 32-bit timestamps
 * that wrap, a tick each simulated second.  Also writes the matching plan.  */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i = 0;
	const char *plan = argc > 2 ? argv[2] : "bench.plan";
	unsigned long long t = 0xfff00000ull, next_tick = t + 1000000000ull;
	FILE *f = fopen(plan, "w");
	int p;

	if (!f)
		return 1;
	fprintf(f, "perun-plan 2\t200\n");
	for (p = 0; p < 200; p++)
		fprintf(f, "%d\tfunc\t1\t%x\t0\t0\t0\t0\t/bench/bin\tbench_function_%d\t\t\t\t\n", p, 0x1000 + p * 16, p);
	fclose(f);
	printf("s 3e8 0 %llx\nr\n", t);
	while (i < n) {
		int tid = (int)(i / 6) % 4, a = (int)(i % 197), b = (a + 1) % 200, c = (a + 2) % 200;
		int seq[6][2] = { { a, 0 }, { b, 0 }, { c, 0 }, { c, 1 }, { b, 1 }, { a, 1 } };
		int k;
		for (k = 0; k < 6 && i < n; k++, i++) {
			t += 700 + (unsigned long long)(i % 13) * 50;
			printf("%x %x %llx\n", seq[k][0] * 2 + seq[k][1], tid, t & 0xffffffffull);
		}
		if (t >= next_tick) {
			printf("k %llx\n", t & 0xffffffffull);
			next_tick += 1000000000ull;
		}
	}
	printf("q\n");
	return 0;
}
