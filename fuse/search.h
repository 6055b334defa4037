/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * search.h - search mode's walks, made for a caller: with its file-system
 * ids and groups, under its root (search.c).
 */
#ifndef VSFUSE_SEARCH_H
#define VSFUSE_SEARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "varsym_core.h"

/*
 * Once, before the daemon makes a thread: remembers its own ids and
 * program.  0 or -errno.
 */
int vsfuse_search_init(void);

/*
 * Whether thread tid runs the daemon's own program (the daemon itself, or
 * another daemon of the same executable): its walks into a search mount
 * are answered ELOOP, so that no search waits on a search.
 */
bool vsfuse_search_same_program(int procfd, pid_t tid);

/*
 * What a search's answer depends on besides the caller's environment and
 * the files: the caller's root (its mount, which belongs to one mount
 * namespace, and its directory) and ids.  The cache compares it whole.
 */
#define VSFUSE_KEY_GROUPS_MAX 64

struct vsfuse_search_key {
	uint64_t mnt_id, dev, ino;	/* the root: a unique mount id */
	int64_t ctime_sec;		/* a new directory at the old ino */
	uint32_t ctime_nsec;
	uint32_t fsuid, fsgid, ngroups;
	uint32_t groups[VSFUSE_KEY_GROUPS_MAX];
};

/* Who a search walks as, and from where. */
struct vsfuse_searcher {
	pid_t tid;
	int procfd;
	int rootfd;		/* O_PATH, the caller's root; -1 until used */
	int err;		/* why there is none: probes return it */
	uid_t fsuid;
	gid_t fsgid;
	size_t ngroups;
	gid_t *groups;		/* the caller's supplementary groups */
	bool switched;		/* this thread took those ids */
	bool took_groups, took_gid, took_uid;	/* which, to give back */
	bool keep;		/* the answer may be kept, under key */
	struct vsfuse_search_key key;
};

/*
 * For thread tid, whose request came with fsuid and fsgid: reads its
 * groups and its root's identity (no walk, nothing opened is kept).  A
 * caller that cannot be seen leaves s->err set: probes fail with it.
 */
void vsfuse_searcher_open(struct vsfuse_searcher *s, int procfd, pid_t tid,
			  uid_t fsuid, gid_t fsgid);
/* Restores the thread's own ids if a probe took the caller's. */
void vsfuse_searcher_end(struct vsfuse_searcher *s);
void vsfuse_searcher_close(struct vsfuse_searcher *s);
/* The key's bytes to compare: 0 when the answer may not be kept. */
size_t vsfuse_searcher_key_len(const struct vsfuse_searcher *s);

/*
 * The core's probe (varsym_search()), ctx a searcher: 1 when path, walked
 * from the caller's root with its ids, is a regular file it may execute;
 * 0 to try the next; -errno to end the search.  Only a pool worker walks.
 * The thread keeps the caller's ids until vsfuse_searcher_end().
 */
int vsfuse_probe(void *ctx, const char *path);

/* A listing of the mount's root: the fallback directories' names. */
struct vsfuse_listing;

/*
 * Reads the fallback directories of o with s's ids, from s's root, each
 * name once; charged to uid until freed.  0, or -errno (-EMFILE: uid has
 * too much listed already, -ENFILE: everyone has).
 */
int vsfuse_listing_build(struct vsfuse_searcher *s, const struct varsym_opts *o,
			 uid_t uid, struct vsfuse_listing **out);
/* Name i, NUL-terminated, or NULL past the last one. */
const char *vsfuse_listing_name(const struct vsfuse_listing *l, size_t i);
void vsfuse_listing_free(struct vsfuse_listing *l);

#endif /* VSFUSE_SEARCH_H */
