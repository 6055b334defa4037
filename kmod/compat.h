/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * compat.h - every difference between the kernels varsymfs builds for.
 *
 * Tested on Debian's 6.1 and 6.12 kernels.  Nothing outside this file tests
 * LINUX_VERSION_CODE.
 */
#ifndef VARSYMFS_COMPAT_H
#define VARSYMFS_COMPAT_H

#include <linux/fs.h>
#include <linux/version.h>

/*
 * 6.3 replaced the user namespace passed to inode operations with a mount
 * idmap.  varsymfs ignores both, so one name stands for either.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define varsymfs_idmap mnt_idmap
#define VARSYMFS_NOP_IDMAP (&nop_mnt_idmap)
#else
#define varsymfs_idmap user_namespace
#define VARSYMFS_NOP_IDMAP (&init_user_ns)
#endif

static inline void varsymfs_fillattr(struct varsymfs_idmap *idmap,
				     u32 request_mask, struct inode *inode,
				     struct kstat *stat)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	generic_fillattr(idmap, request_mask, inode, stat);
#else
	generic_fillattr(idmap, inode, stat);
#endif
}

/* 6.7 hid the inode's time fields behind accessors. */
static inline void varsymfs_inode_init_ts(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	simple_inode_init_ts(inode);
#else
	struct timespec64 now = current_time(inode);

	inode->i_atime = now;
	inode->i_mtime = now;
	inode->i_ctime = now;
#endif
}

/* A directory's mtime and ctime, after a change to its entries. */
static inline void varsymfs_dir_touch(struct inode *dir)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inode_set_mtime_to_ts(dir, inode_set_ctime_current(dir));
#else
	struct timespec64 now = current_time(dir);

	dir->i_mtime = now;
	dir->i_ctime = now;
#endif
}

/*
 * 6.8 ("execve: open the executable file before doing anything else")
 * moved the open of the program before current->in_execve is set; before
 * it, the program's own path is walked with in_execve already set.
 */
#define VARSYMFS_PROGRAM_OPENED_IN_EXECVE \
	(LINUX_VERSION_CODE < KERNEL_VERSION(6, 8, 0))

#endif /* VARSYMFS_COMPAT_H */
