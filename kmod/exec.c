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
 * The kernel calls its LSM hook security_bprm_check() for every file an
 * execve is about to load, the program and then each interpreter, before
 * that file's handler opens the next one: whatever the binary format, and
 * whichever formats were registered first.  A loadable module cannot be an
 * LSM, so varsymfs attaches to that function's entry with an ftrace_ops,
 * the function tracer's interface that livepatch uses.  The ops is
 * PERMANENT, so that nothing turns it off while the module is loaded
 * (sysctl kernel.ftrace_enabled=0 fails with EBUSY); a kprobe there would
 * be the same ftrace call site, but one that debugfs' kprobes/enabled or
 * ftrace_enabled silences without telling anyone.
 *
 * The first file of an execve opens a "watch", which records whether any
 * file of it gains privileges.  A task work item ends the watch when the
 * task returns to user space or exits: a watch lives exactly as long as
 * its execve, so memory follows the execs in flight, whatever their
 * number, and is charged to their memory cgroup.  The hook runs in atomic
 * context: if even an atomic allocation fails, the execve's task is killed
 * before it runs anything, as it would be if the watch had said "secure"
 * and nothing had followed.  The task work also takes the kernel's own
 * verdict, once begin_new_exec() has installed the credentials: an exec
 * whose interpreter followed the caller and which came out privileged (a
 * file made setuid or given capabilities meanwhile) is killed before it
 * runs an instruction.
 *
 * The decision never depends on the system call's number or ABI: the
 * watch and the task's in_execve flag are the same for execve, execveat,
 * the 32-bit entry and x32.  Whatever cannot be told for sure (no hook, a
 * walk inside execve with no watch where one must be) resolves as for a
 * secure-exec process.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/list_bl.h>
#include <linux/module.h>
#include <linux/rculist_bl.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/xattr.h>

#include "varsymfs.h"

#define WATCH_BITS 8
/* exec_binprm() follows 5 interpreters at most: a file each, and room */
#define WATCH_FILES 6

/*
 * One execve in flight, from the hook's first call to its return.  Set-id
 * bits and an LSM's secureexec are seen at once; file capabilities, an
 * extended attribute that may take I/O to read, only when a walk through a
 * variant link would follow the caller to another answer than the secure
 * one (rarely): the watch keeps the files.
 */
struct exec_watch {
	struct callback_head end;	/* the task work, then the RCU head */
	struct hlist_bl_node node;	/* in watches[] */
	const struct task_struct *task;	/* identity only, never dereferenced */
	u64 exec_id;			/* the task's self_exec_id at the start */
	bool privileged;		/* a file of this execve gains privileges */
	bool caps_checked;		/* files[] were looked at for capabilities */
	bool chose_interp;		/* an interpreter followed the caller */
	unsigned int nfiles;		/* files seen; past WATCH_FILES, privileged */
	struct file *files[WATCH_FILES];	/* with a reference each */
};

/*
 * Watches by task.  Each bucket's bit lock serialises insertion and
 * removal; lookups are RCU, and a watch is freed after a grace period.
 * Only its own task changes a watch's fields once it is in the table.
 */
static struct hlist_bl_head watches[1 << WATCH_BITS];

/* The hook is attached: without it every walk inside execve is secure. */
static bool hooked;
/*
 * Where the program's own path is walked inside execve (before 6.8), a
 * walk with no watch is that one, once every execve in flight when the
 * hook was attached has a watch of doubt (exec_init).  False if one could
 * not be given.
 */
static bool program_rule = VARSYMFS_PROGRAM_OPENED_IN_EXECVE;

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

/*
 * A new watch on task's execve, in the table, ended by a task work in
 * task; or NULL.  Under task's bucket lock, with a module reference for
 * the watch (its task work is this module's code).
 */
static struct exec_watch *new_watch(struct task_struct *task, bool doubt)
{
	struct exec_watch *w;

	w = kzalloc(sizeof(*w), GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN);
	if (!w)
		return NULL;
	w->task = task;
	w->exec_id = READ_ONCE(task->self_exec_id);
	w->privileged = doubt;
	init_task_work(&w->end, end_watch);
	/* fails only for a task that is exiting: its exec is over anyway */
	if (task_work_add(task, &w->end, TWA_RESUME)) {
		kfree(w);
		return NULL;
	}
	hlist_bl_add_head_rcu(&w->node, bucket_of(task));
	return w;
}

/* Notes one more file of the execve: current's own watch, no lock. */
static void watch_file(struct exec_watch *w, struct linux_binprm *bprm)
{
	/* its capabilities only when a walk asks: exec_follow_caller() */
	w->privileged |= !bprm || bprm->secureexec ||
			 varsym_gains_privileges(file_inode(bprm->file)->i_mode,
						 false);
	if (w->privileged)
		return;
	if (w->nfiles == WATCH_FILES) {
		w->privileged = true;	/* deeper than exec allows: doubt */
		return;
	}
	w->files[w->nfiles++] = get_file(bprm->file);
	w->caps_checked = false;
}

/*
 * The ftrace callback at the entry of security_bprm_check(bprm): execve
 * is about to load bprm->file.  Atomic context; current is the task doing
 * the execve.
 */
static void saw_exec_file(unsigned long ip, unsigned long parent_ip,
			  struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct linux_binprm *bprm =
		(struct linux_binprm *)varsymfs_ftrace_arg0(fregs);
	struct hlist_bl_head *b = bucket_of(current);
	struct exec_watch *w;

	if (!current->in_execve)
		return;
	rcu_read_lock();
	w = watch_of(current);
	rcu_read_unlock();
	if (!w) {
		/* going: no mount of the module is left to walk */
		if (!try_module_get(THIS_MODULE))
			return;
		hlist_bl_lock(b);
		/* exec_init() may have given it a watch of doubt meanwhile */
		w = watch_of(current);
		if (w)
			module_put(THIS_MODULE);	/* it holds its own */
		else
			w = new_watch(current, false);
		hlist_bl_unlock(b);
		if (!w) {
			module_put(THIS_MODULE);
			pr_warn_ratelimited("pid %d: killed: no memory to watch its execve\n",
					    task_pid_nr(current));
			force_sig(SIGKILL);	/* and secure until it dies */
			return;
		}
	}
	watch_file(w, bprm);
}

/*
 * saw_exec_file() takes the traced function's first argument for its
 * bprm: a kernel that changed the prototype must not build this module.
 */
static_assert(__same_type(&security_bprm_check,
			  int (*)(struct linux_binprm *)));

static struct ftrace_ops exec_hook = {
	.func = saw_exec_file,
	.flags = FTRACE_OPS_FL_PERMANENT | FTRACE_OPS_FL_RECURSION |
		 VARSYMFS_FTRACE_REGS,
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
 * varsymfs_exec_walk - which part of an execve, if any, is walking
 *
 * Walks the hook cannot see (the program's own path on kernels that open
 * it before setting in_execve) come out as %VARSYMFS_EXEC_NONE; the caller
 * tells those by the system call in progress.
 *
 * Return: %VARSYMFS_EXEC_NONE outside any execve, %VARSYMFS_EXEC_PROGRAM
 * for the program's own path, %VARSYMFS_EXEC_INTERP for an interpreter of
 * an execve no file of which gains privileges by its mode so far (the
 * caller must then ask varsymfs_exec_follow_caller() before following
 * its environment to another answer), %VARSYMFS_EXEC_SECURE for anything
 * else inside execve.
 */
enum varsymfs_exec_walk varsymfs_exec_walk(void)
{
	struct exec_watch *w;
	bool privileged;

	if (!current->in_execve)
		return VARSYMFS_EXEC_NONE;
	if (!READ_ONCE(hooked))
		return VARSYMFS_EXEC_SECURE;
	/* current's own watch: only current ends it, not while it looks */
	rcu_read_lock();
	w = watch_of(current);
	privileged = w && w->privileged;
	rcu_read_unlock();
	if (w)
		return privileged ? VARSYMFS_EXEC_SECURE : VARSYMFS_EXEC_INTERP;
	/* a task the hook could not watch is killed: secure till it dies */
	if (fatal_signal_pending(current) || !READ_ONCE(program_rule))
		return VARSYMFS_EXEC_SECURE;
	/* before the hook's first call: the program's own path is walking */
	return VARSYMFS_EXEC_PROGRAM;
}

/**
 * varsymfs_exec_follow_caller - may an interpreter walk follow the caller?
 * @rcu: in the RCU walk, where a file's capabilities cannot be read
 *
 * Asked only when following the caller's environment gives another answer
 * than the secure one, in an execve that varsymfs_exec_walk() called
 * %VARSYMFS_EXEC_INTERP.  Reads the capabilities of its files, once; if
 * none, records that the caller chose, so that the kernel's verdict after
 * begin_new_exec() is checked (check_exec_result).
 *
 * Return: 1 to follow the caller, 0 for the secure answer, or -ECHILD in
 * the RCU walk when that takes reading an extended attribute.
 */
int varsymfs_exec_follow_caller(bool rcu)
{
	struct exec_watch *w;
	unsigned int i;

	rcu_read_lock();
	w = watch_of(current);
	rcu_read_unlock();
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
	w->chose_interp = true;	/* checked again once the exec is done */
	return 1;
}

/*
 * Before 6.8 a walk inside execve with no watch is the program's own
 * path, unless its execve started before the hook was attached and so
 * has no watch yet: each execve in flight now gets a watch of doubt.
 */
static void doubt_execs_in_flight(void)
{
	struct task_struct *p, *t;
	struct hlist_bl_head *b;
	bool missed = false;

	rcu_read_lock();
	for_each_process_thread(p, t) {
		bool have, given = false;

		/* set before the hook's first call, cleared after the last */
		if (!data_race(!!t->in_execve) || !try_module_get(THIS_MODULE))
			continue;
		b = bucket_of(t);
		hlist_bl_lock(b);
		/* the hook may have been called for it since: then it has one */
		have = watch_of(t);
		if (!have)
			given = new_watch(t, true);
		hlist_bl_unlock(b);
		if (given)
			continue;	/* the watch keeps the reference */
		module_put(THIS_MODULE);
		missed |= !have && !(t->flags & PF_EXITING);
	}
	rcu_read_unlock();
	if (missed) {
		WRITE_ONCE(program_rule, false);
		pr_warn("no memory to watch the execs in flight: the program's own path resolves as secure-exec inside execve until the module is reloaded\n");
	}
}

int varsymfs_exec_init(void)
{
	/* writable: ftrace_set_filter() parses the pattern in place */
	char hooked_function[] = "security_bprm_check";
	int ret;

	ret = ftrace_set_filter(&exec_hook, hooked_function,
				strlen(hooked_function), 1);
	if (!ret)
		ret = register_ftrace_function(&exec_hook);
	if (ret) {
		pr_warn("cannot attach to security_bprm_check (%d): every walk inside execve resolves as secure-exec\n",
			ret);
		ftrace_free_filter(&exec_hook);
		return 0;
	}
	if (VARSYMFS_PROGRAM_OPENED_IN_EXECVE)
		doubt_execs_in_flight();
	WRITE_ONCE(hooked, true);
	return 0;
}

void varsymfs_exec_exit(void)
{
	if (READ_ONCE(hooked)) {
		/* waits for callbacks still running */
		unregister_ftrace_function(&exec_hook);
		ftrace_free_filter(&exec_hook);
	}
	/*
	 * No watch is left (each held a module reference), but the task
	 * that ended the last one may still be in end_watch() after its
	 * module_put(): it leaves it without a voluntary context switch, so
	 * an RCU-tasks grace period waits for it.
	 */
	synchronize_rcu_tasks();
}
