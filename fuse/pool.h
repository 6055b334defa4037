/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pool.h - worker threads for requests that must read a caller (pool.c).
 */
#ifndef VSFUSE_POOL_H
#define VSFUSE_POOL_H

#include <stdbool.h>
#include <sys/types.h>

struct vsfuse_pool;

/*
 * A request handed to the pool.  The submitter fills owner (the owner uid
 * of the caller's outermost user namespace: caller.h); the rest is the
 * serve function's.  A job owns copies of what it needs: the node it asks
 * about may be forgotten before a late answer is sent.
 */
struct vsfuse_job {
	struct vsfuse_job *next;	/* the pool's */
	uid_t owner;			/* at most PER_OWNER of one at once */
};

/* Serves a job: replies to its request and frees it. */
typedef void (*vsfuse_serve_fn)(void *ctx, struct vsfuse_job *job);

int vsfuse_pool_new(struct vsfuse_pool **p, unsigned int max_workers,
		    vsfuse_serve_fn serve, void *ctx);
void vsfuse_pool_submit(struct vsfuse_pool *p, struct vsfuse_job *job);
/* Serves what is queued, then ends every worker. */
void vsfuse_pool_free(struct vsfuse_pool *p);
/* Whether thread tid is one of p's workers (p may be NULL). */
bool vsfuse_pool_is_worker(struct vsfuse_pool *p, pid_t tid);
/*
 * Whether the calling thread is a pool's worker: not a thread that reads
 * the kernel's requests, which a job served where it was submitted (no
 * worker could be made) runs on.
 */
bool vsfuse_pool_in_worker(void);

#endif /* VSFUSE_POOL_H */
