// SPDX-License-Identifier: GPL-2.0-only
/*
 * search.c - search mode's walks (docs/SPEC.md section 8), made for the
 * thread behind a request.
 *
 * A candidate DIR/NAME is walked from the caller's root: /proc/TID/root,
 * opened O_PATH, and openat2(2) with RESOLVE_IN_ROOT, so that ".." and
 * absolute links stay under it too.  The root's mount is one of the
 * caller's mount namespace, so the walk crosses that namespace's mounts.
 * The walking thread takes the caller's fsuid, fsgid and supplementary
 * groups for it, with the raw setfsuid(2), setfsgid(2) and setgroups(2)
 * system calls, which change the calling thread only (glibc's setgroups()
 * would change every thread of the daemon), and gives them back before it
 * does anything else.  DIR/NAME counts when it is a regular file that
 * faccessat2(X_OK, AT_EACCESS) lets those ids execute: a noexec mount's
 * files do not.
 *
 * A caller of fsuid 0 is walked with the daemon's capabilities, as its own
 * would be: no group then matters, and its groups are not read.  A daemon
 * not running as root can take no other ids: it walks for callers of its
 * own uid only (with its own groups), and others get EACCES.
 *
 * Only a pool worker walks: a walk that comes back into a search mount of
 * this program waits on a request that a thread reading the kernel's
 * requests answers ELOOP at once (fs.c).  Such a thread must never wait
 * on a walk itself.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "dir.h"
#include "pool.h"
#include "search.h"

/* Linux 6.8: a mount id never given to another mount (older: ignored). */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

/* The 32-bit ABIs' 16-bit calls cannot take every id: their 32-bit ones. */
#ifdef SYS_setfsuid32
#define NR_SETFSUID SYS_setfsuid32
#define NR_SETFSGID SYS_setfsgid32
#define NR_SETGROUPS SYS_setgroups32
#else
#define NR_SETFSUID SYS_setfsuid
#define NR_SETFSGID SYS_setfsgid
#define NR_SETGROUPS SYS_setgroups
#endif

#define STATUS_MAX (1 << 20)	/* /proc/TID/status with NGROUPS_MAX groups */

/* The daemon's own ids and program, read once by vsfuse_search_init(). */
static struct {
	bool root;		/* may take other ids */
	uid_t fsuid;
	gid_t fsgid;
	int ngroups;
	gid_t *groups;
	dev_t exe_dev;
	ino_t exe_ino;
	uint64_t hash_key[2];	/* a listing's table of names */
} self;

int vsfuse_search_init(void)
{
	struct stat st;
	int n;

	if (stat("/proc/self/exe", &st))
		return -errno;
	self.exe_dev = st.st_dev;
	self.exe_ino = st.st_ino;
	/*
	 * Root may take other ids; not root of a user namespace whose
	 * setgroups(2) is denied (unshare -U by a user), which could not give
	 * a caller its groups: it searches as itself, for its own uid.
	 */
	self.root = geteuid() == 0;
	self.fsuid = syscall(NR_SETFSUID, -1);	/* an invalid id: no change */
	self.fsgid = syscall(NR_SETFSGID, -1);
	n = getgroups(0, NULL);
	if (n < 0)
		return -errno;
	self.groups = calloc(n ? n : 1, sizeof(*self.groups));
	if (!self.groups)
		return -ENOMEM;
	self.ngroups = getgroups(n, self.groups);
	if (self.ngroups < 0)
		return -errno;
	if (self.root && syscall(NR_SETGROUPS, self.ngroups, self.groups))
		self.root = false;
	if (getrandom(self.hash_key, sizeof(self.hash_key), 0) !=
	    sizeof(self.hash_key))
		return -EIO;
	return 0;
}

/*
 * The caller's program may sit on a FUSE mount of its own whose server
 * holds every GETATTR: the stat must not ask it (AT_STATX_DONT_SYNC), the
 * thread that reads requests would wait with it.
 */
bool vsfuse_search_same_program(int procfd, pid_t tid)
{
	struct statx stx;
	char name[32];

	if (tid <= 0)
		return false;
	snprintf(name, sizeof(name), "%d/exe", (int)tid);
	/* one we may not inspect is another user's program */
	return !statx(procfd, name, AT_STATX_DONT_SYNC, STATX_INO, &stx) &&
	       makedev(stx.stx_dev_major, stx.stx_dev_minor) == self.exe_dev &&
	       stx.stx_ino == self.exe_ino;
}

/* ---- the caller's ids ---- */

/* /proc/TID/status whole, NUL-terminated: small, or a buffer to free. */
static char *read_status(int procfd, pid_t tid, char *small, size_t size)
{
	char name[32], *buf = small, *more;
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "%d/status", (int)tid);
	fd = openat(procfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	while ((n = read(fd, buf + len, size - 1 - len)) > 0) {
		len += n;
		if (len < size - 1)
			continue;
		/* many groups: a bigger buffer, and read on */
		if (size >= STATUS_MAX)
			goto fail;
		more = buf == small ? malloc(size * 4) : realloc(buf, size * 4);
		if (!more)
			goto fail;
		if (buf == small)
			memcpy(more, small, len);
		buf = more;
		size *= 4;
	}
	if (n < 0)
		goto fail;
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	close(fd);
	if (buf != small)
		free(buf);
	return NULL;
}

/* The text after "\nNAME:" in status, or NULL. */
static const char *status_field(const char *status, const char *name)
{
	size_t len = strlen(name);
	const char *p = status;

	for (; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, name, len) && p[len] == ':')
			return p + len + 1;
	}
	return NULL;
}

/* The fourth id of a "Uid:" or "Gid:" line: the file-system one. */
static bool fs_id(const char *status, const char *name, unsigned int *id)
{
	const char *p = status_field(status, name);

	return p && sscanf(p, "%*u %*u %*u %u", id) == 1;
}

/* The caller's fs ids and groups, from its status: 0 or -1. */
static int read_ids(struct vsfuse_searcher *s)
{
	char small[4096], *status, *end;
	const char *p, *q;
	unsigned int uid, gid;
	size_t n = 0;
	int ret = -1;

	status = read_status(s->procfd, s->tid, small, sizeof(small));
	if (!status)
		return -1;
	p = status_field(status, "Groups");
	if (!fs_id(status, "Uid", &uid) || !fs_id(status, "Gid", &gid) || !p)
		goto out;
	for (q = p; *q && *q != '\n'; q++)
		n += (*q >= '0' && *q <= '9') &&
		     (q == p || q[-1] < '0' || q[-1] > '9');
	s->groups = calloc(n ? n : 1, sizeof(*s->groups));
	if (!s->groups)
		goto out;
	for (s->ngroups = 0; s->ngroups < n; s->ngroups++) {
		s->groups[s->ngroups] = strtoul(p, &end, 10);
		if (end == p)
			goto out;
		p = end;
	}
	s->fsuid = uid;
	s->fsgid = gid;
	ret = 0;
out:
	if (status != small)
		free(status);
	return ret;
}

/*
 * The identity of the root path names (dirfd, name as for statx), as the
 * kernel has it: the caller's root may be on a FUSE mount of its own
 * (AT_STATX_DONT_SYNC: no GETATTR that its server could hold).
 */
static int root_id(int dirfd, const char *name, int flags,
		   struct vsfuse_search_key *k)
{
	struct statx stx;

	if (statx(dirfd, name, flags | AT_STATX_DONT_SYNC,
		  STATX_BASIC_STATS | STATX_MNT_ID_UNIQUE, &stx))
		return -1;
	/* a mount id that another mount may get later names no root */
	if (!(stx.stx_mask & STATX_MNT_ID_UNIQUE))
		return -1;
	k->mnt_id = stx.stx_mnt_id;
	k->dev = (uint64_t)stx.stx_dev_major << 32 | stx.stx_dev_minor;
	k->ino = stx.stx_ino;
	k->ctime_sec = stx.stx_ctime.tv_sec;
	k->ctime_nsec = stx.stx_ctime.tv_nsec;
	return 0;
}

/*
 * The key holds what the answer depends on.  Where it cannot be had
 * cheaply and for sure, the answer is not kept, and is searched again at
 * each request:
 *  - on kernels before 6.8, mount ids are reused: a new namespace may
 *    show an old id at its root;
 *  - a caller of more than VSFUSE_KEY_GROUPS_MAX groups.
 * The groups cost a read of /proc/TID/status (a few us), but a caller
 * with CAP_SETGID may change them without an execve or a new fsuid.
 */
void vsfuse_searcher_open(struct vsfuse_searcher *s, int procfd, pid_t tid,
			  uid_t fsuid, gid_t fsgid)
{
	char name[32];
	size_t i;

	*s = (struct vsfuse_searcher){
		.tid = tid, .procfd = procfd, .rootfd = -1,
		.fsuid = fsuid, .fsgid = fsgid,
	};
	if (tid <= 0) {		/* not in our pid namespace: no root to see */
		s->err = -EACCES;
		return;
	}
	if (self.root && fsuid != 0 && read_ids(s)) {
		s->err = -EACCES;
		return;
	}
	snprintf(name, sizeof(name), "%d/root", (int)tid);
	if (s->ngroups > VSFUSE_KEY_GROUPS_MAX ||
	    root_id(procfd, name, 0, &s->key))
		return;
	s->key.fsuid = s->fsuid;
	s->key.fsgid = s->fsgid;
	s->key.ngroups = s->ngroups;
	for (i = 0; i < s->ngroups; i++)
		s->key.groups[i] = s->groups[i];
	s->keep = true;
}

size_t vsfuse_searcher_key_len(const struct vsfuse_searcher *s)
{
	if (!s->keep)
		return 0;
	return offsetof(struct vsfuse_search_key, groups) +
	       s->ngroups * sizeof(s->key.groups[0]);
}

void vsfuse_searcher_close(struct vsfuse_searcher *s)
{
	vsfuse_searcher_end(s);
	if (s->rootfd >= 0)
		close(s->rootfd);
	s->rootfd = -1;
	free(s->groups);
	s->groups = NULL;
}

/* The caller's root, opened at the first walk: 0 or -errno. */
static int take_root(struct vsfuse_searcher *s)
{
	struct vsfuse_search_key now;
	char name[32];

	if (s->rootfd >= 0 || s->err)
		return s->err;
	snprintf(name, sizeof(name), "%d/root", (int)s->tid);
	s->rootfd = openat(s->procfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->rootfd < 0) {	/* gone, or not ours to see */
		s->err = -EACCES;
		s->keep = false;
		return s->err;
	}
	/* another root since the key was read (a chroot): not kept */
	if (s->keep && (root_id(s->rootfd, "", AT_EMPTY_PATH, &now) ||
			now.mnt_id != s->key.mnt_id || now.ino != s->key.ino ||
			now.dev != s->key.dev ||
			now.ctime_sec != s->key.ctime_sec ||
			now.ctime_nsec != s->key.ctime_nsec))
		s->keep = false;
	return 0;
}

static int set_fsuid(uid_t uid)
{
	syscall(NR_SETFSUID, uid);
	/* it says nothing of failure: look */
	return (uid_t)syscall(NR_SETFSUID, -1) == uid ? 0 : -1;
}

static int set_fsgid(gid_t gid)
{
	syscall(NR_SETFSGID, gid);
	return (gid_t)syscall(NR_SETFSGID, -1) == gid ? 0 : -1;
}

/* This thread takes s's ids: 0, or -EACCES (given back at the end). */
static int become(struct vsfuse_searcher *s)
{
	if (!self.root)
		return s->fsuid == self.fsuid ? 0 : -EACCES;
	if (s->switched)
		return 0;
	/* each step taken is given back, whichever fails */
	s->switched = true;
	if (syscall(NR_SETGROUPS, s->ngroups, s->groups))
		goto fail;
	s->took_groups = true;
	s->took_gid = true;
	if (set_fsgid(s->fsgid))
		goto fail;
	s->took_uid = true;
	if (set_fsuid(s->fsuid))
		goto fail;
	return 0;
fail:
	s->keep = false;
	s->err = -EACCES;
	return s->err;
}

void vsfuse_searcher_end(struct vsfuse_searcher *s)
{
	if (!s->switched)
		return;
	s->switched = false;
	/* fsuid first: going back to 0 gives the capabilities back */
	if ((s->took_uid && set_fsuid(self.fsuid)) ||
	    (s->took_gid && set_fsgid(self.fsgid)) ||
	    (s->took_groups &&
	     syscall(NR_SETGROUPS, self.ngroups, self.groups))) {
		/* a thread that cannot be the daemon again serves no one */
		fputs("varsymfs: cannot take back the daemon's ids after a search; stopping\n",
		      stderr);
		abort();
	}
	s->took_uid = s->took_gid = s->took_groups = false;
}

/* A walk that failed: the next directory, or for want of resources, the end. */
static int walk_error(int err)
{
	switch (err) {
	case ENOMEM:
	case ENFILE:
	case EMFILE:
	case EINTR:
		return -err;
	default:	/* absent, not ours, ELOOP from a search mount... */
		return 0;
	}
}

/*
 * path, walked from s's root with s's ids, into *fd: a descriptor, or the
 * walk's -errno.  Returns 0, or -errno when no walk could be made.
 */
static int walk(struct vsfuse_searcher *s, const char *path, int flags,
		int *fd)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT,
	};
	int err, tries = 0;

	if (!vsfuse_pool_in_worker())
		return -EAGAIN;
	err = take_root(s);
	if (!err)
		err = become(s);
	if (err)
		return err;
	do	/* EAGAIN: a rename or a mount raced a "..": again */
		*fd = syscall(SYS_openat2, s->rootfd, path, &how, sizeof(how));
	while (*fd < 0 && errno == EAGAIN && ++tries < 3);
	if (*fd < 0)
		*fd = -errno;
	return 0;
}

int vsfuse_probe(void *ctx, const char *path)
{
	struct vsfuse_searcher *s = ctx;
	struct stat st;
	int fd, ret;

	ret = walk(s, path, O_PATH, &fd);
	if (ret)
		return ret;
	if (fd < 0)
		return walk_error(-fd);
	ret = !fstat(fd, &st) && S_ISREG(st.st_mode);
	if (ret && syscall(SYS_faccessat2, fd, "", X_OK,
			   AT_EACCESS | AT_EMPTY_PATH))
		ret = walk_error(errno);
	close(fd);
	return ret;
}

/* ---- listing ---- */

#define LISTING_BYTES_PER_UID (32UL << 20)	/* listings open at once */
#define LISTING_BYTES_MAX (256UL << 20)

struct vsfuse_listing {
	uid_t uid;
	size_t charged;		/* bytes, charged to uid */
	size_t count;
	uint32_t *at;		/* each name's place in names */
	size_t at_size;
	char *names;		/* NUL-terminated, one after another */
	size_t names_len, names_size;
	uint32_t *table;	/* while built: name index + 1 by hash; 0 free */
	size_t table_size;
};

/* What every listing open holds, in all and by uid. */
static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t budget_all;
static struct budget {
	struct budget *next;
	uid_t uid;
	size_t bytes;
} *budgets;

/* Charges bytes to l's uid: 0, or -EMFILE / -ENFILE when over a bound. */
static int charge(struct vsfuse_listing *l, size_t bytes)
{
	struct budget *b;
	int err = 0;

	pthread_mutex_lock(&budget_lock);
	for (b = budgets; b && b->uid != l->uid; b = b->next)
		;
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (b) {
			b->uid = l->uid;
			b->next = budgets;
			budgets = b;
		}
	}
	if (!b)
		err = -ENOMEM;
	else if (b->bytes + bytes > LISTING_BYTES_PER_UID)
		err = -EMFILE;
	else if (budget_all + bytes > LISTING_BYTES_MAX)
		err = -ENFILE;
	if (!err) {
		b->bytes += bytes;
		budget_all += bytes;
		l->charged += bytes;
	}
	pthread_mutex_unlock(&budget_lock);
	return err;
}

static void uncharge(struct vsfuse_listing *l)
{
	struct budget **p, *b;

	pthread_mutex_lock(&budget_lock);
	for (p = &budgets; (b = *p); p = &b->next) {
		if (b->uid != l->uid)
			continue;
		b->bytes -= l->charged;
		budget_all -= l->charged;
		if (!b->bytes) {
			*p = b->next;
			free(b);
		}
		break;
	}
	pthread_mutex_unlock(&budget_lock);
	l->charged = 0;
}

/* *array (*size elements of elem bytes) made to hold need: 0 or -errno. */
static int grow(struct vsfuse_listing *l, void **array, size_t *size,
		size_t elem, size_t need)
{
	size_t more = *size ? *size : 64;
	void *p;
	int err;

	if (need <= *size)
		return 0;
	while (more < need)
		more *= 2;
	err = charge(l, (more - *size) * elem);
	if (err)
		return err;
	p = realloc(*array, more * elem);
	if (!p)
		return -ENOMEM;
	*array = p;
	*size = more;
	return 0;
}

/* The table's slot for name: one that holds it, or a free one. */
static uint32_t *table_slot(struct vsfuse_listing *l, const char *name,
			    size_t len)
{
	size_t mask = l->table_size - 1;
	size_t i = vsfuse_hash(self.hash_key, name, len) & mask;
	uint32_t *t;

	for (;; i = (i + 1) & mask) {
		t = &l->table[i];
		if (!*t || !strcmp(l->names + l->at[*t - 1], name))
			return t;
	}
}

/* Doubles the table, at most half full: 0 or -errno. */
static int grow_table(struct vsfuse_listing *l)
{
	size_t i, size = l->table_size ? l->table_size * 2 : 256;
	uint32_t *old = l->table, *t;
	int err = charge(l, (size - l->table_size) * sizeof(*old));

	if (err)
		return err;
	l->table = calloc(size, sizeof(*l->table));
	if (!l->table) {
		l->table = old;
		return -ENOMEM;
	}
	l->table_size = size;
	for (i = 0; i < l->count; i++) {
		const char *name = l->names + l->at[i];

		t = table_slot(l, name, strlen(name));
		*t = i + 1;
	}
	free(old);
	return 0;
}

/* name, unless listed already (an earlier directory's): 0 or -errno. */
static int add_name(struct vsfuse_listing *l, const char *name)
{
	size_t len = strlen(name);
	uint32_t *t;
	int err;

	if (2 * (l->count + 1) > l->table_size) {
		err = grow_table(l);
		if (err)
			return err;
	}
	t = table_slot(l, name, len);
	if (*t)
		return 0;
	err = grow(l, (void **)&l->names, &l->names_size, 1,
		   l->names_len + len + 1);
	if (!err)
		err = grow(l, (void **)&l->at, &l->at_size, sizeof(*l->at),
			   l->count + 1);
	if (err)
		return err;
	memcpy(l->names + l->names_len, name, len + 1);
	l->at[l->count] = l->names_len;
	l->names_len += len + 1;
	*t = ++l->count;
	return 0;
}

/*
 * Adds the names of directory path (len bytes) as s sees it, counting
 * the entries read in *seen: 0 (one it cannot open is skipped), or -errno.
 */
static int list_dir(struct vsfuse_searcher *s, struct vsfuse_listing *l,
		    const char *path, size_t len, size_t *seen)
{
	char dir[VARSYM_PATH_MAX];
	struct dirent *e;
	DIR *d;
	int fd, err = 0;

	if (len >= sizeof(dir))
		return 0;
	memcpy(dir, path, len);
	dir[len] = '\0';
	err = walk(s, dir, O_RDONLY | O_DIRECTORY, &fd);
	if (err)
		return err;
	if (fd < 0)
		return walk_error(-fd);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while (!err && *seen < VARSYM_SEARCH_LISTING_MAX && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		++*seen;
		err = add_name(l, e->d_name);
	}
	closedir(d);
	return err;
}

int vsfuse_listing_build(struct vsfuse_searcher *s, const struct varsym_opts *o,
			 uid_t uid, struct vsfuse_listing **out)
{
	struct vsfuse_listing *l = calloc(1, sizeof(*l));
	const char *p = o->dflt, *end = o->dflt + o->dflt_len, *colon;
	size_t seen = 0;
	int err = 0;

	if (!l)
		return -ENOMEM;
	l->uid = uid;
	err = charge(l, sizeof(*l));
	while (!err && (o->given & VARSYM_OPT_FALLBACK) && p < end &&
	       seen < VARSYM_SEARCH_LISTING_MAX) {
		colon = memchr(p, ':', end - p);
		if (!colon)
			colon = end;
		err = list_dir(s, l, p, colon - p, &seen);
		p = colon + 1;
	}
	vsfuse_searcher_end(s);
	free(l->table);		/* only the build looks names up */
	l->table = NULL;
	if (err) {
		vsfuse_listing_free(l);
		return err;
	}
	*out = l;
	return 0;
}

const char *vsfuse_listing_name(const struct vsfuse_listing *l, size_t i)
{
	return i < l->count ? l->names + l->at[i] : NULL;
}

void vsfuse_listing_free(struct vsfuse_listing *l)
{
	if (!l)
		return;
	uncharge(l);
	free(l->table);
	free(l->at);
	free(l->names);
	free(l);
}
