// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec_hooks.c - the machine's one set of exec hooks (exec_hooks.bpf.c,
 * whose skeleton bpftool generates at build time): attached by the first
 * daemon that serves every user, shared by the others through the bpf
 * file system, removed by the last.
 *
 * The set lives under /sys/fs/bpf/varsymfs/NAME, NAME a hash of the BPF
 * object, so that daemons of different builds never share one: its links
 * (which keep its programs attached) and its maps, pinned.  Each daemon
 * holds a shared flock on that directory while it uses the set, and
 * registers its mount, by device, in the mounts map: the follow hook works
 * only for those.  An exclusive flock on /sys/fs/bpf/varsymfs orders the
 * daemons coming and going (the only time a set's directory is made,
 * pinned into, unpinned or removed); a daemon leaving that can then lock
 * the set's directory exclusively is the last, and unpins the set, whose
 * programs are detached when the last descriptor closes.  The kernel drops
 * a dead daemon's lock: nothing is pruned, nor any pid trusted.  A dead
 * daemon's mount stays registered (a device number a later mount may get,
 * whose follows are then snapshotted for nobody) until the set goes, or a
 * daemon joins it alone.
 *
 * Loading needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), "bpf" among
 * the kernel's active LSMs, BTF, and a kernel that lets BPF attach to LSM
 * hooks (lockdown may not); a daemon that cannot load it says why at mount
 * time and works from /proc alone (caller.c).  Without a bpf file system
 * at /sys/fs/bpf (systemd mounts one), a daemon attaches a set of its own.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "exec_hooks.h"
#include "exec_hooks.skel.h"

/* The initial pid namespace's inode: the BPF program's tids are from it. */
#define PROC_PID_INIT_INO 0xEFFFFFFCU
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL	/* Linux 6.9's linux/pidfd.h */
#endif
#define PIN_ROOT "/sys/fs/bpf/varsymfs"

/* The maps a daemon uses, by their pinned names. */
enum { PUBLISHED, MOUNTS, TASKS, FILES, BSS, NMAPS };
static const char *const map_names[NMAPS] = {
	"published", "mounts", "tasks", "files", "bss",
};

struct vsfuse_exec_hooks {
	struct exec_hooks_bpf *skel;	/* this daemon loaded the set */
	int fd[NMAPS];
	const volatile struct exec_hooks_bpf__bss *bss;	/* mapped */
	size_t bss_size;
	const volatile struct vsfuse_published *published;	/* mapped */
	char dir[256];			/* the set's pins; "" if private */
	int lock;			/* dir, shared-locked while we use it */
	unsigned int dev;		/* the mount served, once it is */
	bool serving;
};

#ifdef VSFUSE_BENCH
unsigned int vsfuse_exec_hooks_fail_state;
#endif

/* libbpf's first complaint, the cause, for the line the daemon prints. */
static char libbpf_said[256];

static int keep_first_line(enum libbpf_print_level level, const char *fmt,
			   va_list ap)
{
	if (level != LIBBPF_DEBUG && !libbpf_said[0]) {
		vsnprintf(libbpf_said, sizeof(libbpf_said), fmt, ap);
		libbpf_said[strcspn(libbpf_said, "\n")] = '\0';
	}
	return 0;
}

static void say(char *why, size_t size, const char *step, int err)
{
	snprintf(why, size, "%s: %s%s%s", step, strerror(err),
		 libbpf_said[0] ? "; " : "", libbpf_said);
}

/* FNV-1a of the BPF object: the set's name, one per build. */
static void set_name(char *name, size_t size)
{
	unsigned long long h = 0xcbf29ce484222325ULL;
	const unsigned char *p;
	size_t len, i;

	p = exec_hooks_bpf__elf_bytes(&len);
	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
#ifdef VSFUSE_BENCH
	/* a set whose state always fails is its own */
	h ^= vsfuse_exec_hooks_fail_state;
#endif
	snprintf(name, size, "%016llx", h);
}

static bool on_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

/*
 * Attached is not running: with "bpf" missing from the kernel's active LSMs
 * (an lsm= boot option), the LSM programs attach and are never called.  So
 * an exec of our own (this program's --version) must go through one.
 */
static bool hooks_run(struct vsfuse_exec_hooks *h)
{
	volatile const __u64 *count = &h->bss->lsm_execs;
	__u64 before = *count;
	int status, null;
	pid_t child;

	child = fork();
	if (child < 0)
		return false;
	if (child == 0) {
		null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execl("/proc/self/exe", "varsymfs", "--version", (char *)NULL);
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		return false;
	return *count != before;
}

#define PUBLISHED_SIZE (VSFUSE_PUBLISHED * sizeof(struct vsfuse_published))

static void unmap_shared(struct vsfuse_exec_hooks *h)
{
	if (h->bss)
		munmap((void *)h->bss, h->bss_size);
	if (h->published)
		munmap((void *)h->published, PUBLISHED_SIZE);
	h->bss = NULL;
	h->published = NULL;
}

/* The counters and the published snapshots, read without a system call. */
static int map_shared(struct vsfuse_exec_hooks *h)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (bpf_obj_get_info_by_fd(h->fd[BSS], &info, &len))
		return -errno;
	/* the section holds the fields, without the struct's tail padding */
	if (info.value_size < offsetof(struct exec_hooks_bpf__bss,
				       lost_execs) + sizeof(h->bss->lost_execs))
		return -EINVAL;
	h->bss_size = (info.value_size + page - 1) / page * page;
	p = mmap(NULL, h->bss_size, PROT_READ, MAP_SHARED, h->fd[BSS], 0);
	if (p == MAP_FAILED)
		return -errno;
	h->bss = p;
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(h->fd[PUBLISHED], &info, &len))
		return -errno;
	if (info.value_size != sizeof(struct vsfuse_published) ||
	    info.max_entries != VSFUSE_PUBLISHED)
		return -EINVAL;
	p = mmap(NULL, PUBLISHED_SIZE, PROT_READ, MAP_SHARED,
		 h->fd[PUBLISHED], 0);
	if (p == MAP_FAILED)
		return -errno;
	h->published = p;
	return 0;
}

static const struct bpf_map *skel_map(struct exec_hooks_bpf *s, int i)
{
	const struct bpf_map *m[NMAPS] = {
		s->maps.published, s->maps.mounts, s->maps.tasks,
		s->maps.files, s->maps.bss,
	};

	return m[i];
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

/* Loads and attaches a new set; pins it where h->dir says.  0 or -errno. */
static int attach_new(struct vsfuse_exec_hooks *h, char *why, size_t size)
{
	struct bpf_program *prog;
	char path[512];
	struct utsname u;
	int err, major = 0, minor = 0, i;

	h->skel = exec_hooks_bpf__open();
	if (!h->skel) {
		say(why, size, "opening the BPF program", errno);
		return -errno;
	}
	/* before 6.8, execve walks the program after in_execve is set */
	if (!uname(&u))
		sscanf(u.release, "%d.%d", &major, &minor);
	h->skel->rodata->program_opened_in_execve =
		major < 6 || (major == 6 && minor < 8);
#ifdef VSFUSE_BENCH
	h->skel->rodata->fail_task_storage = vsfuse_exec_hooks_fail_state & 1;
	h->skel->rodata->fail_exec_files = vsfuse_exec_hooks_fail_state & 2;
#endif
	err = exec_hooks_bpf__load(h->skel);
	if (err) {
		say(why, size, "loading the BPF program", -err);
		return err;
	}
	err = exec_hooks_bpf__attach(h->skel);
	if (err) {
		say(why, size, "attaching to the LSM exec hooks", -err);
		return err;
	}
	for (i = 0; i < NMAPS; i++)
		h->fd[i] = dup(bpf_map__fd(skel_map(h->skel, i)));
	if (!h->dir[0])
		return 0;
	bpf_object__for_each_program(prog, h->skel->obj) {
		struct bpf_link *link = NULL;

		/* the skeleton keeps each program's link beside it */
		for (i = 0; i < h->skel->skeleton->prog_cnt; i++)
			if (*h->skel->skeleton->progs[i].prog == prog)
				link = *h->skel->skeleton->progs[i].link;
		snprintf(path, sizeof(path), "%s/link_%s", h->dir,
			 bpf_program__name(prog));
		if (!link || bpf_link__pin(link, path))
			goto pin_failed;
	}
	/* the maps last: a set with all its maps pinned is whole */
	for (i = 0; i < NMAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", h->dir, map_names[i]);
		if (bpf_obj_pin(h->fd[i], path))
			goto pin_failed;
	}
	return 0;
pin_failed:
	say(why, size, "pinning the exec hooks", errno);
	unpin(h);
	return -EIO;
}

/* Opens the set pinned in h->dir: 0, or -errno when there is none whole. */
static int reuse_pinned(struct vsfuse_exec_hooks *h)
{
	char path[512];
	int i;

	for (i = 0; i < NMAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", h->dir, map_names[i]);
		h->fd[i] = bpf_obj_get(path);
		if (h->fd[i] < 0)
			return -errno;
	}
	return 0;
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

/* Forgets every registered mount: their daemons are gone. */
static void forget_mounts(int fd)
{
	__u32 key;

	while (!bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key))
			break;
}

/*
 * Leaves the set's directory, under the root's lock: the last daemon
 * (none holds the directory's lock any more) unpins the set.
 */
static void leave(struct vsfuse_exec_hooks *h)
{
	flock(h->lock, LOCK_UN);
	if (flock(h->lock, LOCK_EX | LOCK_NB))
		return;
	unpin(h);
	rmdir(h->dir);
	rmdir(PIN_ROOT);	/* unless another build's set is there */
}

static void close_all(struct vsfuse_exec_hooks *h)
{
	int i;

	unmap_shared(h);
	for (i = 0; i < NMAPS; i++)
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	exec_hooks_bpf__destroy(h->skel);
	if (h->lock >= 0)
		close(h->lock);
	free(h);
}

/*
 * Joins the set pinned in h->dir, or attaches and pins a new one (and
 * then checks once that its programs run).  Under the root's lock.
 */
static int join(struct vsfuse_exec_hooks *h, char *why, size_t size)
{
	bool alone;
	int i;

	h->lock = open_locked(h->dir, LOCK_EX | LOCK_NB);
	alone = h->lock >= 0;
	if (!alone)
		h->lock = open_locked(h->dir, LOCK_SH);
	else
		flock(h->lock, LOCK_SH);
	if (h->lock < 0) {
		say(why, size, "locking the exec hooks' directory", -h->lock);
		return -1;
	}
	if (!reuse_pinned(h)) {
		if (alone)
			forget_mounts(h->fd[MOUNTS]);
		return 0;
	}
	for (i = 0; i < NMAPS; i++) {
		if (h->fd[i] >= 0)
			close(h->fd[i]);
		h->fd[i] = -1;
	}
	unpin(h);	/* a set left half pinned */
	return attach_new(h, why, size);
}

struct vsfuse_exec_hooks *vsfuse_exec_hooks_load(char *why, size_t size)
{
	struct vsfuse_exec_hooks *h;
	int err, i, root = -1;
	char name[32];
	struct stat st;

	/* Our tids must be the kernel's own, as the program sees them. */
	if (stat("/proc/self/ns/pid", &st) || st.st_ino != PROC_PID_INIT_INO) {
		snprintf(why, size, "not in the initial pid namespace");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		say(why, size, "allocating", ENOMEM);
		return NULL;
	}
	h->lock = -1;
	for (i = 0; i < NMAPS; i++)
		h->fd[i] = -1;
	libbpf_set_print(keep_first_line);
	libbpf_said[0] = '\0';
	if (on_bpffs("/sys/fs/bpf")) {
		set_name(name, sizeof(name));
		snprintf(h->dir, sizeof(h->dir), "%s/%s", PIN_ROOT, name);
		root = open_locked(PIN_ROOT, LOCK_EX);
		if (root < 0) {
			say(why, size, "locking " PIN_ROOT, -root);
			goto fail;
		}
		if (join(h, why, size))
			goto fail;
	} else if (attach_new(h, why, size)) {
		goto fail;
	}
	err = map_shared(h);
	if (err) {
		say(why, size, "mapping the exec hooks' maps", -err);
		goto fail;
	}
	/* a set is checked once, by the daemon that attached it */
	if (h->skel && !hooks_run(h)) {
		snprintf(why, size, "no exec hook ran for an exec of ours (is bpf among the kernel's active LSMs? see lsm= in kernel-parameters)");
		goto fail;
	}
	if (root >= 0)
		close(root);
	libbpf_set_print(NULL);
	return h;
fail:
	libbpf_set_print(NULL);
	if (h->skel && h->lock >= 0) {
		unpin(h);	/* what we pinned of a set that does not work */
		leave(h);
	}
	if (root >= 0)
		close(root);
	close_all(h);
	return NULL;
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
	err = mount_dev(mountpoint, &h->dev);
	if (err)
		return err;
	if (bpf_map_update_elem(h->fd[MOUNTS], &h->dev, &served, BPF_ANY))
		return -errno;
	h->serving = true;
	return 0;
}

void vsfuse_exec_hooks_unload(struct vsfuse_exec_hooks *h)
{
	int root = -1;

	if (!h)
		return;
	if (h->dir[0])
		root = open_locked(PIN_ROOT, LOCK_EX);
	if (h->serving)
		bpf_map_delete_elem(h->fd[MOUNTS], &h->dev);
	if (root >= 0) {
		leave(h);
		close(root);
	}
	close_all(h);
}

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

	if (f->path_len <= 1 || f->path_at > VSFUSE_PATHS_ROOM ||
	    path[0] != '/' || path[f->path_len - 1])
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
	const struct vsfuse_exec_file *f;
	unsigned int i;

	if (!(s->flags & VSFUSE_SNAP_CAPS_UNREAD))
		return false;
	if (root < 0 || bpf_map_lookup_elem(h->fd[FILES], &pidfd, &r) ||
	    r.exec != s->exec)
		return true;
	for (i = 0; i < VSFUSE_EXEC_FILES; i++) {
		f = &r.file[i];
		if ((s->recorded & (1U << i)) && one_file_caps(root, &r, f))
			return true;
	}
	return false;
}

/* Marks the snapshot's exec, still in flight, as having followed. */
static bool mark_followed(struct vsfuse_exec_hooks *h, int pidfd,
			  const struct vsfuse_snapshot *s)
{
	struct vsfuse_task t;

	if (bpf_map_lookup_elem(h->fd[TASKS], &pidfd, &t) ||
	    !(t.flags & VSFUSE_TASK_IN_EXEC) || t.exec != s->exec)
		return false;
	t.flags |= VSFUSE_TASK_FOLLOWED;
	return !bpf_map_update_elem(h->fd[TASKS], &pidfd, &t, BPF_EXIST);
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

unsigned long long vsfuse_exec_hooks_unkept(const struct vsfuse_exec_hooks *h)
{
	return h->bss->lost_execs;
}
