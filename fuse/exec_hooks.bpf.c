// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec_hooks.bpf.c - the exec state of every thread, from the kernel's own
 * exec hooks, for a daemon serving every user (docs/SECURITY.md, "Which
 * walk is whose").
 *
 * The LSM hooks of execve run for the program and for each interpreter
 * (bprm_check_security, before its handler opens the next file), once for
 * the new credentials (bprm_creds_from_file, where an LSM may still refuse
 * the exec), and once when they are committed.  Per thread, by tid, the
 * daemon reads which file the exec is at and whether any file so far gains
 * privileges; it writes back, before answering, that a walk of this exec
 * followed the caller's environment.  Such an exec that gains privileges
 * fails at the credential hook: the daemon's early view of privileges is
 * never the last word, the kernel's is.
 *
 * No vmlinux.h: the few fields read are declared here with
 * preserve_access_index, and libbpf relocates them to the running kernel's
 * layout from its BTF (CO-RE).
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <asm/unistd.h>

#include "exec_hooks.h"

/* the build's own execve numbers, for the core's table (execve_nrs.h) */
#define VARSYM_NR_EXECVE __NR_execve
#define VARSYM_NR_EXECVEAT __NR_execveat
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#include "../core/execve_nrs.h"

#define S_ISUID	04000
#define S_ISGID	02000
#define S_IXGRP	00010
#define MNT_NOSUID 0x01
#define PF_KTHREAD 0x00200000
#define FUSE_SUPER_MAGIC 0x65735546

struct user_namespace {
	int level;
} __attribute__((preserve_access_index));

struct super_block {
	unsigned int s_dev;
	unsigned long s_magic;
	struct user_namespace *s_user_ns;
} __attribute__((preserve_access_index));

struct inode {
	unsigned short i_mode;
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct vfsmount {
	int mnt_flags;
} __attribute__((preserve_access_index));

struct path {
	struct vfsmount *mnt;
} __attribute__((preserve_access_index));

struct file {
	struct path f_path;
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct cred;
struct dentry;

struct mm_struct {
	unsigned long start_stack;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	unsigned int flags;
	struct mm_struct *mm;
} __attribute__((preserve_access_index));

/* Where the system-call entry left the call's number. */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long orig_ax;
} __attribute__((preserve_access_index));
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs {
	int syscallno;
} __attribute__((preserve_access_index));
#define SYSCALL_NR(regs) BPF_CORE_READ(regs, syscallno)
#endif

struct linux_binprm {
	struct file *file;
	struct cred *cred;
	unsigned int secureexec:1;
	char buf[256];
} __attribute__((preserve_access_index));

char LICENSE[] SEC("license") = "GPL";

/* By tid: the state of the thread's execve (exec_hooks.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, VSFUSE_EXEC_MAX);
	__type(key, __u32);
	__type(value, struct vsfuse_exec_state);
} exec_state SEC(".maps");

/*
 * By the exec's new credentials: its tid.  A thread that is not its
 * process's leader takes the leader's tid when its exec succeeds, and a
 * failed exec frees those credentials: both find the entry again by them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, VSFUSE_EXEC_MAX);
	__type(key, __u64);
	__type(value, __u32);
} exec_tid SEC(".maps");

/* By tid: the exec number a walk followed the caller in (the daemon's). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, VSFUSE_EXEC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} exec_followed SEC(".maps");

/* By tid: the last file checked, for its capabilities (exec_hooks.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, VSFUSE_EXEC_MAX);
	__type(key, __u32);
	__type(value, struct vsfuse_exec_file);
} exec_file SEC(".maps");

/* Each thread's stamp, by tid % VSFUSE_STAMP_SLOTS (exec_hooks.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VSFUSE_STAMP_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} exec_stamps SEC(".maps");

/* Exec numbers and stamps: one count, never reused. */
__u64 exec_count;
/*
 * Execs seen by an LSM hook: the daemon's proof that the LSM programs run
 * (exec_count moves with the tracepoints too, which run without them).
 */
__u64 lsm_execs;

/* A new stamp for tid, with count (a number fresh from exec_count). */
static void stamp(__u32 tid, __u64 count, bool in_execve)
{
	__u32 slot = tid % VSFUSE_STAMP_SLOTS;
	__u64 *s = bpf_map_lookup_elem(&exec_stamps, &slot);

	if (s)
		*s = vsfuse_stamp(count, tid, in_execve);
}

static __u64 next_count(void)
{
	return __sync_fetch_and_add(&exec_count, 1) + 1;
}

static __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* A new exec for this thread; -EAGAIN when the maps are full. */
static struct vsfuse_exec_state *begin(struct linux_binprm *bprm)
{
	struct vsfuse_exec_state fresh = {};
	__u32 tid = current_tid();

	fresh.exec = next_count();
	fresh.cred = (__u64)BPF_CORE_READ(bprm, cred);
	stamp(tid, fresh.exec, true);
	if (bpf_map_update_elem(&exec_state, &tid, &fresh, BPF_ANY))
		return NULL;
	if (bpf_map_update_elem(&exec_tid, &fresh.cred, &tid, BPF_ANY)) {
		bpf_map_delete_elem(&exec_state, &tid);
		return NULL;
	}
	return bpf_map_lookup_elem(&exec_state, &tid);
}

/*
 * Forgets tid's exec.  Only ever called by the thread that owns tid (or,
 * for the tid a thread gave up when its exec took its leader's, right
 * after): never while another thread's begin() may be writing that key.
 */
static void forget(__u32 tid)
{
	bpf_map_delete_elem(&exec_state, &tid);
	bpf_map_delete_elem(&exec_followed, &tid);
	bpf_map_delete_elem(&exec_file, &tid);
}

SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(exec_begins, struct linux_binprm *bprm, int ret)
{
	struct vsfuse_exec_state *s;

	if (ret)
		return ret;
	__sync_fetch_and_add(&lsm_execs, 1);
	s = begin(bprm);
	if (!s)
		return -EAGAIN;		/* fail closed: we would not know */
	if (BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec))
		s->flags |= VSFUSE_EXEC_PRIVILEGED;
	return 0;
}

/*
 * Where the last file's capabilities are: its path from the exec's root,
 * its inode.  File capabilities are not in the inode, and reading them is
 * I/O: the daemon does it, off the exec path, only when it would follow
 * the caller.  0, or -EAGAIN when it cannot be recorded.
 */
static int record_file(struct vsfuse_exec_state *s, struct file *file)
{
	static const struct vsfuse_exec_file empty;
	struct vsfuse_exec_file *f;
	__u32 tid = current_tid();

	if (bpf_map_update_elem(&exec_file, &tid, &empty, BPF_ANY))
		return -EAGAIN;
	f = bpf_map_lookup_elem(&exec_file, &tid);
	if (!f)
		return -EAGAIN;
	f->exec = s->exec;
	f->ino = BPF_CORE_READ(file, f_inode, i_ino);
	f->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	f->path_len = bpf_d_path(&file->f_path, f->path, sizeof(f->path));
	return 0;
}

/*
 * The program, or an interpreter (sleepable, for bpf_d_path): set-id bits
 * that its mount honours, or an LSM's secureexec, make the exec privileged
 * from here on; file capabilities are for the daemon to read, and for the
 * credential hook to judge.
 */
SEC("lsm.s/bprm_check_security")
int BPF_PROG(exec_checks_file, struct linux_binprm *bprm, int ret)
{
	__u32 tid = current_tid();
	struct vsfuse_exec_state *s;
	struct file *file = bprm->file;
	unsigned short mode;
	char magic[2] = {};
	bool honours_ids;
	int mnt_flags;

	if (ret)
		return ret;
	s = bpf_map_lookup_elem(&exec_state, &tid);
	if (!s || s->cred != (__u64)BPF_CORE_READ(bprm, cred))
		s = begin(bprm);	/* begun before we were loaded */
	if (!s)
		return -EAGAIN;
	mode = BPF_CORE_READ(file, f_inode, i_mode);
	mnt_flags = BPF_CORE_READ(file, f_path.mnt, mnt_flags);
	honours_ids = !(mnt_flags & MNT_NOSUID);
	if (honours_ids && ((mode & S_ISUID) ||
			    (mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)))
		s->flags |= VSFUSE_EXEC_PRIVILEGED;
	if (BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec))
		s->flags |= VSFUSE_EXEC_PRIVILEGED;
	s->flags &= ~(VSFUSE_EXEC_SCRIPT | VSFUSE_EXEC_MAY_HAVE_CAPS);
	if (honours_ids) {
		/* a user namespace's file system: its ids, no reading */
		if (BPF_CORE_READ(file, f_inode, i_sb, s_user_ns, level))
			s->flags |= VSFUSE_EXEC_PRIVILEGED;
		else
			s->flags |= VSFUSE_EXEC_MAY_HAVE_CAPS;
	}
	bpf_probe_read_kernel(magic, sizeof(magic), &bprm->buf);
	if (magic[0] == '#' && magic[1] == '!')
		s->flags |= VSFUSE_EXEC_SCRIPT;
	s->files++;
	if ((s->flags & VSFUSE_EXEC_MAY_HAVE_CAPS) && record_file(s, file))
		return -EAGAIN;
	return 0;
}

/*
 * The kernel's verdict: the capability module has set secureexec for
 * set-id and file capabilities, the LSMs before us theirs.  An exec that
 * gains privileges after a walk followed the caller's environment fails
 * here, while it still can.
 */
SEC("lsm/bprm_creds_from_file")
int BPF_PROG(exec_gets_creds, struct linux_binprm *bprm, struct file *file,
	     int ret)
{
	__u32 tid = current_tid();
	struct vsfuse_exec_state *s;
	__u64 *followed;

	if (ret)
		return ret;
	s = bpf_map_lookup_elem(&exec_state, &tid);
	if (!s || s->cred != (__u64)BPF_CORE_READ(bprm, cred))
		return 0;	/* no walk of this exec was answered under us */
	s->flags |= VSFUSE_EXEC_CREDS;
	if (!BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec))
		return 0;
	s->flags |= VSFUSE_EXEC_PRIVILEGED;
	followed = bpf_map_lookup_elem(&exec_followed, &tid);
	if (followed && *followed == s->exec)
		return -EPERM;
	return 0;
}

/*
 * Committed: the exec's walks are over.  A thread that was not its
 * process's leader now has the leader's tid: its record is under the tid
 * it gave up, found by the exec's credentials.
 */
SEC("lsm/bprm_committing_creds")
int BPF_PROG(exec_commits, struct linux_binprm *bprm)
{
	__u64 cred = (__u64)BPF_CORE_READ(bprm, cred);
	__u32 *was = bpf_map_lookup_elem(&exec_tid, &cred);
	__u32 tid = current_tid();

	if (was && *was != tid) {
		forget(*was);
		stamp(*was, next_count(), false);
	}
	forget(tid);
	stamp(tid, next_count(), false);
	bpf_map_delete_elem(&exec_tid, &cred);
	return 0;
}

/*
 * A failed exec's credentials are freed unused (in an RCU callback, on any
 * CPU): only their key goes.  The record stays until the thread's next
 * exec replaces it or the thread exits; meanwhile the daemon ignores it
 * wherever /proc/TID/syscall shows the thread out of execve.  Deleting it
 * here could race with that next exec's begin() and delete the new record.
 */
SEC("lsm/cred_free")
int BPF_PROG(exec_cred_freed, struct cred *cred)
{
	__u64 key = (__u64)cred;

	bpf_map_delete_elem(&exec_tid, &key);
	return 0;
}

/*
 * A thread exits: its record, if a failed exec left one, goes with it, and
 * its tid's stamp is new before the tid can be given out again.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(exec_thread_exits, void *task)
{
	__u32 tid = current_tid();

	forget(tid);
	stamp(tid, next_count(), false);
	return 0;
}

/* A new thread's tid gets a new stamp before the thread first runs. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(exec_thread_forks, struct task_struct *parent,
	     struct task_struct *child)
{
	stamp(BPF_CORE_READ(child, pid), next_count(), false);
	return 0;
}

/*
 * Whether the current thread's system call is an execve in any ABI of the
 * machine, by the core's table; or may be (an ABI it does not know, a
 * kernel thread's kernel_execve()).
 */
static bool maybe_in_execve(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	enum varsym_abi abi = VARSYM_ABI_UNKNOWN;
	struct varsym_execve call;
	struct pt_regs *regs;
	long nr = -1;

	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		return true;
#if defined(__TARGET_ARCH_x86)
	abi = VARSYM_ABI_X86;
#elif defined(__TARGET_ARCH_arm64)
	/* a compat (32-bit) program's calls are AArch32's numbers */
	abi = BPF_CORE_READ(task, mm, start_stack) >> 32 ? VARSYM_ABI_NATIVE :
							    VARSYM_ABI_ARM32;
#endif
#ifdef SYSCALL_NR
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	nr = SYSCALL_NR(regs);
#endif
	return varsym_execve_call(abi, nr, &call) != 0;
}

/*
 * A follow of a FUSE link: the caller's stamp says whether it is made
 * inside an execve, before the daemon sees the request (the program's own
 * path is walked before any exec hook runs).  Only a stamp of this tid is
 * rewritten, and only if no other thread rewrote it meanwhile.  Every
 * other link of the machine costs one comparison.
 */
SEC("lsm/inode_follow_link")
int BPF_PROG(exec_follows_link, struct dentry *dentry, struct inode *inode,
	     bool rcu, int ret)
{
	__u32 tid = current_tid(), slot = tid % VSFUSE_STAMP_SLOTS;
	__u64 *s, old, new;

	if (ret || BPF_CORE_READ(inode, i_sb, s_magic) != FUSE_SUPER_MAGIC)
		return ret;
	s = bpf_map_lookup_elem(&exec_stamps, &slot);
	if (!s)
		return 0;
	old = *s;
	if (vsfuse_stamp_tid(old) != tid)
		return 0;
	new = old & ~VSFUSE_STAMP_IN_EXECVE;
	if (maybe_in_execve())
		new |= VSFUSE_STAMP_IN_EXECVE;
	if (new != old)
		__sync_val_compare_and_swap(s, old, new);
	return 0;
}
