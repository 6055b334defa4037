/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cache.h - the daemon's per-thread answer cache (cache.c).
 */
#ifndef VSFUSE_CACHE_H
#define VSFUSE_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct vsfuse_cache;

/* What vsfuse_cache_get() found. */
enum vsfuse_cache_result {
	VSFUSE_CACHE_HIT,	/* *len holds the answer: a length or a -errno */
	VSFUSE_CACHE_MISS,	/* nothing kept: compute it, then put it */
	VSFUSE_CACHE_BYPASS,	/* maybe in execve: compute, keep nothing */
};

struct vsfuse_exec_hooks;

/*
 * 0, or -errno when exec and exit events cannot be had: then no cache.
 * hooks (or NULL): the exec hooks, whose stamps then prove hits.
 */
int vsfuse_cache_new(struct vsfuse_cache **c,
		     struct vsfuse_exec_hooks *hooks);
void vsfuse_cache_free(struct vsfuse_cache *c);

/*
 * Thread tid's answer for link (a node's st_ino, never reused): on a hit,
 * its length or -errno in *len, and the target in out.  *stamp is for the
 * put.  key (key_len bytes, or none): what else the answer was made with
 * (a search's: fs.c), the same bytes or no hit.
 */
enum vsfuse_cache_result vsfuse_cache_get(struct vsfuse_cache *c, pid_t tid,
					  uint64_t link, const void *key,
					  size_t key_len, char *out,
					  size_t size, ssize_t *len,
					  uint64_t *stamp);
/*
 * Remembers an answer computed from /proc/TID (dirfd) after a get that
 * returned VSFUSE_CACHE_MISS with stamp; len is a length or a -errno; word
 * the caller's word size (vsfuse_caller).  Only for answers that hold
 * until the thread's next execve: never one made in doubt or in execve.
 * Kept only in the record that get made or checked, with its proof of the
 * program the thread ran then (cache.c).
 */
void vsfuse_cache_put(struct vsfuse_cache *c, pid_t tid, int dirfd,
		      unsigned int word, uint64_t link, const void *key,
		      size_t key_len, ssize_t len, const char *target,
		      uint64_t stamp);

/*
 * Forgets every answer, and any answer being computed: after a change of
 * a scope, which answers made before it may have used.
 */
void vsfuse_cache_forget_all(struct vsfuse_cache *c);

#ifdef VSFUSE_BENCH
/* the benchmarks' build only: every EXEC event is lost (the tests') */
extern bool vsfuse_cache_drop_exec;
#endif

#endif /* VSFUSE_CACHE_H */
