/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * compat.h - every difference between the kernels varsymfs builds for.
 *
 * Tested on the Debian kernels of kernels.list, 6.1 to 7.3.  Nothing outside
 * this file tests LINUX_VERSION_CODE, and each test names the release that
 * made the change.
 */
#ifndef VARSYMFS_COMPAT_H
#define VARSYMFS_COMPAT_H

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/version.h>

/*
 * What uname -m says to a linux32 process: the architecture's
 * COMPAT_UTS_MACHINE (x86: i686, arm64: armv8l), where it has compat.
 */
#if defined(CONFIG_COMPAT) && defined(COMPAT_UTS_MACHINE)
#define VARSYMFS_COMPAT_MACHINE COMPAT_UTS_MACHINE
#endif

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

/* The idmap of the mount a file was opened on, for vfs_getxattr(). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define varsymfs_file_idmap file_mnt_idmap
#else
#define varsymfs_file_idmap file_mnt_user_ns
#endif

/*
 * The first argument of a function an ftrace_ops callback is called for
 * (exec.c).  6.12 has ftrace_regs_get_argument() on every architecture;
 * before it, the registers are read whole, and only where the ops asks
 * for them to be saved (FTRACE_OPS_FL_SAVE_REGS, which x86 offers).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define VARSYMFS_FTRACE_REGS 0
static inline unsigned long varsymfs_ftrace_arg0(struct ftrace_regs *fregs)
{
	return ftrace_regs_get_argument(fregs, 0);
}
#else
#define VARSYMFS_FTRACE_REGS FTRACE_OPS_FL_SAVE_REGS
static inline unsigned long varsymfs_ftrace_arg0(struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	return regs ? regs_get_kernel_argument(regs, 0) : 0;
}
#endif

/* 6.6 gave generic_fillattr() the request mask. */
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

/* A directory's mtime and ctime, after a change to its entries (6.7 too). */
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

/* 6.7 ("xattr: make the xattr array itself const") made s_xattr const. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define VARSYMFS_XATTR_HANDLERS const struct xattr_handler * const
#else
#define VARSYMFS_XATTR_HANDLERS const struct xattr_handler *
#endif

/*
 * 6.8 ("execve: open the executable file before doing anything else")
 * moved the open of the program before current->in_execve is set; before
 * it, the program's own path is walked with in_execve already set.
 */
#define VARSYMFS_PROGRAM_OPENED_IN_EXECVE \
	(LINUX_VERSION_CODE < KERNEL_VERSION(6, 8, 0))

/* 6.18 renamed generic_delete_inode() inode_just_drop(). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
#define varsymfs_drop_inode inode_just_drop
#else
#define varsymfs_drop_inode generic_delete_inode
#endif

/*
 * 6.19 pins the dentries of ramfs-like trees with d_make_persistent(),
 * which simple_unlink() and simple_rename() undo (they WARN on a dentry
 * pinned otherwise) and kill_anon_super() drops; kill_litter_super() is gone.
 *
 * varsymfs_pin() makes @dentry positive and pins it until unlink, rename
 * over it, or umount.  It takes a reference of its own: the caller's, if
 * any, is still the caller's to drop.  varsymfs_kill_tree() is kill_sb's
 * undoing of every pin.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
static inline void varsymfs_pin(struct dentry *dentry, struct inode *inode)
{
	d_make_persistent(dentry, inode);
}

static inline void varsymfs_kill_tree(struct super_block *sb)
{
	kill_anon_super(sb);
}
#else
static inline void varsymfs_pin(struct dentry *dentry, struct inode *inode)
{
	if (d_unhashed(dentry))
		d_add(dentry, inode);
	else
		d_instantiate(dentry, inode);
	dget(dentry);
}

static inline void varsymfs_kill_tree(struct super_block *sb)
{
	kill_litter_super(sb);
}
#endif

/*
 * 7.3 dropped ->create()'s bool excl.  A ->create() ends its parameters so:
 *	static int f(..., struct dentry *dentry, VARSYMFS_CREATE_MODE)
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
#define VARSYMFS_CREATE_MODE umode_t mode
#else
#define VARSYMFS_CREATE_MODE umode_t mode, bool excl
#endif

#endif /* VARSYMFS_COMPAT_H */
