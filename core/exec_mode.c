// SPDX-License-Identifier: GPL-2.0-only
/*
 * exec_mode.c - the one table of how a FUSE mount tells the walks inside
 * an execve apart (exec_mode.h): the daemon's words at mount and on the
 * xattr, and `varsym explain`'s, come from here.
 */
#include <stdio.h>
#include <string.h>

#include "exec_mode.h"

const struct varsym_exec_mode_text varsym_exec_modes[VARSYM_EXECMODES] = {
	[VARSYM_EXECMODE_HOOKS] = {
		"exec hooks", "the execve rule, privileged execs secure",
		NULL, NULL,
	},
	[VARSYM_EXECMODE_SYSCALL_ONLY] = {
		"syscall only", "every walk inside an execve secure",
		"programs run through this mount get the default's target, as a setuid program would, whatever the caller's environment says",
		"programs run through this mount come from its fallback directories only, never from the caller's PATH",
	},
	[VARSYM_EXECMODE_OWNER_ONLY] = {
		"owner only", "every walk follows the caller", NULL, NULL,
	},
};

int varsym_exec_mode_say(char *buf, size_t size, enum varsym_exec_mode mode,
			 const char *why)
{
	const struct varsym_exec_mode_text *t = &varsym_exec_modes[mode];

	if (why)
		return snprintf(buf, size, "%s: %s (%s)", t->key, t->what, why);
	return snprintf(buf, size, "%s: %s", t->key, t->what);
}

int varsym_exec_mode_of(const char *said)
{
	size_t len;
	int m;

	for (m = 0; m < VARSYM_EXECMODES; m++) {
		len = strlen(varsym_exec_modes[m].key);
		if (!strncmp(said, varsym_exec_modes[m].key, len) &&
		    said[len] == ':')
			return m;
	}
	return -1;
}
