/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fs.h - the state of one varsymfs FUSE mount and its operations.
 */
#ifndef VSFUSE_FS_H
#define VSFUSE_FS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <time.h>

#include "vsfuse.h"

struct vsfuse {
	struct varsym_opts opts;
	int procfd;		/* /proc, for the callers' /proc/PID */
	bool serves_others;	/* allow_other: every user's processes */
	uid_t uid;		/* owner shown for the root directory */
	gid_t gid;
	struct timespec mounted;
};

extern const struct fuse_lowlevel_ops vsfuse_ops;

#endif /* VSFUSE_FS_H */
