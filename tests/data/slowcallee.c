/* tests/t7020, t7021: main calls slowpart and steady 100 times each, both
 * call spin; SLOW (a commit sets it to 3) makes the spin under slowpart
 * that many times longer.  spin runs ~100 us, well above what a uprobe
 * pair costs on slow machines (~16 us), so its time measures its loop.  */
#include <stdio.h>
#ifndef SLOW
#define SLOW 1
#endif
__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x += i;
	return x;
}
__attribute__((noinline)) unsigned long slowpart(void) { return spin(SLOW * 400000); }
__attribute__((noinline)) unsigned long steady(void) { return spin(400000); }
int main(void)
{
	unsigned long s = 0;
	for (int i = 0; i < 100; i++) {
		s += slowpart();
		s += steady();
	}
	printf("%lu\n", s & 1);
	return 0;
}
