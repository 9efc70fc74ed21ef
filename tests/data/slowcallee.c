/* tests/t7020, t7021, t7022: main calls slowpart and steady 100 times
 * each, both call spin; SLOW (a commit sets it to 3) makes the spin under
 * slowpart that many times longer.  spin runs ~100 us, well above what a
 * uprobe pair costs on slow machines (~16 us), so its time measures its
 * loop.  OTHERS adds tick and tock, which main calls as often and which
 * call spin too: four contexts of spin for check's in-run control where a
 * run has no calibration (the callers' self times are then their probes'
 * cost, and stay out).  One loop for all: a sibling hyperthread's load
 * slowed a copy of spin's loop at another address 16 % more than spin.
 * The loop keeps its sum in a register: summed into a volatile on the
 * stack, one of two identical functions ran 2x slower in some runs, by
 * where ASLR put the stack.  */
#include <stdio.h>
#ifndef SLOW
#define SLOW 1
#endif
__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++) {
		x += i;
		__asm__ volatile("" : "+r"(x)); /* in a register, not summed up */
	}
	return x;
}
__attribute__((noinline)) unsigned long slowpart(void) { return spin(SLOW * 400000); }
__attribute__((noinline)) unsigned long steady(void) { return spin(400000); }
#ifdef OTHERS
__attribute__((noinline)) unsigned long tick(void) { return spin(400000); }
__attribute__((noinline)) unsigned long tock(void) { return spin(400000); }
#endif
int main(void)
{
	unsigned long s = 0;
	for (int i = 0; i < 100; i++) {
		s += slowpart();
		s += steady();
#ifdef OTHERS
		s += tick();
		s += tock();
#endif
	}
	printf("%lu\n", s & 1);
	return 0;
}
