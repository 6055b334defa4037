// SPDX-License-Identifier: GPL-2.0-only
/*
 * conffile.c - varsym's --save: a change made to the configuration file
 * (varsym.conf(5)) as a person would make it.
 *
 * Only the lines of the mount's sections that set a name the change
 * names are touched: the first such line of a name it sets gets the new
 * value (kept as written when the value is the same), the others go; a
 * name it sets that no line sets is added at the end of the mount's last
 * section, or in a new one.  Comments, blank lines, lines a load skips and
 * every other section stay as they are.
 *
 * The new text goes to a temporary file in the file's own directory (the
 * directory of the last of its symbolic links' targets: a link stays a
 * link), with the file's mode and group, synced; only rename(2) puts it in
 * place, so that a reader or a crash sees the old file or the new one.
 * The caller changes the live scope between the two steps
 * (conf_prepare(), conf_commit()), so that nothing changes when either
 * fails (scopes.c).
 *
 * Whoever names the file (an environment root kept from a user, a link in
 * a user's directory), varsym writes only its own: the path is walked here
 * one name at a time, a symbolic link is followed only if the writer (the
 * effective uid) or root owns it, and a file of another owner is refused.
 * The file's directory is held open from the walk to the rename, so that
 * nobody can swap a directory of the path for a link meanwhile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errno_name.h"
#include "varsym.h"

#define MAX_LINKS 40		/* the kernel's MAXSYMLINKS */

/* "path: cannot WHAT: Why (EWHY)", then what it means for the change. */
static int failed(const char *path, const char *what, int e)
{
	fprintf(stderr, "varsym: %s: cannot %s: %s (%s); nothing changed\n",
		path, what, strerror(e), errno_name(e));
	return -e;
}

/* "path: will not WHAT it: why; nothing changed" */
static int refused(const char *path, const char *what, const char *why)
{
	fprintf(stderr, "varsym: %s: will not %s it: %s; nothing changed\n",
		path, what, why);
	return -EPERM;
}

/* A path walked one name at a time. */
struct walk {
	int dir;		/* the directory reached, O_PATH */
	char done[PATH_MAX];	/* its path, as walked: for messages */
	char left[PATH_MAX];	/* what is still to walk */
	int links;		/* symbolic links followed */
};

/* Puts the next name of k->left in name: false when none is left. */
static bool next_name(struct walk *k, char *name, bool *last)
{
	char *p = k->left, *end;
	size_t n;

	while (*p == '/')
		p++;
	if (!*p)
		return false;
	end = strchrnul(p, '/');
	n = end - p;
	memcpy(name, p, n);
	name[n] = '\0';
	while (*end == '/')
		end++;
	*last = !*end;
	memmove(k->left, end, strlen(end) + 1);
	return true;
}

/* k->done with name appended, into out (PATH_MAX bytes, k->done too). */
static int walked(const struct walk *k, const char *name, char *out)
{
	size_t n = strlen(k->done);
	char buf[PATH_MAX];
	int len;

	len = snprintf(buf, sizeof(buf), "%s%s%s", k->done,
		       n && k->done[n - 1] != '/' ? "/" : "", name);
	if (len >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(out, buf, len + 1);
	return 0;
}

/* The walk starts again from / or its directory, at text. */
static int restart(struct walk *k, int at, const char *text)
{
	int fd = openat(at, text[0] == '/' ? "/" : ".",
			O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (k->dir >= 0)
		close(k->dir);
	k->dir = fd;
	if (text[0] == '/')
		snprintf(k->done, sizeof(k->done), "/");
	return 0;
}

/*
 * The link name in k->dir (st its lstat) read, and what it points at put
 * before what is left of the walk.  Only a link of the writer's or of
 * root's: root's are the system's own layout (/home a link), which every
 * user trusts; another user's link would choose where the writer writes.
 */
static int follow(struct walk *k, const char *name, const struct stat *st)
{
	char target[PATH_MAX], rest[PATH_MAX], at[PATH_MAX], why[128];
	ssize_t n;

	if (walked(k, name, at))
		return failed(k->done, "follow its links", ENAMETOOLONG);
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		snprintf(why, sizeof(why),
			 "a symbolic link of uid %u, and --save follows only its writer's (uid %u) and root's",
			 (unsigned int)st->st_uid, (unsigned int)geteuid());
		return refused(at, "follow", why);
	}
	if (++k->links > MAX_LINKS)
		return failed(at, "follow its links", ELOOP);
	n = readlinkat(k->dir, name, target, sizeof(target));
	if (n < 0)
		return failed(at, "follow its links", errno);
	if (n == sizeof(target))
		return failed(at, "follow its links", ENAMETOOLONG);
	target[n] = '\0';
	n = snprintf(rest, sizeof(rest), "%s%s%s", target,
		     *k->left ? "/" : "", k->left);
	if (n >= (ssize_t)sizeof(rest))
		return failed(at, "follow its links", ENAMETOOLONG);
	memcpy(k->left, rest, n + 1);
	if (target[0] != '/')
		return 0;
	n = restart(k, AT_FDCWD, target);
	return n ? failed(at, "follow its links", -n) : 0;
}

/*
 * Walks path to the file it names, following links as follow() allows:
 * w->dir its directory (held open), w->name its name there, w->path the
 * whole as walked (for messages).  The file itself may not exist yet.  0,
 * or -errno after a message.
 */
static int walk(struct conf_rewrite *w, const char *path)
{
	struct walk k = { .dir = -1 };
	char name[PATH_MAX];
	struct stat st;
	bool last;
	int fd, err;

	name[0] = '\0';
	if (snprintf(k.left, sizeof(k.left), "%s", path) >= PATH_MAX)
		return failed(path, "follow its links", ENAMETOOLONG);
	err = restart(&k, AT_FDCWD, path);
	if (err)
		return failed(path, "write a new copy beside it", -err);
	while (next_name(&k, name, &last)) {
		if (!last && !strcmp(name, "."))
			continue;
		if (fstatat(k.dir, name, &st, AT_SYMLINK_NOFOLLOW)) {
			err = errno;
			if (err == ENOENT && last && strcmp(name, ".."))
				break;		/* a new file */
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			err = follow(&k, name, &st);
			if (err) {
				close(k.dir);
				return err;
			}
			continue;
		}
		if (last && strcmp(name, ".") && strcmp(name, ".."))
			break;			/* the file */
		fd = openat(k.dir, name,
			    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
			goto fail;
		}
		close(k.dir);
		k.dir = fd;
		err = -walked(&k, name, k.done);
		if (err)
			goto fail;
		name[0] = '\0';
	}
	err = EISDIR;		/* a path that ends at a directory */
	if (!name[0] || !strcmp(name, ".") || !strcmp(name, ".."))
		goto fail;
	err = ENAMETOOLONG;
	if (strlen(name) >= sizeof(w->name))
		goto fail;
	memcpy(w->name, name, strlen(name) + 1);
	err = -walked(&k, name, w->path);
	if (err)
		goto fail;
	w->dir = k.dir;
	return 0;
fail:
	close(k.dir);
	return failed(path, "write a new copy beside it", err);
}

/*
 * The file of w opened for reading, in *fd, and its status in *st: -1 in
 * *fd when it does not exist yet.  Only a regular file of the writer's
 * own: root never replaces a user's file, as a user never root's.  0, or
 * -errno after a message.
 */
static int open_own(struct conf_rewrite *w, int *fd, struct stat *st)
{
	char why[128];

	/* O_NONBLOCK: a FIFO put there is refused below, not waited on */
	*fd = openat(w->dir, w->name,
		     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return errno == ENOENT ? 0 : failed(w->path, "read it", errno);
	if (fstat(*fd, st)) {
		close(*fd);
		return failed(w->path, "read it", errno);
	}
	if (st->st_uid != geteuid()) {
		snprintf(why, sizeof(why),
			 "it belongs to uid %u, and --save writes only its writer's (uid %u) files",
			 (unsigned int)st->st_uid, (unsigned int)geteuid());
		close(*fd);
		return refused(w->path, "write", why);
	}
	if (!S_ISREG(st->st_mode)) {
		close(*fd);
		return refused(w->path, "write", "it is not a regular file");
	}
	return 0;
}

/*
 * A new file beside w's, only ours (O_EXCL, and no link followed): its
 * descriptor, its name in w->tmp; or -1 with errno set.
 */
static int make_tmp(struct conf_rewrite *w)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuv";
	unsigned char r[6];
	int i, tries, fd;
	size_t at;

	if (snprintf(w->tmp, sizeof(w->tmp), "%s.XXXXXX", w->name) >=
	    (int)sizeof(w->tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	at = strlen(w->tmp) - sizeof(r);
	for (tries = 0; tries < 100; tries++) {
		if (getrandom(r, sizeof(r), 0) != sizeof(r))
			return -1;
		for (i = 0; i < (int)sizeof(r); i++)
			w->tmp[at + i] = digits[r[i] % 32];
		fd = openat(w->dir, w->tmp, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* The growing new text. */
struct text {
	char *buf;
	size_t len, size;
	int err;
};

static void put(struct text *t, const char *p, size_t n)
{
	char *grown;

	if (t->err)
		return;
	if (t->len + n + 1 > t->size) {
		grown = realloc(t->buf, t->size = 2 * (t->len + n + 1));
		if (!grown) {
			t->err = ENOMEM;
			return;
		}
		t->buf = grown;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

static void put_entry(struct text *t, const struct varsym_scope_entry *e)
{
	put(t, e->name, e->name_len);
	put(t, "=", 1);
	put(t, e->value, e->value_len);
	put(t, "\n", 1);
}

/* The index of the entry of the change that names name, in *e; or -1. */
static int named(const char *edits, size_t len, const char *name,
		 size_t name_len, struct varsym_scope_entry *e)
{
	size_t pos = 0;
	int i;

	for (i = 0; varsym_scope_next(edits, len, &pos, e); i++)
		if (e->name_len == name_len && !memcmp(e->name, name, name_len))
			return i;
	return -1;
}

/* The next line of text at *pos, in *p and *n; false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos,
		      const char **p, size_t *n)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*p = text + *pos;
	nl = memchr(*p, '\n', len - *pos);
	*n = nl ? (size_t)(nl - *p) : len - *pos;
	*pos += *n + 1;
	return true;
}

/* Whether the line l, read with the others before it, is in mount's. */
static bool in_mount(const struct varsym_conf_line *l, const char *mount,
		     bool *ours)
{
	if (l->kind == VARSYM_CONF_SECTION ||
	    (l->kind == VARSYM_CONF_BAD && l->header))
		*ours = varsym_conf_section_of(l, mount);
	return *ours;
}

/* The entries of the change that set a name no line has set yet. */
static void put_pending(struct text *t, const char *edits, size_t len,
			bool *done)
{
	struct varsym_scope_entry e;
	size_t pos = 0;
	int i;

	for (i = 0; varsym_scope_next(edits, len, &pos, &e); i++)
		if (e.has_value && !done[i]) {
			put_entry(t, &e);
			done[i] = true;
		}
}

/*
 * The text old (len bytes) with the change edits (edits_len bytes, as
 * varsym_scope_edit() takes it) made to the sections of mount, into t.
 */
static void edit(struct text *t, const char *old, size_t len,
		 const char *mount, const char *edits, size_t edits_len)
{
	bool done[VARSYM_SCOPE_ENTRIES_MAX] = { false };
	struct varsym_scope_entry e;
	struct varsym_conf_line l;
	char msg[VARSYM_MSG_MAX];
	size_t pos = 0, n, after = 0;	/* after the last line of ours */
	bool ours = false;
	const char *p;
	int i;

	while (next_line(old, len, &pos, &p, &n)) {
		varsym_conf_line(p, n, &l, msg, sizeof(msg));
		if (in_mount(&l, mount, &ours) &&
		    (l.kind == VARSYM_CONF_SECTION || l.kind == VARSYM_CONF_ENTRY))
			after = pos;
	}
	ours = false;
	for (pos = 0; next_line(old, len, &pos, &p, &n);) {
		varsym_conf_line(p, n, &l, msg, sizeof(msg));
		i = -1;
		if (in_mount(&l, mount, &ours) && l.kind == VARSYM_CONF_ENTRY)
			i = named(edits, edits_len, l.entry.name,
				  l.entry.name_len, &e);
		if (i < 0 || (e.has_value && !done[i] &&
			      e.value_len == l.entry.value_len &&
			      !memcmp(e.value, l.entry.value, e.value_len))) {
			put(t, p, n);		/* as it was */
			put(t, "\n", 1);
		} else if (e.has_value && !done[i]) {
			put_entry(t, &e);
		}
		/* other lines of a name the change names go */
		if (i >= 0)
			done[i] = true;
		if (pos == after)
			put_pending(t, edits, edits_len, done);
	}
	if (after)
		return;
	for (pos = 0; varsym_scope_next(edits, edits_len, &pos, &e);)
		if (e.has_value)
			break;
	if (pos > edits_len || !e.has_value)	/* it sets nothing */
		return;
	if (t->len)
		put(t, "\n", 1);
	put(t, "[", 1);
	put(t, mount, strlen(mount));
	put(t, "]\n", 2);
	put_pending(t, edits, edits_len, done);
}

/* Writes t whole to fd: 0 or -errno. */
static int write_all(int fd, const struct text *t)
{
	size_t done = 0;
	ssize_t n;

	while (done < t->len) {
		n = write(fd, t->buf + done, t->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += n;
	}
	return 0;
}

/* Writes t and gives the new file st's mode and group, synced. */
static int write_tmp(int fd, const struct text *t, const struct stat *st)
{
	int err = write_all(fd, t);

	if (!err && fchmod(fd, st->st_mode & 07777))
		err = -errno;
	if (!err && st->st_gid != getegid() && fchown(fd, -1, st->st_gid))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int conf_prepare(struct conf_rewrite *w, const char *path, const char *mount,
		 const char *edits, size_t edits_len)
{
	struct text t = { 0 };
	struct stat st;
	char *old = NULL;
	ssize_t len = 0;
	int fd, err;

	w->tmp[0] = '\0';
	w->dir = -1;
	err = walk(w, path);
	if (!err)
		err = open_own(w, &fd, &st);
	if (err) {
		conf_abandon(w);
		return err;
	}
	/* a new file: readable by all, as /etc's files are */
	if (fd < 0) {
		st.st_mode = 0644;
		st.st_gid = getegid();
	} else {
		len = varsym_conf_read_fd(fd, &old);
		close(fd);
	}
	if (len < 0) {
		conf_abandon(w);
		return failed(w->path, "read it", -len);
	}
	edit(&t, old ? old : "", len, mount, edits, edits_len);
	free(old);
	if (t.err) {
		free(t.buf);
		conf_abandon(w);
		return failed(w->path, "edit it", t.err);
	}
	fd = make_tmp(w);
	if (fd < 0) {
		err = errno;
		free(t.buf);
		w->tmp[0] = '\0';
		conf_abandon(w);
		return failed(w->path, "write a new copy beside it", err);
	}
	err = write_tmp(fd, &t, &st);
	free(t.buf);
	if (err) {
		conf_abandon(w);
		return failed(w->path, "write a new copy beside it", -err);
	}
	return 0;
}

int conf_commit(struct conf_rewrite *w)
{
	int fd;

	if (renameat(w->dir, w->tmp, w->dir, w->name))
		return -errno;
	w->tmp[0] = '\0';
	/* the rename itself, on disk (best effort: it is done either way) */
	fd = openat(w->dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	conf_abandon(w);
	return 0;
}

void conf_abandon(struct conf_rewrite *w)
{
	if (w->tmp[0])
		unlinkat(w->dir, w->tmp, 0);
	w->tmp[0] = '\0';
	if (w->dir >= 0)
		close(w->dir);
	w->dir = -1;
}
