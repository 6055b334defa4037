// SPDX-License-Identifier: GPL-2.0-only
/*
 * readlink.c - READLINK: a link's target for the thread that asks.
 *
 * The thread reading the kernel's requests asks the answer cache
 * (cache.c), with what it can have at once: with the exec hooks, the
 * request's snapshot, read from shared memory; without them, the proof
 * /proc gives.  What the cache cannot answer needs the caller's
 * environment, which only a reader process reads (reader.c), with a
 * deadline of REQUEST_BUDGET_S: what cannot be read by then is answered as
 * for a secure-exec caller.  On a mount that serves every user such a
 * request goes to the worker pool (pool.c), so that the thread reading the
 * kernel's requests never waits on a caller; on a mount that serves only
 * its owner it is served where it arrives.
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
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "search.h"

/*
 * How long serving a READLINK may take before it is answered as
 * secure-exec.  It starts when a worker takes the request: a user's own
 * burst of requests waits its turn (pool.c), never anyone else's.
 */
#define REQUEST_BUDGET_S 1

/* A READLINK that needs its caller. */
struct readlink_job {
	struct vsfuse_fs_job base;
	struct vsfuse_request r;	/* what the request thread learnt */
	uint64_t link;			/* the node's st_ino, for the cache */
	uint64_t gen;			/* the cache's, at the miss */
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

void vsfuse_readlink_finish(void)
{
	/* this thread's reader, if it served requests itself */
	pthread_once(&reader_once, reader_key_init);
	vsfuse_reader_free(pthread_getspecific(reader_key));
	pthread_setspecific(reader_key, NULL);
}

static ssize_t compute(struct vsfuse *fs, struct readlink_job *job,
		       const struct varsym_caller *c, char *out, size_t size)
{
	char *value;
	ssize_t len;

	if (!fs->dir.search)
		return varsym_link_target(&fs->opts,
					  job->seed ? NULL : job->template,
					  job->template_len, c, out, size);
	/* the variable's room: not on libfuse's or the pool's stacks */
	value = malloc(VARSYM_SEARCH_VALUE_MAX);
	len = value ? varsym_search(&fs->opts, c, job->template,
				    job->template_len, vsfuse_probe,
				    &job->searcher, value, out, size) :
		      -ENOMEM;
	/* the thread's own ids back, before it does anything else */
	vsfuse_searcher_end(&job->searcher);
	free(value);
	return len;
}

/* Who has the last word on an interpreter walk: the exec hooks. */
struct interp_check {
	const struct vsfuse_caller *caller;
	struct vsfuse_exec_hooks *hooks;
};

static int follow_caller(void *ctx)
{
	const struct interp_check *i = ctx;

	return vsfuse_caller_may_follow(i->caller, i->hooks);
}

/*
 * An interpreter's walk answered from the caller's environment: the
 * core's rule (varsym_interp_answer()), against the secure answer
 * computed here: the exec hooks must know it before the caller does (and
 * its files must have no capabilities), or the answer is the secure one.
 */
static ssize_t check_interp(struct vsfuse *fs, struct readlink_job *job,
			    const struct vsfuse_caller *caller,
			    struct varsym_caller *c, char *out, ssize_t len)
{
	struct interp_check i = { .caller = caller, .hooks = fs->hooks };
	char secure_out[VARSYM_PATH_MAX];
	ssize_t secure_len;

	c->secure = true;
	secure_len = compute(fs, job, c, secure_out, sizeof(secure_out));
	return varsym_interp_answer(out, len, secure_out, secure_len,
				    follow_caller, &i);
}

/*
 * The target of a link for the thread behind a job, by the core's rule
 * (caller.c).  What cannot be read in time is answered as for a
 * secure-exec caller, and not kept.
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
	struct varsym_proc_builtins builtins;
	struct vsfuse_held held;
	struct timespec deadline;
	struct varsym_proc_ids ids;
	size_t key_len = 0;
	bool ids_known;
	ssize_t len;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += REQUEST_BUDGET_S;
	vsfuse_caller_open(&caller, fs->procfd, &job->r, &view, &deadline);
	caller.reader = thread_reader();
	if (!caller.reader)
		caller.walk = (struct varsym_walk){ .from = VARSYM_ENV_SECURE };
	/* whose user scope, and the built-ins: only what the link needs */
	vsfuse_scopes_get(&fs->scopes, NULL, &held);
	ids_known = (held.any_user || job->builtins) &&
		    caller.walk.from != VARSYM_ENV_NONE &&
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
	c.secure = caller.walk.from == VARSYM_ENV_SECURE;
	len = compute(fs, job, &c, out, size);
	if (caller.timed_out) {
		caller.walk = (struct varsym_walk){ .from = VARSYM_ENV_SECURE };
		c.secure = true;
		len = compute(fs, job, &c, out, size);
	}
	if (caller.walk.check_interp && !c.secure)
		len = check_interp(fs, job, &caller, &c, out, len);
	vsfuse_scopes_put(&fs->scopes, &held);
	/* a search's answer is kept under its key, or not at all (search.c) */
	if (fs->dir.search)
		key_len = vsfuse_searcher_key_len(&job->searcher);
	/* kept by thread, not by real uid: only while no user has a scope */
	if (job->cache && caller.walk.keep &&
	    varsym_may_keep(len, used, !held.any_user, fs->dir.search, key_len))
		vsfuse_cache_put(fs->cache, &job->r, caller.word, job->link,
				 key_len ? &job->searcher.key : NULL, key_len,
				 len, out, job->gen);
	vsfuse_caller_close(&caller);
	return len;
}

static void reply_target(fuse_req_t req, ssize_t len, const char *target)
{
	if (len < 0)
		vsfuse_reply_error(req, len);
	else
		fuse_reply_readlink(req, target);
}

static void serve_readlink(struct vsfuse *fs, struct vsfuse_fs_job *j)
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
				    const struct vsfuse_request *r,
				    uint64_t gen, bool cache)
{
	/* a search link's name never changes either */
	const char *text = fs->dir.search ? n->name : n->template;
	size_t len = text ? strlen(text) : 0;
	struct readlink_job *job;

	job = calloc(1, sizeof(*job) + len + 1);
	if (!job)
		return NULL;
	job->base.job.owner = r->owner;
	job->base.serve = serve_readlink;
	job->base.req = req;
	job->r = *r;
	job->link = n->st_ino;
	job->gen = gen;
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
	struct vsfuse_exec_view view = {
		.serves_others = fs->serves_others, .hooks = fs->hooks,
	};
	struct vsfuse_searcher searcher = { .rootfd = -1 };
	char target[VARSYM_PATH_MAX];
	struct readlink_job *job;
	struct vsfuse_request r;
	bool cache = fs->cache;
	enum vsfuse_cache_result found;
	const void *key = NULL;
	size_t key_len = 0;
	uint64_t gen = 0;
	ssize_t len;

	if (fs->dir.search && vsfuse_pool_is_worker(fs->pool, ctx->pid))
		return vsfuse_reply_error(req, -ELOOP);
	vsfuse_request_init(&r, ctx->pid, ctx->uid, n->st_ino, &view);
	if (fs->dir.search) {
		vsfuse_searcher_open(&searcher, fs->procfd, ctx->pid, ctx->uid,
				     ctx->gid);
		key_len = vsfuse_searcher_key_len(&searcher);
		key = &searcher.key;
		cache = cache && key_len;
	}
	if (cache) {
		found = vsfuse_cache_get(fs->cache, &r, n->st_ino, key,
					 key_len, target, sizeof(target),
					 &len, &gen);
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
	if (fs->dir.search &&
	    vsfuse_search_same_program(fs->procfd, ctx->pid)) {
		vsfuse_searcher_close(&searcher);
		return vsfuse_reply_error(req, -ELOOP);
	}
	vsfuse_request_owner(&r, fs->procfd);
	job = new_job(fs, req, n, &r, gen, cache);
	if (!job) {
		vsfuse_searcher_close(&searcher);
		return vsfuse_reply_error(req, -ENOMEM);
	}
	job->searcher = searcher;	/* the job's now */
	if (fs->pool)
		vsfuse_pool_submit(fs->pool, &job->base.job);
	else
		serve_readlink(fs, &job->base);
}

void vsfuse_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct vsfuse_node *n = vsfuse_dir_node(&fs->dir, ino);

	if (ino == FUSE_ROOT_ID)
		return vsfuse_reply_error(req, -EINVAL);
	if (!n)
		return vsfuse_reply_error(req, -ESTALE);
#ifdef VSFUSE_BENCH
	if (fs->constant) {		/* the benchmarks' floor */
		fuse_reply_readlink(req, fs->constant);
		return;
	}
#endif
	link_request(fs, req, n);
}
