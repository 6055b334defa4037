// SPDX-License-Identifier: GPL-2.0-only
/*
 * pool.c - worker threads for the requests that must read a caller.
 *
 * On a mount that serves every user, the thread that reads requests from
 * the kernel must never wait on one caller: it answers what the cache
 * knows and hands the rest to these workers, which reply themselves.  A
 * job is bounded by its deadline (the readers are), so a worker is never
 * stuck; and no user has more than PER_OWNER jobs running at once, so one
 * user's callers, however many and however slow, leave workers free for
 * everyone else's.  A user is the owner of the caller's outermost user
 * namespace (caller.c): all the subordinate uids of one are one user.
 *
 * A search mount's walks run here too, never on a thread that reads the
 * kernel's requests: a walk that comes back into the mount is answered
 * by those (ELOOP), and the pool knows its workers' thread ids for that.
 *
 * Locking: pool->lock protects the queue, the counts, the running table
 * and the workers' ids; workers sleep on pool->wake.  Jobs are served
 * without the lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool.h"

#define PER_OWNER 2		/* jobs of one user running at once */

struct vsfuse_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct vsfuse_job *head, **tail;	/* queued, oldest first */
	unsigned int workers, idle, max;
	bool stopping;
	vsfuse_serve_fn serve;
	void *ctx;
	struct running {
		uid_t owner;
		unsigned int jobs;
	} *running;		/* max entries; jobs == 0: free */
	pid_t *tids;		/* max entries: the workers'; 0: free */
};

static __thread bool in_worker;

static struct running *running_of(struct vsfuse_pool *p, uid_t owner)
{
	unsigned int i;

	for (i = 0; i < p->max; i++)
		if (p->running[i].jobs && p->running[i].owner == owner)
			return &p->running[i];
	return NULL;
}

/* The oldest queued job whose owner may run one more; under the lock. */
static struct vsfuse_job *take(struct vsfuse_pool *p)
{
	struct vsfuse_job **jp, *job;
	struct running *r;
	unsigned int i;

	for (jp = &p->head; (job = *jp); jp = &job->next) {
		r = running_of(p, job->owner);
		if (r && r->jobs >= PER_OWNER)
			continue;
		*jp = job->next;
		if (!*jp)
			p->tail = jp;
		if (!r) {
			for (i = 0; p->running[i].jobs; i++)
				;	/* fewer running than workers: found */
			r = &p->running[i];
			r->owner = job->owner;
		}
		r->jobs++;
		return job;
	}
	return NULL;
}

static void *worker_main(void *arg)
{
	struct vsfuse_pool *p = arg;
	struct vsfuse_job *job;
	pid_t *tid;
	uid_t owner;

	in_worker = true;
	pthread_mutex_lock(&p->lock);
	for (tid = p->tids; *tid; tid++)
		;		/* fewer workers than max: found */
	*tid = gettid();
	for (;;) {
		while (!(job = take(p)) && !p->stopping) {
			p->idle++;
			pthread_cond_wait(&p->wake, &p->lock);
			p->idle--;
		}
		if (!job)
			break;
		owner = job->owner;
		pthread_mutex_unlock(&p->lock);
		p->serve(p->ctx, job);		/* replies and frees the job */
		pthread_mutex_lock(&p->lock);
		running_of(p, owner)->jobs--;
		/* a job of that owner may have waited for this one */
		pthread_cond_broadcast(&p->wake);
	}
	*tid = 0;
	p->workers--;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

bool vsfuse_pool_is_worker(struct vsfuse_pool *p, pid_t tid)
{
	unsigned int i;
	bool found = false;

	if (!p || tid <= 0)
		return false;
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->max && !found; i++)
		found = p->tids[i] == tid;
	pthread_mutex_unlock(&p->lock);
	return found;
}

bool vsfuse_pool_in_worker(void)
{
	return in_worker;
}

int vsfuse_pool_new(struct vsfuse_pool **out, unsigned int max,
		    vsfuse_serve_fn serve, void *ctx)
{
	struct vsfuse_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->running = calloc(max, sizeof(*p->running));
	p->tids = calloc(max, sizeof(*p->tids));
	if (!p->running || !p->tids) {
		free(p->running);
		free(p->tids);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	p->tail = &p->head;
	p->max = max;
	p->serve = serve;
	p->ctx = ctx;
	*out = p;
	return 0;
}

void vsfuse_pool_submit(struct vsfuse_pool *p, struct vsfuse_job *job)
{
	pthread_attr_t attr;
	pthread_t thread;
	bool alone;

	job->next = NULL;
	pthread_mutex_lock(&p->lock);
	*p->tail = job;
	p->tail = &job->next;
	if (!p->idle && p->workers < p->max) {
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (!pthread_create(&thread, &attr, worker_main, p))
			p->workers++;
		pthread_attr_destroy(&attr);
	}
	alone = !p->workers;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	/* no worker at all (no threads to be had): serve it here */
	if (alone) {
		pthread_mutex_lock(&p->lock);
		job = take(p);
		pthread_mutex_unlock(&p->lock);
		if (job) {
			uid_t owner = job->owner;

			p->serve(p->ctx, job);
			pthread_mutex_lock(&p->lock);
			running_of(p, owner)->jobs--;
			pthread_mutex_unlock(&p->lock);
		}
	}
}

/* Serves what is queued, then ends the workers: each job has a deadline. */
void vsfuse_pool_free(struct vsfuse_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->wake);
	while (p->workers)
		pthread_cond_wait(&p->wake, &p->lock);
	pthread_mutex_unlock(&p->lock);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->running);
	free(p->tids);
	free(p);
}
