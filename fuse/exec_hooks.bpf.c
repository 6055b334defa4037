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

#include "exec_hooks.h"

#define S_ISUID	04000
#define S_ISGID	02000
#define S_IXGRP	00010
#define MNT_NOSUID 0x01

struct user_namespace {
	int level;
} __attribute__((preserve_access_index));

struct super_block {
	unsigned int s_dev;
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

__u64 exec_count;

static __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* A new exec for this thread; -EAGAIN when the maps are full. */
static struct vsfuse_exec_state *begin(struct linux_binprm *bprm)
{
	struct vsfuse_exec_state fresh = {};
	__u32 tid = current_tid();

	fresh.exec = __sync_fetch_and_add(&exec_count, 1) + 1;
	fresh.cred = (__u64)BPF_CORE_READ(bprm, cred);
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

	if (was && *was != tid)
		forget(*was);
	forget(tid);
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

/* A thread exits: its record, if a failed exec left one, goes with it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(exec_thread_exits, void *task)
{
	forget(current_tid());
	return 0;
}
