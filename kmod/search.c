// SPDX-License-Identifier: GPL-2.0-only
/*
 * search.c - search mode (mount -t varsymfs -o search,fallback=/bin none
 * /usr/bin): every name is a link to the first DIR/NAME the caller may
 * execute, DIR running over its PATH, then over the fallback list.
 *
 * The core (core/search.c) chooses the directories; this file walks them,
 * in ref-walk only (kern_path() sleeps), in the caller's own context: its
 * credentials, mount namespace and root are current's, so the answer is
 * what execve(2) itself would find.  The RCU walk is served from the
 * per-process answer cache (cache.c) or sent to ref-walk with -ECHILD.
 *
 * A walk may lead back into a search mount (PATH=/usr/bin on /usr/bin, a
 * link into one): the task is then already inside a search, which
 * `searching` records by pid, and the nested follow is -ELOOP, which the
 * outer search takes for "not here".  No lock is held across a lookup, and
 * each step checks for a fatal signal.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/xarray.h>
#include <linux/xattr.h>

#include "varsymfs.h"

/* The tasks inside a search or a listing, by pid: nested ones are -ELOOP. */
static DEFINE_XARRAY(searching);

bool varsymfs_searching(void)
{
	return xa_load(&searching, current->pid);
}

static int enter_search(void)
{
	int err = xa_insert(&searching, current->pid, xa_mk_value(1),
			    GFP_KERNEL);

	return err == -EBUSY ? -ELOOP : err;
}

static void leave_search(void)
{
	xa_erase(&searching, current->pid);
}

/* 1 when path is a regular file current may execute, as faccessat(X_OK). */
static int probe(void *ctx, const char *path)
{
	struct path p;
	int err, found;

	if (fatal_signal_pending(current))
		return -EINTR;
	/* up to 1,280 lookups a search: let others run between them */
	cond_resched();
	err = kern_path(path, LOOKUP_FOLLOW, &p);
	if (err) {
		if (fatal_signal_pending(current))
			return -EINTR;
		return err == -ENOMEM ? err : 0;	/* -ELOOP too: next */
	}
	/* path_noexec(), which no module may call */
	found = d_is_reg(p.dentry) && !(p.mnt->mnt_flags & MNT_NOEXEC) &&
		!(p.mnt->mnt_sb->s_iflags & SB_I_NOEXEC) &&
		!path_permission(&p, MAY_EXEC);
	path_put(&p);
	return found;
}

/**
 * varsymfs_search - the target of a search-mode link for current
 * @inode: the link, whose i_private is its name
 * @c: the caller, whose variable gives the directories
 * @target: PATH_MAX bytes for the answer
 *
 * Ref-walk only: it sleeps.
 *
 * Return: the target's length, -ENOENT when no directory holds the name,
 * -ELOOP inside another search, -EINTR for a caller being killed.
 */
ssize_t varsymfs_search(struct inode *inode, const struct varsym_caller *c,
			char *target)
{
	const struct varsymfs_search_name *n = inode->i_private;
	ssize_t ret;
	char *value;

	/* 32 KiB and a byte: vmalloc()ed if no contiguous pages are free */
	value = kvmalloc(VARSYM_SEARCH_VALUE_MAX, GFP_KERNEL_ACCOUNT);
	if (!value)
		return -ENOMEM;
	ret = enter_search();
	if (!ret) {
		ret = varsym_search(&varsymfs_sb(inode->i_sb)->opts, c,
				    n->name, n->len, probe, NULL, value,
				    target, PATH_MAX);
		leave_search();
	}
	kvfree(value);
	return ret;
}

/*
 * Any name is a link: its inode carries the name, which the RCU walk
 * (no dentry) needs for the cache's key.  It belongs to the mount's
 * owner, as the root does, not to whoever looked it up first.
 */
static struct dentry *search_lookup(struct inode *dir, struct dentry *dentry,
				    unsigned int flags)
{
	size_t len = dentry->d_name.len;
	struct varsymfs_search_name *n;
	struct inode *inode;

	if (len > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	n = kmalloc(struct_size(n, name, len + 1), GFP_KERNEL_ACCOUNT);
	if (!n)
		return ERR_PTR(-ENOMEM);
	n->id = varsymfs_new_link_id();
	n->len = len;
	memcpy(n->name, dentry->d_name.name, len);
	n->name[len] = '\0';
	inode = varsymfs_new_inode(dir->i_sb, S_IFLNK | 0777, get_next_ino());
	if (!inode) {
		kfree(n);
		return ERR_PTR(-ENOMEM);
	}
	inode->i_uid = dir->i_uid;
	inode->i_gid = dir->i_gid;
	inode->i_op = &varsymfs_link_iops;
	inode->i_private = n;
	d_add(dentry, inode);
	return NULL;
}

static int search_create(struct varsymfs_idmap *idmap, struct inode *dir,
			 struct dentry *dentry, VARSYMFS_CREATE_MODE)
{
	return -EPERM;
}

static int search_setattr(struct varsymfs_idmap *idmap, struct dentry *dentry,
			  struct iattr *attr)
{
	return -EPERM;
}

/* Missing mkdir, mknod, symlink, link, unlink, rmdir, rename: EPERM. */
const struct inode_operations varsymfs_search_dir_iops = {
	.lookup = search_lookup,
	.create = search_create,
	.setattr = search_setattr,
	.listxattr = generic_listxattr,
};

/*
 * The listing: the union of the fallback directories, each name once (the
 * first directory's), read at opendir with the caller's permissions.
 */
#define CHUNK_SIZE (4 * PAGE_SIZE)

struct name_rec {
	u32 dir;		/* its directory's place in the fallback list */
	u32 len;
	char name[];
};

/* A record's room, 8-aligned, so that the next one is aligned too. */
static size_t rec_size(size_t len)
{
	return ALIGN(sizeof(struct name_rec) + len, 8);
}

struct chunk {
	struct chunk *next;
	size_t used;
	char data[];
};

struct listing {
	struct chunk *chunks;
	struct name_rec **names;
	size_t count;
};

struct collect {
	struct dir_context ctx;
	struct listing *l;
	u32 dir;
	int err;
};

static bool collect_name(struct dir_context *ctx, const char *name, int len,
			 loff_t off, u64 ino, unsigned int type)
{
	struct collect *c = container_of(ctx, struct collect, ctx);
	size_t need = rec_size(len);
	struct chunk *ch = c->l->chunks;
	struct name_rec *r;

	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return true;
	if (c->l->count >= VARSYM_SEARCH_LISTING_MAX ||
	    fatal_signal_pending(current))
		return false;
	if (!ch || ch->used + need > CHUNK_SIZE - sizeof(*ch)) {
		ch = kmalloc(CHUNK_SIZE, GFP_KERNEL_ACCOUNT);
		if (!ch) {
			c->err = -ENOMEM;
			return false;
		}
		ch->next = c->l->chunks;
		ch->used = 0;
		c->l->chunks = ch;
	}
	r = (struct name_rec *)(ch->data + ch->used);
	r->dir = c->dir;
	r->len = len;
	memcpy(r->name, name, len);
	ch->used += need;
	c->l->count++;
	return true;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct name_rec *x = *(const struct name_rec * const *)a;
	const struct name_rec *y = *(const struct name_rec * const *)b;
	int d = memcmp(x->name, y->name, min(x->len, y->len));

	if (d)
		return d;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->dir < y->dir ? -1 : x->dir > y->dir;
}

static void free_listing(struct listing *l)
{
	struct chunk *ch;

	while ((ch = l->chunks)) {
		l->chunks = ch->next;
		kfree(ch);
	}
	kvfree(l->names);
	kfree(l);
}

/* Reads one fallback directory; one that cannot be opened is skipped. */
static int collect_dir(struct collect *c, const char *dir, size_t len)
{
	struct file *f;
	char *path;
	int err;

	path = kmemdup_nul(dir, len, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	f = filp_open(path, O_RDONLY | O_DIRECTORY, 0);
	kfree(path);
	if (IS_ERR(f))
		return fatal_signal_pending(current) ? -EINTR : 0;
	err = iterate_dir(f, &c->ctx);
	filp_close(f, NULL);
	if (c->err)
		return c->err;
	if (fatal_signal_pending(current))
		return -EINTR;
	return err == -ENOMEM ? err : 0;
}

static int build_listing(const struct varsym_opts *o, struct listing *l)
{
	struct collect c = { .ctx.actor = collect_name, .l = l };
	const char *p = o->dflt, *end = o->dflt + o->dflt_len;
	struct chunk *ch;
	size_t i, j, pos;
	int err = 0;

	while (p < end && !err) {
		const char *colon = memchr(p, ':', end - p);
		size_t len = colon ? colon - p : end - p;

		err = collect_dir(&c, p, len);
		c.dir++;
		p += len + 1;
	}
	if (err || !l->count)
		return err;
	l->names = kvmalloc_array(l->count, sizeof(*l->names),
				  GFP_KERNEL_ACCOUNT);
	if (!l->names)
		return -ENOMEM;
	i = 0;
	for (ch = l->chunks; ch; ch = ch->next)
		for (pos = 0; pos < ch->used; i++) {
			struct name_rec *r = (void *)(ch->data + pos);

			l->names[i] = r;
			pos += rec_size(r->len);
		}
	sort(l->names, l->count, sizeof(*l->names), cmp_rec, NULL);
	/* sorted by name, then by directory: the first of a run stays */
	for (i = 0, j = 0; i < l->count; i++)
		if (!j || l->names[j - 1]->len != l->names[i]->len ||
		    memcmp(l->names[j - 1]->name, l->names[i]->name,
			   l->names[i]->len))
			l->names[j++] = l->names[i];
	l->count = j;
	return 0;
}

static int search_dir_open(struct inode *inode, struct file *file)
{
	struct listing *l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	int err;

	if (!l)
		return -ENOMEM;
	/* a fallback directory in a search mount: its listing is not read */
	err = enter_search();
	if (!err) {
		err = build_listing(&varsymfs_sb(inode->i_sb)->opts, l);
		leave_search();
	} else if (err == -ELOOP) {
		err = 0;
	}
	if (err) {
		free_listing(l);
		return err;
	}
	file->private_data = l;
	return 0;
}

static int search_dir_release(struct inode *inode, struct file *file)
{
	free_listing(file->private_data);
	return 0;
}

/* Positions: 0 and 1 are "." and "..", then one per name. */
static int search_iterate(struct file *file, struct dir_context *ctx)
{
	struct listing *l = file->private_data;

	if (!dir_emit_dots(file, ctx))
		return 0;
	for (; (u64)(ctx->pos - 2) < l->count; ctx->pos++) {
		const struct name_rec *r = l->names[ctx->pos - 2];

		if (!dir_emit(ctx, r->name, r->len, ctx->pos + 1, DT_LNK))
			break;
	}
	return 0;
}

const struct file_operations varsymfs_search_dir_fops = {
	.open = search_dir_open,
	.release = search_dir_release,
	.iterate_shared = search_iterate,
	.llseek = generic_file_llseek,
	.read = generic_read_dir,
};
