// SPDX-License-Identifier: GPL-2.0-only
/*
 * fs.c - the FUSE low-level operations of varsymfs: the directory of
 * links, and the table that sends each request where it is served.
 *
 * The mount's root is a directory of variant links (dir.c).  Every
 * READLINK computes the target for the calling thread (readlink.c); the
 * extended attributes are the scopes and the links' raw texts (xattr.c).
 * Symlink caching stays off; entries and attributes are cached for a
 * long time (every change goes through the kernel, which keeps its cache
 * right), and a link's size is 0 (dir.c says why).
 *
 * Search mode (search.c): every name is a link, made at its lookup, and
 * a listing of the root is read for its caller in the pool.  A walk of
 * the daemon's own that comes back into the mount is answered ELOOP at
 * once (readlink.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "search.h"

#define STABLE_TIMEOUT 86400.0	/* for what only changes through us */

/* The pool's serve function. */
static void serve_job(void *ctx, struct vsfuse_job *j)
{
	struct vsfuse_fs_job *job = (struct vsfuse_fs_job *)
		((char *)j - offsetof(struct vsfuse_fs_job, job));

	job->serve(ctx, job);
}

/*
 * Whether tid's request comes from a walk of this program (a search's, of
 * this daemon or of another): see readlink.c.
 */
static bool own_walk(struct vsfuse *fs, pid_t tid)
{
	return vsfuse_pool_is_worker(fs->pool, tid) ||
	       vsfuse_search_same_program(fs->procfd, tid);
}

/* ---- the directory ---- */

/* Replies with an entry for n, whose lookup count the caller raised. */
static void reply_entry(struct vsfuse *fs, fuse_req_t req,
			struct vsfuse_node *n)
{
	struct fuse_entry_param e = {
		.ino = n->st_ino,
		.entry_timeout = STABLE_TIMEOUT,
		.attr_timeout = STABLE_TIMEOUT,
	};

	vsfuse_dir_link_attr(&fs->dir, n, &e.attr);
	if (fuse_reply_entry(req, &e))	/* the kernel did not take it */
		vsfuse_dir_forget(&fs->dir, n->st_ino, 1);
}

/* Any valid name is a search link, made at its first lookup. */
static void search_lookup(struct vsfuse *fs, fuse_req_t req, const char *name)
{
	struct fuse_entry_param negative = { .entry_timeout = STABLE_TIMEOUT };
	pid_t tid = fuse_req_ctx(req)->pid;
	size_t len = strlen(name);
	struct vsfuse_node *n;

	if (len > VARSYM_NAME_BYTES_MAX)
		return vsfuse_reply_error(req, -ENAMETOOLONG);
	if (own_walk(fs, tid))
		return vsfuse_reply_error(req, -ELOOP);
	if (!varsym_search_name_valid(name, len)) {
		fuse_reply_entry(req, &negative);
		return;
	}
	n = vsfuse_dir_lookup(&fs->dir, name);
	if (!n)
		return vsfuse_reply_error(req, -ENOMEM);
	reply_entry(fs, req, n);
}

static void vsfuse_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct fuse_entry_param negative = { .entry_timeout = STABLE_TIMEOUT };
	struct vsfuse_node *n;

	if (parent != FUSE_ROOT_ID)
		return vsfuse_reply_error(req, -ENOTDIR);
	if (fs->dir.search)
		return search_lookup(fs, req, name);
	n = vsfuse_dir_lookup(&fs->dir, name);
	if (!n) {
		/* ino 0: a negative entry the kernel may cache */
		fuse_reply_entry(req, &negative);
		return;
	}
	reply_entry(fs, req, n);
}

static void vsfuse_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct vsfuse *fs = fuse_req_userdata(req);

	if (ino != FUSE_ROOT_ID)
		vsfuse_dir_forget(&fs->dir, ino, nlookup);
	fuse_reply_none(req);
}

static void vsfuse_forget_multi(fuse_req_t req, size_t count,
				struct fuse_forget_data *forgets)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	size_t i;

	for (i = 0; i < count; i++)
		if (forgets[i].ino != FUSE_ROOT_ID)
			vsfuse_dir_forget(&fs->dir, forgets[i].ino,
					  forgets[i].nlookup);
	fuse_reply_none(req);
}

static void vsfuse_getattr(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct vsfuse_node *n = NULL;
	struct stat st;

	(void)fi;
	if (ino != FUSE_ROOT_ID && !(n = vsfuse_dir_node(&fs->dir, ino)))
		return vsfuse_reply_error(req, -ESTALE);
	if (!n)
		vsfuse_dir_root_attr(&fs->dir, &st);
	else
		vsfuse_dir_link_attr(&fs->dir, n, &st);
	fuse_reply_attr(req, &st, STABLE_TIMEOUT);
}

/* A search mount's OPENDIR: its listing, read for the caller. */
struct listing_job {
	struct vsfuse_fs_job base;
	struct fuse_file_info fi;
	struct vsfuse_searcher searcher;
};

static void serve_listing(struct vsfuse *fs, struct vsfuse_fs_job *j)
{
	struct listing_job *job = (struct listing_job *)j;
	struct vsfuse_listing *l = NULL;
	int err;

	err = vsfuse_listing_build(&job->searcher, &fs->opts,
				   j->job.owner, &l);
	vsfuse_searcher_close(&job->searcher);
	if (err) {
		vsfuse_reply_error(j->req, err);
	} else {
		job->fi.fh = (uintptr_t)l;
		if (fuse_reply_open(j->req, &job->fi))	/* not taken */
			vsfuse_listing_free(l);
	}
	free(job);
}

static void vsfuse_opendir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct listing_job *job;

	if (ino != FUSE_ROOT_ID)
		return vsfuse_reply_error(req, -ENOTDIR);
	if (!fs->dir.search)
		return (void)fuse_reply_open(req, fi);
	/* a fallback directory that leads back into a search mount */
	if (own_walk(fs, ctx->pid))
		return vsfuse_reply_error(req, -ELOOP);
	job = calloc(1, sizeof(*job));
	if (!job)
		return vsfuse_reply_error(req, -ENOMEM);
	job->base.job.owner = ctx->uid;
	job->base.serve = serve_listing;
	job->base.req = req;
	job->base.tid = ctx->pid;
	job->fi = *fi;
	vsfuse_searcher_open(&job->searcher, fs->procfd, ctx->pid, ctx->uid,
			     ctx->gid);
	vsfuse_pool_submit(fs->pool, &job->base.job);
}

static void vsfuse_releasedir(fuse_req_t req, fuse_ino_t ino,
			      struct fuse_file_info *fi)
{
	(void)ino;
	vsfuse_listing_free((struct vsfuse_listing *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

struct listing {
	fuse_req_t req;
	char *buf;
	size_t size, used;
};

static bool add_entry(void *ctx, const char *name, uint64_t st_ino,
		      off_t next)
{
	struct listing *l = ctx;
	struct stat st = {
		.st_ino = st_ino,
		.st_mode = st_ino == FUSE_ROOT_ID ? S_IFDIR : S_IFLNK,
	};
	size_t n = fuse_add_direntry(l->req, l->buf + l->used,
				     l->size - l->used, name, &st, next);

	if (n > l->size - l->used)
		return false;
	l->used += n;
	return true;
}

/*
 * A search listing's names after offset off: name i's is i + 3, and so is
 * its d_ino (a search link has no number until it is looked up).
 */
static void list_search(const struct vsfuse_listing *sl, off_t off,
			struct listing *l)
{
	size_t i = off > 2 ? (size_t)off - 2 : 0;
	const char *name;

	for (; (name = vsfuse_listing_name(sl, i)); i++)
		if (!add_entry(l, name, i + 3, i + 3))
			break;
}

/*
 * Offsets: 1 and 2 for "." and "..", then st_ino + 2 of each link, or in
 * a search mount its place in the listing opendir read.
 */
static void vsfuse_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct listing l = { .req = req, .size = size, .buf = malloc(size) };

	(void)ino;
	if (!l.buf)
		return vsfuse_reply_error(req, -ENOMEM);
	if ((off > 0 || add_entry(&l, ".", FUSE_ROOT_ID, 1)) &&
	    (off > 1 || add_entry(&l, "..", FUSE_ROOT_ID, 2))) {
		if (fs->dir.search)
			list_search((struct vsfuse_listing *)(uintptr_t)fi->fh,
				    off, &l);
		else
			vsfuse_dir_list(&fs->dir, off, add_entry, &l);
	}
	fuse_reply_buf(req, l.buf, l.used);
	free(l.buf);
}

/* Seed mode's and search mode's directories never change. */
static bool refuse_if_fixed(struct vsfuse *fs, fuse_req_t req)
{
	if (!varsym_opts_seed_mode(&fs->opts) && !fs->dir.search)
		return false;
	vsfuse_reply_error(req, -EPERM);
	return true;
}

static void vsfuse_symlink(fuse_req_t req, const char *template,
			   fuse_ino_t parent, const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct vsfuse_node *n;
	int err;

	if (refuse_if_fixed(fs, req))
		return;
	if (varsym_template_check(template, strlen(template)))
		return vsfuse_reply_error(req, -EINVAL);
	err = vsfuse_dir_symlink(&fs->dir, name, template, ctx->uid, ctx->gid,
				 &n);
	if (err)
		return vsfuse_reply_error(req, err);
	reply_entry(fs, req, n);
}

static void vsfuse_unlink(fuse_req_t req, fuse_ino_t parent,
			  const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);

	if (refuse_if_fixed(fs, req))
		return;
	vsfuse_reply_error(req, vsfuse_dir_unlink(&fs->dir, name));
}

static void vsfuse_rename(fuse_req_t req, fuse_ino_t parent,
			  const char *name, fuse_ino_t newparent,
			  const char *newname, unsigned int flags)
{
	struct vsfuse *fs = fuse_req_userdata(req);

	if (refuse_if_fixed(fs, req))
		return;
	vsfuse_reply_error(req, vsfuse_dir_rename(&fs->dir, name, newname, flags));
}

static void vsfuse_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			   int to_set, struct fuse_file_info *fi)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct vsfuse_node *n = NULL;
	int err;

	if (refuse_if_fixed(fs, req))
		return;
	if (ino != FUSE_ROOT_ID && !(n = vsfuse_dir_node(&fs->dir, ino)))
		return vsfuse_reply_error(req, -ESTALE);
	err = vsfuse_dir_setattr(&fs->dir, n, attr, to_set);
	if (err)
		return vsfuse_reply_error(req, err);
	vsfuse_getattr(req, ino, fi);
}

/* No directories, device nodes, regular files or hard links: EPERM. */
static void vsfuse_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	vsfuse_reply_error(req, -EPERM);
}

static void vsfuse_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	vsfuse_reply_error(req, -EPERM);
}

static void vsfuse_create(fuse_req_t req, fuse_ino_t parent,
			  const char *name, mode_t mode,
			  struct fuse_file_info *fi)
{
	(void)parent, (void)name, (void)mode, (void)fi;
	vsfuse_reply_error(req, -EPERM);
}

static void vsfuse_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent,
			const char *name)
{
	(void)ino, (void)parent, (void)name;
	vsfuse_reply_error(req, -EPERM);
}

static void vsfuse_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);

	(void)parent;
	vsfuse_reply_error(req, vsfuse_dir_has(&fs->dir, name) ? -ENOTDIR : -ENOENT);
}

static void vsfuse_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* The kernel must ask for every follow: targets differ per process. */
	conn->want &= ~FUSE_CAP_CACHE_SYMLINKS;
}

/* Workers for a mount that serves every user; see the top of this file. */
#define POOL_MAX 16

int vsfuse_fs_init(struct vsfuse *fs, uid_t uid, gid_t gid)
{
	int err;

	if (varsym_opts_search_mode(&fs->opts) &&
	    (err = vsfuse_search_init())) {
		errno = -err;
		return -1;
	}
	if (vsfuse_dir_init(&fs->dir, &fs->opts, uid, gid))
		return -1;
	vsfuse_scopes_init(&fs->scopes);
	fs->admin = uid;
	/* a search mount's walks never run where requests are read */
	if ((fs->serves_others || fs->dir.search) &&
	    vsfuse_pool_new(&fs->pool, POOL_MAX, serve_job, fs)) {
		vsfuse_scopes_destroy(&fs->scopes);
		vsfuse_dir_destroy(&fs->dir);
		return -1;
	}
	return 0;
}

void vsfuse_fs_finish(struct vsfuse *fs)
{
	vsfuse_pool_free(fs->pool);
	fs->pool = NULL;
	vsfuse_readlink_finish();
}

void vsfuse_fs_destroy(struct vsfuse *fs)
{
	vsfuse_fs_finish(fs);
	vsfuse_dir_destroy(&fs->dir);
	vsfuse_scopes_destroy(&fs->scopes);
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
	.releasedir = vsfuse_releasedir,
	.setxattr = vsfuse_setxattr,
	.getxattr = vsfuse_getxattr,
	.listxattr = vsfuse_listxattr,
	.removexattr = vsfuse_removexattr,
};
