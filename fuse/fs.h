/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fs.h - the state of one varsymfs FUSE mount and its operations: fs.c
 * (the directory, the table), readlink.c, xattr.c.
 */
#ifndef VSFUSE_FS_H
#define VSFUSE_FS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "cache.h"
#include "dir.h"
#include "pool.h"
#include "caller.h"
#include "reader.h"
#include "scopes.h"

struct vsfuse {
	struct varsym_opts opts;
	char options_text[VARSYM_OPTS_TEXT_MAX];	/* as mountinfo shows them */
	int procfd;		/* /proc, for the callers' /proc/TID */
	bool serves_others;	/* allow_other: every user's processes */
	struct vsfuse_exec_hooks *hooks;	/* the BPF program, or NULL */
	char exec_mode[256];	/* how execve's walks are told apart */
	struct vsfuse_cache *cache;	/* NULL: compute every time */
	struct vsfuse_pool *pool;	/* when serves_others */
	struct vsfuse_dir dir;
	struct vsfuse_scopes scopes;
	uid_t admin;		/* may set the system scope, with root */
#ifdef VSFUSE_BENCH
	/* the benchmarks' build only: --naive, --constant=TARGET (main.c) */
	bool naive;
	const char *constant;
#endif
};

/*
 * Once opts and serves_others are set; uid, gid: the mounting user, the
 * directory's owner unless uid=/gid= say otherwise.  0 or -1.
 */
int vsfuse_fs_init(struct vsfuse *fs, uid_t uid, gid_t gid);
/* After the session loop, before the session goes: answers what is pending. */
void vsfuse_fs_finish(struct vsfuse *fs);
void vsfuse_fs_destroy(struct vsfuse *fs);

extern const struct fuse_lowlevel_ops vsfuse_ops;

/* All errors leave through here: the core speaks -errno. */
static inline void vsfuse_reply_error(fuse_req_t req, long neg_errno)
{
	fuse_reply_err(req, (int)-neg_errno);
}

/* A request the pool serves: a link's target, or a search listing. */
struct vsfuse_fs_job {
	struct vsfuse_job job;		/* the pool's part: owner */
	void (*serve)(struct vsfuse *fs, struct vsfuse_fs_job *j); /* replies */
	fuse_req_t req;
	pid_t tid;
};

/* readlink.c */
void vsfuse_readlink(fuse_req_t req, fuse_ino_t ino);
/* The calling thread's reader, if it served requests itself, goes. */
void vsfuse_readlink_finish(void);

/* xattr.c */
void vsfuse_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		     size_t size);
void vsfuse_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void vsfuse_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		     const char *value, size_t size, int flags);
void vsfuse_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif /* VSFUSE_FS_H */
