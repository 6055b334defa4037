// SPDX-License-Identifier: GPL-2.0-only
/*
 * symlink.c - the variant link: its target, computed for each walk.
 *
 * Modelled on /proc/self (fs/proc/self.c): ->get_link computes the target
 * from current every time, allocates without sleeping in the RCU walk (NULL
 * dentry), and hands the buffer to the VFS through the delayed call.  There
 * is no ->readlink and no i_link: the VFS would serve a cached i_link to
 * every process alike.
 */
#include <linux/namei.h>
#include <linux/slab.h>

#include "varsymfs.h"

/**
 * varsymfs_resolve - the target of a link for current
 * @inode: the link
 * @rcu: true in the RCU walk: neither sleep nor fault
 * @gfp: allocation flags matching @rcu
 *
 * Return: a kmalloc'ed NUL-terminated target, or an ERR_PTR: -ECHILD when
 * the RCU walk cannot answer, or the errno of SPEC section 5.
 */
static char *varsymfs_resolve(struct inode *inode, bool rcu, gfp_t gfp)
{
	struct varsymfs_sb_info *sbi = varsymfs_sb(inode->i_sb);
	struct varsymfs_caller c;
	char *target;
	ssize_t n;

	n = varsymfs_caller_init(&c, rcu);
	if (n)
		return ERR_PTR(n);
	target = kmalloc(PATH_MAX, gfp);
	if (!target)
		return ERR_PTR(rcu ? -ECHILD : -ENOMEM);
	n = varsym_resolve_seed(&sbi->opts, &c.core, target, PATH_MAX);
	if (n < 0) {
		kfree(target);
		return ERR_PTR(n);
	}
	return target;
}

static const char *varsymfs_get_link(struct dentry *dentry,
				     struct inode *inode,
				     struct delayed_call *done)
{
	bool rcu = !dentry;
	char *target;

	target = varsymfs_resolve(inode, rcu, rcu ? GFP_NOWAIT | __GFP_NOWARN :
					      GFP_KERNEL);
	if (IS_ERR(target)) {
		if (PTR_ERR(target) == -ECHILD)
			varsymfs_count(VARSYMFS_STAT_ECHILD);
		return target;
	}
	varsymfs_count(rcu ? VARSYMFS_STAT_RCU : VARSYMFS_STAT_REF);
	set_delayed_call(done, kfree_link, target);
	return target;
}

/* st_size is the length of the caller's own target (0 if none). */
static int varsymfs_link_getattr(struct varsymfs_idmap *idmap,
				 const struct path *path, struct kstat *stat,
				 u32 request_mask, unsigned int query_flags)
{
	struct inode *inode = d_inode(path->dentry);
	char *target;

	varsymfs_fillattr(idmap, request_mask, inode, stat);
	target = varsymfs_resolve(inode, false, GFP_KERNEL);
	stat->size = IS_ERR(target) ? 0 : strlen(target);
	if (!IS_ERR(target))
		kfree(target);
	return 0;
}

static int varsymfs_link_setattr(struct varsymfs_idmap *idmap,
				 struct dentry *dentry, struct iattr *attr)
{
	return -EPERM;
}

const struct inode_operations varsymfs_seed_link_iops = {
	.get_link = varsymfs_get_link,
	.getattr = varsymfs_link_getattr,
	.setattr = varsymfs_link_setattr,
};
