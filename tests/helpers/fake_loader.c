// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake_loader.c - a stand-in "dynamic loader" for the secure-exec tests.
 *
 * Built as a static PIE without libc, it can serve as any program's ELF
 * interpreter (PT_INTERP): if the kernel ever loads it, it says so with the
 * effective uid it runs as ("FAKE-LOADER euid=N") and exits 42 instead of
 * running the program.  A setuid program whose loader path crosses a
 * variant link must never get this one from a user's environment: run as
 * root, it would print euid=0.
 *
 * Built with -DTRY_SHADOW (fake-loader-shadow), it also says whether it may
 * read /etc/shadow (" shadow=yes" or " shadow=no"): inside a user namespace
 * its euid is the namespace's view, and only that tells privilege over the
 * machine.
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
	static const char prefix[] = "FAKE-LOADER euid=";
	char msg[sizeof(prefix) + 40], digits[24];
	unsigned long euid = (unsigned long)sys3(107, 0, 0, 0);	/* geteuid */
	int n = 0, len = 0;

	do {
		digits[n++] = (char)('0' + euid % 10);
		euid /= 10;
	} while (euid);
	for (; prefix[len]; len++)
		msg[len] = prefix[len];
	while (n)
		msg[len++] = digits[--n];
#ifdef TRY_SHADOW
	{
		static const char yes[] = " shadow=yes", no[] = " shadow=no";
		long fd = sys3(2, (long)"/etc/shadow", 0, 0);	/* open */
		const char *say = fd >= 0 ? yes : no;

		for (n = 0; say[n]; n++)
			msg[len++] = say[n];
	}
#endif
	msg[len++] = '\n';
	sys3(1, 1, (long)msg, len);			/* write */
	sys3(231, 42, 0, 0);				/* exit_group */
	for (;;)
		;
}
