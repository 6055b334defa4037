// SPDX-License-Identifier: GPL-2.0-only
/*
 * scope.c - a mount's system scope and its users' scopes, and the
 * built-in names (docs/SPEC.md section 4).
 *
 * A scope is an immutable block in the core's format.  A change makes a
 * new block under the mount's scope_lock and publishes it with
 * rcu_assign_pointer() (the system scope) or xa_store() (a user's, by
 * real kuid), then moves the mount's generation, which every cached
 * answer's key holds.  Readers never lock: the RCU walk reads the blocks
 * under the walk's own rcu_read_lock(); ref-walk, which may sleep while it
 * reads the caller's memory, takes a reference.  A resolution takes each
 * block once, so it sees one change whole or not at all.  The last
 * reference frees a block after a grace period.
 *
 * Blocks are charged to the memory cgroup of whoever set them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/personality.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include <linux/xattr.h>

#include "varsymfs.h"

struct varsymfs_scope {
	struct rcu_head rcu;
	refcount_t ref;		/* the mount's, and each ref-walk's */
	size_t len;
	char block[];
};

static void scope_put(struct varsymfs_scope *s)
{
	if (s && refcount_dec_and_test(&s->ref))
		kvfree_rcu(s, rcu);
}

/* A reference on the system scope, or on uid's scope: NULL if none. */
static struct varsymfs_scope *system_get(struct varsymfs_sb_info *sbi)
{
	struct varsymfs_scope *s;

	rcu_read_lock();
	do {
		s = rcu_dereference(sbi->system_scope);
	} while (s && !refcount_inc_not_zero(&s->ref));
	rcu_read_unlock();
	return s;
}

static struct varsymfs_scope *user_get(struct varsymfs_sb_info *sbi,
				       kuid_t uid)
{
	struct varsymfs_scope *s;

	rcu_read_lock();
	do {
		s = xa_load(&sbi->user_scopes, __kuid_val(uid));
	} while (s && !refcount_inc_not_zero(&s->ref));
	rcu_read_unlock();
	return s;
}

void varsymfs_scopes_hold(struct super_block *sb, bool rcu,
			  struct varsymfs_held *h)
{
	struct varsymfs_sb_info *sbi = varsymfs_sb(sb);
	/* a kernel thread is no user's: no user scope (docs/SPEC.md) */
	bool user = current->mm && !(current->flags & PF_KTHREAD);

	h->rcu = rcu;
	h->user = NULL;
	if (rcu) {			/* the walk holds rcu_read_lock() */
		h->system = rcu_dereference(sbi->system_scope);
		if (user)
			h->user = xa_load(&sbi->user_scopes,
					  __kuid_val(current_uid()));
	} else {
		h->system = system_get(sbi);
		if (user)
			h->user = user_get(sbi, current_uid());
	}
}

void varsymfs_scopes_release(struct varsymfs_held *h)
{
	if (!h->rcu) {
		scope_put(h->user);
		scope_put(h->system);
	}
}

void varsymfs_held_caller(const struct varsymfs_held *h,
			  struct varsym_caller *c)
{
	c->user_scope = h->user ? h->user->block : NULL;
	c->user_scope_len = h->user ? h->user->len : 0;
	c->system_scope = h->system ? h->system->block : NULL;
	c->system_scope_len = h->system ? h->system->len : 0;
}

void varsymfs_scopes_free(struct varsymfs_sb_info *sbi)
{
	struct varsymfs_scope *s;
	unsigned long uid;

	xa_for_each(&sbi->user_scopes, uid, s)
		scope_put(s);
	xa_destroy(&sbi->user_scopes);
	scope_put(rcu_dereference_protected(sbi->system_scope, true));
}

/*
 * A string of the current UTS namespace, read twice until both agree:
 * sethostname() writes it under uts_sem, which modules cannot take, and
 * a walk must never see half of one name and half of another.
 */
static bool uts_copy(char *dst, const char *src, size_t size)
{
	char again[__NEW_UTS_LEN + 1];
	int tries;

	for (tries = 0; tries < 4; tries++) {
		strscpy(dst, src, size);
		strscpy(again, src, sizeof(again));
		if (!strcmp(dst, again))
			return true;
	}
	return false;
}

void varsymfs_builtins(struct varsymfs_builtins *b)
{
	struct user_namespace *ns = current_user_ns();
	struct new_utsname *u = utsname();
	const char *machine = u->machine;

	b->core = (struct varsym_builtins){
		.uid = from_kuid_munged(ns, current_euid()),
		.gid = from_kgid_munged(ns, current_egid()),
		.ruid = from_kuid_munged(ns, current_uid()),
		.rgid = from_kgid_munged(ns, current_gid()),
	};
#ifdef VARSYMFS_COMPAT_MACHINE
	/* what uname(2) says to a linux32 process (override_architecture) */
	if (personality(current->personality) == PER_LINUX32)
		machine = VARSYMFS_COMPAT_MACHINE;
#endif
	if (uts_copy(b->hostname, u->nodename, sizeof(b->hostname)))
		b->core.hostname = b->hostname;
	if (uts_copy(b->machine, machine, sizeof(b->machine)))
		b->core.machine = b->machine;
	if (uts_copy(b->osrelease, u->release, sizeof(b->osrelease)))
		b->core.osrelease = b->osrelease;
}

/* ---- the extended attributes on the mount's root ---- */

static bool is_root(struct inode *inode)
{
	return inode->i_ino == VARSYMFS_ROOT_INO;
}

/* A held scope's block as getxattr(2) gives it; drops the reference. */
static int copy_out(struct varsymfs_scope *s, void *buffer, size_t size)
{
	int len = s ? s->len : 0;

	if (size && len > size)
		len = -ERANGE;
	else if (size && len)
		memcpy(buffer, s->block, len);
	scope_put(s);
	return len;
}

static int scope_get(const struct xattr_handler *handler,
		     struct dentry *unused, struct inode *inode,
		     const char *name, void *buffer, size_t size)
{
	struct varsymfs_sb_info *sbi = varsymfs_sb(inode->i_sb);
	bool system = handler->flags;
	struct varsymfs_scope *s;

	if (!is_root(inode))
		return -ENODATA;
	s = system ? system_get(sbi) : user_get(sbi, current_uid());
	return copy_out(s, buffer, size);
}

/* system.varsym_user.UID: for that user and the mount's administrator. */
static int scope_of_get(const struct xattr_handler *handler,
			struct dentry *unused, struct inode *inode,
			const char *name, void *buffer, size_t size)
{
	struct varsymfs_scope *s;
	unsigned int id;
	kuid_t uid;

	if (!is_root(inode))
		return -ENODATA;
	if (kstrtouint(name, 10, &id))
		return -EINVAL;
	uid = make_kuid(current_user_ns(), id);
	if (!uid_valid(uid))
		return -EINVAL;
	if (!uid_eq(uid, current_uid()) &&
	    !ns_capable(inode->i_sb->s_user_ns, CAP_SYS_ADMIN))
		return -EPERM;
	s = user_get(varsymfs_sb(inode->i_sb), uid);
	return copy_out(s, buffer, size);
}

/* Publishes new (NULL: none) for the system or uid; under scope_lock. */
static int publish(struct varsymfs_sb_info *sbi, bool system, kuid_t uid,
		   struct varsymfs_scope *new)
{
	struct varsymfs_scope *old;

	if (system) {
		old = rcu_replace_pointer(sbi->system_scope, new,
					  lockdep_is_held(&sbi->scope_lock));
	} else if (new) {
		old = xa_store(&sbi->user_scopes, __kuid_val(uid), new,
			       GFP_KERNEL_ACCOUNT);
		if (xa_is_err(old))
			return xa_err(old);
	} else {
		old = xa_erase(&sbi->user_scopes, __kuid_val(uid));
	}
	/* answers kept from here on hold the new generation (symlink.c) */
	atomic64_inc_return_release(&sbi->scope_gen);
	scope_put(old);
	return 0;
}

static int scope_set(const struct xattr_handler *handler,
		     struct varsymfs_idmap *idmap, struct dentry *unused,
		     struct inode *inode, const char *name,
		     const void *buffer, size_t size, int flags)
{
	struct varsymfs_sb_info *sbi = varsymfs_sb(inode->i_sb);
	bool system = handler->flags;
	kuid_t uid = current_uid();
	struct varsymfs_scope *old, *new = NULL;
	char msg[VARSYM_MSG_MAX];
	char *block = NULL;
	ssize_t len = 0;
	int err;

	if (!is_root(inode))
		return -EOPNOTSUPP;
	/* root of the user namespace that made the mount */
	if (system && !ns_capable(inode->i_sb->s_user_ns, CAP_SYS_ADMIN))
		return -EPERM;
	if (size > VARSYM_SCOPE_MAX)
		return -E2BIG;
	if (buffer) {
		block = kvmalloc(VARSYM_SCOPE_MAX, GFP_KERNEL_ACCOUNT);
		if (!block)
			return -ENOMEM;
	}
	mutex_lock(&sbi->scope_lock);
	if (buffer) {
		old = system ? rcu_dereference_protected(sbi->system_scope,
				lockdep_is_held(&sbi->scope_lock)) :
			       xa_load(&sbi->user_scopes, __kuid_val(uid));
		len = varsym_scope_edit(old ? old->block : "",
					old ? old->len : 0, buffer, size,
					block, VARSYM_SCOPE_MAX, msg,
					sizeof(msg));
		err = len;
		if (len < 0)
			goto out;
	}
	if (len) {
		err = -ENOMEM;
		new = kvmalloc(struct_size(new, block, len),
			       GFP_KERNEL_ACCOUNT);
		if (!new)
			goto out;
		refcount_set(&new->ref, 1);
		new->len = len;
		memcpy(new->block, block, len);
	}
	err = publish(sbi, system, uid, new);
	if (err)
		kvfree(new);
out:
	mutex_unlock(&sbi->scope_lock);
	kvfree(block);
	return err < 0 ? err : 0;
}

static bool scope_list(struct dentry *dentry)
{
	return is_root(d_inode(dentry));
}

const struct xattr_handler varsymfs_user_scope_xattr = {
	.name = VARSYM_XATTR_USER_SCOPE,
	.list = scope_list,
	.get = scope_get,
	.set = scope_set,
};

const struct xattr_handler varsymfs_system_scope_xattr = {
	.name = VARSYM_XATTR_SYSTEM_SCOPE,
	.flags = 1,
	.list = scope_list,
	.get = scope_get,
	.set = scope_set,
};

const struct xattr_handler varsymfs_user_scope_of_xattr = {
	.prefix = VARSYM_XATTR_USER_SCOPE_OF,
	.get = scope_of_get,
};
