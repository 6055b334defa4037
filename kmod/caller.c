// SPDX-License-Identifier: GPL-2.0-only
/*
 * caller.c - the process a variant link is resolved for.
 *
 * A link is always resolved in the context of the process walking it, so
 * its environment is user memory of current->mm: we copy it with the user
 * copy primitives, never dereference it.  Which bytes count (docs/SPEC.md
 * "Which environment" and "Secure-exec processes"):
 *
 *  - a kernel thread has no environment: every variable is unset;
 *  - a process started with AT_SECURE is secure: every variable is unset;
 *  - inside execve(2), the walk of the program's own path, and of an
 *    interpreter of a program that gains no privilege, reads the envp
 *    passed to that execve; every other walk inside execve resolves as
 *    secure (exec.c tells which is which, whatever the system call's ABI);
 *  - otherwise the [env_start, env_end) area recorded at exec.
 *
 * Every read is bounded by what execve itself accepts (VARSYM_ENV_MAX in
 * all, MAX_ARG_STRLEN per string): anything past that counts as absent.
 * In ref-walk the reads may fault and sleep, check for a fatal signal at
 * every page and return -EINTR, which is never cached.  In the RCU walk
 * nothing may sleep: the area is copied with copy_from_user_nofault(), at
 * most RCU_SCAN_BUDGET bytes per follow, and any fault, a bigger scan, or
 * an execve's envp answers -ECHILD so that the VFS retries in ref-walk.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/binfmts.h>
#include <linux/uaccess.h>
#include <asm/syscall.h>

#include "varsymfs.h"

/* Bytes copied at a time; the stack buffer is all the scanner needs. */
#define ENV_CHUNK 256
/* What one follow may scan in the RCU walk, all its variables together. */
#define RCU_SCAN_BUDGET SZ_64K

/*
 * The word size of current's auxiliary vector: a compat program's (ia32,
 * x32, or any 32-bit program on a 64-bit kernel) holds 32-bit words.  Its
 * address space ends below 4 GiB, and a native 64-bit one never does.
 */
static size_t auxv_word_size(void)
{
	if (IS_ENABLED(CONFIG_64BIT) && TASK_SIZE <= SZ_4G)
		return 4;
	return sizeof(unsigned long);
}

/**
 * varsymfs_mm_secure - was mm's program started with AT_SECURE?
 * @mm: current's mm
 */
bool varsymfs_mm_secure(struct mm_struct *mm)
{
	/* saved_auxv changes only under prctl(PR_SET_MM) of its own task */
	return varsym_auxv_secure(mm->saved_auxv, sizeof(mm->saved_auxv),
				  auxv_word_size()) != 0;
}

/*
 * The system call in progress, if it is execve(2) or execveat(2) in any
 * ABI this kernel runs: which of its arguments is the envp, and whether
 * that holds 32-bit pointers.  Only the execve rule (a convenience: which
 * environment chooses the program) depends on this; the loader rule does
 * not (exec.c).  An ABI not known here falls back to the exec-time
 * environment, which is the caller's own choice as much as its envp.
 */
static int execve_envp_arg(bool *compat)
{
	long nr = syscall_get_nr(current, task_pt_regs(current));

	*compat = in_compat_syscall();
#ifdef CONFIG_X86_64
	if (in_ia32_syscall())
		return nr == __NR_ia32_execve ? 2 :
		       nr == __NR_ia32_execveat ? 3 : -1;
	if (in_x32_syscall()) {
		nr &= ~__X32_SYSCALL_BIT;
		return nr == __NR_x32_execve ? 2 :
		       nr == __NR_x32_execveat ? 3 : -1;
	}
#else
	if (*compat)
		return -1;
#endif
	return nr == __NR_execve ? 2 : nr == __NR_execveat ? 3 : -1;
}

/* True inside execve(2) or execveat(2), in any ABI known above. */
static bool in_execve_syscall(struct varsymfs_envp *envp)
{
	unsigned long args[6];
	int arg;

	if (current->flags & (PF_EXITING | PF_SIGNALED) ||
	    fatal_signal_pending(current))
		return false;
	arg = execve_envp_arg(&envp->compat);
	if (arg < 0)
		return false;
	syscall_get_arguments(current, task_pt_regs(current), args);
	/*
	 * As compat execve reads it: int $0x80 from a 64-bit process may
	 * leave anything in the upper half of the register.
	 */
	if (envp->compat)
		args[arg] = (u32)args[arg];
	envp->ptr = (const void __user *)args[arg];
	return true;
}

/*
 * Copies n bytes of the caller's memory: 0, -ECHILD where the RCU walk
 * cannot, or -EFAULT.  In the RCU walk every byte counts against the
 * follow's budget.
 */
static int copy_env(struct varsymfs_caller *c, void *dst, unsigned long src,
		    size_t n)
{
	if (!c->rcu)
		return copy_from_user(dst, (const void __user *)src, n) ?
		       -EFAULT : 0;
	if (n > c->rcu_budget)
		return -ECHILD;
	c->rcu_budget -= n;
	return copy_from_user_nofault(dst, (const void __user *)src, n) ?
	       -ECHILD : 0;
}

/* Between pages of a ref-walk scan: a killed caller stops at once. */
static int next_page(const struct varsymfs_caller *c)
{
	if (c->rcu)
		return 0;
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return 0;
}

/*
 * The exec-time area.  An unreadable page ends it, and so does the bound
 * of VARSYM_ENV_MAX bytes (only prctl(PR_SET_MM) makes a bigger one): an
 * entry cut short does not count, nor anything after it.
 */
static int scan_area(struct varsymfs_caller *c, struct varsym_env_scan *s)
{
	unsigned long pos = c->env_start;
	unsigned long end = c->env_start + min(c->env_end - c->env_start,
					       VARSYM_ENV_MAX);
	char chunk[ENV_CHUNK];
	int err;

	while (pos < end) {
		size_t n = min3(end - pos, (unsigned long)ENV_CHUNK,
				PAGE_SIZE - offset_in_page(pos));

		err = copy_env(c, chunk, pos, n);
		if (err == -ECHILD)
			return err;
		if (err) {
			varsym_env_scan_cut(s);
			return 0;
		}
		if (varsym_env_scan_feed(s, chunk, n))
			return 0;
		pos += n;
		err = offset_in_page(pos) ? 0 : next_page(c);
		if (err)
			return err;
	}
	if (end < c->env_end)
		varsym_env_scan_cut(s);
	return 0;
}

static int get_envp_entry(const struct varsymfs_envp *envp, unsigned long i,
			  unsigned long *str)
{
#ifdef CONFIG_COMPAT
	if (envp->compat) {
		compat_uptr_t p;

		if (get_user(p, (const compat_uptr_t __user *)envp->ptr + i))
			return -EFAULT;
		*str = (unsigned long)compat_ptr(p);
		return 0;
	}
#endif
	return get_user(*str, (const unsigned long __user *)envp->ptr + i);
}

/*
 * Feeds one string of execve's envp.  *budget is what execve would still
 * accept; a string longer than MAX_ARG_STRLEN, or past the budget, makes
 * execve fail with E2BIG anyway.  Returns 1 when the scanner has its
 * answer, 0 to go on, or -errno: the string does not count, nor any after.
 */
static int scan_string(struct varsymfs_caller *c, unsigned long str,
		       struct varsym_env_scan *s, size_t *budget)
{
	size_t len = 0;
	char chunk[ENV_CHUNK];
	int err;

	for (;;) {
		size_t n = min_t(size_t, ENV_CHUNK,
				 PAGE_SIZE - offset_in_page(str + len));
		const char *nul;

		if (copy_env(c, chunk, str + len, n))
			return -EFAULT;
		nul = memchr(chunk, '\0', n);
		if (nul)
			n = nul - chunk + 1;
		len += n;
		if (len > MAX_ARG_STRLEN || len > *budget)
			return -E2BIG;
		if (varsym_env_scan_feed(s, chunk, n))
			return 1;
		if (nul) {
			*budget -= len;
			return 0;
		}
		err = offset_in_page(str + len) ? 0 : next_page(c);
		if (err)
			return err;
	}
}

static int scan_envp(struct varsymfs_caller *c, struct varsym_env_scan *s)
{
	size_t word = c->envp.compat ? sizeof(compat_uptr_t) : sizeof(long);
	size_t budget = VARSYM_ENV_MAX;
	unsigned long i, str;
	int ret;

	for (i = 0; budget >= word; i++) {
		budget -= word;
		if (get_envp_entry(&c->envp, i, &str) || !str)
			break;
		ret = scan_string(c, str, s, &budget);
		if (ret == -EINTR)
			return ret;
		if (ret < 0)
			varsym_env_scan_cut(s);
		if (ret)
			break;
		ret = next_page(c);
		if (ret)
			return ret;
	}
	return 0;
}

static ssize_t varsymfs_getenv(void *ctx, const char *name, size_t name_len,
			       char *buf, size_t size)
{
	struct varsymfs_caller *c = ctx;
	struct varsym_env_scan s;
	int err;

	if (c->source == VARSYMFS_ENV_NONE)
		return -ENOENT;
	varsym_env_scan_init(&s, name, name_len, buf, size);
	err = c->source == VARSYMFS_ENV_EXECVE ? scan_envp(c, &s) :
						 scan_area(c, &s);
	if (err)
		return err;
	return varsym_env_scan_result(&s);
}

/**
 * varsymfs_caller_keeps_answer - may current's answer be cached?
 *
 * True for a user process outside execve: its answer holds until its next
 * execve.  Cheap and lockless: it is asked before every cache lookup.
 */
bool varsymfs_caller_keeps_answer(void)
{
	struct varsymfs_envp envp;

	return current->mm && !(current->flags & PF_KTHREAD) &&
	       !current->in_execve && !in_execve_syscall(&envp);
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

	*c = (struct varsymfs_caller){
		.core = { .getenv = varsymfs_getenv, .ctx = c },
		.rcu = rcu,
		.rcu_budget = RCU_SCAN_BUDGET,
		.source = VARSYMFS_ENV_NONE,
	};
	if (!mm || (current->flags & PF_KTHREAD))
		return 0;
	if (varsymfs_mm_secure(mm)) {
		c->core.secure = true;
		return 0;
	}
	switch (varsymfs_exec_walk(rcu)) {
	case VARSYMFS_EXEC_UNKNOWN:
		return -ECHILD;
	case VARSYMFS_EXEC_SECURE:
		c->core.secure = true;
		return 0;
	case VARSYMFS_EXEC_PROGRAM:
	case VARSYMFS_EXEC_INTERP:
		/* execve's envp, if this ABI is known; else the area below */
		if (in_execve_syscall(&c->envp))
			goto envp;
		break;
	case VARSYMFS_EXEC_NONE:
		/* the program's own path, where it is opened before in_execve */
		if (in_execve_syscall(&c->envp))
			goto envp;
		break;
	}
	spin_lock(&mm->arg_lock);
	c->env_start = mm->env_start;
	c->env_end = mm->env_end;
	spin_unlock(&mm->arg_lock);
	if (c->env_start < c->env_end)
		c->source = VARSYMFS_ENV_AREA;
	return 0;
envp:
	if (rcu)
		return -ECHILD;
	if (c->envp.ptr)	/* execve(path, argv, NULL): empty */
		c->source = VARSYMFS_ENV_EXECVE;
	return 0;
}
