/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * caller.h - the thread behind a FUSE request: the facts the core's rule
 * needs (core/exec_rule.h), from the exec hooks' snapshot or from /proc
 * (caller.c).
 */
#ifndef VSFUSE_CALLER_H
#define VSFUSE_CALLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "exec_hooks.h"
#include "varsym_core.h"
#include "varsym_proc.h"

struct vsfuse_reader;

/* What /proc/TID/syscall says the thread is in. */
enum vsfuse_in {
	VSFUSE_IN_RUNNING,	/* on a CPU: it cannot say yet */
	VSFUSE_IN_OTHER,	/* another system call, or none */
	VSFUSE_IN_EXECVE,	/* execve(2) or execveat(2), any ABI */
	VSFUSE_IN_UNKNOWN,	/* unreadable, unparsable, an unknown ABI */
};

/* How a mount tells the walks inside an execve apart. */
struct vsfuse_exec_view {
	bool serves_others;	/* allow_other: doubt resolves as secure */
	struct vsfuse_exec_hooks *hooks;	/* the BPF program, or NULL */
};

/*
 * What the request thread learnt of a caller before it hands the request
 * on, so that nothing is asked twice: with the exec hooks, the request's
 * snapshot (has_snap), taken in the caller's own context.
 */
struct vsfuse_request {
	pid_t tid;
	uid_t uid;		/* the request's */
	uid_t owner;		/* whose workers and readers: caller.c */
	bool has_snap;
	struct vsfuse_snapshot snap;
};

/* The thread behind one request. */
struct vsfuse_caller {
	int dirfd;		/* O_PATH /proc/TID, -1 when none */
	struct varsym_walk walk;	/* where its variables come from */
	uint64_t envp;		/* execve's envp[] in the caller */
	unsigned int envp_ptr_size;	/* 4 or 8: its pointers' size */
	unsigned int word;	/* the caller's word size: 4, 8, 0 unknown */
	bool timed_out;		/* a read missed the deadline */
	uid_t owner;		/* its stuck readers count against it */
	const struct vsfuse_request *req;
	const struct timespec *deadline;	/* CLOCK_MONOTONIC */
	struct vsfuse_reader *reader;		/* reads its memory */
};

/*
 * The request's facts that the request thread can have at once, without
 * waiting on the caller: with the exec hooks, its snapshot (and owner).
 */
void vsfuse_request_init(struct vsfuse_request *r, pid_t tid, uid_t uid,
			 unsigned long long ino,
			 const struct vsfuse_exec_view *view);
/* The owner, without the exec hooks: before a job is handed to the pool. */
void vsfuse_request_owner(struct vsfuse_request *r, int procfd);
/*
 * Fills c for the request's thread, by the core's rule; reads of kernel
 * data only, bounded by deadline.
 */
void vsfuse_caller_open(struct vsfuse_caller *c, int procfd,
			const struct vsfuse_request *r,
			const struct vsfuse_exec_view *view,
			const struct timespec *deadline);
void vsfuse_caller_close(struct vsfuse_caller *c);
/*
 * Whom a caller's workers and stuck readers count against: the owner uid
 * of its outermost user namespace below the daemon's, or uid for a caller
 * in the daemon's own (and when that cannot be told).  dirfd: /proc/TID.
 */
uid_t vsfuse_caller_owner(int dirfd, uid_t uid);
/*
 * An interpreter walk's answer from the caller's environment, which
 * differs from the secure one: whether it may stand (its exec's files
 * have no capabilities, and its exec is told it followed the caller).
 */
bool vsfuse_caller_may_follow(const struct vsfuse_caller *c,
			      struct vsfuse_exec_hooks *hooks);
/* The core's getenv() for an opened caller with a reader. */
ssize_t vsfuse_getenv(void *ctx, const char *name, size_t name_len,
		      char *buf, size_t size);

/* The system-call ABIs of a caller of word, as this build can tell them. */
enum varsym_abi vsfuse_syscall_abi(unsigned int word);
enum vsfuse_in vsfuse_syscall_parse(const char *line, enum varsym_abi abi,
				    uint64_t *envp, unsigned int *ptr_size);

#endif /* VSFUSE_CALLER_H */
