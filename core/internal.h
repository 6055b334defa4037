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

#endif /* VARSYM_INTERNAL_H */
