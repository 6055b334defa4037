// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec_hooks_read.c - what a daemon reads of a request's caller from the
 * exec hooks (exec_hooks.bpf.c), while the caller waits in its request
 * (so its tid is still its): its snapshot, from its tid's published slot,
 * with no system call; and, for an interpreter walk that would follow the
 * caller, its exec's files and the mark that the walk followed, in the
 * thread's own task storage, found by its pidfd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "exec_hooks.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL	/* Linux 6.9's linux/pidfd.h */
#endif

int vsfuse_published_read(const volatile struct vsfuse_published *p,
			  unsigned int tid, struct vsfuse_snapshot *s)
{
	const volatile __u64 *from = (const volatile __u64 *)&p->snap;
	__u64 words[sizeof(*s) / sizeof(__u64)];
	__u32 seq, owner;
	size_t i;

	_Static_assert(sizeof(*s) == sizeof(words), "whole words");
	seq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return 0;
	owner = p->tid;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		words[i] = from[i];
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!tid || owner != tid ||
	    __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != seq)
		return 0;
	memcpy(s, words, sizeof(*s));
	return 1;
}

int vsfuse_exec_hooks_snapshot(struct vsfuse_exec_hooks *h, pid_t tid,
			       unsigned long long ino,
			       struct vsfuse_snapshot *s)
{
	__u32 key = tid;

	return vsfuse_published_read(&h->published[key % VSFUSE_PUBLISHED],
				     key, s) &&
	       s->dev == h->dev && s->ino == ino;
}

/*
 * One recorded file: found again by its path in the caller's root,
 * without following any symbolic link (which could lead elsewhere since),
 * and the same file only if it has the kernel's inode and device.  A
 * btrfs subvolume or an overlay shows stat another device: then it cannot
 * be told, and has capabilities.  The file is on a mount of the initial
 * user namespace (the BPF program checked), so no user's FUSE daemon is
 * asked.
 */
static bool one_file_caps(int root, const struct vsfuse_exec_files *r,
			  const struct vsfuse_exec_file *f)
{
	const char *path = r->paths + f->path_at;
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	char fdpath[32];
	bool has = true;
	struct stat st;
	ssize_t n;
	int fd;

	if (f->path_len <= 1 || f->path_len > VSFUSE_PATH_MAX ||
	    f->path_at > VSFUSE_PATHS_ROOM || path[0] != '/' ||
	    path[f->path_len - 1])
		return true;
	fd = syscall(SYS_openat2, root, path + 1, &how, sizeof(how));
	if (fd < 0)
		return true;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_ino == f->ino &&
	    major(st.st_dev) == f->dev >> 20 &&
	    minor(st.st_dev) == (f->dev & 0xfffff)) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
		n = getxattr(fdpath, "security.capability", NULL, 0);
		if (n < 0 && errno == ENODATA)
			has = false;
	}
	close(fd);
	return has;
}

/*
 * A descriptor of thread tid, which its task storage is found by: any
 * thread's from Linux 6.9 (PIDFD_THREAD), a process leader's before.  The
 * thread waits in its request meanwhile: tid is still its.
 */
static int thread_pidfd(pid_t tid)
{
	int fd = syscall(SYS_pidfd_open, tid, PIDFD_THREAD);

	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_pidfd_open, tid, 0);
	return fd;
}

/*
 * Whether one of the files the snapshot's exec checked has file
 * capabilities: false only when none has for sure.  root: the caller's.
 */
static bool files_have_caps(struct vsfuse_exec_hooks *h, int pidfd,
			    int root, const struct vsfuse_snapshot *s)
{
	static __thread struct vsfuse_exec_files r;
	int fd = h->fd[VSFUSE_FILES_MAP];
	unsigned int i;

	if (!(s->flags & VSFUSE_SNAP_CAPS_UNREAD))
		return false;
	if (root < 0 || bpf_map_lookup_elem(fd, &pidfd, &r) ||
	    r.exec != s->exec)
		return true;
	for (i = 0; i < VARSYM_EXEC_FILES; i++)
		if ((s->recorded & (1U << i)) &&
		    one_file_caps(root, &r, &r.file[i]))
			return true;
	return false;
}

/* Marks the snapshot's exec, still in flight, as having followed. */
static bool mark_followed(struct vsfuse_exec_hooks *h, int pidfd,
			  const struct vsfuse_snapshot *s)
{
	int fd = h->fd[VSFUSE_TASKS_MAP];
	struct vsfuse_task t;

	if (bpf_map_lookup_elem(fd, &pidfd, &t) ||
	    !(t.flags & VSFUSE_TASK_IN_EXEC) || t.exec != s->exec)
		return false;
	t.flags |= VSFUSE_TASK_FOLLOWED;
	return !bpf_map_update_elem(fd, &pidfd, &t, BPF_EXIST);
}

bool vsfuse_exec_hooks_may_follow(struct vsfuse_exec_hooks *h, pid_t tid,
				  int dirfd, const struct vsfuse_snapshot *s)
{
	int pidfd = thread_pidfd(tid), root;
	bool may;

	if (pidfd < 0)
		return false;
	root = openat(dirfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	may = !files_have_caps(h, pidfd, root, s) && mark_followed(h, pidfd, s);
	if (root >= 0)
		close(root);
	close(pidfd);
	return may;
}
