// SPDX-License-Identifier: GPL-2.0-only
/*
 * caller.c - who is asking: a FUSE request's thread, seen through /proc
 * and, on a mount serving every user, through the exec hooks' BPF program
 * (exec_hooks.c).
 *
 * The kernel tells us the thread id of the caller.  Through /proc/TID we
 * learn whether it was started with AT_SECURE (auxv, in the program's own
 * word size, from stat) and whether it is inside execve(2) in any ABI of
 * the machine (syscall, with execve's envp).  The BPF program tells which
 * file an execve is at: none yet (the walk is the program's own path) or
 * past a file, whose interpreter is walked; and whether any file so far
 * gains privileges.  Its environment, exec-time (environ) or execve's envp
 * (mem), is the caller's own memory, which it can make block: reader.c
 * reads that, under a deadline.
 *
 * Three modes (docs/SECURITY.md, "Which walk is whose"):
 *  - serving every user, with the BPF program: inside an execve, the
 *    program's path and an unprivileged exec's interpreters follow the
 *    execve rule; a privileged exec's interpreters are secure.  A walk
 *    that followed the caller is recorded, and the kernel refuses that
 *    exec if it turns out to gain privileges.  Where syscall cannot be
 *    read (Yama's ptrace_scope 3), the exec-time environment decides.
 *  - serving every user, without it: every walk inside an execve is
 *    secure, and where syscall cannot be read, every walk is.
 *  - serving only its owner: such a mount cannot be on a privileged
 *    program's path (docs/SECURITY.md), so every walk follows the caller.
 *
 * Every file is opened relative to one O_PATH descriptor of /proc/TID, so
 * a thread that dies and whose id is reused half-way cannot mix two
 * processes' answers.  None of these reads walks a path through our mount.
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

/*
 * The ABI of a caller of word, for the core's table of execve numbers.  On
 * x86 every daemon may meet all three ABIs (a 64-bit process can use the
 * 32-bit entry, int $0x80) and cannot tell which a call came in by: the
 * core then looks in all three.  On arm64 a 32-bit caller is an AArch32
 * process, whose calls only it makes.  Elsewhere the build's own numbers
 * hold for callers of the daemon's own word size; other callers' ABIs are
 * unknown.
 */
static enum varsym_abi caller_abi(unsigned int word)
{
#if defined(__x86_64__) || defined(__i386__)
	return VARSYM_ABI_X86;
#elif defined(__aarch64__)
	return word == sizeof(long) ? VARSYM_ABI_NATIVE : VARSYM_ABI_ARM32;
#else
	return word == sizeof(long) ? VARSYM_ABI_NATIVE : VARSYM_ABI_UNKNOWN;
#endif
}

/**
 * vsfuse_syscall_parse - what /proc/TID/syscall says
 * @line: its text
 * @word: the caller's word size
 * @envp: execve's envp, when in execve
 * @ptr_size: the size of its pointers
 *
 * The file says "running" while the thread is on a CPU (as a caller may be
 * for a moment after its request reached us), "NR ARG0..ARG5 SP PC" in a
 * system call, "-1 SP PC" outside one.
 */
enum vsfuse_in vsfuse_syscall_parse(const char *line, unsigned int word,
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
	switch (varsym_execve_call(caller_abi(word), nr, &call)) {
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
		in = vsfuse_syscall_parse(line, word, envp, ptr_size);
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

/* Doubt: secure on a mount serving others, else the caller's own. */
static void in_doubt(struct vsfuse_caller *c, bool serves_others)
{
	c->doubt = true;
	if (serves_others)
		c->secure = true;
}

/* Inside an execve, after its first exec hook: an interpreter's walk. */
static void interpreter_walk(struct vsfuse_caller *c,
			     const struct vsfuse_exec_state *s)
{
	if (s->flags & VSFUSE_EXEC_PRIVILEGED) {
		c->secure = true;
		return;
	}
	/* followed, it is recorded: the kernel refuses the exec if it gains */
	c->exec = s->exec;
	c->exec_checked = true;
	c->exec_may_have_caps = s->flags & VSFUSE_EXEC_MAY_HAVE_CAPS;
}

bool vsfuse_caller_may_gain(const struct vsfuse_caller *c,
			    struct vsfuse_exec_hooks *hooks, pid_t tid)
{
	return c->exec_may_have_caps &&
	       vsfuse_exec_hooks_file_caps(hooks, tid, c->dirfd, c->exec);
}

void vsfuse_caller_open(struct vsfuse_caller *c, int procfd, pid_t tid,
			const struct vsfuse_exec_view *view,
			const struct timespec *deadline)
{
	struct vsfuse_exec_state state;
	unsigned int ptr_size = 0;
	bool in_exec_hooks = false;
	uint64_t envp = 0;
	enum vsfuse_in in;
	char name[32];
	int secure;

	*c = (struct vsfuse_caller){ .dirfd = -1, .deadline = deadline };
	if (tid <= 0)		/* not in our pid namespace: nothing is set */
		return;
	snprintf(name, sizeof(name), "%d", (int)tid);
	c->dirfd = openat(procfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0) {	/* gone: nobody reads our answer */
		c->doubt = c->secure = true;
		return;
	}
	c->word = varsym_proc_word_size(c->dirfd);
	secure = c->word ? varsym_proc_secure(c->dirfd, c->word) : -1;
	if (secure) {		/* AT_SECURE, or not ours to inspect */
		c->secure = true;
		c->doubt = secure < 0;
		return;
	}
	c->source = VSFUSE_ENV_ENVIRON;
	in = syscall_of(c->dirfd, c->word, &envp, &ptr_size, deadline);
	if (in == VSFUSE_IN_OTHER)	/* a state a failed exec left is stale */
		return;
	/* inside an execve, or cannot tell: then only, ask the exec hooks */
	if (view->hooks)
		in_exec_hooks = vsfuse_exec_hooks_state(view->hooks, tid,
							&state) == 1;
	switch (in) {
	case VSFUSE_IN_EXECVE:
		break;
	default:		/* unreadable (Yama's scope 3), still running */
		if (view->hooks) {
			/* the exec-time environment decides (SPEC 4.2) */
			c->in_execve = in_exec_hooks;
			if (in_exec_hooks)
				interpreter_walk(c, &state);
			return;
		}
		in_doubt(c, view->serves_others);
		return;
	}
	c->in_execve = true;	/* the answer holds for this walk only */
	if (view->hooks) {
		/* no hook yet: the program's own path */
		if (in_exec_hooks)
			interpreter_walk(c, &state);
		if (c->secure)
			return;
	} else if (view->serves_others) {
		/* which file is walked for cannot be told: every one secure */
		c->secure = true;
		return;
	}
	if (!envp) {		/* execve(path, argv, NULL): empty */
		c->source = VSFUSE_ENV_NONE;
		return;
	}
	c->source = VSFUSE_ENV_ENVP;
	c->envp = envp;
	c->envp_ptr_size = ptr_size;
}

void vsfuse_caller_close(struct vsfuse_caller *c)
{
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
}

/*
 * A user's namespaces, and every uid mapped in them (/etc/subuid), are
 * that user's: counting stuck readers by uid would let one user with many
 * uids stand for many users.  The outermost namespace's owner cannot be
 * chosen from inside it.  Only ioctls on nsfs files of the kernel's, never
 * the caller's memory; user namespaces nest at most 32 deep.
 */
uid_t vsfuse_caller_owner(int dirfd, uid_t uid)
{
	int cur, below = -1, parent, depth;
	uid_t owner = uid;

	if (dirfd < 0)
		return uid;
	cur = openat(dirfd, "ns/user", O_RDONLY | O_CLOEXEC);
	if (cur < 0)
		return uid;
	for (depth = 0; depth < 64; depth++) {
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

/* Where c's reader finds its environment. */
static struct vsfuse_env_where where(const struct vsfuse_caller *c)
{
	struct vsfuse_env_where w = {
		.dirfd = c->dirfd, .owner = c->owner, .deadline = c->deadline,
	};

	if (c->source == VSFUSE_ENV_ENVP) {
		w.envp = c->envp;
		w.ptr_size = c->envp_ptr_size;
	}
	return w;
}

ssize_t vsfuse_getenv(void *ctx, const char *name, size_t name_len,
		      char *buf, size_t size)
{
	struct vsfuse_caller *c = ctx;
	struct vsfuse_env_where w;
	ssize_t n;

	if (c->source == VSFUSE_ENV_NONE)
		return -ENOENT;
	if (!c->owner_known) {
		c->owner = vsfuse_caller_owner(c->dirfd, c->uid);
		c->owner_known = true;
	}
	w = where(c);
	n = vsfuse_reader_getenv(c->reader, &w, name, name_len, buf, size);
	/*
	 * /proc/TID/mem is closed to us (not root, or an LSM): the program's
	 * own path and a script's interpreter then follow the exec-time
	 * environment, the caller's own choice as much as its envp.
	 */
	if (n == -EPERM && c->source == VSFUSE_ENV_ENVP) {
		c->source = VSFUSE_ENV_ENVIRON;
		w = where(c);
		n = vsfuse_reader_getenv(c->reader, &w, name, name_len, buf,
					 size);
	}
	if (n == -ETIMEDOUT)
		c->timed_out = true;
	return n;
}
