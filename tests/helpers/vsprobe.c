// SPDX-License-Identifier: GPL-2.0-only
/*
 * vsprobe - one system call at a time, for the conformance suite.
 *
 * Each command makes the real system call and prints one line: "ok <result>"
 * or "err <ERRNO>", so a test can tell ENOENT from EACCES, which readlink(1)
 * cannot.  Commands that need a process in a particular state (threads, an
 * environment changed after exec, a moved environment) set it up first.
 *
 *   vsprobe [--chroot DIR] COMMAND...
 *                                  chroot(2) to DIR first, so that no path
 *                                  walk crosses file systems outside DIR
 *   vsprobe readlink PATH          readlink(2)
 *   vsprobe lstat PATH             lstat(2): st_size
 *   vsprobe stat PATH              stat(2): st_ino
 *   vsprobe open PATH              open(2) O_RDONLY + close(2)
 *   vsprobe exec [ENV...] -- PATH [ARG...]
 *                                  execve(PATH, {PATH, ARG...}, {ENV...}):
 *                                  any bytes as entries, '=' or not
 *   vsprobe setenv NAME VALUE PATH setenv(3), then readlink(2)
 *   vsprobe threads N PATH         readlink(2) in N threads: all must agree
 *   vsprobe loop N PATH EXPECT     N readlink(2)s, each must give EXPECT
 *   vsprobe tally N PATH           N readlink(2)s: each distinct answer,
 *                                  one line each: its count, the
 *                                  CLOCK_MONOTONIC time it was first seen,
 *                                  the answer
 *   vsprobe setenv-area PATH NAME=VALUE
 *                                  readlink(2), prctl(PR_SET_MM) the
 *                                  environment to a new area holding
 *                                  NAME=VALUE, then readlink(2) again
 *   vsprobe unmap-env PATH         unmap the environment area, readlink(2)
 *   vsprobe readlink-exec PATH [ENV...]
 *                                  readlink(2), then execve(2) itself, same
 *                                  pid, with ENV, to readlink(2) again
 *   vsprobe pid-reuse PATH VAR V1 V2
 *                                  a child with VAR=V1 readlinks and exits;
 *                                  a second child gets the same pid (through
 *                                  ns_last_pid) with VAR=V2 and readlinks
 *   vsprobe stat-loop N PATH       N stat(2)s of PATH, each must succeed
 *   vsprobe exec-racing PATH MS    threads follow PATH while the main thread
 *                                  execs /bin/true after MS milliseconds:
 *                                  their requests die in flight
 *   vsprobe uring-open PATH        openat through io_uring, in an io-wq
 *                                  worker thread (IOSQE_ASYNC)
 *   vsprobe fsmount TYPE DIR [KEY[=VALUE]...]
 *                                  mount through fsopen(2)/fsconfig(2) and
 *                                  print the file system's log messages
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
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
#include <linux/mount.h>

#include "errno_name.h"

static int report_error(int e)
{
	printf("err %s\n", errno_name(e));
	return 1;
}

/* readlink(2) into buf; returns 0 or errno. */
static int do_readlink(const char *path, char *buf, size_t size)
{
	ssize_t n = readlink(path, buf, size - 1);

	if (n < 0)
		return errno;
	buf[n] = '\0';
	return 0;
}

static int cmd_readlink(const char *path)
{
	static char buf[65536];
	int e = do_readlink(path, buf, sizeof(buf));

	if (e)
		return report_error(e);
	printf("ok %s\n", buf);
	return 0;
}

static int cmd_stat(const char *path, bool follow)
{
	struct stat st;

	if ((follow ? stat(path, &st) : lstat(path, &st)) < 0)
		return report_error(errno);
	printf("ok %lld\n", follow ? (long long)st.st_ino :
	       (long long)st.st_size);
	return 0;
}

static int cmd_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return report_error(errno);
	close(fd);
	printf("ok\n");
	return 0;
}

static int cmd_exec(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--"))
			continue;
		argv[i] = NULL;		/* ends the environment */
		if (i + 1 == argc)
			break;
		execve(argv[i + 1], argv + i + 1, argv);
		return report_error(errno);
	}
	fprintf(stderr, "usage: vsprobe exec [ENV...] -- PATH [ARG...]\n");
	return 2;
}

struct thread_arg {
	const char *path;
	char result[4096];
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	int e = do_readlink(a->path, a->result, sizeof(a->result));

	if (e)
		snprintf(a->result, sizeof(a->result), "err %s",
			 errno_name(e));
	return NULL;
}

static int cmd_threads(int n, const char *path)
{
	struct thread_arg *args = calloc(n, sizeof(*args));
	pthread_t *tids = calloc(n, sizeof(*tids));
	int i, differ = 0;

	if (!args || !tids || n < 1)
		return report_error(ENOMEM);
	for (i = 0; i < n; i++) {
		args[i].path = path;
		if (pthread_create(&tids[i], NULL, thread_main, &args[i]))
			return report_error(EAGAIN);
	}
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	for (i = 1; i < n; i++)
		differ |= strcmp(args[i].result, args[0].result) != 0;
	if (differ)
		printf("err threads disagree\n");
	else
		printf("ok %s\n", args[0].result);
	return differ;
}

static int cmd_loop(long n, const char *path, const char *expect)
{
	char buf[4096];
	long i, wrong = 0;

	for (i = 0; i < n; i++) {
		int e = do_readlink(path, buf, sizeof(buf));

		if (e || strcmp(buf, expect))
			wrong++;
	}
	printf("%s %ld wrong of %ld\n", wrong ? "err" : "ok", wrong, n);
	return wrong != 0;
}

static int set_env_bounds(int first, unsigned long a, int second,
			  unsigned long b)
{
	if (prctl(PR_SET_MM, first, a, 0, 0))
		return -1;
	return prctl(PR_SET_MM, second, b, 0, 0);
}

static int cmd_stat_loop(long n, const char *path)
{
	struct stat st;
	long i;

	for (i = 0; i < n; i++)
		if (stat(path, &st) < 0)
			return report_error(errno);
	printf("ok %ld\n", n);
	return 0;
}

/* One IORING_OP_OPENAT, forced onto an io-wq worker; raw system calls. */
static int cmd_uring_open(const char *path)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	unsigned int *sq_tail, *sq_array, *cq_head;
	char *sq, *cq;
	int fd, res;

	fd = syscall(SYS_io_uring_setup, 4, &p);
	if (fd < 0)
		return report_error(errno);
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(*cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return report_error(errno);
	sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	sq_array = (unsigned int *)(sq + p.sq_off.array);
	cq_head = (unsigned int *)(cq + p.cq_off.head);
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_OPENAT;
	sqes[0].flags = IOSQE_ASYNC;
	sqes[0].fd = AT_FDCWD;
	sqes[0].addr = (unsigned long)path;
	sqes[0].open_flags = O_RDONLY | O_CLOEXEC;
	sq_array[0] = 0;
	__atomic_store_n(sq_tail, 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0)
		return report_error(errno);
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	res = cqe[*cq_head & (p.cq_entries - 1)].res;
	if (res < 0)
		return report_error(-res);
	close(res);
	printf("ok\n");
	return 0;
}

static int cmd_tally(long n, const char *path)
{
	struct {
		char answer[256];
		long count;
		struct timespec first;
	} seen[16];
	int nseen = 0, i;
	char buf[4096];
	long k;

	for (k = 0; k < n; k++) {
		int e = do_readlink(path, buf, sizeof(buf));

		if (e)
			snprintf(buf, sizeof(buf), "err %s", errno_name(e));
		buf[sizeof(seen[0].answer) - 1] = '\0';
		for (i = 0; i < nseen && strcmp(seen[i].answer, buf); i++)
			;
		if (i == nseen) {
			if (nseen == 16)
				return report_error(E2BIG);
			/* answers longer than 255 bytes are cut: fine here */
			memcpy(seen[nseen].answer, buf,
			       sizeof(seen[0].answer) - 1);
			seen[nseen].answer[sizeof(seen[0].answer) - 1] = '\0';
			clock_gettime(CLOCK_MONOTONIC, &seen[nseen].first);
			seen[nseen++].count = 0;
		}
		seen[i].count++;
	}
	for (i = 0; i < nseen; i++)
		printf("%ld %lld.%09ld %s\n", seen[i].count,
		       (long long)seen[i].first.tv_sec, seen[i].first.tv_nsec,
		       seen[i].answer);
	printf("ok\n");
	return 0;
}

static int cmd_readlink_exec(char *self, char *path, char **env)
{
	char *argv[] = { self, "readlink", path, NULL };

	cmd_readlink(path);
	execve("/proc/self/exe", argv, env);
	return report_error(errno);
}

/* fork + exec of "vsprobe readlink PATH" with VAR=VALUE; its pid. */
static pid_t spawn_readlink(char *path, const char *var, const char *value)
{
	char *argv[] = { "vsprobe", "readlink", path, NULL };
	char entry[4096], *env[] = { entry, NULL };
	pid_t pid;

	snprintf(entry, sizeof(entry), "%s=%s", var, value);
	pid = fork();
	if (pid == 0) {
		execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	return pid;
}

static int set_last_pid(pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%d", (int)pid) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int cmd_pid_reuse(char *path, const char *var, const char *v1,
			 const char *v2)
{
	pid_t first, second;
	int tries, status;

	first = spawn_readlink(path, var, v1);
	if (first < 0 || waitpid(first, &status, 0) < 0)
		return report_error(errno);
	/* other processes may take the pid first: try a few times */
	for (tries = 0; tries < 20; tries++) {
		if (set_last_pid(first - 1))
			return report_error(errno);
		second = spawn_readlink(path, var, v2);
		if (second < 0 || waitpid(second, &status, 0) < 0)
			return report_error(errno);
		if (second == first) {
			printf("ok reused %d\n", (int)first);
			return 0;
		}
	}
	return report_error(EAGAIN);
}

static void *follow_forever(void *p)
{
	char buf[4096];

	for (;;)
		do_readlink(p, buf, sizeof(buf));
	return NULL;
}

static int cmd_exec_racing(char *path, int ms)
{
	char *argv[] = { "true", NULL }, *env[] = { NULL };
	pthread_t t;
	int i;

	for (i = 0; i < 4; i++)
		if (pthread_create(&t, NULL, follow_forever, path))
			return report_error(EAGAIN);
	usleep(ms * 1000);
	execve("/bin/true", argv, env);
	return report_error(errno);
}

/* Moves the environment area to fresh memory holding one entry. */
static int cmd_setenv_area(const char *path, const char *entry)
{
	static char buf[4096];
	size_t len = strlen(entry) + 1;
	char *area = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (area == MAP_FAILED || len > 4096)
		return report_error(ENOMEM);
	memcpy(area, entry, len);
	/* first an answer a cache could keep: the move must not keep it */
	do_readlink(path, buf, sizeof(buf));
	/* the kernel wants start <= end after each step: try both orders */
	if (set_env_bounds(PR_SET_MM_ENV_START, (unsigned long)area,
			   PR_SET_MM_ENV_END, (unsigned long)area + len) &&
	    set_env_bounds(PR_SET_MM_ENV_END, (unsigned long)area + len,
			   PR_SET_MM_ENV_START, (unsigned long)area))
		return report_error(errno);
	return cmd_readlink(path);
}

/*
 * Unmaps the pages that hold nothing but environment strings (the caller
 * pads the environment so that there are some), then readlink(2).
 */
static int cmd_unmap_env(const char *path)
{
	extern char **environ;
	static char copy[4096];
	unsigned long page = 4096, start, end;
	char **e;

	if (!environ || !environ[0])
		return report_error(ENOENT);
	/* path may live near those pages */
	snprintf(copy, sizeof(copy), "%s", path);
	for (e = environ; e[1]; e++)
		;
	start = ((unsigned long)environ[0] + page - 1) & ~(page - 1);
	end = ((unsigned long)*e + strlen(*e)) & ~(page - 1);
	if (end <= start)
		return report_error(ERANGE);
	if (munmap((void *)start, end - start))
		return report_error(errno);
	return cmd_readlink(copy);
}

/* Mounts with the new mount API; prints every message of the fs's log. */
static int cmd_fsmount(const char *type, const char *dir, char **opts)
{
	int fs = syscall(SYS_fsopen, type, FSOPEN_CLOEXEC), mnt, e = 0;
	char msg[1024];
	ssize_t n;

	if (fs < 0)
		return report_error(errno);
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", "none",
		    0) < 0)
		e = errno;
	for (; !e && *opts; opts++) {
		char *key = strdup(*opts), *value = strchr(key, '=');
		int ret;

		if (value)
			*value++ = '\0';
		ret = value ? syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING,
				      key, value, 0) :
			      syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, key,
				      NULL, 0);
		if (ret < 0)
			e = errno;
		free(key);
	}
	if (!e && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL,
			  0) < 0)
		e = errno;
	if (!e) {
		mnt = syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
		if (mnt < 0 || syscall(SYS_move_mount, mnt, "", AT_FDCWD, dir,
				       MOVE_MOUNT_F_EMPTY_PATH) < 0)
			e = errno;
	}
	while ((n = read(fs, msg, sizeof(msg) - 1)) > 0) {
		msg[n] = '\0';
		printf("log %s\n", msg);
	}
	if (e)
		return report_error(e);
	printf("ok\n");
	return 0;
}

int main(int argc, char *argv[])
{
	const char *cmd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "--chroot")) {
		if (chroot(argv[2]) || chdir("/"))
			return report_error(errno);
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	cmd = argc > 1 ? argv[1] : "";
	if (!strcmp(cmd, "readlink") && argc == 3)
		return cmd_readlink(argv[2]);
	if (!strcmp(cmd, "lstat") && argc == 3)
		return cmd_stat(argv[2], false);
	if (!strcmp(cmd, "stat") && argc == 3)
		return cmd_stat(argv[2], true);
	if (!strcmp(cmd, "open") && argc == 3)
		return cmd_open(argv[2]);
	if (!strcmp(cmd, "exec"))
		return cmd_exec(argc - 2, argv + 2);
	if (!strcmp(cmd, "setenv") && argc == 5) {
		setenv(argv[2], argv[3], 1);
		return cmd_readlink(argv[4]);
	}
	if (!strcmp(cmd, "threads") && argc == 4)
		return cmd_threads(atoi(argv[2]), argv[3]);
	if (!strcmp(cmd, "loop") && argc == 5)
		return cmd_loop(atol(argv[2]), argv[3], argv[4]);
	if (!strcmp(cmd, "setenv-area") && argc == 4)
		return cmd_setenv_area(argv[2], argv[3]);
	if (!strcmp(cmd, "unmap-env") && argc == 3)
		return cmd_unmap_env(argv[2]);
	if (!strcmp(cmd, "readlink-exec") && argc >= 3)
		return cmd_readlink_exec(argv[0], argv[2], argv + 3);
	if (!strcmp(cmd, "pid-reuse") && argc == 6)
		return cmd_pid_reuse(argv[2], argv[3], argv[4], argv[5]);
	if (!strcmp(cmd, "tally") && argc == 4)
		return cmd_tally(atol(argv[2]), argv[3]);
	if (!strcmp(cmd, "exec-racing") && argc == 4)
		return cmd_exec_racing(argv[2], atoi(argv[3]));
	if (!strcmp(cmd, "stat-loop") && argc == 4)
		return cmd_stat_loop(atol(argv[2]), argv[3]);
	if (!strcmp(cmd, "uring-open") && argc == 3)
		return cmd_uring_open(argv[2]);
	if (!strcmp(cmd, "fsmount") && argc >= 4)
		return cmd_fsmount(argv[2], argv[3], argv + 4);
	fprintf(stderr, "usage: see the comment at the top of vsprobe.c\n");
	return 2;
}
