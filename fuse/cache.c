// SPDX-License-Identifier: GPL-2.0-only
/*
 * cache.c - each calling thread's answers, kept until it execs or exits.
 *
 * Reading /proc/PID/environ costs 6-8 us, most of a FUSE round trip.  docs/SPEC.md
 * section 4 lets us capture a process's answer at its first follow after an
 * execve and keep it until its next execve or exit.  The kernel's
 * process-event connector tells us of both: it queues the EXEC event before
 * execve returns to the new program, and the EXIT event before the pid can
 * be reused, so draining the socket before looking at the cache frees
 * records early.  But the connector drops an event silently when its
 * GFP_NOWAIT allocation fails, so events are never the proof:
 *
 * Where the exec hooks' BPF program runs (a root daemon, exec_hooks.h),
 * the proof is the thread's stamp: one word the program rewrites at each
 * exec, exit and fork of that tid, read from a map shared with us, with
 * no system call.  The record keeps the stamp it saw before the answer was
 * computed, and a hit must see the same.  The program also marks the
 * stamp when a follow of a FUSE link is made inside execve(2), before our
 * request is sent: only then does a hit read /proc/TID/syscall (below).
 * A stamp another thread took over (its tid shares the slot) or one that
 * says "in execve" when the record is made is no proof: that record falls
 * back on the one below.
 *
 * Elsewhere each record holds its thread's auxiliary vector as saved at
 * exec (/proc/TID/auxv, mm->saved_auxv), read when the record is made,
 * before the answer is computed; every hit reads it again and must find the
 * same bytes.  A program started with AT_SECURE always differs from one
 * started without (AT_SECURE, and AT_EUID or AT_EGID for set-id), whatever
 * the process did to its own vector (PR_SET_MM_MAP), since an answer made
 * with AT_SECURE set is the secure one anyway; with ASLR, any exec moves
 * AT_RANDOM, AT_EXECFN and the vDSO.  A held descriptor would not do: it
 * stays bound to the old mm, which a vfork parent or a CLONE_VM sibling
 * keeps alive.  Nor would the connector's per-CPU sequence numbers: a lost
 * event leaves no gap when the allocation of the message itself failed,
 * and our filter below makes gaps anyway.  Nor any of the caller's memory
 * (AT_RANDOM's bytes): a caller can make a read of it block.  The open
 * and read cost about 4-5 us on a hit of about 30 (docs/SECURITY.md).
 *
 * Only EXEC and EXIT events reach the socket (a socket filter on every
 * kernel, the connector's own from 6.6), and one drain reads at most
 * DRAIN_MAX of them: past that it forgets all, so no user's burst of
 * events makes another user's request wait for it.  If the events cannot
 * be had (the connector needs CAP_NET_ADMIN), nothing is cached.
 *
 * A thread inside execve(2), in any ABI, is answered from execve's envp,
 * never from the cache: each thread's record keeps /proc/TID/syscall open
 * to check that with one read of about 1 us, on every hit without a stamp
 * (the descriptor stays bound to that thread, so a reused tid cannot read
 * another's).  A thread the read
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
#include <linux/filter.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "cache.h"
#include "caller.h"
#include "exec_hooks.h"

#define BUCKETS 1024
#define ANSWERS 8		/* links remembered per thread */
#define DRAIN_MAX 64		/* events read per request, at most */
#define AUXV_MAX 1024		/* more than any kernel's saved_auxv */

/*
 * The connector's per-socket event filter, from Linux 6.6
 * (include/uapi/linux/cn_proc.h); older headers lack it.  Kernels before
 * 6.6 ignore a LISTEN of this size altogether: we then send the plain one.
 */
struct vs_proc_input {
	enum proc_cn_mcast_op mcast_op;
	__u32 event_type;
};

#ifdef VSFUSE_BENCH
bool vsfuse_cache_drop_exec;
#endif

struct answer {
	uint64_t link;		/* 0: unused */
	ssize_t len;		/* or -errno */
	char *target;
	void *key;		/* what else it was made with, or NULL */
	size_t key_len;
};

struct thread {
	struct thread *next;	/* in its bucket */
	pid_t tid;
	unsigned int word;	/* its program's word size; 0: no answer yet */
	int dir_fd;		/* /proc/TID, bound to the thread */
	int syscall_fd;
	uint64_t stamp;		/* the proof it runs the same program, or 0: */
	uint64_t stamp_count;	/* (the stamp's whole exec_count) */
	size_t auxv_len;	/* then this one */
	char *auxv;
	unsigned int replace;	/* the next answer slot to reuse */
	struct answer answers[ANSWERS];
};

struct vsfuse_cache {
	pthread_mutex_t lock;
	int sock;		/* the process-event connector */
	int procfd;
	uint64_t events;	/* exec, exit events, forgets so far */
	size_t threads, max_threads;
	const volatile unsigned long long *stamps, *count;	/* or NULL */
	struct thread *buckets[BUCKETS];
};

static struct thread **bucket(struct vsfuse_cache *c, pid_t tid)
{
	return &c->buckets[(unsigned int)tid % BUCKETS];
}

static void free_thread(struct thread *t)
{
	int i;

	for (i = 0; i < ANSWERS; i++) {
		free(t->answers[i].target);
		free(t->answers[i].key);
	}
	close(t->syscall_fd);
	close(t->dir_fd);
	free(t->auxv);
	free(t);
}

/*
 * Drops thread tid; with all set, every thread.  Under c->lock.  Only a
 * flush looks beyond tid's own bucket.
 */
static void forget(struct vsfuse_cache *c, pid_t tid, bool all)
{
	size_t b, first = 0, end = BUCKETS;

	if (!all) {
		first = bucket(c, tid) - c->buckets;
		end = first + 1;
	}
	for (b = first; b < end; b++) {
		struct thread **p = &c->buckets[b], *t;

		while ((t = *p)) {
			if (all || t->tid == tid) {
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
	forget(c, 0, true);
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

/*
 * Reads the queued events, at most DRAIN_MAX: past that, forgets all
 * rather than make this request wait for them.  Under c->lock.
 */
static void drain(struct vsfuse_cache *c)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	unsigned int reads = 0;
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
		if (++reads > DRAIN_MAX) {	/* this one and the rest */
			forget_all(c);
			return;
		}
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			struct proc_event ev;

			if (!read_event(h, &ev))
				continue;
#ifdef VSFUSE_BENCH
			if (vsfuse_cache_drop_exec &&
			    ev.what == PROC_EVENT_EXEC)
				continue;
#endif
			/*
			 * The other threads of an exec's process died first,
			 * each with its EXIT event: only its tid is left.
			 */
			if (ev.what == PROC_EVENT_EXEC) {
				forget(c, ev.event_data.exec.process_pid,
				       false);
				c->events++;
			} else if (ev.what == PROC_EVENT_EXIT) {
				forget(c, ev.event_data.exit.process_pid,
				       false);
				c->events++;
			}
		}
	}
}

/*
 * LISTEN, with the 6.6 filter to EXEC and EXIT events when filter is set
 * (which older kernels ignore: no LISTEN at all), plain otherwise.
 */
static int subscribe(int sock, bool filter)
{
	struct {
		struct nlmsghdr h;
		struct cn_msg msg;
		struct vs_proc_input in;
	} __attribute__((packed)) req = {
		.h = {
			.nlmsg_type = NLMSG_DONE,
		},
		.msg = {
			.id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC },
		},
		.in = {
			.mcast_op = PROC_CN_MCAST_LISTEN,
			.event_type = PROC_EVENT_EXEC | PROC_EVENT_EXIT,
		},
	};
	size_t size = filter ? sizeof(req) :
		      offsetof(typeof(req), in) + sizeof(req.in.mcast_op);

	req.h.nlmsg_len = size;
	req.msg.len = size - offsetof(typeof(req), in);
	return send(sock, &req, size, 0) == (ssize_t)size ? 0 : -errno;
}

/*
 * A socket filter that keeps only EXEC and EXIT events, on any kernel: the
 * others (fork, comm, uid... any user makes them at will) are not even
 * queued.  The event's "what" follows the netlink and connector headers;
 * BPF loads words in network order.
 */
static int attach_filter(int sock)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NLMSG_HDRLEN +
			 offsetof(struct cn_msg, data) +
			 offsetof(struct proc_event, what)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXEC), 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXIT), 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
	};
	struct sock_fprog prog = {
		.len = sizeof(code) / sizeof(code[0]),
		.filter = code,
	};

	return setsockopt(sock, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
			  sizeof(prog)) ? -errno : 0;
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

int vsfuse_cache_new(struct vsfuse_cache **out,
		     struct vsfuse_exec_hooks *hooks)
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
	c->procfd = -1;
	c->sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			 NETLINK_CONNECTOR);
	if (c->sock < 0) {
		err = -errno;
		goto fail;
	}
	/* a busy machine forks a lot: room for a burst of events */
	if (setsockopt(c->sock, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(c->sock, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	c->procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->procfd < 0 || (err = attach_filter(c->sock)) ||
	    bind(c->sock, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (err = subscribe(c->sock, true))) {
		err = err ? err : -errno;
		goto fail;
	}
	if (!events_arrive(c->sock) &&
	    (subscribe(c->sock, false) || !events_arrive(c->sock))) {
		err = -EPERM;
		goto fail;
	}
	/* each thread record holds two descriptors: stay well under the limit */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	c->max_threads = rl.rlim_cur > 12288 ? 4096 : rl.rlim_cur / 3;
	c->stamps = vsfuse_exec_hooks_stamps(hooks, &c->count);
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
fail:
	if (c->sock >= 0)
		close(c->sock);
	if (c->procfd >= 0)
		close(c->procfd);
	free(c);
	return err ? err : -EPERM;
}

void vsfuse_cache_free(struct vsfuse_cache *c)
{
	if (!c)
		return;
	forget_all(c);
	close(c->sock);
	close(c->procfd);
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

/*
 * The auxiliary vector of the program thread dir_fd runs now, as the
 * kernel saved it (never the caller's memory), into buf: its length, or 0
 * when it cannot be had.  Opened each time: a descriptor is bound to the
 * mm of its open.
 */
static size_t read_auxv(int dir_fd, char *buf)
{
	int fd = openat(dir_fd, "auxv", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, AUXV_MAX);
	close(fd);
	return n > 0 && n < AUXV_MAX ? (size_t)n : 0;
}

/* Whether t's thread still runs the program its record was made in. */
static bool same_program(const struct thread *t)
{
	char now[AUXV_MAX];
	size_t n = read_auxv(t->dir_fd, now);

	return n && n == t->auxv_len && !memcmp(now, t->auxv, n);
}

static uint64_t load(const volatile unsigned long long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * tid's stamp as a proof: its whole count in *count, or 0 when it is none
 * (another thread's, or in an execve).  The count is read after the stamp,
 * so it is at least the stamp's own.
 */
static uint64_t stamp_of(const struct vsfuse_cache *c, pid_t tid,
			 uint64_t *count)
{
	uint64_t stamp;

	if (!c->stamps)
		return 0;
	stamp = load(&c->stamps[(unsigned int)tid % VSFUSE_STAMP_SLOTS]);
	if (vsfuse_stamp_tid(stamp) != (unsigned int)tid ||
	    (stamp & VSFUSE_STAMP_IN_EXECVE))
		return 0;
	*count = vsfuse_stamp_count(stamp, load(c->count));
	return stamp;
}

/* What a record's stamp says now. */
enum stamp_says { NO_STAMP, SAME_PROGRAM, MAYBE_IN_EXECVE, STALE };

static enum stamp_says stamp_says(const struct vsfuse_cache *c,
				  const struct thread *t)
{
	uint64_t now;

	if (!t->stamp)
		return NO_STAMP;
	now = load(&c->stamps[(unsigned int)t->tid % VSFUSE_STAMP_SLOTS]);
	/* past the span, a new stamp could repeat an old one's count */
	if (load(c->count) - t->stamp_count >= VSFUSE_STAMP_COUNT_SPAN)
		return STALE;
	if (now == t->stamp)
		return SAME_PROGRAM;
	if (now == (t->stamp | VSFUSE_STAMP_IN_EXECVE))
		return MAYBE_IN_EXECVE;
	return STALE;
}

/* A record with no answer yet, made before the first is computed. */
static struct thread *new_thread(struct vsfuse_cache *c, pid_t tid)
{
	struct thread *t = calloc(1, sizeof(*t));
	char name[16], auxv[AUXV_MAX];

	if (!t)
		return NULL;
	t->tid = tid;
	t->syscall_fd = -1;
	snprintf(name, sizeof(name), "%d", (int)tid);
	t->dir_fd = openat(c->procfd, name,
			   O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->dir_fd < 0)
		goto fail;
	t->syscall_fd = openat(t->dir_fd, "syscall", O_RDONLY | O_CLOEXEC);
	if (t->syscall_fd < 0)
		goto fail;
	t->stamp = stamp_of(c, tid, &t->stamp_count);
	if (t->stamp)
		return t;
	t->auxv_len = read_auxv(t->dir_fd, auxv);
	if (!t->auxv_len || !(t->auxv = malloc(t->auxv_len)))
		goto fail;
	memcpy(t->auxv, auxv, t->auxv_len);
	return t;
fail:
	if (t->syscall_fd >= 0)
		close(t->syscall_fd);
	if (t->dir_fd >= 0)
		close(t->dir_fd);
	free(t);
	return NULL;
}

/*
 * Whether record t may answer its thread now: USE, BYPASS (it may be
 * inside an execve), or FORGET (stale).  Under c->lock.
 */
enum verdict { USE, BYPASS, FORGET };

static enum verdict check_thread(const struct thread *t,
				 enum stamp_says says)
{
	bool gone;

	if (says == SAME_PROGRAM)
		return USE;
	if (says == STALE)
		return FORGET;
	if (t->word && !outside_execve(t, &gone))
		return gone ? FORGET : BYPASS;	/* gone: exited, or not ours */
	if (says == NO_STAMP && !same_program(t))
		return FORGET;			/* an exec we did not hear of */
	return USE;
}

/* Forgets a thread found stale, and any answer being computed for it. */
static void forget_stale(struct vsfuse_cache *c, pid_t tid)
{
	forget(c, tid, false);
	c->events++;
}

enum vsfuse_cache_result vsfuse_cache_get(struct vsfuse_cache *c, pid_t tid,
					  uint64_t link, const void *key,
					  size_t key_len, char *out,
					  size_t size, ssize_t *len,
					  uint64_t *stamp)
{
	enum vsfuse_cache_result ret = VSFUSE_CACHE_MISS;
	struct thread *t, *fresh = NULL;
	int i;

	pthread_mutex_lock(&c->lock);
	drain(c);
	t = find(c, tid);
	switch (t ? check_thread(t, stamp_says(c, t)) : USE) {
	case USE:
		break;
	case BYPASS:
		*stamp = c->events;
		ret = VSFUSE_CACHE_BYPASS;
		goto out;
	case FORGET:
		forget_stale(c, tid);
		t = NULL;
		break;
	}
	*stamp = c->events;
	if (!t) {
		/*
		 * The record, and its proof, before the answer is computed:
		 * an exec after this point fails the proof at the next hit.
		 */
		if (c->threads >= c->max_threads)
			forget_all(c);
		*stamp = c->events;
		pthread_mutex_unlock(&c->lock);
		fresh = new_thread(c, tid);
		pthread_mutex_lock(&c->lock);
		drain(c);
		if (fresh && c->events == *stamp && !find(c, tid)) {
			fresh->next = *bucket(c, tid);
			*bucket(c, tid) = fresh;
			c->threads++;
			fresh = NULL;
		}
		goto out;
	}
	for (i = 0; i < ANSWERS; i++) {
		struct answer *a = &t->answers[i];

		if (a->link != link || a->key_len != key_len ||
		    (key_len && memcmp(a->key, key, key_len)))
			continue;
		ret = VSFUSE_CACHE_HIT;
		*len = a->len;
		if (a->len >= 0) {
			if ((size_t)a->len >= size)
				*len = -ENAMETOOLONG;
			else
				memcpy(out, a->target, a->len + 1);
		}
		break;
	}
out:
	pthread_mutex_unlock(&c->lock);
	if (fresh)
		free_thread(fresh);
	return ret;
}

void vsfuse_cache_forget_all(struct vsfuse_cache *c)
{
	pthread_mutex_lock(&c->lock);
	forget_all(c);
	pthread_mutex_unlock(&c->lock);
}

void vsfuse_cache_put(struct vsfuse_cache *c, pid_t tid, int dirfd,
		      unsigned int word, uint64_t link, const void *key,
		      size_t key_len, ssize_t len, const char *target,
		      uint64_t stamp)
{
	struct thread *t;
	struct answer *a;
	char *copy = NULL;
	void *key_copy = NULL;

	if (len >= 0 && !(copy = strdup(target)))
		return;
	if (key_len && !(key_copy = malloc(key_len))) {
		free(copy);
		return;
	}
	if (key_len)
		memcpy(key_copy, key, key_len);
	pthread_mutex_lock(&c->lock);
	drain(c);
	/*
	 * Only into the record the get made or checked before the answer
	 * was computed: an exec, exit or forget since, and it may be from
	 * before an exec.  Skip it, to be sure.
	 */
	t = find(c, tid);
	if (c->events != stamp || !t)
		goto out;
	t->word = word;
	for (a = t->answers; a < t->answers + ANSWERS; a++)
		if (a->link == link)
			break;
	if (a == t->answers + ANSWERS)
		a = &t->answers[t->replace++ % ANSWERS];
	free(a->target);
	free(a->key);
	*a = (struct answer){ .link = link, .len = len, .target = copy,
			      .key = key_copy, .key_len = key_len };
	copy = key_copy = NULL;
out:
	pthread_mutex_unlock(&c->lock);
	free(copy);
	free(key_copy);
}
