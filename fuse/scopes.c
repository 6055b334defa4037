// SPDX-License-Identifier: GPL-2.0-only
/*
 * scopes.c - a mount's system scope and its users' scopes (docs/SPEC.md
 * section 4), as the daemon keeps them.
 *
 * Each scope is an immutable block (the core's format) with a count of its
 * holders.  A change makes a new block and swaps it in under the lock; a
 * resolution takes its blocks under the lock, holds them while it reads
 * the caller's memory, and gives them back: it sees one change whole or
 * not at all, and a change never waits for a reader.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopes.h"

struct vsfuse_scope {
	unsigned int holders;	/* under the scopes' lock */
	size_t len;
	char block[];
};

static void put_locked(struct vsfuse_scope *s)
{
	if (s && !--s->holders)
		free(s);
}

void vsfuse_scopes_init(struct vsfuse_scopes *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->edit_lock, NULL);
}

void vsfuse_scopes_destroy(struct vsfuse_scopes *s)
{
	size_t i;

	for (i = 0; i < s->nr_users; i++)
		put_locked(s->users[i].scope);
	free(s->users);
	put_locked(s->system);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->edit_lock);
}

/* The slot of uid's scope, or NULL.  Under the lock. */
static struct vsfuse_user_scope *user_slot(struct vsfuse_scopes *s,
					   uid_t uid)
{
	size_t i;

	for (i = 0; i < s->nr_users; i++)
		if (s->users[i].uid == uid)
			return &s->users[i];
	return NULL;
}

static struct vsfuse_scope *hold(struct vsfuse_scope *scope)
{
	if (scope)
		scope->holders++;
	return scope;
}

void vsfuse_scopes_get(struct vsfuse_scopes *s, const uid_t *ruid,
		       struct vsfuse_held *h)
{
	struct vsfuse_user_scope *u;

	pthread_mutex_lock(&s->lock);
	u = ruid ? user_slot(s, *ruid) : NULL;
	h->user = hold(u ? u->scope : NULL);
	h->system = hold(s->system);
	h->any_user = s->nr_users > 0;
	pthread_mutex_unlock(&s->lock);
}

void vsfuse_scopes_put(struct vsfuse_scopes *s, struct vsfuse_held *h)
{
	pthread_mutex_lock(&s->lock);
	put_locked(h->user);
	put_locked(h->system);
	pthread_mutex_unlock(&s->lock);
	h->user = h->system = NULL;
}

void vsfuse_held_caller(const struct vsfuse_held *h, struct varsym_caller *c)
{
	c->user_scope = h->user ? h->user->block : NULL;
	c->user_scope_len = h->user ? h->user->len : 0;
	c->system_scope = h->system ? h->system->block : NULL;
	c->system_scope_len = h->system ? h->system->len : 0;
}

ssize_t vsfuse_scopes_read(struct vsfuse_scopes *s, bool system, uid_t uid,
			   char *buf, size_t size)
{
	struct vsfuse_held h;
	struct vsfuse_scope *scope;
	ssize_t len;

	vsfuse_scopes_get(s, system ? NULL : &uid, &h);
	scope = system ? h.system : h.user;
	len = scope ? (ssize_t)scope->len : 0;
	if (size && (size_t)len > size)
		len = -ERANGE;
	else if (size && len)
		memcpy(buf, scope->block, len);
	vsfuse_scopes_put(s, &h);
	return len;
}

/* Swaps scope in for uid's (or the system's); NULL empties it. */
static int swap_locked(struct vsfuse_scopes *s, bool system, uid_t uid,
		       struct vsfuse_scope *scope)
{
	struct vsfuse_user_scope *u, *grown;

	if (system) {
		put_locked(s->system);
		s->system = scope;
		return 0;
	}
	u = user_slot(s, uid);
	if (!u && !scope)
		return 0;
	if (!u) {
		if (s->nr_users >= VSFUSE_USER_SCOPES_MAX)
			return -ENOSPC;
		grown = realloc(s->users, (s->nr_users + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		s->users = grown;
		u = &s->users[s->nr_users++];
		u->uid = uid;
		u->scope = NULL;
	}
	put_locked(u->scope);
	u->scope = scope;
	if (!scope)			/* the last slot takes its place */
		*u = s->users[--s->nr_users];
	return 0;
}

int vsfuse_scopes_edit(struct vsfuse_scopes *s, bool system, uid_t uid,
		       const char *edits, size_t len, char *msg,
		       size_t msg_size)
{
	struct vsfuse_scope *old, *new;
	struct vsfuse_held h;
	ssize_t n;
	int err;

	new = malloc(sizeof(*new) + VARSYM_SCOPE_MAX);
	if (!new)
		return -ENOMEM;
	/* one change at a time per mount: an edit of a stale block loses */
	pthread_mutex_lock(&s->edit_lock);
	vsfuse_scopes_get(s, system ? NULL : &uid, &h);
	old = system ? h.system : h.user;
	n = varsym_scope_edit(old ? old->block : "", old ? old->len : 0,
			      edits, len, new->block, VARSYM_SCOPE_MAX, msg,
			      msg_size);
	vsfuse_scopes_put(s, &h);
	if (n < 0) {
		pthread_mutex_unlock(&s->edit_lock);
		free(new);
		return n;
	}
	new->len = n;
	new->holders = 1;
	if (!n) {
		free(new);
		new = NULL;
	}
	pthread_mutex_lock(&s->lock);
	err = swap_locked(s, system, uid, new);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->edit_lock);
	if (err) {
		snprintf(msg, msg_size, "no room for another user's scope");
		free(new);
	}
	return err;
}

int vsfuse_scopes_clear(struct vsfuse_scopes *s, bool system, uid_t uid)
{
	int err;

	pthread_mutex_lock(&s->edit_lock);
	pthread_mutex_lock(&s->lock);
	err = swap_locked(s, system, uid, NULL);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->edit_lock);
	return err;
}

/* A line the load skips, or a warning: on standard error, at mount. */
static void print_report(void *ctx, unsigned int line, bool skipped,
			 const char *why)
{
	char note[PATH_MAX + 2 * VARSYM_MSG_MAX];

	varsym_conf_note(note, sizeof(note), ctx, line, skipped, why);
	fprintf(stderr, "varsymfs: %s\n", note);
}

int vsfuse_scopes_load(struct vsfuse_scopes *s, const char *mountpoint,
		       char *msg, size_t msg_size)
{
	char root[PATH_MAX], *text = NULL, *block = NULL;
	const char *path;
	ssize_t n;
	int err = 0;

	n = varsym_conf_read_system(&path, &text, msg, msg_size);
	if (n == -ENOENT)
		return 0;
	if (n < 0)
		return n;
	block = malloc(VARSYM_SCOPE_MAX);
	if (!block)
		n = -ENOMEM;
	if (n >= 0 && !realpath(mountpoint, root))
		n = -errno;
	if (n < 0) {
		snprintf(msg, msg_size, "%s: %s", path, strerror(-n));
		err = n;
		goto out;
	}
	n = varsym_conf_section(text, n, root, block, VARSYM_SCOPE_MAX,
				print_report, (void *)path);
	if (n > 0)
		err = vsfuse_scopes_edit(s, true, 0, block, n, msg, msg_size);
	if (err) {
		char why[VARSYM_MSG_MAX];

		snprintf(why, sizeof(why), "%s", msg);
		snprintf(msg, msg_size, "%s: %s", path, why);
	}
out:
	free(block);
	free(text);
	return err;
}
