// SPDX-License-Identifier: GPL-2.0-only
/*
 * vs32 - a 32-bit caller for the setuid matrix (tests/conformance/
 * test_abi_matrix.py), without libc: this machine has no gcc-multilib.
 *
 * One source, two programs:
 *   gcc -m32  -nostdlib -static -ffreestanding  -> build/vs32-i386
 *             (an i386 process: system calls through int $0x80)
 *   gcc -mx32 -nostdlib -static -ffreestanding  -> build/vs32-x32
 *             (an x32 process: syscall with bit 30 set; Debian's kernels
 *             have x32 compiled in but off unless booted syscall.x32=y)
 *   arm-linux-gnueabihf-gcc -marm -nostdlib -static ...
 *                                               -> build/arm64/vs32-arm
 *             (an AArch32 process on arm64: svc 0 with the number in r7,
 *             where the kernel has CONFIG_COMPAT and the CPU runs AArch32
 *             at EL0)
 *
 *   vs32 hello                   "ok i386", "ok x32" or "ok arm": this ABI
 *                                runs here.
 *                                An x32 process whose x32 system calls are
 *                                refused exits 99 through the 64-bit ABI.
 *   vs32 readlink PATH           readlink(2): "ok TARGET" or "err ERRNO"
 *   vs32 exec [ENV...] -- PATH [ARG...]
 *                                execve(PATH, {PATH, ARG...}, {ENV...}), the
 *                                32-bit execve of this ABI; "err ERRNO" if
 *                                it returns
 *
 * Whatever this process's own environment is stays its exec-time
 * environment: the caller sets it.
 */
#if defined(__i386__)
#define ABI "i386"
#define NR_WRITE 4
#define NR_EXIT_GROUP 252
#define NR_EXECVE 11
#define NR_READLINK 85

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile ("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b),
			  "d"(c) : "memory");
	return ret;
}

__asm__(".text\n.globl _start\n_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %esp, %eax\n"
	"	and $-16, %esp\n"
	"	sub $12, %esp\n"
	"	push %eax\n"
	"	call start_c\n"
	"	hlt\n");
#elif defined(__x86_64__) && defined(__ILP32__)
#define ABI "x32"
#define X32 0x40000000
#define NR_WRITE (X32 | 1)
#define NR_EXIT_GROUP (X32 | 231)
#define NR_EXECVE (X32 | 520)		/* x32's own execve */
#define NR_READLINK (X32 | 89)
#define NR_EXIT_GROUP_64 231

static long sys3(long nr, long a, long b, long c)
{
	long long ret;

	__asm__ volatile ("syscall" : "=a"(ret) : "a"((long long)nr),
			  "D"((long long)(unsigned long)a),
			  "S"((long long)(unsigned long)b),
			  "d"((long long)(unsigned long)c) : "rcx", "r11", "memory");
	return (long)ret;
}

__asm__(".text\n.globl _start\n_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call start_c\n"
	"	hlt\n");
#elif defined(__arm__)
#define ABI "arm"
#define NR_WRITE 4
#define NR_EXIT_GROUP 248
#define NR_EXECVE 11
#define NR_READLINK 85

/* EABI: number in r7 (so -marm: Thumb code keeps its frame pointer there) */
static long sys3(long nr, long a, long b, long c)
{
	register long r7 __asm__("r7") = nr;
	register long r0 __asm__("r0") = a;
	register long r1 __asm__("r1") = b;
	register long r2 __asm__("r2") = c;

	__asm__ volatile ("svc 0" : "+r"(r0) : "r"(r7), "r"(r1), "r"(r2) :
			  "memory");
	return r0;
}

__asm__(".text\n.globl _start\n_start:\n"
	"	mov fp, #0\n"
	"	mov r0, sp\n"
	"	bic sp, sp, #15\n"
	"	bl start_c\n"
	"	udf #0\n");
#else
#error "vs32 is built with -m32, -mx32 or for 32-bit Arm"
#endif

static unsigned long length(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static int same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static long put(const char *s)
{
	return sys3(NR_WRITE, 1, (long)s, (long)length(s));
}

static void quit(int status)
{
	sys3(NR_EXIT_GROUP, status, 0, 0);
#ifdef NR_EXIT_GROUP_64
	sys3(NR_EXIT_GROUP_64, status, 0, 0);
#endif
	for (;;)
		;
}

static const struct {
	int nr;
	const char *name;
} names[] = {
	{ 1, "EPERM" }, { 2, "ENOENT" }, { 5, "EIO" }, { 7, "E2BIG" },
	{ 8, "ENOEXEC" }, { 11, "EAGAIN" }, { 12, "ENOMEM" }, { 13, "EACCES" },
	{ 14, "EFAULT" }, { 20, "ENOTDIR" }, { 22, "EINVAL" },
	{ 36, "ENAMETOOLONG" }, { 38, "ENOSYS" }, { 40, "ELOOP" },
	{ 107, "ENOTCONN" },
};

static int report_error(long err)
{
	char num[16];
	int i, n = 0;
	unsigned long e = (unsigned long)-err;

	for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++) {
		if (names[i].nr == (int)e) {
			put("err ");
			put(names[i].name);
			put("\n");
			return 1;
		}
	}
	num[15] = '\0';
	n = 15;
	do {
		num[--n] = (char)('0' + e % 10);
		e /= 10;
	} while (e && n > 0);
	put("err ");
	put(num + n);
	put("\n");
	return 1;
}

static int cmd_readlink(const char *path)
{
	static char buf[4097];
	long n = sys3(NR_READLINK, (long)path, (long)buf, sizeof(buf) - 1);

	if (n < 0)
		return report_error(n);
	buf[n] = '\0';
	put("ok ");
	put(buf);
	put("\n");
	return 0;
}

/* argv[0..argc): ENV... -- PATH ARG...; pointers are this ABI's (32-bit) */
static int cmd_exec(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!same(argv[i], "--"))
			continue;
		argv[i] = 0;		/* ends the environment */
		if (i + 1 == argc)
			break;
		return report_error(sys3(NR_EXECVE, (long)argv[i + 1],
					 (long)(argv + i + 1), (long)argv));
	}
	put("usage: vs32 exec [ENV...] -- PATH [ARG...]\n");
	return 2;
}

void start_c(unsigned int *sp);

void start_c(unsigned int *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	const char *cmd = argc > 1 ? argv[1] : "";

	if (same(cmd, "hello")) {
		/* an x32 process whose x32 calls fail says so with status 99 */
		if (put("ok " ABI "\n") < 0)
			quit(99);
		quit(0);
	}
	if (same(cmd, "readlink") && argc == 3)
		quit(cmd_readlink(argv[2]));
	if (same(cmd, "exec"))
		quit(cmd_exec(argc - 2, argv + 2));
	put("usage: vs32 hello | readlink PATH | exec [ENV...] -- PATH [ARG...]\n");
	quit(2);
}
