/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scopes.h - a mount's system scope and its users' scopes (scopes.c).
 */
#ifndef VSFUSE_SCOPES_H
#define VSFUSE_SCOPES_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "varsym_core.h"

/*
 * Users with a scope on one mount, at most: with VARSYM_SCOPE_MAX bytes
 * each, 256 MiB of the daemon's memory in the worst case.
 */
#define VSFUSE_USER_SCOPES_MAX 4096

struct vsfuse_scope;

struct vsfuse_user_scope {
	uid_t uid;			/* real uid, as the daemon sees it */
	struct vsfuse_scope *scope;
};

struct vsfuse_scopes {
	pthread_mutex_t lock;		/* the pointers and the counts */
	pthread_mutex_t edit_lock;	/* one change at a time */
	struct vsfuse_scope *system;
	struct vsfuse_user_scope *users;
	size_t nr_users;
};

/* The blocks a resolution holds. */
struct vsfuse_held {
	struct vsfuse_scope *user, *system;
	bool any_user;			/* some user has a scope */
};

void vsfuse_scopes_init(struct vsfuse_scopes *s);
void vsfuse_scopes_destroy(struct vsfuse_scopes *s);
/* Holds the system scope and, with ruid, that user's scope. */
void vsfuse_scopes_get(struct vsfuse_scopes *s, const uid_t *ruid,
		       struct vsfuse_held *h);
void vsfuse_scopes_put(struct vsfuse_scopes *s, struct vsfuse_held *h);
/* Points the core's caller at the held blocks. */
void vsfuse_held_caller(const struct vsfuse_held *h,
			struct varsym_caller *c);
/*
 * A scope's block as getxattr(2) gives it: its length, with size 0 too,
 * or -ERANGE when it does not fit in size bytes.
 */
ssize_t vsfuse_scopes_read(struct vsfuse_scopes *s, bool system, uid_t uid,
			   char *buf, size_t size);
/*
 * Applies a change (varsym_scope_edit()) to the system scope or to uid's:
 * 0, or -EINVAL / -E2BIG / -ENOSPC / -ENOMEM with a message.
 */
int vsfuse_scopes_edit(struct vsfuse_scopes *s, bool system, uid_t uid,
		       const char *edits, size_t len, char *msg,
		       size_t msg_size);
/*
 * The system scope from /etc/varsym.conf (or $VARSYM_CONF), the section
 * of mountpoint: 0 (no file is none), or -errno with a message that names
 * the file (it could not be read, or root may not take it: a file that
 * $VARSYM_CONF named, not root's or that others may write); then nothing
 * is applied.  A bad line
 * is reported on standard error as FILE:LINE and skipped, and the rest is
 * applied (varsym.conf(5)).
 */
int vsfuse_scopes_load(struct vsfuse_scopes *s, const char *mountpoint,
		       char *msg, size_t msg_size);
/* Empties it: 0, or -errno. */
int vsfuse_scopes_clear(struct vsfuse_scopes *s, bool system, uid_t uid);

#endif /* VSFUSE_SCOPES_H */
