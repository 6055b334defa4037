// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec.c - what execve(2) is loading, so that a setuid program's loader is
 * never chosen by the user who starts it.
 *
 * While execve() opens the interpreter of a program (its dynamic loader,
 * PT_INTERP, a binfmt_misc interpreter, a script's #! line), the process
 * is still the caller: its credentials and environment are the user's, and
 * the program's credentials are installed only later.  A walk through a
 * variant link there must not let the user choose what then runs with the
 * program's privileges.
 *
 * So varsymfs registers a binary format that loads nothing: first in the
 * list, it sees every file execve() is about to load (the program, then
 * each interpreter) before any handler opens that file's interpreter.  Its
 * first look opens a "watch" on the execve, which records whether any file
 * of it gains privileges, and returns -ENOEXEC so the real handlers go on.
 * A task work item ends the watch when the task returns to user space or
 * exits: a watch lives exactly as long as its execve, so memory follows
 * the execs in flight, whatever their number, and is charged to their
 * memory cgroup.  An execve fails only if those few bytes cannot be had.
 * That task work also takes the kernel's own verdict, once
 * begin_new_exec() has installed the credentials: an exec whose
 * interpreter followed the caller and which came out privileged (a file
 * made setuid meanwhile) is killed before it runs an instruction.
 *
 * The decision never depends on the system call's number or ABI: the
 * watch and the task's in_execve flag are the same for execve, execveat,
 * the 32-bit entry and x32.  Whatever cannot be told for sure (a handler
 * registered ahead of the observer, no watch where one must be) resolves
 * as for a secure-exec process.
 *
 * Staying first: binfmt_misc inserts itself at the head of the list when
 * it loads.  The observer checks its place (its list node's predecessor is
 * the list head, whose address it learnt at load time with an anchor
 * registered at the tail) at each execve and each mount, and inserts a
 * fresh copy of itself ahead when it finds a handler before it.  Watches
 * opened before that are no longer trusted (first_observer).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/hash.h>
#include <linux/kmod.h>
#include <linux/list_bl.h>
#ifdef VARSYMFS_WIDEN_INIT_WINDOW
#include <linux/delay.h>
#endif
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist_bl.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/xattr.h>

#include "varsymfs.h"

#define WATCH_BITS 8
#define OBSERVERS 4		/* copies of the observer, for re-insertion */
#define EPOCH_UNTRUSTED UINT_MAX
/* exec_binprm() follows 5 interpreters at most: a file each, and room */
#define WATCH_FILES 6

/*
 * One execve in flight, from the observer's first look to its return.
 * Set-id bits and an LSM's secureexec are seen at once; file capabilities,
 * an extended attribute that may take I/O to read, only when a walk
 * through a variant link asks (rarely): the watch keeps the files.
 */
struct exec_watch {
	struct callback_head end;	/* the task work, then the RCU head */
	struct hlist_bl_node node;	/* in watches[] */
	const struct task_struct *task;	/* identity only, never dereferenced */
	u64 exec_id;			/* the task's self_exec_id at the start */
	unsigned int epoch;		/* first_observer() at the first look */
	bool privileged;		/* a file of this execve gains privileges */
	bool caps_checked;		/* files[] were looked at for capabilities */
	bool chose_interp;		/* an interpreter followed the caller */
	unsigned int nfiles;		/* files seen; past WATCH_FILES, privileged */
	struct file *files[WATCH_FILES];	/* with a reference each */
};

/*
 * Watches by task.  Each bucket's bit lock serialises insertion and
 * removal; lookups are RCU, and a watch is freed after a grace period.
 * Only its own task changes a watch's fields, so they need no lock.
 */
static struct hlist_bl_head watches[1 << WATCH_BITS];

static int observe_exec(struct linux_binprm *bprm);

static int anchor_load(struct linux_binprm *bprm)
{
	return -ENOEXEC;
}

#define OBSERVER { .module = THIS_MODULE, .load_binary = observe_exec }

static struct linux_binfmt observers[OBSERVERS] = {
	OBSERVER, OBSERVER, OBSERVER, OBSERVER,
};

/* Marks the end of the format list, to find its head (see exec_init). */
static struct linux_binfmt anchor = {
	.module = THIS_MODULE,
	.load_binary = anchor_load,
};

/*
 * observers_lock serialises re-insertion.  observers_used, how many copies
 * are in the list (the newest must be first), is read locklessly: it is
 * also the epoch of the watches (see first_observer).  formats_head is
 * written once at module load.
 */
static DEFINE_MUTEX(observers_lock);
static unsigned int observers_used;
static const struct list_head *formats_head;	/* set before the count */

/*
 * Whether the newest observer is the first format in the list: its number
 * (1 for the one inserted at load), the epoch a watch opened now gets, or
 * EPOCH_UNTRUSTED.  A watch opened under another number may have missed a
 * file that a format ahead of its observer handled.  Reads the observer's
 * list node's predecessor without binfmt_lock, which is not ours: a
 * pointer compared, never followed, so a racing insertion only makes the
 * answer "not first".
 */
static unsigned int first_observer(void)
{
	/* pairs with keep_ahead(): the copy counted is in the list */
	unsigned int used = smp_load_acquire(&observers_used);
	const struct list_head *prev;

	if (!formats_head || !used)
		return EPOCH_UNTRUSTED;
	/* data_race(): insert_binfmt() writes it under binfmt_lock */
	prev = data_race(READ_ONCE(observers[used - 1].lh.prev));
	return prev == formats_head ? used : EPOCH_UNTRUSTED;
}

/* Puts a fresh observer ahead of whatever got ahead of ours. */
static void keep_ahead(void)
{
	mutex_lock(&observers_lock);
	if (first_observer() == EPOCH_UNTRUSTED && formats_head) {
		if (observers_used == OBSERVERS) {
			pr_warn_once("a binary format keeps registering ahead of the exec observer: walks inside execve resolve as secure-exec until the module is reloaded\n");
		} else {
			insert_binfmt(&observers[observers_used]);
			/* pairs with first_observer(): in the list, then counted */
			smp_store_release(&observers_used, observers_used + 1);
			pr_info("a binary format was registered ahead of the exec observer: observer re-inserted at the head\n");
		}
	}
	mutex_unlock(&observers_lock);
}

static struct hlist_bl_head *bucket_of(const struct task_struct *task)
{
	return &watches[hash_ptr(task, WATCH_BITS)];
}

/* current's watch, or NULL; under rcu_read_lock(). */
static struct exec_watch *current_watch(void)
{
	struct hlist_bl_node *pos;
	struct exec_watch *w;

	hlist_bl_for_each_entry_rcu(w, pos, bucket_of(current), node)
		if (w->task == current)
			return w;
	return NULL;
}

/*
 * Did the execve just done make current privileged?  The kernel's own
 * verdict, taken after begin_new_exec(): AT_SECURE in the new auxiliary
 * vector, or credentials that differ from the real ones.
 */
static bool exec_made_privileged(void)
{
	const struct cred *cred = current_cred();

	/* still inside it (task work run early): not final, so doubt */
	if (current->in_execve)
		return true;
	return (current->mm && varsymfs_mm_secure(current->mm)) ||
	       !uid_eq(cred->euid, cred->uid) ||
	       !gid_eq(cred->egid, cred->gid);
}

/*
 * An interpreter of this execve followed the caller's environment because
 * no file of it gained privileges when it was walked; but the kernel
 * decides the credentials only later, in begin_new_exec(), and a file can
 * become setuid or gain a capability meanwhile (a package upgrade does
 * this).  Here, on the way back to user space, the exec is over: if it
 * made the task privileged, the caller's interpreter must not run a
 * single instruction of it.
 */
static void check_exec_result(struct exec_watch *w)
{
	/*
	 * An execve that failed before begin_new_exec() (which changes
	 * self_exec_id) goes back to the old program: nothing of it runs.
	 */
	if (!w->chose_interp || (current->flags & PF_EXITING) ||
	    READ_ONCE(current->self_exec_id) == w->exec_id ||
	    !exec_made_privileged())
		return;
	pr_warn_ratelimited("pid %d: killed: its interpreter was chosen by its caller's environment, and its program gained privileges during the execve\n",
			    task_pid_nr(current));
	force_sig(SIGKILL);
}

/* The task work: the execve is over (returned, or the task exits). */
static void end_watch(struct callback_head *head)
{
	struct exec_watch *w = container_of(head, struct exec_watch, end);
	struct hlist_bl_head *b = bucket_of(w->task);

	unsigned int i;

	check_exec_result(w);
	hlist_bl_lock(b);
	hlist_bl_del_rcu(&w->node);
	hlist_bl_unlock(b);
	for (i = 0; i < w->nfiles; i++)
		fput(w->files[i]);
	kfree_rcu(w, end);
	/* the last thing done in this module's code: see exec_exit */
	module_put(THIS_MODULE);
}

/* Has it file capabilities?  An error other than "none" counts as some. */
static bool has_caps(struct file *file)
{
	struct inode *inode = file_inode(file);

	if (IS_NOSEC(inode))	/* known to have no security attribute */
		return false;
	switch (__vfs_getxattr(file->f_path.dentry, inode, XATTR_NAME_CAPS,
			       NULL, 0)) {
	case -ENODATA:
	case -EOPNOTSUPP:
		return false;
	default:
		return true;
	}
}

/* Notes one more file of the execve: current's own watch, no lock. */
static void watch_file(struct exec_watch *w, struct linux_binprm *bprm)
{
	/* its capabilities only when a walk asks: watch_privileged() */
	w->privileged |= bprm->secureexec ||
			 varsym_gains_privileges(file_inode(bprm->file)->i_mode,
						 false);
	if (w->privileged)
		return;
	/* each copy of the observer (keep_ahead) sees the same file */
	if (w->nfiles && w->files[w->nfiles - 1] == bprm->file)
		return;
	if (w->nfiles == WATCH_FILES) {
		w->privileged = true;	/* deeper than exec allows: doubt */
		return;
	}
	w->files[w->nfiles++] = get_file(bprm->file);
	w->caps_checked = false;
}

static int observe_exec(struct linux_binprm *bprm)
{
	struct hlist_bl_head *b;
	struct exec_watch *w;

	if (first_observer() == EPOCH_UNTRUSTED)
		keep_ahead();
	rcu_read_lock();
	w = current_watch();
	rcu_read_unlock();
	if (w) {		/* an interpreter of this same execve */
		watch_file(w, bprm);
		if (first_observer() != w->epoch)
			w->epoch = EPOCH_UNTRUSTED;
		return -ENOEXEC;
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	w->task = current;
	w->exec_id = READ_ONCE(current->self_exec_id);
	w->epoch = first_observer();
	watch_file(w, bprm);
	init_task_work(&w->end, end_watch);
	/* fails only for a task that is exiting: its exec is over anyway */
	if (task_work_add(current, &w->end, TWA_RESUME)) {
		if (w->nfiles)
			fput(w->files[0]);
		kfree(w);
		return -ESRCH;
	}
	__module_get(THIS_MODULE);	/* search_binary_handler holds one */
	b = bucket_of(current);
	hlist_bl_lock(b);
	hlist_bl_add_head_rcu(&w->node, b);
	hlist_bl_unlock(b);
	return -ENOEXEC;
}

/*
 * Whether the watched execve gains privileges: its files' capabilities are
 * looked at once, by the task itself, in a context that may sleep.
 */
static bool watch_privileged(struct exec_watch *w)
{
	unsigned int i;

	if (w->privileged || w->caps_checked)
		return w->privileged;
	for (i = 0; i < w->nfiles && !w->privileged; i++)
		w->privileged = has_caps(w->files[i]);
	w->caps_checked = true;
	return w->privileged;
}

/**
 * varsymfs_exec_walk - which part of an execve, if any, is walking
 * @rcu: in the RCU walk, where a file's capabilities cannot be read
 *
 * Tells the walks the exec observer can vouch for.  Walks it cannot see
 * (the program's own path on kernels that open it before setting
 * in_execve) come out as %VARSYMFS_EXEC_NONE; the caller tells those by
 * the system call in progress.
 *
 * Return: %VARSYMFS_EXEC_NONE outside any watched execve,
 * %VARSYMFS_EXEC_PROGRAM for the program's own path, %VARSYMFS_EXEC_INTERP
 * for an interpreter of an execve that gains no privilege,
 * %VARSYMFS_EXEC_SECURE for anything else inside execve: an interpreter of
 * a privileged program, or a walk the observer cannot vouch for; or, in
 * the RCU walk, %VARSYMFS_EXEC_UNKNOWN when that takes reading a file's
 * capabilities.
 */
enum varsymfs_exec_walk varsymfs_exec_walk(bool rcu)
{
	unsigned int epoch;
	struct exec_watch *w;

	/* a watch outlives in_execve only until the return to user space */
	if (!current->in_execve)
		return VARSYMFS_EXEC_NONE;
	epoch = first_observer();
	/*
	 * current's own watch: only current adds or ends it, so it cannot go
	 * while current looks at it.
	 */
	rcu_read_lock();
	w = current_watch();
	rcu_read_unlock();
	if (w) {
		if (w->privileged || w->epoch != epoch ||
		    epoch == EPOCH_UNTRUSTED)
			return VARSYMFS_EXEC_SECURE;
		if (rcu && !w->caps_checked && w->nfiles)
			return VARSYMFS_EXEC_UNKNOWN;
		if (watch_privileged(w))
			return VARSYMFS_EXEC_SECURE;
		/* the caller chooses: checked again once the exec is done */
		w->chose_interp = true;
		return VARSYMFS_EXEC_INTERP;
	}
	/*
	 * No watch: before the observer's first look.  Where the program's
	 * own path is opened after in_execve is set, that is this walk, if
	 * no handler was ever ahead of the observer (one could be opening an
	 * interpreter unseen); elsewhere nothing of the program is opened
	 * yet, and nothing should walk.
	 */
	if (VARSYMFS_PROGRAM_OPENED_IN_EXECVE && epoch == 1)
		return VARSYMFS_EXEC_PROGRAM;
	return VARSYMFS_EXEC_SECURE;
}

/* At mount: a handler may have got ahead since the last execve. */
void varsymfs_exec_keep_ahead(void)
{
	if (first_observer() == EPOCH_UNTRUSTED)
		keep_ahead();
}

int varsymfs_exec_init(void)
{
	/*
	 * binfmt_misc inserts itself at the head of the list when it loads,
	 * and any user can make the kernel load it (a rootless mount of it
	 * fails, but only after the load).  Loaded first, it stays behind
	 * the observer; a failure here only leaves that to keep_ahead().
	 */
	if (IS_MODULE(CONFIG_BINFMT_MISC))
		request_module("binfmt_misc");
	/*
	 * An execve on another CPU may reach the observer as soon as it is
	 * inserted, before it is counted: keep_ahead() must wait for the
	 * count, or it would insert observers[0] a second time.
	 */
	mutex_lock(&observers_lock);
	register_binfmt(&anchor);
	insert_binfmt(&observers[0]);
	/*
	 * The list is circular: between the anchor, just added at its tail,
	 * and the observer, just added at its head, the one node is the head
	 * itself.  If they do not agree, a handler registered meanwhile: the
	 * observer never counts as first, and walks inside execve resolve as
	 * secure-exec.
	 */
	if (READ_ONCE(anchor.lh.next) == READ_ONCE(observers[0].lh.prev))
		formats_head = anchor.lh.next;
	else
		pr_warn("cannot find the head of the binary formats: walks inside execve resolve as secure-exec\n");
#ifdef VARSYMFS_WIDEN_INIT_WINDOW
	/* the tests' build (scripts/build-kmod): execs land in the window */
	msleep(VARSYMFS_WIDEN_INIT_WINDOW);
#endif
	/* pairs with first_observer(): formats_head, then the count */
	smp_store_release(&observers_used, 1);
	mutex_unlock(&observers_lock);
	return 0;
}

void varsymfs_exec_exit(void)
{
	unsigned int i;

	for (i = 0; i < observers_used; i++)
		unregister_binfmt(&observers[i]);
	unregister_binfmt(&anchor);
	/*
	 * No watch is left (each held a module reference), but the task
	 * that ended the last one may still be in end_watch() after its
	 * module_put(): it leaves it without a voluntary context switch, so
	 * an RCU-tasks grace period waits for it.
	 */
	synchronize_rcu_tasks();
}
