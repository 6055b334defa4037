/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * reader.h - reading a caller's environment in a process of its own, under
 * a deadline (reader.c).
 */
#ifndef VSFUSE_READER_H
#define VSFUSE_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct vsfuse_reader;

/* Which environment of which thread a reader reads, and until when. */
struct vsfuse_env_where {
	int dirfd;			/* O_PATH /proc/TID */
	uint64_t envp;			/* execve's envp; 0: environ */
	unsigned int ptr_size;		/* envp's pointers: 4 or 8 */
	uid_t owner;			/* a stuck reader counts against it */
	const struct timespec *deadline;	/* CLOCK_MONOTONIC */
};

/*
 * A process that reads a caller's memory for us, killed when it
 * misses the deadline (it may be blocked on memory the caller controls).
 */
int vsfuse_reader_new(struct vsfuse_reader **r);
void vsfuse_reader_free(struct vsfuse_reader *r);
/*
 * The value of a variable of the environment w names, as the core's
 * getenv() returns it (size at most VARSYM_SEARCH_VALUE_MAX: a larger
 * buffer gets that much), or -EPERM when /proc/TID/mem may not be read,
 * -ETIMEDOUT when the reader missed w->deadline.
 */
ssize_t vsfuse_reader_getenv(struct vsfuse_reader *r,
			     const struct vsfuse_env_where *w,
			     const char *name, size_t name_len, char *buf,
			     size_t size);
/*
 * Whether a reader still runs that was given up on for a caller of owner
 * (vsfuse_env_where.owner).
 */
bool vsfuse_reader_stuck_for(uid_t owner);

#endif /* VSFUSE_READER_H */
