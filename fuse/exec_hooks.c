// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec_hooks.c - loading the daemons' exec hooks (exec_hooks.bpf.c, whose
 * skeleton bpftool generates at build time) and checking that they run.
 * The machine has one set, shared by every daemon that serves every user
 * (exec_hooks_set.c); a request's snapshot is read in exec_hooks_read.c.
 *
 * Loading needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), "bpf" among
 * the kernel's active LSMs, BTF, and a kernel that lets BPF attach to LSM
 * hooks (lockdown may not); a daemon that cannot load it says why at mount
 * time and works from /proc alone (caller.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "exec_hooks.h"
#include "exec_hooks.skel.h"

/* The initial pid namespace's inode: the BPF program's tids are from it. */
#define PROC_PID_INIT_INO 0xEFFFFFFCU
#define PUBLISHED_SIZE (VSFUSE_PUBLISHED * sizeof(struct vsfuse_published))

#ifdef VSFUSE_FAULTS
unsigned int vsfuse_exec_hooks_faults;
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

void vsfuse_exec_hooks_say(char *why, size_t size, const char *step, int err)
{
	snprintf(why, size, "%s: %s%s%s", step, strerror(err),
		 libbpf_said[0] ? "; " : "", libbpf_said);
}

static void sleepable(struct bpf_program *p)
{
	bpf_program__set_flags(p, bpf_program__flags(p) | BPF_F_SLEEPABLE);
}

int vsfuse_exec_hooks_attach(struct vsfuse_exec_hooks *h, char *why,
			     size_t size)
{
	struct exec_hooks_bpf *s = exec_hooks_bpf__open();
	int err, major = 0, minor = 0;
	struct utsname u;
	bool before_6_8;

	h->skel = s;
	if (!s) {
		vsfuse_exec_hooks_say(why, size, "opening the BPF program",
				      errno);
		return -1;
	}
	/* before 6.8, execve walks the program after in_execve is set */
	if (!uname(&u))
		sscanf(u.release, "%d.%d", &major, &minor);
	before_6_8 = major < 6 || (major == 6 && minor < 8);
	s->rodata->program_opened_in_execve = before_6_8;
	/*
	 * The hooks that make an exec's storage may sleep for memory from
	 * 6.8.  Before, a sleeping one holds its CPU's task-storage lock, and
	 * the others there (the fork hook's, which makes storage then; all
	 * of them in 6.1) get none: doubt for bystanders' execs.
	 */
	if (!before_6_8) {
		sleepable(s->progs.exec_begins);
		sleepable(s->progs.exec_checks_file);
	}
#ifdef VSFUSE_FAULTS
	s->rodata->fail_task_storage =
		vsfuse_exec_hooks_faults & VSFUSE_FAIL_TASK_STORAGE;
	s->rodata->fail_exec_files =
		vsfuse_exec_hooks_faults & VSFUSE_FAIL_EXEC_FILES;
#endif
	err = exec_hooks_bpf__load(s);
	if (err) {
		vsfuse_exec_hooks_say(why, size, "loading the BPF program",
				      -err);
		return -1;
	}
	err = exec_hooks_bpf__attach(s);
	if (err) {
		vsfuse_exec_hooks_say(why, size,
				      "attaching to the LSM exec hooks", -err);
		return -1;
	}
	h->fd[VSFUSE_PUBLISHED_MAP] = dup(bpf_map__fd(s->maps.published));
	h->fd[VSFUSE_MOUNTS_MAP] = dup(bpf_map__fd(s->maps.mounts));
	h->fd[VSFUSE_TASKS_MAP] = dup(bpf_map__fd(s->maps.tasks));
	h->fd[VSFUSE_FILES_MAP] = dup(bpf_map__fd(s->maps.files));
	h->fd[VSFUSE_BSS_MAP] = dup(bpf_map__fd(s->maps.bss));
	return 0;
}

/* The counters and the published snapshots, read without a system call. */
static int map_shared(struct vsfuse_exec_hooks *h)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (bpf_obj_get_info_by_fd(h->fd[VSFUSE_BSS_MAP], &info, &len))
		return -errno;
	/* the section holds the fields, without the struct's tail padding */
	if (info.value_size < offsetof(struct exec_hooks_bpf__bss,
				       lost_execs) + sizeof(h->bss->lost_execs))
		return -EINVAL;
	h->bss_size = (info.value_size + page - 1) / page * page;
	p = mmap(NULL, h->bss_size, PROT_READ, MAP_SHARED,
		 h->fd[VSFUSE_BSS_MAP], 0);
	if (p == MAP_FAILED)
		return -errno;
	h->bss = p;
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(h->fd[VSFUSE_PUBLISHED_MAP], &info, &len))
		return -errno;
	if (info.value_size != sizeof(struct vsfuse_published) ||
	    info.max_entries != VSFUSE_PUBLISHED)
		return -EINVAL;
	p = mmap(NULL, PUBLISHED_SIZE, PROT_READ, MAP_SHARED,
		 h->fd[VSFUSE_PUBLISHED_MAP], 0);
	if (p == MAP_FAILED)
		return -errno;
	h->published = p;
	return 0;
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

static void close_all(struct vsfuse_exec_hooks *h)
{
	int i;

	if (h->bss)
		munmap((void *)h->bss, h->bss_size);
	if (h->published)
		munmap((void *)h->published, PUBLISHED_SIZE);
	for (i = 0; i < VSFUSE_NMAPS; i++)
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	exec_hooks_bpf__destroy(h->skel);
	if (h->lock >= 0)
		close(h->lock);
	free(h);
}

struct vsfuse_exec_hooks *vsfuse_exec_hooks_load(char *why, size_t size)
{
	struct vsfuse_exec_hooks *h;
	int err, i, root = -1;
	struct stat st;

	/* Our tids must be the kernel's own, as the program sees them. */
	if (stat("/proc/self/ns/pid", &st) || st.st_ino != PROC_PID_INIT_INO) {
		snprintf(why, size, "not in the initial pid namespace");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		vsfuse_exec_hooks_say(why, size, "allocating", ENOMEM);
		return NULL;
	}
	h->lock = -1;
	for (i = 0; i < VSFUSE_NMAPS; i++)
		h->fd[i] = -1;
	libbpf_set_print(keep_first_line);
	libbpf_said[0] = '\0';
	if (vsfuse_exec_set_join(h, &root, why, size))
		goto fail;
	err = map_shared(h);
	if (err) {
		vsfuse_exec_hooks_say(why, size, "mapping the exec hooks' maps",
				      -err);
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
	if (h->lock >= 0)
		vsfuse_exec_set_leave(h, root, h->skel);
	if (root >= 0)
		close(root);
	close_all(h);
	return NULL;
}

void vsfuse_exec_hooks_unload(struct vsfuse_exec_hooks *h)
{
	if (!h)
		return;
	if (h->lock >= 0)
		vsfuse_exec_set_leave(h, -1, false);
	close_all(h);
}

unsigned long long vsfuse_exec_hooks_unkept(const struct vsfuse_exec_hooks *h)
{
	return h->bss->lost_execs;
}
