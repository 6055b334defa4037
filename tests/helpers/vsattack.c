// SPDX-License-Identifier: GPL-2.0-only
/*
 * vsattack - the attacker's side of tests/conformance/test_abi_matrix.py
 * and test_bounded.py: each command sets up one attack and reports, one
 * line each, what it did and what came back, so that the test can check
 * the attack was really in place before it judges the answer.
 *
 *   vsattack exe [ANY...]        print "exe " and /proc/self/exe: which
 *                                file the kernel really ran (a script's
 *                                text would be read again by path)
 *   vsattack exec MODE [ENV...] -- PATH [ARG...]
 *                                execute PATH with argv {PATH, ARG...} and
 *                                envp {ENV...}; MODE is
 *                                  execve
 *                                  execveat-dirfd=DIR  (PATH relative to DIR)
 *                                  execveat-empty      (open(PATH, O_PATH),
 *                                                       then AT_EMPTY_PATH)
 *                                  int80               (the ia32 execve, from
 *                                                       this 64-bit process;
 *                                                       every byte below 4 GiB)
 *                                "err ERRNO" if it returns; with
 *                                VSATTACK_PRIME=LINK in its own environment,
 *                                it first readlink(2)s LINK twice, so that
 *                                an answer for this thread is kept.  MODE
 *                                may end in modifiers, each done just
 *                                before the exec:
 *                                  ,uring      an io_uring read of an empty
 *                                              pipe left in flight across
 *                                              the exec ("uring in flight")
 *                                  ,low-stack  start_stack moved below
 *                                              4 GiB with PR_SET_MM_MAP
 *                                              ("stack ADDR")
 *   vsattack as-pid PID MODE [ENV...] -- PATH [ARG...]
 *                                fork until a child gets PID (children with
 *                                another pid exit at once); that child says
 *                                "got PID after N forks", waits for a line
 *                                on standard input, then does `exec MODE
 *                                ...`; "err EAGAIN" after 200000 forks
 *   vsattack thread-execs N LINK a thread that is not the leader readlink(2)s
 *                                LINK, then execs this program again, which
 *                                does the same, N times in all: each exec
 *                                gives a tid up ("tid TID" for the first,
 *                                "left K" every 4096, "done N" at the end,
 *                                "err ERRNO" if a readlink or exec fails)
 *   vsattack hold-failed-execs N PATH [ENV...]
 *                                N threads (small stacks) each execve(PATH)
 *                                once with envp {ENV...}, which must fail;
 *                                then they all wait:
 *                                "held N failed execs: ERRNO", then nothing
 *                                until end-of-file on standard input
 *   vsattack pids-past N         fork children that exit at once until one
 *                                gets a pid above N ("pid PID after K forks")
 *   vsattack tid-handoff FILE PATH
 *                                a second thread opens FILE (O_CLOEXEC) and
 *                                execve(PATH) with an empty envp: the exec
 *                                gives up that thread's tid for its
 *                                leader's, then closes FILE ("thread TID
 *                                leader PID" before the exec)
 *   vsattack int80-probe         "ok" if int $0x80 works here (else dies)
 *   vsattack after-line CMD...   print "waiting", wait for a line on
 *                                standard input, then do `vsattack CMD...`
 *   vsattack timed-readlink PATH readlink(2): "ok TARGET SECONDS" or
 *                                "err ERRNO SECONDS"
 *   vsattack envp-stall PATH FILE SWAP_MS [PAGE]
 *                                execve(PATH) with one envp string inside a
 *                                shared mapping of FILE's page PAGE (default
 *                                0, read alone; never touched by us); SWAP_MS > 0: the string is ordinary
 *                                memory at first and a thread maps FILE over
 *                                it SWAP_MS later, for kernels that copy
 *                                envp before they walk PATH (before 6.8)
 *   vsattack envp-huge PATH COUNT LEN SWAP_MS
 *                                execve(PATH) with COUNT envp strings of LEN
 *                                bytes (all one buffer); SWAP_MS > 0: the
 *                                array holds one small string at first and a
 *                                thread fills it SWAP_MS later
 *   vsattack env-area zero MIB PATH
 *   vsattack env-area file FILE PATH [PAGE]
 *   vsattack env-area fd FD PATH [PAGE]
 *                                prctl(PR_SET_MM, PR_SET_MM_MAP) with every
 *                                current value but the environment, which
 *                                becomes MIB MiB of untouched anonymous
 *                                memory (MAP_NORESERVE), or one page of a
 *                                shared mapping of FILE or of the open
 *                                descriptor FD (its page PAGE, default 0,
 *                                read alone: MADV_RANDOM); then readlink(PATH) as
 *                                timed-readlink does
 *   vsattack storm N PATH        N children each execve(PATH); a child
 *                                whose execve fails prints "fail PID ERRNO";
 *                                then the parent reaps them forever
 *   vsattack walk THREADS MS PATH...
 *                                THREADS threads readlink(2) each PATH in
 *                                turn for MS ms; then one line per PATH and
 *                                answer: "walked PATH ANSWER COUNT"
 *   vsattack lstat-size PATH [dont-sync]
 *                                statx(AT_SYMLINK_NOFOLLOW[|AT_STATX_DONT_SYNC]):
 *                                "ok ST_SIZE"
 *   vsattack lstat-size-loop N PATH EXPECTED [dont-sync]
 *                                N of those: "ok N" or "wrong K of N: SIZE..."
 *
 * The envp-*, env-area commands start a janitor first: a process sharing
 * this one's memory (clone(CLONE_VM), not a thread, so a SIGKILL to this
 * process does not kill it) that waits for end-of-file on standard input
 * and then unmaps the attack's memory.  Whatever reads that memory (the
 * daemon, or this process in the kernel) then stops at once: the test's
 * way to end an attack that the product would otherwise let run for
 * minutes or hours.  They print "janitor PID" first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/io_uring.h>
#include <linux/prctl.h>

#include "errno_name.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int report_error(int e)
{
	printf("err %s\n", errno_name(e));
	return 1;
}

static int stat_fields(unsigned long long *f, int max);

static int usage(void)
{
	fprintf(stderr, "usage: see the comment at the top of vsattack.c\n");
	return 2;
}

/* ---- the janitor ------------------------------------------------------ */

static void *janitor_area;
static size_t janitor_len;

static int janitor_main(void *arg)
{
	char c;

	(void)arg;
	while (syscall(SYS_read, 0, &c, 1) > 0)
		;
	syscall(SYS_munmap, janitor_area, janitor_len);
	syscall(SYS_exit, 0);
	return 0;
}

static pid_t janitor_pid;

/* The area must be set before: the janitor shares our memory. */
static int start_janitor(void *area, size_t len)
{
	size_t size = 64 * 1024;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (stack == MAP_FAILED)
		return -1;
	janitor_area = area;
	janitor_len = len;
	janitor_pid = clone(janitor_main, stack + size, CLONE_VM | SIGCHLD,
			    NULL);
	if (janitor_pid < 0)
		return -1;
	printf("janitor %d\n", (int)janitor_pid);
	return 0;
}

/* ---- exec, every way -------------------------------------------------- */

static int cmd_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n < 0)
		return report_error(errno);
	buf[n] = '\0';
	printf("exe %s\n", buf);
	return 0;
}

#if defined(__x86_64__)
#define HIGH_JUNK (long)0x7a5f000000000000UL

/* execve through int $0x80 from this 64-bit process: ia32 numbers and
 * 32-bit pointers, so everything is copied below 4 GiB (MAP_32BIT). */
static int exec_int80(const char *path, char **argv, char **envp)
{
	size_t na = 0, ne = 0, bytes = strlen(path) + 1, i;
	uint32_t *arr;
	char *mem, *p;
	long ret;

	for (; argv[na]; na++)
		bytes += strlen(argv[na]) + 1;
	for (; envp[ne]; ne++)
		bytes += strlen(envp[ne]) + 1;
	bytes += (na + ne + 2) * sizeof(uint32_t);
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (mem == MAP_FAILED)
		return report_error(errno);
	if ((uintptr_t)mem + bytes > 0xffffffffUL)
		return report_error(ERANGE);
	arr = (uint32_t *)mem;
	p = mem + (na + ne + 2) * sizeof(uint32_t);
	for (i = 0; i < na; i++) {
		arr[i] = (uint32_t)(uintptr_t)strcpy(p, argv[i]);
		p += strlen(p) + 1;
	}
	arr[na] = 0;
	for (i = 0; i < ne; i++) {
		arr[na + 1 + i] = (uint32_t)(uintptr_t)strcpy(p, envp[i]);
		p += strlen(p) + 1;
	}
	arr[na + 1 + ne] = 0;
	strcpy(p, path);
	/* the upper halves are not the pointers' (compat execve reads 32
	 * bits): whoever reads the arguments must truncate them too */
	__asm__ volatile ("int $0x80" : "=a"(ret) : "a"(11L),
			  "b"((long)(uintptr_t)p | HIGH_JUNK),
			  "c"((long)(uintptr_t)arr | HIGH_JUNK),
			  "d"((long)(uintptr_t)(arr + na + 1) | HIGH_JUNK)
			  : "memory");
	return report_error((int)-ret);
}
#else
/* no int $0x80 outside x86: the 32-bit callers there are programs of
 * their own (vs32-arm) */
static int exec_int80(const char *path, char **argv, char **envp)
{
	return report_error(ENOSYS);
}
#endif

/*
 * An io_uring read of an empty pipe, left in flight: an exec then runs the
 * task's pending task work early, in io_uring_task_cancel(), from inside
 * begin_new_exec() (docs/SECURITY.md, round 4).  Raw system calls: no
 * liburing.
 */
static int leave_uring_in_flight(void)
{
	static char byte;
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqe;
	unsigned int *tail, *mask, *array;
	int ring, pipefd[2];
	char *sq;

	if (pipe(pipefd))
		return -1;
	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return -1;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
		  IORING_OFF_SQ_RING);
	sqe = mmap(NULL, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqe == MAP_FAILED)
		return -1;
	tail = (unsigned int *)(sq + p.sq_off.tail);
	mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	array = (unsigned int *)(sq + p.sq_off.array);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = pipefd[0];
	sqe->addr = (unsigned long)&byte;
	sqe->len = 1;
	array[*tail & *mask] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, ring, 1, 0, 0, NULL, 0) != 1)
		return -1;
	printf("uring in flight\n");
	return 0;
}

static int set_mm_map(unsigned long env_start, unsigned long env_end,
		      unsigned long start_stack);

/*
 * start_stack below 4 GiB, which any process may set (PR_SET_MM_MAP): it
 * says nothing of the ABI, and nothing may take it for a 32-bit program.
 */
static int move_stack_low(void)
{
	unsigned long long f[64] = { 0 };
	void *low = mmap((void *)0x10000000UL, 65536, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);

	if (low == MAP_FAILED || stat_fields(f, 51))
		return -1;
	if (set_mm_map(f[50], f[51], (unsigned long)low + 32768))
		return -1;
	printf("stack %#lx\n", (unsigned long)low + 32768);
	return 0;
}

/* "MODE,MOD,...": the modifiers done, MODE cut to its name; or -1. */
static int exec_modifiers(char *mode)
{
	char *mod = strchr(mode, ','), *next;

	if (mod)
		*mod++ = '\0';
	for (; mod; mod = next) {
		next = strchr(mod, ',');
		if (next)
			*next++ = '\0';
		if (!strcmp(mod, "uring") ? leave_uring_in_flight() :
		    !strcmp(mod, "low-stack") ? move_stack_low() :
		    (errno = EINVAL, -1))
			return -1;
	}
	return 0;
}

static int cmd_exec(char *mode, int argc, char **argv)
{
	char **envp = argv, **args, *path, *prime, target[PATH_MAX];
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--"); i++)
		;
	if (i + 1 >= argc)
		return usage();
	argv[i] = NULL;			/* ends the environment */
	args = argv + i + 1;
	path = args[0];
	prime = getenv("VSATTACK_PRIME");
	for (i = 0; prime && i < 2; i++)
		if (readlink(prime, target, sizeof(target)) < 0)
			return report_error(errno);
	if (exec_modifiers(mode))
		return report_error(errno);
	if (!strcmp(mode, "execve")) {
		execve(path, args, envp);
	} else if (!strncmp(mode, "execveat-dirfd=", 15)) {
		int dirfd = open(mode + 15, O_PATH | O_DIRECTORY);

		if (dirfd < 0)
			return report_error(errno);
		syscall(SYS_execveat, dirfd, path, args, envp, 0);
	} else if (!strcmp(mode, "execveat-empty")) {
		/* not O_CLOEXEC: a script run so is read through /dev/fd/N */
		int fd = open(path, O_PATH);

		if (fd < 0)
			return report_error(errno);
		syscall(SYS_execveat, fd, "", args, envp, AT_EMPTY_PATH);
	} else if (!strcmp(mode, "int80")) {
		return exec_int80(path, args, envp);
	} else {
		return usage();
	}
	return report_error(errno);
}

static int cmd_int80_probe(void)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile ("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
	if (ret != getpid())
		return report_error(ret < 0 ? (int)-ret : EINVAL);
	printf("ok\n");
	return 0;
#else
	return report_error(ENOSYS);
#endif
}

static int timed_readlink(const char *path)
{
	static char buf[PATH_MAX];
	double start = now();
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	double took = now() - start;

	if (n < 0) {
		printf("err %s %.3f\n", errno_name(errno), took);
		return 1;
	}
	buf[n] = '\0';
	printf("ok %s %.3f\n", buf, took);
	return 0;
}

/* ---- execve's envp as a weapon ---------------------------------------- */

struct swap {
	int ms;
	void (*fn)(struct swap *);
	/* envp-stall */
	void *page;
	int fd;
	off_t off;
	/* envp-huge */
	char **envp;
	long count;
	char *big;
};

static void *swap_main(void *p)
{
	struct swap *s = p;

	usleep(s->ms * 1000);
	s->fn(s);
	printf("swapped %.3f\n", now());
	for (;;)
		pause();
	return NULL;
}

static void swap_in_file(struct swap *s)
{
	if (mmap(s->page, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, s->fd,
		 s->off) == MAP_FAILED)
		printf("swap failed %s\n", errno_name(errno));
}

static void swap_in_strings(struct swap *s)
{
	long i;

	/* NULL-terminated at every step: fill behind the end, then open it */
	for (i = 2; i < s->count; i++)
		s->envp[i] = s->big;
	s->envp[s->count] = NULL;
	__atomic_store_n(&s->envp[1], s->big, __ATOMIC_SEQ_CST);
}

static int exec_with(const char *path, char **envp, struct swap *s)
{
	char *argv[] = { (char *)path, "exe", NULL };
	pthread_t t;
	double start;

	if (s->ms > 0 && pthread_create(&t, NULL, swap_main, s))
		return report_error(EAGAIN);
	start = now();
	printf("execve %.3f\n", start);
	execve(path, argv, envp);
	printf("err %s %.3f\n", errno_name(errno), now() - start);
	return 1;
}

static int cmd_envp_stall(const char *path, const char *file, int ms,
			  long pageno)
{
	static struct swap s;
	char *envp[2] = { NULL, NULL };
	int fd = open(file, O_RDONLY);
	char *page;

	if (fd < 0)
		return report_error(errno);
	if (ms > 0) {
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page != MAP_FAILED)
			strcpy(page, "UNIVERSE=/ordinary");
	} else {
		page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
			    pageno * 4096);
		/* no read-ahead: each page is read alone, when it is touched */
		if (page != MAP_FAILED)
			madvise(page, 4096, MADV_RANDOM);
	}
	if (page == MAP_FAILED)
		return report_error(errno);
	if (start_janitor(page, 4096))
		return report_error(errno);
	envp[0] = page;
	s = (struct swap){ .ms = ms, .fn = swap_in_file, .page = page,
			   .fd = fd, .off = pageno * 4096 };
	return exec_with(path, envp, &s);
}

static int cmd_envp_huge(const char *path, long count, long len, int ms)
{
	static struct swap s;
	char **envp = calloc(count + 1, sizeof(*envp));
	char *big = mmap(NULL, len + 1, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long i;

	if (!envp || big == MAP_FAILED || count < 2 || len < 3)
		return report_error(ENOMEM);
	memset(big, 'x', len);
	memcpy(big, "X=", 2);
	big[len] = '\0';
	if (start_janitor(big, len + 1))
		return report_error(errno);
	if (ms > 0) {
		envp[0] = "SMALL=1";
		envp[1] = NULL;
	} else {
		for (i = 0; i < count; i++)
			envp[i] = big;
	}
	s = (struct swap){ .ms = ms, .fn = swap_in_strings, .envp = envp,
			   .count = count, .big = big };
	return exec_with(path, envp, &s);
}

/* ---- the environment area moved (PR_SET_MM_MAP, no capability) -------- */

/* Fields of /proc/self/stat, counted from 1 as proc(5) does. */
static int stat_fields(unsigned long long *f, int max)
{
	char buf[4096], *p;
	FILE *in = fopen("/proc/self/stat", "r");
	size_t n;
	int i;

	if (!in)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, in);
	fclose(in);
	buf[n] = '\0';
	p = strrchr(buf, ')');		/* comm may hold anything */
	if (!p)
		return -1;
	p += 2;				/* field 3, the state */
	for (i = 3; i <= max && *p; i++) {
		f[i] = strtoull(p, &p, 10);
		while (*p == ' ')
			p++;
		if (i == 3)		/* the state is a letter */
			while (*p && *p != ' ')
				p++, f[i] = 0;
		while (*p == ' ')
			p++;
	}
	return i > max ? 0 : -1;
}

/*
 * PR_SET_MM_MAP with every current value but the environment area and
 * where the stack starts; checked against what the kernel shows after.
 */
static int set_mm_map(unsigned long env_start, unsigned long env_end,
		      unsigned long start_stack)
{
	unsigned long long f[64] = { 0 };
	struct prctl_mm_map map;

	if (stat_fields(f, 51))
		return -1;
	map = (struct prctl_mm_map){
		.start_code = f[26], .end_code = f[27],
		.start_data = f[45], .end_data = f[46],
		.start_brk = f[47], .brk = (unsigned long)sbrk(0),
		.start_stack = start_stack,
		.arg_start = f[48], .arg_end = f[49],
		.env_start = env_start, .env_end = env_end,
		.auxv = NULL, .auxv_size = 0, .exe_fd = (__u32)-1,
	};
	if (prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&map,
		  sizeof(map), 0))
		return -1;
	/* the attack is in place only if the kernel now shows the new map */
	if (stat_fields(f, 51) || f[50] != env_start || f[51] != env_end ||
	    f[28] != start_stack) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static int set_env_area(unsigned long start, unsigned long end)
{
	unsigned long long f[64] = { 0 };

	if (stat_fields(f, 51) || set_mm_map(start, end, f[28]))
		return -1;
	printf("moved %#lx %#lx\n", start, end);
	return 0;
}

static int cmd_env_area(const char *kind, const char *what, const char *path,
			long page)
{
	size_t len;
	char *area;

	if (!strcmp(kind, "zero")) {
		len = strtoull(what, NULL, 10) << 20;
		area = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			    MAP_NORESERVE, -1, 0);
	} else if (!strcmp(kind, "file") || !strcmp(kind, "fd")) {
		int fd = !strcmp(kind, "fd") ? atoi(what) : open(what, O_RDONLY);

		if (fd < 0)
			return report_error(errno);
		len = 4096;
		area = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, page * 4096);
		/* no read-ahead: each page is read alone, when it is touched */
		if (area != MAP_FAILED)
			madvise(area, len, MADV_RANDOM);
	} else {
		return usage();
	}
	if (area == MAP_FAILED)
		return report_error(errno);
	if (start_janitor(area, len))
		return report_error(errno);
	if (set_env_area((unsigned long)area, (unsigned long)area + len))
		return report_error(errno);
	printf("ready %.3f\n", now());
	timed_readlink(path);
	/* the janitor goes when the test closes our standard input */
	waitpid(janitor_pid, NULL, 0);
	return 0;
}

/* ---- many execs in flight --------------------------------------------- */

static int cmd_storm(int n, const char *path)
{
	int i;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			char *argv[] = { (char *)path, NULL }, *envp[] = { NULL };

			execve(path, argv, envp);
			printf("fail %d %s\n", (int)getpid(),
			       errno_name(errno));
			_exit(1);
		}
		if (pid < 0)
			return report_error(errno);
		printf("child %d\n", (int)pid);
	}
	printf("forked %d\n", n);
	for (;;) {
		int status;
		pid_t pid = wait(&status);

		if (pid < 0 && errno == ECHILD)
			pause();
		else if (pid > 0)
			printf("reaped %d %d\n", (int)pid, status);
	}
}

/* ---- a tid given up, and handed out again ------------------------------ */

static char *handoff_file, *handoff_path;

static void *handoff_main(void *arg)
{
	char *argv[] = { handoff_path, NULL }, *envp[] = { NULL };
	int fd = open(handoff_file, O_RDONLY | O_CLOEXEC);

	(void)arg;
	if (fd < 0) {
		report_error(errno);
		exit(1);
	}
	printf("thread %d leader %d\n", (int)gettid(), (int)getpid());
	execve(handoff_path, argv, envp);
	report_error(errno);
	exit(1);
}

static int cmd_tid_handoff(char *file, char *path)
{
	pthread_t t;

	handoff_file = file;
	handoff_path = path;
	if (pthread_create(&t, NULL, handoff_main, NULL))
		return report_error(EAGAIN);
	for (;;)
		pause();	/* the exec ends this thread */
}

/* ---- tids given up by execs, and execs held failed --------------------- */

/*
 * Each image of this program: a second thread follows the link, then execs
 * the program again with one exec fewer to go.  de_thread() gives that
 * thread its leader's tid: the one it followed the link with is given up
 * without an exit.
 */
static char *chain_argv[5];

static void *chain_main(void *arg)
{
	char target[PATH_MAX];

	(void)arg;
	if (readlink(chain_argv[3], target, sizeof(target)) < 0) {
		report_error(errno);
		exit(1);
	}
	execv("/proc/self/exe", chain_argv);
	report_error(errno);
	exit(1);
}

static int cmd_thread_execs(long total, long left, char *link)
{
	static char count[32];
	pthread_t t;

	if (left == total)
		printf("tid %d\n", (int)gettid());
	if (!left) {
		printf("done %ld\n", total);
		return 0;
	}
	if (left % 4096 == 0)
		printf("left %ld\n", left);
	snprintf(count, sizeof(count), "%ld/%ld", left - 1, total);
	chain_argv[0] = "vsattack";
	chain_argv[1] = "thread-execs";
	chain_argv[2] = count;
	chain_argv[3] = link;
	fflush(stdout);
	if (pthread_create(&t, NULL, chain_main, NULL))
		return report_error(EAGAIN);
	for (;;)
		pause();	/* the exec ends this thread */
}

static char *held_path, **held_envp;
static int held_failed, held_errno;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cond = PTHREAD_COND_INITIALIZER;

static void *held_main(void *arg)
{
	char *argv[] = { held_path, NULL };

	(void)arg;
	execve(held_path, argv, held_envp);
	pthread_mutex_lock(&held_lock);
	held_errno = errno;
	held_failed++;
	pthread_cond_broadcast(&held_cond);
	pthread_mutex_unlock(&held_lock);
	for (;;)
		pause();	/* holds its failed exec's state */
	return NULL;
}

static int cmd_hold_failed_execs(int n, char *path, char **envp)
{
	pthread_attr_t attr;
	pthread_t t;
	int i, err;
	char c;

	held_path = path;
	held_envp = envp;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++) {
		/* EAGAIN while another thread is inside its exec (fs->in_exec) */
		while ((err = pthread_create(&t, &attr, held_main, NULL)) ==
		       EAGAIN)
			sched_yield();
		if (err)
			return report_error(err);
	}
	pthread_mutex_lock(&held_lock);
	while (held_failed < n)
		pthread_cond_wait(&held_cond, &held_lock);
	pthread_mutex_unlock(&held_lock);
	printf("held %d failed execs: %s\n", n, errno_name(held_errno));
	while (read(0, &c, 1) > 0)
		;
	_exit(0);
}

/* Forks children that exit at once until one's pid is above past. */
static int cmd_pids_past(pid_t past)
{
	long forks;

	for (forks = 1; forks <= 200000; forks++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0)
			return report_error(errno);
		waitpid(pid, NULL, 0);
		if (pid > past) {
			printf("pid %d after %ld forks\n", (int)pid, forks);
			return 0;
		}
	}
	return report_error(EAGAIN);
}

static int cmd_as_pid(pid_t want, int argc, char **argv)
{
	long forks;

	for (forks = 1; forks <= 200000; forks++) {
		pid_t pid = fork();

		if (pid == 0) {
			if (getpid() != want)
				_exit(0);
			char c;

			printf("got %d after %ld forks\n", (int)want, forks);
			/* a line on standard input: go */
			while (read(0, &c, 1) == 1 && c != '\n')
				;
			return cmd_exec(argv[0], argc - 1, argv + 1);
		}
		if (pid < 0)
			return report_error(errno);
		if (pid == want) {
			waitpid(pid, NULL, 0);
			return 0;
		}
		waitpid(pid, NULL, 0);
	}
	return report_error(EAGAIN);
}

/* ---- walkers ---------------------------------------------------------- */

#define MAX_ANSWERS 8

struct walker {
	char **paths;
	int npaths;
	double until;
	struct {
		char answer[128];
		long count;
	} seen[16][MAX_ANSWERS];
};

static void *walker_main(void *p)
{
	struct walker *w = p;
	char buf[PATH_MAX];
	int i, k;

	while (now() < w->until) {
		for (i = 0; i < w->npaths && i < 16; i++) {
			ssize_t n = readlink(w->paths[i], buf, sizeof(buf) - 1);

			if (n < 0)
				snprintf(buf, sizeof(buf), "err-%s",
					 errno_name(errno));
			else
				buf[n] = '\0';
			buf[127] = '\0';
			for (k = 0; k < MAX_ANSWERS && w->seen[i][k].count &&
			     strcmp(w->seen[i][k].answer, buf); k++)
				;
			if (k == MAX_ANSWERS)
				continue;
			if (!w->seen[i][k].count)
				strcpy(w->seen[i][k].answer, buf);
			w->seen[i][k].count++;
		}
	}
	return NULL;
}

static int cmd_walk(int threads, int ms, int npaths, char **paths)
{
	struct walker *w = calloc(threads, sizeof(*w));
	pthread_t *t = calloc(threads, sizeof(*t));
	struct {
		char answer[128];
		long count;
	} total[MAX_ANSWERS];
	int i, j, k, m, ntotal;

	if (!w || !t || threads < 1 || npaths > 16)
		return report_error(EINVAL);
	for (i = 0; i < threads; i++) {
		w[i].paths = paths;
		w[i].npaths = npaths;
		w[i].until = now() + ms / 1000.0;
		if (pthread_create(&t[i], NULL, walker_main, &w[i]))
			return report_error(EAGAIN);
	}
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	/* every thread's answers for each path, added up */
	for (j = 0; j < npaths; j++) {
		ntotal = 0;
		for (i = 0; i < threads; i++) {
			for (k = 0; k < MAX_ANSWERS && w[i].seen[j][k].count;
			     k++) {
				for (m = 0; m < ntotal &&
				     strcmp(total[m].answer,
					    w[i].seen[j][k].answer); m++)
					;
				if (m == MAX_ANSWERS)
					continue;
				if (m == ntotal) {
					strcpy(total[m].answer,
					       w[i].seen[j][k].answer);
					total[m].count = 0;
					ntotal++;
				}
				total[m].count += w[i].seen[j][k].count;
			}
		}
		for (m = 0; m < ntotal; m++)
			printf("walked %s %s %ld\n", paths[j], total[m].answer,
			       total[m].count);
	}
	return 0;
}

/* ---- st_size of the link ---------------------------------------------- */

static int lstat_size(const char *path, int dont_sync, long long *size)
{
	struct statx st;
	int flags = AT_SYMLINK_NOFOLLOW | (dont_sync ? AT_STATX_DONT_SYNC : 0);

	if (statx(AT_FDCWD, path, flags, STATX_BASIC_STATS, &st))
		return errno;
	*size = (long long)st.stx_size;
	return 0;
}

static int cmd_lstat_size(const char *path, int dont_sync)
{
	long long size;
	int e = lstat_size(path, dont_sync, &size);

	if (e)
		return report_error(e);
	printf("ok %lld\n", size);
	return 0;
}

static int cmd_lstat_size_loop(long n, const char *path, long long expect,
			       int dont_sync)
{
	long i, wrong = 0;
	long long size, other = -1;

	for (i = 0; i < n; i++) {
		int e = lstat_size(path, dont_sync, &size);

		if (e)
			return report_error(e);
		if (size != expect) {
			wrong++;
			other = size;
		}
	}
	if (wrong)
		printf("wrong %ld of %ld: %lld\n", wrong, n, other);
	else
		printf("ok %ld\n", n);
	return wrong != 0;
}

int main(int argc, char *argv[])
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "after-line") && argc > 2) {
		char c;

		printf("waiting\n");
		while (read(0, &c, 1) == 1 && c != '\n')
			;
		return main(argc - 1, argv + 1);
	}
	if (!strcmp(cmd, "exe"))
		return cmd_exe();
	if (!strcmp(cmd, "exec") && argc > 3)
		return cmd_exec(argv[2], argc - 3, argv + 3);
	if (!strcmp(cmd, "int80-probe"))
		return cmd_int80_probe();
	if (!strcmp(cmd, "timed-readlink") && argc == 3)
		return timed_readlink(argv[2]);
	if (!strcmp(cmd, "envp-stall") && (argc == 5 || argc == 6))
		return cmd_envp_stall(argv[2], argv[3], atoi(argv[4]),
				      argc == 6 ? atol(argv[5]) : 0);
	if (!strcmp(cmd, "envp-huge") && argc == 6)
		return cmd_envp_huge(argv[2], atol(argv[3]), atol(argv[4]),
				     atoi(argv[5]));
	if (!strcmp(cmd, "env-area") && (argc == 5 || argc == 6))
		return cmd_env_area(argv[2], argv[3], argv[4],
				    argc == 6 ? atol(argv[5]) : 0);
	if (!strcmp(cmd, "thread-execs") && argc == 4) {
		long left, total;

		if (sscanf(argv[2], "%ld/%ld", &left, &total) != 2)
			left = total = atol(argv[2]);
		return cmd_thread_execs(total, left, argv[3]);
	}
	if (!strcmp(cmd, "hold-failed-execs") && argc >= 4)
		return cmd_hold_failed_execs(atoi(argv[2]), argv[3], argv + 4);
	if (!strcmp(cmd, "pids-past") && argc == 3)
		return cmd_pids_past(atoi(argv[2]));
	if (!strcmp(cmd, "as-pid") && argc > 4)
		return cmd_as_pid(atoi(argv[2]), argc - 3, argv + 3);
	if (!strcmp(cmd, "tid-handoff") && argc == 4)
		return cmd_tid_handoff(argv[2], argv[3]);
	if (!strcmp(cmd, "storm") && argc == 4)
		return cmd_storm(atoi(argv[2]), argv[3]);
	if (!strcmp(cmd, "walk") && argc >= 5)
		return cmd_walk(atoi(argv[2]), atoi(argv[3]), argc - 4,
				argv + 4);
	if (!strcmp(cmd, "lstat-size") && (argc == 3 || argc == 4))
		return cmd_lstat_size(argv[2], argc == 4 &&
				      !strcmp(argv[3], "dont-sync"));
	if (!strcmp(cmd, "lstat-size-loop") && (argc == 5 || argc == 6))
		return cmd_lstat_size_loop(atol(argv[2]), argv[3],
					   atoll(argv[4]), argc == 6 &&
					   !strcmp(argv[5], "dont-sync"));
	return usage();
}
