// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_daemon.c - table-driven unit tests of how the FUSE daemon without
 * its exec hooks reads its callers' /proc/TID/syscall: which system call,
 * in every ABI of the machine at once.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caller.h"
#include "check.h"
#include "exec_hooks.h"


static void test_syscall_lines(void)
{
	static const struct {
		const char *line;
		unsigned int word;
		enum vsfuse_in in;
		uint64_t envp;
		unsigned int ptr_size;
	} rows[] = {
		/* x86-64 execve and execveat: envp is the 3rd, the 4th */
		{ "59 0x7ffc1 0x7ffc2 0x7ffc3 0x0 0x0 0x0 0x7ffc0 0x7f00",
		  8, VSFUSE_IN_EXECVE, 0x7ffc3, 8 },
		{ "322 0x3 0x7ffc2 0x7ffc3 0x7ffc4 0x1000 0x0 0x7ffc0 0x7f00",
		  8, VSFUSE_IN_EXECVE, 0x7ffc4, 8 },
		/* ia32 (int $0x80), from a 32-bit or a 64-bit process */
		{ "11 0x8049000 0xffd0 0xffd4 0x0 0x0 0x0 0xffd00000 0x8049010",
		  4, VSFUSE_IN_EXECVE, 0xffd4, 4 },
		{ "11 0x404000 0x405000 0x406000 0x0 0x0 0x0 0x7ffc0 0x401000",
		  8, VSFUSE_IN_EXECVE, 0x406000, 4 },
		{ "358 0x3 0x8049000 0xffd0 0xffd4 0x0 0x0 0xffd00000 0x0",
		  4, VSFUSE_IN_EXECVE, 0xffd4, 4 },
		/* x32: the x32 bit set in the number */
		{ "1073742344 0x400000 0x401000 0x402000 0x0 0x0 0x0 0x1 0x2",
		  4, VSFUSE_IN_EXECVE, 0x402000, 4 },
		{ "1073742369 0x3 0x400000 0x401000 0x402000 0x0 0x0 0x1 0x2",
		  4, VSFUSE_IN_EXECVE, 0x402000, 4 },
		/* anything else */
		{ "0 0x3 0x7ffc2 0x100 0x0 0x0 0x0 0x7ffc0 0x7f00",
		  8, VSFUSE_IN_OTHER, 0, 0 },
		{ "89 0x7ffc1 0x7ffc2 0x1000 0x0 0x0 0x0 0x7ffc0 0x7f00",
		  8, VSFUSE_IN_OTHER, 0, 0 },
		{ "-1 0x7ffc0 0x7f00", 8, VSFUSE_IN_OTHER, 0, 0 },
		{ "running", 8, VSFUSE_IN_RUNNING, 0, 0 },
		{ "", 8, VSFUSE_IN_UNKNOWN, 0, 0 },
		{ "garbage", 8, VSFUSE_IN_UNKNOWN, 0, 0 },
		{ "59 0x1 0x2", 8, VSFUSE_IN_UNKNOWN, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t envp = 0;
		unsigned int ptr_size = 0;
		enum vsfuse_in in = vsfuse_syscall_parse(
			rows[i].line, vsfuse_syscall_abi(rows[i].word), &envp,
			&ptr_size);

		check(in == rows[i].in, "syscall \"%s\" (word %u): %d, not %d",
		      rows[i].line, rows[i].word, in, rows[i].in);
		if (rows[i].in == VSFUSE_IN_EXECVE)
			check(envp == rows[i].envp &&
			      ptr_size == rows[i].ptr_size,
			      "syscall \"%s\": envp %#llx/%u, not %#llx/%u",
			      rows[i].line, (unsigned long long)envp, ptr_size,
			      (unsigned long long)rows[i].envp,
			      rows[i].ptr_size);
	}
}

/* arm64's two ABIs at once, as the daemon without its exec hooks reads them */
static void test_syscall_lines_arm64(void)
{
	static const struct {
		const char *line;
		enum vsfuse_in in;
		uint64_t envp;
		unsigned int ptr_size;
	} rows[] = {
		/* AArch32 execve, execveat: 32-bit pointers */
		{ "11 0x10000 0x20000 0x30000 0x0 0x0 0x0 0xff00 0x8000",
		  VSFUSE_IN_EXECVE, 0x30000, 4 },
		{ "387 0x3 0x10000 0x20000 0x30000 0x0 0x0 0xff00 0x8000",
		  VSFUSE_IN_EXECVE, 0x30000, 4 },
		/* AArch32's fcntl64, socket: arm64's execve, execveat */
		{ "221 0x1 0x2 0x3 0x0 0x0 0x0 0xff00 0x8000", VSFUSE_IN_OTHER,
		  0, 0 },
		{ "-1 0xff00 0x8000", VSFUSE_IN_OTHER, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t envp = 0;
		unsigned int ptr_size = 0;
		enum vsfuse_in in = vsfuse_syscall_parse(rows[i].line,
							 VARSYM_ABI_ARM64,
							 &envp, &ptr_size);

		check(in == rows[i].in && (in != VSFUSE_IN_EXECVE ||
		      (envp == rows[i].envp && ptr_size == rows[i].ptr_size)),
		      "arm64 syscall \"%s\": %d, envp %#llx/%u", rows[i].line,
		      in, (unsigned long long)envp, ptr_size);
	}
}

/*
 * A published slot (exec_hooks.h) answers only for the tid it holds, and
 * only when no write began or ended while it was read.
 */
static void test_published_slots(void)
{
	static const struct {
		unsigned int seq, tid, asked;
		int want;
		const char *what;
	} rows[] = {
		{ 2, 1234, 1234, 1, "its own, written" },
		{ 0, 1234, 1234, 1, "its own, first write" },
		{ 3, 1234, 1234, 0, "its own, being written" },
		{ 2, 1234 + VSFUSE_PUBLISHED, 1234, 0, "another tid's" },
		{ 2, 0, 1234, 0, "emptied" },
		{ 2, 0, 0, 0, "tid 0: an empty slot is nobody's" },
	};
	struct vsfuse_published slot;
	struct vsfuse_snapshot s;
	size_t i;
	int got;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&slot, 0, sizeof(slot));
		slot.seq = rows[i].seq;
		slot.tid = rows[i].tid;
		slot.snap.token = 77;
		slot.snap.ino = 5;
		slot.snap.flags = VSFUSE_SNAP_ENVP_KNOWN;
		memset(&s, 0xa5, sizeof(s));
		got = vsfuse_published_read(&slot, rows[i].asked, &s);
		check(got == rows[i].want, "published slot, %s: got %d, want %d",
		      rows[i].what, got, rows[i].want);
		if (got == 1)
			check(!memcmp(&s, &slot.snap, sizeof(s)),
			      "published slot, %s: the snapshot copied whole",
			      rows[i].what);
	}
}

int main(void)
{
	test_syscall_lines();
	test_syscall_lines_arm64();
	test_published_slots();
	return report();
}
