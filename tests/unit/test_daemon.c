// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_daemon.c - table-driven unit tests of how the FUSE daemon reads its
 * callers' /proc files: which system call (in every ABI) and which part of
 * execve (from kernel stacks recorded on real kernels, in stacks/).
 *
 *   test_daemon STACKS_DIR
 *
 * Each file in STACKS_DIR is /proc/TID/stack of a walk through a variant
 * link inside execve, named KERNEL-PHASE.txt, PHASE being what the daemon
 * must make of it: program, script, loader-elf or loader-misc.
 * tests/unit/record-stacks records them on a kernel (in a guest).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caller.h"
#include "check.h"


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

/* Made-up stacks: the shapes inlining or renaming would give. */
static void test_stack_shapes(void)
{
	static const struct {
		const char *stack;
		enum vsfuse_phase phase;
		const char *what;
	} rows[] = {
		{ "", VSFUSE_PHASE_UNKNOWN, "an empty stack" },
		{ "[<0>] request_wait_answer+0x16a/0x280\n"
		  "[<0>] do_syscall_64+0x71/0x290\n",
		  VSFUSE_PHASE_UNKNOWN, "no path walk" },
		{ "[<0>] do_filp_open+0x106/0x1c0\n"
		  "[<0>] do_sys_openat2+0x9d/0xd0\n",
		  VSFUSE_PHASE_UNKNOWN, "an open(2), not an exec" },
		{ "[<0>] do_filp_open+0x106/0x1c0\n"
		  "[<0>] alloc_bprm+0x20/0x220\n",
		  VSFUSE_PHASE_PROGRAM, "do_open_execat inlined" },
		{ "[<0>] do_filp_open+0x106/0x1c0\n"
		  "[<0>] do_open_execat+0x5d/0x120\n"
		  "[<0>] do_execveat_common.isra.0+0x8d/0x1b0\n",
		  VSFUSE_PHASE_PROGRAM, "alloc_bprm inlined" },
		{ "[<0>] do_filp_open+0x106/0x1c0\n"
		  "[<0>] load_elf_binary+0x1b1/0x1870\n",
		  VSFUSE_PHASE_LOADER, "open_exec inlined" },
		{ "[<0>] do_filp_open+0x106/0x1c0\n"
		  "[<0>] open_exec+0x26/0x60\n"
		  "[<0>] load_elf_fdpic_binary+0x10/0x20\n",
		  VSFUSE_PHASE_LOADER, "any other binary format" },
		{ "[<0>] do_filp_open+0x106/0x1c0\n"
		  "[<0>] open_exec+0x26/0x60\n"
		  "[<0>] exec_interpreter+0x26/0x60\n",
		  VSFUSE_PHASE_UNKNOWN, "a renamed caller" },
		{ "[<0>] do_filp_open+0x106/0x1c0\n"
		  "[<0>] open_exec+0x26/0x60\n"
		  "[<0>] load_script+0x1ed/0x310\n",
		  VSFUSE_PHASE_SCRIPT, "a script, open_exec a frame" },
		{ "[<0>] do_filp_open\n[<0>] bprm_execve\n",
		  VSFUSE_PHASE_PROGRAM, "frames without offsets" },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check(vsfuse_exec_phase(rows[i].stack) == rows[i].phase,
		      "stack shape: %s", rows[i].what);
}

static void test_recorded_stacks(const char *dir)
{
	static const struct {
		const char *suffix;
		enum vsfuse_phase phase;
	} phases[] = {
		{ "-program.txt", VSFUSE_PHASE_PROGRAM },
		{ "-script.txt", VSFUSE_PHASE_SCRIPT },
		{ "-loader-elf.txt", VSFUSE_PHASE_LOADER },
		{ "-loader-misc.txt", VSFUSE_PHASE_LOADER },
	};
	struct dirent *e;
	char path[4096], stack[8192];
	int files = 0;
	DIR *d = opendir(dir);
	size_t i, n;
	FILE *f;

	check(d, "cannot open %s", dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
			size_t sl = strlen(phases[i].suffix);

			if (len > sl &&
			    !strcmp(e->d_name + len - sl, phases[i].suffix))
				break;
		}
		if (i == sizeof(phases) / sizeof(phases[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "r");
		n = f ? fread(stack, 1, sizeof(stack) - 1, f) : 0;
		if (f)
			fclose(f);
		stack[n] = '\0';
		check(vsfuse_exec_phase(stack) == phases[i].phase,
		      "recorded stack %s", e->d_name);
		files++;
	}
	closedir(d);
	check(files >= 4, "only %d recorded stacks in %s", files, dir);
}

int main(int argc, char *argv[])
{
	test_syscall_lines();
	test_stack_shapes();
	test_recorded_stacks(argc > 1 ? argv[1] : "tests/unit/stacks");
	return report();
}
