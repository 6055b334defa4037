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
#if defined(__x86_64__)
#define NR_WRITE 1
#define NR_OPENAT 257
#define NR_GETEUID 107
#define NR_EXIT_GROUP 231

static long sys4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile ("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b),
			  "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define NR_WRITE 64
#define NR_OPENAT 56
#define NR_GETEUID 175
#define NR_EXIT_GROUP 94

static long sys4(long nr, long a, long b, long c, long d)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;

	__asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2),
			  "r"(x3) : "memory");
	return x0;
}
#else
#error "fake_loader knows the system calls of x86-64 and arm64"
#endif
#define AT_FDCWD (-100)

void _start(void);

void _start(void)
{
	static const char prefix[] = "FAKE-LOADER euid=";
	char msg[sizeof(prefix) + 40], digits[24];
	unsigned long euid = (unsigned long)sys4(NR_GETEUID, 0, 0, 0, 0);
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
		long fd = sys4(NR_OPENAT, AT_FDCWD,
			       (long)"/etc/shadow", 0, 0);
		const char *say = fd >= 0 ? yes : no;

		for (n = 0; say[n]; n++)
			msg[len++] = say[n];
	}
#endif
	msg[len++] = '\n';
	sys4(NR_WRITE, 1, (long)msg, len, 0);
	sys4(NR_EXIT_GROUP, 42, 0, 0, 0);
	for (;;)
		;
}
