/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cache.h - the daemon's per-thread answer cache (cache.c).
 */
#ifndef VSFUSE_CACHE_H
#define VSFUSE_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "caller.h"

struct vsfuse_cache;

/* What vsfuse_cache_get() found. */
enum vsfuse_cache_result {
	VSFUSE_CACHE_HIT,	/* *len holds the answer: a length or a -errno */
	VSFUSE_CACHE_MISS,	/* nothing kept: compute it, then put it */
	VSFUSE_CACHE_BYPASS,	/* maybe in execve: compute, keep nothing */
};

/*
 * 0 or -errno.  tokens: the exec hooks' snapshots prove hits; otherwise
 * /proc does (cache.c).
 */
int vsfuse_cache_new(struct vsfuse_cache **c, bool tokens);
void vsfuse_cache_free(struct vsfuse_cache *c);

/*
 * The answer kept for the request's thread and link (a node's st_ino,
 * never reused): on a hit, its length or -errno in *len, and the target
 * in out.  *gen is for the put.  key (key_len bytes, or none): what else
 * the answer was made with (a search's: search.h), the same bytes or no
 * hit.
 */
enum vsfuse_cache_result vsfuse_cache_get(struct vsfuse_cache *c,
					  const struct vsfuse_request *r,
					  uint64_t link, const void *key,
					  size_t key_len, char *out,
					  size_t size, ssize_t *len,
					  uint64_t *gen);
/*
 * Remembers an answer computed after a get that returned
 * VSFUSE_CACHE_MISS with gen; len is a length or a -errno; word the
 * caller's word size.  Only for answers the core's rule keeps
 * (varsym_walk.keep): never one made in doubt or in execve.
 */
void vsfuse_cache_put(struct vsfuse_cache *c, const struct vsfuse_request *r,
		      unsigned int word, uint64_t link, const void *key,
		      size_t key_len, ssize_t len, const char *target,
		      uint64_t gen);

/*
 * Forgets every answer, and any answer being computed: after a change of
 * a scope, which answers made before it may have used.
 */
void vsfuse_cache_forget_all(struct vsfuse_cache *c);

#endif /* VSFUSE_CACHE_H */
