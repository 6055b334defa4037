/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * caller.h - the thread behind a FUSE request, seen through /proc and
 * the exec hooks (caller.c).
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
	bool exec_checked;	/* following it must be recorded: exec */
	bool exec_may_have_caps;	/* the exec's last file: read them */
	unsigned long long exec;	/* the exec hooks' number of the exec */
	bool doubt;		/* could not tell: never keep the answer */
	bool secure;		/* AT_SECURE, a privileged exec, or doubt */
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

/* How a mount tells the walks inside an execve apart (caller.c). */
struct vsfuse_exec_view {
	bool serves_others;	/* allow_other: doubt resolves as secure */
	struct vsfuse_exec_hooks *hooks;	/* the BPF program, or NULL */
};

/*
 * Fills c for the thread tid; reads of kernel data only, bounded by
 * deadline.
 */
void vsfuse_caller_open(struct vsfuse_caller *c, int procfd, pid_t tid,
			const struct vsfuse_exec_view *view,
			const struct timespec *deadline);
void vsfuse_caller_close(struct vsfuse_caller *c);
/*
 * Whom a caller's stuck readers count against: the owner uid of its
 * outermost user namespace below the daemon's, or uid for a caller in the
 * daemon's own (and when that cannot be told).  dirfd: /proc/TID.
 */
uid_t vsfuse_caller_owner(int dirfd, uid_t uid);
/*
 * Whether an exec's interpreter walk must stay secure although no file so
 * far has set-id bits: its last file has file capabilities, or may.
 */
bool vsfuse_caller_may_gain(const struct vsfuse_caller *c,
			    struct vsfuse_exec_hooks *hooks, pid_t tid);
/* The core's getenv() for an opened caller with a reader. */
ssize_t vsfuse_getenv(void *ctx, const char *name, size_t name_len,
		      char *buf, size_t size);

enum vsfuse_in vsfuse_syscall_parse(const char *line, unsigned int word,
				    uint64_t *envp, unsigned int *ptr_size);

#endif /* VSFUSE_CALLER_H */
