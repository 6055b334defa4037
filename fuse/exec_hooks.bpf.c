// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec_hooks.bpf.c - the exec state of every thread, from the kernel's own
 * exec hooks, and what each follow of a varsymfs link shows of its caller,
 * for the FUSE daemons that serve every user (docs/SECURITY.md, "Which
 * walk is whose").  One set for the machine, shared by every daemon.
 *
 * Per thread, in task storage (it belongs to the task, whatever its tid):
 * which exec is in flight, how many files it checked (bprm_check_security:
 * the program, then each interpreter), whether any gains privileges, and,
 * in a storage of their own made only then, the paths of those whose
 * capabilities the daemon must read.  At each follow (or readlink) of a
 * link of a varsymfs mount, in the caller's own context and before its
 * request is sent, the daemon's facts for that request (exec_hooks.h,
 * struct vsfuse_snapshot) go to the caller's slot of a fixed array, the
 * one place they are kept.  The daemon marks, in the thread's storage,
 * that a walk of its exec followed the caller's environment; such an exec
 * that the kernel makes privileged fails at the credential hook
 * (bprm_creds_from_file), where an LSM may still refuse.
 *
 * No user can fill anything here for another: slots are overwritten, and
 * the rest is each task's own.  An exec whose storage cannot be had is
 * doubt, or privileged (counted in lost_execs): the secure answer on a
 * mount serving others; nothing here fails an exec for its bookkeeping.
 *
 * The rules are the core's (core/exec_rule.h, core/execve_nrs.h); the few
 * kernel fields read are declared here with preserve_access_index, and
 * libbpf relocates them to the running kernel's layout (CO-RE).
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
#include "../core/exec_rule.h"

#define MNT_NOSUID 0x01
#define PF_KTHREAD 0x00200000
#define FUSE_SUPER_MAGIC 0x65735546

struct user_namespace {
	struct user_namespace *parent;
	int level;
	struct {
		unsigned int val;
	} owner;
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

struct mnt_namespace;

/* fs/mount.h's, around a vfsmount: its mount namespace. */
struct mount {
	struct vfsmount mnt;
	struct mnt_namespace *mnt_ns;
} __attribute__((preserve_access_index));

struct path {
	struct vfsmount *mnt;
} __attribute__((preserve_access_index));

struct file {
	struct path f_path;
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct cred {
	struct {
		unsigned int val;
	} fsuid;
	struct user_namespace *user_ns;
} __attribute__((preserve_access_index));

struct nsproxy {
	struct mnt_namespace *mnt_ns;
} __attribute__((preserve_access_index));

struct dentry {
	struct inode *d_inode;
} __attribute__((preserve_access_index));

/* Where the system-call entry left the call and its arguments. */
#if defined(__TARGET_ARCH_x86)
struct thread_info {
	unsigned int status;
} __attribute__((preserve_access_index));

struct pt_regs {
	unsigned long di, si, dx, r10, r8, r9;
	unsigned long bx, cx, bp;
	unsigned long orig_ax;
} __attribute__((preserve_access_index));

#define TS_COMPAT 0x0002	/* a 32-bit system call is in progress */
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs {
	unsigned long long regs[31];
	unsigned long long pstate;
	unsigned long long orig_x0;
	int syscallno;
} __attribute__((preserve_access_index));

#define PSR_MODE32_BIT 0x10	/* AArch32 user mode: the ABI's own */
#endif

/* Set at exec from the program's class: 4 GiB for a 32-bit one (x32 too). */
struct mm_struct {
	unsigned long task_size;
} __attribute__((preserve_access_index));

struct task_struct {
#if defined(__TARGET_ARCH_x86)
	struct thread_info thread_info;
#endif
	int pid;
	struct mm_struct *mm;
	unsigned int flags;
	unsigned int in_execve:1;
	unsigned long long self_exec_id;
	const struct cred *cred;
	struct nsproxy *nsproxy;
} __attribute__((preserve_access_index));

struct linux_binprm {
	struct file *file;
	struct cred *cred;
	unsigned int secureexec:1;
} __attribute__((preserve_access_index));

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader: before 6.8, execve walks the program with in_execve. */
const volatile bool program_opened_in_execve;
#ifdef VSFUSE_FAULTS
/* The tests' build only: task storage that cannot be had, or records. */
const volatile bool fail_task_storage, fail_exec_files;
#endif

/* Exec numbers and tokens: one count, never reused. */
__u64 exec_count;
/* Execs seen by an LSM hook: the loader's proof that they run. */
__u64 lsm_execs;
/* Execs whose state or records could not be had: secure, and said. */
__u64 lost_execs;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vsfuse_task);
} tasks SEC(".maps");

/* An exec's files whose capabilities the daemon reads (exec_hooks.h). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vsfuse_exec_files);
} files SEC(".maps");

/*
 * The snapshots, by tid modulo its size, mapped by the daemons: who
 * writes a slot, who reads it and when, above publish().
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, VSFUSE_PUBLISHED);
	__type(key, __u32);
	__type(value, struct vsfuse_published);
} published SEC(".maps");

/* The varsymfs mounts the daemons serve, by device: root's alone. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VSFUSE_MOUNTS);
	__type(key, __u32);
	__type(value, __u8);
} mounts SEC(".maps");

static __u64 next_count(void)
{
	return __sync_fetch_and_add(&exec_count, 1) + 1;
}

static __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

static struct vsfuse_task *task_state(struct task_struct *task, bool create)
{
#ifdef VSFUSE_FAULTS
	if (fail_task_storage)
		return NULL;
#endif
	return bpf_task_storage_get(&tasks, task, 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/*
 * A slot is the only place a snapshot is kept: it must never show a thread
 * waiting for its answer another snapshot than the one taken for that
 * request, another thread's or an older one of its own.
 *  - Only the thread holding tid T writes T into a slot (publish(), in its
 *    own context, one hook at a time); every other write empties it.  A
 *    writer takes the slot (odd count) and leaves its own new snapshot or
 *    nothing, whoever's it was: when T's publish finds the slot held, no
 *    older snapshot of T is left, and the daemon, finding another tid,
 *    none, or an odd count, tells T's walk by /proc.
 *  - The daemon reads T's slot only while T waits in the request whose
 *    snapshot T's hook just published: T writes nothing meanwhile.
 *  - T's old snapshots go before T can be handed out again: T's exit hook
 *    empties the slot (or a writer holding it then leaves its own or
 *    none); a tid given up by de_thread() (a non-leader's exec takes the
 *    leader's, and no hook runs under its own again) is emptied by the
 *    fork hook that hands it out, before the new thread runs; a leader's
 *    tid is handed over only after the leader's exit hook ran.
 *  - unpublish() looks at the slot's tid unlocked: no one writes T there
 *    meanwhile (T's holder is this thread, gone, or not yet running), and
 *    the locks that freed and allocated T order what its last holder wrote.
 * Compare-and-swap is fully ordered on every architecture the JIT knows:
 * the odd count is seen before what is written after it.
 */
static struct vsfuse_published *slot_take(__u32 tid, __u32 *seq)
{
	__u32 i = tid % VSFUSE_PUBLISHED;
	struct vsfuse_published *p = bpf_map_lookup_elem(&published, &i);

	if (!p)
		return NULL;
	*seq = p->seq;
	if ((*seq & 1) ||
	    __sync_val_compare_and_swap(&p->seq, *seq, *seq + 1) != *seq)
		return NULL;
	return p;
}

/* What was written is seen before the even count. */
static void slot_give(struct vsfuse_published *p, __u32 seq)
{
	__sync_val_compare_and_swap(&p->seq, seq + 1, seq + 2);
}

/* The daemons may read tid's new snapshot s from its slot. */
static void publish(__u32 tid, const struct vsfuse_snapshot *s)
{
	struct vsfuse_published *p;
	__u32 seq;

	p = slot_take(tid, &seq);
	if (!p)
		return;
	p->tid = tid;
	p->snap = *s;
	slot_give(p, seq);
}

/* tid's snapshot went: its slot no longer shows it. */
static void unpublish(__u32 tid)
{
	__u32 i = tid % VSFUSE_PUBLISHED, seq;
	struct vsfuse_published *p = bpf_map_lookup_elem(&published, &i);

	/* only tid itself writes its tid there: no race with that */
	if (!p || p->tid != tid)
		return;
	p = slot_take(tid, &seq);
	if (!p)
		return;
	/* whoever's it is now: that thread's publish may have found it held */
	p->tid = 0;
	slot_give(p, seq);
}

/* The system call in progress: its number, its ABI, its arguments. */
struct call {
	long nr;
	enum varsym_abi abi;
	bool compat;			/* a compat (32-bit) ABI's call */
	unsigned long long arg[6];
};

static void read_call(struct task_struct *task, struct call *c)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	c->abi = VARSYM_ABI_UNKNOWN;
	c->nr = -1;
#if defined(__TARGET_ARCH_x86)
	c->nr = BPF_CORE_READ(regs, orig_ax);
	c->compat = BPF_CORE_READ(task, thread_info.status) & TS_COMPAT;
	if (c->compat) {
		c->abi = VARSYM_ABI_IA32;
		c->arg[0] = BPF_CORE_READ(regs, bx);
		c->arg[1] = BPF_CORE_READ(regs, cx);
		c->arg[2] = BPF_CORE_READ(regs, dx);
		c->arg[3] = BPF_CORE_READ(regs, si);
		c->arg[4] = BPF_CORE_READ(regs, di);
		c->arg[5] = BPF_CORE_READ(regs, bp);
		return;
	}
	c->abi = c->nr & VARSYM_X32_BIT ? VARSYM_ABI_X32 : VARSYM_ABI_X86_64;
	c->arg[0] = BPF_CORE_READ(regs, di);
	c->arg[1] = BPF_CORE_READ(regs, si);
	c->arg[2] = BPF_CORE_READ(regs, dx);
	c->arg[3] = BPF_CORE_READ(regs, r10);
	c->arg[4] = BPF_CORE_READ(regs, r8);
	c->arg[5] = BPF_CORE_READ(regs, r9);
#elif defined(__TARGET_ARCH_arm64)
	c->nr = BPF_CORE_READ(regs, syscallno);
	/* the user mode it trapped from: AArch32 only for AArch32 code */
	c->compat = BPF_CORE_READ(regs, pstate) & PSR_MODE32_BIT;
	c->abi = c->compat ? VARSYM_ABI_ARM32 : VARSYM_ABI_NATIVE;
	c->arg[0] = BPF_CORE_READ(regs, orig_x0);
	c->arg[1] = BPF_CORE_READ(regs, regs[1]);
	c->arg[2] = BPF_CORE_READ(regs, regs[2]);
	c->arg[3] = BPF_CORE_READ(regs, regs[3]);
	c->arg[4] = BPF_CORE_READ(regs, regs[4]);
	c->arg[5] = BPF_CORE_READ(regs, regs[5]);
#endif
}

/* Whether the call is execve or execveat, and where its envp is. */
static bool execve_call(const struct call *c, unsigned long long *envp,
			unsigned int *ptr_size)
{
	struct varsym_execve e;

	if (varsym_execve_call(c->abi, c->nr, &e) != 1 || e.envp_arg > 5)
		return false;
	*envp = varsym_user_ptr(c->arg[e.envp_arg], e.ptr_size);
	*ptr_size = e.ptr_size;
	return true;
}

/* The exec's identity on its call: before 6.8, tells it from the next. */
static void exec_call(struct task_struct *task, unsigned long long id[3])
{
	struct call c;

	read_call(task, &c);
	id[0] = c.nr;
	id[1] = c.arg[0];
	id[2] = c.arg[2];
}

/* The records an exec leaves, gone with it. */
static void forget_exec(struct task_struct *task, struct vsfuse_task *t)
{
	if (t->recorded)
		bpf_task_storage_delete(&files, task);
	t->exec = 0;
	t->recorded = 0;
}

/*
 * Once per exec, after the program is open, before any file is checked.
 * Sleepable from 6.8 (exec_hooks.c): the task's storage, made here, may
 * then wait for memory rather than fail when a burst of execs has emptied
 * the kernel's atomic cache.
 */
SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(exec_begins, struct linux_binprm *bprm, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vsfuse_task *t;

	if (ret)
		return ret;
	__sync_fetch_and_add(&lsm_execs, 1);
	t = task_state(task, true);
	if (!t) {	/* its walks will find no state: doubt */
		__sync_fetch_and_add(&lost_execs, 1);
		return 0;
	}
	forget_exec(task, t);
	t->exec = next_count();
	t->files = 0;
	t->flags = VSFUSE_TASK_IN_EXEC;
	if (BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec))
		t->flags |= VSFUSE_TASK_PRIVILEGED;
	exec_call(task, t->call);
	return 0;
}

/* Whether file's mount is in the caller's mount namespace. */
static bool in_callers_namespace(struct task_struct *task, struct file *file)
{
	struct vfsmount *mnt = BPF_CORE_READ(file, f_path.mnt);
	struct mount *m = (void *)mnt - bpf_core_field_offset(struct mount,
							       mnt);

	return BPF_CORE_READ(m, mnt_ns) == BPF_CORE_READ(task, nsproxy, mnt_ns);
}

/*
 * Records file's path for the daemon, as the exec's file number i, in the
 * task's own storage (made here, so only for execs that need it).
 */
static bool record_file(struct task_struct *task, struct vsfuse_task *t,
			struct file *file, unsigned int i)
{
	struct vsfuse_exec_files *r;
	unsigned int at;
	long len;

#ifdef VSFUSE_FAULTS
	if (fail_exec_files)
		return false;
#endif
	r = bpf_task_storage_get(&files, task, 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!r || i >= VARSYM_EXEC_FILES)
		return false;
	if (r->exec != t->exec) {
		r->exec = t->exec;
		r->used = 0;
	}
	at = r->used;
	if (at > VSFUSE_PATHS_ROOM)
		return false;
	len = bpf_d_path(&file->f_path, r->paths + at, VSFUSE_PATH_MAX);
	r->file[i].ino = BPF_CORE_READ(file, f_inode, i_ino);
	r->file[i].dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	r->file[i].path_len = len;
	r->file[i].path_at = at;
	if (len > 0)
		r->used = at + len;
	t->recorded |= 1U << i;
	return true;
}

/*
 * The program, or an interpreter: whether it gains privileges, by the
 * core's test; file capabilities are for the daemon to read, and for the
 * credential hook to judge.  Sleepable from 6.8, as exec_begins.
 */
SEC("lsm/bprm_check_security")
int BPF_PROG(exec_checks_file, struct linux_binprm *bprm, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file *file = bprm->file;
	struct varsym_exec_file f = { .caps = VARSYM_UNKNOWN };
	struct vsfuse_task *t;
	unsigned int i;

	if (ret)
		return ret;
	t = task_state(task, false);
	if (!t)
		return 0;	/* its walks find no state: doubt */
	if (!(t->flags & VSFUSE_TASK_IN_EXEC)) {
		/* no exec_begins for it (before this set): its walks doubt */
		t->flags |= VSFUSE_TASK_DOUBT;
		return 0;
	}
	i = t->files++;
	if (t->flags & VSFUSE_TASK_PRIVILEGED)
		return 0;
	if (i >= VARSYM_EXEC_FILES) {
		t->flags |= VSFUSE_TASK_PRIVILEGED;	/* deeper than exec goes */
		return 0;
	}
	f.mode = BPF_CORE_READ(file, f_inode, i_mode);
	f.secureexec = BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec);
	f.honours_ids = (BPF_CORE_READ(file, f_path.mnt, mnt_flags) &
			 MNT_NOSUID) || !in_callers_namespace(task, file) ?
			VARSYM_NO : VARSYM_YES;
	/* a user namespace's file system: no reading its capabilities */
	if (BPF_CORE_READ(file, f_inode, i_sb, s_user_ns, level))
		f.caps = VARSYM_YES;
	switch (varsym_exec_file_privilege(&f)) {
	case VARSYM_GAINS_PRIVILEGES:
		t->flags |= VSFUSE_TASK_PRIVILEGED;
		break;
	case VARSYM_CAPS_UNREAD:
		if (record_file(task, t, file, i)) {
			t->flags |= VSFUSE_TASK_CAPS_UNREAD;
			break;
		}
		t->flags |= VSFUSE_TASK_PRIVILEGED;	/* cannot tell */
		__sync_fetch_and_add(&lost_execs, 1);
		break;
	case VARSYM_GAINS_NOTHING:
		break;
	}
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
	struct task_struct *task = bpf_get_current_task_btf();
	bool secureexec = BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec);
	struct vsfuse_task *t;

	if (ret || !secureexec)
		return ret;
	/*
	 * A daemon marks only an exec whose state is in flight, which stays
	 * until it ends.  (6.1 gives no state while a task-storage call is
	 * interrupted on this CPU: not in a hook without full preemption.)
	 */
	t = task_state(task, false);
	if (!t || !(t->flags & VSFUSE_TASK_IN_EXEC))
		return 0;
	t->flags |= VSFUSE_TASK_PRIVILEGED;
	if (!varsym_exec_may_run(t->flags & VSFUSE_TASK_FOLLOWED, true))
		return -EPERM;
	return 0;
}

/*
 * Committed: the exec's walks are over, and so are its marks.  A thread
 * that was not its process's leader now has the leader's tid: its task
 * storage came with it, and no other thread's state is touched.
 */
SEC("lsm/bprm_committing_creds")
int BPF_PROG(exec_commits, struct linux_binprm *bprm)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vsfuse_task *t = task_state(task, false);
	__u32 tid = current_tid();

	if (t) {
		forget_exec(task, t);
		t->flags = 0;
	}
	unpublish(tid);		/* the snapshots of the old program */
	return 0;
}

/* A new thread's tid carries no snapshot; before 6.8, it has storage. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(exec_thread_forks, struct task_struct *parent,
	     struct task_struct *child)
{
	__u32 tid = BPF_CORE_READ(child, pid);

	unpublish(tid);		/* a tid given up by de_thread(): publish() */
	/*
	 * Before 6.8 the program is walked inside execve before any exec
	 * hook: a task without storage then could not tell that walk from
	 * an interpreter's whose exec lost its state.  (Failed: doubt.)
	 */
	if (program_opened_in_execve)
		task_state(child, true);
	return 0;
}

/* A thread exits: its exec's records, and its tid's snapshot, go. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(exec_thread_exits, struct task_struct *task)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct vsfuse_task *t = task_state(cur, false);

	if (t)
		forget_exec(cur, t);
	unpublish(current_tid());
	return 0;
}

/* The owner of the caller's outermost user namespace, or its fsuid. */
static __u32 owner_of(struct task_struct *task)
{
	struct user_namespace *ns = BPF_CORE_READ(task, cred, user_ns);
	struct user_namespace *parent;
	__u32 owner = BPF_CORE_READ(task, cred, fsuid.val);
	int depth;

	for (depth = 0; depth < VARSYM_USERNS_LEVELS && ns; depth++) {
		parent = BPF_CORE_READ(ns, parent);
		if (!parent)
			break;			/* the initial one */
		owner = BPF_CORE_READ(ns, owner.val);
		ns = parent;
	}
	return owner;
}

/* Where in an execve, if anywhere, this walk is (core/exec_rule.h). */
static enum varsym_exec_phase exec_phase(struct task_struct *task,
					 struct vsfuse_task *t, bool in_call)
{
	unsigned long long id[3];

	if (!BPF_CORE_READ_BITFIELD_PROBED(task, in_execve)) {
		/* the exec that state was kept for is over */
		if (t && t->flags) {
			forget_exec(task, t);
			t->flags = 0;
		}
		/* from 6.8, execve walks the program before in_execve */
		return in_call ? VARSYM_EXEC_PROGRAM : VARSYM_EXEC_NONE;
	}
	/* no state where one must be, or the task's own doubt */
	if (!t || (t->flags & VSFUSE_TASK_DOUBT))
		return VARSYM_EXEC_DOUBT;
	exec_call(task, id);
	if ((t->flags & VSFUSE_TASK_IN_EXEC) && t->files &&
	    id[0] == t->call[0] && id[1] == t->call[1] && id[2] == t->call[2])
		return t->flags & VSFUSE_TASK_PRIVILEGED ?
		       VARSYM_EXEC_PRIVILEGED : VARSYM_EXEC_INTERP;
	/* no file checked for this exec yet: its program, before 6.8 */
	return program_opened_in_execve ? VARSYM_EXEC_PROGRAM :
					  VARSYM_EXEC_DOUBT;
}

/*
 * Whether inode is a link of a mount a daemon serves.  Every symbolic
 * link of the machine passes here: another file system's costs two loads
 * and a comparison (no helper call), another FUSE file system's a lookup.
 */
static __always_inline bool served(struct inode *inode)
{
	struct super_block *sb = inode->i_sb;
	__u32 dev;

	if (sb->s_magic != FUSE_SUPER_MAGIC)
		return false;
	dev = sb->s_dev;
	return bpf_map_lookup_elem(&mounts, &dev);
}

/*
 * A follow or a readlink of a served link: the daemon's facts for the
 * request about to be sent, from the caller's own context.
 */
static int snapshot(struct inode *inode)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vsfuse_snapshot s = {};
	unsigned int ptr_size = 8;
	struct vsfuse_task *t;
	bool in_call;
	struct call c;

	s.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	s.ino = BPF_CORE_READ(inode, i_ino);
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD) {
		s.flags = VSFUSE_SNAP_KTHREAD;
		goto write;
	}
	read_call(task, &c);
	/* the program's word size, as the kernel set it at exec */
	if (BPF_CORE_READ(task, mm, task_size) <= 0x100000000ULL)
		s.flags |= VSFUSE_SNAP_WORD4;
	in_call = execve_call(&c, &s.envp, &ptr_size);
	if (in_call)
		s.flags |= VSFUSE_SNAP_ENVP_KNOWN;
	if (ptr_size == 4)
		s.flags |= VSFUSE_SNAP_ENVP4;
	s.owner = owner_of(task);
	t = task_state(task, false);
	if (!t) {
		t = task_state(task, true);
		/*
		 * An exec that began before this set, or whose storage could
		 * not be had then: doubt, whatever comes next.
		 */
		if (t && BPF_CORE_READ_BITFIELD_PROBED(task, in_execve))
			t->flags = VSFUSE_TASK_DOUBT;
	}
	s.phase = exec_phase(task, t, in_call);
	if (!t)
		goto write;
	/* a program instance's token: new after every successful exec */
	if (!t->token || t->token_exec_id != (__u32)task->self_exec_id) {
		t->token = next_count();
		t->token_exec_id = task->self_exec_id;
	}
	s.token = t->token;
	s.exec = t->exec;
	s.files = t->files;
	s.recorded = t->recorded;
	if (t->flags & VSFUSE_TASK_CAPS_UNREAD)
		s.flags |= VSFUSE_SNAP_CAPS_UNREAD;
write:
	publish(current_tid(), &s);
	return 0;
}

/*
 * The LSM hooks, though every symbolic link of the machine passes them:
 * an fentry program on FUSE's get_link would run for FUSE links alone,
 * but the kernel skips a tracing program that is entered again on a CPU
 * where it already runs (a preemptible kernel's follower preempted inside
 * it), and a skipped snapshot would leave the tid's last one in place.
 * LSM programs are never skipped.  Seen in a 7.3 guest, not in 6.1's.
 */
SEC("lsm/inode_follow_link")
int BPF_PROG(exec_follows_link, struct dentry *dentry, struct inode *inode,
	     bool rcu, int ret)
{
	if (!ret && served(inode))
		snapshot(inode);
	return ret;
}

SEC("lsm/inode_readlink")
int BPF_PROG(exec_reads_link, struct dentry *dentry, int ret)
{
	struct inode *inode = dentry->d_inode;

	if (!ret && inode && served(inode))
		snapshot(inode);
	return ret;
}
