// SPDX-License-Identifier: GPL-2.0-only
/*
 * reader.c - reading a caller's environment without ever waiting on it.
 *
 * A caller's environment is its own memory, and it chooses what backs it:
 * prctl(PR_SET_MM_MAP) moves the exec-time area anywhere, and execve's
 * envp may point anywhere, for instance into a mapping of a file on the
 * caller's own FUSE mount that never answers.  Reading such a page through
 * /proc/TID/environ or /proc/TID/mem sleeps until that server answers, in
 * the reading task, uninterruptibly once the server has taken the request.
 * No check beforehand helps: another thread of the caller can remap the
 * page between the check and the read.
 *
 * So the daemon never reads caller memory itself.  A reader is a child
 * process that does, one variable at a time, and answers over a socket; a
 * request has a deadline, and a reader that misses it is killed and
 * replaced, the request then answered as for a secure-exec caller.  A
 * reader that does not die at once (it sleeps uninterruptibly) is counted
 * against the owner of the caller it was reading for (caller.c: the owner
 * of its outermost user namespace, so all of a user's subordinate uids are
 * one): while that owner has one, its callers' reads fail at once instead
 * of taking another reader.  Nobody else's: there is no cap in all that
 * would answer everyone as secure.  An owner holds at most as many stuck
 * readers as there are workers, so the table is bounded by the users.
 *
 * A reader only reads: the core's scans (core/caller.c), the kernel
 * module's too, decide what to read and bound it by what execve accepts
 * (VARSYM_ENV_MAX in all, MAX_ARG_STRLEN per string): anything past that
 * counts as absent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "varsym_core.h"
#include "reader.h"

#define CHUNK 4096
#define PTR_BATCH 64
#define STUCK_MIN 32		/* the table's first size */

struct vsfuse_reader {
	pid_t pid;		/* 0: none running */
	int sock;		/* our end of its socket */
};

struct request {
	uint32_t ptr_size;	/* envp's pointers: 4 or 8 */
	uint64_t envp;		/* 0: the exec-time area, environ */
	uint32_t size;		/* room for the value */
	uint32_t name_len;
	char name[VARSYM_NAME_MAX];
};

/*
 * The most a core getenv() asks for: a search's variable.  A reply is one
 * message of the result and then the value's bytes, which the daemon
 * receives straight into the caller's buffer.
 */
#define VALUE_MAX VARSYM_SEARCH_VALUE_MAX
_Static_assert(VALUE_MAX >= VARSYM_PATH_MAX, "a template's values fit");

struct reply {
	int64_t result;		/* the core's getenv() result, or -EPERM */
	char value[VALUE_MAX];
};
_Static_assert(offsetof(struct reply, value) == sizeof(int64_t),
	       "the daemon receives the result, then the value");

/*
 * Readers given up on, with the owner they read for, until they are
 * reaped.  Under stuck_lock.
 */
static struct stuck {
	pid_t pid;
	uid_t owner;
} *stuck;
static unsigned int nstuck, stuck_size;
static pthread_mutex_t stuck_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the reader process: only system calls and the core's scans ---- */

/* /proc/TID/mem: a page that cannot be read fails the pread. */
static ssize_t mem_read(void *ctx, void *dst, unsigned long long addr,
			size_t n)
{
	ssize_t r = pread(*(int *)ctx, dst, n, (off_t)addr);

	return r < 0 ? -EFAULT : r;
}

/*
 * /proc/TID/environ, addr being an offset in it: the kernel stops it at
 * the area's end or at a page it cannot read, and either is its end.
 */
static ssize_t environ_read(void *ctx, void *dst, unsigned long long addr,
			    size_t n)
{
	ssize_t r = pread(*(int *)ctx, dst, n, (off_t)addr);

	return r < 0 ? 0 : r;
}

static const struct varsym_mem_ops mem_ops = { .read = mem_read };
static const struct varsym_mem_ops environ_ops = { .read = environ_read };

/*
 * The value bytes a reply carries: the value, or for -ENAMETOOLONG the
 * part that fitted (a search reads a long PATH's first directories).
 */
static size_t reply_bytes(int64_t result, size_t size)
{
	if (result == -ENAMETOOLONG)
		return size;
	return result > 0 ? (size_t)result : 0;
}

static int64_t serve(int dirfd, const struct request *q, char *value)
{
	unsigned char ptrs[PTR_BATCH * 8];	/* pointers per pread */
	char chunk[CHUNK];	/* a string's first 256 bytes, then a page */
	struct varsym_env_scan s;
	int fd;
	struct varsym_mem m = {
		.ctx = &fd,
		.buf = chunk, .buf_size = sizeof(chunk),
		.ptrs = ptrs, .ptrs_size = PTR_BATCH * q->ptr_size,
		.page_size = sysconf(_SC_PAGESIZE),
	};

	if (q->name_len > VARSYM_NAME_MAX || q->size > VALUE_MAX ||
	    (q->ptr_size != 4 && q->ptr_size != 8))
		return -EINVAL;
	varsym_env_scan_init(&s, q->name, q->name_len, value, q->size);
	if (q->envp) {
		m.ops = &mem_ops;
		fd = openat(dirfd, "mem", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT || errno == ESRCH ?
			       varsym_env_scan_result(&s) : -EPERM;
		/* mem_read fails only with -EFAULT: the scan returns 0 */
		varsym_scan_envp(&m, &s, q->envp, q->ptr_size);
	} else {
		m.ops = &environ_ops;
		fd = openat(dirfd, "environ", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return varsym_env_scan_result(&s);
		/* its size is not known: a read of 0 ends it */
		varsym_scan_area(&m, &s, 0, ULLONG_MAX);
	}
	close(fd);
	return varsym_env_scan_result(&s);
}

static __attribute__((noreturn)) void reader_main(int sock)
{
	static struct reply r;
	struct request q;
	char cbuf[CMSG_SPACE(sizeof(int))];

	for (;;) {
		struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *cm;
		int dirfd = -1;
		ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

		if (n <= 0)
			_exit(0);	/* the daemon closed its end */
		cm = CMSG_FIRSTHDR(&msg);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&dirfd, CMSG_DATA(cm), sizeof(dirfd));
		r.result = n == sizeof(q) && dirfd >= 0 ?
			   serve(dirfd, &q, r.value) : -EINVAL;
		if (dirfd >= 0)
			close(dirfd);
		send(sock, &r, offsetof(struct reply, value) +
		     reply_bytes(r.result, q.size), MSG_NOSIGNAL);
	}
}

/* ---- the daemon's side ---- */

/* Forks a reader.  The child keeps nothing of ours but its socket. */
static int spawn(struct vsfuse_reader *r)
{
	pid_t parent = getpid();
	int sv[2], devnull;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	r->pid = fork();
	if (r->pid < 0) {
		r->pid = 0;
		close(sv[0]);
		close(sv[1]);
		return -EAGAIN;
	}
	if (r->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_IGN);
		/* never hold the daemon's /dev/fuse, pipes or terminal */
		devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		dup2(sv[1], 3);
		close_range(4, ~0U, 0);
		reader_main(3);
	}
	close(sv[1]);
	r->sock = sv[0];
	return 0;
}

/* Reaps readers given up on that have exited; under stuck_lock. */
static void reap(void)
{
	unsigned int i = 0;

	while (i < nstuck) {
		if (waitpid(stuck[i].pid, NULL, WNOHANG) == 0) {
			i++;
			continue;
		}
		stuck[i] = stuck[--nstuck];
	}
}

/* Kills a reader that missed its deadline, and remembers it until reaped. */
static void give_up(struct vsfuse_reader *r, uid_t owner)
{
	struct stuck *more;
	unsigned int size;

	kill(r->pid, SIGKILL);
	close(r->sock);
	pthread_mutex_lock(&stuck_lock);
	reap();
	if (nstuck == stuck_size) {
		size = stuck_size ? stuck_size * 2 : STUCK_MIN;
		more = reallocarray(stuck, size, sizeof(*stuck));
		if (more) {
			stuck = more;
			stuck_size = size;
		}
	}
	if (nstuck < stuck_size) {
		stuck[nstuck].pid = r->pid;
		stuck[nstuck].owner = owner;
		nstuck++;
	}
	/* no memory: not tracked, init reaps it after we exit */
	pthread_mutex_unlock(&stuck_lock);
	r->pid = 0;
	r->sock = -1;
}

bool vsfuse_reader_stuck_for(uid_t owner)
{
	bool found = false;
	unsigned int i;

	pthread_mutex_lock(&stuck_lock);
	reap();
	for (i = 0; i < nstuck && !found; i++)
		found = stuck[i].owner == owner;
	pthread_mutex_unlock(&stuck_lock);
	return found;
}

int vsfuse_reader_new(struct vsfuse_reader **out)
{
	struct vsfuse_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->sock = -1;
	*out = r;
	return 0;
}

void vsfuse_reader_free(struct vsfuse_reader *r)
{
	if (!r)
		return;
	if (r->pid) {
		close(r->sock);		/* it exits on end of file */
		waitpid(r->pid, NULL, 0);
	}
	free(r);
}

/* Milliseconds left until deadline, rounded up; 0 when past. */
static int ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long long ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (deadline->tv_sec - now.tv_sec) * 1000000000LL +
	     (deadline->tv_nsec - now.tv_nsec);
	return ns <= 0 ? 0 : (int)((ns + 999999) / 1000000);
}

static int send_request(struct vsfuse_reader *r, const struct request *q,
			int dirfd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)q, .iov_len = sizeof(*q) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &dirfd, sizeof(int));
	return sendmsg(r->sock, &msg, MSG_NOSIGNAL) == sizeof(*q) ? 0 : -EIO;
}

ssize_t vsfuse_reader_getenv(struct vsfuse_reader *r,
			     const struct vsfuse_env_where *w,
			     const char *name, size_t name_len, char *buf,
			     size_t size)
{
	struct request q = {
		.ptr_size = w->ptr_size ? w->ptr_size : 8,
		.envp = w->envp,
		.size = size > VALUE_MAX ? VALUE_MAX : size,
		.name_len = name_len,
	};
	struct pollfd pfd = { .events = POLLIN };
	int64_t result;
	struct iovec iov[2] = {
		{ .iov_base = &result, .iov_len = sizeof(result) },
		{ .iov_base = buf, .iov_len = q.size },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;
	int ms;

	if (name_len > VARSYM_NAME_MAX || w->dirfd < 0)
		return -ENOENT;
	ms = ms_left(w->deadline);
	if (!ms || vsfuse_reader_stuck_for(w->owner))
		return -ETIMEDOUT;
	if (!r->pid && spawn(r))
		return -ETIMEDOUT;	/* no reader: as if it were late */
	memcpy(q.name, name, name_len);
	if (send_request(r, &q, w->dirfd))
		goto late;
	pfd.fd = r->sock;
	if (poll(&pfd, 1, ms) != 1)
		goto late;
	n = recvmsg(r->sock, &msg, 0);
	if (n < (ssize_t)sizeof(result) || (msg.msg_flags & MSG_TRUNC) ||
	    result > q.size ||
	    (size_t)n != sizeof(result) + reply_bytes(result, q.size))
		goto late;
	return result;
late:
	give_up(r, w->owner);
	return -ETIMEDOUT;
}
