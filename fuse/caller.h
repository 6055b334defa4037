/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * caller.h - the thread behind a FUSE request, seen through /proc
 * (caller.c).
 */
#ifndef VSFUSE_CALLER_H
#define VSFUSE_CALLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "varsym_core.h"

struct vsfuse_reader;

/* Which environment a caller's variables come from. */
enum vsfuse_env_source {
	VSFUSE_ENV_NONE,	/* every variable unset */
	VSFUSE_ENV_ENVIRON,	/* /proc/TID/environ: the exec-time one */
	VSFUSE_ENV_ENVP,	/* execve's envp, through /proc/TID/mem */
};

/* The thread behind one request. */
struct vsfuse_caller {
	int dirfd;		/* O_PATH /proc/TID, -1 when none */
	enum vsfuse_env_source source;
	uint64_t envp;		/* execve's envp[] in the caller */
	unsigned int envp_ptr_size;	/* 4 or 8: its pointers' size */
	unsigned int word;	/* the caller's word size: 4, 8, 0 unknown */
	bool in_execve;		/* the answer holds for this walk only */
	bool doubt;		/* could not tell: never keep the answer */
	bool secure;		/* AT_SECURE, a loader's walk, or doubt */
	bool timed_out;		/* a read missed the deadline */
	uid_t uid;		/* the request's */
	uid_t owner;		/* readers are counted by it: see getenv */
	bool owner_known;
	const struct timespec *deadline;	/* CLOCK_MONOTONIC */
	struct vsfuse_reader *reader;		/* reads its memory */
};

/* What /proc/TID/syscall says the thread is in. */
enum vsfuse_in {
	VSFUSE_IN_RUNNING,	/* on a CPU: it cannot say yet */
	VSFUSE_IN_OTHER,	/* another system call, or none */
	VSFUSE_IN_EXECVE,	/* execve(2) or execveat(2), any ABI */
	VSFUSE_IN_UNKNOWN,	/* unreadable, unparsable, an unknown ABI */
};

/* Which part of execve a walk belongs to, from the kernel stack. */
enum vsfuse_phase {
	VSFUSE_PHASE_PROGRAM,	/* the program's own path */
	VSFUSE_PHASE_SCRIPT,	/* a script's #! interpreter */
	VSFUSE_PHASE_LOADER,	/* an interpreter loaded into the program */
	VSFUSE_PHASE_UNKNOWN,
};

/*
 * Fills c for the thread tid; /proc reads of kernel data only, bounded by
 * deadline.  serves_others: the mount serves every user (doubt = secure).
 */
void vsfuse_caller_open(struct vsfuse_caller *c, int procfd, pid_t tid,
			bool serves_others, const struct timespec *deadline);
void vsfuse_caller_close(struct vsfuse_caller *c);
/*
 * Whom a caller's stuck readers count against: the owner uid of its
 * outermost user namespace below the daemon's, or uid for a caller in the
 * daemon's own (and when that cannot be told).  dirfd: /proc/TID.
 */
uid_t vsfuse_caller_owner(int dirfd, uid_t uid);
/* The core's getenv() for an opened caller with a reader. */
ssize_t vsfuse_getenv(void *ctx, const char *name, size_t name_len,
		      char *buf, size_t size);

enum vsfuse_in vsfuse_syscall_parse(const char *line, unsigned int word,
				    uint64_t *envp, unsigned int *ptr_size);
enum vsfuse_phase vsfuse_exec_phase(const char *stack);

#endif /* VSFUSE_CALLER_H */
