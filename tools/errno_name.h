/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * errno_name.h - "ENOENT" for ENOENT, as varsym and the test probe print
 * errors, so that the two always spell them alike.
 */
#ifndef VARSYM_ERRNO_NAME_H
#define VARSYM_ERRNO_NAME_H

#include <stdio.h>
#include <string.h>

/* glibc knows every name (strerrorname_np, 2.32); a number otherwise. */
static inline const char *errno_name(int e)
{
	static char buf[16];
	const char *name = strerrorname_np(e);

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

#endif
