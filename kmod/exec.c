// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec.c - what execve(2) is loading, so that a setuid program's loader is
 * never chosen by the user who starts it (docs/SPEC.md section 5).
 *
 * While execve() opens the interpreter of a program (its dynamic loader,
 * PT_INTERP, a binfmt_misc interpreter, a script's #! line), the process
 * is still the caller: its credentials and environment are the user's;
 * the program's credentials are computed only later, in begin_new_exec().
 * A loadable module cannot be an LSM, so varsymfs follows each exec with
 * ftrace_ops on four functions, attached at the first varsymfs mount
 * (varsymfs_exec_attach) and detached a few seconds after the last one
 * goes:
 *
 *   prepare_exec_creds()       an exec begins (only exec calls it), before
 *                              any of its walks but the program's own path
 *                              from 6.8: its watch is allocated here;
 *   security_bprm_check()      a file of it, the program and then each
 *                              interpreter, before its handler opens the
 *                              next: whether it gains privileges;
 *   security_bprm_committing_creds()  its credentials are final: the
 *                              kernel's verdict (core/exec_rule.h), then
 *                              the watch ends;
 *   abort_creds()              a failed exec's credentials go.
 *
 * Inside an execve a walk with no watch is doubt, and resolves as secure:
 * an exec whose watch could not be allocated, or that began before the
 * hooks were attached, only loses the execve rule.  Nothing here fails or
 * kills an exec for its own bookkeeping.
 *
 * The ops are PERMANENT, as livepatch's: while they are attached,
 * sysctl kernel.ftrace_enabled=0 is refused (EBUSY).  Silenced in the
 * middle of an exec, they would leave a watch that saw no file (and take
 * an interpreter's walk for the program's own) and skip the verdict.
 *
 * A watch lives as long as its exec, and no longer than its task: it ends
 * at the commit, or by a task work item that runs when the task returns
 * to user space after a failed exec, or exits.  Something else may run
 * that task work early, inside the exec (io_uring_task_cancel() does, in
 * begin_new_exec()): then the commit or the failed exec's abort_creds()
 * ends the watch.  So the verdict is never taken in task work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/list_bl.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include <linux/rculist_bl.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>
#include <linux/xattr.h>

#include "varsymfs.h"

#define WATCH_BITS 8

/*
 * One execve in flight.  Set-id bits and an LSM's secureexec are seen at
 * once; file capabilities, an extended attribute that may take I/O to
 * read, only when a walk would follow the caller to another answer than
 * the secure one: the watch keeps the files.  Only its own task changes
 * its fields.
 */
struct exec_watch {
	struct callback_head end;	/* the task work, then the RCU head */
	struct hlist_bl_node node;	/* in watches[] */
	struct task_struct *task;	/* with a reference */
	bool privileged;		/* a file of this execve gains privileges */
	bool caps_checked;		/* files[] were read for capabilities */
	bool followed_caller;		/* an interpreter walk followed it */
	bool work_queued;		/* the task work will still run */
	bool listed;			/* in watches[] */
	unsigned int seen;		/* files checked; past the most, doubt */
	unsigned int nfiles;		/* files whose capabilities may count */
	struct file *files[VARSYM_EXEC_FILES];	/* with a reference each */
};

/*
 * Watches by task.  Each bucket's bit lock serialises insertion, removal,
 * listed and work_queued; lookups are RCU, and a watch is freed after a
 * grace period.  A watch is in the table from its exec's start to its end.
 */
static struct hlist_bl_head watches[1 << WATCH_BITS];

/* Mounts alive, and whether the hooks are attached: under attach_lock. */
static DEFINE_MUTEX(attach_lock);
static unsigned int mounts;
static bool hooked;

/*
 * The hooks go this long after the last umount, unless a mount comes
 * first: attaching and detaching patch the kernel's text on every CPU, and
 * any user may mount and unmount the module in a namespace of their own,
 * in a loop.  So that costs the machine one patching per period at most.
 */
#define DETACH_DELAY (5 * HZ)
static void detach_unused(struct work_struct *work);
static DECLARE_DELAYED_WORK(detach_work, detach_unused);

#ifdef VARSYMFS_FAULT_INJECTION
/* The tests' build only (make kmod-faults): watches that fail to allocate. */
static unsigned int fail_watches;
module_param(fail_watches, uint, 0600);
MODULE_PARM_DESC(fail_watches, "the next N watches fail to allocate (tests only)");
/* ...and a detach that follows the last umount at once, many per second. */
static bool detach_at_once;
module_param(detach_at_once, bool, 0600);
MODULE_PARM_DESC(detach_at_once, "detach the hooks at the last umount (tests only)");
#define detach_delay() (READ_ONCE(detach_at_once) ? 0 : DETACH_DELAY)
#else
#define detach_delay() DETACH_DELAY
#endif

static struct hlist_bl_head *bucket_of(const struct task_struct *task)
{
	return &watches[hash_ptr(task, WATCH_BITS)];
}

/* task's watch, or NULL; under rcu_read_lock() or the bucket's lock. */
static struct exec_watch *watch_of(const struct task_struct *task)
{
	struct hlist_bl_node *pos;
	struct exec_watch *w;

	hlist_bl_for_each_entry_rcu(w, pos, bucket_of(task), node)
		if (w->task == task)
			return w;
	return NULL;
}

/* current's watch: only current adds or ends it, not while it looks */
static struct exec_watch *current_watch(void)
{
	struct exec_watch *w;

	rcu_read_lock();
	w = watch_of(current);
	rcu_read_unlock();
	return w;
}

static void drop_files(struct exec_watch *w)
{
	unsigned int i;

	for (i = 0; i < w->nfiles; i++)
		fput(w->files[i]);
	w->nfiles = 0;
}

/* After an RCU grace period; the last thing done in this module's code. */
static void free_watch(struct exec_watch *w)
{
	drop_files(w);
	put_task_struct(w->task);
	kfree_rcu(w, end);
	module_put(THIS_MODULE);
}

/*
 * Takes w out of the table, under its bucket's lock: whether its task
 * work is still to run, and will free it.  Otherwise the caller holds the
 * only way to it, and frees it.
 */
static bool unlist_watch(struct exec_watch *w)
{
	if (w->listed)
		hlist_bl_del_rcu(&w->node);
	w->listed = false;
	return w->work_queued;
}

/*
 * Takes w out of the table: it is freed now, or by its task work if that
 * is still to run.  Under no lock.
 */
static void end_watch(struct exec_watch *w)
{
	struct hlist_bl_head *b = bucket_of(w->task);
	bool queued;

	hlist_bl_lock(b);
	queued = unlist_watch(w);
	hlist_bl_unlock(b);
	if (!queued)
		free_watch(w);
}

/*
 * The task work: the task returns to user space or exits.  Run early, by
 * something inside the exec itself, it leaves the watch to the commit or
 * to the failed exec's abort_creds().
 */
static void watch_work(struct callback_head *head)
{
	struct exec_watch *w = container_of(head, struct exec_watch, end);
	struct hlist_bl_head *b = bucket_of(w->task);
	bool early;

	hlist_bl_lock(b);
	w->work_queued = false;
	early = current->in_execve && w->listed;
	hlist_bl_unlock(b);
	if (!early)
		end_watch(w);
}

/*
 * ftrace callback at the entry of prepare_exec_creds(): an exec begins.
 * Atomic context.  A watch left by a failed exec whose task work ran early
 * is reused.  No memory: no watch, and this exec's walks are secure.
 */
static void exec_begins(unsigned long ip, unsigned long parent_ip,
			struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct hlist_bl_head *b = bucket_of(current);
	struct exec_watch *w = current_watch();

	if (w) {
		drop_files(w);
		w->privileged = false;
		w->caps_checked = false;
		w->followed_caller = false;
		w->seen = 0;
	} else {
#ifdef VARSYMFS_FAULT_INJECTION
		if (READ_ONCE(fail_watches)) {
			WRITE_ONCE(fail_watches, fail_watches - 1);
			return;
		}
#endif
		/* going: no mount of the module is left to walk */
		if (!try_module_get(THIS_MODULE))
			return;
		w = kzalloc(sizeof(*w), GFP_ATOMIC | __GFP_ACCOUNT |
			    __GFP_NOWARN);
		if (!w) {
			module_put(THIS_MODULE);
			return;
		}
		w->task = get_task_struct(current);
	}
	if (!w->work_queued) {
		init_task_work(&w->end, watch_work);
		/* fails only for a task that is exiting: no exec to watch */
		if (task_work_add(current, &w->end, TWA_RESUME)) {
			end_watch(w);
			return;
		}
		w->work_queued = true;	/* only current reads it unlocked */
	}
	hlist_bl_lock(b);
	if (!w->listed)
		hlist_bl_add_head_rcu(&w->node, b);
	w->listed = true;
	hlist_bl_unlock(b);
}

/* What the privilege test needs of one file (core/exec_rule.h). */
static enum varsym_privilege file_privilege(struct linux_binprm *bprm)
{
	struct file *file = bprm->file;
	struct varsym_exec_file f = {
		.mode = file_inode(file)->i_mode,
		/* the mount namespace is not a module's to look at */
		.honours_ids = file->f_path.mnt->mnt_flags & MNT_NOSUID ?
			       VARSYM_NO : VARSYM_UNKNOWN,
		.caps = VARSYM_UNKNOWN,		/* read when a walk asks */
		.secureexec = bprm->secureexec,
	};

	return varsym_exec_file_privilege(&f);
}

/*
 * ftrace callback at the entry of security_bprm_check(bprm): execve is
 * about to load bprm->file.  Atomic context; current's own watch.
 */
static void exec_checks_file(unsigned long ip, unsigned long parent_ip,
			     struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct linux_binprm *bprm =
		(struct linux_binprm *)varsymfs_ftrace_arg0(fregs);
	struct exec_watch *w = current_watch();

	if (!w || w->privileged)
		return;
	if (++w->seen > VARSYM_EXEC_FILES) {
		w->privileged = true;	/* deeper than exec allows: doubt */
		drop_files(w);
		return;
	}
	switch (file_privilege(bprm)) {
	case VARSYM_GAINS_PRIVILEGES:
		w->privileged = true;
		drop_files(w);
		break;
	case VARSYM_CAPS_UNREAD:
		w->files[w->nfiles++] = get_file(bprm->file);
		w->caps_checked = false;
		break;
	case VARSYM_GAINS_NOTHING:	/* a nosuid mount: nothing to read */
		break;
	}
}

/*
 * ftrace callback at the entry of security_bprm_committing_creds(bprm):
 * past the point of no return, after begin_new_exec() has run whatever
 * task work was pending; the credentials are final.  The kernel's verdict:
 * an exec whose interpreter followed the caller and which came out
 * privileged (a file made setuid or given a capability meanwhile) never
 * runs an instruction: SIGKILL before it returns to user space.
 */
static void exec_commits(unsigned long ip, unsigned long parent_ip,
			 struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	const struct linux_binprm *bprm =
		(const struct linux_binprm *)varsymfs_ftrace_arg0(fregs);
	struct exec_watch *w = current_watch();

	if (!w)
		return;
	if (!varsym_exec_may_run(w->followed_caller, bprm->secureexec)) {
		pr_warn_ratelimited("pid %d: killed: its interpreter was chosen by its caller's environment, and its program gained privileges during the execve\n",
				    task_pid_nr(current));
		force_sig(SIGKILL);
	}
	end_watch(w);
}

/*
 * ftrace callback at the entry of abort_creds(): credentials prepared and
 * never committed go, a failed exec's among them (free_bprm()).  Ends a
 * watch whose exec is over and whose task work already ran.
 */
static void exec_aborts(unsigned long ip, unsigned long parent_ip,
			struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct exec_watch *w;

	if (current->in_execve)
		return;
	w = current_watch();
	if (w && !READ_ONCE(w->work_queued))
		end_watch(w);
}

/*
 * The callbacks take the traced functions' first argument for what these
 * say: a kernel that changed a prototype must not build this module.
 */
static_assert(__same_type(&security_bprm_check,
			  int (*)(struct linux_binprm *)));
static_assert(__same_type(&security_bprm_committing_creds,
			  void (*)(struct linux_binprm *)) ||
	      __same_type(&security_bprm_committing_creds,
			  void (*)(const struct linux_binprm *)));
static_assert(__same_type(&prepare_exec_creds, struct cred *(*)(void)));
static_assert(__same_type(&abort_creds, void (*)(struct cred *)));

#define HOOK(function, callback) {					\
	.name = #function,						\
	.ops = {							\
		.func = callback,					\
		.flags = FTRACE_OPS_FL_RECURSION | FTRACE_OPS_FL_PERMANENT | \
			 VARSYMFS_FTRACE_REGS,				\
	},								\
}

static struct exec_hook {
	const char *name;
	struct ftrace_ops ops;
} hooks[] = {
	HOOK(prepare_exec_creds, exec_begins),
	HOOK(security_bprm_check, exec_checks_file),
	HOOK(security_bprm_committing_creds, exec_commits),
	HOOK(abort_creds, exec_aborts),
};

/* Has it file capabilities?  An error other than "none" counts as some. */
static bool has_caps(struct file *file)
{
	switch (vfs_getxattr(varsymfs_file_idmap(file), file->f_path.dentry,
			     XATTR_NAME_CAPS, NULL, 0)) {
	case -ENODATA:
	case -EOPNOTSUPP:
		return false;
	default:
		return true;
	}
}

/**
 * varsymfs_exec_phase - where in an execve, if anywhere, current walks
 *
 * Before 6.8 the program's own path is walked with in_execve already
 * set, before its first file is checked; from 6.8 it is walked before
 * in_execve is set, and the caller tells it by the system call.
 *
 * Return: %VARSYM_EXEC_NONE outside any execve the hooks can see,
 * %VARSYM_EXEC_PROGRAM for the program's own path, %VARSYM_EXEC_INTERP
 * for an interpreter of an execve no file of which gains privileges by
 * its mode so far (varsymfs_exec_follow_caller() then has the last
 * word), %VARSYM_EXEC_PRIVILEGED, or %VARSYM_EXEC_DOUBT (no watch).
 */
enum varsym_exec_phase varsymfs_exec_phase(void)
{
	struct exec_watch *w;
	enum varsym_exec_phase phase;

	if (!current->in_execve)
		return VARSYM_EXEC_NONE;
	rcu_read_lock();
	w = watch_of(current);
	if (!w)
		phase = VARSYM_EXEC_DOUBT;
	else if (w->privileged)
		phase = VARSYM_EXEC_PRIVILEGED;
	else if (w->seen)
		phase = VARSYM_EXEC_INTERP;
	else
		phase = VARSYMFS_PROGRAM_OPENED_IN_EXECVE ?
			VARSYM_EXEC_PROGRAM : VARSYM_EXEC_DOUBT;
	rcu_read_unlock();
	return phase;
}

/**
 * varsymfs_exec_follow_caller - may an interpreter walk follow the caller?
 * @rcu: in the RCU walk, where a file's capabilities cannot be read
 *
 * Asked only when following the caller's environment gives another answer
 * than the secure one, in an execve that varsymfs_exec_phase() called
 * %VARSYM_EXEC_INTERP.  Reads the capabilities of its files, once; if
 * none, records that the caller chose, for the verdict at the commit.
 *
 * Return: 1 to follow the caller, 0 for the secure answer, or -ECHILD in
 * the RCU walk when that takes reading an extended attribute.
 */
int varsymfs_exec_follow_caller(bool rcu)
{
	struct exec_watch *w = current_watch();
	unsigned int i;

	if (!w || w->privileged)
		return 0;
	if (!w->caps_checked) {
		if (rcu)
			return -ECHILD;
		for (i = 0; i < w->nfiles && !w->privileged; i++)
			w->privileged = has_caps(w->files[i]);
		w->caps_checked = true;
	}
	if (w->privileged)
		return 0;
	w->followed_caller = true;
	return 1;
}

static void detach_hooks(unsigned int attached)
{
	/* waits for callbacks still running; the filters stay till exit */
	while (attached--)
		unregister_ftrace_function(&hooks[attached].ops);
}

/*
 * The hooks are gone: every watch goes.  An exec whose interpreter already
 * followed its caller cannot have its verdict any more: it is killed.
 * Each watch is taken off the table under the bucket's lock, so that its
 * task work, running meanwhile, either frees it (queued) or never sees it.
 */
static void end_all_watches(void)
{
	struct hlist_bl_head *b;
	struct exec_watch *w;
	unsigned int i;
	bool queued = false;

	for (i = 0; i < ARRAY_SIZE(watches); i++) {
		b = &watches[i];
		for (;;) {
			hlist_bl_lock(b);
			w = hlist_bl_empty(b) ? NULL :
			    hlist_bl_entry(hlist_bl_first(b),
					   struct exec_watch, node);
			if (w) {
				if (w->followed_caller)
					send_sig(SIGKILL, w->task, 1);
				queued = unlist_watch(w);
			}
			hlist_bl_unlock(b);
			if (!w)
				break;
			if (!queued)
				free_watch(w);
		}
	}
}

/**
 * varsymfs_exec_attach - a varsymfs mount is made
 *
 * The first one attaches the hooks (sleeps).  If they cannot be, every
 * walk inside an execve resolves as secure until the last umount.
 */
void varsymfs_exec_attach(void)
{
	unsigned int i;
	int ret = 0;

	mutex_lock(&attach_lock);
	/* attached, or waiting to be detached: they stay */
	if (mounts++ || hooked) {
		mutex_unlock(&attach_lock);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(hooks) && !ret; i++) {
		/* writable: ftrace_set_filter() parses the pattern in place */
		char name[40];

		strscpy(name, hooks[i].name, sizeof(name));
		/* reset: a filter set at an earlier mount is replaced */
		ret = ftrace_set_filter(&hooks[i].ops, name, strlen(name), 1);
		if (!ret)
			ret = register_ftrace_function(&hooks[i].ops);
		if (ret) {
			pr_warn("cannot attach to %s (%d): every walk inside execve resolves as secure-exec until the last varsymfs umount\n",
				hooks[i].name, ret);
			detach_hooks(i);
		}
	}
	hooked = !ret;
	mutex_unlock(&attach_lock);
}

/* The hooks, unless a mount is back; under attach_lock. */
static void detach_now(void)
{
	if (mounts || !hooked)
		return;
	detach_hooks(ARRAY_SIZE(hooks));
	hooked = false;
	end_all_watches();
}

static void detach_unused(struct work_struct *work)
{
	mutex_lock(&attach_lock);
	detach_now();
	mutex_unlock(&attach_lock);
}

/**
 * varsymfs_exec_detach - a varsymfs mount is gone
 *
 * After the last one, the hooks go DETACH_DELAY later if no mount comes.
 */
void varsymfs_exec_detach(void)
{
	mutex_lock(&attach_lock);
	if (!--mounts && hooked)
		mod_delayed_work(system_wq, &detach_work, detach_delay());
	mutex_unlock(&attach_lock);
}

void varsymfs_exec_exit(void)
{
	unsigned int i;

	/* no mount is left: the hooks go now, not after the delay */
	cancel_delayed_work_sync(&detach_work);
	mutex_lock(&attach_lock);
	detach_now();
	mutex_unlock(&attach_lock);
	/* the filters of the hooks, kept from mount to mount */
	for (i = 0; i < ARRAY_SIZE(hooks); i++)
		ftrace_free_filter(&hooks[i].ops);
	/*
	 * No mount, so no watch, is left, but the task that ended the last
	 * one may still be in free_watch() after its module_put(): it leaves
	 * without a voluntary context switch, so an RCU-tasks grace period
	 * waits for it.
	 */
	synchronize_rcu_tasks();
}
