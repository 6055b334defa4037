/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vsfuse.h - the FUSE implementation of varsymfs: shared declarations.
 */
#ifndef VSFUSE_H
#define VSFUSE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "varsym.h"

/* The process behind one request (caller.c). */
enum vsfuse_env_source {
	VSFUSE_ENV_NONE,	/* every variable unset */
	VSFUSE_ENV_ENVIRON,	/* /proc/PID/environ: the exec-time one */
	VSFUSE_ENV_ENVP,	/* execve's envp, through /proc/PID/mem */
};

struct vsfuse_caller {
	int dirfd;		/* O_PATH /proc/PID, -1 when none */
	int memfd;		/* /proc/PID/mem while in execve, else -1 */
	enum vsfuse_env_source source;
	uint64_t envp;		/* execve's envp[] in the caller */
	bool in_execve;		/* the answer holds for this walk only */
	bool secure;		/* AT_SECURE, or an exec's loader walk */
};

void vsfuse_caller_open(struct vsfuse_caller *c, int procfd, pid_t pid,
			bool serves_others);
/* What a caller's thread is blocked in (caller.c), from /proc/TID/syscall. */
enum vsfuse_blocked {
	VSFUSE_BLOCKED_GONE,	/* the thread has exited */
	VSFUSE_BLOCKED_UNKNOWN,	/* still on a CPU after a long wait */
	VSFUSE_BLOCKED_OTHER,	/* in another system call, or in none */
	VSFUSE_BLOCKED_EXECVE,	/* in execve(2) or execveat(2) */
};
enum vsfuse_blocked vsfuse_blocked_in(int syscall_fd, uint64_t *envp);
void vsfuse_caller_close(struct vsfuse_caller *c);
/* The core's getenv() for a caller opened above. */
ssize_t vsfuse_getenv(void *ctx, const char *name, size_t name_len,
		      char *buf, size_t size);

#endif /* VSFUSE_H */
