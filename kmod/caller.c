// SPDX-License-Identifier: GPL-2.0-only
/*
 * caller.c - the process a variant link is resolved for.
 *
 * A link is always resolved in the context of the process walking it, so
 * its environment is user memory of current->mm: we copy it with the user
 * copy primitives, never dereference it.  Which bytes count is the core's
 * rule (varsym_walk_plan(), core/exec_rule.h); this file gathers its
 * facts: a kernel thread, AT_SECURE, where in an execve (exec.c, and the
 * system call for the program's own path from 6.8), execve's envp.
 *
 * The core's scans (core/caller.c) bound every read by what execve itself
 * accepts (VARSYM_ENV_MAX in all, MAX_ARG_STRLEN per string): anything past
 * that counts as absent.  This file gives them the copies.  In ref-walk the
 * reads may fault and sleep, check for a fatal signal at every page and
 * return -EINTR, which is never cached.  In the RCU walk nothing may
 * sleep: the area is copied with copy_from_user_nofault(), at most
 * RCU_SCAN_BUDGET bytes per follow, and any fault, a bigger scan, or an
 * execve's envp answers -ECHILD so that the VFS retries in ref-walk.
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

/* the core's bounds and numbers are the kernel's */
static_assert(VARSYM_ARG_STRLEN_PAGES * PAGE_SIZE == MAX_ARG_STRLEN);
#ifdef CONFIG_X86_64
static_assert(VARSYM_X32_BIT == __X32_SYSCALL_BIT);
#endif

/**
 * varsymfs_mm_secure - was mm's program started with AT_SECURE?
 * @mm: current's mm
 *
 * Its auxiliary vector holds words of the program's own size: a compat
 * program's address space ends below 4 GiB.
 */
bool varsymfs_mm_secure(struct mm_struct *mm)
{
	/* saved_auxv changes only under prctl(PR_SET_MM) of its own task */
	return varsym_auxv_secure(mm->saved_auxv, sizeof(mm->saved_auxv),
				  varsym_word_size(TASK_SIZE - 1)) != 0;
}

/*
 * The ABI of the system call in progress, for the core's table of execve
 * numbers: on arm64 a compat call is an AArch32 process's (arm64 has no
 * other compat ABI).  Only the execve rule (a convenience: which
 * environment chooses the program) depends on this; the loader rule does
 * not (exec.c).  An ABI not known here falls back to the exec-time
 * environment, which is the caller's own choice as much as its envp.
 */
static enum varsym_abi syscall_abi(void)
{
#ifdef CONFIG_X86_64
	if (in_ia32_syscall())
		return VARSYM_ABI_IA32;
	if (in_x32_syscall())
		return VARSYM_ABI_X32;
	return VARSYM_ABI_X86_64;
#elif defined(CONFIG_ARM64)
	return in_compat_syscall() ? VARSYM_ABI_ARM32 : VARSYM_ABI_NATIVE;
#else
	return in_compat_syscall() ? VARSYM_ABI_UNKNOWN : VARSYM_ABI_NATIVE;
#endif
}

/* True inside execve(2) or execveat(2), in any ABI known above. */
static bool in_execve_syscall(struct varsymfs_envp *envp)
{
	struct pt_regs *regs = task_pt_regs(current);
	struct varsym_execve call;
	unsigned long args[6];

	if (current->flags & (PF_EXITING | PF_SIGNALED) ||
	    fatal_signal_pending(current))
		return false;
	if (varsym_execve_call(syscall_abi(), syscall_get_nr(current, regs),
			       &call) != 1)
		return false;
	syscall_get_arguments(current, regs, args);
	envp->ptr = varsym_user_ptr(args[call.envp_arg], call.ptr_size);
	envp->ptr_size = call.ptr_size;
	return true;
}

/*
 * Copies n bytes of the caller's memory, all or nothing: n, -ECHILD where
 * the RCU walk cannot, or -EFAULT.  In the RCU walk every byte counts
 * against the follow's budget.
 */
static ssize_t mem_read(void *ctx, void *dst, unsigned long long addr,
			size_t n)
{
	struct varsymfs_caller *c = ctx;
	const void __user *src = u64_to_user_ptr(addr);

	if (!c->rcu)
		return copy_from_user(dst, src, n) ? -EFAULT : n;
	if (n > c->rcu_budget)
		return -ECHILD;
	c->rcu_budget -= n;
	return copy_from_user_nofault(dst, src, n) ? -ECHILD : n;
}

/* Between pages of a ref-walk scan: a killed caller stops at once. */
static int mem_next_page(void *ctx)
{
	const struct varsymfs_caller *c = ctx;

	if (c->rcu)
		return 0;
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return 0;
}

static const struct varsym_mem_ops mem_ops = {
	.read = mem_read,
	.next_page = mem_next_page,
};

static ssize_t varsymfs_getenv(void *ctx, const char *name, size_t name_len,
			       char *buf, size_t size)
{
	struct varsymfs_caller *c = ctx;
	struct varsym_env_scan s;
	char chunk[ENV_CHUNK];
	u64 ptr;
	/* mem_read is all or nothing: one envp pointer at a time */
	struct varsym_mem m = {
		.ops = &mem_ops, .ctx = c,
		.buf = chunk, .buf_size = sizeof(chunk),
		.ptrs = &ptr, .ptrs_size = c->envp.ptr_size,
		.page_size = PAGE_SIZE,
	};
	int err;

	switch (c->walk.from) {
	case VARSYM_ENV_ENVP:
		/* execve(path, argv, NULL): an empty environment */
		if (!c->envp.ptr)
			return -ENOENT;
		varsym_env_scan_init(&s, name, name_len, buf, size);
		err = varsym_scan_envp(&m, &s, c->envp.ptr, c->envp.ptr_size);
		break;
	case VARSYM_ENV_AREA:
		if (c->env_start >= c->env_end)
			return -ENOENT;
		varsym_env_scan_init(&s, name, name_len, buf, size);
		err = varsym_scan_area(&m, &s, c->env_start, c->env_end);
		break;
	default:
		return -ENOENT;
	}
	if (err)
		return err;
	return varsym_env_scan_result(&s);
}

/**
 * varsymfs_caller_keeps_answer - may current's answer be cached?
 *
 * True for a user process outside execve: its answer holds until its next
 * execve (the core's rule, varsym_walk_plan()).  Cheap and lockless: it is
 * asked before every cache lookup.
 */
bool varsymfs_caller_keeps_answer(void)
{
	struct varsymfs_envp envp;
	/*
	 * Only what the rule's keep depends on: where in an execve needs no
	 * look at the watch (any phase but none keeps nothing), and AT_SECURE
	 * is always known to the kernel, whatever its value.
	 */
	struct varsym_walk_facts f = {
		.kthread = !current->mm || (current->flags & PF_KTHREAD),
		.secure = VARSYM_NO,
		.exec = current->in_execve || in_execve_syscall(&envp) ?
			VARSYM_EXEC_DOUBT : VARSYM_EXEC_NONE,
		.serves_others = true,
	};

	return varsym_walk_plan(&f).keep;
}

/* What the core's rule needs to know of current. */
static void gather_facts(struct varsymfs_caller *c,
			 struct varsym_walk_facts *f)
{
	bool in_call = in_execve_syscall(&c->envp);

	*f = (struct varsym_walk_facts){
		.kthread = !current->mm || (current->flags & PF_KTHREAD),
		.secure = VARSYM_NO,
		.exec = varsymfs_exec_phase(),
		/* only the call's ABI can hide envp: its memory is ours */
		.envp_known = in_call,
		/* a kernel mount serves every process that walks it */
		.serves_others = true,
	};
	if (f->kthread)
		return;
	if (varsymfs_mm_secure(current->mm))
		f->secure = VARSYM_YES;
	/* from 6.8 the program's own path is walked before in_execve */
	if (f->exec == VARSYM_EXEC_NONE && in_call)
		f->exec = VARSYM_EXEC_PROGRAM;
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
	struct varsym_walk_facts facts;

	*c = (struct varsymfs_caller){
		.core = { .getenv = varsymfs_getenv, .ctx = c },
		.rcu = rcu,
		.rcu_budget = RCU_SCAN_BUDGET,
	};
	gather_facts(c, &facts);
	c->walk = varsym_walk_plan(&facts);
	switch (c->walk.from) {
	case VARSYM_ENV_SECURE:
		c->core.secure = true;
		break;
	case VARSYM_ENV_ENVP:
		if (rcu)
			return -ECHILD;
		break;
	case VARSYM_ENV_AREA:
		spin_lock(&mm->arg_lock);
		c->env_start = mm->env_start;
		c->env_end = mm->env_end;
		spin_unlock(&mm->arg_lock);
		break;
	case VARSYM_ENV_NONE:
		break;
	}
	return 0;
}
