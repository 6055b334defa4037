// SPDX-License-Identifier: GPL-2.0-only
/*
 * caller.c - who is asking: a FUSE request's thread, and the facts the
 * core's rule (varsym_walk_plan(), core/exec_rule.h) needs of it.
 *
 * With the exec hooks (exec_hooks.c: a daemon serving every user, where
 * the kernel lets BPF attach to its LSM hooks), the facts come from the
 * request's snapshot, which the BPF program took in the caller's own
 * context before the request was sent: where in an execve, the call's
 * ABI and envp, whether a file of the exec gains privileges.  /proc gives
 * only AT_SECURE (auxv, read once per answer computed).
 *
 * Without them, or for a request without a snapshot, the caller's
 * /proc/TID/syscall tells an execve in any ABI of the machine (never from
 * anything the process may change: all of them at once), and nothing
 * tells which walk of it this is: doubt.  The rule then resolves it as
 * secure on a mount that serves others, and as the caller's own choice on
 * one that serves only its owner, which cannot be on a privileged
 * program's path.
 *
 * The caller's environment, exec-time (environ) or execve's envp (mem),
 * is its own memory, which it can make block: reader.c reads that, under
 * a deadline.  Every file is opened relative to one O_PATH descriptor of
 * /proc/TID, so a thread that dies and whose id is reused half-way cannot
 * mix two processes' answers; none of these reads walks a path through
 * our mount, and none waits on the caller.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "caller.h"
#include "reader.h"

/**
 * vsfuse_syscall_abi - the ABIs a caller of word may call in, as the
 *	daemon without its exec hooks sees them
 * @word: the caller's word size (from where its stack starts: a hint the
 *	process may change, so never the only one)
 *
 * On x86 every caller may use all three ABIs (a 64-bit process can use
 * the 32-bit entry, int $0x80), and on arm64 both; the daemon cannot tell
 * which a call came in by, and the core looks in all of them at once.
 * Elsewhere the build's own numbers hold for callers of the daemon's own
 * word size; other callers' ABIs are unknown.
 */
enum varsym_abi vsfuse_syscall_abi(unsigned int word)
{
#if defined(__x86_64__) || defined(__i386__)
	(void)word;
	return VARSYM_ABI_X86;
#elif defined(__aarch64__)
	(void)word;
	return VARSYM_ABI_ARM64;
#else
	return word == sizeof(long) ? VARSYM_ABI_NATIVE : VARSYM_ABI_UNKNOWN;
#endif
}

/**
 * vsfuse_syscall_parse - what /proc/TID/syscall says
 * @line: its text
 * @abi: the caller's ABIs (vsfuse_syscall_abi())
 * @envp: execve's envp, when in execve
 * @ptr_size: the size of its pointers
 *
 * The file says "running" while the thread is on a CPU (as a caller may be
 * for a moment after its request reached us), "NR ARG0..ARG5 SP PC" in a
 * system call, "-1 SP PC" outside one.
 */
enum vsfuse_in vsfuse_syscall_parse(const char *line, enum varsym_abi abi,
				    uint64_t *envp, unsigned int *ptr_size)
{
	struct varsym_execve call;
	unsigned long long a[6];
	long nr;

	if (!strncmp(line, "running", 7))
		return VSFUSE_IN_RUNNING;
	if (sscanf(line, "%ld", &nr) != 1)
		return VSFUSE_IN_UNKNOWN;
	if (nr == -1)
		return VSFUSE_IN_OTHER;
	switch (varsym_execve_call(abi, nr, &call)) {
	case 0:
		return VSFUSE_IN_OTHER;
	case 1:
		break;
	default:
		return VSFUSE_IN_UNKNOWN;
	}
	if (sscanf(line, "%ld %llx %llx %llx %llx %llx %llx", &nr, &a[0],
		   &a[1], &a[2], &a[3], &a[4], &a[5]) != 7)
		return VSFUSE_IN_UNKNOWN;
	*envp = varsym_user_ptr(a[call.envp_arg], call.ptr_size);
	*ptr_size = call.ptr_size;
	return VSFUSE_IN_EXECVE;
}

static bool past(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec &&
		now.tv_nsec >= deadline->tv_nsec);
}

/*
 * What the thread is in.  A caller still "running" is on its way to sleep
 * on our answer: wait for it, yielding then napping 50 us, until the
 * deadline.  Taking "running" for "not in execve" would let the old
 * program's environment choose a setuid program's loader.
 */
static enum vsfuse_in syscall_of(int dirfd, unsigned int word, uint64_t *envp,
				 unsigned int *ptr_size,
				 const struct timespec *deadline)
{
	const struct timespec nap = { .tv_nsec = 50000 };
	enum varsym_abi abi = vsfuse_syscall_abi(word);
	char line[256];
	enum vsfuse_in in;
	int fd, tries;

	fd = openat(dirfd, "syscall", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return VSFUSE_IN_UNKNOWN;	/* gone, or not ours to read */
	for (tries = 0;; tries++) {
		ssize_t n = pread(fd, line, sizeof(line) - 1, 0);

		if (n <= 0) {
			in = VSFUSE_IN_UNKNOWN;
			break;
		}
		line[n] = '\0';
		in = vsfuse_syscall_parse(line, abi, envp, ptr_size);
		if (in != VSFUSE_IN_RUNNING || past(deadline))
			break;
		if (tries < 100)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
	close(fd);
	return in;
}

/*
 * A user's namespaces, and every uid mapped in them (/etc/subuid), are
 * that user's: counting workers or stuck readers by uid would let one
 * user with many uids stand for many users.  The outermost namespace's
 * owner cannot be chosen from inside it.  Only ioctls on nsfs files of
 * the kernel's, never the caller's memory; user namespaces nest at most
 * VARSYM_USERNS_LEVELS deep (core/exec_rule.h).
 */
uid_t vsfuse_caller_owner(int dirfd, uid_t uid)
{
	int cur, below = -1, parent = -1, depth;
	uid_t owner = uid;

	if (dirfd < 0)
		return uid;
	cur = openat(dirfd, "ns/user", O_RDONLY | O_CLOEXEC);
	if (cur < 0)
		return uid;
	for (depth = 0; depth < VARSYM_USERNS_LEVELS; depth++) {
		/* EPERM: cur is ours (or outside it), the walk's end */
		parent = ioctl(cur, NS_GET_PARENT);
		if (parent < 0)
			break;
		if (below >= 0)
			close(below);
		below = cur;
		cur = parent;
	}
	if (parent < 0 && errno == EPERM && below >= 0 &&
	    ioctl(below, NS_GET_OWNER_UID, &owner))
		owner = uid;
	if (below >= 0)
		close(below);
	close(cur);
	return owner;
}

static int open_proc(int procfd, pid_t tid)
{
	char name[32];

	snprintf(name, sizeof(name), "%d", (int)tid);
	return openat(procfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

void vsfuse_request_init(struct vsfuse_request *r, pid_t tid, uid_t uid,
			 unsigned long long ino,
			 const struct vsfuse_exec_view *view)
{
	*r = (struct vsfuse_request){ .tid = tid, .uid = uid, .owner = uid };
	if (tid <= 0 || !view->hooks)	/* not in our pid namespace */
		return;
	r->has_snap = vsfuse_exec_hooks_snapshot(view->hooks, tid, ino,
						 &r->snap) == 1;
	if (r->has_snap)
		r->owner = r->snap.owner;
}

void vsfuse_request_owner(struct vsfuse_request *r, int procfd)
{
	int dirfd;

	if (r->has_snap || r->tid <= 0)
		return;
	/* nsfs ioctls: nothing the caller can make wait */
	dirfd = open_proc(procfd, r->tid);
	r->owner = vsfuse_caller_owner(dirfd, r->uid);
	if (dirfd >= 0)
		close(dirfd);
}

/* The facts from the request's snapshot (the exec hooks). */
static void snapshot_facts(struct vsfuse_caller *c,
			   const struct vsfuse_request *r,
			   struct varsym_walk_facts *f)
{
	const struct vsfuse_snapshot *s = &r->snap;

	if (s->flags & VSFUSE_SNAP_KTHREAD) {
		f->kthread = true;
		return;
	}
	c->word = s->flags & VSFUSE_SNAP_WORD4 ? 4 : 8;
	f->exec = (enum varsym_exec_phase)s->phase;
	f->envp_known = s->flags & VSFUSE_SNAP_ENVP_KNOWN;
	c->envp = s->envp;
	c->envp_ptr_size = s->flags & VSFUSE_SNAP_ENVP4 ? 4 : 8;
}

/* The facts from /proc/TID/syscall (no exec hooks). */
static void proc_facts(struct vsfuse_caller *c, struct varsym_walk_facts *f)
{
	unsigned int ptr_size = 0;
	uint64_t envp = 0;

	c->word = varsym_proc_word_size(c->dirfd);
	switch (syscall_of(c->dirfd, c->word, &envp, &ptr_size,
			   c->deadline)) {
	case VSFUSE_IN_OTHER:
		break;
	case VSFUSE_IN_EXECVE:
		/* which walk of the exec: cannot be told */
		f->exec = VARSYM_EXEC_DOUBT;
		f->envp_known = true;
		c->envp = envp;
		c->envp_ptr_size = ptr_size;
		break;
	default:		/* unreadable (Yama's scope 3), still running */
		f->exec = VARSYM_EXEC_DOUBT;
		break;
	}
}

void vsfuse_caller_open(struct vsfuse_caller *c, int procfd,
			const struct vsfuse_request *r,
			const struct vsfuse_exec_view *view,
			const struct timespec *deadline)
{
	struct varsym_walk_facts f = {
		.serves_others = view->serves_others,
		.secure = VARSYM_NO,
	};
	int secure;

	*c = (struct vsfuse_caller){
		.dirfd = -1, .deadline = deadline, .req = r, .owner = r->owner,
	};
	if (r->tid <= 0) {	/* not in our pid namespace: nothing is set */
		f.kthread = true;
		goto plan;
	}
	c->dirfd = open_proc(procfd, r->tid);
	if (c->dirfd < 0) {	/* gone: nobody reads our answer */
		f.secure = VARSYM_UNKNOWN;
		goto plan;
	}
	/*
	 * Without a snapshot (another thread's took the slot, or this one's
	 * follow found it being written), /proc tells, as without the hooks:
	 * a walk inside an execve is doubt, any other the caller's.
	 */
	if (view->hooks && r->has_snap)
		snapshot_facts(c, r, &f);
	else
		proc_facts(c, &f);
	if (f.kthread || f.secure != VARSYM_NO)
		goto plan;
	secure = c->word ? varsym_proc_secure(c->dirfd, c->word) : -1;
	f.secure = secure < 0 ? VARSYM_UNKNOWN :
		   secure ? VARSYM_YES : VARSYM_NO;
plan:
	c->walk = varsym_walk_plan(&f);
}

void vsfuse_caller_close(struct vsfuse_caller *c)
{
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
}

bool vsfuse_caller_may_follow(const struct vsfuse_caller *c,
			      struct vsfuse_exec_hooks *hooks)
{
	return hooks && c->req->has_snap &&
	       vsfuse_exec_hooks_may_follow(hooks, c->req->tid, c->dirfd,
					    &c->req->snap);
}

/* Where c's reader finds its environment: envp, or the exec-time area. */
static struct vsfuse_env_where where(const struct vsfuse_caller *c,
				     bool envp)
{
	struct vsfuse_env_where w = {
		.dirfd = c->dirfd, .owner = c->owner, .deadline = c->deadline,
	};

	if (envp) {
		w.envp = c->envp;
		w.ptr_size = c->envp_ptr_size;
	}
	return w;
}

ssize_t vsfuse_getenv(void *ctx, const char *name, size_t name_len,
		      char *buf, size_t size)
{
	struct vsfuse_caller *c = ctx;
	bool envp = c->walk.from == VARSYM_ENV_ENVP;
	struct vsfuse_env_where w;
	ssize_t n;

	if (c->walk.from != VARSYM_ENV_AREA && !envp)
		return -ENOENT;
	/* execve(path, argv, NULL): an empty environment */
	if (envp && !c->envp)
		return -ENOENT;
	w = where(c, envp);
	n = vsfuse_reader_getenv(c->reader, &w, name, name_len, buf, size);
	/*
	 * /proc/TID/mem is closed to us (not root, Yama's ptrace_scope 3, an
	 * LSM): the exec-time environment decides in envp's place, the
	 * caller's own choice as much as its envp (docs/SPEC.md section 4).
	 */
	if (n == -EPERM && envp) {
		w = where(c, false);
		n = vsfuse_reader_getenv(c->reader, &w, name, name_len, buf,
					 size);
	}
	if (n == -ETIMEDOUT)
		c->timed_out = true;
	return n;
}
