// SPDX-License-Identifier: GPL-2.0-only
/*
 * fs.c - the FUSE low-level operations of varsymfs.
 *
 * The root directory holds variant links, each a node:
 *  - seed mode: one node, "resolve", whose target is the mount's variable
 *    (prefix, default); the directory never changes;
 *  - template mode: nodes made by symlink(2), each with a template, in a
 *    flat directory the owner changes with symlink, unlink and rename.
 * Every READLINK computes the target for the calling process.  Symlink
 * caching stays off, entries are cached for a long time (every change goes
 * through the kernel, which keeps its cache right), and a link's attributes
 * are never cached: its size is the length of the caller's own target.
 *
 * A node's FUSE inode number is its address, as in libfuse's passthrough_ll:
 * the node lives until the kernel forgets it, so the number stays valid.
 * The node list and the root's attributes are under fs->lock; a node's
 * template never changes and is read without it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "fs.h"

#define SEED_LINK_NAME "resolve"
#define STABLE_TIMEOUT 86400.0	/* for what only changes through us */
#define XATTR_TEMPLATE "system.varsym_template"
#define XATTR_OPTIONS "system.varsym_options"

struct vsfuse_node {
	struct vsfuse_node *next;	/* in the directory, by st_ino */
	uint64_t st_ino;
	uint64_t nlookup;		/* the kernel's references */
	char *name;			/* NULL once unlinked */
	char *template;			/* NULL: the seed link */
	size_t template_len;
	uid_t uid;
	gid_t gid;
	struct timespec atime, mtime, ctime;
};

/* All errors leave through here: the core speaks -errno. */
static void reply_error(fuse_req_t req, long neg_errno)
{
	fuse_reply_err(req, (int)-neg_errno);
}

static struct vsfuse_node *node_of(fuse_ino_t ino)
{
	return (struct vsfuse_node *)(uintptr_t)ino;
}

static struct timespec now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

/* Under fs->lock. */
static struct vsfuse_node *find_name(struct vsfuse *fs, const char *name)
{
	struct vsfuse_node *n;

	for (n = fs->nodes; n; n = n->next)
		if (!strcmp(n->name, name))
			return n;
	return NULL;
}

static struct vsfuse_node *new_node(struct vsfuse *fs, const char *name,
				    const char *template, uid_t uid, gid_t gid)
{
	struct vsfuse_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = strdup(name);
	n->template_len = template ? strlen(template) : 0;
	n->template = template ? strdup(template) : NULL;
	if (!n->name || (template && !n->template)) {
		free(n->name);
		free(n->template);
		free(n);
		return NULL;
	}
	n->st_ino = fs->next_ino++;
	n->uid = uid;
	n->gid = gid;
	n->atime = n->mtime = n->ctime = now();
	return n;
}

static void free_node(struct vsfuse_node *n)
{
	free(n->name);
	free(n->template);
	free(n);
}

/* Takes n out of the directory; under fs->lock. */
static void unlink_node(struct vsfuse *fs, struct vsfuse_node *n)
{
	struct vsfuse_node **p;

	for (p = &fs->nodes; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			break;
		}
	}
	free(n->name);
	n->name = NULL;
	n->ctime = now();
	if (!n->nlookup) {
		free_node(n);
		return;
	}
	n->next = fs->orphans;
	fs->orphans = n;
}

/* The errors that are answers, the same until the process execs. */
static bool is_answer(ssize_t err)
{
	return err == -ENOENT || err == -EACCES || err == -ENAMETOOLONG ||
	       err == -EINVAL;
}

/* The target of a link for the process behind req. */
static ssize_t resolve_for(struct vsfuse *fs, fuse_req_t req,
			   const struct vsfuse_node *n, char *out, size_t size)
{
	struct vsfuse_caller caller;
	struct varsym_caller c = { .getenv = vsfuse_getenv, .ctx = &caller };
	pid_t tid = fuse_req_ctx(req)->pid;
	bool cache = fs->cache && tid > 0;
	uint64_t stamp = 0;
	ssize_t len;

	if (fs->constant) {		/* the benchmarks' floor */
		len = strlen(fs->constant);
		if ((size_t)len >= size)
			return -ENAMETOOLONG;
		memcpy(out, fs->constant, len + 1);
		return len;
	}
	if (cache) {
		len = vsfuse_cache_get(fs->cache, tid, n->st_ino, out, size,
				       &stamp);
		if (len != VSFUSE_CACHE_MISS && len != VSFUSE_CACHE_BYPASS)
			return len;
		cache = len == VSFUSE_CACHE_MISS;
	}
	vsfuse_caller_open(&caller, fs->procfd, tid, fs->serves_others);
	c.secure = caller.secure;
	if (n->template)
		len = varsym_template_expand(n->template, n->template_len, &c,
					     out, size);
	else
		len = varsym_resolve_seed(&fs->opts, &c, out, size);
	if (cache && !caller.in_execve && caller.dirfd >= 0 &&
	    (len >= 0 || is_answer(len)))
		vsfuse_cache_put(fs->cache, tid, caller.dirfd, n->st_ino, len,
				 out, stamp);
	vsfuse_caller_close(&caller);
	return len;
}

static void root_attr(struct vsfuse *fs, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = FUSE_ROOT_ID;
	st->st_nlink = 2;
	pthread_rwlock_rdlock(&fs->lock);
	st->st_mode = S_IFDIR | fs->root_mode;
	st->st_uid = fs->root_uid;
	st->st_gid = fs->root_gid;
	st->st_atim = fs->root_atime;
	st->st_mtim = fs->root_mtime;
	st->st_ctim = fs->root_ctime;
	pthread_rwlock_unlock(&fs->lock);
}

/* A link's attributes for this caller: st_size is its target's length. */
static void link_attr(struct vsfuse *fs, fuse_req_t req,
		      const struct vsfuse_node *n, struct stat *st)
{
	char target[VARSYM_PATH_MAX];
	ssize_t len = resolve_for(fs, req, n, target, sizeof(target));

	memset(st, 0, sizeof(*st));
	st->st_ino = n->st_ino;
	st->st_mode = S_IFLNK | 0777;
	st->st_nlink = n->name ? 1 : 0;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	st->st_size = len > 0 ? len : 0;
	st->st_atim = n->atime;
	st->st_mtim = n->mtime;
	st->st_ctim = n->ctime;
}

/* Replies with an entry for n, whose lookup count the caller raised. */
static void reply_entry(struct vsfuse *fs, fuse_req_t req,
			struct vsfuse_node *n)
{
	struct fuse_entry_param e = {
		.ino = (uintptr_t)n,
		.entry_timeout = STABLE_TIMEOUT,
		.attr_timeout = 0,
	};

	link_attr(fs, req, n, &e.attr);
	if (fuse_reply_entry(req, &e))
		__atomic_sub_fetch(&n->nlookup, 1, __ATOMIC_RELAXED);
}

static void vsfuse_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct fuse_entry_param negative = { .entry_timeout = STABLE_TIMEOUT };
	struct vsfuse_node *n;

	if (parent != FUSE_ROOT_ID)
		return reply_error(req, -ENOTDIR);
	pthread_rwlock_rdlock(&fs->lock);
	n = find_name(fs, name);
	if (n)
		__atomic_add_fetch(&n->nlookup, 1, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&fs->lock);
	if (!n) {
		/* ino 0: a negative entry the kernel may cache */
		fuse_reply_entry(req, &negative);
		return;
	}
	reply_entry(fs, req, n);
}

static void forget_one(struct vsfuse *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct vsfuse_node *n = node_of(ino);

	if (ino == FUSE_ROOT_ID)
		return;
	pthread_rwlock_wrlock(&fs->lock);
	n->nlookup -= nlookup;
	if (!n->nlookup && !n->name) {
		struct vsfuse_node **p;

		for (p = &fs->orphans; *p != n; p = &(*p)->next)
			;
		*p = n->next;
		free_node(n);
	}
	pthread_rwlock_unlock(&fs->lock);
}

static void vsfuse_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(fuse_req_userdata(req), ino, nlookup);
	fuse_reply_none(req);
}

static void vsfuse_forget_multi(fuse_req_t req, size_t count,
				struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		forget_one(fuse_req_userdata(req), forgets[i].ino,
			   forgets[i].nlookup);
	fuse_reply_none(req);
}

static void vsfuse_getattr(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct stat st;

	(void)fi;
	if (ino == FUSE_ROOT_ID) {
		root_attr(fs, &st);
		fuse_reply_attr(req, &st, STABLE_TIMEOUT);
		return;
	}
	link_attr(fs, req, node_of(ino), &st);
	fuse_reply_attr(req, &st, 0);
}

static void vsfuse_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	char target[VARSYM_PATH_MAX];
	ssize_t len;

	if (ino == FUSE_ROOT_ID)
		return reply_error(req, -EINVAL);
	len = resolve_for(fs, req, node_of(ino), target, sizeof(target));
	if (len < 0)
		return reply_error(req, len);
	fuse_reply_readlink(req, target);
}

static void vsfuse_opendir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	if (ino != FUSE_ROOT_ID)
		return reply_error(req, -ENOTDIR);
	fuse_reply_open(req, fi);
}

/*
 * Offsets: 1 and 2 for "." and "..", then st_ino + 2 of each link; the
 * list is in st_ino order, so a listing resumes correctly across changes.
 */
static void vsfuse_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	char *buf = malloc(size);
	size_t used = 0, n;
	struct vsfuse_node *node;
	struct stat st = { .st_ino = FUSE_ROOT_ID, .st_mode = S_IFDIR };

	(void)ino;
	(void)fi;
	if (!buf)
		return reply_error(req, -ENOMEM);
	for (; off < 2; off++) {
		n = fuse_add_direntry(req, buf + used, size - used,
				      off ? ".." : ".", &st, off + 1);
		if (n > size - used)
			goto out;
		used += n;
	}
	pthread_rwlock_rdlock(&fs->lock);
	for (node = fs->nodes; node; node = node->next) {
		off_t next = (off_t)node->st_ino + 2;

		if (next <= off)
			continue;
		st.st_ino = node->st_ino;
		st.st_mode = S_IFLNK;
		n = fuse_add_direntry(req, buf + used, size - used, node->name,
				      &st, next);
		if (n > size - used)
			break;
		used += n;
	}
	pthread_rwlock_unlock(&fs->lock);
out:
	fuse_reply_buf(req, buf, used);
	free(buf);
}

/* Seed mode's directory never changes. */
static bool refuse_in_seed_mode(struct vsfuse *fs, fuse_req_t req)
{
	if (!varsym_opts_seed_mode(&fs->opts))
		return false;
	reply_error(req, -EPERM);
	return true;
}

static void touch_root(struct vsfuse *fs)
{
	fs->root_mtime = fs->root_ctime = now();
}

static void vsfuse_symlink(fuse_req_t req, const char *template,
			   fuse_ino_t parent, const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct vsfuse_node *n;
	int err = 0;

	if (refuse_in_seed_mode(fs, req))
		return;
	if (varsym_template_check(template, strlen(template)))
		return reply_error(req, -EINVAL);
	pthread_rwlock_wrlock(&fs->lock);
	if (find_name(fs, name)) {
		err = -EEXIST;
	} else {
		n = new_node(fs, name, template, ctx->uid, ctx->gid);
		if (!n) {
			err = -ENOMEM;
		} else {
			struct vsfuse_node **p = &fs->nodes;

			while (*p)
				p = &(*p)->next;
			*p = n;
			n->nlookup = 1;
			touch_root(fs);
		}
	}
	pthread_rwlock_unlock(&fs->lock);
	if (err)
		return reply_error(req, err);
	reply_entry(fs, req, n);
}

static void vsfuse_unlink(fuse_req_t req, fuse_ino_t parent,
			  const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct vsfuse_node *n;

	if (refuse_in_seed_mode(fs, req))
		return;
	pthread_rwlock_wrlock(&fs->lock);
	n = find_name(fs, name);
	if (n) {
		unlink_node(fs, n);
		touch_root(fs);
	}
	pthread_rwlock_unlock(&fs->lock);
	reply_error(req, n ? 0 : -ENOENT);
}

static int rename_locked(struct vsfuse *fs, const char *name,
			 const char *newname, unsigned int flags)
{
	struct vsfuse_node *from = find_name(fs, name);
	struct vsfuse_node *to = find_name(fs, newname);
	char *swap;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if (!from || ((flags & RENAME_EXCHANGE) && !to))
		return -ENOENT;
	if (to && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if (from == to)
		return 0;
	if (flags & RENAME_EXCHANGE) {
		swap = from->name;
		from->name = to->name;
		to->name = swap;
		to->ctime = now();
	} else {
		swap = strdup(newname);
		if (!swap)
			return -ENOMEM;
		if (to)
			unlink_node(fs, to);
		free(from->name);
		from->name = swap;
	}
	from->ctime = now();
	touch_root(fs);
	return 0;
}

static void vsfuse_rename(fuse_req_t req, fuse_ino_t parent,
			  const char *name, fuse_ino_t newparent,
			  const char *newname, unsigned int flags)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	int err;

	if (refuse_in_seed_mode(fs, req))
		return;
	pthread_rwlock_wrlock(&fs->lock);
	err = rename_locked(fs, name, newname, flags);
	pthread_rwlock_unlock(&fs->lock);
	reply_error(req, err);
}

#define SETTABLE (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | \
		  FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | \
		  FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW | \
		  FUSE_SET_ATTR_CTIME)

/*
 * Template mode: owner, group, times, and the directory's mode, as on tmpfs
 * (the kernel checks who may, from default_permissions).  Nothing in seed
 * mode, and never a size.
 */
static void vsfuse_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			   int to_set, struct fuse_file_info *fi)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct vsfuse_node *n = ino == FUSE_ROOT_ID ? NULL : node_of(ino);
	struct timespec t = now();

	(void)fi;
	if (refuse_in_seed_mode(fs, req))
		return;
	if ((to_set & ~SETTABLE) || (n && (to_set & FUSE_SET_ATTR_MODE)))
		return reply_error(req, -EPERM);
	pthread_rwlock_wrlock(&fs->lock);
	if (!n) {
		if (to_set & FUSE_SET_ATTR_MODE)
			fs->root_mode = attr->st_mode & 07777;
		if (to_set & FUSE_SET_ATTR_UID)
			fs->root_uid = attr->st_uid;
		if (to_set & FUSE_SET_ATTR_GID)
			fs->root_gid = attr->st_gid;
		if (to_set & FUSE_SET_ATTR_ATIME)
			fs->root_atime = to_set & FUSE_SET_ATTR_ATIME_NOW ?
					 t : attr->st_atim;
		if (to_set & FUSE_SET_ATTR_MTIME)
			fs->root_mtime = to_set & FUSE_SET_ATTR_MTIME_NOW ?
					 t : attr->st_mtim;
		fs->root_ctime = t;
	} else {
		if (to_set & FUSE_SET_ATTR_UID)
			n->uid = attr->st_uid;
		if (to_set & FUSE_SET_ATTR_GID)
			n->gid = attr->st_gid;
		if (to_set & FUSE_SET_ATTR_ATIME)
			n->atime = to_set & FUSE_SET_ATTR_ATIME_NOW ?
				   t : attr->st_atim;
		if (to_set & FUSE_SET_ATTR_MTIME)
			n->mtime = to_set & FUSE_SET_ATTR_MTIME_NOW ?
				   t : attr->st_mtim;
		n->ctime = t;
	}
	pthread_rwlock_unlock(&fs->lock);
	if (n)
		vsfuse_getattr(req, ino, NULL);
	else
		vsfuse_getattr(req, FUSE_ROOT_ID, NULL);
}

/*
 * The raw text behind a link, readable by anyone: a template link's
 * template, or the seed link's mount options.
 */
static void vsfuse_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    size_t size)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct vsfuse_node *n = node_of(ino);
	const char *value = NULL;
	size_t len;

	if (ino != FUSE_ROOT_ID && n->template && !strcmp(name, XATTR_TEMPLATE))
		value = n->template;
	else if (ino != FUSE_ROOT_ID && !n->template &&
		 !strcmp(name, XATTR_OPTIONS))
		value = fs->options_text;
	if (!value)
		return reply_error(req, -ENODATA);
	len = strlen(value);
	if (!size)
		fuse_reply_xattr(req, len);
	else if (size < len)
		reply_error(req, -ERANGE);
	else
		fuse_reply_buf(req, value, len);
}

static void vsfuse_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	const struct vsfuse_node *n = node_of(ino);
	const char *name;
	size_t len;

	if (ino == FUSE_ROOT_ID) {
		fuse_reply_xattr(req, 0);
		return;
	}
	name = n->template ? XATTR_TEMPLATE : XATTR_OPTIONS;
	len = strlen(name) + 1;
	if (!size)
		fuse_reply_xattr(req, len);
	else if (size < len)
		reply_error(req, -ERANGE);
	else
		fuse_reply_buf(req, name, len);
}

static void vsfuse_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    const char *value, size_t size, int flags)
{
	(void)ino, (void)name, (void)value, (void)size, (void)flags;
	reply_error(req, -EOPNOTSUPP);	/* as the kernel: no setter */
}

/* No directories, device nodes, regular files or hard links: EPERM. */
static void vsfuse_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	reply_error(req, -EPERM);
}

static void vsfuse_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	reply_error(req, -EPERM);
}

static void vsfuse_create(fuse_req_t req, fuse_ino_t parent,
			  const char *name, mode_t mode,
			  struct fuse_file_info *fi)
{
	(void)parent, (void)name, (void)mode, (void)fi;
	reply_error(req, -EPERM);
}

static void vsfuse_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent,
			const char *name)
{
	(void)ino, (void)parent, (void)name;
	reply_error(req, -EPERM);
}

static void vsfuse_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct vsfuse_node *n;

	(void)parent;
	pthread_rwlock_rdlock(&fs->lock);
	n = find_name(fs, name);
	pthread_rwlock_unlock(&fs->lock);
	reply_error(req, n ? -ENOTDIR : -ENOENT);
}

static void vsfuse_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* The kernel must ask for every follow: targets differ per process. */
	conn->want &= ~FUSE_CAP_CACHE_SYMLINKS;
}

int vsfuse_fs_init(struct vsfuse *fs, uid_t uid, gid_t gid)
{
	fs->next_ino = FUSE_ROOT_ID + 1;
	fs->root_atime = fs->root_mtime = fs->root_ctime = now();
	if (pthread_rwlock_init(&fs->lock, NULL))
		return -1;
	if (varsym_opts_seed_mode(&fs->opts)) {
		fs->root_mode = VARSYM_SEED_ROOT_MODE;
		fs->root_uid = uid;
		fs->root_gid = gid;
		fs->nodes = new_node(fs, SEED_LINK_NAME, NULL, uid, gid);
		return fs->nodes ? 0 : -1;
	}
	fs->root_mode = fs->opts.mode;
	fs->root_uid = fs->opts.given & VARSYM_OPT_UID ? fs->opts.uid : uid;
	fs->root_gid = fs->opts.given & VARSYM_OPT_GID ? fs->opts.gid : gid;
	return 0;
}

void vsfuse_fs_destroy(struct vsfuse *fs)
{
	struct vsfuse_node *lists[] = { fs->nodes, fs->orphans }, *n, *next;
	size_t i;

	/* the session is over: the kernel knows no node any more */
	for (i = 0; i < 2; i++) {
		for (n = lists[i]; n; n = next) {
			next = n->next;
			free_node(n);
		}
	}
	fs->nodes = fs->orphans = NULL;
	pthread_rwlock_destroy(&fs->lock);
}

const struct fuse_lowlevel_ops vsfuse_ops = {
	.init = vsfuse_init,
	.lookup = vsfuse_lookup,
	.forget = vsfuse_forget,
	.forget_multi = vsfuse_forget_multi,
	.getattr = vsfuse_getattr,
	.setattr = vsfuse_setattr,
	.readlink = vsfuse_readlink,
	.mknod = vsfuse_mknod,
	.mkdir = vsfuse_mkdir,
	.unlink = vsfuse_unlink,
	.rmdir = vsfuse_rmdir,
	.symlink = vsfuse_symlink,
	.rename = vsfuse_rename,
	.link = vsfuse_link,
	.create = vsfuse_create,
	.opendir = vsfuse_opendir,
	.readdir = vsfuse_readdir,
	.setxattr = vsfuse_setxattr,
	.getxattr = vsfuse_getxattr,
	.listxattr = vsfuse_listxattr,
};
