// SPDX-License-Identifier: GPL-2.0-only
/*
 * super.c - varsymfs, the file system: mount options, super block, module.
 *
 * Seed mode (mount -t varsymfs -o UNIVERSE none /.universe): a read-only
 * root directory holding the one variant link "resolve".
 * Template mode (mount -t varsymfs none /.varsym): a flat directory, as on
 * ramfs, where symlink(2) stores templates and unlink(2) and rename(2) work;
 * directories, device nodes, regular files and hard links are refused.
 *
 * Options go through the new mount API, but not through fs_parse() and a
 * fs_parameter_spec table: a bare word is a variable name, which no static
 * table can list, and the daemon must accept the same words with the same
 * messages.  So every parameter goes to the shared core's parser, and its
 * message to the mount API's log (mount(8) and fsconfig(2) users see it).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs_context.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include <linux/xattr.h>

#include "varsymfs.h"

static DEFINE_PER_CPU(unsigned long[VARSYMFS_STAT_COUNT], varsymfs_stats);

void varsymfs_count(enum varsymfs_stat what)
{
	this_cpu_inc(varsymfs_stats[what]);
}

/*
 * /sys/module/varsymfs/parameters/stats: read the counts, write 0 to reset.
 * In the product module, not only a benchmark build: the benchmarks need
 * the RCU-walk ratio of the module users run, and administrators read it.
 */
static int stats_get(char *buf, const struct kernel_param *kp)
{
	unsigned long sum[VARSYMFS_STAT_COUNT] = { 0 };
	int cpu, i;

	for_each_possible_cpu(cpu)
		for (i = 0; i < VARSYMFS_STAT_COUNT; i++)
			sum[i] += per_cpu(varsymfs_stats, cpu)[i];
	return sysfs_emit(buf, "rcu %lu\nechild %lu\nref %lu\n",
			  sum[VARSYMFS_STAT_RCU], sum[VARSYMFS_STAT_ECHILD],
			  sum[VARSYMFS_STAT_REF]);
}

/* Only "0" resets: any other value is a mistake, refused with EINVAL. */
static int stats_set(const char *val, const struct kernel_param *kp)
{
	int cpu, i;

	if (!sysfs_streq(val, "0"))
		return -EINVAL;
	for_each_possible_cpu(cpu)
		for (i = 0; i < VARSYMFS_STAT_COUNT; i++)
			per_cpu(varsymfs_stats, cpu)[i] = 0;
	return 0;
}

static const struct kernel_param_ops stats_ops = {
	.get = stats_get,
	.set = stats_set,
};
module_param_cb(stats, &stats_ops, NULL, 0644);
MODULE_PARM_DESC(stats, "follows answered in RCU walk, sent to ref-walk, answered in ref-walk");

struct inode *varsymfs_new_inode(struct super_block *sb, umode_t mode,
				 unsigned long ino)
{
	struct inode *inode = new_inode(sb);

	if (!inode)
		return NULL;
	inode->i_ino = ino;
	inode->i_mode = mode;
	/* the mounter (root, or a user namespace's root), as on tmpfs */
	inode->i_uid = current_fsuid();
	inode->i_gid = current_fsgid();
	varsymfs_inode_init_ts(inode);
	return inode;
}

/* Regular files: the VFS would say EACCES for a missing ->create. */
static int varsymfs_create(struct varsymfs_idmap *idmap, struct inode *dir,
			   struct dentry *dentry, VARSYMFS_CREATE_MODE)
{
	return -EPERM;
}

/* The seed directory holds exactly one link: nothing may change it. */
static int varsymfs_seed_setattr(struct varsymfs_idmap *idmap,
				 struct dentry *dentry, struct iattr *attr)
{
	return -EPERM;
}

/* Missing mkdir, mknod, symlink, link, unlink, rmdir, rename: EPERM too. */
static const struct inode_operations varsymfs_seed_dir_iops = {
	.lookup = simple_lookup,
	.create = varsymfs_create,
	.setattr = varsymfs_seed_setattr,
	.listxattr = generic_listxattr,
};

/*
 * symlink(2) in template mode: the text must be a well-formed template
 * (docs/SPEC.md section 2), else EINVAL and nothing is stored.
 */
static int varsymfs_symlink(struct varsymfs_idmap *idmap, struct inode *dir,
			    struct dentry *dentry, const char *symname)
{
	struct varsymfs_sb_info *sbi = varsymfs_sb(dir->i_sb);
	size_t len = strlen(symname);
	struct varsymfs_template *t;
	struct inode *inode;

	if (varsym_template_check(symname, len))
		return -EINVAL;
	/* nr_links=: dropped when the link's inode goes (evict_inode) */
	if (!atomic_add_unless(&sbi->links, 1, sbi->opts.nr_links))
		return -ENOSPC;
	/*
	 * Charged to the creator's memory cgroup; at its limit, ENOMEM
	 * rather than the cgroup's OOM killer.
	 */
	t = kmalloc(struct_size(t, text, len + 1),
		    GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN);
	if (!t) {
		atomic_dec(&sbi->links);
		return -ENOMEM;
	}
	t->id = varsymfs_new_link_id();
	t->builtins = varsym_link_reads_builtin(NULL, symname, len);
	t->len = len;
	memcpy(t->text, symname, len + 1);
	inode = varsymfs_new_inode(dir->i_sb, S_IFLNK | 0777, get_next_ino());
	if (!inode) {
		kfree(t);
		atomic_dec(&sbi->links);
		return -ENOMEM;
	}
	inode_init_owner(idmap, inode, dir, S_IFLNK | 0777);
	inode->i_op = &varsymfs_link_iops;
	inode->i_private = t;
	inode->i_size = len;
	varsymfs_pin(dentry, inode);	/* as on ramfs, until unlink */
	varsymfs_dir_touch(dir);
	return 0;
}

/* Missing mkdir, mknod, link, rmdir: EPERM (docs/SPEC.md section 2). */
static const struct inode_operations varsymfs_template_dir_iops = {
	.lookup = simple_lookup,
	.create = varsymfs_create,
	.symlink = varsymfs_symlink,
	.unlink = simple_unlink,
	.rename = simple_rename,
	.listxattr = generic_listxattr,
};

static int varsymfs_fill_seed(struct super_block *sb)
{
	struct dentry *dentry;
	struct inode *inode;

	dentry = d_alloc_name(sb->s_root, VARSYM_SEED_LINK_NAME);
	if (!dentry)
		return -ENOMEM;
	inode = varsymfs_new_inode(sb, S_IFLNK | 0777, VARSYMFS_SEED_INO);
	if (!inode) {
		dput(dentry);
		return -ENOMEM;
	}
	inode->i_op = &varsymfs_link_iops;
	varsymfs_pin(dentry, inode);	/* until umount */
	dput(dentry);
	return 0;
}

static void show_one(void *ctx, const char *key, const char *value)
{
	seq_show_option(ctx, key, value);
}

static int varsymfs_show_options(struct seq_file *m, struct dentry *root)
{
	varsym_opts_show(&varsymfs_sb(root->d_sb)->opts, show_one, m);
	return 0;
}

/* A template link's inode goes: room for another (nr_links=). */
static void varsymfs_evict_inode(struct inode *inode)
{
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (S_ISLNK(inode->i_mode) && varsymfs_template_of(inode))
		atomic_dec(&varsymfs_sb(inode->i_sb)->links);
}

/* After an RCU grace period: an RCU walk may still read the template. */
static void varsymfs_free_inode(struct inode *inode)
{
	kfree(inode->i_private);
	free_inode_nonrcu(inode);
}

static const struct super_operations varsymfs_sops = {
	.statfs = simple_statfs,
	.drop_inode = varsymfs_drop_inode,
	.evict_inode = varsymfs_evict_inode,
	.free_inode = varsymfs_free_inode,
	.show_options = varsymfs_show_options,
};

static int varsymfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct varsymfs_sb_info *sbi = varsymfs_sb(sb);
	const struct varsym_opts *opts = &sbi->opts;
	bool seed = varsym_opts_seed_mode(opts);
	bool search = varsym_opts_search_mode(opts);
	struct inode *root;

	/* the exec hooks, while a mount exists: kill_sb undoes it */
	varsymfs_exec_attach();
	sbi->exec_attached = true;
	sb->s_magic = VARSYMFS_MAGIC;
	sb->s_op = &varsymfs_sops;
	sb->s_xattr = varsymfs_xattr_handlers;
	sb->s_time_gran = 1;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;

	root = varsymfs_new_inode(sb, S_IFDIR | (seed || search ?
						 VARSYM_SEED_ROOT_MODE :
						 opts->mode),
				  VARSYMFS_ROOT_INO);
	if (!root)
		return -ENOMEM;
	if (search) {
		root->i_op = &varsymfs_search_dir_iops;
		root->i_fop = &varsymfs_search_dir_fops;
	} else {
		root->i_op = seed ? &varsymfs_seed_dir_iops :
				    &varsymfs_template_dir_iops;
		root->i_fop = &simple_dir_operations;
	}
	set_nlink(root, 2);
	/*
	 * uid= and gid= are read in the mounter's user namespace and must
	 * map into the mount's, as on tmpfs.
	 */
	if (opts->given & VARSYM_OPT_UID)
		root->i_uid = make_kuid(current_user_ns(), opts->uid);
	if (opts->given & VARSYM_OPT_GID)
		root->i_gid = make_kgid(current_user_ns(), opts->gid);
	if (!kuid_has_mapping(sb->s_user_ns, root->i_uid)) {
		iput(root);
		return invalfc(fc, "uid=%u has no mapping in the mounter's user namespace",
			       opts->uid);
	}
	if (!kgid_has_mapping(sb->s_user_ns, root->i_gid)) {
		iput(root);
		return invalfc(fc, "gid=%u has no mapping in the mounter's user namespace",
			       opts->gid);
	}
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;
	return seed ? varsymfs_fill_seed(sb) : 0;
}

static int varsymfs_parse_param(struct fs_context *fc,
				struct fs_parameter *param)
{
	struct varsymfs_sb_info *sbi = fc->s_fs_info;
	char msg[VARSYM_MSG_MAX];
	int ret;

	if (param->type != fs_value_is_flag &&
	    param->type != fs_value_is_string)
		return invalfc(fc, "option '%s' must be a string", param->key);
	ret = varsym_opts_parse_one(&sbi->opts, param->key, param->string,
				    msg, sizeof(msg));
	if (ret == VARSYM_OPT_FOREIGN)
		return -ENOPARAM;	/* "source", or the VFS says unknown */
	if (ret)
		return invalfc(fc, "%s", msg);
	return 0;
}

static int varsymfs_check_options(struct fs_context *fc)
{
	struct varsymfs_sb_info *sbi = fc->s_fs_info;
	char msg[VARSYM_MSG_MAX];

	if (varsym_opts_finish(&sbi->opts, msg, sizeof(msg)))
		return invalfc(fc, "%s", msg);
	return 0;
}

static int varsymfs_get_tree(struct fs_context *fc)
{
	int ret = varsymfs_check_options(fc);

	if (ret)
		return ret;
	return get_tree_nodev(fc, varsymfs_fill_super);
}

/*
 * Remount may change the generic flags (ro, rw...), not what the links
 * mean: the options, if given at all, must be the ones in force.
 */
static int varsymfs_reconfigure(struct fs_context *fc)
{
	struct varsymfs_sb_info *new = fc->s_fs_info;
	struct varsymfs_sb_info *old = varsymfs_sb(fc->root->d_sb);
	const struct varsym_opts *a = &new->opts, *b = &old->opts;

	if (!a->given)
		return 0;
	if (a->given != b->given || strcmp(a->var, b->var) ||
	    strcmp(a->prefix, b->prefix) || strcmp(a->dflt, b->dflt) ||
	    a->uid != b->uid || a->gid != b->gid || a->mode != b->mode ||
	    a->nr_links != b->nr_links)
		return invalfc(fc, "options cannot change on remount: unmount and mount again");
	return 0;
}

static void varsymfs_free_fc(struct fs_context *fc)
{
	kfree(fc->s_fs_info);
}

static const struct fs_context_operations varsymfs_context_ops = {
	.free = varsymfs_free_fc,
	.parse_param = varsymfs_parse_param,
	.get_tree = varsymfs_get_tree,
	.reconfigure = varsymfs_reconfigure,
};

static int varsymfs_init_fs_context(struct fs_context *fc)
{
	struct varsymfs_sb_info *sbi = kzalloc(sizeof(*sbi),
						GFP_KERNEL_ACCOUNT);

	if (!sbi)
		return -ENOMEM;
	varsym_opts_init(&sbi->opts);
	sbi->seed_id = varsymfs_new_link_id();
	mutex_init(&sbi->scope_lock);
	xa_init(&sbi->user_scopes);
	fc->s_fs_info = sbi;
	fc->ops = &varsymfs_context_ops;
	return 0;
}

static void varsymfs_kill_sb(struct super_block *sb)
{
	struct varsymfs_sb_info *sbi = varsymfs_sb(sb);

	/* a search mount pins nothing: its links live as long as the dcache's */
	if (varsymfs_search_mode(sb))
		kill_anon_super(sb);
	else
		varsymfs_kill_tree(sb);
	varsymfs_scopes_free(sbi);
	if (sbi->exec_attached)
		varsymfs_exec_detach();
	/* a lazily unmounted tree may still be in an RCU walk's hands */
	kfree_rcu(sbi, rcu);
}

/*
 * FS_USERNS_MOUNT: the root of a user namespace that owns the mount
 * namespace may mount it (docs/SECURITY.md says why that is safe).
 */
static struct file_system_type varsymfs_fs_type = {
	.owner = THIS_MODULE,
	.name = "varsymfs",
	.fs_flags = FS_USERNS_MOUNT,
	.init_fs_context = varsymfs_init_fs_context,
	.kill_sb = varsymfs_kill_sb,
};

/* Nothing is attached to execve until the first mount (exec.c). */
static int __init varsymfs_init(void)
{
	varsymfs_cache_init();
	return register_filesystem(&varsymfs_fs_type);
}

static void __exit varsymfs_exit(void)
{
	unregister_filesystem(&varsymfs_fs_type);
	varsymfs_exec_exit();
	varsymfs_cache_exit();
}

module_init(varsymfs_init);
module_exit(varsymfs_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Variant symbolic links: targets chosen by the caller's environment");
MODULE_AUTHOR("The varsymfs authors");
MODULE_ALIAS_FS("varsymfs");
MODULE_VERSION(VARSYM_VERSION);
