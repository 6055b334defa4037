/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dir.h - the directory of variant links of one FUSE mount (dir.c).
 */
#ifndef VSFUSE_DIR_H
#define VSFUSE_DIR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "varsym_core.h"

/* Owner and times, which setattr changes alike for a link and the directory. */
struct vsfuse_attr {
	uid_t uid;
	gid_t gid;
	struct timespec atime, mtime, ctime;
};

/*
 * A link.  Its FUSE node id is its st_ino, never reused, and never its
 * address: anyone reads node ids in name_to_handle_at(2)'s handles, and
 * an address would give the root daemon's ASLR away.  The node lives
 * until the kernel forgets it.  Under the directory's lock but for st_ino,
 * the template and a search link's name, which never change.
 */
struct vsfuse_node {
	struct vsfuse_node *next;	/* in the directory, by st_ino */
	struct vsfuse_node *hnext;	/* in the directory's table by id */
	struct vsfuse_node *nnext;	/* search mode: in the table by name */
	uint64_t st_ino;
	uint64_t nlookup;		/* the kernel's references */
	uint64_t name_hash;		/* search mode: its name's */
	char *name;			/* NULL once unlinked */
	char *template;			/* NULL: the seed link, a search link */
	size_t template_len;
	struct vsfuse_attr attr;
};

/* Nodes hashed by a key: st_ino, or a search link's name. */
struct vsfuse_table {
	struct vsfuse_node **slots;
	size_t size, count;		/* a power of two; nodes in it */
};

/*
 * lock protects everything below: shared to read, exclusive to change
 * (lookup counts included).
 *
 * Search mode's links are in no list: a node for each name the kernel
 * looked up, found by name, gone when the kernel forgets it.  So the
 * daemon holds no more of them than the kernel's inode cache does, which
 * memory pressure shrinks.
 */
struct vsfuse_dir {
	pthread_rwlock_t lock;
	struct vsfuse_node *nodes;	/* the directory's links */
	struct vsfuse_node *orphans;	/* unlinked, still known to the kernel */
	struct vsfuse_table by_id;	/* every node */
	struct vsfuse_table by_name;	/* search mode: every link */
	uint64_t name_key[2];		/* by_name's hash key: names are chosen */
	bool search;			/* search mode */
	uint64_t next_ino;
	unsigned int links, nr_links;	/* template links alive, and most */
	mode_t mode;
	struct vsfuse_attr attr;
};

/*
 * A keyed hash (SipHash-2-4) of len bytes at data: for tables whose keys
 * users choose, who cannot then choose colliding ones.
 */
uint64_t vsfuse_hash(const uint64_t key[2], const void *data, size_t len);

/*
 * Seed mode: the one link "resolve"; search mode: a link for any name
 * looked up; else empty.  0 or -1.
 */
int vsfuse_dir_init(struct vsfuse_dir *d, const struct varsym_opts *o,
		    uid_t uid, gid_t gid);
void vsfuse_dir_destroy(struct vsfuse_dir *d);

/*
 * The link called name, its lookup count raised; or NULL.  A search mount
 * makes one for any name varsym_search_name_valid() accepts: NULL there is
 * no memory.
 */
struct vsfuse_node *vsfuse_dir_lookup(struct vsfuse_dir *d, const char *name);
bool vsfuse_dir_has(struct vsfuse_dir *d, const char *name);
/*
 * The node whose id the kernel sent, or NULL for an id we never gave or
 * that was forgotten.  It stays while the kernel holds the inode.
 */
struct vsfuse_node *vsfuse_dir_node(struct vsfuse_dir *d, uint64_t id);
/*
 * The kernel drops nlookup references to id; an unlinked node, or a
 * search link, then goes.
 */
void vsfuse_dir_forget(struct vsfuse_dir *d, uint64_t id, uint64_t nlookup);
/* A new link, its lookup count 1: 0, -EEXIST, -ENOSPC (nr_links=), -ENOMEM. */
int vsfuse_dir_symlink(struct vsfuse_dir *d, const char *name,
		       const char *template, uid_t uid, gid_t gid,
		       struct vsfuse_node **out);
int vsfuse_dir_unlink(struct vsfuse_dir *d, const char *name);
int vsfuse_dir_rename(struct vsfuse_dir *d, const char *name,
		      const char *newname, unsigned int flags);

void vsfuse_dir_root_attr(struct vsfuse_dir *d, struct stat *st);
void vsfuse_dir_link_attr(struct vsfuse_dir *d, const struct vsfuse_node *n,
			  struct stat *st);
/* FUSE_SET_ATTR_* in to_set; n NULL for the directory itself. */
int vsfuse_dir_setattr(struct vsfuse_dir *d, struct vsfuse_node *n,
		       const struct stat *attr, int to_set);

/*
 * Lists the links after offset off (1 and 2 are "." and ".."; a link's is
 * its st_ino + 2), calling add() until it returns false.
 */
void vsfuse_dir_list(struct vsfuse_dir *d, off_t off,
		     bool (*add)(void *ctx, const char *name, uint64_t st_ino,
				 off_t next),
		     void *ctx);

#endif /* VSFUSE_DIR_H */
