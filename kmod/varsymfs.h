/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * varsymfs.h - the kernel implementation of varsymfs: shared declarations.
 */
#ifndef VARSYMFS_H
#define VARSYMFS_H

#include <linux/fs.h>

#include "compat.h"
#include "varsym.h"

#define VARSYMFS_MAGIC 0x76617273	/* "vars" */
#define VARSYMFS_ROOT_INO 1
#define VARSYMFS_SEED_INO 2
#define VARSYMFS_SEED_NAME "resolve"

/* One mount. */
struct varsymfs_sb_info {
	u64 seed_id;		/* the seed link's id in the answer cache */
	struct varsym_opts opts;
};

/*
 * A template link's text, in i_private.  It never changes, and it is freed
 * with the inode, after an RCU grace period (->free_inode), so an RCU walk
 * may read it.
 */
struct varsymfs_template {
	u64 id;			/* in the answer cache */
	size_t len;
	char text[];
};

static inline const struct varsymfs_template *
varsymfs_template_of(const struct inode *inode)
{
	return inode->i_private;
}

static inline struct varsymfs_sb_info *varsymfs_sb(struct super_block *sb)
{
	return sb->s_fs_info;
}

/*
 * Follow statistics, for benchmarks: answers given in the RCU walk, walks
 * sent back to ref-walk with -ECHILD, answers given in ref-walk.
 */
enum varsymfs_stat {
	VARSYMFS_STAT_RCU,
	VARSYMFS_STAT_ECHILD,
	VARSYMFS_STAT_REF,
	VARSYMFS_STAT_COUNT
};

void varsymfs_count(enum varsymfs_stat what);

/* symlink.c */
extern const struct inode_operations varsymfs_link_iops;
extern const struct xattr_handler *varsymfs_xattr_handlers[];

/* caller.c: the process a link is resolved for */
struct varsymfs_caller {
	struct varsym_caller core;
	bool rcu;			/* in the RCU walk: never sleep */
	bool has_env;			/* false: every variable is unset */
	const char __user *const __user *envp;	/* execve's, or NULL */
	unsigned long env_start, env_end;	/* else this area */
};

int varsymfs_caller_init(struct varsymfs_caller *c, bool rcu);
bool varsymfs_caller_keeps_answer(void);

/* cache.c: each process's answers, once per execve */
struct varsymfs_cache_key {
	u64 link;
	u64 start_time;
	u64 exec_id;
	unsigned long env_start, env_end;
	pid_t tgid;
};

u64 varsymfs_new_link_id(void);
void varsymfs_cache_key(struct varsymfs_cache_key *key, u64 link);
const char *varsymfs_cache_get(const struct varsymfs_cache_key *key,
			       struct delayed_call *done);
void varsymfs_cache_put(const struct varsymfs_cache_key *key,
			const char *target, int err, gfp_t gfp);
void varsymfs_cache_exit(void);

/* exec.c: what execve(2) is loading */
int varsymfs_exec_init(void);
void varsymfs_exec_exit(void);
bool varsymfs_exec_loader_privileged(void);

#endif /* VARSYMFS_H */
