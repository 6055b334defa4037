// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_env.c - libFuzzer target: the environment-block scanner.
 *
 * Input: one byte of chunk size, one byte of buffer size, a name length
 * byte, the name, then the block.  The scanner is fed in chunks of that
 * size and must give exactly what a plain reading of the block gives: the
 * value of the first NAME= entry, entries ending at a NUL or at the end of
 * the block, -ENAMETOOLONG when the value does not fit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "varsym_core.h"

/* The obvious reading, to compare with. */
static ssize_t reference(const char *env, size_t len, const char *name,
			 size_t nlen, const char **value)
{
	size_t start = 0;

	while (start < len) {
		const char *nul = memchr(env + start, '\0', len - start);
		size_t end = nul ? (size_t)(nul - env) : len;

		if (end - start > nlen && !memcmp(env + start, name, nlen) &&
		    env[start + nlen] == '=') {
			*value = env + start + nlen + 1;
			return end - start - nlen - 1;
		}
		start = end + 1;
	}
	return -ENOENT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t chunk, bufsize, nlen, off = 0;
	const char *name, *env, *want_value = NULL;
	struct varsym_env_scan s;
	ssize_t want, got;
	char *buf;

	if (size < 3)
		return 0;
	chunk = data[0] % 64 + 1;
	bufsize = data[1];
	nlen = data[2] % 16 + 1;
	if (size < 3 + nlen)
		return 0;
	name = (const char *)data + 3;
	env = name + nlen;
	size -= 3 + nlen;
	buf = malloc(bufsize + 1);	/* exactly bufsize usable: ASan checks */

	want = reference(env, size, name, nlen, &want_value);
	if (want > (ssize_t)bufsize)
		want = -ENAMETOOLONG;
	varsym_env_scan_init(&s, name, nlen, buf, bufsize);
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (varsym_env_scan_feed(&s, env + off, n))
			break;
		off += n;
	}
	got = varsym_env_scan_result(&s);
	if (got != want || (got > 0 && memcmp(buf, want_value, got)))
		abort();
	free(buf);
	return 0;
}
