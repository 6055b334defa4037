// SPDX-License-Identifier: GPL-2.0-only
/*
 * cache.c - each calling thread's answers, kept until it execs or exits.
 *
 * Reading /proc/PID/environ costs 6-8 us, most of a FUSE round trip.  docs/SPEC.md
 * section 4 lets us capture a process's answer at its first follow after an
 * execve and keep it until its next execve or exit, provided we notice them
 * before the process's next request.  The kernel's process-event connector
 * tells us: it queues the EXEC event on our socket before execve returns to
 * the new program, and the EXIT event before the pid can be reused, so
 * draining the socket after a request arrived, and before looking at the
 * cache, is enough.  If the events cannot be had (the connector needs
 * CAP_NET_ADMIN), or some were lost (ENOBUFS), nothing is cached, or all is
 * forgotten.
 *
 * A thread inside execve(2), in any ABI, is answered from execve's envp,
 * never from the cache: each thread's record keeps /proc/TID/syscall open
 * to check that with one read of about 1 us (the descriptor stays bound to
 * that thread, so a reused tid cannot read another's).  A thread the read
 * cannot place (still on its CPU, an unknown ABI) is not answered here
 * either: the caller then opens it with all due care, outside the lock.
 *
 * Locking: c->lock protects everything here, and is never held across a
 * wait: under it, only reads that return at once (the event socket,
 * without blocking, and one read of a syscall file).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "cache.h"
#include "caller.h"

#define BUCKETS 1024
#define ANSWERS 8		/* links remembered per thread */

struct answer {
	uint64_t link;		/* 0: unused */
	ssize_t len;		/* or -errno */
	char *target;
};

struct thread {
	struct thread *next;	/* in its bucket */
	pid_t tid, tgid;
	unsigned int word;	/* its program's word size, for the syscall */
	int syscall_fd;
	unsigned int replace;	/* the next answer slot to reuse */
	struct answer answers[ANSWERS];
};

struct vsfuse_cache {
	pthread_mutex_t lock;
	int sock;		/* the process-event connector */
	uint64_t events;	/* exec and exit events handled so far */
	size_t threads, max_threads;
	struct thread *buckets[BUCKETS];
};

static struct thread **bucket(struct vsfuse_cache *c, pid_t tid)
{
	return &c->buckets[(unsigned int)tid % BUCKETS];
}

static void free_thread(struct thread *t)
{
	int i;

	for (i = 0; i < ANSWERS; i++)
		free(t->answers[i].target);
	close(t->syscall_fd);
	free(t);
}

/*
 * Drops thread tid and, if tgid is not 0, every thread of process tgid;
 * with all set, every thread.  Under c->lock.  Only an exec or a flush
 * needs to look beyond tid's own bucket.
 */
static void forget(struct vsfuse_cache *c, pid_t tid, pid_t tgid, bool all)
{
	size_t b, first = 0, end = BUCKETS;

	if (!tgid && !all) {
		first = bucket(c, tid) - c->buckets;
		end = first + 1;
	}
	for (b = first; b < end; b++) {
		struct thread **p = &c->buckets[b], *t;

		while ((t = *p)) {
			if (all || t->tid == tid || (tgid && t->tgid == tgid)) {
				*p = t->next;
				free_thread(t);
				c->threads--;
			} else {
				p = &t->next;
			}
		}
	}
}

static void forget_all(struct vsfuse_cache *c)
{
	forget(c, 0, 0, true);
	c->events++;
}

/*
 * The event in one netlink message.  It sits 4-byte aligned after the
 * headers, and holds 8-byte fields: copy it out.
 */
static bool read_event(const struct nlmsghdr *h, struct proc_event *ev)
{
	const struct cn_msg *msg = NLMSG_DATA(h);

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*msg)) ||
	    msg->len < sizeof(*ev) ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*msg) + sizeof(*ev)))
		return false;
	memcpy(ev, msg->data, sizeof(*ev));
	return true;
}

/* Reads every queued event; under c->lock. */
static void drain(struct vsfuse_cache *c)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t n;

	while ((n = recv(c->sock, buf, sizeof(buf), MSG_DONTWAIT)) != 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n < 0) {
			if (errno == ENOBUFS)	/* events were lost */
				forget_all(c);
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			return;			/* EAGAIN: all read */
		}
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			struct proc_event ev;

			if (!read_event(h, &ev))
				continue;
			if (ev.what == PROC_EVENT_EXEC) {
				forget(c, ev.event_data.exec.process_pid,
				       ev.event_data.exec.process_tgid, false);
				c->events++;
			} else if (ev.what == PROC_EVENT_EXIT) {
				forget(c, ev.event_data.exit.process_pid, 0,
				       false);
				c->events++;
			}
		}
	}
}

static int subscribe(int sock)
{
	struct {
		struct nlmsghdr h;
		struct cn_msg msg;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) req = {
		.h = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = NLMSG_DONE,
		},
		.msg = {
			.id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC },
			.len = sizeof(enum proc_cn_mcast_op),
		},
		.op = PROC_CN_MCAST_LISTEN,
	};

	return send(sock, &req, sizeof(req), 0) == sizeof(req) ? 0 : -errno;
}

/*
 * Whether events really arrive: without CAP_NET_ADMIN the kernel accepts
 * the subscription and sends nothing.  A child of ours exits: we must hear.
 */
static bool events_arrive(int sock)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	pid_t child = fork();
	int tries;

	if (child < 0)
		return false;
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	for (tries = 0; tries < 100 && poll(&pfd, 1, 10) >= 0; tries++) {
		ssize_t n = recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		for (; n > 0 && NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			struct proc_event ev;

			if (read_event(h, &ev) && ev.what == PROC_EVENT_EXIT &&
			    ev.event_data.exit.process_pid == child)
				return true;
		}
	}
	return false;
}

int vsfuse_cache_new(struct vsfuse_cache **out)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = CN_IDX_PROC,
	};
	int size = 8 << 20, err;
	struct vsfuse_cache *c;
	struct rlimit rl;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			 NETLINK_CONNECTOR);
	if (c->sock < 0) {
		err = -errno;
		goto fail;
	}
	/* a busy machine forks a lot: room for a burst of events */
	if (setsockopt(c->sock, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(c->sock, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(c->sock, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (err = subscribe(c->sock))) {
		err = -errno;
		goto fail;
	}
	if (!events_arrive(c->sock)) {
		err = -EPERM;
		goto fail;
	}
	/* each thread record holds a descriptor: stay well under the limit */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	c->max_threads = rl.rlim_cur > 8192 ? 4096 : rl.rlim_cur / 2;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
fail:
	if (c->sock >= 0)
		close(c->sock);
	free(c);
	return err ? err : -EPERM;
}

void vsfuse_cache_free(struct vsfuse_cache *c)
{
	if (!c)
		return;
	forget_all(c);
	close(c->sock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static struct thread *find(struct vsfuse_cache *c, pid_t tid)
{
	struct thread *t;

	for (t = *bucket(c, tid); t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

/* Whether thread t is in a system call other than execve, for sure. */
static bool outside_execve(const struct thread *t, bool *gone)
{
	unsigned int ptr_size;
	char line[256];
	uint64_t envp;
	ssize_t n = pread(t->syscall_fd, line, sizeof(line) - 1, 0);

	*gone = n <= 0;
	if (n <= 0)
		return false;
	line[n] = '\0';
	return vsfuse_syscall_parse(line, t->word, &envp, &ptr_size) ==
	       VSFUSE_IN_OTHER;
}

ssize_t vsfuse_cache_get(struct vsfuse_cache *c, pid_t tid, uint64_t link,
			 char *out, size_t size, uint64_t *stamp)
{
	ssize_t ret = VSFUSE_CACHE_MISS;
	struct thread *t;
	bool gone;
	int i;

	pthread_mutex_lock(&c->lock);
	drain(c);
	*stamp = c->events;
	t = find(c, tid);
	if (!t)
		goto out;
	if (!outside_execve(t, &gone)) {
		if (gone)	/* exited, or not ours to read any more */
			forget(c, tid, 0, false);
		else
			ret = VSFUSE_CACHE_BYPASS;
		goto out;
	}
	for (i = 0; i < ANSWERS; i++) {
		struct answer *a = &t->answers[i];

		if (a->link != link)
			continue;
		ret = a->len;
		if (a->len >= 0) {
			if ((size_t)a->len >= size)
				ret = -ENAMETOOLONG;
			else
				memcpy(out, a->target, a->len + 1);
		}
		break;
	}
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* The thread group of tid, from /proc/TID/status. */
static pid_t tgid_of(int dirfd)
{
	char buf[2048], *p;
	int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nTgid:");
	return p ? (pid_t)atoi(p + 6) : -1;
}

static struct thread *new_thread(struct vsfuse_cache *c, pid_t tid,
				 int dirfd, unsigned int word)
{
	struct thread *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tid = tid;
	t->word = word;
	t->tgid = tgid_of(dirfd);
	t->syscall_fd = openat(dirfd, "syscall", O_RDONLY | O_CLOEXEC);
	if (t->tgid <= 0 || t->syscall_fd < 0) {
		if (t->syscall_fd >= 0)
			close(t->syscall_fd);
		free(t);
		return NULL;
	}
	return t;
}

void vsfuse_cache_put(struct vsfuse_cache *c, pid_t tid, int dirfd,
		      unsigned int word, uint64_t link, ssize_t len,
		      const char *target, uint64_t stamp)
{
	struct thread *t, *fresh = NULL;
	struct answer *a;
	char *copy = NULL;

	if (len >= 0 && !(copy = strdup(target)))
		return;
	pthread_mutex_lock(&c->lock);
	drain(c);
	/*
	 * An exec or exit since we started reading /proc: our answer may be
	 * from before an exec in this process.  Skip it, to be sure.
	 */
	if (c->events != stamp)
		goto out;
	t = find(c, tid);
	if (!t) {
		if (c->threads >= c->max_threads)
			forget_all(c);
		/* the record's descriptors: /proc reads, not under the lock */
		pthread_mutex_unlock(&c->lock);
		fresh = new_thread(c, tid, dirfd, word);
		pthread_mutex_lock(&c->lock);
		drain(c);
		if (!fresh || c->events != stamp || (t = find(c, tid)))
			goto out;
		t = fresh;
		fresh = NULL;
		t->next = *bucket(c, tid);
		*bucket(c, tid) = t;
		c->threads++;
	}
	for (a = t->answers; a < t->answers + ANSWERS; a++)
		if (a->link == link)
			break;
	if (a == t->answers + ANSWERS)
		a = &t->answers[t->replace++ % ANSWERS];
	free(a->target);
	*a = (struct answer){ .link = link, .len = len, .target = copy };
	copy = NULL;
out:
	pthread_mutex_unlock(&c->lock);
	if (fresh)
		free_thread(fresh);
	free(copy);
}
