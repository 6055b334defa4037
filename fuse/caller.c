// SPDX-License-Identifier: GPL-2.0-only
/*
 * caller.c - who is asking: a FUSE request's process, seen through /proc.
 *
 * The kernel tells us the thread id of the caller.  Through /proc/PID we
 * learn its exec-time environment (environ), whether it was started with
 * AT_SECURE (auxv) and, while it is inside execve(2), the envp that execve
 * was given (syscall + mem), which decides per SPEC section 3.
 *
 * Every file is opened relative to one O_PATH descriptor of /proc/PID, so a
 * pid that dies and is reused half-way cannot mix two processes' answers.
 * None of these reads walks a path through our own mount.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "vsfuse.h"

#define NR_EXECVE 59		/* x86-64 numbers, as /proc/PID/syscall shows */
#define NR_EXECVEAT 322
#define SCAN_CHUNK 4096
#define ARG_STRLEN_MAX (32 * 4096)	/* the kernel's MAX_ARG_STRLEN */
#define ENVP_MAX (1 << 20)		/* bound on envp[] entries we read */

/* Reads a small /proc file whole; -errno if it cannot be read. */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

/* AT_SECURE from /proc/PID/auxv; an unreadable auxv counts as secure. */
static bool caller_secure(int dirfd)
{
	unsigned long auxv[2 * 64];
	ssize_t n = read_small(dirfd, "auxv", (char *)auxv, sizeof(auxv));
	size_t i;

	if (n < 0)
		return true;
	for (i = 0; i + 1 < (size_t)n / sizeof(auxv[0]); i += 2) {
		if (auxv[i] == AT_NULL)
			break;
		if (auxv[i] == AT_SECURE)
			return auxv[i + 1] != 0;
	}
	return false;
}

/*
 * What the thread is blocked in, from its /proc/TID/syscall (syscall_fd);
 * *envp is execve's envp when it is execve.
 *
 * The file says "running" while the thread is on a CPU, and a caller whose
 * request we have just read may not yet have gone to sleep waiting for our
 * answer.  Taking "running" for "not in execve" would let the environment
 * of the old program choose a setuid program's loader, so we wait for the
 * caller to sleep, which it does as soon as it has queued the request: a
 * few yields, then 50 us naps, about 100 ms in all.
 */
enum vsfuse_blocked vsfuse_blocked_in(int syscall_fd, uint64_t *envp)
{
	const struct timespec nap = { .tv_nsec = 50000 };
	unsigned long long a[6];
	char line[256];
	int tries;
	long nr;

	for (tries = 0; tries < 2000; tries++) {
		ssize_t n = pread(syscall_fd, line, sizeof(line) - 1, 0);

		if (n <= 0)
			return VSFUSE_BLOCKED_GONE;
		line[n] = '\0';
		if (strncmp(line, "running", 7))
			break;
		if (tries < 100)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
	if (tries == 2000)
		return VSFUSE_BLOCKED_UNKNOWN;
	if (sscanf(line, "%ld %llx %llx %llx %llx %llx %llx", &nr, &a[0],
		   &a[1], &a[2], &a[3], &a[4], &a[5]) != 7 ||
	    (nr != NR_EXECVE && nr != NR_EXECVEAT))
		return VSFUSE_BLOCKED_OTHER;	/* also "-1 SP PC": no call */
	*envp = nr == NR_EXECVE ? a[2] : a[3];
	return VSFUSE_BLOCKED_EXECVE;
}

/*
 * Which part of execve(2) is walking the path, from the kernel stack (root
 * only).  The interpreter of an ELF binary (its dynamic loader) or of a
 * binfmt_misc entry is loaded into the new program, which may be setuid:
 * that walk must not follow the caller's choice.
 */
enum exec_phase { PHASE_PROGRAM, PHASE_LOADER, PHASE_UNKNOWN };

static enum exec_phase exec_phase(int dirfd)
{
	char stack[4096];

	if (read_small(dirfd, "stack", stack, sizeof(stack)) < 0)
		return PHASE_UNKNOWN;
	if (strstr(stack, "open_exec") &&
	    (strstr(stack, "load_elf_binary") ||
	     strstr(stack, "load_elf_fdpic_binary") ||
	     strstr(stack, "load_misc_binary")))
		return PHASE_LOADER;
	return PHASE_PROGRAM;
}

void vsfuse_caller_open(struct vsfuse_caller *c, int procfd, pid_t pid,
			bool serves_others)
{
	enum vsfuse_blocked blocked = VSFUSE_BLOCKED_GONE;
	enum exec_phase phase;
	uint64_t envp = 0;
	char name[32];
	int fd;

	*c = (struct vsfuse_caller){ .dirfd = -1, .memfd = -1 };
	if (pid <= 0)		/* not in our pid namespace: nothing is set */
		return;
	snprintf(name, sizeof(name), "%d", (int)pid);
	c->dirfd = openat(procfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0)	/* gone already: nobody reads our answer */
		return;
	c->secure = caller_secure(c->dirfd);
	if (c->secure)
		return;
	c->source = VSFUSE_ENV_ENVIRON;
	fd = openat(c->dirfd, "syscall", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		blocked = vsfuse_blocked_in(fd, &envp);
		close(fd);
	}
	/*
	 * A mount that serves only its owner cannot sit on a setuid program's
	 * loader path; one that serves everyone must assume the worst when it
	 * cannot tell whether this is execve, and which part of it.
	 */
	if (blocked == VSFUSE_BLOCKED_UNKNOWN && serves_others) {
		c->secure = true;
		return;
	}
	if (blocked != VSFUSE_BLOCKED_EXECVE)
		return;
	c->in_execve = true;
	phase = exec_phase(c->dirfd);
	if (phase == PHASE_LOADER ||
	    (phase == PHASE_UNKNOWN && serves_others)) {
		c->secure = true;
		return;
	}
	if (!envp) {		/* execve(path, argv, NULL): empty */
		c->source = VSFUSE_ENV_NONE;
		return;
	}
	c->memfd = openat(c->dirfd, "mem", O_RDONLY | O_CLOEXEC);
	if (c->memfd < 0)	/* fall back to the exec-time environment */
		return;
	c->envp = envp;
	c->source = VSFUSE_ENV_ENVP;
}

void vsfuse_caller_close(struct vsfuse_caller *c)
{
	if (c->memfd >= 0)
		close(c->memfd);
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->memfd = c->dirfd = -1;
}

/* Feeds the exec-time environment, /proc/PID/environ, to the scanner. */
static void scan_environ(const struct vsfuse_caller *c,
			 struct varsym_env_scan *s)
{
	char chunk[SCAN_CHUNK];
	int fd = openat(c->dirfd, "environ", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (varsym_env_scan_feed(s, chunk, n))
			break;
	close(fd);
}

/* Feeds one NUL-terminated string of the caller's memory to the scanner. */
static bool scan_string(int memfd, uint64_t addr, struct varsym_env_scan *s)
{
	char chunk[256];
	size_t total = 0;

	while (total < ARG_STRLEN_MAX) {
		/* stay inside one page: the next one may not be mapped */
		size_t room = 4096 - (addr & 4095);
		ssize_t n = pread(memfd, chunk,
				  room < sizeof(chunk) ? room : sizeof(chunk),
				  (off_t)addr);
		char *nul;

		if (n <= 0)
			break;
		nul = memchr(chunk, '\0', n);
		if (nul)
			return varsym_env_scan_feed(s, chunk, nul - chunk + 1);
		if (varsym_env_scan_feed(s, chunk, n))
			return true;
		addr += n;
		total += n;
	}
	/* unreadable or endless: this entry does not count, nor any after */
	varsym_env_scan_cut(s);
	return true;
}

/* Feeds the strings of the envp[] array given to execve(2). */
static void scan_envp(const struct vsfuse_caller *c,
		      struct varsym_env_scan *s)
{
	uint64_t ptrs[64], addr = c->envp;
	size_t count = 0;

	while (count < ENVP_MAX) {
		ssize_t n = pread(c->memfd, ptrs, sizeof(ptrs), (off_t)addr);
		size_t i;

		if (n < (ssize_t)sizeof(ptrs[0]))
			return;
		for (i = 0; i < n / sizeof(ptrs[0]); i++, count++) {
			if (!ptrs[i] || scan_string(c->memfd, ptrs[i], s))
				return;
		}
		addr += (n / sizeof(ptrs[0])) * sizeof(ptrs[0]);
	}
}

ssize_t vsfuse_getenv(void *ctx, const char *name, size_t name_len,
		      char *buf, size_t size)
{
	const struct vsfuse_caller *c = ctx;
	struct varsym_env_scan s;

	varsym_env_scan_init(&s, name, name_len, buf, size);
	if (c->source == VSFUSE_ENV_ENVP)
		scan_envp(c, &s);
	else if (c->source == VSFUSE_ENV_ENVIRON)
		scan_environ(c, &s);
	return varsym_env_scan_result(&s);
}
