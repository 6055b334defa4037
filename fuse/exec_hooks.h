/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exec_hooks.h - what the daemons' BPF program (exec_hooks.bpf.c) keeps
 * about each thread, what it hands a daemon for each request, and how a
 * daemon loads it (exec_hooks.c), shares it (exec_hooks_set.c) and reads
 * it (exec_hooks_read.c).  Shared by the BPF program and the daemon:
 * plain C types only.
 */
#ifndef VSFUSE_EXEC_HOOKS_H
#define VSFUSE_EXEC_HOOKS_H

#include <stdbool.h>

#include "../core/exec_rule.h"	/* VARSYM_EXEC_FILES */

/*
 * A thread's exec state, in BPF task storage: it belongs to the task,
 * whatever its tid (a non-leader's exec takes its leader's), and goes with
 * it.  Only the task's own hooks change it, and a daemon (FOLLOWED)
 * through the task's pidfd while the task waits for its answer.
 */
struct vsfuse_task {
	unsigned long long token;	/* this program instance: never reused */
	unsigned int token_exec_id;	/* self_exec_id the token was made for */
	unsigned int flags;		/* VSFUSE_TASK_* */
	unsigned long long exec;	/* the exec in flight's number, or 0 */
	/* that exec's system call: nr, first argument, envp */
	unsigned long long call[3];
	unsigned int files;		/* files it checked so far */
	unsigned int recorded;		/* which files' paths are recorded */
};

/* Between the exec's bprm_creds_for_exec and its commit. */
#define VSFUSE_TASK_IN_EXEC	0x1
/* A file so far gains privileges (core/exec_rule.h). */
#define VSFUSE_TASK_PRIVILEGED	0x2
/* A file's capabilities are for the daemon to read (vsfuse_exec_file). */
#define VSFUSE_TASK_CAPS_UNREAD	0x4
/* An exec that began before this set, or lost its state: doubt. */
#define VSFUSE_TASK_DOUBT	0x8
/* A walk of the exec followed the caller: privileged, it must fail. */
#define VSFUSE_TASK_FOLLOWED	0x10

/*
 * What a follow (or readlink) of a varsymfs link shows of its caller,
 * taken by the BPF program in the caller's own context, before the
 * request is sent: the daemon's facts for that request.  Kept only in the
 * caller's slot of the published array (below), and read by the daemon
 * only while the thread waits for its answer, when the tid is still its.
 */
struct vsfuse_snapshot {
	unsigned long long token;	/* vsfuse_task.token; 0: none */
	unsigned long long exec;	/* the exec in flight, for the verdict */
	unsigned long long envp;	/* execve's envp, when inside one */
	unsigned long long ino;		/* the link followed: its node id */
	unsigned int dev;		/* its super block's device */
	/*
	 * Whose workers: the owner of the caller's outermost user namespace
	 * below the initial one, or its fsuid in the initial one (all of a
	 * user's subordinate uids are one user).
	 */
	unsigned int owner;
	unsigned int flags;		/* VSFUSE_SNAP_* */
	unsigned int phase;		/* enum varsym_exec_phase */
	unsigned int files;		/* the exec's files checked so far */
	unsigned int recorded;		/* which of them have recorded paths */
};

/*
 * The snapshots, where a daemon reads them without a system call: slot
 * tid % VSFUSE_PUBLISHED holds thread tid's last snapshot, under a count
 * that is odd while the slot is written.  Only that thread writes its
 * tid there; a slot is emptied when its thread exits, or when the tid is
 * handed out again (exec_hooks.bpf.c, above publish(), says why no
 * thread ever reads another's snapshot or an old one of its own).  A
 * slot holding another tid, or an odd or moving count, is no snapshot:
 * the daemon then tells the walk by /proc.
 */
struct vsfuse_published {
	unsigned int seq;		/* odd: being written */
	unsigned int tid;		/* whose snapshot; 0: none */
	struct vsfuse_snapshot snap;
};

#define VSFUSE_SNAP_KTHREAD	0x1	/* no process: no environment */
#define VSFUSE_SNAP_WORD4	0x2	/* a 32-bit program: 4-byte auxv words */
#define VSFUSE_SNAP_ENVP_KNOWN	0x4	/* envp is where .envp says */
#define VSFUSE_SNAP_ENVP4	0x8	/* envp's pointers are 4 bytes */
#define VSFUSE_SNAP_CAPS_UNREAD	0x10	/* read the exec's files' capabilities */

/*
 * The files an exec checked whose capabilities the daemon reads before it
 * lets an interpreter walk follow the caller: task storage of their own,
 * made at the first such file, gone with the exec.  A file whose path
 * would start past VSFUSE_PATHS_ROOM cannot be told: privileged.
 */
#define VSFUSE_PATH_MAX		4096
#define VSFUSE_PATHS_ROOM	3584	/* the whole under 8 KiB */
struct vsfuse_exec_file {
	unsigned long long ino;
	unsigned int dev;	/* the kernel's: major << 20 | minor */
	int path_len;		/* bpf_d_path's: with the NUL, or -errno */
	unsigned int path_at;	/* in paths[], from the exec's root */
	unsigned int pad;
};

struct vsfuse_exec_files {
	unsigned long long exec;	/* whose */
	unsigned int used;		/* bytes of paths[] taken */
	unsigned int pad;
	struct vsfuse_exec_file file[VARSYM_EXEC_FILES];
	char paths[VSFUSE_PATHS_ROOM + VSFUSE_PATH_MAX];
};

#define VSFUSE_PUBLISHED	16384	/* slots: 1 MiB, shared by all */
#define VSFUSE_MOUNTS		1024

#ifndef __bpf__
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The maps a daemon uses. */
enum { VSFUSE_PUBLISHED_MAP, VSFUSE_MOUNTS_MAP, VSFUSE_TASKS_MAP,
	VSFUSE_FILES_MAP, VSFUSE_BSS_MAP, VSFUSE_NMAPS };

/* A daemon's handle on the set: exec_hooks.c, _set.c and _read.c only. */
struct vsfuse_exec_hooks {
	struct exec_hooks_bpf *skel;	/* this daemon attached the set */
	int fd[VSFUSE_NMAPS];
	const volatile struct exec_hooks_bpf__bss *bss;	/* mapped */
	size_t bss_size;
	const volatile struct vsfuse_published *published;	/* mapped */
	char dir[256];			/* the set's pins; "" if private */
	int lock;			/* dir, shared-locked while we use it */
	unsigned int dev;		/* the mount served, once it is */
	bool serving;
};

#ifdef VSFUSE_FAULTS
/* The tests' build only: what the BPF program can never have. */
#define VSFUSE_FAIL_TASK_STORAGE	0x1	/* a thread's state */
#define VSFUSE_FAIL_EXEC_FILES		0x2	/* an exec's file records */
#define VSFUSE_FAIL_SERVE		0x4	/* the daemon: a mount's entry */
extern unsigned int vsfuse_exec_hooks_faults;
#endif

/*
 * The machine's one set of exec hooks (exec_hooks_set.c), joined or
 * attached.  NULL when it cannot be, with why (one line) in why.
 */
struct vsfuse_exec_hooks *vsfuse_exec_hooks_load(char *why, size_t size);
/* This daemon's mount (mountpoint's device) is served: its follows count. */
int vsfuse_exec_hooks_serve(struct vsfuse_exec_hooks *h, const char *mountpoint);
/* Leaves the set; the last daemon to leave removes it. */
void vsfuse_exec_hooks_unload(struct vsfuse_exec_hooks *h);
/*
 * The snapshot of thread tid's request for node ino of this daemon's
 * mount: 1 and *s, or 0 when there is none (then /proc tells).
 */
int vsfuse_exec_hooks_snapshot(struct vsfuse_exec_hooks *h, pid_t tid,
			       unsigned long long ino,
			       struct vsfuse_snapshot *s);
/*
 * tid's snapshot from its slot p of the published ones (a seqlock's
 * reader): 1 and *s, or 0 when the slot holds another thread's or none,
 * or was written meanwhile.
 */
int vsfuse_published_read(const volatile struct vsfuse_published *p,
			  unsigned int tid, struct vsfuse_snapshot *s);
/*
 * Whether an interpreter walk of thread tid (dirfd: its /proc/TID),
 * waiting in the request of snapshot s, may follow its environment: no
 * file of its exec has capabilities, for sure, and the exec is marked as
 * having followed (privileged, the kernel refuses it: EPERM).  false when
 * either cannot be had: the walk resolves as secure.
 */
bool vsfuse_exec_hooks_may_follow(struct vsfuse_exec_hooks *h, pid_t tid,
				  int dirfd, const struct vsfuse_snapshot *s);
/* How many execs' state the BPF program could not keep (secure). */
unsigned long long vsfuse_exec_hooks_unkept(const struct vsfuse_exec_hooks *h);

/* exec_hooks.c: why a step failed, with libbpf's first complaint. */
void vsfuse_exec_hooks_say(char *why, size_t size, const char *step, int err);
/* A new set (h->skel), attached, unpinned: 0, or -1 and why. */
int vsfuse_exec_hooks_attach(struct vsfuse_exec_hooks *h, char *why,
			     size_t size);
/*
 * exec_hooks_set.c: joins the machine's set, or attaches and pins a new
 * one, under the lock that orders the daemons coming and going (*root,
 * closed by the caller once the set works; -1 without a bpf file system,
 * where the set is the daemon's own).  0, or -1 and why.
 */
int vsfuse_exec_set_join(struct vsfuse_exec_hooks *h, int *root, char *why,
			 size_t size);
/*
 * Leaves the set, under root (or a lock taken here if -1); the last
 * daemon unpins it.  broken: the set this daemon pinned does not work.
 */
void vsfuse_exec_set_leave(struct vsfuse_exec_hooks *h, int root,
			   bool broken);
#endif

#endif /* VSFUSE_EXEC_HOOKS_H */
