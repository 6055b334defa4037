// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_daemon.c - table-driven unit tests of how the FUSE daemon reads its
 * callers' /proc/TID/syscall: which system call, in every ABI; and of the
 * exec hooks' stamps (exec_hooks.h), as the BPF program writes them and the
 * answer cache reads them.
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
		enum vsfuse_in in = vsfuse_syscall_parse(rows[i].line,
							 rows[i].word, &envp,
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

/*
 * A stamp keeps its tid and execve bit, and gives back its whole count from
 * any later count less than VSFUSE_STAMP_COUNT_SPAN past it, across the
 * wrap of its 41 bits; a count a whole span later reads as a new one.
 */
static void test_stamps(void)
{
	const unsigned long long span = VSFUSE_STAMP_COUNT_SPAN;
	static const struct {
		unsigned long long count, now;
		unsigned int tid;
		int in_execve;
	} rows[] = {
		{ 1, 1, 1, 0 },
		{ 7, 9, 4194303, 1 },		/* the largest tid */
		{ span - 1, span + 5, 300, 0 },	/* the 41 bits wrapped */
		{ 3 * span + 2, 4 * span + 1, 65536 + 12, 1 },
		{ 5, 5 + span - 1, 12, 0 },	/* the last count that tells */
	};
	unsigned long long s;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		s = vsfuse_stamp(rows[i].count, rows[i].tid, rows[i].in_execve);
		check(vsfuse_stamp_tid(s) == rows[i].tid, "stamp row %zu: tid %u",
		      i, vsfuse_stamp_tid(s));
		check(!(s & VSFUSE_STAMP_IN_EXECVE) == !rows[i].in_execve,
		      "stamp row %zu: execve bit", i);
		check(vsfuse_stamp_count(s, rows[i].now) == rows[i].count,
		      "stamp row %zu: count %llu, not %llu", i,
		      vsfuse_stamp_count(s, rows[i].now), rows[i].count);
	}
	s = vsfuse_stamp(5, 12, 0);
	check(vsfuse_stamp_count(s, 5 + span) == 5 + span,
	      "a count a whole span later reads as the newer one");
	check(vsfuse_stamp(5, 12, 0) != vsfuse_stamp(6, 12, 0) &&
	      vsfuse_stamp(5, 12, 0) != vsfuse_stamp(5, 13, 0),
	      "stamps of other counts or tids differ");
}

int main(void)
{
	test_syscall_lines();
	test_stamps();
	return report();
}
