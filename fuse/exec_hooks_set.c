// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec_hooks_set.c - the machine's one set of exec hooks, pinned under
 * /sys/fs/bpf/varsymfs/NAME (NAME: a hash of the BPF object, one set per
 * build): attached by the first daemon that serves every user, shared by
 * the others, unpinned by the last, and told each daemon's mount.
 *
 * A daemon holds a shared flock on the set's directory while it uses the
 * set (a bpffs directory takes flocks; pinned objects cannot be opened),
 * which the kernel drops if it dies: no pid is trusted, nothing pruned.
 * An exclusive flock on /sys/fs/bpf/varsymfs orders the daemons coming and
 * going, the only times a set's directory changes; one that leaves and can
 * then lock the set's directory exclusively is the last.  A dead daemon's
 * mount stays registered until the set goes or its device is registered
 * again (a mount of another file system that gets it has its follows
 * snapshotted for nobody).  Without a bpf file system, a daemon attaches a
 * set of its own.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "exec_hooks.h"
#include "exec_hooks.skel.h"

#define PIN_ROOT "/sys/fs/bpf/varsymfs"

/* The maps' pinned names, by VSFUSE_*_MAP. */
static const char *const map_names[VSFUSE_NMAPS] = {
	"published", "mounts", "tasks", "files", "bss",
};

/* FNV-1a of the BPF object: the set's name, one per build. */
static void set_name(char *name, size_t size)
{
	unsigned long long h = 0xcbf29ce484222325ULL;
	const unsigned char *p;
	size_t len, i;

	p = exec_hooks_bpf__elf_bytes(&len);
	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
#ifdef VSFUSE_FAULTS
	/* a set whose state always fails is its own */
	h ^= vsfuse_exec_hooks_faults & ~VSFUSE_FAIL_SERVE;
#endif
	snprintf(name, size, "%016llx", h);
}

/*
 * dir, made if need be, open and locked (how); again if it was removed
 * while we waited for the lock.  The descriptor, or -errno.
 */
static int open_locked(const char *dir, int how)
{
	struct stat held, now;
	int fd;

	for (;;) {
		mkdir(dir, 0700);
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (flock(fd, how)) {
			close(fd);
			return -errno;
		}
		if (!fstat(fd, &held) && !stat(dir, &now) &&
		    held.st_ino == now.st_ino && held.st_dev == now.st_dev)
			return fd;
		close(fd);
	}
}

/* Unpins whatever of a set is pinned in h->dir (a stale one included). */
static void unpin(struct vsfuse_exec_hooks *h)
{
	DIR *d = opendir(h->dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

/* Pins the set this daemon attached: its links, then its maps. */
static int pin(struct vsfuse_exec_hooks *h, char *why, size_t size)
{
	const struct bpf_object_skeleton *s = h->skel->skeleton;
	char path[512];
	int i;

	for (i = 0; i < s->prog_cnt; i++) {
		snprintf(path, sizeof(path), "%s/link_%s", h->dir,
			 s->progs[i].name);
		if (bpf_link__pin(*s->progs[i].link, path))
			goto failed;
	}
	/* the maps last: a set with all its maps pinned is whole */
	for (i = 0; i < VSFUSE_NMAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", h->dir, map_names[i]);
		if (bpf_obj_pin(h->fd[i], path))
			goto failed;
	}
	return 0;
failed:
	vsfuse_exec_hooks_say(why, size, "pinning the exec hooks", errno);
	return -1;
}

/* Opens the set pinned in h->dir: 0, or -1 when there is none whole. */
static int reuse_pinned(struct vsfuse_exec_hooks *h)
{
	char path[512];
	int i;

	for (i = 0; i < VSFUSE_NMAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", h->dir, map_names[i]);
		h->fd[i] = bpf_obj_get(path);
		if (h->fd[i] < 0)
			goto none;
	}
	return 0;
none:
	for (i = 0; i < VSFUSE_NMAPS; i++) {
		if (h->fd[i] >= 0)
			close(h->fd[i]);
		h->fd[i] = -1;
	}
	return -1;
}

int vsfuse_exec_set_join(struct vsfuse_exec_hooks *h, int *root, char *why,
			 size_t size)
{
	struct statfs st;
	char name[32];

	*root = -1;
	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC)
		return vsfuse_exec_hooks_attach(h, why, size);
	set_name(name, sizeof(name));
	snprintf(h->dir, sizeof(h->dir), "%s/%s", PIN_ROOT, name);
	*root = open_locked(PIN_ROOT, LOCK_EX);
	if (*root < 0) {
		vsfuse_exec_hooks_say(why, size, "locking " PIN_ROOT, -*root);
		return -1;
	}
	h->lock = open_locked(h->dir, LOCK_SH);
	if (h->lock < 0) {
		vsfuse_exec_hooks_say(why, size, "locking the exec hooks",
				      -h->lock);
		return -1;
	}
	if (!reuse_pinned(h))
		return 0;
	unpin(h);	/* a set left half pinned */
	if (vsfuse_exec_hooks_attach(h, why, size) || pin(h, why, size))
		return -1;
	return 0;
}

void vsfuse_exec_set_leave(struct vsfuse_exec_hooks *h, int root,
			   bool broken)
{
	int held = root < 0 ? open_locked(PIN_ROOT, LOCK_EX) : root;

	if (h->serving)
		bpf_map_delete_elem(h->fd[VSFUSE_MOUNTS_MAP], &h->dev);
	if (held < 0)
		return;
	if (broken)
		unpin(h);
	/* the last daemon: none holds the set's directory any more */
	flock(h->lock, LOCK_UN);
	if (!flock(h->lock, LOCK_EX | LOCK_NB)) {
		unpin(h);
		rmdir(h->dir);
		rmdir(PIN_ROOT);	/* unless another build's set is there */
	}
	if (root < 0)
		close(held);
}

/*
 * The device of the mount at mountpoint.  AT_STATX_DONT_SYNC: the root's
 * attributes as the kernel holds them, never a GETATTR to this daemon,
 * whose loop has not started yet (docs/SPEC.md section 7: it never walks
 * its own mount); the device is the super block's.
 */
static int mount_dev(const char *mountpoint, unsigned int *dev)
{
	struct statx stx;

	if (statx(AT_FDCWD, mountpoint, AT_STATX_DONT_SYNC, 0, &stx))
		return -errno;
	/* the kernel's dev_t: major << 20 | minor */
	*dev = stx.stx_dev_major << 20 | stx.stx_dev_minor;
	return 0;
}

int vsfuse_exec_hooks_serve(struct vsfuse_exec_hooks *h,
			    const char *mountpoint)
{
	__u8 served = 1;
	int err;

	if (!h)
		return 0;
#ifdef VSFUSE_FAULTS
	if (vsfuse_exec_hooks_faults & VSFUSE_FAIL_SERVE)
		return -ENOSPC;
#endif
	err = mount_dev(mountpoint, &h->dev);
	if (err)
		return err;
	if (bpf_map_update_elem(h->fd[VSFUSE_MOUNTS_MAP], &h->dev, &served,
				BPF_ANY))
		return -errno;
	h->serving = true;
	return 0;
}
