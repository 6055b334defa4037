// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake_loader.c - a stand-in "dynamic loader" for the secure-exec tests.
 *
 * Built as a static PIE without libc, it can serve as any program's ELF
 * interpreter (PT_INTERP): if the kernel ever loads it, it says so and
 * exits 42 instead of running the program.  A setuid program whose loader
 * path crosses a variant link must never get this one from a user's
 * environment.
 */
static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile ("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b),
			  "d"(c) : "rcx", "r11", "memory");
	return ret;
}

void _start(void);

void _start(void)
{
	static const char msg[] = "FAKE-LOADER\n";

	sys3(1, 1, (long)msg, sizeof(msg) - 1);		/* write */
	sys3(231, 42, 0, 0);				/* exit_group */
	for (;;)
		;
}
