/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * varsym_proc.h - a process seen through /proc (procfs.c): user space
 * only, for the FUSE program and the varsym command.
 */
#ifndef VARSYM_PROC_H
#define VARSYM_PROC_H

#include <sys/types.h>

#include "varsym_core.h"

/* Reads a small file of /proc/TID (dirfd) whole, NUL-terminated: -errno. */
ssize_t varsym_proc_read(int dirfd, const char *name, char *buf,
			 size_t size);
/* The program's word size (4 or 8), or 0 when it cannot be told. */
unsigned int varsym_proc_word_size(int dirfd);
/* AT_SECURE from its auxv in word-size words: 1, 0, or -1 (unknown). */
int varsym_proc_secure(int dirfd, unsigned int word);

/* Real and effective ids, as the reader's user namespace sees them. */
struct varsym_proc_ids {
	unsigned int ruid, euid, rgid, egid;
};

/* From /proc/TID/status: 0, or -1. */
int varsym_proc_ids(int dirfd, struct varsym_proc_ids *ids);

/* The core's built-ins for a process, with room for their text. */
struct varsym_proc_builtins {
	struct varsym_builtins core;
	char hostname[65], machine[65], osrelease[65];
};

/*
 * Fills b: ids; the host name of its UTS namespace (unset where the reader
 * may not join it: only root may); uname -m under its personality
 * (linux32: i686), read as the default where the reader may not trace it;
 * the release.
 */
void varsym_proc_builtins(int dirfd, const struct varsym_proc_ids *ids,
			  struct varsym_proc_builtins *b);

#endif /* VARSYM_PROC_H */
