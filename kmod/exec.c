// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec.c - what execve(2) is loading, so a setuid program's loader is safe.
 *
 * While execve() opens the ELF interpreter of a program (its dynamic loader,
 * PT_INTERP) or a binfmt_misc interpreter, the process is still the caller:
 * its credentials and its environment are the unprivileged user's, and the
 * new credentials are installed only later, at the point of no return.  If
 * the loader's path crosses a variant link, the user would choose the code
 * that then runs with the setuid program's privileges.
 *
 * So varsymfs registers a binary-format handler that never loads anything:
 * placed first in the list, it is called for every file execve() is about to
 * load (the program, then each interpreter a script or binfmt_misc names),
 * before any handler opens that file's interpreter.  It records whether the
 * file gains privileges, and returns -ENOEXEC so the real handlers proceed.
 * A walk inside execve that finds a record saying so is resolved as for a
 * secure-exec process.
 *
 * A record is keyed by task, start time and exec generation, and is live
 * while its task is inside that execve.  Records are never evicted while
 * live; if every slot is live, the observer fails the execve (-EAGAIN)
 * rather than let a loader be chosen without one.
 */
#include <linux/binfmts.h>
#include <linux/kmod.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/xattr.h>

#include "varsymfs.h"

#define EXEC_SLOTS 128

struct exec_record {
	struct task_struct *task;	/* identity only, never dereferenced */
	pid_t pid;			/* to find the task again, if alive */
	u64 start_time;
	u64 exec_id;
	const struct linux_binprm *bprm;
	bool privileged;
};

static struct exec_record records[EXEC_SLOTS];
static DEFINE_SPINLOCK(records_lock);

static bool record_is_current(const struct exec_record *r)
{
	return r->task == current && r->pid == current->pid &&
	       r->start_time == current->start_boottime &&
	       r->exec_id == READ_ONCE(current->self_exec_id);
}

/* Whether the record's task is still inside the execve it was made for. */
static bool record_is_live(const struct exec_record *r)
{
	struct task_struct *t;
	bool live;

	if (!r->task)
		return false;
	rcu_read_lock();
	t = pid_task(find_pid_ns(r->pid, &init_pid_ns), PIDTYPE_PID);
	live = t == r->task && t->start_boottime == r->start_time &&
	       READ_ONCE(t->self_exec_id) == r->exec_id && t->in_execve;
	rcu_read_unlock();
	return live;
}

/* May executing this file raise the caller's privileges? */
static bool file_gains_privileges(struct file *file)
{
	struct inode *inode = file_inode(file);
	umode_t mode = inode->i_mode;

	if (mode & S_ISUID)
		return true;
	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		return true;
	/* file capabilities; an error other than "none" counts as some */
	switch (__vfs_getxattr(file->f_path.dentry, inode, XATTR_NAME_CAPS,
			       NULL, 0)) {
	case -ENODATA:
	case -EOPNOTSUPP:
		return false;
	default:
		return true;
	}
}

static int varsymfs_observe_exec(struct linux_binprm *bprm)
{
	bool privileged = bprm->secureexec ||
			  file_gains_privileges(bprm->file);
	struct exec_record *r, *free = NULL;
	int ret = -ENOEXEC;

	spin_lock(&records_lock);
	for (r = records; r < records + EXEC_SLOTS; r++) {
		if (r->task == current && r->pid == current->pid &&
		    r->start_time == current->start_boottime) {
			free = r;
			break;
		}
		if (!free && !record_is_live(r))
			free = r;
	}
	if (!free) {
		ret = -EAGAIN;
		goto out;
	}
	/* a script's interpreter inherits what the script already gained */
	if (record_is_current(free) && free->bprm == bprm)
		privileged |= free->privileged;
	*free = (struct exec_record){
		.task = current,
		.pid = current->pid,
		.start_time = current->start_boottime,
		.exec_id = READ_ONCE(current->self_exec_id),
		.bprm = bprm,
		.privileged = privileged,
	};
out:
	spin_unlock(&records_lock);
	if (ret == -EAGAIN)
		pr_warn_ratelimited("varsymfs: %d execs at once: failing one\n",
				    EXEC_SLOTS);
	return ret;
}

static struct linux_binfmt varsymfs_exec_observer = {
	.module = THIS_MODULE,
	.load_binary = varsymfs_observe_exec,
};

/**
 * varsymfs_exec_loader_privileged - is this walk loading a privileged exec?
 *
 * Called inside execve(2) only.  True when the file execve is loading gains
 * privileges and the walk comes after the observer saw it: an interpreter
 * being opened for it.  Before that (the program's own path) there is no
 * record for this execve yet, or only one of an earlier failed execve of
 * this task, which errs on the safe side.
 */
bool varsymfs_exec_loader_privileged(void)
{
	struct exec_record *r;
	bool privileged = false;

	if (!current->in_execve)
		return false;
	spin_lock(&records_lock);
	for (r = records; r < records + EXEC_SLOTS; r++) {
		if (record_is_current(r)) {
			privileged = r->privileged;
			break;
		}
	}
	spin_unlock(&records_lock);
	return privileged;
}

int varsymfs_exec_init(void)
{
	/*
	 * binfmt_misc inserts itself at the head of the list when it loads:
	 * load it first, so the observer stays ahead of it and sees every
	 * file before an interpreter for it is opened.
	 */
	request_module("binfmt_misc");
	insert_binfmt(&varsymfs_exec_observer);
	return 0;
}

void varsymfs_exec_exit(void)
{
	unregister_binfmt(&varsymfs_exec_observer);
}
