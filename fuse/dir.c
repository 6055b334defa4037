// SPDX-License-Identifier: GPL-2.0-only
/*
 * dir.c - the directory of variant links of one FUSE mount.
 *
 *  - seed mode: one link, "resolve", whose target is the mount's variable;
 *    the directory never changes;
 *  - template mode: links made by symlink(2), each with its template, in a
 *    flat directory its owner changes with symlink, unlink and rename, as
 *    on tmpfs;
 *  - search mode: a link for every name, made when the kernel looks it up
 *    and freed when it forgets it; the directory never changes.
 *
 * An unlinked link stays, as an orphan, until the kernel forgets it.  The
 * kernel names nodes by their st_ino (dir.h says why), found in a hash
 * table of every node; search links also in one by name.
 * Locking: d->lock protects the lists, every node's name, lookup count and
 * attributes, and the directory's own attributes (dir.h).
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "dir.h"

static struct timespec now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

/* Under d->lock. */
static struct vsfuse_node *find_name(struct vsfuse_dir *d, const char *name)
{
	struct vsfuse_node *n;

	for (n = d->nodes; n; n = n->next)
		if (!strcmp(n->name, name))
			return n;
	return NULL;
}

#define TABLE_MIN 64

/* A node's key in the table by name or by id, and its chain there. */
static uint64_t key_of(const struct vsfuse_node *n, bool by_name)
{
	return by_name ? n->name_hash : n->st_ino;
}

static struct vsfuse_node **chain_of(struct vsfuse_node *n, bool by_name)
{
	return by_name ? &n->nnext : &n->hnext;
}

static struct vsfuse_node **slot(const struct vsfuse_table *t, uint64_t key)
{
	return &t->slots[(key * 0x9e3779b97f4a7c15ULL >> 32) & (t->size - 1)];
}

/* Under d->lock. */
static struct vsfuse_node *find_id(struct vsfuse_dir *d, uint64_t id)
{
	struct vsfuse_node *n;

	if (!d->by_id.size)
		return NULL;
	for (n = *slot(&d->by_id, id); n; n = n->hnext)
		if (n->st_ino == id)
			return n;
	return NULL;
}

/* Search mode's link called name, whose hash is hash; under d->lock. */
static struct vsfuse_node *find_link(struct vsfuse_dir *d, const char *name,
				     uint64_t hash)
{
	struct vsfuse_node *n;

	if (!d->by_name.size)
		return NULL;
	for (n = *slot(&d->by_name, hash); n; n = n->nnext)
		if (n->name_hash == hash && !strcmp(n->name, name))
			return n;
	return NULL;
}

/* Rehashes t into size slots; a failure only leaves chains as they were. */
static void resize(struct vsfuse_table *t, bool by_name, size_t size)
{
	struct vsfuse_node **slots = calloc(size, sizeof(*slots));
	struct vsfuse_node **old = t->slots, *n, *next, **head;
	size_t i, old_size = t->size;

	if (!slots)
		return;
	t->slots = slots;
	t->size = size;
	for (i = 0; i < old_size; i++) {
		for (n = old[i]; n; n = next) {
			next = *chain_of(n, by_name);
			head = slot(t, key_of(n, by_name));
			*chain_of(n, by_name) = *head;
			*head = n;
		}
	}
	free(old);
}

/* Under d->lock: 0, or -1 when there is no table at all. */
static int table_add(struct vsfuse_table *t, bool by_name,
		     struct vsfuse_node *n)
{
	struct vsfuse_node **head;

	if (t->count >= t->size)
		resize(t, by_name, t->size ? t->size * 2 : TABLE_MIN);
	if (!t->size)
		return -1;
	head = slot(t, key_of(n, by_name));
	*chain_of(n, by_name) = *head;
	*head = n;
	t->count++;
	return 0;
}

static void table_del(struct vsfuse_table *t, bool by_name,
		      struct vsfuse_node *n)
{
	struct vsfuse_node **p;

	if (!t->size)
		return;
	for (p = slot(t, key_of(n, by_name)); *p; p = chain_of(*p, by_name)) {
		if (*p == n) {
			*p = *chain_of(n, by_name);
			t->count--;
			break;
		}
	}
	/* the room a burst of lookups took goes back once they are forgotten */
	if (t->size > TABLE_MIN && t->count < t->size / 8)
		resize(t, by_name, t->size / 2);
}

static void release(struct vsfuse_node *n)
{
	free(n->name);
	free(n->template);
	free(n);
}

static struct vsfuse_node *new_node(struct vsfuse_dir *d, const char *name,
				    const char *template, uid_t uid, gid_t gid)
{
	struct vsfuse_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = strdup(name);
	n->template_len = template ? strlen(template) : 0;
	n->template = template ? strdup(template) : NULL;
	if (!n->name || (template && !n->template)) {
		release(n);
		return NULL;
	}
	n->st_ino = d->next_ino++;
	n->attr.uid = uid;
	n->attr.gid = gid;
	n->attr.atime = n->attr.mtime = n->attr.ctime = now();
	if (table_add(&d->by_id, false, n)) {
		release(n);
		return NULL;
	}
	return n;
}

/* Under d->lock. */
static void free_node(struct vsfuse_dir *d, struct vsfuse_node *n)
{
	table_del(&d->by_id, false, n);
	if (d->search)
		table_del(&d->by_name, true, n);
	if (n->template)
		d->links--;
	release(n);
}

/*
 * Search mode: the link for name, made at its first lookup, owned by the
 * directory's owner.  Under d->lock.
 */
static struct vsfuse_node *search_link(struct vsfuse_dir *d, const char *name)
{
	size_t len = strlen(name);
	uint64_t hash = vsfuse_hash(d->name_key, name, len);
	struct vsfuse_node *n = find_link(d, name, hash);

	if (n || !varsym_search_name_valid(name, len))
		return n;
	n = new_node(d, name, NULL, d->attr.uid, d->attr.gid);
	if (!n)
		return NULL;
	n->name_hash = hash;
	if (table_add(&d->by_name, true, n)) {
		free_node(d, n);
		return NULL;
	}
	return n;
}

/* Takes n out of the directory; under d->lock. */
static void unlink_node(struct vsfuse_dir *d, struct vsfuse_node *n)
{
	struct vsfuse_node **p;

	for (p = &d->nodes; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			break;
		}
	}
	free(n->name);
	n->name = NULL;
	n->attr.ctime = now();
	if (!n->nlookup) {
		free_node(d, n);
		return;
	}
	n->next = d->orphans;
	d->orphans = n;
}

static void touch(struct vsfuse_dir *d)
{
	d->attr.mtime = d->attr.ctime = now();
}

int vsfuse_dir_init(struct vsfuse_dir *d, const struct varsym_opts *o,
		    uid_t uid, gid_t gid)
{
	memset(d, 0, sizeof(*d));
	d->next_ino = FUSE_ROOT_ID + 1;
	d->nr_links = o->nr_links;
	d->attr.atime = d->attr.mtime = d->attr.ctime = now();
	if (pthread_rwlock_init(&d->lock, NULL))
		return -1;
	if (varsym_opts_search_mode(o)) {
		d->search = true;
		d->mode = VARSYM_SEED_ROOT_MODE;
		d->attr.uid = uid;
		d->attr.gid = gid;
		return getrandom(d->name_key, sizeof(d->name_key), 0) ==
		       sizeof(d->name_key) ? 0 : -1;
	}
	if (varsym_opts_seed_mode(o)) {
		d->mode = VARSYM_SEED_ROOT_MODE;
		d->attr.uid = uid;
		d->attr.gid = gid;
		d->nodes = new_node(d, VARSYM_SEED_LINK_NAME, NULL, uid, gid);
		return d->nodes ? 0 : -1;
	}
	d->mode = o->mode;
	d->attr.uid = o->given & VARSYM_OPT_UID ? o->uid : uid;
	d->attr.gid = o->given & VARSYM_OPT_GID ? o->gid : gid;
	return 0;
}

void vsfuse_dir_destroy(struct vsfuse_dir *d)
{
	struct vsfuse_node *lists[] = { d->nodes, d->orphans }, *n, *next;
	size_t i;

	/* the session is over: the kernel knows no node any more */
	for (i = 0; i < 2; i++) {
		for (n = lists[i]; n; n = next) {
			next = n->next;
			free_node(d, n);
		}
	}
	d->nodes = d->orphans = NULL;
	for (i = 0; i < d->by_name.size; i++) {
		for (n = d->by_name.slots[i]; n; n = next) {
			next = n->nnext;
			release(n);
		}
	}
	free(d->by_name.slots);
	free(d->by_id.slots);
	d->by_name = d->by_id = (struct vsfuse_table){ 0 };
	pthread_rwlock_destroy(&d->lock);
}

struct vsfuse_node *vsfuse_dir_lookup(struct vsfuse_dir *d, const char *name)
{
	struct vsfuse_node *n;

	pthread_rwlock_wrlock(&d->lock);
	n = d->search ? search_link(d, name) : find_name(d, name);
	if (n)
		n->nlookup++;
	pthread_rwlock_unlock(&d->lock);
	return n;
}

bool vsfuse_dir_has(struct vsfuse_dir *d, const char *name)
{
	bool found;

	if (d->search)		/* never changes */
		return varsym_search_name_valid(name, strlen(name));
	pthread_rwlock_rdlock(&d->lock);
	found = find_name(d, name);
	pthread_rwlock_unlock(&d->lock);
	return found;
}

struct vsfuse_node *vsfuse_dir_node(struct vsfuse_dir *d, uint64_t id)
{
	struct vsfuse_node *n;

	pthread_rwlock_rdlock(&d->lock);
	n = find_id(d, id);
	pthread_rwlock_unlock(&d->lock);
	return n;
}

void vsfuse_dir_forget(struct vsfuse_dir *d, uint64_t id, uint64_t nlookup)
{
	struct vsfuse_node *n, **p;

	pthread_rwlock_wrlock(&d->lock);
	n = find_id(d, id);
	if (!n) {		/* not ours, or forgotten already */
		pthread_rwlock_unlock(&d->lock);
		return;
	}
	/* never below zero, whatever the kernel says */
	n->nlookup -= nlookup < n->nlookup ? nlookup : n->nlookup;
	if (!n->nlookup && d->search) {
		free_node(d, n);
	} else if (!n->nlookup && !n->name) {
		for (p = &d->orphans; *p != n; p = &(*p)->next)
			;
		*p = n->next;
		free_node(d, n);
	}
	pthread_rwlock_unlock(&d->lock);
}

int vsfuse_dir_symlink(struct vsfuse_dir *d, const char *name,
		       const char *template, uid_t uid, gid_t gid,
		       struct vsfuse_node **out)
{
	struct vsfuse_node *n, **p;
	int err = 0;

	pthread_rwlock_wrlock(&d->lock);
	if (find_name(d, name)) {
		err = -EEXIST;
	} else if (d->links >= d->nr_links) {
		err = -ENOSPC;
	} else if (!(n = new_node(d, name, template, uid, gid))) {
		err = -ENOMEM;
	} else {
		d->links++;
		for (p = &d->nodes; *p; p = &(*p)->next)
			;
		*p = n;
		n->nlookup = 1;
		touch(d);
		*out = n;
	}
	pthread_rwlock_unlock(&d->lock);
	return err;
}

int vsfuse_dir_unlink(struct vsfuse_dir *d, const char *name)
{
	struct vsfuse_node *n;

	pthread_rwlock_wrlock(&d->lock);
	n = find_name(d, name);
	if (n) {
		unlink_node(d, n);
		touch(d);
	}
	pthread_rwlock_unlock(&d->lock);
	return n ? 0 : -ENOENT;
}

static int rename_locked(struct vsfuse_dir *d, const char *name,
			 const char *newname, unsigned int flags)
{
	struct vsfuse_node *from = find_name(d, name);
	struct vsfuse_node *to = find_name(d, newname);
	char *swap;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if (!from || ((flags & RENAME_EXCHANGE) && !to))
		return -ENOENT;
	if (to && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if (from == to)
		return 0;
	if (flags & RENAME_EXCHANGE) {
		swap = from->name;
		from->name = to->name;
		to->name = swap;
		to->attr.ctime = now();
	} else {
		swap = strdup(newname);
		if (!swap)
			return -ENOMEM;
		if (to)
			unlink_node(d, to);
		free(from->name);
		from->name = swap;
	}
	from->attr.ctime = now();
	touch(d);
	return 0;
}

int vsfuse_dir_rename(struct vsfuse_dir *d, const char *name,
		      const char *newname, unsigned int flags)
{
	int err;

	pthread_rwlock_wrlock(&d->lock);
	err = rename_locked(d, name, newname, flags);
	pthread_rwlock_unlock(&d->lock);
	return err;
}

static void fill_attr(struct stat *st, const struct vsfuse_attr *a)
{
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_atim = a->atime;
	st->st_mtim = a->mtime;
	st->st_ctim = a->ctime;
}

void vsfuse_dir_root_attr(struct vsfuse_dir *d, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = FUSE_ROOT_ID;
	st->st_nlink = 2;
	pthread_rwlock_rdlock(&d->lock);
	st->st_mode = S_IFDIR | d->mode;
	fill_attr(st, &d->attr);
	pthread_rwlock_unlock(&d->lock);
}

/*
 * Its size is 0: the kernel keeps one size per FUSE inode for every
 * caller, so one caller's target length would show to others.
 */
void vsfuse_dir_link_attr(struct vsfuse_dir *d, const struct vsfuse_node *n,
			  struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->st_ino;
	st->st_mode = S_IFLNK | 0777;
	pthread_rwlock_rdlock(&d->lock);
	st->st_nlink = n->name ? 1 : 0;
	fill_attr(st, &n->attr);
	pthread_rwlock_unlock(&d->lock);
}

#define SETTABLE (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | \
		  FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | \
		  FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW | \
		  FUSE_SET_ATTR_CTIME)

/*
 * Owner, group and times of links and of the directory, and the
 * directory's mode, as on tmpfs (the kernel checks who may, from
 * default_permissions).  Never a size, nor a link's mode.
 */
int vsfuse_dir_setattr(struct vsfuse_dir *d, struct vsfuse_node *n,
		       const struct stat *attr, int to_set)
{
	struct timespec t = now();
	struct vsfuse_attr *a;

	if ((to_set & ~SETTABLE) || (n && (to_set & FUSE_SET_ATTR_MODE)))
		return -EPERM;
	pthread_rwlock_wrlock(&d->lock);
	a = n ? &n->attr : &d->attr;
	if (to_set & FUSE_SET_ATTR_MODE)
		d->mode = attr->st_mode & 07777;
	if (to_set & FUSE_SET_ATTR_UID)
		a->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		a->gid = attr->st_gid;
	if (to_set & FUSE_SET_ATTR_ATIME)
		a->atime = to_set & FUSE_SET_ATTR_ATIME_NOW ? t : attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME)
		a->mtime = to_set & FUSE_SET_ATTR_MTIME_NOW ? t : attr->st_mtim;
	a->ctime = t;
	pthread_rwlock_unlock(&d->lock);
	return 0;
}

void vsfuse_dir_list(struct vsfuse_dir *d, off_t off,
		     bool (*add)(void *ctx, const char *name, uint64_t st_ino,
				 off_t next),
		     void *ctx)
{
	struct vsfuse_node *n;

	pthread_rwlock_rdlock(&d->lock);
	for (n = d->nodes; n; n = n->next) {
		off_t next = (off_t)n->st_ino + 2;

		if (next > off && !add(ctx, n->name, n->st_ino, next))
			break;
	}
	pthread_rwlock_unlock(&d->lock);
}

static uint64_t rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rotl(v[1], 13) ^ v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl(v[1], 17) ^ v[2];
	v[2] = rotl(v[2], 32);
}

static void sip_eat(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

uint64_t vsfuse_hash(const uint64_t key[2], const void *data, size_t len)
{
	uint64_t v[4] = {
		0x736f6d6570736575ULL ^ key[0], 0x646f72616e646f6dULL ^ key[1],
		0x6c7967656e657261ULL ^ key[0], 0x7465646279746573ULL ^ key[1],
	};
	const unsigned char *p = data;
	uint64_t last = (uint64_t)len << 56;
	size_t i, whole = len & ~(size_t)7;
	int j;

	for (i = 0; i < whole; i += 8) {
		uint64_t m = 0;

		for (j = 7; j >= 0; j--)	/* little-endian, on any host */
			m = m << 8 | p[i + j];
		sip_eat(v, m);
	}
	for (j = 0; i + j < len; j++)
		last |= (uint64_t)p[i + j] << (8 * j);
	sip_eat(v, last);
	v[2] ^= 0xff;
	for (j = 0; j < 4; j++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}
