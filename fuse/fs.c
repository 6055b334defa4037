// SPDX-License-Identifier: GPL-2.0-only
/*
 * fs.c - the FUSE low-level operations of varsymfs.
 *
 * The mount's root is a directory of variant links (dir.c).  Every
 * READLINK computes the target for the calling thread.  Symlink caching
 * stays off; entries and attributes are cached for a long time (every
 * change goes through the kernel, which keeps its cache right), and a
 * link's size is 0 (dir.c says why).
 *
 * A READLINK the answer cache (cache.c) cannot serve needs the caller's
 * environment, which only a reader process reads (reader.c), with a
 * deadline of REQUEST_BUDGET_S: what cannot be read by then is answered as
 * for a secure-exec caller.  On a mount that serves every user such a
 * request goes to the worker pool (pool.c), so that the thread reading
 * the kernel's requests never waits on a caller; on a mount that serves
 * only its owner it is served where it arrives.
 *
 * Search mode (search.c): every name is a link, made at its lookup; its
 * target is searched for, in the pool on every mount, since a search
 * walks paths that may lead back into the mount.  Such a walk comes back
 * as a request from a worker of ours, or from another process of this
 * program: it is answered ELOOP at once, by a thread that never waits on
 * a walk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs.h"
#include "search.h"

#define STABLE_TIMEOUT 86400.0	/* for what only changes through us */
/*
 * How long serving a READLINK may take before it is answered as
 * secure-exec.  It starts when a worker takes the request: a user's own
 * burst of requests waits its turn (pool.c), never anyone else's.
 */
#define REQUEST_BUDGET_S 1

/* All errors leave through here: the core speaks -errno. */
static void reply_error(fuse_req_t req, long neg_errno)
{
	fuse_reply_err(req, (int)-neg_errno);
}

/*
 * The link the kernel means by ino (its st_ino: dir.h), or NULL for an
 * id that is not one of ours (the caller replies ESTALE).
 */
static struct vsfuse_node *node_of(struct vsfuse *fs, fuse_ino_t ino)
{
	return vsfuse_dir_node(&fs->dir, ino);
}

/* A request the pool serves: a link's target, or a search listing. */
struct fs_job {
	struct vsfuse_job job;		/* the pool's part: uid */
	void (*serve)(struct vsfuse *fs, struct fs_job *j);	/* replies */
	fuse_req_t req;
	pid_t tid;
};

/* The pool's serve function. */
static void serve_job(void *ctx, struct vsfuse_job *j)
{
	struct fs_job *job = (struct fs_job *)
		((char *)j - offsetof(struct fs_job, job));

	job->serve(ctx, job);
}

/*
 * Whether tid's request comes from a walk of this program (a search's, of
 * this daemon or of another): see the top of this file.  Our own workers
 * are known at no cost; other processes' programs cost a stat.
 */
static bool own_walk(struct vsfuse *fs, pid_t tid)
{
	return vsfuse_pool_is_worker(fs->pool, tid);
}

static bool same_program(struct vsfuse *fs, pid_t tid)
{
	return vsfuse_search_same_program(fs->procfd, tid);
}

/* ---- READLINK ---- */

/* A READLINK that needs its caller. */
struct readlink_job {
	struct fs_job base;
	uint64_t link;			/* the node's st_ino, for the cache */
	uint64_t stamp;			/* the cache's, at the miss */
	bool cache;			/* the answer may be kept */
	size_t template_len;
	bool seed;			/* the seed link: no template */
	bool builtins;			/* it names a built-in */
	struct vsfuse_searcher searcher;	/* search mode: who searches */
	char template[];		/* a copy: the node may go first; */
					/* search mode: the link's name */
};

/*
 * Each thread's reader process (reader.c), made at its first use and
 * ended with the thread.
 */
static pthread_key_t reader_key;
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;

static void reader_end(void *r)
{
	vsfuse_reader_free(r);
}

static void reader_key_init(void)
{
	pthread_key_create(&reader_key, reader_end);
}

static struct vsfuse_reader *thread_reader(void)
{
	struct vsfuse_reader *r;

	pthread_once(&reader_once, reader_key_init);
	r = pthread_getspecific(reader_key);
	if (!r && !vsfuse_reader_new(&r) && pthread_setspecific(reader_key, r)) {
		vsfuse_reader_free(r);
		r = NULL;
	}
	return r;
}

static ssize_t compute(struct vsfuse *fs, struct readlink_job *job,
		       const struct varsym_caller *c, char *out, size_t size)
{
	char value[VARSYM_SEARCH_VALUE_MAX];
	ssize_t len;

	if (!fs->dir.search)
		return varsym_link_target(&fs->opts,
					  job->seed ? NULL : job->template,
					  job->template_len, c, out, size);
	len = varsym_search(&fs->opts, c, job->template, job->template_len,
			    vsfuse_probe, &job->searcher, value, out, size);
	/* the thread's own ids back, before it does anything else */
	vsfuse_searcher_end(&job->searcher);
	return len;
}

/*
 * The target of a link for the thread behind a job.  What cannot be read
 * in time is answered as for a secure-exec caller, and not kept.
 */
static ssize_t resolve_job(struct vsfuse *fs, struct readlink_job *job,
			   char *out, size_t size)
{
	struct vsfuse_caller caller;
	unsigned int used = 0;
	struct varsym_caller c = {
		.getenv = vsfuse_getenv, .ctx = &caller, .used = &used,
	};
	struct vsfuse_exec_view view = {
		.serves_others = fs->serves_others, .hooks = fs->hooks,
	};
	char secure_out[VARSYM_PATH_MAX];
	struct varsym_proc_builtins builtins;
	struct vsfuse_held held;
	struct timespec deadline;
	struct varsym_proc_ids ids;
	ssize_t len, secure_len;
	size_t key_len = 0;
	bool ids_known;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += REQUEST_BUDGET_S;
	vsfuse_caller_open(&caller, fs->procfd, job->base.tid, &view,
			   &deadline);
	caller.reader = thread_reader();
	caller.uid = job->base.job.uid;
	if (!caller.reader)
		caller.secure = caller.doubt = true;
	/* whose user scope, and the built-ins: only what the link needs */
	vsfuse_scopes_get(&fs->scopes, NULL, &held);
	ids_known = (held.any_user || job->builtins) &&
		    !varsym_proc_ids(caller.dirfd, &ids);
	if (ids_known && held.any_user) {
		vsfuse_scopes_put(&fs->scopes, &held);
		vsfuse_scopes_get(&fs->scopes, &ids.ruid, &held);
	}
	vsfuse_held_caller(&held, &c);
	if (ids_known && job->builtins) {
		varsym_proc_builtins(caller.dirfd, &ids, &builtins);
		c.builtins = &builtins.core;
	}
	c.secure = caller.secure;
	len = compute(fs, job, &c, out, size);
	if (caller.timed_out) {
		c.secure = caller.doubt = true;
		len = compute(fs, job, &c, out, size);
	}
	/*
	 * An exec's interpreter, answered from the caller's environment: if
	 * that differs from the secure answer, the exec hooks must know it
	 * before the caller does, or the answer is the secure one.
	 */
	if (caller.exec_checked && !c.secure) {
		c.secure = true;
		secure_len = compute(fs, job, &c, secure_out,
				     sizeof(secure_out));
		if (!varsym_same_result(len, out, secure_len, secure_out) &&
		    (vsfuse_caller_may_gain(&caller, fs->hooks,
					    job->base.tid) ||
		     !vsfuse_exec_hooks_followed(fs->hooks, job->base.tid,
						 caller.exec))) {
			len = secure_len;
			if (len > 0)
				memcpy(out, secure_out, len + 1);
		}
	}
	vsfuse_scopes_put(&fs->scopes, &held);
	/*
	 * A built-in can change without an exec (setuid(2), personality(2)),
	 * and so can the real uid a user scope was chosen by: the stamps and
	 * the auxv proof would not see it.  Such answers are not kept.  A
	 * search's is kept under its key, or not at all (search.c).
	 */
	if (fs->dir.search)
		key_len = vsfuse_searcher_key_len(&job->searcher);
	if (job->cache && !caller.in_execve && !caller.doubt &&
	    !(used & VARSYM_USED_BUILTIN) &&
	    !((used & VARSYM_USED_USER) && held.any_user) &&
	    caller.dirfd >= 0 && varsym_is_answer(len) &&
	    (!fs->dir.search || key_len))
		vsfuse_cache_put(fs->cache, job->base.tid, caller.dirfd,
				 caller.word, job->link,
				 key_len ? &job->searcher.key : NULL, key_len,
				 len, out, job->stamp);
	vsfuse_caller_close(&caller);
	return len;
}

static void reply_target(fuse_req_t req, ssize_t len, const char *target)
{
	if (len < 0)
		reply_error(req, len);
	else
		fuse_reply_readlink(req, target);
}

static void serve_readlink(struct vsfuse *fs, struct fs_job *j)
{
	struct readlink_job *job = (struct readlink_job *)j;
	char target[VARSYM_PATH_MAX];
	ssize_t len = resolve_job(fs, job, target, sizeof(target));

	reply_target(j->req, len, target);
	vsfuse_searcher_close(&job->searcher);
	free(job);
}

static struct readlink_job *new_job(struct vsfuse *fs, fuse_req_t req,
				    const struct vsfuse_node *n,
				    uint64_t stamp, bool cache)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	/* a search link's name never changes either */
	const char *text = fs->dir.search ? n->name : n->template;
	size_t len = text ? strlen(text) : 0;
	struct readlink_job *job;

	job = calloc(1, sizeof(*job) + len + 1);
	if (!job)
		return NULL;
	job->base.job.uid = ctx->uid;
	job->base.serve = serve_readlink;
	job->base.req = req;
	job->base.tid = ctx->pid;
	job->link = n->st_ino;
	job->stamp = stamp;
	job->cache = cache;
	job->seed = !n->template;
	job->builtins = !fs->dir.search &&
			varsym_link_reads_builtin(&fs->opts, n->template,
						  n->template_len);
	job->searcher.rootfd = -1;
	if (text) {		/* never changes: no lock needed */
		memcpy(job->template, text, len + 1);
		job->template_len = len;
	}
	return job;
}

/* A link's target for the request's caller: kept, or computed by a job. */
static void link_request(struct vsfuse *fs, fuse_req_t req,
			 const struct vsfuse_node *n)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	pid_t tid = ctx->pid;
	struct vsfuse_searcher searcher = { .rootfd = -1 };
	char target[VARSYM_PATH_MAX];
	struct readlink_job *job;
	bool cache = fs->cache && tid > 0;
	enum vsfuse_cache_result found;
	const void *key = NULL;
	size_t key_len = 0;
	uint64_t stamp = 0;
	ssize_t len;

	if (fs->dir.search) {
		if (own_walk(fs, tid))
			return reply_error(req, -ELOOP);
		vsfuse_searcher_open(&searcher, fs->procfd, tid, ctx->uid,
				     ctx->gid);
		key_len = vsfuse_searcher_key_len(&searcher);
		key = &searcher.key;
		cache = cache && key_len;
	}
	if (cache) {
		found = vsfuse_cache_get(fs->cache, tid, n->st_ino, key,
					 key_len, target, sizeof(target),
					 &len, &stamp);
		if (found == VSFUSE_CACHE_HIT) {
			vsfuse_searcher_close(&searcher);
			return reply_target(req, len, target);
		}
		cache = found == VSFUSE_CACHE_MISS;
	}
	/*
	 * Another process of this program: no search for it.  Only now: no
	 * answer is ever kept for one, so a hit never comes from one.
	 */
	if (fs->dir.search && same_program(fs, tid)) {
		vsfuse_searcher_close(&searcher);
		return reply_error(req, -ELOOP);
	}
	job = new_job(fs, req, n, stamp, cache);
	if (!job) {
		vsfuse_searcher_close(&searcher);
		return reply_error(req, -ENOMEM);
	}
	job->searcher = searcher;	/* the job's now */
	if (fs->pool)
		vsfuse_pool_submit(fs->pool, &job->base.job);
	else
		serve_readlink(fs, &job->base);
}

static void vsfuse_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct vsfuse_node *n = node_of(fs, ino);

	if (ino == FUSE_ROOT_ID)
		return reply_error(req, -EINVAL);
	if (!n)
		return reply_error(req, -ESTALE);
#ifdef VSFUSE_BENCH
	if (fs->constant) {		/* the benchmarks' floor */
		fuse_reply_readlink(req, fs->constant);
		return;
	}
#endif
	link_request(fs, req, n);
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
		return reply_error(req, -ENAMETOOLONG);
	if (own_walk(fs, tid) || same_program(fs, tid))
		return reply_error(req, -ELOOP);
	if (!varsym_search_name_valid(name, len)) {
		fuse_reply_entry(req, &negative);
		return;
	}
	n = vsfuse_dir_lookup(&fs->dir, name);
	if (!n)
		return reply_error(req, -ENOMEM);
	reply_entry(fs, req, n);
}

static void vsfuse_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct fuse_entry_param negative = { .entry_timeout = STABLE_TIMEOUT };
	struct vsfuse_node *n;

	if (parent != FUSE_ROOT_ID)
		return reply_error(req, -ENOTDIR);
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
	if (ino != FUSE_ROOT_ID && !(n = node_of(fs, ino)))
		return reply_error(req, -ESTALE);
	if (!n)
		vsfuse_dir_root_attr(&fs->dir, &st);
	else
		vsfuse_dir_link_attr(&fs->dir, n, &st);
	fuse_reply_attr(req, &st, STABLE_TIMEOUT);
}

/* A search mount's OPENDIR: its listing, read for the caller. */
struct listing_job {
	struct fs_job base;
	struct fuse_file_info fi;
	struct vsfuse_searcher searcher;
};

static void serve_listing(struct vsfuse *fs, struct fs_job *j)
{
	struct listing_job *job = (struct listing_job *)j;
	struct vsfuse_listing *l = NULL;
	int err;

	err = vsfuse_listing_build(&job->searcher, &fs->opts,
				   j->job.uid, &l);
	vsfuse_searcher_close(&job->searcher);
	if (err) {
		reply_error(j->req, err);
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
		return reply_error(req, -ENOTDIR);
	if (!fs->dir.search)
		return (void)fuse_reply_open(req, fi);
	/* a fallback directory that leads back into a search mount */
	if (own_walk(fs, ctx->pid) || same_program(fs, ctx->pid))
		return reply_error(req, -ELOOP);
	job = calloc(1, sizeof(*job));
	if (!job)
		return reply_error(req, -ENOMEM);
	job->base.job.uid = ctx->uid;
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
		return reply_error(req, -ENOMEM);
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
	reply_error(req, -EPERM);
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
		return reply_error(req, -EINVAL);
	err = vsfuse_dir_symlink(&fs->dir, name, template, ctx->uid, ctx->gid,
				 &n);
	if (err)
		return reply_error(req, err);
	reply_entry(fs, req, n);
}

static void vsfuse_unlink(fuse_req_t req, fuse_ino_t parent,
			  const char *name)
{
	struct vsfuse *fs = fuse_req_userdata(req);

	if (refuse_if_fixed(fs, req))
		return;
	reply_error(req, vsfuse_dir_unlink(&fs->dir, name));
}

static void vsfuse_rename(fuse_req_t req, fuse_ino_t parent,
			  const char *name, fuse_ino_t newparent,
			  const char *newname, unsigned int flags)
{
	struct vsfuse *fs = fuse_req_userdata(req);

	if (refuse_if_fixed(fs, req))
		return;
	reply_error(req, vsfuse_dir_rename(&fs->dir, name, newname, flags));
}

static void vsfuse_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			   int to_set, struct fuse_file_info *fi)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	struct vsfuse_node *n = NULL;
	int err;

	if (refuse_if_fixed(fs, req))
		return;
	if (ino != FUSE_ROOT_ID && !(n = node_of(fs, ino)))
		return reply_error(req, -ESTALE);
	err = vsfuse_dir_setattr(&fs->dir, n, attr, to_set);
	if (err)
		return reply_error(req, err);
	vsfuse_getattr(req, ino, fi);
}

/* ---- the scopes, on the root (docs/varsymfs.5) ---- */

/* 1 for the system scope's name, 0 for the user scope's, -1 for neither. */
static int scope_attr(const char *name)
{
	if (!strcmp(name, VARSYM_XATTR_SYSTEM_SCOPE))
		return 1;
	return strcmp(name, VARSYM_XATTR_USER_SCOPE) ? -1 : 0;
}

/* The real uid of the request's caller, whose user scope it means. */
static int request_ruid(struct vsfuse *fs, fuse_req_t req, uid_t *ruid)
{
	struct varsym_proc_ids ids;
	char name[32];
	int dirfd, err;

	snprintf(name, sizeof(name), "%d", fuse_req_ctx(req)->pid);
	dirfd = openat(fs->procfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -ESRCH;
	err = varsym_proc_ids(dirfd, &ids) ? -ESRCH : 0;
	close(dirfd);
	*ruid = ids.ruid;
	return err;
}

/* Whether the caller may change the system scope: root or the admin. */
static bool may_administer(struct vsfuse *fs, fuse_req_t req)
{
	uid_t uid = fuse_req_ctx(req)->uid;

	return uid == 0 || uid == fs->admin;
}

/* The system scope, or uid's, as getxattr(2) gives it. */
static void reply_scope(struct vsfuse *fs, fuse_req_t req, bool system,
			uid_t uid, size_t size)
{
	char *buf = NULL;
	ssize_t len;

	if (size && !(buf = malloc(size)))
		return reply_error(req, -ENOMEM);
	len = vsfuse_scopes_read(&fs->scopes, system, uid, buf, size);
	if (len < 0)
		reply_error(req, len);
	else if (!size)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, buf, len);
	free(buf);
}

static void get_scope(struct vsfuse *fs, fuse_req_t req, bool system,
		      size_t size)
{
	uid_t ruid = 0;
	int err;

	if (!system && (err = request_ruid(fs, req, &ruid)))
		return reply_error(req, err);
	reply_scope(fs, req, system, ruid, size);
}

/* system.varsym_user.UID: for that user and the mount's administrator. */
static void get_scope_of(struct vsfuse *fs, fuse_req_t req, const char *id,
			 size_t size)
{
	unsigned long uid;
	uid_t ruid;
	char *end;

	errno = 0;
	uid = strtoul(id, &end, 10);
	if (!*id || *end || errno || uid > 0xfffffffeUL || *id == '-' ||
	    *id == '+' || *id == ' ')
		return reply_error(req, -EINVAL);
	if (!may_administer(fs, req) &&
	    (request_ruid(fs, req, &ruid) || ruid != uid))
		return reply_error(req, -EPERM);
	reply_scope(fs, req, false, uid, size);
}

static void set_scope(struct vsfuse *fs, fuse_req_t req, bool system,
		      const char *value, size_t size, bool clear)
{
	char msg[VARSYM_MSG_MAX];
	uid_t ruid = 0;
	int err;

	if (system && !may_administer(fs, req))
		return reply_error(req, -EPERM);
	if (!system && (err = request_ruid(fs, req, &ruid)))
		return reply_error(req, err);
	err = clear ? vsfuse_scopes_clear(&fs->scopes, system, ruid) :
		      vsfuse_scopes_edit(&fs->scopes, system, ruid, value, size,
					 msg, sizeof(msg));
	/* answers made with the old values go; published first (scopes.c) */
	if (!err && fs->cache)
		vsfuse_cache_forget_all(fs->cache);
	reply_error(req, err);
}

/*
 * The raw text behind a link, readable by anyone: a template link's
 * template, or the seed link's mount options.  On the root: the scopes.
 */
static void vsfuse_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    size_t size)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct vsfuse_node *n = node_of(fs, ino);
	const char *value = NULL;
	size_t len;

	if (ino == FUSE_ROOT_ID && scope_attr(name) >= 0)
		return get_scope(fs, req, scope_attr(name), size);
	if (ino == FUSE_ROOT_ID &&
	    !strncmp(name, VARSYM_XATTR_USER_SCOPE_OF,
		     strlen(VARSYM_XATTR_USER_SCOPE_OF)))
		return get_scope_of(fs, req,
				    name + strlen(VARSYM_XATTR_USER_SCOPE_OF),
				    size);
	if (ino != FUSE_ROOT_ID && !n)
		return reply_error(req, -ESTALE);
	if (ino != FUSE_ROOT_ID && n->template &&
	    !strcmp(name, VARSYM_XATTR_TEMPLATE))
		value = n->template;
	else if (ino != FUSE_ROOT_ID && !n->template &&
		 !strcmp(name, VARSYM_XATTR_OPTIONS))
		value = fs->options_text;
	else if (ino != FUSE_ROOT_ID && !strcmp(name, VARSYM_XATTR_EXEC))
		value = fs->exec_mode;
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

static void reply_names(fuse_req_t req, const char *a, const char *b,
			size_t size)
{
	char names[64];
	/* NUL-separated, the last NUL counted */
	size_t len = snprintf(names, sizeof(names), "%s%c%s", a, '\0', b) + 1;

	if (!size)
		fuse_reply_xattr(req, len);
	else if (size < len)
		reply_error(req, -ERANGE);
	else
		fuse_reply_buf(req, names, len);
}

static void vsfuse_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct vsfuse_node *n = node_of(fs, ino);

	if (ino == FUSE_ROOT_ID)
		return reply_names(req, VARSYM_XATTR_USER_SCOPE,
				   VARSYM_XATTR_SYSTEM_SCOPE, size);
	if (!n)
		return reply_error(req, -ESTALE);
	reply_names(req, n->template ? VARSYM_XATTR_TEMPLATE :
		    VARSYM_XATTR_OPTIONS, VARSYM_XATTR_EXEC, size);
}

/* A change of a scope on the root; nothing else is set: as the kernel. */
static void vsfuse_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    const char *value, size_t size, int flags)
{
	(void)flags;
	if (ino != FUSE_ROOT_ID || scope_attr(name) < 0)
		return reply_error(req, -EOPNOTSUPP);
	set_scope(fuse_req_userdata(req), req, scope_attr(name), value, size,
		  false);
}

static void vsfuse_removexattr(fuse_req_t req, fuse_ino_t ino,
			       const char *name)
{
	if (ino != FUSE_ROOT_ID || scope_attr(name) < 0)
		return reply_error(req, -EOPNOTSUPP);
	set_scope(fuse_req_userdata(req), req, scope_attr(name), NULL, 0, true);
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

	(void)parent;
	reply_error(req, vsfuse_dir_has(&fs->dir, name) ? -ENOTDIR : -ENOENT);
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
	/* this thread's reader, if it served requests itself */
	pthread_once(&reader_once, reader_key_init);
	vsfuse_reader_free(pthread_getspecific(reader_key));
	pthread_setspecific(reader_key, NULL);
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
