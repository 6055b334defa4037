/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * execve_nrs.h - which system calls are execve(2) and execveat(2), in each
 * system-call ABI.
 *
 * A table and its lookup, depending on nothing: the core includes it
 * (varsym_core.h), and so does the FUSE daemon's BPF program, which asks
 * the same question inside the kernel (fuse/exec_hooks.bpf.c).  The
 * includer defines VARSYM_NR_EXECVE and VARSYM_NR_EXECVEAT, the build's
 * own numbers, and ARRAY_SIZE.
 */
#ifndef VARSYM_EXECVE_NRS_H
#define VARSYM_EXECVE_NRS_H

/*
 * System-call ABIs whose execve numbers the core knows.  The kernel tells
 * which ABI a call came in by (the module asks it, the daemon's BPF
 * program reads it: never from anything the process may change).  The
 * daemon without its BPF program cannot, and asks about every ABI of the
 * machine at once (VARSYM_ABI_X86, VARSYM_ABI_ARM64): a number that is
 * execve in one of them is execve, which only ever costs a walk the
 * execve rule (it is doubt, never another process's answer).
 */
enum varsym_abi {
	VARSYM_ABI_UNKNOWN,	/* none of these: any call may be execve */
	VARSYM_ABI_NATIVE,	/* the build's own (VARSYM_NR_EXECVE) */
	VARSYM_ABI_X86_64,
	VARSYM_ABI_IA32,	/* int $0x80, from a 32- or a 64-bit program */
	VARSYM_ABI_X32,		/* numbers with VARSYM_X32_BIT set */
	VARSYM_ABI_X86,		/* one of the three above */
	VARSYM_ABI_ARM32,	/* AArch32 (EABI) processes on arm64 */
	VARSYM_ABI_ARM64,	/* arm64's: the build's own, or AArch32 */
};

#define VARSYM_X32_BIT 0x40000000L

/* Which argument of an execve call is its envp, and its pointers' size. */
struct varsym_execve {
	unsigned int envp_arg;
	unsigned int ptr_size;
};

/* Whether one of the machine's ABIs, one, is among several, any. */
static inline int varsym_abi_within(enum varsym_abi one, enum varsym_abi any)
{
	if (any == VARSYM_ABI_X86)
		return one == VARSYM_ABI_X86_64 || one == VARSYM_ABI_IA32 ||
		       one == VARSYM_ABI_X32;
	if (any == VARSYM_ABI_ARM64)
		return one == VARSYM_ABI_NATIVE || one == VARSYM_ABI_ARM32;
	return 0;
}

/**
 * varsym_execve_call - is system call @nr execve(2) or execveat(2)?
 * @abi: the ABI the call came in by
 * @nr: its number, as the system-call entry saw it (x32's bit included)
 * @call: where its envp is, when it is
 *
 * The numbers are the ABIs' own, the same on every kernel; NATIVE's are
 * the build's.  ia32's 11 is also x86-64's munmap, which never walks a
 * path: a host that cannot tell the two ABIs apart (VARSYM_ABI_X86)
 * counts it as execve.  AArch32's 11 is also arm64's listxattr, which
 * does: VARSYM_ABI_ARM64 counts it as execve too, and the host takes a
 * listxattr through a variant link for a walk inside an execve.
 *
 * Return: 1 and @call filled when it is; 0 when it is not; -1 when @abi
 * is not one the core knows (then any call may be).
 */
static inline int varsym_execve_call(enum varsym_abi abi, long nr,
				     struct varsym_execve *call)
{
	static const struct {
		enum varsym_abi abi;
		long nr;
		struct varsym_execve call;
	} nrs[] = {
		{ VARSYM_ABI_X86_64, 59, { 2, 8 } },
		{ VARSYM_ABI_X86_64, 322, { 3, 8 } },
		{ VARSYM_ABI_IA32, 11, { 2, 4 } },
		{ VARSYM_ABI_IA32, 358, { 3, 4 } },
		{ VARSYM_ABI_X32, VARSYM_X32_BIT | 520, { 2, 4 } },
		{ VARSYM_ABI_X32, VARSYM_X32_BIT | 545, { 3, 4 } },
		{ VARSYM_ABI_ARM32, 11, { 2, 4 } },
		{ VARSYM_ABI_ARM32, 387, { 3, 4 } },
		{ VARSYM_ABI_NATIVE, VARSYM_NR_EXECVE, { 2, sizeof(long) } },
		{ VARSYM_ABI_NATIVE, VARSYM_NR_EXECVEAT, { 3, sizeof(long) } },
	};
	unsigned int i;

	if (abi == VARSYM_ABI_UNKNOWN)
		return -1;
	for (i = 0; i < ARRAY_SIZE(nrs); i++) {
		if (nrs[i].nr != nr)
			continue;
		if (nrs[i].abi != abi && !varsym_abi_within(nrs[i].abi, abi))
			continue;
		*call = nrs[i].call;
		return 1;
	}
	return 0;
}

/*
 * A user pointer of an ABI whose pointers are ptr_size bytes, from a
 * 64-bit register: a 32-bit ABI reads only the low half (int $0x80 from
 * a 64-bit process may leave anything in the upper one).
 */
static inline unsigned long long varsym_user_ptr(unsigned long long reg,
						 unsigned int ptr_size)
{
	return ptr_size == 4 ? (unsigned int)reg : reg;
}

#endif /* VARSYM_EXECVE_NRS_H */
