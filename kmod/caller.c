// SPDX-License-Identifier: GPL-2.0-only
/*
 * caller.c - the process a variant link is resolved for.
 *
 * A link is always resolved in the context of the process walking it, so
 * its environment is user memory of current->mm: we copy it with the user
 * copy primitives, never dereference it.  Which bytes count (SPEC section 3):
 *
 *  - a kernel thread has no environment: every variable is unset;
 *  - a process started with AT_SECURE is secure: every variable is unset;
 *  - inside execve(2), before the point of no return, the envp passed to
 *    that execve, unless the walk is loading an interpreter into a program
 *    that gains privileges (see exec.c), which is resolved as secure;
 *  - otherwise the [env_start, env_end) area recorded at exec.
 *
 * In the RCU walk (rcu == true) nothing may sleep: the area is copied with
 * copy_from_user_nofault() and any fault, or the execve case, answers
 * -ECHILD so that the VFS retries in ref-walk, where faults are allowed.
 */
#include <linux/compat.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/binfmts.h>
#include <linux/uaccess.h>
#include <asm/syscall.h>

#include "varsymfs.h"

/* Bytes copied at a time; the stack buffer is all the scanner needs. */
#define ENV_CHUNK 256
/* Beyond this, the RCU walk hands a huge environment to ref-walk. */
#define RCU_SCAN_MAX (256 * 1024)

static bool mm_secure(struct mm_struct *mm)
{
	const unsigned long *auxv = mm->saved_auxv;
	size_t i;

	for (i = 0; i + 1 < AT_VECTOR_SIZE; i += 2) {
		unsigned long type = READ_ONCE(auxv[i]);

		if (type == AT_NULL)
			break;
		if (type == AT_SECURE)
			return READ_ONCE(auxv[i + 1]) != 0;
	}
	return false;
}

/*
 * True when current is inside execve(2) or execveat(2), before the point of
 * no return; *envp is then that call's envp (NULL for an empty one).  After
 * the point of no return the task either completes its exec, which walks no
 * path, or dies, which PF_SIGNALED and fatal_signal_pending() exclude.
 */
static bool in_execve_syscall(const char __user *const __user **envp)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long args[6];
	long nr;

	if (current->flags & (PF_EXITING | PF_SIGNALED) ||
	    fatal_signal_pending(current) || in_compat_syscall())
		return false;
	nr = syscall_get_nr(current, regs);
	if (nr != __NR_execve && nr != __NR_execveat)
		return false;
	syscall_get_arguments(current, regs, args);
	*envp = (const char __user *const __user *)
		(nr == __NR_execve ? args[2] : args[3]);
	return true;
}

static int copy_env(const struct varsymfs_caller *c, void *dst,
		    unsigned long src, size_t n)
{
	if (c->rcu)
		return copy_from_user_nofault(dst, (const void __user *)src, n) ?
		       -ECHILD : 0;
	return copy_from_user(dst, (const void __user *)src, n) ? -EFAULT : 0;
}

/*
 * An unreadable page ends the area: an entry it cuts short does not count,
 * and neither does anything after it.
 */
static int scan_area(struct varsymfs_caller *c, struct varsym_env_scan *s)
{
	unsigned long pos = c->env_start;
	char chunk[ENV_CHUNK];

	if (c->rcu && c->env_end - c->env_start > RCU_SCAN_MAX)
		return -ECHILD;
	while (pos < c->env_end) {
		size_t n = min3(c->env_end - pos, (unsigned long)ENV_CHUNK,
				PAGE_SIZE - offset_in_page(pos));
		int err = copy_env(c, chunk, pos, n);

		if (err == -ECHILD)
			return err;
		if (err) {
			varsym_env_scan_cut(s);
			break;
		}
		if (varsym_env_scan_feed(s, chunk, n))
			break;
		pos += n;
		if (!c->rcu)
			cond_resched();
	}
	return 0;
}

/* Feeds one string of execve's envp; the kernel bounds it as exec does. */
static int scan_string(const char __user *str, struct varsym_env_scan *s)
{
	long len = strnlen_user(str, MAX_ARG_STRLEN);
	char chunk[ENV_CHUNK];
	long off;

	/* 0: a fault; over MAX_ARG_STRLEN: execve fails with E2BIG anyway */
	if (len <= 0 || len > MAX_ARG_STRLEN)
		return -EFAULT;
	len--;				/* the NUL is fed below, always */
	for (off = 0; off < len; off += ENV_CHUNK) {
		size_t n = min_t(long, len - off, ENV_CHUNK);

		if (copy_from_user(chunk, str + off, n))
			return -EFAULT;
		if (varsym_env_scan_feed(s, chunk, n))
			return 1;
	}
	return varsym_env_scan_feed(s, "", 1);
}

static int scan_envp(struct varsymfs_caller *c, struct varsym_env_scan *s)
{
	long i;

	for (i = 0; i < MAX_ARG_STRINGS; i++) {
		const char __user *str;
		int ret;

		if (get_user(str, c->envp + i) || !str)
			break;
		ret = scan_string(str, s);
		if (ret < 0)
			varsym_env_scan_cut(s);
		if (ret)
			break;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

static ssize_t varsymfs_getenv(void *ctx, const char *name, size_t name_len,
			       char *buf, size_t size)
{
	struct varsymfs_caller *c = ctx;
	struct varsym_env_scan s;
	int err;

	if (!c->has_env)
		return -ENOENT;
	varsym_env_scan_init(&s, name, name_len, buf, size);
	err = c->envp ? scan_envp(c, &s) : scan_area(c, &s);
	if (err)
		return err;
	return varsym_env_scan_result(&s);
}

/**
 * varsymfs_caller_keeps_answer - may current's answer be cached?
 *
 * True for a user process outside execve: its answer holds until its next
 * execve.  Cheap, lockless: it is asked before every cache lookup.
 */
bool varsymfs_caller_keeps_answer(void)
{
	const char __user *const __user *envp;

	return current->mm && !(current->flags & PF_KTHREAD) &&
	       !in_execve_syscall(&envp);
}

/**
 * varsymfs_caller_init - describe current as the caller of a resolution
 * @c: filled in
 * @rcu: true in the RCU walk, where nothing may sleep
 *
 * Return: 0, or -ECHILD when this caller can only be served in ref-walk.
 */
int varsymfs_caller_init(struct varsymfs_caller *c, bool rcu)
{
	struct mm_struct *mm = current->mm;
	const char __user *const __user *envp;

	*c = (struct varsymfs_caller){
		.core = { .getenv = varsymfs_getenv, .ctx = c },
		.rcu = rcu,
	};
	if (!mm || (current->flags & PF_KTHREAD))
		return 0;
	if (mm_secure(mm)) {
		c->core.secure = true;
		return 0;
	}
	if (in_execve_syscall(&envp)) {
		if (rcu)
			return -ECHILD;
		if (varsymfs_exec_loader_privileged()) {
			c->core.secure = true;
			return 0;
		}
		c->envp = envp;
		c->has_env = !!envp;
		return 0;
	}
	spin_lock(&mm->arg_lock);
	c->env_start = mm->env_start;
	c->env_end = mm->env_end;
	spin_unlock(&mm->arg_lock);
	c->has_env = c->env_start < c->env_end;
	return 0;
}
