// SPDX-License-Identifier: GPL-2.0-only
/*
 * symlink.c - the variant link: its target, computed for each walk.
 *
 * A seed-mode link expands the mount's variable, a template-mode link its
 * own template (i_private); both through the shared core.
 * Modelled on /proc/self (fs/proc/self.c): ->get_link computes the target
 * from current every time, allocates without sleeping in the RCU walk (NULL
 * dentry), and hands the buffer to the VFS through the delayed call.  There
 * is no ->readlink and no i_link: the VFS would serve a cached i_link to
 * every process alike.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/xattr.h>

#include "varsymfs.h"

/* Computes the target through the core; -errno as docs/SPEC.md section 6 says. */
static ssize_t compute(struct inode *inode, struct varsymfs_caller *c,
		       char *target)
{
	const struct varsymfs_template *t = varsymfs_template_of(inode);

	if (varsymfs_search_mode(inode->i_sb))
		return varsymfs_search(inode, &c->core, target);
	return varsym_link_target(&varsymfs_sb(inode->i_sb)->opts,
				  t ? t->text : NULL, t ? t->len : 0, &c->core,
				  target, PATH_MAX);
}

/* exec.c has the last word: the exec's files' capabilities (RCU: -ECHILD). */
static int follow_caller(void *ctx)
{
	const struct varsymfs_caller *c = ctx;

	return varsymfs_exec_follow_caller(c->rcu);
}

/*
 * An interpreter walk of an execve that gains no privilege by its files'
 * modes: the core's rule (varsym_interp_answer()), against the secure
 * answer computed here.
 */
static ssize_t interp_answer(struct inode *inode, struct varsymfs_caller *c,
			     char *target, ssize_t n, gfp_t gfp)
{
	struct varsymfs_caller secure = {
		.core = {
			.secure = true,
			.system_scope = c->core.system_scope,
			.system_scope_len = c->core.system_scope_len,
			.builtins = c->core.builtins,
		},
	};
	ssize_t m;
	char *alt;

	if (!varsym_is_answer(n))	/* -EINTR, -ECHILD: nothing chosen */
		return n;
	alt = kmalloc(PATH_MAX, gfp);
	if (!alt)
		return c->rcu ? -ECHILD : -ENOMEM;
	m = compute(inode, &secure, alt);
	n = varsym_interp_answer(target, n, alt, m, follow_caller, c);
	kfree(alt);
	return n;
}

static u64 link_id(struct inode *inode)
{
	const struct varsymfs_template *t = varsymfs_template_of(inode);
	const struct varsymfs_search_name *n = inode->i_private;

	if (varsymfs_search_mode(inode->i_sb))
		return n->id;
	return t ? t->id : varsymfs_sb(inode->i_sb)->seed_id;
}

/* A built-in may change without an execve (setuid(2), sethostname(2)). */
static bool names_builtin(struct inode *inode)
{
	const struct varsymfs_template *t = varsymfs_template_of(inode);

	return t ? t->builtins :
		   varsym_link_reads_builtin(&varsymfs_sb(inode->i_sb)->opts,
					     NULL, 0);
}

/**
 * varsymfs_resolve - the target of a link for current
 * @inode: the link
 * @rcu: true in the RCU walk: neither sleep nor fault
 * @done: set to release the target once the caller is done with it
 *
 * A cached answer is handed out as it is, with a reference: the hot path
 * neither allocates nor copies.  A computed one is a fresh kmalloc'ed copy.
 *
 * Return: the NUL-terminated target, or an ERR_PTR: -ECHILD when the RCU
 * walk cannot answer, -EINTR for a caller killed while its environment
 * was read, or the errno of docs/SPEC.md section 6.
 */
static const char *varsymfs_resolve(struct inode *inode, bool rcu,
				    struct delayed_call *done)
{
	/* charged to the caller's memory cgroup: users make these */
	gfp_t gfp = rcu ? GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN :
			  GFP_KERNEL_ACCOUNT;
	struct varsymfs_sb_info *sbi = varsymfs_sb(inode->i_sb);
	bool search = varsymfs_search_mode(inode->i_sb);
	bool builtins = !search && names_builtin(inode);
	bool cacheable = !builtins && varsymfs_caller_keeps_answer();
	struct varsymfs_builtins *ids = NULL;
	struct varsymfs_cache_key key;
	struct varsymfs_held held;
	struct varsymfs_caller c;
	unsigned int used = 0;
	const char *cached;
	char *target;
	ssize_t n;

	/*
	 * A search inside a search (a PATH back into a search mount) is
	 * "not here" to the outer one, whatever the cache holds.
	 */
	if (search && varsymfs_searching())
		return ERR_PTR(-ELOOP);
	/* the hot path: no lock, no look at the environment */
	if (cacheable) {
		/* read before the scopes: a change after it is a miss */
		varsymfs_cache_key(&key, link_id(inode),
				   atomic64_read_acquire(&sbi->scope_gen),
				   search);
		cached = varsymfs_cache_get(&key, done);
		if (cached)
			return cached;
	}
	/* a search walks other paths: it sleeps */
	if (search && rcu)
		return ERR_PTR(-ECHILD);
	n = varsymfs_caller_init(&c, rcu);
	if (n)
		return ERR_PTR(n);
	target = kmalloc(PATH_MAX, gfp);
	if (!target)
		return ERR_PTR(rcu ? -ECHILD : -ENOMEM);
	if (builtins) {
		ids = kmalloc(sizeof(*ids), gfp);
		if (!ids) {
			kfree(target);
			return ERR_PTR(rcu ? -ECHILD : -ENOMEM);
		}
		varsymfs_builtins(ids);
		c.core.builtins = &ids->core;
	}
	varsymfs_scopes_hold(inode->i_sb, rcu, &held);
	varsymfs_held_caller(&held, &c.core);
	c.core.used = &used;
	n = compute(inode, &c, target);
	if (c.walk.check_interp)
		n = interp_answer(inode, &c, target, n, gfp);
	varsymfs_scopes_release(&held);
	kfree(ids);
	/* the key holds the real uid, and a search's who and where */
	if (cacheable && varsym_may_keep(n, used, true, search, true))
		varsymfs_cache_put(&key, n >= 0 ? target : NULL,
				   n >= 0 ? 0 : n, gfp);
	if (n < 0) {
		kfree(target);
		return ERR_PTR(n);
	}
	set_delayed_call(done, kfree_link, target);
	return target;
}

static const char *varsymfs_get_link(struct dentry *dentry,
				     struct inode *inode,
				     struct delayed_call *done)
{
	bool rcu = !dentry;
	const char *target = varsymfs_resolve(inode, rcu, done);

	if (IS_ERR(target)) {
		if (PTR_ERR(target) == -ECHILD)
			varsymfs_count(VARSYMFS_STAT_ECHILD);
		return target;
	}
	varsymfs_count(rcu ? VARSYMFS_STAT_RCU : VARSYMFS_STAT_REF);
	return target;
}

/* st_size is the length of the caller's own target (0 if none). */
static int varsymfs_link_getattr(struct varsymfs_idmap *idmap,
				 const struct path *path, struct kstat *stat,
				 u32 request_mask, unsigned int query_flags)
{
	struct inode *inode = d_inode(path->dentry);
	DEFINE_DELAYED_CALL(done);
	const char *target;

	varsymfs_fillattr(idmap, request_mask, inode, stat);
	target = varsymfs_resolve(inode, false, &done);
	stat->size = IS_ERR(target) ? 0 : strlen(target);
	do_delayed_call(&done);
	return 0;
}

/* Seed and search mode change nothing; template links are as on tmpfs. */
static int varsymfs_link_setattr(struct varsymfs_idmap *idmap,
				 struct dentry *dentry, struct iattr *attr)
{
	if (!varsymfs_template_of(d_inode(dentry)))
		return -EPERM;
	return simple_setattr(idmap, dentry, attr);
}

const struct inode_operations varsymfs_link_iops = {
	.get_link = varsymfs_get_link,
	.getattr = varsymfs_link_getattr,
	.setattr = varsymfs_link_setattr,
	.listxattr = generic_listxattr,
};

/*
 * The raw text behind a link, for `varsym show` and any user: a template
 * link's template (system.varsym_template), or the seed link's mount
 * options as mountinfo shows them (system.varsym_options).
 */
static int copy_value(const char *value, size_t len, void *buffer,
		      size_t size)
{
	if (!size)
		return len;
	if (size < len)
		return -ERANGE;
	memcpy(buffer, value, len);
	return len;
}

static int template_get(const struct xattr_handler *handler,
			struct dentry *unused, struct inode *inode,
			const char *name, void *buffer, size_t size)
{
	const struct varsymfs_template *t = varsymfs_template_of(inode);

	if (!S_ISLNK(inode->i_mode) || !t)
		return -ENODATA;
	return copy_value(t->text, t->len, buffer, size);
}

static bool template_list(struct dentry *dentry)
{
	return d_is_symlink(dentry) && varsymfs_template_of(d_inode(dentry));
}

static int options_get(const struct xattr_handler *handler,
		       struct dentry *unused, struct inode *inode,
		       const char *name, void *buffer, size_t size)
{
	const struct varsym_opts *opts = &varsymfs_sb(inode->i_sb)->opts;
	size_t len;
	char *text;

	if (!S_ISLNK(inode->i_mode) || varsymfs_template_of(inode))
		return -ENODATA;
	/* the options never change after the mount: the length holds */
	len = varsym_opts_text_len(opts);
	if (!size)
		return len;
	if (size < len)
		return -ERANGE;
	/* the text and its NUL, which buffer need not have room for */
	text = kmalloc(len + 1, GFP_KERNEL_ACCOUNT);
	if (!text)
		return -ENOMEM;
	varsym_opts_text(opts, text, len + 1);
	memcpy(buffer, text, len);
	kfree(text);
	return len;
}

static bool options_list(struct dentry *dentry)
{
	return d_is_symlink(dentry) && !varsymfs_template_of(d_inode(dentry));
}

static const struct xattr_handler template_xattr = {
	.name = VARSYM_XATTR_TEMPLATE,
	.list = template_list,
	.get = template_get,
};

static const struct xattr_handler options_xattr = {
	.name = VARSYM_XATTR_OPTIONS,
	.list = options_list,
	.get = options_get,
};

VARSYMFS_XATTR_HANDLERS varsymfs_xattr_handlers[] = {
	&template_xattr,
	&options_xattr,
	&varsymfs_user_scope_xattr,
	&varsymfs_system_scope_xattr,
	&varsymfs_user_scope_of_xattr,
	NULL
};
