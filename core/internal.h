/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * internal.h - helpers shared by the core's own files, not part of its API.
 */
#ifndef VARSYM_INTERNAL_H
#define VARSYM_INTERNAL_H

#include "varsym_core.h"

/* A byte of a variable name: [A-Za-z_], and [0-9] after the first. */
static inline bool varsym_name_char(char c, bool first)
{
	if (c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
		return true;
	return !first && c >= '0' && c <= '9';
}

static inline void varsym_note(const struct varsym_caller *c,
			       const char *name, size_t len,
			       enum varsym_source from, const char *value,
			       size_t value_len)
{
	if (c->note)
		c->note(c->ctx, name, len, from, value, value_len);
}

/*
 * A variable's value from the first source that has it (struct
 * varsym_caller): its length, 0 when no source has it (set and empty
 * counts as unset), or -errno; *from says which source answered or,
 * for 0, which was asked last.
 */
ssize_t varsym_value(const struct varsym_caller *c, const char *name,
		     size_t len, char *buf, size_t size,
		     enum varsym_source *from);

/*
 * One 4- or 8-byte word of a caller's memory already copied to p, in the
 * machine's byte order; p may be unaligned (auxv, envp pointers).
 * __builtin_memcpy, not memcpy: the kernel's fortified memcpy adds checks
 * under W=1 only, and the module make check tests (built with W=1) must be
 * the very code DKMS builds (without).
 */
static inline unsigned long long varsym_word_at(const unsigned char *p,
						size_t size)
{
	unsigned long long v8;
	unsigned int v4;

	if (size == 4) {
		__builtin_memcpy(&v4, p, sizeof(v4));
		return v4;
	}
	__builtin_memcpy(&v8, p, sizeof(v8));
	return v8;
}

#endif /* VARSYM_INTERNAL_H */
