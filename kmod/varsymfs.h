/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * varsymfs.h - the kernel implementation of varsymfs: shared declarations.
 */
#ifndef VARSYMFS_H
#define VARSYMFS_H

#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/utsname.h>
#include <linux/xarray.h>

#include "compat.h"
#include "varsym_core.h"

#define VARSYMFS_MAGIC 0x76617273	/* "vars" */
#define VARSYMFS_ROOT_INO 1
#define VARSYMFS_SEED_INO 2

/*
 * One mount.  An RCU walk may still read it after a lazy umount, so it is
 * freed after a grace period (varsymfs_kill_sb).
 */
struct varsymfs_sb_info {
	struct rcu_head rcu;
	u64 seed_id;		/* the seed link's id in the answer cache */
	atomic_t links;		/* template links alive, up to opts.nr_links */
	struct varsym_opts opts;
	/* the scopes (scope.c): changed under scope_lock, read under RCU */
	struct mutex scope_lock;
	struct varsymfs_scope __rcu *system_scope;
	struct xarray user_scopes;	/* by real kuid */
	atomic64_t scope_gen;		/* moved by every change */
	bool exec_attached;		/* counted by varsymfs_exec_attach() */
};

/*
 * A template link's text, in i_private.  It never changes, and it is freed
 * with the inode, after an RCU grace period (->free_inode), so an RCU walk
 * may read it.
 */
struct varsymfs_template {
	u64 id;			/* in the answer cache */
	bool builtins;		/* it names a built-in: never cached */
	size_t len;
	char text[];
};

/* A search-mode link's name, in i_private, freed as a template is. */
struct varsymfs_search_name {
	u64 id;			/* in the answer cache */
	size_t len;
	char name[];
};

static inline struct varsymfs_sb_info *varsymfs_sb(struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline bool varsymfs_search_mode(struct super_block *sb)
{
	return varsym_opts_search_mode(&varsymfs_sb(sb)->opts);
}

/* A template link's template; NULL for the seed link and search links. */
static inline const struct varsymfs_template *
varsymfs_template_of(const struct inode *inode)
{
	return varsymfs_search_mode(inode->i_sb) ? NULL : inode->i_private;
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

/* super.c */
struct inode *varsymfs_new_inode(struct super_block *sb, umode_t mode,
				 unsigned long ino);

/* search.c: search mode */
extern const struct inode_operations varsymfs_search_dir_iops;
extern const struct file_operations varsymfs_search_dir_fops;
bool varsymfs_searching(void);
ssize_t varsymfs_search(struct inode *inode, const struct varsym_caller *c,
			char *target);

/* symlink.c */
extern const struct inode_operations varsymfs_link_iops;
extern VARSYMFS_XATTR_HANDLERS varsymfs_xattr_handlers[];

/* scope.c: the scopes a resolution holds, and the built-ins */
struct varsymfs_scope;

struct varsymfs_held {
	struct varsymfs_scope *user, *system;
	bool rcu;		/* no references: the walk's RCU read lock */
};

struct varsymfs_builtins {
	struct varsym_builtins core;
	char hostname[__NEW_UTS_LEN + 1], machine[__NEW_UTS_LEN + 1];
	char osrelease[__NEW_UTS_LEN + 1];
};

void varsymfs_scopes_hold(struct super_block *sb, bool rcu,
			  struct varsymfs_held *h);
void varsymfs_scopes_release(struct varsymfs_held *h);
void varsymfs_held_caller(const struct varsymfs_held *h,
			  struct varsym_caller *c);
void varsymfs_scopes_free(struct varsymfs_sb_info *sbi);
void varsymfs_builtins(struct varsymfs_builtins *b);
extern const struct xattr_handler varsymfs_user_scope_xattr;
extern const struct xattr_handler varsymfs_system_scope_xattr;
extern const struct xattr_handler varsymfs_user_scope_of_xattr;

/* caller.c: the process a link is resolved for */

/* execve's envp array in the caller's memory. */
struct varsymfs_envp {
	u64 ptr;
	unsigned int ptr_size;	/* 4 for a 32-bit ABI (ia32, x32), or 8 */
};

struct varsymfs_caller {
	struct varsym_caller core;
	bool rcu;			/* in the RCU walk: never sleep */
	size_t rcu_budget;		/* bytes the RCU walk may still copy */
	struct varsym_walk walk;	/* where its variables come from */
	struct varsymfs_envp envp;
	unsigned long env_start, env_end;
};

int varsymfs_caller_init(struct varsymfs_caller *c, bool rcu);
bool varsymfs_mm_secure(struct mm_struct *mm);
bool varsymfs_caller_keeps_answer(void);

/*
 * cache.c: each process's answers, once per execve.  A key is hashed and
 * compared as bytes (jhash, memcmp): all u64, so that it has no padding,
 * whose bytes a copy of the struct need not keep, on any architecture.
 */
struct varsymfs_cache_key {
	u64 link;
	u64 start_time;
	u64 exec_id;
	u64 env_start, env_end;
	u64 tgid;
	u64 scope_gen;		/* the mount's scopes, as they were */
	u64 ruid;		/* whose user scope */
	/*
	 * A search's answer also depends on who looks, and where: the
	 * credentials (the answer holds a reference, so the address is not
	 * reused while it lives), the mount namespace and the root, as
	 * addresses; 0 for other links.
	 */
	u64 cred, mnt_ns, root_mnt, root_dentry;
};

static_assert(sizeof(struct varsymfs_cache_key) == 12 * sizeof(u64));

u64 varsymfs_new_link_id(void);
void varsymfs_cache_key(struct varsymfs_cache_key *key, u64 link,
			u64 scope_gen, bool search);
const char *varsymfs_cache_get(const struct varsymfs_cache_key *key,
			       struct delayed_call *done);
void varsymfs_cache_put(const struct varsymfs_cache_key *key,
			const char *target, int err, gfp_t gfp);
void varsymfs_cache_init(void);
void varsymfs_cache_exit(void);

/* exec.c: what execve(2) is loading */
void varsymfs_exec_attach(void);
void varsymfs_exec_detach(void);
void varsymfs_exec_exit(void);
enum varsym_exec_phase varsymfs_exec_phase(void);
int varsymfs_exec_follow_caller(bool rcu);

#endif /* VARSYMFS_H */
