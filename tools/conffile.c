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
 * link), with the file's mode and owner, synced; only rename(2) puts it in
 * place, so that a reader or a crash sees the old file or the new one.
 * The caller changes the live scope between the two steps
 * (conf_prepare(), conf_commit()), so that nothing changes when either
 * fails (scopes.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * The file path's chain of symbolic links ends at, into out (it may not
 * exist yet, as when writing through a link that points nowhere yet).
 */
static int follow_links(const char *path, char *out)
{
	char target[PATH_MAX], dir[PATH_MAX];
	ssize_t n;
	int i;

	if (snprintf(out, PATH_MAX, "%s", path) >= PATH_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i < MAX_LINKS; i++) {
		n = readlink(out, target, sizeof(target) - 1);
		if (n < 0)
			return errno == EINVAL || errno == ENOENT ? 0 : -errno;
		target[n] = '\0';
		snprintf(dir, sizeof(dir), "%s", out);
		if (target[0] != '/' &&
		    snprintf(out, PATH_MAX, "%s/%s", dirname(dir), target) >=
		    PATH_MAX)
			return -ENAMETOOLONG;
		if (target[0] == '/')
			memcpy(out, target, n + 1);
	}
	return -ELOOP;
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

int conf_prepare(struct conf_rewrite *w, const char *path, const char *mount,
		 const char *edits, size_t edits_len)
{
	struct text t = { 0 };
	struct stat st;
	char *old;
	ssize_t len;
	int fd, err;

	w->tmp[0] = '\0';
	err = follow_links(path, w->path);
	if (err)
		return failed(path, "follow its links", -err);
	len = varsym_conf_read(w->path, &old);
	if (len < 0 && len != -ENOENT)
		return failed(w->path, "read it", -len);
	/* a new file: readable by all, as /etc's files are */
	if (len == -ENOENT) {
		st.st_mode = 0644;
		st.st_uid = geteuid();
		st.st_gid = getegid();
	} else if (stat(w->path, &st)) {
		err = errno;
		free(old);
		return failed(w->path, "read it", err);
	}
	edit(&t, len < 0 ? "" : old, len < 0 ? 0 : len, mount, edits,
	     edits_len);
	free(old);
	if (t.err)
		return failed(w->path, "edit it", t.err);
	fd = -1;
	errno = ENAMETOOLONG;
	if (snprintf(w->tmp, sizeof(w->tmp), "%s.XXXXXX", w->path) <
	    (int)sizeof(w->tmp))
		fd = mkostemp(w->tmp, O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		free(t.buf);
		w->tmp[0] = '\0';
		return failed(w->path, "write a new copy beside it", err);
	}
	err = write_all(fd, &t);
	free(t.buf);
	if (!err && fchmod(fd, st.st_mode & 07777))
		err = -errno;
	if (!err && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
	    fchown(fd, st.st_uid, st.st_gid))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		conf_abandon(w);
		return failed(w->path, "write a new copy beside it", -err);
	}
	return 0;
}

int conf_commit(struct conf_rewrite *w)
{
	char dir[PATH_MAX];
	int fd;

	if (rename(w->tmp, w->path))
		return -errno;
	w->tmp[0] = '\0';
	/* the rename itself, on disk (best effort: it is done either way) */
	snprintf(dir, sizeof(dir), "%s", w->path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

void conf_abandon(struct conf_rewrite *w)
{
	if (w->tmp[0])
		unlink(w->tmp);
	w->tmp[0] = '\0';
}
