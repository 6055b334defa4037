/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exec_mode.h - how a FUSE mount tells the walks inside an execve apart,
 * and what programs run through it get for that (exec_mode.c): user space
 * only.  The daemon says it once at mount and on its links'
 * system.varsym_exec, "KEY: WHAT" or "KEY: WHAT (WHY)"; `varsym explain`
 * reads the key back and says the same consequence from the same table.
 * The module has one way, its exec hooks.
 */
#ifndef VARSYM_EXEC_MODE_H
#define VARSYM_EXEC_MODE_H

#include <stddef.h>

enum varsym_exec_mode {
	VARSYM_EXECMODE_HOOKS,		/* the BPF program: the execve rule */
	VARSYM_EXECMODE_SYSCALL_ONLY,	/* /proc: walks in an execve secure */
	VARSYM_EXECMODE_OWNER_ONLY,	/* serves its owner: all follow */
	VARSYM_EXECMODES
};

struct varsym_exec_mode_text {
	const char *key;	/* before the colon: the mode's name */
	const char *what;	/* after it */
	/*
	 * What a program run through such a mount gets, for a link's mount
	 * and for a search mount; NULL where it gets what it asked for.
	 */
	const char *runs;
	const char *runs_search;
};

extern const struct varsym_exec_mode_text
	varsym_exec_modes[VARSYM_EXECMODES];

/* "KEY: WHAT", or "KEY: WHAT (WHY)" with a why; as snprintf returns. */
int varsym_exec_mode_say(char *buf, size_t size, enum varsym_exec_mode mode,
			 const char *why);
/* The mode a system.varsym_exec value names, or -1. */
int varsym_exec_mode_of(const char *said);

#endif
