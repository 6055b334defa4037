/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fs.h - the state of one varsymfs FUSE mount and its operations.
 */
#ifndef VSFUSE_FS_H
#define VSFUSE_FS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <time.h>

#include "cache.h"
#include "vsfuse.h"

struct vsfuse_node;

struct vsfuse {
	struct varsym_opts opts;
	char options_text[3 * VARSYM_PATH_MAX];	/* as mountinfo shows them */
	int procfd;		/* /proc, for the callers' /proc/PID */
	bool serves_others;	/* allow_other: every user's processes */
	struct vsfuse_cache *cache;	/* NULL: read /proc every time */
	/* for benchmarks: --naive, --constant=TARGET (see main.c) */
	bool naive;
	const char *constant;

	pthread_rwlock_t lock;	/* the fields below */
	struct vsfuse_node *nodes;	/* the directory's links */
	struct vsfuse_node *orphans;	/* unlinked, still known to the kernel */
	uint64_t next_ino;
	mode_t root_mode;
	uid_t root_uid;
	gid_t root_gid;
	struct timespec root_atime, root_mtime, root_ctime;
};

/* uid, gid: the mounting user, owner unless uid=/gid= say otherwise. */
int vsfuse_fs_init(struct vsfuse *fs, uid_t uid, gid_t gid);
void vsfuse_fs_destroy(struct vsfuse *fs);

extern const struct fuse_lowlevel_ops vsfuse_ops;

#endif /* VSFUSE_FS_H */
