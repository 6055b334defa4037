/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exec_hooks.h - what the daemon's BPF program (exec_hooks.bpf.c) keeps
 * about each thread inside an execve, and how the daemon reads it
 * (exec_hooks.c).  Shared by the BPF program and the daemon: plain C
 * types only.
 */
#ifndef VSFUSE_EXEC_HOOKS_H
#define VSFUSE_EXEC_HOOKS_H

/* What one thread's execve has shown so far; the map's value, by tid. */
struct vsfuse_exec_state {
	unsigned long long exec;	/* this execve's number, never reused */
	unsigned long long cred;	/* its new credentials, as a key only */
	unsigned int files;	/* files checked so far: program, interpreters */
	unsigned int flags;	/* VSFUSE_EXEC_* */
};

/* A file so far gains privileges: set-id bits, or an LSM's secureexec. */
#define VSFUSE_EXEC_PRIVILEGED	0x1
/* The last file checked starts with "#!": the next walk is its interpreter. */
#define VSFUSE_EXEC_SCRIPT	0x2
/* The kernel has computed the new credentials (privileges are final). */
#define VSFUSE_EXEC_CREDS	0x4
/*
 * The last file checked may carry file capabilities the kernel would
 * honour (a mount without nosuid, of the initial user namespace): before
 * following the caller, the daemon reads them (exec_file).
 */
#define VSFUSE_EXEC_MAY_HAVE_CAPS 0x8

/* The last file checked, by tid: where the daemon finds its capabilities. */
struct vsfuse_exec_file {
	unsigned long long exec;	/* whose (vsfuse_exec_state.exec) */
	unsigned long long ino;
	unsigned int dev;	/* the kernel's: major << 20 | minor */
	int path_len;		/* bpf_d_path's: with the NUL, or -errno */
	char path[4096];	/* from the exec's root */
};

/* Execs in flight the maps hold; past that an execve fails (EAGAIN). */
#define VSFUSE_EXEC_MAX		65536

/*
 * Each thread's stamp: a cache hit's proof that the thread still runs the
 * program its answer was made in, and is not inside an execve (cache.c).
 * An array the daemon maps, slot tid % VSFUSE_STAMP_SLOTS, one word:
 *  - bit 0, VSFUSE_STAMP_IN_EXECVE: the thread is past an exec hook, or
 *    its last follow of a FUSE link was made inside execve(2);
 *  - bits 1-22: the tid (a kernel's tids are below 2^22, PID_MAX_LIMIT);
 *  - bits 23-63: exec_count's low 41 bits when the stamp was made.
 * A thread's exec, the end of its exec, its exit and the fork that gives a
 * tid out make a new one; only a follow rewrites bit 0 alone.  Another
 * thread whose tid shares the slot overwrites it: the stamp then fails as
 * if stale, and the daemon makes its proof from /proc instead.
 */
#define VSFUSE_STAMP_SLOTS	65536
#define VSFUSE_STAMP_IN_EXECVE	1ULL
#define VSFUSE_STAMP_TID_BITS	22
#define VSFUSE_STAMP_COUNT_SHIFT (1 + VSFUSE_STAMP_TID_BITS)
/* A stamp's count identifies it while exec_count moves less than this. */
#define VSFUSE_STAMP_COUNT_SPAN	(1ULL << (64 - VSFUSE_STAMP_COUNT_SHIFT))

static inline unsigned long long vsfuse_stamp(unsigned long long count,
					      unsigned int tid,
					      int in_execve)
{
	return count << VSFUSE_STAMP_COUNT_SHIFT |
	       (unsigned long long)(tid & ((1U << VSFUSE_STAMP_TID_BITS) - 1)) << 1 |
	       (in_execve ? VSFUSE_STAMP_IN_EXECVE : 0);
}

static inline unsigned int vsfuse_stamp_tid(unsigned long long stamp)
{
	return (stamp >> 1) & ((1U << VSFUSE_STAMP_TID_BITS) - 1);
}

/* The whole exec_count of a stamp made when exec_count was at most now. */
static inline unsigned long long
vsfuse_stamp_count(unsigned long long stamp, unsigned long long now)
{
	return now - ((now - (stamp >> VSFUSE_STAMP_COUNT_SHIFT)) &
		      (VSFUSE_STAMP_COUNT_SPAN - 1));
}

#ifndef __bpf__
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct vsfuse_exec_hooks;

/*
 * Loads and attaches the BPF program; NULL when it cannot be, with why
 * (one line: the step and the error) in why.
 */
struct vsfuse_exec_hooks *vsfuse_exec_hooks_load(char *why, size_t size);
void vsfuse_exec_hooks_unload(struct vsfuse_exec_hooks *h);
/* tid's state: 1 and *s, 0 when tid is not past an exec hook. */
int vsfuse_exec_hooks_state(struct vsfuse_exec_hooks *h, pid_t tid,
			    struct vsfuse_exec_state *s);
/*
 * Whether the last file tid's exec checked has file capabilities: 0 only
 * when it has none for sure; 1 when it has some, or when that cannot be
 * told.  dirfd: tid's /proc/TID.
 */
int vsfuse_exec_hooks_file_caps(struct vsfuse_exec_hooks *h, pid_t tid,
				int dirfd, unsigned long long exec);
/*
 * Records that a walk of tid's exec number exec followed the caller's
 * environment, before the answer goes back: if that exec then gains
 * privileges, the kernel refuses it (EPERM).  false when it could not be
 * recorded: the walk must then resolve as secure.
 */
bool vsfuse_exec_hooks_followed(struct vsfuse_exec_hooks *h, pid_t tid,
				unsigned long long exec);
/*
 * The stamps (VSFUSE_STAMP_SLOTS words) and exec_count, mapped read-only
 * into the daemon; NULL when the map could not be mapped.
 */
const volatile unsigned long long *
vsfuse_exec_hooks_stamps(struct vsfuse_exec_hooks *h,
			 const volatile unsigned long long **count);
#endif

#endif /* VSFUSE_EXEC_HOOKS_H */
