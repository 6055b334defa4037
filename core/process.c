// SPDX-License-Identifier: GPL-2.0-only
/*
 * process.c - what the core knows of a process: its auxiliary vector.
 *
 * Both implementations decide "secure-exec" from AT_SECURE, which execve(2)
 * writes into the process's auxiliary vector: the kernel module reads it
 * from mm->saved_auxv, the daemon from /proc/PID/auxv.  The vector is made
 * of words of the program's own size, so a 32-bit program's (ia32, x32,
 * or any compat program) holds 4-byte words even on a 64-bit kernel.
 * Reading it as pairs of 8-byte words inverts AT_SECURE: one parser, told
 * the word size, serves both.
 */
#include "internal.h"

#define AT_NULL_TYPE 0
#define AT_SECURE_TYPE 23	/* the same number on every architecture */

int varsym_auxv_secure(const void *auxv, size_t len, size_t word)
{
	const unsigned char *p = auxv;
	size_t i;

	if (word != 4 && word != 8)
		return -EINVAL;
	for (i = 0; i + 2 * word <= len; i += 2 * word) {
		unsigned long long type = varsym_word_at(p + i, word);

		if (type == AT_NULL_TYPE)
			return 0;
		if (type == AT_SECURE_TYPE)
			return varsym_word_at(p + i + word, word) != 0;
	}
	return -EINVAL;		/* no AT_NULL: not a vector execve wrote */
}
