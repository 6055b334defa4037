// SPDX-License-Identifier: GPL-2.0-only
/*
 * fs.c - the FUSE low-level operations of varsymfs.
 *
 * Seed mode: a read-only root directory holding one symlink, "resolve",
 * whose target is computed for each READLINK from the calling process.
 * Symlink caching stays off (we never ask for FUSE_CAP_CACHE_SYMLINKS), so
 * the kernel asks us on every follow; entries and the directory never
 * change, so they are cached for a long time.  The link's attributes are
 * never cached: its size is the length of the caller's own target.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"

#define SEED_LINK_INO 2
#define SEED_LINK_NAME "resolve"
#define STABLE_TIMEOUT 86400.0	/* for what never changes */

/* All errors leave through here: the core speaks -errno. */
static void reply_error(fuse_req_t req, long neg_errno)
{
	fuse_reply_err(req, (int)-neg_errno);
}

/* The target of a seed-mode link for the process behind req. */
static ssize_t resolve_for(struct vsfuse *fs, fuse_req_t req, char *out,
			   size_t size)
{
	struct vsfuse_caller caller;
	struct varsym_caller c = { .getenv = vsfuse_getenv, .ctx = &caller };
	ssize_t n;

	vsfuse_caller_open(&caller, fs->procfd, fuse_req_ctx(req)->pid,
			   fs->serves_others);
	c.secure = caller.secure;
	n = varsym_resolve_seed(&fs->opts, &c, out, size);
	vsfuse_caller_close(&caller);
	return n;
}

static void fill_times(const struct vsfuse *fs, struct stat *st)
{
	st->st_atim = st->st_mtim = st->st_ctim = fs->mounted;
}

static void root_attr(const struct vsfuse *fs, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = FUSE_ROOT_ID;
	st->st_mode = S_IFDIR | VARSYM_SEED_ROOT_MODE;
	st->st_nlink = 2;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	fill_times(fs, st);
}

/* The link's attributes for this caller: st_size is its target's length. */
static void link_attr(struct vsfuse *fs, fuse_req_t req, struct stat *st)
{
	char target[VARSYM_PATH_MAX];
	ssize_t n = resolve_for(fs, req, target, sizeof(target));

	memset(st, 0, sizeof(*st));
	st->st_ino = SEED_LINK_INO;
	st->st_mode = S_IFLNK | 0777;
	st->st_nlink = 1;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_size = n > 0 ? n : 0;
	fill_times(fs, st);
}

static void vsfuse_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct fuse_entry_param e = { .entry_timeout = STABLE_TIMEOUT };

	if (parent != FUSE_ROOT_ID)
		return reply_error(req, -ENOTDIR);
	if (strcmp(name, SEED_LINK_NAME)) {
		/* ino 0: a negative entry the kernel may cache */
		fuse_reply_entry(req, &e);
		return;
	}
	e.ino = SEED_LINK_INO;
	e.attr_timeout = 0;
	link_attr(fs, req, &e.attr);
	fuse_reply_entry(req, &e);
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
	} else if (ino == SEED_LINK_INO) {
		link_attr(fs, req, &st);
		fuse_reply_attr(req, &st, 0);
	} else {
		reply_error(req, -ENOENT);
	}
}

static void vsfuse_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	char target[VARSYM_PATH_MAX];
	ssize_t n;

	if (ino != SEED_LINK_INO)
		return reply_error(req, -EINVAL);
	n = resolve_for(fs, req, target, sizeof(target));
	if (n < 0)
		return reply_error(req, n);
	fuse_reply_readlink(req, target);
}

static void vsfuse_opendir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	if (ino != FUSE_ROOT_ID)
		return reply_error(req, -ENOTDIR);
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

static void vsfuse_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	static const struct {
		const char *name;
		fuse_ino_t ino;
		mode_t type;
	} entries[] = {
		{ ".", FUSE_ROOT_ID, S_IFDIR },
		{ "..", FUSE_ROOT_ID, S_IFDIR },
		{ SEED_LINK_NAME, SEED_LINK_INO, S_IFLNK },
	};
	char buf[512];
	size_t used = 0;

	(void)ino;
	(void)fi;
	if (size > sizeof(buf))
		size = sizeof(buf);
	for (; off >= 0 && (size_t)off < sizeof(entries) / sizeof(entries[0]);
	     off++) {
		struct stat st = {
			.st_ino = entries[off].ino,
			.st_mode = entries[off].type,
		};
		size_t n = fuse_add_direntry(req, buf + used, size - used,
					     entries[off].name, &st, off + 1);

		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

/* The directory holds exactly one link: no change is allowed. */
static void refuse_parent(fuse_req_t req)
{
	reply_error(req, -EPERM);
}

static void vsfuse_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	refuse_parent(req);
}

static void vsfuse_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	refuse_parent(req);
}

static void vsfuse_create(fuse_req_t req, fuse_ino_t parent,
			  const char *name, mode_t mode,
			  struct fuse_file_info *fi)
{
	(void)parent, (void)name, (void)mode, (void)fi;
	refuse_parent(req);
}

static void vsfuse_symlink(fuse_req_t req, const char *target,
			   fuse_ino_t parent, const char *name)
{
	(void)target, (void)parent, (void)name;
	refuse_parent(req);
}

static void vsfuse_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent,
			const char *name)
{
	(void)ino, (void)parent, (void)name;
	refuse_parent(req);
}

static void vsfuse_unlink(fuse_req_t req, fuse_ino_t parent,
			  const char *name)
{
	(void)parent, (void)name;
	refuse_parent(req);
}

static void vsfuse_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent, (void)name;
	refuse_parent(req);
}

static void vsfuse_rename(fuse_req_t req, fuse_ino_t parent,
			  const char *name, fuse_ino_t newparent,
			  const char *newname, unsigned int flags)
{
	(void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
	refuse_parent(req);
}

static void vsfuse_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			   int to_set, struct fuse_file_info *fi)
{
	(void)ino, (void)attr, (void)to_set, (void)fi;
	reply_error(req, -EPERM);
}

static void vsfuse_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* The kernel must ask for every follow: targets differ per process. */
	conn->want &= ~FUSE_CAP_CACHE_SYMLINKS;
}

const struct fuse_lowlevel_ops vsfuse_ops = {
	.init = vsfuse_init,
	.lookup = vsfuse_lookup,
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
};
